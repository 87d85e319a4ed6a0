package sampletest

import (
	"math/rand/v2"
	"slices"

	"mpignn/graph"
	"mpignn/sample"
)

// HeteroDataset builds a small heterogeneous graph that exercises typed
// sampling: node types author (60), paper (90) and venue (6); relations
// author -writes-> paper and its reverse, paper -cites-> paper (same type),
// paper -published_in-> venue and its reverse (so venues are hubs with
// about 15 papers each). Degrees are skewed: sources are drawn with density
// growing towards low ids, authors 0..4 write nothing and papers 0..4 cite
// nothing and have no author, so many relation rows are empty. In-lists are
// canonical. It has no features, labels or splits (sampling needs none).
func HeteroDataset() *graph.HeteroDataset {
	rels := []graph.Relation{
		{Src: "author", Name: "writes", Dst: "paper"},
		{Src: "paper", Name: "cites", Dst: "paper"},
		{Src: "paper", Name: "published_in", Dst: "venue"},
	}
	rels = append(rels, rels[0].Reverse(), rels[2].Reverse())
	s, err := graph.NewSchema(map[string]int64{"author": 60, "paper": 90, "venue": 6}, rels)
	if err != nil {
		panic(err) // a constant schema: cannot fail
	}
	rng := rand.New(rand.NewPCG(21, 22))
	R := int64(s.NumRels())
	rows := make([][]int64, s.NumNodes()*R)
	// skewed draws an id of type t, low ids far more often (power law).
	skewed := func(t int) int64 {
		u := rng.Float64()
		return s.NodeOrig[t] + int64(float64(s.Count(t))*u*u*u)
	}
	add := func(rel string, u, v int64) {
		r := int64(s.RelIndex(rel))
		rows[v*R+r] = append(rows[v*R+r], u)
	}
	author, paper, venue := s.TypeIndex("author"), s.TypeIndex("paper"), s.TypeIndex("venue")
	for i := int64(5); i < s.Count(paper); i++ {
		p := s.NodeOrig[paper] + i
		for range 1 + rng.IntN(4) {
			a := skewed(author)
			if a-s.NodeOrig[author] < 5 {
				continue // authors 0..4 write nothing
			}
			add("author___writes___paper", a, p)
			add("paper___rev_writes___author", p, a)
		}
		for range rng.IntN(7) {
			if q := skewed(paper); q != p {
				add("paper___cites___paper", q, p)
			}
		}
	}
	for i := range s.Count(paper) {
		p := s.NodeOrig[paper] + i
		v := skewed(venue)
		add("paper___published_in___venue", p, v)
		add("venue___rev_published_in___paper", v, p)
	}
	in := &graph.CSR{Indptr: make([]int64, 1, len(rows)+1)}
	for _, row := range rows {
		slices.Sort(row)
		row = slices.Compact(row)
		in.Indices = append(in.Indices, row...)
		in.Indptr = append(in.Indptr, int64(len(in.Indices)))
	}
	return &graph.HeteroDataset{Name: "sampletest-hetero", Schema: s, In: in}
}

// HeteroCase is a typed sampling case for HeteroDataset.
type HeteroCase struct {
	Name    string
	Fanouts sample.RelFanouts
	Replace bool
}

// HeteroCases are the fanout cases of the typed sampler tests on
// HeteroDataset (relations in schema order: writes, cites, published_in,
// rev_writes, rev_published_in): uniform, per relation with 0 (none) and
// -1 (all), with replacement, all and none.
func HeteroCases() []HeteroCase {
	return []HeteroCase{
		{"uniform 3,2", sample.UniformRelFanouts([]int{3, 2}, 5), false},
		{"mixed with 0 and -1", sample.RelFanouts{{2, 0, -1, 3, 4}, {-1, 2, 1, 0, 2}}, false},
		{"mixed replace", sample.RelFanouts{{2, 5, -1, 3, 4}, {1, 2, 0, 2, 6}, {3, 3, 3, 3, 3}}, true},
		{"all", sample.UniformRelFanouts([]int{-1, -1}, 5), false},
		{"none", sample.UniformRelFanouts([]int{0, 0}, 5), false},
	}
}
