package partition

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// relEdge is an edge u -r-> v of a heterogeneous graph in original ids.
type relEdge struct {
	u, v int64
	r    int
}

// heteroLinkView is a heterogeneous link partition gathered from all its
// parts, in original ids only (comparable between partitionings).
type heteroLinkView struct {
	sets     [3][]origEdge
	pools    [2][]origEdge
	negs     [2]map[int64][]int64
	adj      map[relEdge]bool // training relation rows
	validAdj map[relEdge]bool
	merged   map[relEdge]bool
}

func gatherHeteroLink(t *testing.T, parts []*Part) *heteroLinkView {
	t.Helper()
	m := parts[0].Meta
	require.NotNil(t, m.Link)
	require.NotNil(t, m.Hetero)
	k, R := m.Link.NegsPerPos, int64(m.NumRels())
	v := &heteroLinkView{adj: map[relEdge]bool{}, validAdj: map[relEdge]bool{}, merged: map[relEdge]bool{}}
	v.negs[0], v.negs[1] = map[int64][]int64{}, map[int64][]int64{}
	rows := func(ptr, indOrig []int64, o int64, i int, into map[relEdge]bool) {
		for r := int64(0); r < R; r++ {
			row := int64(i)*R + r
			for _, u := range indOrig[ptr[row]:ptr[row+1]] {
				into[relEdge{u, o, int(r)}] = true
			}
		}
	}
	for _, pt := range parts {
		lp := pt.Link
		require.NotNil(t, lp)
		var mp, mo []int64
		if m.Link.ValidAdj {
			var err error
			mp, _, mo, err = pt.MergedValidAdjacency()
			require.NoError(t, err)
		}
		for i, o := range pt.Orig {
			rows(pt.Indptr, pt.IndicesOrig, o, i, v.adj)
			if m.Link.ValidAdj {
				rows(lp.ValidIndptr, lp.ValidIndicesOrig, o, i, v.validAdj)
				rows(mp, mo, o, i, v.merged)
			}
		}
		for s, e := range []*LinkEdges{&lp.Train, &lp.Valid, &lp.Test} {
			for i := range e.ID {
				v.sets[s] = append(v.sets[s], origEdge{e.ID[i], e.SrcOrig[i], e.DstOrig[i], e.Time[i]})
				if s > 0 {
					negs := [2][]int64{lp.ValidNegOrig, lp.TestNegOrig}[s-1]
					v.negs[s-1][e.ID[i]] = slices.Clone(negs[i*k : (i+1)*k])
				}
			}
		}
		for q, e := range []*LinkEdges{&lp.ValidPool, &lp.TestPool} {
			for i := range e.ID {
				v.pools[q] = append(v.pools[q], origEdge{e.ID[i], e.SrcOrig[i], e.DstOrig[i], e.Time[i]})
			}
		}
	}
	for s := range v.sets {
		slices.SortFunc(v.sets[s], func(a, b origEdge) int { return cmp.Compare(a.id, b.id) })
	}
	for q := range v.pools {
		slices.SortFunc(v.pools[q], func(a, b origEdge) int { return cmp.Compare(a.id, b.id) })
	}
	return v
}

// relEdges returns the edges of d's relation rows.
func relEdges(d *graph.HeteroDataset) map[relEdge]bool {
	R := int64(d.Schema.NumRels())
	out := map[relEdge]bool{}
	for row := int64(0); row < d.In.NumRows(); row++ {
		for _, u := range d.In.Neighbors(row) {
			out[relEdge{u, row / R, int(row % R)}] = true
		}
	}
	return out
}

