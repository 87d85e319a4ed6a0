package train

import (
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/sample"
)

// refGIN is GIN's (GINE's with edge features) layer written straight from
// PyG's GINConv/GINEConv and GIN's MLP([in, out, out]):
// out_i = lins1(ReLU(lins0((1+ε)·h_i + sum_{e: j -> i} m_e))), m_e = h_j or
// ReLU(h_j + lin(e_ij)), every sampled edge counted, self-loops included.
func refGIN(cfg Config, b *sample.Block, h []float64, in, out int, par func(string) []float64) []float64 {
	eps := float64(cfg.Opts.Float32(epsKey))
	if cfg.Opts.Bool(trainEpsKey) {
		eps = par("eps")[0]
	}
	w1, b1, w2, b2 := par("w1"), par("b1"), par("w2"), par("b2")
	o := make([]float64, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		a := make([]float64, in)
		for k := range a {
			a[k] = (1 + eps) * h[i*in+k]
		}
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			j := int(b.Indices[e])
			for k := range a {
				m := h[j*in+k]
				if cfg.EdgeDim > 0 {
					m += par("b_edge")[k]
					for d := 0; d < cfg.EdgeDim; d++ {
						m += float64(b.EdgeFeat[int(e)*cfg.EdgeDim+d]) * par("w_edge")[d*in+k]
					}
					m = math.Max(m, 0)
				}
				a[k] += m
			}
		}
		r := make([]float64, out)
		for u := range r {
			z := b1[u]
			for k := range a {
				z += a[k] * w1[k*out+u]
			}
			r[u] = math.Max(z, 0)
		}
		for u := 0; u < out; u++ {
			z := b2[u]
			for v := range r {
				z += r[v] * w2[v*out+u]
			}
			o[i*out+u] = z
		}
	}
	return o
}

// addEdgeFeat gives every block random edge features of width dim
// (aligned with Indices), as a sampler over a partition with edge
// features does.
func addEdgeFeat(r *rand.Rand, blocks []sample.Block, dim int) {
	for l := range blocks {
		b := &blocks[l]
		b.EdgeFeatDim = dim
		b.EdgeFeat = randFeatures(r, len(b.Indices)*dim)
	}
}

// TestGINPyGNames pins GIN's and GINE's state dicts to PyG's GINConv and
// GINEConv over torch_geometric.nn.MLP: nn.lins.0/1 (out, in), eps of
// shape (1,) holding ε whether learnable or a buffer, and GINE's
// lin = Linear(edge_dim, in).
func TestGINPyGNames(t *testing.T) {
	mlp := func(l, in, out int) map[string][]int {
		p := "convs." + string(rune('0'+l)) + "."
		return map[string][]int{p + "nn.lins.0.weight": {out, in}, p + "nn.lins.0.bias": {out},
			p + "nn.lins.1.weight": {out, out}, p + "nn.lins.1.bias": {out}, p + "eps": {1}}
	}
	merge := func(ms ...map[string][]int) map[string][]int {
		out := map[string][]int{}
		for _, m := range ms {
			maps.Copy(out, m)
		}
		return out
	}
	gin := merge(mlp(0, 5, 6), mlp(1, 6, 3))
	for _, tc := range []struct {
		cfg  Config
		want map[string][]int
		eps  []float32 // the exported eps of layers 0 and 1
	}{
		{pygConfigs[8], gin, nil},
		{pygConfigs[9], gin, []float32{-0.25, -0.25}},
		{pygConfigs[10], merge(gin, map[string][]int{"convs.0.lin.weight": {5, 2}, "convs.0.lin.bias": {5},
			"convs.1.lin.weight": {6, 2}, "convs.1.lin.bias": {6}}), []float32{0, 0}},
	} {
		t.Run(tc.cfg.ArchName()+string(tc.cfg.Opts), func(t *testing.T) {
			p := distinctParams(tc.cfg)
			ts, err := ExportPyG(tc.cfg, p)
			require.NoError(t, err)
			got, by := map[string][]int{}, map[string]NamedTensor{}
			for _, x := range ts {
				got[x.Name], by[x.Name] = x.Shape, x
			}
			assert.Equal(t, tc.want, got)
			tn := tensorsByName(tc.cfg)
			for l := range 2 {
				e := by["convs."+string(rune('0'+l))+".eps"].Data
				if tc.eps == nil { // learnable: the parameter's value
					assert.Equal(t, []float32{p[tn["l"+string(rune('0'+l))+".eps"].Offset]}, e)
				} else {
					assert.Equal(t, tc.eps[l:l+1], e)
				}
			}
			// W1[r][c] (input-major) is nn.lins.0.weight[c][r].
			w1 := tn["l0.w1"]
			assert.Equal(t, p[w1.Offset+4*w1.Cols+2], by["convs.0.nn.lins.0.weight"].Data[2*5+4])
		})
	}
}

