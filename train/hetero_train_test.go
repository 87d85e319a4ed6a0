package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/sample"
	"mpignn/train/kernels"
	"mpignn/train/optim"
)

// hetGraph is a small heterogeneous graph in the homogenized id space: in
// lists, per relation row v*R+r, the sources of the edges u -r-> v.
type hetGraph struct {
	h    *HeteroConfig
	in   [][]int64
	feat [][]float32 // per type, rows in type-local order
}

// fullBlocks builds the L full-neighbourhood blocks of seeds (original
// ids), as a sampler with fanout -1 would: destinations first, new sources
// in order of first appearance, a destination's edges grouped by relation
// ascending. empty drops every edge (a features-only model).
func (g *hetGraph) fullBlocks(seeds []int64, L int, empty bool) []sample.Block {
	R := g.h.NumRels()
	return typedBlocks(seeds, L, func(v int64, add func(u int64, r int)) {
		for r := 0; r < R && !empty; r++ {
			for _, u := range g.in[int(v)*R+r] {
				add(u, r)
			}
		}
	})
}

// typedBlocks builds L typed blocks from seeds (original ids), as a
// sampler would: each layer's destinations are the nodes of the layer
// above, edges(v, add) calls add(u, r) for each edge u -r-> v kept, grouped
// by relation ascending, and new sources follow the destinations in order
// of first appearance.
func typedBlocks(seeds []int64, L int, edges func(v int64, add func(u int64, r int))) []sample.Block {
	level := slices.Clone(seeds)
	blocks := make([]sample.Block, L)
	for l := L - 1; l >= 0; l-- {
		b := sample.Block{NumDst: len(level), Indptr: []int32{0}}
		local := map[int64]int32{}
		for i, v := range level {
			local[v] = int32(i)
		}
		nodes := slices.Clone(level)
		add := func(u int64, r int) {
			j, ok := local[u]
			if !ok {
				j = int32(len(nodes))
				local[u] = j
				nodes = append(nodes, u)
			}
			b.Indices = append(b.Indices, j)
			b.Etype = append(b.Etype, int32(r))
		}
		for _, v := range level {
			edges(v, add)
			b.Indptr = append(b.Indptr, int32(len(b.Indices)))
		}
		b.Nodes, b.Orig = nodes, slices.Clone(nodes)
		blocks[l] = b
		level = nodes
	}
	return blocks
}

// inputs gathers the per-type input rows of blocks[0]'s nodes and returns,
// per type, the type-local ids of those rows.
func (g *hetGraph) inputs(b0 *sample.Block) ([][]float32, [][]int64) {
	nt := g.h.NumTypes()
	xs, ids := make([][]float32, nt), make([][]int64, nt)
	for _, o := range b0.Orig {
		t := typeIndexOf(g.h, o)
		k := o - g.h.NodeOrig[t]
		d := g.h.InDims[t]
		xs[t] = append(xs[t], g.feat[t][int(k)*d:int(k+1)*d]...)
		ids[t] = append(ids[t], k)
	}
	return xs, ids
}

