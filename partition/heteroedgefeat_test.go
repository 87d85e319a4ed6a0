package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// withHeteroEdgeFeat gives d relation edge features of width dim aligned
// with d.In, unique per stored edge (edge e's row starts at e).
func withHeteroEdgeFeat(d *graph.HeteroDataset, dim int) *graph.HeteroDataset {
	m := d.In.NumEdges()
	d.EdgeFeat = &graph.Features{Dim: dim, Data: make([]float32, m*int64(dim))}
	for e := range m {
		for j := range dim {
			d.EdgeFeat.Data[e*int64(dim)+int64(j)] = float32(e) + float32(j)/8
		}
	}
	d.EdgeFeatNames = nil
	for j := range dim {
		d.EdgeFeatNames = append(d.EdgeFeatNames, fmt.Sprintf("attr%d", j))
	}
	return d
}

// TestHeteroEdgeFeatRoundTrip: a heterogeneous partition written with
// relation edge features stores, in every part and every share of it, the
// dataset's row of each in-edge of each (node, relation) row, and META
// names the columns.
func TestHeteroEdgeFeatRoundTrip(t *testing.T) {
	for _, method := range []string{MethodMetis, MethodRandom} {
		for parts := 1; parts <= 3; parts++ {
			t.Run(fmt.Sprintf("%s/%d", method, parts), func(t *testing.T) {
				d := withHeteroEdgeFeat(heteroDataset(t, 1), 3)
				in, ef := canonicalEdgeFeat(d.In, d.EdgeFeat, 1)
				opt := Options{Method: method, Seed: 3, Undirected: true, EdgeFeat: true}
				dir := filepath.Join(t.TempDir(), "p")
				m, err := WriteHeteroDataset(dir, d, parts, opt)
				require.NoError(t, err)
				require.Equal(t, 3, m.EdgeFeatDim)
				require.Equal(t, []string{"attr0", "attr1", "attr2"}, m.Hetero.EdgeFeatNames)
				require.NoError(t, VerifyFiles(dir, m))
				R := int64(d.Schema.NumRels())
				dim := int64(3)
				var edges int64
				check := func(pt *Part) {
					require.Len(t, pt.EdgeFeat, len(pt.Indices)*3)
					for i, o := range pt.Orig {
						for r := range R {
							a, b := pt.Indptr[int64(i)*R+r], pt.Indptr[int64(i)*R+r+1]
							require.Equal(t, in.Neighbors(o*R+r), pt.IndicesOrig[a:b], "node %d relation %d", o, r)
							want := ef.Data[in.Indptr[o*R+r]*dim : in.Indptr[o*R+r+1]*dim]
							require.Equal(t, want, pt.EdgeFeat[a*dim:b*dim], "edge features of node %d relation %d", o, r)
						}
					}
				}
				for p := range parts {
					pt, err := Load(dir, p)
					require.NoError(t, err)
					check(pt)
					edges += int64(len(pt.Indices))
					b, err := ShareBounds(dir, m, p, 2)
					require.NoError(t, err)
					for j := range 2 {
						s, err := LoadRange(dir, m, p, b[j], b[j+1])
						require.NoError(t, err)
						check(s)
					}
				}
				assert.Equal(t, d.In.NumEdges(), edges)
			})
		}
	}
}

// TestHeteroEdgeFeatOff: without Options.EdgeFeat a heterogeneous
// partition is the one written before relation edge features existed (no
// edge_feat.bin, nothing new in META), whether or not the dataset has them;
// and what is not supported is refused.
func TestHeteroEdgeFeatOff(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "plain")
	_, err := WriteHeteroDataset(plain, heteroDataset(t, 1), 2, Options{Seed: 3, Undirected: true})
	require.NoError(t, err)
	with := filepath.Join(t.TempDir(), "with")
	_, err = WriteHeteroDataset(with, withHeteroEdgeFeat(heteroDataset(t, 1), 2), 2, Options{Seed: 3, Undirected: true})
	require.NoError(t, err)
	assert.Equal(t, readTree(t, plain), readTree(t, with))
	meta, err := os.ReadFile(filepath.Join(plain, "META.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(meta), "edge_feat")
	assert.NoFileExists(t, filepath.Join(plain, "part-0", fileEdgeFeat))

	for _, tc := range []struct {
		name string
		d    *graph.HeteroDataset
		opt  Options
		want string
	}{
		{"no edge features", heteroDataset(t, 1), Options{EdgeFeat: true}, "the dataset has none"},
		{"names missing", func() *graph.HeteroDataset {
			d := withHeteroEdgeFeat(heteroDataset(t, 1), 2)
			d.EdgeFeatNames = d.EdgeFeatNames[:1]
			return d
		}(), Options{EdgeFeat: true}, "(1 names)"},
		{"with times", withHeteroEdgeFeat(heteroDataset(t, 1), 2), Options{EdgeFeat: true, Time: true}, "not supported yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WriteHetero(filepath.Join(t.TempDir(), "p"), tc.d, make([]int32, tc.d.NumNodes()), 1, tc.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
