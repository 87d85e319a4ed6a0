package dsample

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// heteroLinkRel is the relation the heterogeneous link tests predict.
const heteroLinkRel = "author___writes___paper"

// newHeteroLinkFixture partitions sampletest.HeteroDataset world-size ways
// with a random link split on heteroLinkRel (rank 0 writes, every rank
// loads every part).
func newHeteroLinkFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	lo := partition.LinkOptions{Split: "random:0.7,0.1,0.2", Relation: heteroLinkRel, NegsPerPos: 3, Pool: 20}
	return writeHeteroFixture(t, c, sampletest.HeteroDataset(), nil,
		partition.Options{Method: partition.MethodRandom, Seed: 4, Undirected: true, Link: &lo}).fixture
}

// idTypeRows is a TypedInputs reader whose row of a node is (new id, type):
// the tests see which rows land where, and for which type.
func idTypeRows(schema *graph.Schema, f *fixture) TypedInputs {
	return func(t int, nodes []int64, dst []float32, st *GatherStats) ([]float32, error) {
		for _, g := range nodes {
			if got := schema.TypeOf(f.origOf(g)); got != t {
				return nil, fmt.Errorf("node %d of type %d read as type %d", g, got, t)
			}
			dst = append(dst, float32(g), float32(t))
		}
		return dst, nil
	}
}

// EmbedHetero makes origRows a TypedEmbedder: the row of a seed is its
// original id, then the number of input types it was given.
func (e origRows) EmbedHetero(blocks []sample.Block, xs [][]float32) ([]float32, error) {
	last := blocks[len(blocks)-1]
	out := make([]float32, last.NumDst*e.w)
	for i := range last.NumDst {
		out[i*e.w] = float32(last.Orig[i])
		out[i*e.w+1] = float32(len(xs))
	}
	return out, nil
}

// TestHeteroLinkLoader checks heterogeneous link batches on every
// transport: pair counts equal the global batch, positives go author ->
// paper, negatives are papers that the author did not write in the
// training graph (NegStrict), no block of any step holds a seed pair in any
// relation or direction, blocks are typed, and typed inputs match
// Blocks[0]'s nodes type by type.
func TestHeteroLinkLoader(t *testing.T) {
	f := newHeteroLinkFixture(t)
	schema, err := f.part.Meta.Hetero.Schema()
	require.NoError(t, err)
	r := schema.RelIndex(heteroLinkRel)
	author, paper := schema.SrcType(r), schema.DstType(r)
	of := func(ty int, o int64) bool { return o >= schema.NodeOrig[ty] && o < schema.NodeOrig[ty+1] }
	// wrote[{a,p}]: a -writes-> p in the training graph (all parts).
	R := int64(schema.NumRels())
	wrote := map[[2]int64]bool{}
	for _, p := range f.parts {
		for i, o := range p.Orig {
			row := int64(i)*R + int64(r)
			for _, u := range p.IndicesOrig[p.Indptr[row]:p.Indptr[row+1]] {
				wrote[[2]int64{u, o}] = true
			}
		}
	}
	ref := sample.HeteroCSR{D: trainingHetero(f, schema)}
	for _, name := range transports() {
		t.Run(name, func(t *testing.T) {
			s := f.openStore(t, name, 0)
			l, err := NewLinkLoader(s, LinkLoaderOptions{Fanouts: []int{-1, 3}, Batch: 6, Seed: 3, NegRatio: 2, NegStrict: true})
			require.NoError(t, err)
			defer l.Close()
			l.SetTypedInputs(idTypeRows(schema, f))
			steps, err := l.Steps(SplitTrain, 1)
			require.NoError(t, err)
			require.Greater(t, steps, 1)
			var b sample.Batch
			excluded := int64(0)
			for step := range steps {
				require.NoError(t, l.Batch(SplitTrain, 1, step, &b))
				requireGlobalPairs(t, f.c, &b, step)
				var pos []int64
				for i, y := range b.PairLabels {
					u, v := b.SeedsOrig[b.Pairs[2*i]], b.SeedsOrig[b.Pairs[2*i+1]]
					assert.True(t, of(author, u) && of(paper, v), "step %d: pair (%d,%d) is not author -> paper", step, u, v)
					if y == 1 {
						pos = append(pos, u, v)
						continue
					}
					assert.False(t, wrote[[2]int64{u, v}], "step %d: strict negative (%d,%d) is a training edge", step, u, v)
				}
				set := allPairs(t, f.c, pos)
				for _, blk := range b.Blocks {
					assert.Len(t, blk.Etype, len(blk.Indices), "step %d: untyped block", step)
				}
				assert.Zero(t, leakedEdges(b.Blocks, set), "step %d: seed edges sampled", step)
				excluded += b.Stats.Sample.Excluded
				// The reference's blocks over the training graph with the
				// same exclusion set: rank-count independent by key.
				hr := sample.HeteroReference{G: ref, Exclude: set}
				want, err := hr.SampleRel(b.SeedsOrig, b.SeedsOrig, l.Options().RelFanouts, sample.Key{Seed: 3, Epoch: 1, Batch: step}, false)
				require.NoError(t, err)
				assert.True(t, sameBlocks(t, f.c.Rank(), f.origOf, b.Blocks, want), "step %d", step)
				// Typed inputs: every node of Blocks[0] once, under its type.
				require.Len(t, b.XT, schema.NumTypes())
				seen := 0
				for ty, nodes := range b.XTNodes {
					require.Len(t, b.XT[ty], 2*len(nodes))
					for i, g := range nodes {
						assert.Equal(t, []float32{float32(g), float32(ty)}, b.XT[ty][2*i:2*i+2])
					}
					seen += len(nodes)
				}
				assert.Equal(t, len(b.Blocks[0].Nodes), seen, "step %d: typed inputs cover Blocks[0]", step)
			}
			total, err := collectives.AllreduceScalar(f.c, excluded, collectives.Sum)
			require.NoError(t, err)
			assert.Positive(t, total, "no edge was excluded: the test would be vacuous")

			// Evaluation: every author and paper embedded, venues not, on
			// the training graph and on training plus valid edges.
			ptr, ind, indOrig, err := f.part.MergedValidAdjacency()
			require.NoError(t, err)
			vg, err := l.OpenGraph(ptr, ind, indOrig)
			require.NoError(t, err)
			defer vg.Close()
			for _, g := range []*GraphStore{nil, vg} {
				emb, err := l.Embed(origRows{w: 2}, 2, 0, g)
				require.NoError(t, err)
				for v := f.part.Lo; v < f.part.Hi; v++ {
					o := f.origOf(v)
					want := []float32{float32(o), float32(schema.NumTypes())}
					if !of(author, o) && !of(paper, o) {
						want = []float32{0, 0}
					}
					assert.Equal(t, want, emb.Row(v), "node %d (original %d)", v, o)
				}
				require.NoError(t, emb.Free())
			}
			// A model without typed embedding is refused.
			_, err = l.Embed(homogeneousOnly{}, 2, 0, nil)
			assert.ErrorContains(t, err, "EmbedHetero")
		})
	}
}

