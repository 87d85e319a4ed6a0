package sampletest

import (
	"math/rand/v2"

	"mpignn/graph"
)

// FeatDim is the feature width of Dataset.
const FeatDim = 4

// Dataset builds a small directed graph of n >= 15 nodes that exercises the
// corner cases of sampling: nodes 0..9 have no in-edges (degree 0), nodes
// 10..14 are hubs with about 60 in-neighbors (more than any test fanout),
// the rest have 0..8 random in-neighbors. Its in-lists are canonical. Feature
// row v is (10v, 10v+1, ...), so a gathered row names its node; label v%5.
// Split "public": train = v%3==0, valid = v%3==1, test = v%3==2, except that
// nodes for which excluded returns true are in no split.
func Dataset(n int64, excluded func(v int64) bool) *graph.Dataset {
	rng := rand.New(rand.NewPCG(11, 12))
	var src, dst []int64
	for v := int64(10); v < n; v++ {
		k := rng.IntN(9)
		if v < 15 {
			k = 60
		}
		for range k {
			src = append(src, rng.Int64N(n))
			dst = append(dst, v)
		}
	}
	d := &graph.Dataset{
		Name:       "sampletest",
		NumNodes:   n,
		In:         graph.BuildInCSR(n, src, dst, graph.BuildOptions{DropSelfLoops: true, Dedup: true}),
		Feat:       &graph.Features{Dim: FeatDim, Data: make([]float32, n*FeatDim)},
		Labels:     make([]int32, n),
		NumClasses: 5,
	}
	s := &graph.Split{}
	for v := range n {
		d.Labels[v] = int32(v % 5)
		for j := range int64(FeatDim) {
			d.Feat.Data[v*FeatDim+j] = float32(10*v + j)
		}
		if excluded != nil && excluded(v) {
			continue
		}
		switch v % 3 {
		case 0:
			s.Train = append(s.Train, v)
		case 1:
			s.Valid = append(s.Valid, v)
		default:
			s.Test = append(s.Test, v)
		}
	}
	d.Splits = map[string]*graph.Split{"public": s}
	return d
}
