package train

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/sample"
)

// torchPython returns a python3 that imports torch and numpy, or skips.
func torchPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import torch, numpy").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with torch and numpy: the edge-feature layers are not checked in PyTorch")
	return ""
}

// fullGraphBlocks returns layers copies of the block whose destinations
// and sources are all n nodes and whose edges are edges (src, dst pairs)
// grouped by destination in list order, each with its dim features from
// feat (aligned with edges): on such blocks a model computes PyG's
// full-graph forward pass.
func fullGraphBlocks(n, layers int, edges [][2]int32, feat []float32, dim int) []sample.Block {
	b := sample.Block{NumDst: n, Nodes: make([]int64, n), Orig: make([]int64, n), Indptr: make([]int32, n+1), EdgeFeatDim: dim}
	for i := range n {
		b.Nodes[i], b.Orig[i] = int64(i), int64(i)
		for k, e := range edges {
			if int(e[1]) == i {
				b.Indices = append(b.Indices, e[0])
				b.EdgeFeat = append(b.EdgeFeat, feat[k*dim:(k+1)*dim]...)
			}
		}
		b.Indptr[i+1] = int32(len(b.Indices))
	}
	blocks := make([]sample.Block, layers)
	for l := range blocks {
		blocks[l] = b
	}
	return blocks
}

// TestEdgeFeaturesMatchPyTorch: GAT and GATv2 with edge features (and
// GATv2 without), exported in PyG's layout, rebuilt in PyTorch by
// scripts/pyg_check.py (PyG's GATConv/GATv2Conv equations with
// add_self_loops(fill_value='mean')) on a small graph with self-loops,
// parallel edges and a node without in-edges: the logits must agree with
// mpignn's within 1e-5.
func TestEdgeFeaturesMatchPyTorch(t *testing.T) {
	py := torchPython(t)
	const n, dim = 30, 3
	r := rand.New(rand.NewPCG(4, 2))
	var edges [][2]int32
	for range 110 {
		dst := int32(r.IntN(n - 1)) // node n-1 has no in-edges
		edges = append(edges, [2]int32{int32(r.IntN(n)), dst})
	}
	edges = append(edges, [2]int32{3, 3}, [2]int32{5, 7}, [2]int32{5, 7}) // a self-loop, a parallel edge
	feat := randFeatures(r, len(edges)*dim)
	x := randFeatures(r, n*6)
	dir := t.TempDir()
	graph := []NamedTensor{
		{Name: "x", Shape: []int{n, 6}, Data: x},
		{Name: "edge_attr", Shape: []int{len(edges), dim}, Data: feat},
	}
	ei := NamedTensor{Name: "edge_index", Shape: []int{2, len(edges)}, Data: make([]float32, 2*len(edges))}
	for k, e := range edges {
		ei.Data[k], ei.Data[len(edges)+k] = float32(e[0]), float32(e[1])
	}
	graph = append(graph, ei)
	cases := []struct {
		name string
		cfg  Config
	}{
		{"gat-edge", Config{Arch: ArchGAT, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, EdgeDim: dim, Opts: GATOpts(2, 0)}},
		{"gatv2-edge", Config{Arch: ArchGATv2, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, EdgeDim: dim, Opts: GATOpts(2, 0)}},
		{"gatv2", Config{Arch: ArchGATv2, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Opts: GATOpts(4, 0)}},
	}
	args := []string{filepath.Join("..", "scripts", "pyg_check.py"), "--graph", filepath.Join(dir, "graph.safetensors"), "--tol", "1e-5", "--state"}
	for k, tc := range cases {
		m, err := NewModel(tc.cfg, uint64(k+1))
		require.NoError(t, err)
		for _, ts := range tc.cfg.Tensors() {
			if ts.Zero { // biases non-zero, so their places are checked
				for i := range ts.Size() {
					m.Params()[ts.Offset+i] = float32(r.NormFloat64() * 0.3)
				}
			}
		}
		dimB := 0
		var ef []float32
		if tc.cfg.EdgeDim > 0 {
			dimB, ef = dim, feat
		}
		logits, err := m.Forward(&sample.Batch{Blocks: fullGraphBlocks(n, tc.cfg.Layers, edges, ef, dimB), X: x})
		require.NoError(t, err)
		graph = append(graph, NamedTensor{Name: tc.name + ".logits", Shape: []int{n, tc.cfg.Classes}, Data: logits})
		st, err := EncodePyG(tc.cfg, m.Params())
		require.NoError(t, err)
		path := filepath.Join(dir, tc.name+".safetensors")
		require.NoError(t, os.WriteFile(path, st, 0o644))
		spec, err := PyGSpec(tc.cfg, nil)
		require.NoError(t, err)
		side, err := json.Marshal(map[string]any{"model": spec, "mpignn_arch": tc.name, "row_normalize": false})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, tc.name+".json"), side, 0o644))
		args = append(args, path)
	}
	gb, err := EncodeSafetensors(graph, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "graph.safetensors"), gb, 0o644))
	out, err := exec.Command(py, args...).CombinedOutput()
	t.Logf("%s", strings.TrimSpace(string(out)))
	require.NoError(t, err, "pyg_check.py:\n%s", out)
	diffs := regexp.MustCompile(`(?m)^([\w-]+): .*max abs logit difference ([0-9.e+-]+)`).FindAllStringSubmatch(string(out), -1)
	require.Len(t, diffs, len(cases), "one difference line per model")
	for i, d := range diffs {
		v, err := strconv.ParseFloat(d[2], 64)
		require.NoError(t, err)
		assert.Equal(t, cases[i].name, d[1])
		assert.LessOrEqual(t, v, 1e-5, d[1])
	}
}
