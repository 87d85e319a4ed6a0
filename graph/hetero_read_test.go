package graph

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heteroFiles is a tiny bibliographic graph: 2 authors, 3 papers, 1 venue;
// writes author->paper (with a duplicate line), cites paper->paper,
// published_in paper->venue. Papers have 2 features and labels (one
// missing); split "s" on papers, and a link split "l" on writes.
func heteroFiles() map[string]string {
	return map[string]string{
		"raw/num-node-dict.csv.gz":                                        "author,paper,venue\n2,3,1\n",
		"raw/triplet-type-list.csv.gz":                                    "author,writes,paper\npaper,cites,paper\npaper,published_in,venue\n",
		"raw/nodetype-has-feat.csv.gz":                                    "author,paper,venue\nFalse,True,False\n",
		"raw/nodetype-has-label.csv.gz":                                   "author,paper,venue\nFalse,True,False\n",
		"raw/relations/author___writes___paper/edge.csv.gz":               "0,0\n0,1\n1,1\n0,1\n",
		"raw/relations/author___writes___paper/num-edge-list.csv.gz":      "4\n",
		"raw/relations/author___writes___paper/edge_reltype.csv.gz":       "0\n0\n0\n0\n",
		"raw/relations/paper___cites___paper/edge.csv.gz":                 "1,0\n2,0\n2,1\n",
		"raw/relations/paper___cites___paper/num-edge-list.csv.gz":        "3\n",
		"raw/relations/paper___published_in___venue/edge.csv.gz":          "0,0\n1,0\n2,0\n",
		"raw/relations/paper___published_in___venue/num-edge-list.csv.gz": "3\n",
		"raw/node-feat/paper/node-feat.csv.gz":                            "1,0\n0,1\n0.5,0.5\n",
		"raw/node-label/paper/node-label.csv.gz":                          "0\nnan\n1\n",
		"split/s/nodetype-has-split.csv.gz":                               "author,paper,venue\nFalse,True,False\n",
		"split/s/paper/train.csv.gz":                                      "0\n",
		"split/s/paper/valid.csv.gz":                                      "1\n",
		"split/s/paper/test.csv.gz":                                       "2\n",
		"split/l/train.csv.gz":                                            "0,0,5,1\n1,1,6,2\n",
		"split/l/test.csv.gz":                                             "0,1,7,3\n",
	}
}

// relRows returns the homogenized sources of every relation row of d, keyed
// "relation dstOrig".
func relRows(d *HeteroDataset) map[string][]int64 {
	out := map[string][]int64{}
	R := int64(d.Schema.NumRels())
	for v := int64(0); v < d.NumNodes(); v++ {
		for r := int64(0); r < R; r++ {
			if nb := d.In.Neighbors(v*R + r); len(nb) > 0 {
				out[d.Schema.Relations[r].String()+" "+strconv.FormatInt(v, 10)] = nb
			}
		}
	}
	return out
}

