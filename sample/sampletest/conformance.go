package sampletest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/sample"
)

// Subject is a Sampler under test over (a relabelling of) a dataset's graph.
type Subject struct {
	Sampler sample.Sampler
	// NumNodes is the bound of the subject's global ids.
	NumNodes int64
	// Own returns the caller's seeds among the wanted original ids, in the
	// order of wanted, as global ids of the subject's graph and original
	// ids. A single-process subject owns every node; a rank of a
	// distributed one only those of its partition.
	Own func(wanted []int64) (global, orig []int64)
	// Orig maps a global id of the subject's graph to its original id.
	Orig func(global int64) int64
	// Exclude, if set, makes the following Sample calls drop the chosen
	// edges in the set (nil: none), as sample.Reference.Exclude does; the
	// exclusion cases run only for subjects that have it.
	Exclude func(x *sample.EdgeSet)
}

// Coverage counts what Conformance checked on this caller, so a caller can
// make sure (summed over ranks, for a distributed subject) that the corner
// cases were reached at all.
type Coverage struct {
	Destinations int64 // block destinations checked
	Degree0      int64 // of which had no in-neighbor
	Capped       int64 // of which had more in-neighbors than the fanout
	Edges        int64 // sampled edges checked
	Excluded     int64 // chosen edges that the exclusion set dropped
}

func (c *Coverage) add(o Coverage) {
	c.Destinations += o.Destinations
	c.Degree0 += o.Degree0
	c.Capped += o.Capped
	c.Edges += o.Edges
	c.Excluded += o.Excluded
}

// mixedSeeds mixes degree-0 nodes (0..9), hubs (10..14) and ordinary ones,
// not sorted, so that seed order matters.
func mixedSeeds() []int64 { return []int64{3, 12, 17, 42, 10, 250, 399, 0, 123} }

// Conformance checks s against the unpartitioned dataset d, whose in-lists
// must be canonical and which must hold node 399 (Dataset(400, nil) does):
// for each case the blocks equal, node for node in original ids, those of an
// independent naive sampler built only on sample.ChoosePositions; they
// validate; global and original ids agree; every edge exists; each
// destination has exactly the fanout's number of edges (all of them for -1
// or fewer neighbors, none for degree 0); no neighbor repeats without
// replacement; an out-of-range seed is an error.
//
// Every case calls Sample exactly once, before any check can stop it, so a
// collective Sample runs the same number of times on every rank even when a
// check fails on one of them.
func Conformance(t *testing.T, d *graph.Dataset, s Subject) Coverage {
	t.Helper()
	require.NoError(t, sample.CheckCanonical(d.In), "conformance needs canonical in-lists")
	all := make([]int64, d.NumNodes)
	for v := range all {
		all[v] = int64(v)
	}
	cases := []struct {
		name    string
		seeds   []int64 // original ids wanted
		fanouts []int
		key     sample.Key
		replace bool
	}{
		{"mixed seeds fanout 3,2", mixedSeeds(), []int{3, 2}, sample.Key{Seed: 7, Epoch: 2, Batch: 5}, false},
		{"mixed seeds fanout 5,-1,4 replace", mixedSeeds(), []int{5, -1, 4}, sample.Key{Seed: 7, Epoch: 2, Batch: 5}, true},
		{"mixed seeds fanout -1,70 above hub degree", mixedSeeds(), []int{-1, 70}, sample.Key{Seed: 1}, false},
		{"degree-0 seeds only", []int64{9, 0, 5}, []int{4, 4}, sample.Key{Seed: 2}, false},
		{"all nodes fanout 4,3", all, []int{4, 3}, sample.Key{Seed: 3}, false},
		{"all nodes fanout 4,3 replace", all, []int{4, 3}, sample.Key{Seed: 3}, true},
		{"no seeds", nil, []int{2}, sample.Key{Seed: 4}, false},
	}
	var cov Coverage
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seedsG, seedsO := s.Own(tc.seeds)
			got, err := s.Sampler.Sample(seedsG, seedsO, tc.fanouts, tc.key, tc.replace)
			require.NoError(t, err)
			require.NoError(t, sample.ValidateBlocks(got))
			want, _ := naiveBlocks(d.In, seedsO, tc.fanouts, tc.key, tc.replace, nil)
			requireSameBlocks(t, s, seedsO, got, want)
			c, err := checkEdges(d.In, got, tc.fanouts, tc.replace, nil)
			require.NoError(t, err)
			cov.add(c)
		})
	}
	if s.Exclude != nil {
		cov.add(conformExclude(t, d, s))
	}
	// Every caller passes a bad seed (no rank is left alone in a collective
	// Sample), as the only seed, so none of them samples anything.
	t.Run("seed out of range", func(t *testing.T) {
		_, err := s.Sampler.Sample([]int64{s.NumNodes}, []int64{0}, []int{2}, sample.Key{}, false)
		assert.ErrorContains(t, err, "outside [0,")
	})
	return cov
}

