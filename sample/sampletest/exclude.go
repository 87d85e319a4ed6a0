package sampletest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/sample"
)

// canon is the key of the unordered pair {u,v} in the tests' plain maps.
func canon(u, v int64) [2]int64 {
	if u > v {
		u, v = v, u
	}
	return [2]int64{u, v}
}

// exclusion is one exclusion set in both forms: the pairs (as given, some
// reversed) for sample.NewEdgeSet, and a plain map of canonical pairs for
// the naive sampler.
type exclusion struct {
	src, dst []int64
	pairs    map[[2]int64]bool
}

func (e *exclusion) add(u, v int64) {
	e.src = append(e.src, u)
	e.dst = append(e.dst, v)
	if e.pairs == nil {
		e.pairs = map[[2]int64]bool{}
	}
	e.pairs[canon(u, v)] = true
}

// inEdges returns the exclusion of edges u -> v of the graph chosen by
// pick(v, i, u) (u is the i-th in-neighbor of v), for the nodes vs. Every
// other picked edge is given reversed, so that the sets hold both
// directions.
func inEdges(in *graph.CSR, vs []int64, pick func(v int64, i int, u int64) bool) *exclusion {
	e := &exclusion{pairs: map[[2]int64]bool{}}
	k := 0
	for _, v := range vs {
		for i, u := range in.Neighbors(v) {
			if !pick(v, i, u) {
				continue
			}
			if k%2 == 0 {
				e.add(u, v)
			} else {
				e.add(v, u)
			}
			k++
		}
	}
	return e
}

// conformExclude runs the conformance cases with exclusion sets: each
// subject's blocks must equal the naive sampler's with the same set. It
// leaves the subject without a set.
func conformExclude(t *testing.T, d *graph.Dataset, s Subject) Coverage {
	t.Helper()
	all := make([]int64, d.NumNodes)
	for v := range all {
		all[v] = int64(v)
	}
	seedEdges := inEdges(d.In, mixedSeeds(), func(int64, int, int64) bool { return true })
	// Pairs that are no edge, or outside the graph, change nothing.
	seedEdges.add(-5, 1<<40)
	seedEdges.add(3, 3)
	firstTwo := inEdges(d.In, mixedSeeds(), func(_ int64, i int, _ int64) bool { return i < 2 })
	everyThird := inEdges(d.In, all, func(v int64, i int, u int64) bool { return (v+int64(i))%3 == 0 })
	cases := []struct {
		name    string
		seeds   []int64
		fanouts []int
		key     sample.Key
		replace bool
		excl    *exclusion
	}{
		{"exclude all seed in-edges, fanout -1,3", mixedSeeds(), []int{-1, 3}, sample.Key{Seed: 7, Epoch: 1, Batch: 2}, false, seedEdges},
		{"exclude all seed in-edges, fanout 5,-1,4 replace", mixedSeeds(), []int{5, -1, 4}, sample.Key{Seed: 7, Epoch: 2, Batch: 5}, true, seedEdges},
		{"exclude two in-edges per seed, fanout 3,2", mixedSeeds(), []int{3, 2}, sample.Key{Seed: 8}, false, firstTwo},
		{"exclude a third of all edges, all nodes fanout 4,3", all, []int{4, 3}, sample.Key{Seed: 3}, false, everyThird},
		{"exclude a third of all edges, all nodes fanout 4,-1 replace", all, []int{4, -1}, sample.Key{Seed: 3}, true, everyThird},
		{"empty set", mixedSeeds(), []int{3, 2}, sample.Key{Seed: 7, Epoch: 2, Batch: 5}, false, &exclusion{}},
	}
	var cov Coverage
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := sampleExcluded(t, d, s, tc.seeds, tc.fanouts, tc.key, tc.replace, tc.excl)
			cov.add(c)
		})
	}
	return cov
}

// sampleExcluded samples the caller's share of the wanted seeds with the
// exclusion set and checks the blocks against the naive sampler and the
// graph. Sample is called before any check can stop the test (it may be
// collective), and the subject is left without a set.
func sampleExcluded(t *testing.T, d *graph.Dataset, s Subject, wanted []int64, fanouts []int, key sample.Key, replace bool, e *exclusion) Coverage {
	t.Helper()
	seedsG, seedsO := s.Own(wanted)
	s.Exclude(sample.NewEdgeSet(e.src, e.dst))
	got, err := s.Sampler.Sample(seedsG, seedsO, fanouts, key, replace)
	s.Exclude(nil)
	require.NoError(t, err)
	require.NoError(t, sample.ValidateBlocks(got))
	want, dropped := naiveBlocks(d.In, seedsO, fanouts, key, replace, e.pairs)
	requireSameBlocks(t, s, seedsO, got, want)
	c, err := checkEdges(d.In, got, fanouts, replace, e.pairs)
	require.NoError(t, err)
	c.Excluded = dropped
	return c
}

// SeedEdgeExclusion checks the property link prediction relies on: over
// many random steps, no seed edge of the step, in either direction, is ever
// in the step's blocks when the subject excludes the step's seed edges, and
// the blocks equal the naive sampler's with the same set. A step is built as
// the link loader builds one: a random batch of graph edges (the positives,
// some given reversed) and random negative destinations; its seeds are all
// their endpoints. The steps depend only on (step, graph), so every rank
// of a distributed subject builds the same ones (the set is global, the
// seeds are split by Own). The first layer takes all neighbors of the seeds
// in every other step, so excluded edges are certainly chosen and dropped;
// Coverage.Excluded counts them on this caller.
func SeedEdgeExclusion(t *testing.T, d *graph.Dataset, s Subject, steps int) Coverage {
	t.Helper()
	require.NotNil(t, s.Exclude, "the subject cannot exclude edges")
	var srcAll, dstAll []int64
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			srcAll = append(srcAll, u)
			dstAll = append(dstAll, v)
		}
	}
	var cov Coverage
	for step := range steps {
		rng := rand.New(rand.NewPCG(uint64(step), 77))
		e := &exclusion{pairs: map[[2]int64]bool{}}
		var seeds []int64
		seen := map[int64]bool{}
		addSeed := func(v int64) {
			if !seen[v] {
				seen[v] = true
				seeds = append(seeds, v)
			}
		}
		batch := 8 + rng.IntN(40)
		for range batch {
			j := rng.IntN(len(srcAll))
			u, v := srcAll[j], dstAll[j]
			if rng.IntN(2) == 0 {
				u, v = v, u // the loader may hold either direction
			}
			e.add(u, v)
			addSeed(u)
			addSeed(v)
			addSeed(rng.Int64N(d.NumNodes)) // a negative destination
		}
		fanouts := []int{3, 4}
		if step%2 == 0 {
			fanouts = []int{5, -1}
		}
		replace := step%3 == 1
		key := sample.Key{Seed: 21, Epoch: step / 10, Batch: step % 10}
		t.Run(fmt.Sprintf("step %d", step), func(t *testing.T) {
			cov.add(sampleExcluded(t, d, s, seeds, fanouts, key, replace, e))
		})
	}
	return cov
}