func TestReadOGBHeteroTiny(t *testing.T) {
	dir := writeTiny(t, heteroFiles())
	// Homogenized ids: author 0..1, paper 2..4, venue 5.
	tests := []struct {
		name string
		opt  HeteroReadOptions
		rels []string
		rows map[string][]int64
	}{
		{"as stored", HeteroReadOptions{}, []string{"author___writes___paper", "paper___cites___paper", "paper___published_in___venue"},
			map[string][]int64{
				"author___writes___paper 2": {0}, "author___writes___paper 3": {0, 1},
				"paper___cites___paper 2": {3, 4}, "paper___cites___paper 3": {4},
				"paper___published_in___venue 5": {2, 3, 4},
			}},
		{"reverse", DefaultHeteroReadOptions(), []string{"author___writes___paper", "paper___cites___paper", "paper___published_in___venue",
			"paper___rev_writes___author", "venue___rev_published_in___paper"},
			map[string][]int64{
				"author___writes___paper 2": {0}, "author___writes___paper 3": {0, 1},
				"paper___cites___paper 2": {3, 4}, "paper___cites___paper 3": {2, 4}, "paper___cites___paper 4": {2, 3},
				"paper___published_in___venue 5": {2, 3, 4},
				"paper___rev_writes___author 0":  {2, 3}, "paper___rev_writes___author 1": {3},
				"venue___rev_published_in___paper 2": {5}, "venue___rev_published_in___paper 3": {5}, "venue___rev_published_in___paper 4": {5},
			}},
		{"reverse except writes", HeteroReadOptions{Reverse: true, NoReverse: []string{"author___writes___paper"}},
			[]string{"author___writes___paper", "paper___cites___paper", "paper___published_in___venue", "venue___rev_published_in___paper"},
			map[string][]int64{
				"author___writes___paper 2": {0}, "author___writes___paper 3": {0, 1},
				"paper___cites___paper 2": {3, 4}, "paper___cites___paper 3": {2, 4}, "paper___cites___paper 4": {2, 3},
				"paper___published_in___venue 5":     {2, 3, 4},
				"venue___rev_published_in___paper 2": {5}, "venue___rev_published_in___paper 3": {5}, "venue___rev_published_in___paper 4": {5},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadOGBHetero(dir, tc.opt)
			require.NoError(t, err)
			s := d.Schema
			require.Equal(t, []string{"author", "paper", "venue"}, s.NodeTypes)
			require.Equal(t, []int64{0, 2, 5, 6}, s.NodeOrig)
			var rels []string
			for _, r := range s.Relations {
				rels = append(rels, r.String())
			}
			require.ElementsMatch(t, tc.rels, rels)
			require.EqualValues(t, 6*len(rels), d.In.NumRows())
			require.NoError(t, d.In.Validate(6))
			require.Equal(t, tc.rows, relRows(d))
			require.Equal(t, []string{"paper"}, slices.Sorted(maps.Keys(d.Feat)))
			require.Equal(t, []float32{1, 0, 0, 1, 0.5, 0.5}, d.Feat["paper"].Data)
			require.Equal(t, []int32{0, -1, 1}, d.Labels["paper"])
			require.Equal(t, map[string]int{"paper": 2}, d.NumClasses)
			require.Equal(t, []string{"s"}, slices.Sorted(maps.Keys(d.Splits)), "l is a link split")
			require.Equal(t, &Split{Train: []int64{0}, Valid: []int64{1}, Test: []int64{2}}, d.Splits["s"]["paper"])

			ls, err := ReadHeteroLinkSplit(dir, "l", s, "author___writes___paper")
			require.NoError(t, err)
			assert.True(t, ls.HasTime)
			assert.Equal(t, []int64{0, 1}, ls.Train.Src)
			assert.Equal(t, []int64{2, 3}, ls.Train.Dst)
			assert.Equal(t, []int64{5, 6}, ls.Train.Time)
			assert.Equal(t, 0, ls.Valid.Len())
			assert.Equal(t, []int64{3}, ls.Test.Dst)
		})
	}
}

func TestReadOGBHeteroNoTripletFile(t *testing.T) {
	files := heteroFiles()
	delete(files, "raw/triplet-type-list.csv.gz")
	delete(files, "raw/nodetype-has-feat.csv.gz")
	delete(files, "raw/nodetype-has-label.csv.gz")
	delete(files, "split/s/nodetype-has-split.csv.gz")
	want, err := ReadOGBHetero(writeTiny(t, heteroFiles()), DefaultHeteroReadOptions())
	require.NoError(t, err)
	d, err := ReadOGBHetero(writeTiny(t, files), DefaultHeteroReadOptions())
	require.NoError(t, err)
	d.Name = want.Name
	require.Equal(t, want, d)
}