// checkHeteroLinkSplit checks a written split against its definition: the
// training adjacency is d's minus the held-out positives in the relation,
// its reverse (rev >= 0) and, with both, the relation's other direction;
// positives, negatives and pools have the relation's types; the valid
// adjacency is the valid positives' entries not already in training.
func checkHeteroLinkSplit(t *testing.T, d *graph.HeteroDataset, v *heteroLinkView, m *Meta, both bool) {
	t.Helper()
	s := d.Schema
	r, rev, err := LinkRelations(s, m.Link.Relation)
	require.NoError(t, err)
	st, dt := s.SrcType(r), s.DstType(r)
	of := func(ty int, o int64) bool { return o >= s.NodeOrig[ty] && o < s.NodeOrig[ty+1] }
	entries := func(e origEdge) []relEdge {
		out := []relEdge{{e.src, e.dst, r}}
		if rev >= 0 {
			out = append(out, relEdge{e.dst, e.src, rev})
		}
		if both {
			out = append(out, relEdge{e.dst, e.src, r})
		}
		return out
	}
	held := map[relEdge]bool{}
	for s := setValid; s <= setTest; s++ {
		for _, e := range v.sets[s] {
			for _, x := range entries(e) {
				held[x] = true
				assert.False(t, v.adj[x], "held-out %s edge %v reaches message passing", setNames[s], x)
			}
		}
	}
	want := map[relEdge]bool{}
	for x := range relEdges(d) {
		if !held[x] {
			want[x] = true
		}
	}
	assert.Equal(t, want, v.adj, "training adjacency = dataset minus held-out entries")
	for s, set := range v.sets {
		assert.Len(t, set, int([3]int64{m.Link.Train, m.Link.Valid, m.Link.Test}[s]))
		for i, e := range set {
			require.EqualValues(t, i, e.id, "%s ids are 0..n-1", setNames[s])
			assert.True(t, of(st, e.src) && of(dt, e.dst), "%s edge %v has the wrong types", setNames[s], e)
		}
	}
	checkTrueNegatives(t, &linkView{sets: v.sets, pools: v.pools, negs: v.negs}, m.Link, s.NodeOrig[dt], s.Count(dt), s.NodeOrig[st], s.Count(st))
	if m.Link.ValidAdj {
		wantValid := map[relEdge]bool{}
		for _, e := range v.sets[setValid] {
			for _, x := range entries(e) {
				if !v.adj[x] {
					wantValid[x] = true
				}
			}
		}
		assert.Equal(t, wantValid, v.validAdj)
		merged := map[relEdge]bool{}
		for x := range v.adj {
			merged[x] = true
		}
		for x := range v.validAdj {
			merged[x] = true
		}
		assert.Equal(t, merged, v.merged)
	}
}

// heteroLinkRows builds a named split of d's relation rel from its edges:
// edge i (in row order) goes to train, valid or test by i mod 10, with
// time i; noValid leaves valid empty (as MovieLens u1).
func heteroLinkRows(d *graph.HeteroDataset, rel string, noValid bool) *graph.LinkSplit {
	s := d.Schema
	r, R := int64(s.RelIndex(rel)), int64(s.NumRels())
	ls := &graph.LinkSplit{HasTime: true}
	i := int64(0)
	for v := int64(0); v < d.NumNodes(); v++ {
		for _, u := range d.In.Neighbors(v*R + r) {
			set := &ls.Train
			switch {
			case i%10 == 7 && !noValid:
				set = &ls.Valid
			case i%10 >= 8:
				set = &ls.Test
			}
			// Reverse insertion order: the canonical ids must not
			// depend on the file order.
			set.Src = slices.Insert(set.Src, 0, u)
			set.Dst = slices.Insert(set.Dst, 0, v)
			set.Time = slices.Insert(set.Time, 0, i)
			i++
		}
	}
	return ls
}

