package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// withEdgeFeat gives d edge features of width dim aligned with d.In,
// unique per stored edge (edge e's row starts at e), so a row names the
// dataset edge it came from.
func withEdgeFeat(d *graph.Dataset, dim int) *graph.Dataset {
	m := d.In.NumEdges()
	d.EdgeFeat = &graph.Features{Dim: dim, Data: make([]float32, m*int64(dim))}
	for e := range m {
		for j := range dim {
			d.EdgeFeat.Data[e*int64(dim)+int64(j)] = float32(e) + float32(j)/8
		}
	}
	return d
}

// checkPartEdgeFeat checks that the rows of pt (a part or a share) hold the
// dataset's in-edges of their nodes with the dataset's feature rows.
func checkPartEdgeFeat(t *testing.T, d *graph.Dataset, pt *Part) {
	t.Helper()
	dim := int64(d.EdgeFeat.Dim)
	require.Equal(t, d.EdgeFeat.Dim, pt.Meta.EdgeFeatDim)
	require.Len(t, pt.EdgeFeat, len(pt.Indices)*int(dim))
	for i, o := range pt.Orig {
		a, b := pt.Indptr[i], pt.Indptr[i+1]
		require.Equal(t, d.In.Neighbors(o), pt.IndicesOrig[a:b], "node %d", o)
		want := d.EdgeFeat.Data[d.In.Indptr[o]*dim : d.In.Indptr[o+1]*dim]
		require.Equal(t, want, pt.EdgeFeat[a*dim:b*dim], "edge features of node %d", o)
	}
}

func TestEdgeFeatRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    func() *graph.Dataset
		opt  Options
	}{
		{"metis", func() *graph.Dataset { return withEdgeFeat(communityDataset(600, 3, 5), 4) }, Options{}},
		{"random, halo features", func() *graph.Dataset { return withEdgeFeat(communityDataset(600, 3, 6), 2) }, Options{Method: MethodRandom, HaloFeats: true}},
		{"timed", func() *graph.Dataset { return withEdgeFeat(timedCommunity(500, 2), 3) }, Options{Method: MethodRandom, Time: true}},
		{"sparse node features", func() *graph.Dataset { return withEdgeFeat(sparseDataset(500, 4), 1) }, Options{SparseFeatures: SparseOn}},
	} {
		for parts := 1; parts <= 3; parts++ {
			t.Run(fmt.Sprintf("%s, %d parts", tc.name, parts), func(t *testing.T) {
				d := tc.d()
				dir := filepath.Join(t.TempDir(), "p")
				opt := tc.opt
				opt.Seed, opt.EdgeFeat = 2, true
				m, err := WriteDataset(dir, d, parts, opt)
				require.NoError(t, err)
				require.Equal(t, d.EdgeFeat.Dim, m.EdgeFeatDim)
				require.NoError(t, VerifyFiles(dir, m))
				var edges int64
				for p := range parts {
					pt, err := Load(dir, p)
					require.NoError(t, err)
					checkPartEdgeFeat(t, d, pt)
					edges += int64(len(pt.Indices))
					// Shares of the part (shared partitions) hold the
					// rows of their edges.
					for _, shares := range []int{2, 3} {
						b, err := ShareBounds(dir, m, p, shares)
						require.NoError(t, err)
						for j := range shares {
							s, err := LoadRange(dir, m, p, b[j], b[j+1])
							require.NoError(t, err)
							checkPartEdgeFeat(t, d, s)
							dim := int64(m.EdgeFeatDim)
							assert.Equal(t, pt.EdgeFeat[pt.Indptr[b[j]]*dim:pt.Indptr[b[j+1]]*dim], s.EdgeFeat)
						}
					}
				}
				assert.Equal(t, d.In.NumEdges(), edges)
				var b strings.Builder
				require.NoError(t, m.Stats().WriteText(&b))
				assert.Contains(t, b.String(), fmt.Sprintf("edge features: %d per edge; node features: read\n", d.EdgeFeat.Dim))
			})
		}
	}
}

// TestEdgeFeatOff checks that a partition without edge features is the one
// written before they existed: no edge_feat.bin, nothing new in META, and
// the same files whether or not the dataset has edge features.
func TestEdgeFeatOff(t *testing.T) {
	d := communityDataset(400, 3, 9)
	plain := filepath.Join(t.TempDir(), "plain")
	m1, err := WriteDataset(plain, d, 2, Options{Seed: 1})
	require.NoError(t, err)
	withEF := filepath.Join(t.TempDir(), "ignored")
	m2, err := WriteDataset(withEF, withEdgeFeat(communityDataset(400, 3, 9), 2), 2, Options{Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, m1.Files, m2.Files)
	assert.Zero(t, m2.EdgeFeatDim)
	b, err := os.ReadFile(filepath.Join(plain, MetaFile))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "edge_feat")
	assert.NotContains(t, string(b), "node_feat_from")
	var text strings.Builder
	require.NoError(t, m1.Stats().WriteText(&text))
	assert.NotContains(t, text.String(), "edge features")
	pt, err := Load(withEF, 0)
	require.NoError(t, err)
	assert.Nil(t, pt.EdgeFeat)
	assert.NoFileExists(t, filepath.Join(withEF, "part-0", fileEdgeFeat))
}

