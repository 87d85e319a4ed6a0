package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"mpignn/sample"
)

// synthGraph is a small planted-partition graph: node v has class
// labels[v]; most in-neighbors share the class, and features carry a weak,
// noisy class signal, so a GraphSAGE model that aggregates neighbors learns
// clearly better than one that does not, and better than chance.
type synthGraph struct {
	n       int64
	dim     int
	classes int
	indptr  []int64
	indices []int64 // canonical: ascending, no repeats
	feat    []float32
	labels  []int32
	splits  map[string][]int64 // original ids, ascending
}

func newSynthGraph(seed uint64, n int64, dim, classes int) *synthGraph {
	r := rand.New(rand.NewPCG(seed, 7))
	g := &synthGraph{n: n, dim: dim, classes: classes, labels: make([]int32, n), feat: make([]float32, int(n)*dim)}
	byClass := make([][]int64, classes)
	for v := range n {
		c := int32(r.IntN(classes))
		g.labels[v] = c
		byClass[c] = append(byClass[c], v)
	}
	g.indptr = []int64{0}
	for v := range n {
		deg := 2 + r.IntN(10)
		nb := map[int64]bool{}
		for range deg {
			var u int64
			if r.Float64() < 0.8 {
				same := byClass[g.labels[v]]
				u = same[r.IntN(len(same))]
			} else {
				u = r.Int64N(n)
			}
			if u != v {
				nb[u] = true
			}
		}
		row := make([]int64, 0, len(nb))
		for u := range nb {
			row = append(row, u)
		}
		slices.Sort(row)
		g.indices = append(g.indices, row...)
		g.indptr = append(g.indptr, int64(len(g.indices)))
		for k := range dim {
			x := r.NormFloat64()
			if k%classes == int(g.labels[v]) {
				x += 0.7
			}
			g.feat[int(v)*dim+k] = float32(x)
		}
	}
	g.splits = map[string][]int64{}
	for v := range n {
		switch {
		case v%10 < 6:
			g.splits[SplitTrain] = append(g.splits[SplitTrain], v)
		case v%10 < 8:
			g.splits[SplitValid] = append(g.splits[SplitValid], v)
		default:
			g.splits[SplitTest] = append(g.splits[SplitTest], v)
		}
	}
	return g
}

// NumNodes implements sample.Graph (global id == original id here).
func (g *synthGraph) NumNodes() int64 { return g.n }

// InNeighbors implements sample.Graph.
func (g *synthGraph) InNeighbors(v int64) (global, orig []int64) {
	nb := g.indices[g.indptr[v]:g.indptr[v+1]]
	return nb, nb
}

// memSource is a BatchSource for rank `rank` of `size` simulated ranks over
// a synthGraph: rank r owns the nodes with v % size == r. Batches follow
// sample.EpochBatches with global batch globalBatch, so any rank count
// trains on the same global batches, and blocks come from the real sampler.
type memSource struct {
	g           *synthGraph
	rank, size  int
	seed        uint64
	fanouts     []int
	globalBatch int
	evalBatch   int
	sampler     sample.Reference

	// Test hooks: fail (error) or poison (NaN features) at one train step.
	failEpoch, failStep     int
	poisonEpoch, poisonStep int
	remoteRows              int64
}

func newMemSource(g *synthGraph, rank, size int, seed uint64, fanouts []int, globalBatch int) *memSource {
	return &memSource{g: g, rank: rank, size: size, seed: seed, fanouts: fanouts, globalBatch: globalBatch, evalBatch: 64,
		failEpoch: -1, failStep: -1, poisonEpoch: -1, poisonStep: -1}
}

func (s *memSource) Steps(split string, epoch int) (int, error) {
	nodes, ok := s.g.splits[split]
	if !ok {
		return 0, fmt.Errorf("no split %q", split)
	}
	if split == SplitTrain {
		return sample.NumSteps(int64(len(nodes)), s.globalBatch), nil
	}
	return sample.NumSteps(int64(len(nodes)), s.evalBatch), nil
}

