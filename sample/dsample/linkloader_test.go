package dsample

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample"
)

// newLinkFixture is the test graph partitioned world-size ways with a
// random link split.
func newLinkFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, partition.Options{Method: partition.MethodRandom, Seed: 5,
		Link: &partition.LinkOptions{Split: "random:0.7,0.1,0.2", NegsPerPos: 5, Pool: 50}}, false)
}

// trainAdjacent reports whether u and v (original ids) share an edge of
// the training graph, from every part's adjacency.
func (f *fixture) trainAdjacent() func(u, v int64) bool {
	adj := map[[2]int64]bool{}
	for _, p := range f.parts {
		for i, o := range p.Orig {
			for _, s := range p.IndicesOrig[p.Indptr[i]:p.Indptr[i+1]] {
				adj[[2]int64{s, o}] = true
			}
		}
	}
	return func(u, v int64) bool { return adj[[2]int64{u, v}] || adj[[2]int64{v, u}] }
}

// TestLinkLoaderBatches checks the link loader's batches on every
// transport: pair counts agree with the global batch, strict negatives are
// never the source or its training neighbour, every step's positive edge
// (all ranks') is absent from the blocks in both directions, and the
// sampled blocks are the reference's with the same exclusion set.
func TestLinkLoaderBatches(t *testing.T) {
	f := newLinkFixture(t)
	adjacent := f.trainAdjacent()
	for _, name := range transports() {
		t.Run(name, func(t *testing.T) {
			s := f.openStore(t, name, 0)
			l, err := NewLinkLoader(s, LinkLoaderOptions{Fanouts: []int{-1, 3}, Batch: 7, Seed: 3, NegRatio: 2, NegStrict: true})
			require.NoError(t, err)
			defer l.Close()
			steps, err := l.Steps(SplitTrain, 1)
			require.NoError(t, err)
			require.Positive(t, steps)
			var b sample.Batch
			excluded := int64(0)
			for step := range steps {
				require.NoError(t, l.Batch(SplitTrain, 1, step, &b))
				requireGlobalPairs(t, f.c, &b, step)
				var pos []int64
				for i, y := range b.PairLabels {
					u, v := b.SeedsOrig[b.Pairs[2*i]], b.SeedsOrig[b.Pairs[2*i+1]]
					if y == 1 {
						pos = append(pos, u, v)
						continue
					}
					assert.NotEqual(t, u, v, "step %d: negative equals its source", step)
					assert.False(t, adjacent(u, v), "step %d: strict negative (%d,%d) is a training edge", step, u, v)
				}
				set := allPairs(t, f.c, pos)
				// Per-rank checks use assert, not require: the other ranks'
				// next collectives must still be matched.
				assert.Zero(t, leakedEdges(b.Blocks, set), "step %d: seed edges sampled", step)
				excluded += b.Stats.Sample.Excluded
				// The same blocks as the single-process reference.
				ref := sample.Reference{G: sampleGraph(f), Exclude: set}
				want, err := ref.Sample(b.SeedsOrig, b.SeedsOrig, []int{-1, 3}, sample.Key{Seed: 3, Epoch: 1, Batch: step}, false)
				require.NoError(t, err)
				assert.True(t, checkSameBlocks(t, f, b.Blocks, want), "step %d", step)
			}
			total, err := collectives.AllreduceScalar(f.c, excluded, collectives.Sum)
			require.NoError(t, err)
			// The first hop takes every neighbour of the seeds, so every
			// step's positive edges are chosen and must be dropped.
			assert.Positive(t, total, "no edge was excluded: the test would be vacuous")
		})
	}
}

// TestLinkLoaderGlobalBatch: with GlobalBatch the union of the ranks'
// positives of step k is step k of the one-process epoch over the
// canonical edge ids with that batch, whatever the rank count (13 divides
// none of 2..4), the pairs add up to the global count, and the evaluation
// batch defaults to 4 global batches, split over the ranks.
func TestLinkLoaderGlobalBatch(t *testing.T) {
	f := newLinkFixture(t)
	const G = 13
	var ids []int64
	for _, p := range f.parts {
		ids = append(ids, p.Link.Train.ID...)
	}
	s := f.openStore(t, transports()[0], 0)
	l, err := NewLinkLoader(s, LinkLoaderOptions{Fanouts: []int{2}, GlobalBatch: G, Seed: 3, NegRatio: 2})
	require.NoError(t, err)
	defer l.Close()
	P := f.c.Size()
	assert.Equal(t, G, l.GlobalBatch())
	assert.Equal(t, (4*G+P-1)/P, l.Options().EvalBatch)
	for epoch := range 2 {
		want, err := sample.EpochBatches(3, epoch, ids, G)
		require.NoError(t, err)
		steps, err := l.Steps(SplitTrain, epoch)
		require.NoError(t, err)
		require.Len(t, want, steps)
		var b sample.Batch
		for step := range steps {
			require.NoError(t, l.Batch(SplitTrain, epoch, step, &b))
			requireGlobalPairs(t, f.c, &b, step)
			assert.Equal(t, len(want[step])*3, b.GlobalSeeds, "epoch %d step %d: pairs", epoch, step)
			locals, err := l.stepEdges(epoch, step)
			require.NoError(t, err)
			mine := make([]int64, len(locals))
			for i, j := range locals {
				mine[i] = f.part.Link.Train.ID[j]
			}
			got, _, err := collectives.Allgatherv(f.c, mine)
			require.NoError(t, err)
			assert.ElementsMatch(t, want[step], got, "epoch %d step %d: positives", epoch, step)
		}
	}
	_, err = NewLinkLoader(s, LinkLoaderOptions{Fanouts: []int{2}, Batch: 4, GlobalBatch: G, Seed: 3, NegRatio: 2})
	assert.ErrorContains(t, err, "Batch 4 and GlobalBatch 13 exclude each other", "the rule of LoaderOptions, named by field")
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Batch", fe.Field)
}