// TestGINImportFixedEps: a state dict whose eps buffer differs from the
// configured ε is refused, naming the setting; a learnable ε is read from
// it whatever its value.
func TestGINImportFixedEps(t *testing.T) {
	fixed, learn := pygConfigs[9], pygConfigs[8]
	ts, err := ExportPyG(fixed, distinctParams(fixed))
	require.NoError(t, err)
	for i := range ts {
		if ts[i].Name == "convs.1.eps" {
			ts[i].Data = []float32{0.5}
		}
	}
	_, err = ImportPyG(fixed, ts)
	require.ErrorContains(t, err, "tensor convs.1.eps is [0.5], the gin model's eps -0.25 (a constant: train_eps false) holds [-0.25]")
	p, err := ImportPyG(learn, ts)
	require.NoError(t, err)
	assert.Equal(t, float32(0.5), p[tensorsByName(learn)["l1.eps"].Offset])
}

// TestGINEpsInit: a learnable ε starts at eps (PyG's reset_parameters),
// on every seed, and the other tensors keep their Glorot and zero starts.
func TestGINEpsInit(t *testing.T) {
	cfg := Config{Arch: ArchGIN, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Opts: GINOpts(true, 0.75)}
	for _, seed := range []uint64{1, 2} {
		p, err := InitParams(cfg, seed)
		require.NoError(t, err)
		for _, ts := range cfg.Tensors() {
			v := p[ts.Offset : ts.Offset+ts.Size()]
			switch {
			case strings.HasSuffix(ts.Name, ".eps"):
				assert.Equal(t, []float32{0.75}, v, ts.Name)
			case ts.Zero:
				assert.Equal(t, make([]float32, ts.Size()), v, ts.Name)
			default:
				assert.NotContains(t, v, float32(0), ts.Name)
			}
		}
	}
}