// TestEdgeFeatCanonical: rows that are not in canonical order are sorted
// with their features, a repeated source keeping its first row.
func TestEdgeFeatCanonical(t *testing.T) {
	d := communityDataset(30, 3, 1)
	// Node 0's row: 2, 1, 2 with rows 10, 11, 12; the others as they are.
	rows := [][]int64{{2, 1, 2}}
	feats := [][]float32{{10, 11, 12}}
	for v := int64(1); v < d.NumNodes; v++ {
		rows = append(rows, d.In.Neighbors(v))
		fs := make([]float32, d.In.Degree(v))
		for i := range fs {
			fs[i] = float32(100*v) + float32(i)
		}
		feats = append(feats, fs)
	}
	in := &graph.CSR{Indptr: []int64{0}}
	ef := &graph.Features{Dim: 1}
	for v, r := range rows {
		in.Indices = append(in.Indices, r...)
		in.Indptr = append(in.Indptr, int64(len(in.Indices)))
		ef.Data = append(ef.Data, feats[v]...)
	}
	d.In, d.EdgeFeat = in, ef
	dir := filepath.Join(t.TempDir(), "p")
	_, err := WriteDataset(dir, d, 1, Options{Method: MethodRandom, EdgeFeat: true})
	require.NoError(t, err)
	pt, err := Load(dir, 0)
	require.NoError(t, err)
	i := pt.Lo
	for k, o := range pt.Orig {
		if o == 0 {
			i = int64(k)
		}
	}
	a, b := pt.Indptr[i], pt.Indptr[i+1]
	assert.Equal(t, []int64{1, 2}, pt.IndicesOrig[a:b])
	assert.Equal(t, []float32{11, 10}, pt.EdgeFeat[a:b], "source 2 keeps its first row")
}

func TestEdgeFeatRefused(t *testing.T) {
	t.Run("dataset without edge features", func(t *testing.T) {
		_, err := WriteDataset(filepath.Join(t.TempDir(), "p"), communityDataset(100, 2, 1), 2, Options{EdgeFeat: true})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "edge features requested (--edge-feat) but the dataset has none")
	})
	t.Run("wrong row count", func(t *testing.T) {
		d := withEdgeFeat(communityDataset(100, 2, 1), 2)
		d.EdgeFeat.Data = d.EdgeFeat.Data[:10]
		_, err := WriteDataset(filepath.Join(t.TempDir(), "p"), d, 2, Options{EdgeFeat: true})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "10 edge feature values of width 2")
	})
	t.Run("options", func(t *testing.T) {
		err := Options{EdgeFeat: true, Link: &LinkOptions{Split: "random:0.8,0.1,0.1"}}.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "EdgeFeat with a link split")
		err = Options{NodeFeat: "from-edges:max"}.Validate()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "from-edges:max")
	})
	t.Run("damaged file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "p")
		m, err := WriteDataset(dir, withEdgeFeat(communityDataset(100, 2, 1), 2), 2, Options{EdgeFeat: true})
		require.NoError(t, err)
		path := filepath.Join(dir, "part-1", fileEdgeFeat)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		b[len(b)-1] ^= 1
		require.NoError(t, os.WriteFile(path, b, 0o644))
		_, err = Load(dir, 1)
		require.Error(t, err)
		assert.Contains(t, err.Error(), path)
		require.Error(t, VerifyFiles(dir, m))
	})
}

func TestEdgeFeatCacheName(t *testing.T) {
	o := CacheOptions{Data: "/x/proteins", Parts: 2, Options: Options{Method: MethodMetis, Seed: 1, Split: "species"}}
	assert.Equal(t, "proteins-species-parts-2-metis-seed1", o.Name())
	o.NodeFeat = graph.FromEdgesMean
	assert.Equal(t, "proteins-species-parts-2-metis-seed1-nfmean", o.Name())
	o.NodeFeat, o.EdgeFeat = graph.FromEdgesSum, true
	assert.Equal(t, "proteins-species-parts-2-metis-seed1-nfsum-ef", o.Name())
}