// plantedHetGraph: K classes on type a (the target), whose own features
// are noise; each a node writes 3 b nodes of its class, and b nodes carry
// a noisy one-hot of their class, so an a node's label is visible only
// through its b neighbours. c nodes (learnable embeddings, random start)
// group random b nodes and carry no signal.
func plantedHetGraph(seed uint64, na, nb, nc, K int) (*hetGraph, []int32) {
	r := rand.New(rand.NewPCG(seed, 17))
	h := &HeteroConfig{
		NodeTypes: []string{"a", "b", "c"},
		NodeOrig:  []int64{0, int64(na), int64(na + nb), int64(na + nb + nc)},
		Relations: []string{"a___writes___b", "b___in___c", "b___rev_writes___a", "c___rev_in___b"},
		InDims:    []int{6, 8, 5},
		Learnable: []bool{false, false, true},
	}
	R := h.NumRels()
	g := &hetGraph{h: h, in: make([][]int64, (na+nb+nc)*R), feat: make([][]float32, 3)}
	add := func(u, rel int64, v int64) { g.in[int(v)*R+int(rel)] = append(g.in[int(v)*R+int(rel)], u) }
	bOf := func(k int) int64 { return int64(na + k) }
	cOf := func(k int) int64 { return int64(na + nb + k) }
	labels := make([]int32, na)
	for i := range na {
		y := r.IntN(K)
		labels[i] = int32(y)
		picked := map[int]bool{}
		for len(picked) < 3 {
			k := r.IntN(nb/K)*K + y // b node k has class k%K
			picked[k] = true
		}
		ks := make([]int, 0, 3)
		for k := range picked {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		for _, k := range ks {
			add(int64(i), 0, bOf(k)) // a writes b
			add(bOf(k), 2, int64(i)) // b rev_writes a
		}
	}
	for k := range nb {
		c := r.IntN(nc)
		add(bOf(k), 1, cOf(c))
		add(cOf(c), 3, bOf(k))
	}
	for v := range g.in {
		slices.Sort(g.in[v])
	}
	for t, n := range []int{na, nb, nc} {
		d := h.InDims[t]
		g.feat[t] = make([]float32, n*d)
		for i := range g.feat[t] {
			g.feat[t][i] = float32(r.NormFloat64() * 0.5)
		}
	}
	for k := range nb {
		g.feat[1][k*8+k%K] += 1.5
	}
	return g, labels
}

// trainHetero trains cfg full-batch with Adam (and plain SGD on the
// learnable c embeddings through InputGrad) and returns the test accuracy.
func trainHetero(t *testing.T, g *hetGraph, labels []int32, cfg Config, steps int, empty bool) float64 {
	t.Helper()
	na := len(labels)
	var trainIDs, testIDs []int64
	for i := range na {
		if i%10 < 7 {
			trainIDs = append(trainIDs, int64(i))
		} else {
			testIDs = append(testIDs, int64(i))
		}
	}
	ys := func(ids []int64) []int32 {
		y := make([]int32, len(ids))
		for i, v := range ids {
			y[i] = labels[v]
		}
		return y
	}
	m, err := NewModel(cfg, 1)
	require.NoError(t, err)
	opt, err := optim.NewAdam(len(m.Params()), optim.DefaultAdam(0.01, 0))
	require.NoError(t, err)
	bt := g.fullBlocks(trainIDs, cfg.Layers, empty)
	yt := ys(trainIDs)
	const embLR = 0.05
	for s := range steps {
		xs, ids := g.inputs(&bt[0])
		clear(m.Grads())
		_, _, err := m.Train(&sample.Batch{Blocks: bt, XT: xs, Labels: yt}, 1/float32(len(yt)), MaskKey{Seed: 3, Step: int64(s)})
		require.NoError(t, err)
		require.NoError(t, opt.Step(m.Params(), m.Grads()))
		for ty := range xs {
			gr := m.InputGrad(ty)
			if gr == nil {
				continue
			}
			d := g.h.InDims[ty]
			for k, id := range ids[ty] {
				kernels.Axpy(-embLR, gr[k*d:(k+1)*d], g.feat[ty][int(id)*d:int(id+1)*d])
			}
		}
	}
	be := g.fullBlocks(testIDs, cfg.Layers, empty)
	xs, _ := g.inputs(&be[0])
	_, correct, err := m.Evaluate(&sample.Batch{Blocks: be, XT: xs, Labels: ys(testIDs)})
	require.NoError(t, err)
	return float64(correct) / float64(len(testIDs))
}

// TestHeteroTrainingLearns: both architectures learn a label that only
// neighbours of another type reveal, far above the same model without edges
// (features only, chance level).
func TestHeteroTrainingLearns(t *testing.T) {
	const K = 4
	for _, tc := range []struct {
		arch  string
		bases int
	}{{ArchHSAGE, 0}, {ArchRGCN, 0}, {ArchRGCN, 2}} {
		t.Run(fmt.Sprintf("%s/bases=%d", tc.arch, tc.bases), func(t *testing.T) {
			g, labels := plantedHetGraph(5, 300, 120, 30, K)
			h := *g.h
			h.Bases = tc.bases
			cfg := Config{Arch: tc.arch, Hidden: 16, Classes: K, Layers: 2, Dropout: 0.1, Hetero: &h}
			acc := trainHetero(t, g, labels, cfg, 150, false)
			g, labels = plantedHetGraph(5, 300, 120, 30, K)
			base := trainHetero(t, g, labels, cfg, 150, true)
			t.Logf("test accuracy %.3f, features-only baseline %.3f", acc, base)
			assert.GreaterOrEqual(t, acc, 0.9)
			assert.Less(t, base, 0.5)
		})
	}
}

// TestHeteroRelabelInvariance: the same typed sample in another local order
// (as another partition count lists it) gives the same loss, gradients and
// input gradients, with dropout on.
func TestHeteroRelabelInvariance(t *testing.T) {
	for _, tc := range hetCases() {
		if !tc.drop {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, xs, y := hetTestCase(t, tc.cfg, 17)
			r := rand.New(rand.NewPCG(99, 2))
			// Relabel with a dummy feature row per node carrying its index
			// in blocks[0], then rebuild the typed inputs in the new order.
			idx := make([]float32, blocks[0].NumSrc())
			for i := range idx {
				idx[i] = float32(i)
			}
			rb, rIdx, ry := relabel(r, blocks, idx, 1, y)
			rowOf := func(bs []sample.Block) map[int64]int {
				pos := map[int64]int{}
				seen := make([]int, tc.cfg.Hetero.NumTypes())
				for _, o := range bs[0].Orig {
					t := typeIndexOf(tc.cfg.Hetero, o)
					pos[o] = seen[t]
					seen[t]++
				}
				return pos
			}
			oldRow := rowOf(blocks)
			rxs := make([][]float32, len(xs))
			for _, i := range rIdx {
				o := blocks[0].Orig[int(i)]
				ty := typeIndexOf(tc.cfg.Hetero, o)
				d := tc.cfg.Hetero.InDims[ty]
				rxs[ty] = append(rxs[ty], xs[ty][oldRow[o]*d:(oldRow[o]+1)*d]...)
			}
			key := MaskKey{Seed: 1, Step: 77}
			clear(m.Grads())
			l1, c1, err := m.Train(&sample.Batch{Blocks: blocks, XT: xs, Labels: y}, 1, key)
			require.NoError(t, err)
			g1 := slices.Clone(m.Grads())
			ig1 := slices.Clone(m.InputGrad(1))
			clear(m.Grads())
			l2, c2, err := m.Train(&sample.Batch{Blocks: rb, XT: rxs, Labels: ry}, 1, key)
			require.NoError(t, err)
			assert.InDelta(t, l1, l2, 1e-5*(1+math.Abs(l1)))
			assert.Equal(t, c1, c2)
			for i := range g1 {
				require.InDelta(t, g1[i], m.Grads()[i], 1e-4*(1+math.Abs(float64(g1[i]))), "grad %d", i)
			}
			newRow := rowOf(rb)
			ig2 := m.InputGrad(1)
			d := tc.cfg.Hetero.InDims[1]
			for o, k := range oldRow {
				if typeIndexOf(tc.cfg.Hetero, o) != 1 {
					continue
				}
				k2 := newRow[o]
				for u := 0; u < d; u++ {
					require.InDelta(t, ig1[k*d+u], ig2[k2*d+u], 1e-5*(1+math.Abs(float64(ig1[k*d+u]))))
				}
			}
		})
	}
}