// sampleGraph is the training graph (the partition's adjacency) in original
// ids, for the reference sampler.
func sampleGraph(f *fixture) sample.Graph {
	n := f.parts[0].Meta.NumNodes
	rows := make([][]int64, n)
	for _, p := range f.parts {
		for i, o := range p.Orig {
			rows[o] = p.IndicesOrig[p.Indptr[i]:p.Indptr[i+1]]
		}
	}
	return origGraph(rows)
}

// origGraph is a Graph over original ids (global id == original id).
type origGraph [][]int64

func (g origGraph) NumNodes() int64                       { return int64(len(g)) }
func (g origGraph) InNeighbors(v int64) (glob, o []int64) { return g[v], g[v] }

// requireGlobalPairs checks that the ranks' pairs of a link batch add up
// to its global batch. It is collective.
func requireGlobalPairs(t *testing.T, c *collectives.Comm, b *sample.Batch, step int) {
	t.Helper()
	pairs := []float64{float64(len(b.PairLabels))}
	require.NoError(t, collectives.Allreduce(c, pairs, collectives.Sum))
	require.EqualValues(t, b.GlobalSeeds, pairs[0], "step %d: pairs over all ranks", step)
}

// allPairs returns the set of every rank's pairs (pos: {u, v} flattened,
// original ids). It is collective.
func allPairs(t *testing.T, c *collectives.Comm, pos []int64) *sample.EdgeSet {
	t.Helper()
	all, _, err := collectives.Allgatherv(c, pos)
	require.NoError(t, err)
	return sample.NewEdgeSet(everyOther(all, 0), everyOther(all, 1))
}

// leakedEdges counts the edges of blocks whose (source, destination) pair
// of original ids is in set.
func leakedEdges(blocks []sample.Block, set *sample.EdgeSet) int {
	leaked := 0
	for _, blk := range blocks {
		for d := range blk.NumDst {
			for _, j := range blk.Indices[blk.Indptr[d]:blk.Indptr[d+1]] {
				if set.Has(blk.Orig[d], blk.Orig[j]) {
					leaked++
				}
			}
		}
	}
	return leaked
}

func everyOther(xs []int64, off int) []int64 {
	out := make([]int64, 0, len(xs)/2)
	for i := off; i < len(xs); i += 2 {
		out = append(out, xs[i])
	}
	return out
}

// origRows is an Embedder whose row for a node is (original id, 1, ...): a
// way to see which rows land where.
type origRows struct{ w int }

func (e origRows) Embed(blocks []sample.Block, x []float32) ([]float32, error) {
	last := blocks[len(blocks)-1]
	out := make([]float32, last.NumDst*e.w)
	for i := range last.NumDst {
		out[i*e.w] = float32(last.Orig[i])
		out[i*e.w+1] = 1
	}
	return out, nil
}

// TestEmbedAndIDMap: Store.Embed writes every owned node's row (each node
// embedded exactly once), Fetch reads any row, and IDMap maps every
// original id to its new id, on every transport.
func TestEmbedAndIDMap(t *testing.T) {
	f := newLinkFixture(t)
	n := f.parts[0].Meta.NumNodes
	for _, name := range transports() {
		t.Run(name, func(t *testing.T) {
			s := f.openStore(t, name, 0)
			m, err := OpenIDMap(s)
			require.NoError(t, err)
			defer m.Close()
			// Each rank maps a different slice, so requests cross ranks.
			var orig []int64
			for o := int64(f.c.Rank()); o < n; o += int64(f.c.Size()) {
				orig = append(orig, o)
			}
			got, err := m.Map(orig)
			require.NoError(t, err)
			for i, o := range orig {
				assert.Equal(t, o, f.origOf(got[i]), "original id %d", o)
			}
			_, err = m.Map([]int64{n})
			require.ErrorContains(t, err, fmt.Sprintf("outside [0,%d)", n))

			emb, err := s.Embed(origRows{w: 3}, EmbedOptions{Width: 3, Seed: 1, Fanouts: []int{2, 2}, Batch: 9})
			require.NoError(t, err)
			defer emb.Free()
			for g := f.part.Lo; g < f.part.Hi; g++ {
				require.Equal(t, []float32{float32(f.origOf(g)), 1, 0}, emb.Row(g))
			}
			// A global batch (not divisible by 2..4) embeds every node too.
			embG, err := s.Embed(origRows{w: 3}, EmbedOptions{Width: 3, Seed: 1, Fanouts: []int{2, 2}, GlobalBatch: 25})
			require.NoError(t, err)
			defer embG.Free()
			for g := f.part.Lo; g < f.part.Hi; g++ {
				require.Equal(t, []float32{float32(f.origOf(g)), 1, 0}, embG.Row(g))
			}
			all := make([]int64, n)
			for g := range all {
				all[g] = int64(g)
			}
			rows := make([]float32, 3*n)
			require.NoError(t, emb.Fetch(all, rows))
			for g := range n {
				require.Equal(t, float32(f.origOf(g)), rows[3*g], "row of node %d", g)
			}
			// A bad width is refused on every rank.
			_, err = s.Embed(origRows{w: 3}, EmbedOptions{Width: 0, Fanouts: []int{2}, Batch: 9})
			require.Error(t, err)
		})
	}
}