// TestGINETorchReference: a two-layer GINE (learnable ε, edge features, a
// self-loop and a repeated edge in the graph) exported to PyG's layout and
// rebuilt in PyTorch from scripts/pyg_check.py's GINE (GINEConv over
// GIN's MLP, PyG 2.6 names) gives mpignn's logits within 1e-5, every node
// a destination of both blocks (the full graph).
func TestGINETorchReference(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import torch and numpy (scripts/deps.sh installs python3-torch): GINE is not checked in PyTorch")
	}
	cfg := Config{Arch: ArchGINE, InDim: 4, Hidden: 6, Classes: 3, Layers: 2, EdgeDim: 3, Opts: GINOpts(true, 0.2)}
	const n = 12
	r := rand.New(rand.NewPCG(8, 9))
	b := sample.Block{NumDst: n, Nodes: make([]int64, n), Orig: make([]int64, n), Indptr: []int32{0}, EdgeFeatDim: cfg.EdgeDim}
	var src, dst []int
	for i := range n {
		b.Nodes[i], b.Orig[i] = int64(i), int64(100+i)
		deg := r.IntN(4)
		if i == 3 {
			deg = 0 // a node without in-edges
		}
		for range deg {
			src, dst = append(src, r.IntN(n)), append(dst, i)
		}
		if i == 5 {
			src, dst = append(src, 5, 7, 7), append(dst, 5, 5, 5) // a self-loop and a repeated edge
		}
		for _, j := range src[len(b.Indices):] {
			b.Indices = append(b.Indices, int32(j))
		}
		b.Indptr = append(b.Indptr, int32(len(b.Indices)))
	}
	b.EdgeFeat = randFeatures(r, len(b.Indices)*cfg.EdgeDim)
	m, err := NewModel(cfg, 3)
	require.NoError(t, err)
	for _, ts := range cfg.Tensors() {
		if ts.Zero { // biases and ε away from their zero and 0.2 starts
			for i := range ts.Size() {
				m.Params()[ts.Offset+i] = float32(0.2 + r.NormFloat64()*0.3)
			}
		}
	}
	x := randFeatures(r, n*cfg.InDim)
	logits, err := m.Forward(&sample.Batch{Blocks: []sample.Block{b, b}, X: x})
	require.NoError(t, err)

	dir := t.TempDir()
	st, err := EncodePyG(cfg, m.Params())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.safetensors"), st, 0o644))
	spec, err := PyGSpec(cfg, nil)
	require.NoError(t, err)
	in, err := json.Marshal(map[string]any{"spec": spec, "x": x, "src": src, "dst": dst, "edge_attr": b.EdgeFeat, "want": logits})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.json"), in, 0o644))
	script := `
import importlib.util, json, sys, torch
s = importlib.util.spec_from_file_location("pyg_check", sys.argv[1]); pc = importlib.util.module_from_spec(s); s.loader.exec_module(pc)
d = json.load(open(sys.argv[2] + "/in.json"))
cls, _ = pc.model_class(d["spec"]["class"])
model = cls(**d["spec"]["kwargs"])
model.load_state_dict(pc.load_safetensors(sys.argv[2] + "/m.safetensors"), strict=True)
model.eval()
n, k = len(d["want"]) // 3, len(d["edge_attr"]) // len(d["src"])
with torch.no_grad():
    got = model(torch.tensor(d["x"]).view(n, -1), torch.tensor([d["src"], d["dst"]]), torch.tensor(d["edge_attr"]).view(-1, k))
print(json.dumps({"diff": (got.double() - torch.tensor(d["want"]).double().view(n, 3)).abs().max().item(), "max": got.abs().max().item()}))
`
	out, err := exec.Command(py, "-c", script, filepath.Join("..", "scripts", "pyg_check.py"), dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var res struct{ Diff, Max float64 }
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	t.Logf("GINE: max abs logit difference %.3g (max |logit| %.3g)", res.Diff, res.Max)
	assert.Greater(t, res.Max, 0.1, "logits too small to compare")
	assert.LessOrEqual(t, res.Diff, 1e-5)
}

// TestGINEEdgeFeatRefused: blocks without edge features, or of another
// width, are refused by training and by layer-wise inference with one
// error naming the widths, never read out of range.
func TestGINEEdgeFeatRefused(t *testing.T) {
	cfg := Config{Arch: ArchGINE, InDim: 5, Hidden: 4, Classes: 3, Layers: 2, EdgeDim: 3}
	m, blocks, x, y := testCase(t, cfg, 4)
	for _, tc := range []struct {
		name string
		dim  int
		want string
	}{
		{"none", 0, "block 0: the block carries 0 edge features per edge (0 values for 32 edges) but the model reads 3 (edge_dim)"},
		{"narrow", 2, "block 0: the block carries 2 edge features per edge (64 values for 32 edges) but the model reads 3 (edge_dim)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs := slices.Clone(blocks)
			bs[0].EdgeFeat, bs[0].EdgeFeatDim = nil, 0
			if tc.dim > 0 {
				addEdgeFeat(rand.New(rand.NewPCG(1, 1)), bs[:1], tc.dim)
			}
			_, _, err := m.Train(&sample.Batch{Blocks: bs, X: x, Labels: y}, 1, MaskKey{})
			require.ErrorContains(t, err, tc.want)
			_, err = m.Layerwise().Layer(0, &bs[0], x, nil)
			require.ErrorContains(t, err, "infer layer 0: the block carries")
		})
	}
}