// TestHeteroLinkLoaderNegatives: without NegStrict the negatives are the
// keyed draws over the paper type, identical for every number of ranks.
func TestHeteroLinkLoaderNegatives(t *testing.T) {
	f := newHeteroLinkFixture(t)
	schema, err := f.part.Meta.Hetero.Schema()
	require.NoError(t, err)
	paper := schema.DstType(schema.RelIndex(heteroLinkRel))
	s := f.openStore(t, "rma", 0)
	l, err := NewLinkLoader(s, LinkLoaderOptions{Fanouts: []int{2}, Batch: 4, Seed: 8, NegRatio: 3})
	require.NoError(t, err)
	defer l.Close()
	l.SetTypedInputs(idTypeRows(schema, f))
	tr := &f.part.Link.Train
	var b sample.Batch
	require.NoError(t, l.Batch(SplitTrain, 2, 0, &b))
	locals, err := l.stepEdges(2, 0)
	require.NoError(t, err)
	for e, i := range locals {
		for j := range 3 {
			w := b.SeedsOrig[b.Pairs[2*(e*4+1+j)+1]]
			assert.Equal(t, schema.NodeOrig[paper]+NegativeOrig(8, 2, tr.ID[i], j, 0, schema.Count(paper)), w)
		}
	}
	// Without a typed reader, a heterogeneous batch is an error on every rank.
	l.SetTypedInputs(nil)
	assert.ErrorContains(t, l.Batch(SplitTrain, 2, 0, &b), "SetTypedInputs")
}

// homogeneousOnly is an Embedder without EmbedHetero.
type homogeneousOnly struct{}

func (homogeneousOnly) Embed([]sample.Block, []float32) ([]float32, error) { return nil, nil }

// trainingHetero is the partitioned training graph in original ids (every
// part's relation rows), for the reference sampler.
func trainingHetero(f *fixture, schema *graph.Schema) *graph.HeteroDataset {
	n, R := schema.NumNodes(), int64(schema.NumRels())
	rows := make([][]int64, n*R)
	for _, p := range f.parts {
		for i, o := range p.Orig {
			for r := range R {
				row := int64(i)*R + r
				rows[o*R+r] = p.IndicesOrig[p.Indptr[row]:p.Indptr[row+1]]
			}
		}
	}
	in := &graph.CSR{Indptr: make([]int64, 1, n*R+1)}
	for _, row := range rows {
		in.Indices = append(in.Indices, row...)
		in.Indptr = append(in.Indptr, int64(len(in.Indices)))
	}
	return &graph.HeteroDataset{Schema: schema, In: in}
}
