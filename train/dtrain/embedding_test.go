package dtrain

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample/sampletest"
	"mpignn/train/optim"
)

// embedFixture is a heterogeneous partition of sampletest.EmbedDataset,
// world-size ways, written by the real writer.
type embedFixture struct {
	c    *collectives.Comm
	part *partition.Part
	gid  [][]int64 // gid[t][i]: new id of type t's node with type-local original id i
}

// newEmbedFixture is newEmbedFixtureOn the world.
func newEmbedFixture(t *testing.T, counts []int64) *embedFixture {
	t.Helper()
	return newEmbedFixtureOn(t, comm(t), counts)
}

// newEmbedFixtureOn partitions sampletest.EmbedDataset(counts) over c's
// ranks in a directory they share and loads this rank's part. It is
// collective.
func newEmbedFixtureOn(tb testing.TB, c *collectives.Comm, counts []int64) *embedFixture {
	tb.Helper()
	d, assign, err := sampletest.EmbedDataset(counts, c.Size())
	require.NoError(tb, err)
	dir := filepath.Join(sharedDir(tb, c), "parts")
	if c.Rank() == 0 {
		_, err = partition.WriteHetero(dir, d, assign, c.Size(), partition.Options{})
	}
	require.NoError(tb, collectives.Agree(c, err))
	m, err := partition.LoadMeta(dir)
	require.NoError(tb, err)
	f := &embedFixture{c: c}
	newID := make([]int64, d.NumNodes())
	for q := range c.Size() {
		p, err := partition.LoadWithMeta(dir, m, q)
		require.NoError(tb, err)
		for i, o := range p.Orig {
			newID[o] = p.Lo + int64(i)
		}
		if q == c.Rank() {
			f.part = p
		}
	}
	for t := range d.Schema.NumTypes() {
		f.gid = append(f.gid, newID[d.Schema.NodeOrig[t]:d.Schema.NodeOrig[t+1]])
	}
	return f
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
			params[i*int64(dim)+int64(k)] = embeddingInit(seed, 0, i, k, dim)
		}
	}
	o, err := optim.NewSparseOptimizer(opt, params, dim, 0.05)
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

func (f *embedFixture) openEmbedding(t *testing.T, tr collectives.Transport, method, opt string, dim int) *embeddingTable {
	t.Helper()
	e, err := openEmbeddingTable(f.c, f.part, embeddingOptions{NodeType: "author", Dim: dim, Seed: 11, Transport: tr, Method: method,
		NewOptimizer: func(p []float32, d int) (optim.SparseOptimizer, error) {
			return optim.NewSparseOptimizer(opt, p, d, 0.05)
		}})
	require.NoError(t, err)
	return e
}

// embedCases are the transport/method pairs available here, in a fixed order.
func embedCases(t *testing.T, c *collectives.Comm) []struct {
	tr     collectives.Transport
	method string
} {
	cases := []struct {
		tr     collectives.Transport
		method string
	}{{collectives.TransportAlltoallv, PushAlltoallv}}
	if r, _ := collectives.ResolveTransport(c, collectives.TransportAuto); r == collectives.TransportRMA {
		cases = append(cases, struct {
			tr     collectives.Transport
			method string
		}{collectives.TransportRMA, PushAlltoallv}, struct {
			tr     collectives.Transport
			method string
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
	push := func(e *embeddingTable, s int) {
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
	_, err = openEmbeddingTable(f.c, f.part, embeddingOptions{NodeType: "nosuch", Dim: 4, Transport: collectives.TransportAlltoallv,
		NewOptimizer: func(p []float32, d int) (optim.SparseOptimizer, error) {
			return optim.NewSparseOptimizer("adam", p, d, 0.1)
		}})
	assert.ErrorContains(t, err, "no node type")
	_, err = openEmbeddingTable(f.c, f.part, embeddingOptions{NodeType: "author", Dim: 4, Transport: collectives.TransportAlltoallv, Method: PushAccumulate,
		NewOptimizer: func(p []float32, d int) (optim.SparseOptimizer, error) {
			return optim.NewSparseOptimizer("adam", p, d, 0.1)
		}})
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
	methods := []string{PushAlltoallv}
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
			e, err := openEmbeddingTable(c, f.part, embeddingOptions{NodeType: "author", Dim: dim, Transport: tr, Method: m,
				NewOptimizer: func(p []float32, d int) (optim.SparseOptimizer, error) {
					return optim.NewSparseOptimizer("adagrad", p, d, 0.01)
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