func (s *memSource) Batch(split string, epoch, step int, b *sample.Batch) error {
	if split == SplitTrain && epoch == s.failEpoch && step == s.failStep {
		return fmt.Errorf("injected failure on rank %d", s.rank)
	}
	var global []int64
	if split == SplitTrain {
		batches, err := sample.EpochBatches(s.seed, epoch, s.g.splits[split], s.globalBatch)
		if err != nil {
			return err
		}
		global = batches[step]
	} else {
		nodes := s.g.splits[split]
		global = nodes[step*s.evalBatch : min((step+1)*s.evalBatch, len(nodes))]
	}
	var mine []int64
	for _, v := range global {
		if int(v%int64(s.size)) == s.rank {
			mine = append(mine, v)
		}
	}
	b.GlobalSeeds = len(global)
	if len(mine) == 0 {
		return nil
	}
	key := sample.Key{Seed: s.seed, Epoch: epoch, Batch: step}
	if split != SplitTrain {
		key.Seed ^= 0xe7a1 // evaluation draws its own neighborhoods
	}
	s.sampler.G = s.g
	blocks, err := s.sampler.Sample(mine, mine, s.fanouts, key, false)
	if err != nil {
		return err
	}
	b.Blocks = blocks
	d := s.g.dim
	for _, v := range blocks[0].Orig {
		b.X = append(b.X, s.g.feat[int(v)*d:int(v+1)*d]...)
		if int(v%int64(s.size)) != s.rank {
			s.remoteRows++
			b.Stats.RemoteRows++
		}
	}
	if split == SplitTrain && epoch == s.poisonEpoch && step == s.poisonStep {
		b.X[0] = float32(math.NaN())
	}
	for _, v := range mine {
		b.Labels = append(b.Labels, s.g.labels[v])
	}
	return nil
}

// groupReducer simulates the Allreduce of `size` ranks running as
// goroutines: each call blocks until every rank has contributed, then every
// rank receives the sum taken in rank order (deterministic).
type groupReducer struct {
	mu    sync.Mutex
	cond  *sync.Cond
	size  int
	round int
	in    [][]float64
	out   []float64
	got   int
	taken int
}

func newGroupReducer(size int) *groupReducer {
	g := &groupReducer{size: size, in: make([][]float64, size)}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// rankReducer is one rank's handle on a groupReducer.
type rankReducer struct {
	g    *groupReducer
	rank int
}

func (r rankReducer) AllreduceSum32(buf []float32) error {
	b := make([]float64, len(buf))
	for i, v := range buf {
		b[i] = float64(v)
	}
	out, err := r.g.reduce(r.rank, b)
	if err != nil {
		return err
	}
	for i := range buf {
		buf[i] = float32(out[i])
	}
	return nil
}

func (r rankReducer) AllreduceSum64(buf []float64) error {
	out, err := r.g.reduce(r.rank, slices.Clone(buf))
	if err != nil {
		return err
	}
	copy(buf, out)
	return nil
}

// Agree is collectives.Agree for ranks that are goroutines: the failed
// ranks are counted with one sum, and a rank that did not fail gets the
// words collectives.OthersFailedError has.
func (r rankReducer) Agree(localErr error) error {
	flag := []float64{0}
	if localErr != nil {
		flag[0] = 1
	}
	if err := r.AllreduceSum64(flag); err != nil {
		return errors.Join(localErr, err)
	}
	switch {
	case localErr != nil:
		return localErr
	case flag[0] != 0:
		return fmt.Errorf("%d other rank(s) failed (see their errors)", int64(flag[0]))
	}
	return nil
}

func (g *groupReducer) reduce(rank int, buf []float64) ([]float64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Wait until the previous round has been fully taken.
	for g.taken != 0 {
		g.cond.Wait()
	}
	round := g.round
	g.in[rank] = buf
	g.got++
	if g.got == g.size {
		n := len(g.in[0])
		for r := 1; r < g.size; r++ {
			if len(g.in[r]) != n {
				panic(fmt.Sprintf("group reducer: rank %d sent %d values, rank 0 sent %d", r, len(g.in[r]), n))
			}
		}
		g.out = make([]float64, n)
		for r := 0; r < g.size; r++ {
			// Sum in float32 for float32 callers' realism is not needed:
			// the test tolerances cover the order of summation.
			for i, v := range g.in[r] {
				g.out[i] += v
			}
		}
		g.got = 0
		g.round++
		g.cond.Broadcast()
	}
	for g.round == round {
		g.cond.Wait()
	}
	out := slices.Clone(g.out)
	g.taken++
	if g.taken == g.size {
		g.taken = 0
		g.cond.Broadcast()
	}
	return out, nil
}

// Rank and Size let the trainer pick its row of a mid-epoch checkpoint.
func (r rankReducer) Rank() int { return r.rank }

// Size is the simulated world size.
func (r rankReducer) Size() int { return r.g.size }
