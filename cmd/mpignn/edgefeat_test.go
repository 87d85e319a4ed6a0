package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// genProteinsLike writes a small graph shaped like ogbn-proteins: edge
// features, no node features.
func genProteinsLike(t *testing.T) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "pl")
	require.NoError(t, runGen([]string{"--nodes", "600", "--avg-degree", "8", "--classes", "4", "--feat-dim", "4",
		"--edge-feat-dim", "4", "--no-node-feat", "--seed", "2", "--out", data}))
	require.NoFileExists(t, filepath.Join(data, "raw", "node-feat.csv.gz"))
	require.FileExists(t, filepath.Join(data, "raw", graph.EdgeFeatFile))
	return data
}

// TestPartitionNodeFeatFromEdges: a graph without node features is refused
// as before, partitions with --node-feat from-edges:mean (and keeps its
// edge features with --edge-feat), and trains on that partition.
func TestPartitionNodeFeatFromEdges(t *testing.T) {
	data := genProteinsLike(t)
	dir := t.TempDir()

	out, code := runCLI(t, "partition", "--data", data, "--parts", "1", "--out", filepath.Join(dir, "refused"))
	assert.NotZero(t, code)
	assert.Contains(t, out, "missing file")
	assert.Contains(t, out, "node-feat.csv.gz; the dataset has edge features (edge-feat.csv.gz): --node-feat from-edges:mean")

	parts := filepath.Join(dir, "parts")
	out, code = runCLI(t, "partition", "--data", data, "--parts", "1", "--out", parts, "--node-feat", graph.FromEdgesMean, "--edge-feat")
	require.Zero(t, code, out)
	m, err := partition.LoadMeta(parts)
	require.NoError(t, err)
	assert.Equal(t, 4, m.FeatDim)
	assert.Equal(t, 4, m.EdgeFeatDim)
	assert.Equal(t, graph.FromEdgesMean, m.NodeFeatFrom)
	// The part's node features are the mean of its in-edges' rows.
	pt, err := partition.Load(parts, 0)
	require.NoError(t, err)
	for i := range pt.Orig {
		a, b := pt.Indptr[i], pt.Indptr[i+1]
		for j := range 4 {
			s := 0.0
			for e := a; e < b; e++ {
				s += float64(pt.EdgeFeat[e*4+int64(j)])
			}
			if b > a {
				s /= float64(b - a)
			}
			require.InDelta(t, s, pt.Feat[i*4+j], 1e-5, "node %d value %d", pt.Orig[i], j)
		}
	}

	out, code = runCLI(t, "train", "--parts", parts, "--epochs", "1", "--max-steps", "3", "--batch", "32", "--threads", "1")
	require.Zero(t, code, out)
	assert.Contains(t, out, "final")
}

func TestNodeFeatFlagRefused(t *testing.T) {
	data := genProteinsLike(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad mode", []string{"partition", "--data", data, "--parts", "1", "--out", filepath.Join(dir, "a"), "--node-feat", "mean"},
			`--node-feat: node features "mean": want from-edges:mean or from-edges:sum`},
		{"train without --data", []string{"train", "--parts", dir, "--node-feat", graph.FromEdgesSum},
			"--node-feat applies to --data"},
		{"gen chunked", []string{"gen", "--format", "chunked", "--edge-feat-dim", "2", "--out", filepath.Join(dir, "c")},
			"--edge-feat-dim and --no-node-feat: for --format ogb homogeneous graphs only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runCLI(t, tc.args...)
			assert.Equal(t, 2, code, out)
			assert.Contains(t, out, tc.want)
		})
	}
	t.Run("dataset with node features", func(t *testing.T) {
		g := filepath.Join(dir, "withfeat")
		require.NoError(t, runGen([]string{"--nodes", "100", "--avg-degree", "4", "--classes", "2", "--feat-dim", "2", "--edge-feat-dim", "2", "--out", g}))
		out, code := runCLI(t, "partition", "--data", g, "--parts", "1", "--out", filepath.Join(dir, "b"), "--node-feat", graph.FromEdgesSum)
		assert.NotZero(t, code)
		assert.Contains(t, out, "but the dataset has its own")
	})
}
