package graph

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relEdgeFeat returns, keyed "relation dstOrig", each relation row's
// sources with the edge-feature row of each in-edge (width 1 here).
func relEdgeFeat(d *HeteroDataset) map[string][][2]float32 {
	out := map[string][][2]float32{}
	R := int64(d.Schema.NumRels())
	for v := int64(0); v < d.NumNodes(); v++ {
		for r := int64(0); r < R; r++ {
			for e := d.In.Indptr[v*R+r]; e < d.In.Indptr[v*R+r+1]; e++ {
				k := d.Schema.Relations[r].String() + " " + strconv.FormatInt(v, 10)
				out[k] = append(out[k], [2]float32{float32(d.In.Indices[e]), d.EdgeFeat.Row(e)[0]})
			}
		}
	}
	return out
}

// TestReadOGBHeteroEdgeFeat: relation edge attributes become one column
// per name, aligned with the in-edges; reversed and symmetrized edges keep
// their line's value, a repeated edge its first line's, a relation without
// the file zeros; the adjacency is the one read without features.
func TestReadOGBHeteroEdgeFeat(t *testing.T) {
	files := heteroFiles()
	files["raw/relations/author___writes___paper/edge_w.csv.gz"] = "1\n2\n3\n4\n"
	// The last cites line is the reverse of the first: symmetrized, both
	// pairs take the first line's value.
	files["raw/relations/paper___cites___paper/edge.csv.gz"] = "1,0\n2,0\n2,1\n0,1\n"
	files["raw/relations/paper___cites___paper/num-edge-list.csv.gz"] = "4\n"
	files["raw/relations/paper___cites___paper/edge_w.csv.gz"] = "10\n20\n30\n40\n"
	files["raw/relations/paper___cites___paper/edge_time.csv.gz"] = "5\n6\n7\n8\n"
	dir := writeTiny(t, files)
	attrs, err := HeteroEdgeAttrs(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"reltype", "w"}, attrs, "edge_time is not a feature")

	plain, err := ReadOGBHetero(dir, DefaultHeteroReadOptions())
	require.NoError(t, err)
	for _, workers := range []int{1, 3} {
		opt := DefaultHeteroReadOptions()
		opt.EdgeFeat, opt.Workers = []string{"w"}, workers
		d, err := ReadOGBHetero(dir, opt)
		require.NoError(t, err)
		assert.Equal(t, plain.In, d.In)
		assert.Equal(t, []string{"w"}, d.EdgeFeatNames)
		require.Equal(t, 1, d.EdgeFeat.Dim)
		// Homogenized ids: author 0..1, paper 2..4, venue 5.
		assert.Equal(t, map[string][][2]float32{
			"author___writes___paper 2":          {{0, 1}},
			"author___writes___paper 3":          {{0, 2}, {1, 3}},
			"paper___rev_writes___author 0":      {{2, 1}, {3, 2}},
			"paper___rev_writes___author 1":      {{3, 3}},
			"paper___cites___paper 2":            {{3, 10}, {4, 20}},
			"paper___cites___paper 3":            {{2, 10}, {4, 30}},
			"paper___cites___paper 4":            {{2, 20}, {3, 30}},
			"paper___published_in___venue 5":     {{2, 0}, {3, 0}, {4, 0}},
			"venue___rev_published_in___paper 2": {{5, 0}},
			"venue___rev_published_in___paper 3": {{5, 0}},
			"venue___rev_published_in___paper 4": {{5, 0}},
		}, relEdgeFeat(d), "workers %d", workers)
	}

	two := DefaultHeteroReadOptions()
	two.EdgeFeat = []string{"w", "reltype"}
	d, err := ReadOGBHetero(dir, two)
	require.NoError(t, err)
	require.Equal(t, 2, d.EdgeFeat.Dim)
	assert.Equal(t, []float32{1, 0}, d.EdgeFeat.Row(d.In.Indptr[2*int64(d.Schema.NumRels())]), "first in-edge of paper 0: writes from author 0")

	for _, tc := range []struct {
		name string
		opt  HeteroReadOptions
		want string
	}{
		{"absent everywhere", HeteroReadOptions{EdgeFeat: []string{"nope"}}, "no relation has any"},
		{"with time", HeteroReadOptions{EdgeFeat: []string{"w"}, Time: true}, "not supported yet"},
		{"repeated", HeteroReadOptions{EdgeFeat: []string{"w", "w"}}, "twice"},
		{"bad name", HeteroReadOptions{EdgeFeat: []string{"a/b"}}, "not an edge attribute name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadOGBHetero(dir, tc.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	bad := heteroFiles()
	bad["raw/relations/paper___cites___paper/edge_w.csv.gz"] = "10\n20\n"
	_, err = ReadOGBHetero(writeTiny(t, bad), HeteroReadOptions{EdgeFeat: []string{"w"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join("paper___cites___paper", "edge_w.csv.gz"))
}
