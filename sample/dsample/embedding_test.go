package dsample

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/train"
)

// train's optimizers, as its factory returns them, are what the embedding
// table needs of an optimizer.
var _ SparseOptimizer = train.SparseOptimizer(nil)

var heteroTypes = []string{"author", "paper", "venue"}

const heteroFeatDim = 4

// heteroFeat is paper i's feature k.
func heteroFeat(i int64, k int) float32 { return float32(i)*10 + float32(k) }

// newEmbedFixture is newEmbedFixtureOn the world.
func newEmbedFixture(t *testing.T, counts []int64) *heteroFixture {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	return newEmbedFixtureOn(t, c, counts)
}

// newEmbedFixtureOn partitions, with the real writer, a graph of counts[t]
// nodes of type heteroTypes[t] (author and paper at least, the missing
// ones empty) and no edges: author featureless, paper with heteroFeat,
// venue featureless and, when P > 2, none on part 1 (a type with no rows
// on a part). Owners are pseudo-random per node.
func newEmbedFixtureOn(tb testing.TB, c *collectives.Comm, counts []int64) *heteroFixture {
	tb.Helper()
	P := c.Size()
	counts = append(slices.Clone(counts), make([]int64, max(0, 2-len(counts)))...)
	T := len(counts)
	types := map[string]int64{}
	for u, n := range counts {
		types[heteroTypes[u]] = n
	}
	s, err := graph.NewSchema(types, []graph.Relation{{Src: "author", Name: "writes", Dst: "paper"}})
	require.NoError(tb, err)
	paper := &graph.Features{Dim: heteroFeatDim}
	for i := range counts[1] {
		for k := range heteroFeatDim {
			paper.Data = append(paper.Data, heteroFeat(i, k))
		}
	}
	d := &graph.HeteroDataset{Name: "embed", Schema: s, In: &graph.CSR{Indptr: make([]int64, s.NumNodes()*int64(s.NumRels())+1)},
		Feat: map[string]*graph.Features{"paper": paper}}
	assign := make([]int32, 0, s.NumNodes())
	for u := range T {
		for i := range counts[u] {
			p := int(sample.Hash64(7, uint64(u), uint64(i)) % uint64(P))
			if u == 2 && P > 2 && p == 1 {
				p = 0
			}
			assign = append(assign, int32(p))
		}
	}
	return writeHeteroFixture(tb, c, d, assign, partition.Options{})
}

func TestTypedGather(t *testing.T) {
	f := newEmbedFixture(t, []int64{30, 50, 7})
	for _, tr := range []collectives.Transport{collectives.TransportRMA, collectives.TransportAlltoallv} {
		t.Run(tr.String(), func(t *testing.T) {
			if tr == collectives.TransportRMA {
				if r, _ := collectives.ResolveTransport(f.c, collectives.TransportAuto); r != collectives.TransportRMA {
					t.Skip("one-sided MPI unavailable")
				}
			}
			fs, err := OpenFeatureStore(f.c, f.part, FeatureOptions{Transport: tr})
			require.NoError(t, err)
			defer fs.Close()
			key := FeatureKey{NodeType: "paper", Name: FeatName}
			assert.Equal(t, []FeatureKey{key}, fs.Keys())
			rng := rand.New(rand.NewPCG(uint64(f.c.Rank()), 3))
			ids := make([]int64, 60)
			var gids []int64
			for j := range ids {
				ids[j] = rng.Int64N(50)
				if j%7 == 6 {
					ids[j] = ids[j-1]
				}
				gids = append(gids, f.gid[1][ids[j]])
			}
			got, err := fs.Gather(key, gids, nil, nil)
			require.NoError(t, err)
			for j, i := range ids {
				for k := range heteroFeatDim {
					assert.Equal(t, heteroFeat(i, k), got[j*heteroFeatDim+k], "paper %d col %d", i, k)
				}
			}
			// An author id in a paper gather fails on the rank that asks,
			// after the collective fetch.
			_, err = fs.Gather(key, []int64{gids[0], f.gid[0][3]}, nil, nil)
			assert.ErrorContains(t, err, `not of node type "paper"`)
		})
	}
}

// embedContribution is what rank q pushes at step s: gradients of authors
// (type 0) by type-local original id, with repeats; nothing on rank 1 when
// P > 2.
func embedContribution(q, P, s, dim int, n int64) ([]int64, []float32) {
	if P > 2 && q == 1 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(uint64(q), uint64(s)))
	ids := make([]int64, 25)
	g := make([]float32, len(ids)*dim)
	for j := range ids {
		ids[j] = rng.Int64N(n)
		if j%4 == 3 {
			ids[j] = ids[j-2]
		}
		for k := range dim {
			g[j*dim+k] = float32(rng.NormFloat64())
		}
	}
	return ids, g
}