func TestHeteroLinkSplits(t *testing.T) {
	d := heteroDataset(t, 4)
	cases := []struct {
		name string
		lo   LinkOptions
		both bool
	}{
		{"random-writes", LinkOptions{Split: "random:0.7,0.1,0.2", Relation: "author___writes___paper", NegsPerPos: 4, Pool: 30}, false},
		{"random-rev", LinkOptions{Split: "random:0.6,0.2,0.2", Relation: "paper___rev_writes___author", NegsPerPos: 3, Pool: 20, NoValidAdj: true}, false},
		{"random-cites", LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "paper___cites___paper", NegsPerPos: 2, Pool: 10}, true},
		{"named-pub", LinkOptions{Split: "time", Relation: "paper___published_in___venue", NegsPerPos: 5, Pool: 25,
			Rows: heteroLinkRows(d, "paper___published_in___venue", false)}, false},
		{"named-novalid", LinkOptions{Split: "u1", Relation: "author___writes___paper", NegsPerPos: 5, Pool: 25,
			Rows: heteroLinkRows(d, "author___writes___paper", true)}, false},
		{"named-cites", LinkOptions{Split: "time", Relation: "paper___cites___paper", NegsPerPos: 5, Pool: 25,
			Rows: heteroLinkRows(d, "paper___cites___paper", false)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			var first *heteroLinkView
			for nparts := 1; nparts <= 4; nparts++ {
				lo := c.lo
				dir := filepath.Join(root, string(rune('0'+nparts)))
				m, err := WriteHeteroDataset(dir, d, nparts, Options{Seed: 9, Undirected: true, Link: &lo})
				require.NoError(t, err)
				require.Equal(t, FormatVersionHetero, m.FormatVersion)
				require.Equal(t, c.lo.Relation, m.Link.Relation)
				parts := loadAll(t, dir)
				v := gatherHeteroLink(t, parts)
				checkHeteroLinkSplit(t, d, v, parts[0].Meta, c.both)
				if first == nil {
					first = v
					require.Positive(t, len(v.sets[setTest]))
					if c.lo.Split == "u1" {
						assert.Empty(t, v.sets[setValid])
						assert.Zero(t, m.Link.Valid)
					} else {
						assert.Positive(t, len(v.sets[setValid]))
					}
					continue
				}
				assert.Equal(t, first, v, "%d parts hold another split than 1 part (original ids)", nparts)
			}
		})
	}
}

func TestHeteroLinkDeterministic(t *testing.T) {
	d := heteroDataset(t, 5)
	root := t.TempDir()
	var trees []map[string][]byte
	for _, w := range []int{1, 3} {
		dir := filepath.Join(root, "p")
		lo := LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "author___writes___paper", NegsPerPos: 3, Pool: 10}
		_, err := WriteHeteroDataset(dir, d, 3, Options{Seed: 2, Workers: w, Overwrite: true, Undirected: true, Link: &lo})
		require.NoError(t, err)
		trees = append(trees, readTree(t, dir))
	}
	assert.Contains(t, trees[0], "part-0/link-test-neg.bin")
	assert.Equal(t, trees[0], trees[1])
}