// TestHeteroLinkGradCheck: a heterogeneous link predictor (MLP decoder)
// passes the finite-difference check through the decoder, the layers and
// the typed inputs, and Forward gives the rows ScorePairs scores.
func TestHeteroLinkGradCheck(t *testing.T) {
	for _, arch := range HeteroArchs() {
		t.Run(arch, func(t *testing.T) {
			cfg := Config{Arch: arch, Hidden: 5, Classes: 4, Layers: 2, Decoder: DecoderMLP,
				Hetero: testHetero([]int{3, 4, 2}, 0, []bool{true, false, false})}
			m, blocks, xs32, _ := hetTestCase(t, cfg, 19)
			seeds := blocks[len(blocks)-1].NumDst
			r := rand.New(rand.NewPCG(4, 4))
			var pairs []int32
			var lab []float32
			for i := range 8 {
				pairs = append(pairs, int32(r.IntN(seeds)), int32(r.IntN(seeds)))
				lab = append(lab, float32(i%2))
			}
			xs := to64s(xs32)
			n := mustNet(t, cfg, to64(m.Params()))
			_, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: lab}, typed(xs), 1, false, MaskKey{})
			require.NoError(t, err)
			n.backward(blocks, false)
			dx := slices.Clone(n.het.dxs[0])
			lossAt := func() float64 {
				l, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: lab}, typed(xs), 0, false, MaskKey{})
				require.NoError(t, err)
				return l
			}
			checkGradients(t, n, cfg.Tensors(), lossAt)
			const eps = 1e-6
			for i := range xs[0] {
				old := xs[0][i]
				xs[0][i] = old + eps
				lp := lossAt()
				xs[0][i] = old - eps
				lm := lossAt()
				xs[0][i] = old
				num := (lp - lm) / (2 * eps)
				require.InDelta(t, num, dx[i], 1e-6+1e-5*math.Abs(num), "input %d", i)
			}
			// float32 API: training step, then evaluation scores = ScorePairs
			// over Forward rows.
			clear(m.Grads())
			_, _, err = fb(m.n, &sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: lab}, typed(xs32), 1, false, MaskKey{})
			require.NoError(t, err)
			require.Len(t, m.InputGrad(0), len(xs32[0]))
			emb, err := m.Forward(&sample.Batch{Blocks: blocks, XT: xs32})
			require.NoError(t, err)
			emb = slices.Clone(emb)
			c := cfg.Classes
			hu, hv := make([]float32, 0, 8*c), make([]float32, 0, 8*c)
			for i := range 8 {
				a, b := int(pairs[2*i]), int(pairs[2*i+1])
				hu = append(hu, emb[a*c:(a+1)*c]...)
				hv = append(hv, emb[b*c:(b+1)*c]...)
			}
			scores := make([]float32, 8)
			require.NoError(t, m.ScorePairs(hu, hv, scores))
			loss, _, err := m.Evaluate(&sample.Batch{Blocks: blocks, XT: xs32, Pairs: pairs, PairLabels: lab})
			require.NoError(t, err)
			want := 0.0
			for i, z := range scores {
				zi := float64(z)
				want += math.Max(zi, 0) - zi*float64(lab[i]) + math.Log1p(math.Exp(-math.Abs(zi)))
			}
			assert.InDelta(t, want, loss, 1e-4*(1+want))
		})
	}
}