// serialEmbedding runs the steps on one table indexed by type-local
// original id, combining gradients as Push documents: per rank in input
// order, then over ranks in rank order.
func serialEmbedding(t *testing.T, opt string, seed uint64, P, dim int, n int64, steps int) []float32 {
	params := make([]float32, n*int64(dim))
	for i := range n {
		for k := range dim {
			params[i*int64(dim)+int64(k)] = EmbeddingInit(seed, 0, i, k, dim)
		}
	}
	o, err := train.NewSparseOptimizer(opt, params, dim, 0.05)
	require.NoError(t, err)
	for s := range steps {
		sum := make([]float32, n*int64(dim))
		touched := make([]bool, n)
		for q := range P {
			ids, g := embedContribution(q, P, s, dim, n)
			part := make([]float32, n*int64(dim))
			for j, i := range ids {
				touched[i] = true
				for k := range dim {
					part[i*int64(dim)+int64(k)] += g[j*dim+k]
				}
			}
			for i := range sum {
				sum[i] += part[i]
			}
		}
		var rows []int64
		var grads []float32
		for i := range n {
			if touched[i] {
				rows = append(rows, i)
				grads = append(grads, sum[i*int64(dim):(i+1)*int64(dim)]...)
			}
		}
		require.NoError(t, o.Step(rows, grads))
	}
	return params
}

func (f *heteroFixture) openEmbedding(t *testing.T, tr collectives.Transport, method PushMethod, opt string, dim int) *EmbeddingTable {
	t.Helper()
	e, err := OpenEmbeddingTable(f.c, f.part, EmbeddingOptions{NodeType: "author", Dim: dim, Seed: 11, Transport: tr, Method: method,
		NewOptimizer: func(p []float32, d int) (SparseOptimizer, error) { return train.NewSparseOptimizer(opt, p, d, 0.05) }})
	require.NoError(t, err)
	return e
}

// embedCases are the transport/method pairs available here, in a fixed order.
func embedCases(t *testing.T, c *collectives.Comm) []struct {
	tr     collectives.Transport
	method PushMethod
} {
	cases := []struct {
		tr     collectives.Transport
		method PushMethod
	}{{collectives.TransportAlltoallv, PushAlltoallv}}
	if r, _ := collectives.ResolveTransport(c, collectives.TransportAuto); r == collectives.TransportRMA {
		cases = append(cases, struct {
			tr     collectives.Transport
			method PushMethod
		}{collectives.TransportRMA, PushAlltoallv}, struct {
			tr     collectives.Transport
			method PushMethod
		}{collectives.TransportRMA, PushAccumulate})
	} else {
		t.Log("one-sided MPI unavailable: alltoallv only")
	}
	return cases
}

func TestEmbeddingPushMatchesSerial(t *testing.T) {
	const dim, steps = 6, 4
	counts := []int64{30, 50, 7}
	f := newEmbedFixture(t, counts)
	P := f.c.Size()
	for _, cs := range embedCases(t, f.c) {
		for _, opt := range []string{"adam", "adagrad"} {
			t.Run(fmt.Sprintf("%v/%v/%s", cs.tr, cs.method, opt), func(t *testing.T) {
				e := f.openEmbedding(t, cs.tr, cs.method, opt, dim)
				defer e.Close()
				all := f.gid[0]
				init, err := e.Fetch(all, nil)
				require.NoError(t, err)
				want0 := serialEmbedding(t, opt, 11, P, dim, counts[0], 0)
				assert.Equal(t, want0, init, "initial table")
				for s := range steps {
					ids, g := embedContribution(f.c.Rank(), P, s, dim, counts[0])
					gids := make([]int64, len(ids))
					for j, i := range ids {
						gids[j] = all[i]
					}
					require.NoError(t, e.Push(gids, g))
				}
				got, err := e.Fetch(all, nil)
				require.NoError(t, err)
				want := serialEmbedding(t, opt, 11, P, dim, counts[0], steps)
				if cs.method == PushAlltoallv {
					assert.Equal(t, want, got)
				} else {
					assert.InDeltaSlice(t, want, got, 1e-6)
				}
			})
		}
	}
}