func TestHeteroLinkBadInput(t *testing.T) {
	d := heteroDataset(t, 6)
	wrongType := heteroLinkRows(d, "author___writes___paper", false)
	wrongType.Test.Src[0] = wrongType.Test.Dst[0] // a paper as the author
	cases := []struct {
		name string
		lo   LinkOptions
		want string
	}{
		{"no relation", LinkOptions{Split: "random:0.8,0.1,0.1"}, "name the relation"},
		{"unknown relation", LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "a___b___c"}, "is not in the dataset"},
		{"bad relation", LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "writes"}, "Link.Relation"},
		{"no rows", LinkOptions{Split: "time", Relation: "author___writes___paper"}, "no rows given"},
		{"bad split name", LinkOptions{Split: "../x", Relation: "author___writes___paper"}, "split directory"},
		{"struct feats", LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "author___writes___paper", StructFeats: 8}, "Link.StructFeats 8"},
		{"wrong types", LinkOptions{Split: "time", Relation: "author___writes___paper", Rows: wrongType}, "is not author -> paper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo := c.lo
			_, err := WriteHeteroDataset(filepath.Join(t.TempDir(), "p"), d, 2, Options{Seed: 1, Link: &lo})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestHeteroLinkOptions(t *testing.T) {
	lo := LinkOptions{Split: "u1", Relation: "user___rates___movie"}
	require.NoError(t, lo.Validate())
	assert.Contains(t, lo.Key(), "-rel-user___rates___movie")
	m := &LinkMeta{Split: "u1", Seed: 3, NegsPerPos: DefaultNegsPerPos, Pool: DefaultPool, ValidAdj: true, Relation: "user___rates___movie"}
	assert.True(t, lo.Matches(m, 3))
	m.Relation = "user___rated___movie"
	assert.False(t, lo.Matches(m, 3))
	// A homogeneous split still only knows random and time.
	assert.Error(t, LinkOptions{Split: "u1"}.Validate())
	rows, err := LinkOptions{Split: "random:0.8,0.1,0.1", Relation: "a___b___c"}.ReadHeteroSplit("/nonexistent", nil)
	require.NoError(t, err)
	assert.Nil(t, rows)
}

// TestHeteroLinkMovieLens partitions MovieLens 100K for link prediction on
// user___rates___movie with its time and u1 splits.
func TestHeteroLinkMovieLens(t *testing.T) {
	dir := "/work/shared/data/movielens100k"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("MovieLens 100K not at %s: %v", dir, err)
	}
	d, err := graph.ReadOGBHetero(dir, graph.DefaultHeteroReadOptions())
	require.NoError(t, err)
	rel := "user___rates___movie"
	for _, c := range []struct {
		split              string
		train, valid, test int64
	}{{"time", 79999, 10001, 10000}, {"u1", 80000, 0, 20000}} {
		t.Run(c.split, func(t *testing.T) {
			lo := LinkOptions{Split: c.split, Relation: rel, NegsPerPos: 20, Pool: 1000}
			lo.Rows, err = lo.ReadHeteroSplit(dir, d.Schema)
			require.NoError(t, err)
			root := t.TempDir()
			var first *heteroLinkView
			for _, nparts := range []int{1, 3} {
				out := filepath.Join(root, string(rune('0'+nparts)))
				m, err := WriteHeteroDataset(out, d, nparts, Options{Seed: 1, Undirected: true, Link: &lo})
				require.NoError(t, err)
				assert.Equal(t, [3]int64{c.train, c.valid, c.test}, [3]int64{m.Link.Train, m.Link.Valid, m.Link.Test})
				assert.True(t, m.Link.Directed)
				assert.True(t, m.Link.HasTime)
				parts := loadAll(t, out)
				v := gatherHeteroLink(t, parts)
				checkHeteroLinkSplit(t, d, v, m, false)
				// The training graph holds exactly the training ratings,
				// each in both directions.
				assert.Len(t, v.adj, int(2*c.train))
				if first == nil {
					first = v
				} else {
					assert.Equal(t, first, v, "%d parts differ from 1 part", nparts)
				}
			}
			// The README's popularity baseline, on the stored negatives:
			// score a movie by its training ratings.
			pop := map[int64]float64{}
			for _, e := range first.sets[setTrain] {
				pop[e.dst]++
			}
			auc := popularityAUC(first.sets[setTest], first.negs[1], pop)
			t.Logf("%s: popularity test AUC %.4f on %d positives x %d fixed negatives", c.split, auc, len(first.sets[setTest]), lo.NegsPerPos)
			assert.InDelta(t, 0.8, auc, 0.1, "the README measures 0.78 (time, one negative each)")
		})
	}
}

// popularityAUC is the AUC of scoring a pair by score[dst] over positives
// and their fixed negatives (ties count one half).
func popularityAUC(pos []origEdge, negs map[int64][]int64, score map[int64]float64) float64 {
	var sum, cnt float64
	for _, e := range pos {
		for _, w := range negs[e.id] {
			switch a, b := score[e.dst], score[w]; {
			case a > b:
				sum++
			case a == b:
				sum += 0.5
			}
			cnt++
		}
	}
	return sum / cnt
}