// requireSameBlocks requires the subject's blocks to equal the naive ones,
// node for node in original ids, with global ids that map to them, and the
// last block's destinations to be the seeds.
func requireSameBlocks(t *testing.T, s Subject, seedsO []int64, got []sample.Block, want []naiveBlock) {
	t.Helper()
	require.Len(t, got, len(want))
	for l := range got {
		g, w := &got[l], &want[l]
		require.Equal(t, w.numDst, g.NumDst, "layer %d: destinations", l)
		// slices.Equal: an empty block may hold nil or empty slices.
		require.True(t, slices.Equal(w.orig, g.Orig), "layer %d: nodes (original ids) %v, want %v", l, g.Orig, w.orig)
		require.True(t, slices.Equal(w.indptr, g.Indptr), "layer %d: indptr %v, want %v", l, g.Indptr, w.indptr)
		require.True(t, slices.Equal(w.indices, g.Indices), "layer %d: indices %v, want %v", l, g.Indices, w.indices)
		for i, v := range g.Nodes {
			require.Equal(t, g.Orig[i], s.Orig(v), "layer %d node %d: global id %d", l, i, v)
		}
	}
	if last := len(got) - 1; last >= 0 {
		require.True(t, slices.Equal(seedsO, got[last].Orig[:got[last].NumDst]), "the last block's destinations are not the seeds")
	}
}

// checkEdges checks blocks against the graph itself (in original ids).
//
// With an exclusion set (canonical pairs, see pairsOf) no sampled edge may be
// in it, and a destination has at most the fanout's number of edges, exactly
// its non-excluded neighbors when the fanout takes them all.
func checkEdges(in *graph.CSR, blocks []sample.Block, fanouts []int, replace bool, excl map[[2]int64]bool) (Coverage, error) {
	var c Coverage
	L := len(blocks)
	for l := range blocks {
		b := &blocks[l]
		fan := fanouts[L-1-l]
		for i := range b.NumDst {
			v := b.Orig[i]
			nb := in.Neighbors(v)
			srcs := b.Indices[b.Indptr[i]:b.Indptr[i+1]]
			seen := map[int64]bool{}
			for _, j := range srcs {
				u := b.Orig[j]
				if _, ok := slices.BinarySearch(nb, u); !ok {
					return c, fmt.Errorf("layer %d: sampled edge %d -> %d is not in the graph", l, u, v)
				}
				if excl[canon(u, v)] {
					return c, fmt.Errorf("layer %d: excluded edge %d -> %d was sampled", l, u, v)
				}
				if seen[u] && !replace {
					return c, fmt.Errorf("layer %d: node %d sampled neighbor %d twice without replacement", l, v, u)
				}
				seen[u] = true
			}
			want := len(nb)
			switch {
			case len(nb) == 0:
				want = 0
			case fan < 0:
			case replace:
				want = fan
			default:
				want = min(fan, len(nb))
			}
			all := fan < 0 || (!replace && fan >= len(nb))
			if excl != nil {
				// Excluded edges are dropped after the choice: a capped row
				// may lose some, a row that takes all loses exactly those.
				if all {
					for _, u := range nb {
						if excl[canon(u, v)] {
							want--
						}
					}
				} else if len(srcs) <= want {
					want = len(srcs)
				}
			}
			if len(srcs) != want {
				return c, fmt.Errorf("layer %d: node %d (degree %d, fanout %d, replace %v) has %d sampled edges, want %d",
					l, v, len(nb), fan, replace, len(srcs), want)
			}
			c.Destinations++
			c.Edges += int64(len(srcs))
			if len(nb) == 0 {
				c.Degree0++
			}
			if fan >= 0 && len(nb) > fan {
				c.Capped++
			}
		}
	}
	return c, nil
}

// naiveBlock is a block in original ids only.
type naiveBlock struct {
	numDst  int
	orig    []int64
	indptr  []int32
	indices []int32
}

// naiveBlocks is the sampling algorithm written out plainly on the
// unpartitioned graph, sharing only sample.ChoosePositions (the definition
// of which neighbors a key picks) with the samplers under test: a map for
// deduplication instead of the BlockBuilder, no scratch reuse, and a map of
// canonical pairs instead of sample.EdgeSet for the exclusion (nil: none).
// It also returns how many chosen edges the exclusion dropped.
func naiveBlocks(in *graph.CSR, seeds []int64, fanouts []int, base sample.Key, replace bool, excl map[[2]int64]bool) ([]naiveBlock, int64) {
	var dropped int64
	L := len(fanouts)
	out := make([]naiveBlock, L)
	dst := slices.Clone(seeds)
	for l := L - 1; l >= 0; l-- {
		b := naiveBlock{numDst: len(dst), orig: slices.Clone(dst), indptr: []int32{0}}
		local := map[int64]int32{}
		for i, v := range dst {
			local[v] = int32(i)
		}
		k := base
		k.Layer = l
		for _, v := range dst {
			nb := in.Neighbors(v)
			k.Node = v
			for _, p := range sample.ChoosePositions(k, int64(len(nb)), fanouts[L-1-l], replace, nil) {
				u := nb[p]
				if excl[canon(u, v)] {
					dropped++
					continue
				}
				j, ok := local[u]
				if !ok {
					j = int32(len(b.orig))
					local[u] = j
					b.orig = append(b.orig, u)
				}
				b.indices = append(b.indices, j)
			}
			b.indptr = append(b.indptr, int32(len(b.indices)))
		}
		out[l] = b
		dst = b.orig
	}
	return out, dropped
}