func TestEmbeddingResume(t *testing.T) {
	const dim, k = 5, 3
	counts := []int64{30, 50, 7}
	f := newEmbedFixture(t, counts)
	P := f.c.Size()
	push := func(e *EmbeddingTable, s int) {
		ids, g := embedContribution(f.c.Rank(), P, s, dim, counts[0])
		gids := make([]int64, len(ids))
		for j, i := range ids {
			gids[j] = f.gid[0][i]
		}
		require.NoError(t, e.Push(gids, g))
	}
	for _, opt := range []string{"adam", "adagrad"} {
		t.Run(opt, func(t *testing.T) {
			straight := f.openEmbedding(t, collectives.TransportAlltoallv, PushAlltoallv, opt, dim)
			defer straight.Close()
			first := f.openEmbedding(t, collectives.TransportAlltoallv, PushAlltoallv, opt, dim)
			defer first.Close()
			for s := range 2 * k {
				push(straight, s)
				if s < k {
					push(first, s)
				}
			}
			blob, err := first.Export()
			require.NoError(t, err)
			resumed := f.openEmbedding(t, collectives.TransportAlltoallv, PushAlltoallv, opt, dim)
			defer resumed.Close()
			require.NoError(t, resumed.Import(blob))
			for s := k; s < 2*k; s++ {
				push(resumed, s)
			}
			a, err := straight.Fetch(f.gid[0], nil)
			require.NoError(t, err)
			b, err := resumed.Fetch(f.gid[0], nil)
			require.NoError(t, err)
			assert.Equal(t, a, b)
			sa, err := straight.Export()
			require.NoError(t, err)
			sb, err := resumed.Export()
			require.NoError(t, err)
			assert.Equal(t, sa, sb, "checkpoints of the straight and resumed runs")
			if f.c.Rank() == 0 {
				assert.NotEmpty(t, sa)
			}
		})
	}
}

func TestEmbeddingRejects(t *testing.T) {
	f := newEmbedFixture(t, []int64{30, 50, 7})
	e := f.openEmbedding(t, collectives.TransportAlltoallv, PushAlltoallv, "adam", 4)
	defer e.Close()
	// A paper id pushed to the author table: every rank fails.
	var gids []int64
	if f.c.Rank() == 0 {
		gids = []int64{f.gid[1][0]}
	}
	err := e.Push(gids, make([]float32, 4*len(gids)))
	assert.Error(t, err)
	if f.c.Rank() == 0 {
		assert.ErrorContains(t, err, `not of node type "author"`)
	}
	// A blob of another width.
	other := f.openEmbedding(t, collectives.TransportAlltoallv, PushAlltoallv, "adam", 3)
	defer other.Close()
	blob, err := other.Export()
	require.NoError(t, err)
	assert.ErrorContains(t, e.Import(blob), "width")
	_, err = OpenEmbeddingTable(f.c, f.part, EmbeddingOptions{NodeType: "nosuch", Dim: 4, Transport: collectives.TransportAlltoallv,
		NewOptimizer: func(p []float32, d int) (SparseOptimizer, error) { return train.NewSparseOptimizer("adam", p, d, 0.1) }})
	assert.ErrorContains(t, err, "no node type")
	_, err = OpenEmbeddingTable(f.c, f.part, EmbeddingOptions{NodeType: "author", Dim: 4, Transport: collectives.TransportAlltoallv, Method: PushAccumulate,
		NewOptimizer: func(p []float32, d int) (SparseOptimizer, error) { return train.NewSparseOptimizer("adam", p, d, 0.1) }})
	assert.ErrorContains(t, err, "needs one-sided MPI")
}

// BenchmarkEmbeddingPush measures one Push step of an embedding of 1 M rows
// of width 64 where every rank pushes 100 k random rows, for each method.
// Under mpirun every rank must run the same number of iterations: use a
// fixed -test.benchtime such as 20x.
func BenchmarkEmbeddingPush(b *testing.B) {
	if os.Getenv("MPIGNN_BENCH_EMBED") == "" {
		b.Skip("set MPIGNN_BENCH_EMBED=1 (and -test.benchtime=Nx under mpirun)")
	}
	c, err := collectives.NewComm()
	require.NoError(b, err)
	const n, dim, touched = 1 << 20, 64, 100_000
	f := newEmbedFixtureOn(b, c, []int64{n})
	tr, err := collectives.ResolveTransport(c, collectives.TransportAuto)
	require.NoError(b, err)
	methods := []PushMethod{PushAlltoallv}
	if tr == collectives.TransportRMA {
		methods = append(methods, PushAccumulate)
	}
	rng := rand.New(rand.NewPCG(uint64(c.Rank()), 1))
	gids := make([]int64, touched)
	for j := range gids {
		gids[j] = f.gid[0][rng.Int64N(n)]
	}
	g := make([]float32, touched*dim)
	for j := range g {
		g[j] = float32(rng.NormFloat64())
	}
	for _, m := range methods {
		b.Run(fmt.Sprintf("%s/P=%d", m, c.Size()), func(b *testing.B) {
			e, err := OpenEmbeddingTable(c, f.part, EmbeddingOptions{NodeType: "author", Dim: dim, Transport: tr, Method: m,
				NewOptimizer: func(p []float32, d int) (SparseOptimizer, error) {
					return train.NewSparseOptimizer("adagrad", p, d, 0.01)
				}})
			require.NoError(b, err)
			defer e.Close()
			require.NoError(b, c.Barrier())
			b.ResetTimer()
			for range b.N {
				if err := e.Push(gids, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