// BenchmarkHeteroLayer: one forward+backward of a 2-layer heterogeneous
// model on DBLP shapes: 1024 author seeds, fanout 10 per relation of the
// destination's type, hidden 64, 4 node types, 6 relations, input
// projections of the real feature widths included.
func BenchmarkHeteroLayer(b *testing.B) {
	// DBLP as PyG loads it: node types sorted, conference without features
	// (a learnable 64-wide embedding), the three relations and their
	// reverses (sorted by canonical name).
	rels := []string{"author___writes___paper", "paper___has___term", "paper___published_in___conference"}
	for _, name := range slices.Clone(rels) {
		p := strings.Split(name, "___")
		rels = append(rels, p[2]+"___rev_"+p[1]+"___"+p[0])
	}
	slices.Sort(rels)
	h := &HeteroConfig{
		NodeTypes: []string{"author", "conference", "paper", "term"},
		NodeOrig:  []int64{0, 4057, 4057 + 20, 4057 + 20 + 14328, 4057 + 20 + 14328 + 7723},
		Relations: rels,
		InDims:    []int{334, 64, 4231, 50},
		Learnable: []bool{false, true, false, false},
	}
	// "in64" gives every type 64-wide inputs, to time the layers without
	// the 4231-wide paper projection that dominates the DBLP shapes.
	h64 := *h
	h64.InDims = []int{64, 64, 64, 64}
	for _, arch := range HeteroArchs() {
		for _, in := range []struct {
			name string
			h    *HeteroConfig
		}{{"dblp", h}, {"in64", &h64}} {
			b.Run(arch+"/"+in.name, func(b *testing.B) { benchHetero(b, arch, in.h) })
		}
	}
}

// benchHetero times Train of a 2-layer arch model over h.
func benchHetero(b *testing.B, arch string, h *HeteroConfig) {
	cfg := Config{Arch: arch, Hidden: 64, Classes: 4, Layers: 2, Hetero: h}
	r := rand.New(rand.NewPCG(1, 1))
	blocks := benchHeteroBlocks(r, h, 1024, 10, 2)
	xs := heteroInputs(r, h, &blocks[0])
	y := randLabels(r, blocks[1].NumDst, 4)
	m, err := NewModel(cfg, 1)
	require.NoError(b, err)
	edges := len(blocks[0].Indices) + len(blocks[1].Indices)
	b.ResetTimer()
	for b.Loop() {
		clear(m.Grads())
		if _, _, err := m.Train(&sample.Batch{Blocks: blocks, XT: xs, Labels: y}, 1, MaskKey{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(edges), "edges/op")
	b.ReportMetric(float64(blocks[0].NumSrc()), "inputs/op")
}

// benchHeteroBlocks samples (uniformly, with repeats, by hand) L typed
// blocks over the schema h from seeds of type 0: every destination draws
// fanout sources per relation ending at its type.
func benchHeteroBlocks(r *rand.Rand, h *HeteroConfig, seeds, fanout, L int) []sample.Block {
	src, dst := relTypes(h)
	level := make([]int64, 0, seeds)
	seen := map[int64]int32{}
	for len(level) < seeds {
		o := r.Int64N(h.NodeOrig[1])
		if _, ok := seen[o]; !ok {
			seen[o] = int32(len(level))
			level = append(level, o)
		}
	}
	return typedBlocks(level, L, func(v int64, add func(u int64, r int)) {
		tv := typeIndexOf(h, v)
		for rel := range h.Relations {
			if dst[rel] != tv {
				continue
			}
			st := src[rel]
			for range fanout {
				add(h.NodeOrig[st]+r.Int64N(h.NodeOrig[st+1]-h.NodeOrig[st]), rel)
			}
		}
	})
}