func TestReadOGBHeteroBadInput(t *testing.T) {
	const w = "raw/relations/author___writes___paper/"
	tests := []struct {
		name  string
		edit  map[string]string // path -> new content ("" deletes)
		opt   HeteroReadOptions
		split string // read this link split instead
		want  string
	}{
		{"count header mismatch", map[string]string{"raw/num-node-dict.csv.gz": "author,paper\n2,3,1\n"}, HeteroReadOptions{}, "",
			"num-node-dict.csv.gz line 2: 3 counts for the 2 node types"},
		{"bad count", map[string]string{"raw/num-node-dict.csv.gz": "author,paper,venue\n2,x,1\n"}, HeteroReadOptions{}, "",
			"num-node-dict.csv.gz line 2: count of \"paper\": not an integer"},
		{"zero count", map[string]string{"raw/num-node-dict.csv.gz": "author,paper,venue\n2,0,1\n"}, HeteroReadOptions{}, "",
			"num-node-dict.csv.gz line 2: count of \"paper\" is 0"},
		{"no counts line", map[string]string{"raw/num-node-dict.csv.gz": "author,paper,venue\n"}, HeteroReadOptions{}, "",
			"num-node-dict.csv.gz: 1 lines"},
		{"duplicate type", map[string]string{"raw/num-node-dict.csv.gz": "author,author,venue\n2,3,1\n"}, HeteroReadOptions{}, "",
			"num-node-dict.csv.gz line 1: node type \"author\" appears twice"},
		{"bad triplet", map[string]string{"raw/triplet-type-list.csv.gz": "author,writes,paper\npaper,cites\n"}, HeteroReadOptions{}, "",
			"triplet-type-list.csv.gz line 2: want \"src_type,relation,dst_type\""},
		{"unknown type in triplet", map[string]string{"raw/triplet-type-list.csv.gz": "author,writes,book\n"}, HeteroReadOptions{}, "",
			"triplet-type-list.csv.gz line 1: node type \"book\""},
		{"edge out of range", map[string]string{w + "edge.csv.gz": "0,0\n0,1\n2,1\n0,1\n"}, HeteroReadOptions{}, "",
			"author___writes___paper/edge.csv.gz line 3: edge 2,1 has an id outside [0,2) x [0,3)"},
		{"dst out of range", map[string]string{w + "edge.csv.gz": "0,0\n0,3\n1,1\n0,1\n"}, HeteroReadOptions{}, "",
			"edge.csv.gz line 2: edge 0,3 has an id outside"},
		{"edge count short", map[string]string{w + "num-edge-list.csv.gz": "5\n"}, HeteroReadOptions{}, "",
			"4 edge lines, but num-edge-list.csv.gz says 5"},
		{"edge count long", map[string]string{w + "num-edge-list.csv.gz": "3\n"}, HeteroReadOptions{}, "",
			"edge.csv.gz line 4: more edge lines than the 3"},
		{"bad edge line", map[string]string{w + "edge.csv.gz": "0,0\n0;1\n1,1\n0,1\n"}, HeteroReadOptions{}, "",
			"edge.csv.gz line 2: want \"src,dst\""},
		{"missing edge file", map[string]string{w + "edge.csv.gz": ""}, HeteroReadOptions{}, "",
			"missing file"},
		{"bad has-feat", map[string]string{"raw/nodetype-has-feat.csv.gz": "author,paper,venue\nFalse,Yes,False\n"}, HeteroReadOptions{}, "",
			"nodetype-has-feat.csv.gz line 2: value \"Yes\" for \"paper\""},
		{"feature row short", map[string]string{"raw/node-feat/paper/node-feat.csv.gz": "1,0\n0\n0.5,0.5\n"}, HeteroReadOptions{}, "",
			"node-feat.csv.gz line 2: 1 values, want 2"},
		{"too few labels", map[string]string{"raw/node-label/paper/node-label.csv.gz": "0\n1\n"}, HeteroReadOptions{}, "",
			"2 labels, want one per node (3)"},
		{"bad label", map[string]string{"raw/node-label/paper/node-label.csv.gz": "0\nx\n1\n"}, HeteroReadOptions{}, "",
			"node-label.csv.gz line 2: label"},
		{"split id out of range", map[string]string{"split/s/paper/test.csv.gz": "3\n"}, HeteroReadOptions{}, "",
			"paper/test.csv.gz line 1: node id 3 outside [0,3)"},
		{"split overlap", map[string]string{"split/s/paper/test.csv.gz": "0\n"}, HeteroReadOptions{}, "",
			"node 0 (line 1 of test.csv.gz) is already in train"},
		{"link split named as node split", nil, HeteroReadOptions{Splits: []string{"l"}}, "",
			"not a node split"},
		{"unknown no-reverse", nil, HeteroReadOptions{Reverse: true, NoReverse: []string{"a___b___c"}}, "",
			"NoReverse names \"a___b___c\""},
		{"link split id out of range", map[string]string{"split/l/test.csv.gz": "0,3,7,3\n"}, HeteroReadOptions{}, "l",
			"test.csv.gz line 1: edge 0,3 has an id outside [0,2) x [0,3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := heteroFiles()
			for p, text := range tc.edit {
				if text == "" {
					delete(files, p)
				} else {
					files[p] = text
				}
			}
			dir := writeTiny(t, files)
			var err error
			if tc.split != "" {
				var d *HeteroDataset
				d, err = ReadOGBHetero(dir, tc.opt)
				require.NoError(t, err)
				_, err = ReadHeteroLinkSplit(dir, tc.split, d.Schema, "author___writes___paper")
			} else {
				_, err = ReadOGBHetero(dir, tc.opt)
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// An unknown relation for a link split.
	dir := writeTiny(t, heteroFiles())
	d, err := ReadOGBHetero(dir, HeteroReadOptions{})
	require.NoError(t, err)
	_, err = ReadHeteroLinkSplit(dir, "l", d.Schema, "author___reads___paper")
	require.ErrorContains(t, err, "relation \"author___reads___paper\" is not in the dataset")
	require.False(t, IsHeteroLayout(t.TempDir()))
	require.True(t, IsHeteroLayout(dir))
}

func TestReadOGBHeteroDBLP(t *testing.T) {
	dir := filepath.Join(dataRoot(), "dblp")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("DBLP not available at %s (set MPIGNN_DATA)", dir)
	}
	require.True(t, IsHeteroLayout(dir))
	d, err := ReadOGBHetero(dir, DefaultHeteroReadOptions())
	require.NoError(t, err)
	s := d.Schema
	counts := map[string]int64{}
	for i, ty := range s.NodeTypes {
		counts[ty] = s.Count(i)
	}
	require.Equal(t, map[string]int64{"author": 4057, "paper": 14328, "term": 7723, "conference": 20}, counts)
	edges := map[string]int64{}
	R := int64(s.NumRels())
	for v := int64(0); v < d.NumNodes(); v++ {
		for r := int64(0); r < R; r++ {
			edges[s.Relations[r].String()] += d.In.Degree(v*R + r)
		}
	}
	require.Equal(t, map[string]int64{
		"author___writes___paper": 19645, "paper___rev_writes___author": 19645,
		"paper___has_term___term": 85810, "term___rev_has_term___paper": 85810,
		"paper___published_in___conference": 14328, "conference___rev_published_in___paper": 14328,
	}, edges)
	require.NoError(t, d.In.Validate(d.NumNodes()))
	dims := map[string]int{}
	for ty, f := range d.Feat {
		dims[ty] = f.Dim
		require.Equal(t, counts[ty], f.NumRows(), ty)
	}
	require.Equal(t, map[string]int{"author": 334, "paper": 4231, "term": 50}, dims)
	require.Equal(t, map[string]int{"author": 4}, d.NumClasses)
	require.Len(t, d.Labels["author"], 4057)
	sp := d.Splits["public"]["author"]
	require.NotNil(t, sp)
	require.Equal(t, []int{400, 400, 3257}, []int{len(sp.Train), len(sp.Valid), len(sp.Test)})
	require.Len(t, d.Splits["public"], 1)
}

func TestReadOGBHeteroMovieLens(t *testing.T) {
	dir := filepath.Join(dataRoot(), "movielens100k")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("MovieLens 100K not available at %s (set MPIGNN_DATA)", dir)
	}
	d, err := ReadOGBHetero(dir, DefaultHeteroReadOptions())
	require.NoError(t, err)
	s := d.Schema
	require.Equal(t, []string{"movie", "user"}, s.NodeTypes)
	require.Equal(t, []int64{0, 1682, 1682 + 943}, s.NodeOrig)
	require.Equal(t, 2, s.NumRels())
	require.Empty(t, d.Splits, "time and u1 are link splits")
	require.Equal(t, 24, d.Feat["user"].Dim)
	require.Equal(t, 18, d.Feat["movie"].Dim)
	require.Empty(t, d.Labels)
	tests := []struct {
		split  string
		counts [3]int
	}{
		{"time", [3]int{79999, 10001, 10000}},
		{"u1", [3]int{80000, 0, 20000}},
	}
	for _, tc := range tests {
		t.Run(tc.split, func(t *testing.T) {
			ls, err := ReadHeteroLinkSplit(dir, tc.split, s, "user___rates___movie")
			require.NoError(t, err)
			require.Equal(t, tc.counts, [3]int{ls.Train.Len(), ls.Valid.Len(), ls.Test.Len()})
			require.True(t, ls.HasTime)
			for _, set := range []LinkSet{ls.Train, ls.Valid, ls.Test} {
				for i := range set.Src {
					require.Equal(t, 1, s.TypeOf(set.Src[i]), "source is a user")
					require.Equal(t, 0, s.TypeOf(set.Dst[i]), "destination is a movie")
				}
			}
			// The first time-split edge is user 258 -> movie 254 (file row).
			if tc.split == "time" {
				require.Equal(t, int64(1682+258), ls.Train.Src[0])
				require.Equal(t, int64(254), ls.Train.Dst[0])
			}
		})
	}
}
