package train

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/half"
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
	"mpignn/train/optim"
)

// The kernels split their loops over GOMAXPROCS goroutines; these tests
// run each of them on one thread and on several, on inputs large enough
// to cross par.MinWork, and require the same bits. The scatters are also
// checked against the serial loops they replaced.

// atThreads runs f with GOMAXPROCS p.
func atThreads[R any](p int, f func() R) R {
	prev := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(prev)
	return f()
}

// bitsOf returns the bit patterns of float slices, so that comparisons
// tell -0 from 0 and see NaNs.
func bitsOf[T floatT](xs ...[]T) []uint64 {
	var out []uint64
	for _, x := range xs {
		for _, v := range x {
			switch f := any(v).(type) {
			case float32:
				out = append(out, uint64(math.Float32bits(f)))
			case float64:
				out = append(out, math.Float64bits(f))
			}
		}
	}
	return out
}

// bigBlock is one block of ns sources and nd destinations with fanout
// random sources each (repeats and self-loops included), every 7th
// destination without edges.
func bigBlock(r *rand.Rand, ns, nd, fanout int) *sample.Block {
	bs := synthBlocks(r, []int{ns, nd}, []int{fanout}, 7)
	b := &bs[0]
	// A few sampled self-loops, which GCN and GAT skip.
	for i := 0; i < nd; i += 11 {
		if b.Indptr[i+1] > b.Indptr[i] {
			b.Indices[b.Indptr[i]] = int32(i)
		}
	}
	return b
}

// gridVec is randVec rounded to quarters in [-1, 1], so values repeat.
func gridVec(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.IntN(9)-4) / 4
	}
	return x
}

// idxBits widens int32s for bit comparisons.
func idxBits(xs []int32) []uint64 {
	out := make([]uint64, len(xs))
	for i, v := range xs {
		out[i] = uint64(uint32(v))
	}
	return out
}

// refMax is the serial elementwise max over each destination's sources
// with the first edge winning ties (-1 and zeros without sources).
func refMax(b *sample.Block, h []float32, w int, agg []float32, arg []int32) {
	for i := 0; i < b.NumDst; i++ {
		for k := 0; k < w; k++ {
			agg[i*w+k], arg[i*w+k] = 0, -1
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				v := h[int(b.Indices[e])*w+k]
				if arg[i*w+k] < 0 || v > agg[i*w+k] {
					agg[i*w+k], arg[i*w+k] = v, e
				}
			}
		}
	}
}

// refMaxScatter is the serial adjoint of refMax, over destinations.
func refMaxScatter(b *sample.Block, dagg []float32, arg []int32, w int, dh []float32) {
	for i := 0; i < b.NumDst; i++ {
		for k := 0; k < w; k++ {
			if e := arg[i*w+k]; e >= 0 {
				dh[int(b.Indices[e])*w+k] += dagg[i*w+k]
			}
		}
	}
}

func randVec(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// refMeanScatter is the serial meanScatter this package had.
func refMeanScatter(b *sample.Block, dagg []float32, w int, dh []float32) {
	for i := 0; i < b.NumDst; i++ {
		e0, e1 := b.Indptr[i], b.Indptr[i+1]
		if e0 == e1 {
			continue
		}
		inv := float32(1 / float64(e1-e0))
		for _, j := range b.Indices[e0:e1] {
			kernels.Axpy(inv, dagg[i*w:(i+1)*w], dh[int(j)*w:(int(j)+1)*w])
		}
	}
}

// refGCNScatter is the serial GCN scatter this package had.
func refGCNScatter(b *sample.Block, sw, ew, gd []float32, w int, d []float32) {
	clear(d)
	for i := 0; i < b.NumDst; i++ {
		gi := gd[i*w : (i+1)*w]
		kernels.Axpy(sw[i], gi, d[i*w:(i+1)*w])
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			if j := int(b.Indices[e]); j != i {
				kernels.Axpy(ew[e], gi, d[j*w:(j+1)*w])
			}
		}
	}
}

// refRelScatter is the serial relMean.scatter this package had.
func refRelScatter(a *relMean[float32], b *sample.Block, w int, dh []float32) {
	for i := 0; i < b.NumDst; i++ {
		p := int(a.pos[i])
		for e, end := b.Indptr[i], b.Indptr[i+1]; e < end; {
			r, f := relRun(b.Etype, e, end)
			inv := float32(1 / float64(f-e))
			for _, j := range b.Indices[e:f] {
				kernels.Axpy(inv, a.dagg[r][p*w:(p+1)*w], dh[int(j)*w:(int(j)+1)*w])
			}
			e = f
		}
	}
}

// dblpLike is a small heterogeneous schema for the typed kernels.
func dblpLike() *HeteroConfig {
	rels := []string{"author___writes___paper", "paper___has___term", "paper___rev_writes___author", "term___rev_has___paper"}
	slices.Sort(rels)
	return &HeteroConfig{
		NodeTypes: []string{"author", "paper", "term"},
		NodeOrig:  []int64{0, 4000, 4000 + 9000, 4000 + 9000 + 5000},
		Relations: rels,
		InDims:    []int{24, 40, 16},
	}
}

// kernelCase runs one kernel on fixed inputs and returns its outputs'
// bits; ref, if set, returns what the serial code it replaced computes.
type kernelCase struct {
	name string
	run  func() []uint64
	ref  func() []uint64
}

func kernelCases() []kernelCase {
	const w = 24
	newR := func() *rand.Rand { return rand.New(rand.NewPCG(7, 31)) }
	return []kernelCase{
		{
			name: "bySource",
			run: func() []uint64 {
				b := bigBlock(newR(), 30000, 8000, 12)
				var s bySource
				s.build(b.Indices, b.NumSrc())
				var out []uint64
				for _, v := range s.off {
					out = append(out, uint64(v))
				}
				for _, v := range s.edge {
					out = append(out, uint64(v))
				}
				return out
			},
			ref: func() []uint64 {
				b := bigBlock(newR(), 30000, 8000, 12)
				per := make([][]uint64, b.NumSrc())
				for e, j := range b.Indices {
					per[j] = append(per[j], uint64(e))
				}
				out := []uint64{0}
				n := uint64(0)
				for _, es := range per {
					n += uint64(len(es))
					out = append(out, n)
				}
				for _, es := range per {
					out = append(out, es...)
				}
				return out
			},
		},
		{
			name: "meanScatter",
			run: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				dagg, dh := randVec(r, b.NumDst*w), randVec(r, b.NumSrc()*w)
				var t blockT
				meanScatter(&t, b, dagg, w, dh)
				meanScatter(&t, b, dagg, w, dh) // buffers reused
				return bitsOf(dh)
			},
			ref: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				dagg, dh := randVec(r, b.NumDst*w), randVec(r, b.NumSrc()*w)
				refMeanScatter(b, dagg, w, dh)
				refMeanScatter(b, dagg, w, dh)
				return bitsOf(dh)
			},
		},
		{
			// Values on a coarse grid, so that many maxima tie: the first
			// edge must win on any thread count.
			name: "maxAggregate+maxScatter",
			run: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				h, dagg := gridVec(r, b.NumSrc()*w), randVec(r, b.NumDst*w)
				agg, arg, dh := make([]float32, b.NumDst*w), make([]int32, b.NumDst*w), randVec(r, b.NumSrc()*w)
				var t blockT
				maxAggregate(b, h, w, agg, arg)
				maxScatter(&t, b, dagg, arg, w, dh)
				maxScatterAdd(&t, b, dagg, arg, w, dh) // buffers reused, adds
				return append(bitsOf(agg, dh), idxBits(arg)...)
			},
			ref: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				h, dagg := gridVec(r, b.NumSrc()*w), randVec(r, b.NumDst*w)
				agg, arg, dh := make([]float32, b.NumDst*w), make([]int32, b.NumDst*w), randVec(r, b.NumSrc()*w)
				refMax(b, h, w, agg, arg)
				clear(dh)
				refMaxScatter(b, dagg, arg, w, dh)
				refMaxScatter(b, dagg, arg, w, dh)
				return append(bitsOf(agg, dh), idxBits(arg)...)
			},
		},
		{
			name: "sumScatter",
			run: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				dagg, dh := randVec(r, b.NumDst*w), randVec(r, b.NumSrc()*w)
				var t blockT
				sumScatter(&t, b, dagg, w, dh, false)
				return bitsOf(dh)
			},
			ref: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				dagg, dh := randVec(r, b.NumDst*w), randVec(r, b.NumSrc()*w)
				for i := 0; i < b.NumDst; i++ {
					for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
						for k := 0; k < w; k++ {
							dh[int(j)*w+k] += dagg[i*w+k]
						}
					}
				}
				return bitsOf(dh)
			},
		},
		{
			name: "gcnScatter",
			run: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				sw, ew, gd := randVec(r, b.NumDst), randVec(r, len(b.Indices)), randVec(r, b.NumDst*w)
				g := &gcnLayer[float32]{sw: sw, ew: ew}
				d := randVec(r, b.NumSrc()*w) // overwritten
				g.scatter(b, gd, w, d)
				return bitsOf(d)
			},
			ref: func() []uint64 {
				r := newR()
				b := bigBlock(r, 20000, 6000, 10)
				sw, ew, gd := randVec(r, b.NumDst), randVec(r, len(b.Indices)), randVec(r, b.NumDst*w)
				d := make([]float32, b.NumSrc()*w)
				refGCNScatter(b, sw, ew, gd, w, d)
				return bitsOf(d)
			},
		},
		{
			name: "relMeanScatter",
			run: func() []uint64 {
				a, b, dh := relCase(w)
				a.scatter(b, w, dh)
				return bitsOf(dh)
			},
			ref: func() []uint64 {
				a, b, dh := relCase(w)
				refRelScatter(a, b, w, dh)
				return bitsOf(dh)
			},
		},
		{
			name: "colSum",
			run: func() []uint64 {
				r := newR()
				x, acc := randVec(r, 9000*40), randVec(r, 40)
				colSum(x, 9000, 40, acc)
				return bitsOf(acc)
			},
			ref: func() []uint64 {
				r := newR()
				x, acc := randVec(r, 9000*40), randVec(r, 40)
				for i := 0; i < 9000; i++ {
					for k, v := range x[i*40 : (i+1)*40] {
						acc[k] += v
					}
				}
				return bitsOf(acc)
			},
		},
		{
			name: "softmaxCE",
			run: func() []uint64 {
				r := newR()
				const n, c = 20000, 10
				z := randVec(r, n*c)
				y := randLabels(r, n, c)
				dz := make([]float32, n*c)
				loss, correct := softmaxCE(z, y, c, 0.01, dz, make([]float64, n))
				return append(bitsOf(dz), math.Float64bits(loss), uint64(correct))
			},
		},
		{
			name: "bceWithLogits",
			run: func() []uint64 {
				r := newR()
				const n = 100000
				z := randVec(r, n)
				_, y := randPairs(r, n, 10)
				dz := make([]float32, n)
				loss, correct := bceWithLogits(z, y, 0.5, dz, make([]float64, n))
				return append(bitsOf(dz), math.Float64bits(loss), uint64(correct))
			},
		},
		{
			name: "adam",
			run: func() []uint64 {
				r := newR()
				p, g := randVec(r, 200000), randVec(r, 200000)
				o, err := optim.NewAdam(len(p), optim.DefaultAdam(0.01, 1e-4))
				if err != nil {
					panic(err)
				}
				for range 3 {
					if err := o.Step(p, g); err != nil {
						panic(err)
					}
				}
				return bitsOf(p, o.M, o.V)
			},
		},
		{
			name: "sparseAdam",
			run: func() []uint64 {
				r := newR()
				p := randVec(r, 20000*16)
				o, err := optim.NewSparseAdam(p, 16, optim.DefaultSparseAdam(0.01))
				if err != nil {
					panic(err)
				}
				return runSparseSteps(r, o, p, 20000, 16)
			},
		},
		{
			name: "sparseAdagrad",
			run: func() []uint64 {
				r := newR()
				p := randVec(r, 20000*16)
				o, err := optim.NewSparseAdagrad(p, 16, optim.DefaultSparseAdagrad(0.01))
				if err != nil {
					panic(err)
				}
				return runSparseSteps(r, o, p, 20000, 16)
			},
		},
		{
			name: "firstNonFinite",
			run: func() []uint64 {
				x := make([]float32, 300000)
				x[250000], x[170001] = float32(math.Inf(1)), float32(math.NaN())
				y := make([]float32, 300000)
				return []uint64{uint64(firstNonFinite(x)), uint64(firstNonFinite(y))}
			},
			ref: func() []uint64 { return []uint64{170001, math.MaxUint64} },
		},
	}
}

// relCase is a typed block with relation-mean gradients to scatter.
func relCase(w int) (*relMean[float32], *sample.Block, []float32) {
	r := rand.New(rand.NewPCG(3, 5))
	h := dblpLike()
	cfg := Config{Arch: ArchRGCN, Hidden: w, Classes: 3, Layers: 1, Hetero: h}
	b := &benchHeteroBlocks(r, h, 3000, 6, 1)[0]
	types := make([]int32, b.NumSrc())
	for i, o := range b.Orig {
		types[i] = int32(typeIndexOf(h, o))
	}
	a := newRelMean[float32](cfg)
	a.index(types, b.NumDst)
	for rel, t := range a.relDst {
		a.dagg[rel] = randVec(r, len(a.idx[t])*w)
	}
	return &a, b, randVec(r, b.NumSrc()*w)
}

// runSparseSteps runs three steps of o over random ascending row subsets.
func runSparseSteps(r *rand.Rand, o optim.SparseOptimizer, p []float32, rows, dim int) []uint64 {
	for range 3 {
		var idx []int64
		for i := 0; i < rows; i++ {
			if r.IntN(3) > 0 {
				idx = append(idx, int64(i))
			}
		}
		if err := o.Step(idx, randVec(r, len(idx)*dim)); err != nil {
			panic(err)
		}
	}
	st := make([]float32, rows*o.StateWidth())
	all := make([]int64, rows)
	for i := range all {
		all[i] = int64(i)
	}
	o.ExportState(all, st)
	return bitsOf(p, st)
}

// TestKernelsThreadIndependent runs every parallel kernel on 1 and 4
// threads and requires identical bits (and, where given, the serial
// code's bits).
func TestKernelsThreadIndependent(t *testing.T) {
	for _, tc := range kernelCases() {
		t.Run(tc.name, func(t *testing.T) {
			one := atThreads(1, tc.run)
			four := atThreads(4, tc.run)
			require.NotEmpty(t, one)
			assert.True(t, slices.Equal(one, four), "1 and 4 threads differ")
			if tc.ref != nil {
				assert.True(t, slices.Equal(one, atThreads(1, tc.ref)), "differs from the serial code")
			}
		})
	}
}

// threadModelCase is a model trained a few steps in TestTrainThreadIndependent.
type threadModelCase struct {
	name   string
	cfg    Config
	sparse bool // layer 0 reads CSR rows
	link   bool // pairs instead of labels
	bf16   bool // the layers' products in bf16 (emulated: kernels.NewBF16Emulated)
}

func threadModelCases() []threadModelCase {
	base := Config{InDim: 24, Hidden: 32, Classes: 6, Layers: 2, Dropout: 0.2, InputDropout: 0.1}
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	h := dblpLike()
	hb := dblpLike()
	hb.Bases = 2
	return []threadModelCase{
		{name: "sage", cfg: with(func(c *Config) { c.Arch = ArchSAGE })},
		{name: "sage-sparse", cfg: with(func(c *Config) { c.Arch = ArchSAGE }), sparse: true},
		{name: "sage-max", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchSAGE, SAGEOpts(SAGEMax) })},
		{name: "sage-sum", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchSAGE, SAGEOpts(SAGESum) })},
		{name: "sage-pool", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchSAGE, SAGEOpts(SAGEPool) })},
		{name: "sage-max-sparse", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchSAGE, SAGEOpts(SAGEMax) }), sparse: true},
		{name: "sage-sum-sparse", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchSAGE, SAGEOpts(SAGESum) }), sparse: true},
		{name: "sage-pool-sparse", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchSAGE, SAGEOpts(SAGEPool) }), sparse: true},
		{name: "gcn", cfg: with(func(c *Config) { c.Arch = ArchGCN })},
		{name: "gcn-sparse", cfg: with(func(c *Config) { c.Arch = ArchGCN }), sparse: true},
		{name: "gat", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchGAT, GATOpts(2, 0.2) })},
		{name: "sage-residual-norm-jk-cat", cfg: with(func(c *Config) { c.Arch, c.Residual, c.Norm, c.JK = ArchSAGE, true, NormLayer, JKCat })},
		{name: "sage-sparse-residual-jk-max", cfg: with(func(c *Config) { c.Arch, c.Residual, c.JK = ArchSAGE, true, JKMax }), sparse: true},
		{name: "gat-norm-jk-last", cfg: with(func(c *Config) { c.Arch, c.Opts, c.Norm, c.JK = ArchGAT, GATOpts(2, 0.2), NormLayer, JKLast })},
		{name: "gcn-link-mlp-residual-norm", cfg: with(func(c *Config) { c.Arch, c.Decoder, c.Residual, c.Norm = ArchGCN, DecoderMLP, true, NormLayer }), link: true},
		{name: "gin", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchGIN, GINOpts(true, 0.1) })},
		{name: "gin-sparse", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchGIN, GINOpts(true, 0.1) }), sparse: true},
		{name: "gine", cfg: with(func(c *Config) { c.Arch, c.Opts, c.EdgeDim = ArchGINE, GINOpts(true, 0), 4 })},
		{name: "gine-sparse", cfg: with(func(c *Config) { c.Arch, c.EdgeDim = ArchGINE, 4 }), sparse: true},
		{name: "gatv2", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchGATv2, GATOpts(2, 0.2) })},
		{name: "gatv2-sparse", cfg: with(func(c *Config) { c.Arch, c.Opts = ArchGATv2, GATOpts(2, 0.2) }), sparse: true},
		{name: "gatv2-edge", cfg: with(func(c *Config) { c.Arch, c.Opts, c.EdgeDim = ArchGATv2, GATOpts(2, 0.2), 5 })},
		{name: "gat-edge", cfg: with(func(c *Config) { c.Arch, c.Opts, c.EdgeDim = ArchGAT, GATOpts(2, 0.2), 5 })},
		{name: "sage-link-dot", cfg: with(func(c *Config) { c.Arch, c.Decoder = ArchSAGE, DecoderDot }), link: true},
		{name: "gcn-link-mlp", cfg: with(func(c *Config) { c.Arch, c.Decoder = ArchGCN, DecoderMLP }), link: true},
		{name: "rgcn", cfg: Config{Arch: ArchRGCN, Hidden: 32, Classes: 5, Layers: 2, InputDropout: 0.1, Dropout: 0.2, Hetero: h}},
		{name: "rgcn-bases", cfg: Config{Arch: ArchRGCN, Hidden: 96, Classes: 5, Layers: 2, Dropout: 0.2, Hetero: hb}},
		{name: "hsage", cfg: Config{Arch: ArchHSAGE, Hidden: 32, Classes: 5, Layers: 2, InputDropout: 0.1, Hetero: h}},
		// HGB style: homogeneous layers over the typed blocks.
		{name: "gcn-hgb", cfg: Config{Arch: ArchGCN, Hidden: 32, Classes: 5, Layers: 2, InputDropout: 0.1, Dropout: 0.2, Hetero: h}},
		{name: "gat-hgb", cfg: Config{Arch: ArchGAT, Hidden: 32, Classes: 5, Layers: 2, Dropout: 0.2, Opts: GATOpts(2, 0.2), Hetero: h}},
		{name: "rgcn-edge", cfg: Config{Arch: ArchRGCN, Hidden: 32, Classes: 5, Layers: 2, Dropout: 0.2, EdgeDim: 3, Hetero: h}},
		{name: "hsage-edge", cfg: Config{Arch: ArchHSAGE, Hidden: 32, Classes: 5, Layers: 2, EdgeDim: 3, Hetero: h}},
	}
}

// trainFew trains tc's model three steps with Adam on one large batch and
// returns the final parameters' bits.
func trainFew(t *testing.T, tc threadModelCase) []uint64 {
	out := trainFewAs(t, tc, inputMatrix, false)
	return out[:len(out)-1]
}

// inputForm is how trainFewAs hands a model its dense input rows.
type inputForm int

const (
	inputMatrix     inputForm = iota // Batch.X
	inputViews                       // Batch.XRows: views of the rows
	inputBF16Matrix                  // Batch.X of the rows rounded to bf16
	inputBF16Views                   // Batch.XRows16: views of the bf16 rows
)

// trainFewAs is trainFew with the dense inputs in the given form, with
// every layer's fused passes hidden (plainLayer) when unfused is set, and
// the bits of an evaluation loss after the steps appended.
func trainFewAs(t *testing.T, tc threadModelCase, form inputForm, unfused bool) []uint64 {
	r := rand.New(rand.NewPCG(11, 13))
	var b sample.Batch
	if h := tc.cfg.Hetero; h != nil {
		b.Blocks = benchHeteroBlocks(r, h, 2000, 6, tc.cfg.Layers)
		withEdgeFeat(r, b.Blocks, tc.cfg.EdgeDim)
		b.XT = heteroInputs(r, h, &b.Blocks[0])
	} else {
		b.Blocks = synthBlocks(r, []int{40000, 12000, 3000}, []int{8, 6}, 9)
		if tc.cfg.EdgeDim > 0 {
			withEdgeFeatures(r, b.Blocks, tc.cfg.EdgeDim)
		}
		x := randFeatures(r, b.Blocks[0].NumSrc()*tc.cfg.InDim)
		if tc.sparse {
			for k := range x {
				if k%3 != 0 {
					x[k] = 0
				}
			}
			xs := &sample.SparseRows{}
			xs.Reset(tc.cfg.InDim)
			for i := range b.Blocks[0].NumSrc() {
				xs.AppendDense(x[i*tc.cfg.InDim : (i+1)*tc.cfg.InDim])
			}
			b.XS = xs
		} else {
			b.X = x
		}
		if !tc.sparse {
			w := tc.cfg.InDim
			bits := make([]uint16, len(x))
			if form == inputBF16Matrix || form == inputBF16Views {
				half.Narrow(half.BF16, bits, x)
				half.Widen(half.BF16, x, bits)
			}
			for i := range b.Blocks[0].NumSrc() {
				switch form {
				case inputViews:
					b.XRows = append(b.XRows, x[i*w:(i+1)*w:(i+1)*w])
				case inputBF16Views:
					b.XRows16 = append(b.XRows16, bits[i*w:(i+1)*w:(i+1)*w])
				}
			}
			if form == inputViews || form == inputBF16Views {
				b.X, b.XHalf = nil, half.BF16
			}
		}
	}
	seeds := b.Blocks[len(b.Blocks)-1].NumDst
	if tc.link {
		b.Pairs, b.PairLabels = randPairs(r, 3*seeds, seeds)
	} else {
		b.Labels = randLabels(r, seeds, tc.cfg.Classes)
	}
	if d := tc.cfg.EdgeDim; d > 0 {
		withEdgeFeatures(r, b.Blocks, d)
	}
	m, err := NewModel(tc.cfg, 5)
	require.NoError(t, err)
	if unfused {
		for l, ly := range m.n.layers {
			m.n.layers[l] = plainLayer[float32]{ly}
		}
	}
	if tc.bf16 {
		p := kernels.NewBF16Emulated()
		defer p.Close()
		m.UseBF16(p)
	}
	opt, err := optim.NewAdam(len(m.Params()), optim.DefaultAdam(0.01, 1e-4))
	require.NoError(t, err)
	var out []uint64
	for s := range 3 {
		clearPar(m.Grads())
		loss, _, err := m.Train(&b, 1/float32(seeds), MaskKey{Seed: 9, Step: int64(s)})
		require.NoError(t, err)
		out = append(out, math.Float64bits(loss))
		require.NoError(t, opt.Step(m.Params(), m.Grads()))
	}
	out = append(out, bitsOf(m.Params())...)
	loss, _, err := m.Evaluate(&b)
	require.NoError(t, err)
	return append(out, math.Float64bits(loss))
}

// plainLayer hides a layer's fused passes (fusedForward, fusedBackward):
// the model then runs its activations as separate passes.
type plainLayer[T Float] struct{ Layer[T] }

// TestFusedAndViewedPassesMatch: the layers that run the activation
// inside their own passes (fusedForward, fusedBackward), and inputs given
// as views of stored rows (float32, or bf16 widened as they are read)
// instead of a gathered matrix, give the bits of the plain passes over
// gathered rows, training and evaluating, on 1 and 3 threads.
func TestFusedAndViewedPassesMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on large blocks")
	}
	for _, tc := range threadModelCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []int{1, 3} {
				plain := atThreads(p, func() []uint64 { return trainFewAs(t, tc, inputMatrix, true) })
				fused := atThreads(p, func() []uint64 { return trainFewAs(t, tc, inputMatrix, false) })
				require.Equal(t, plain, fused, "fused passes, %d threads", p)
				if tc.cfg.Hetero == nil && !tc.sparse { // views are of dense rows
					viewed := atThreads(p, func() []uint64 { return trainFewAs(t, tc, inputViews, false) })
					require.Equal(t, plain, viewed, "row views, %d threads", p)
					// bf16 rows: their views give what the same rows
					// widened into a matrix give.
					widened := atThreads(p, func() []uint64 { return trainFewAs(t, tc, inputBF16Matrix, true) })
					viewed16 := atThreads(p, func() []uint64 { return trainFewAs(t, tc, inputBF16Views, false) })
					require.Equal(t, widened, viewed16, "bf16 row views, %d threads", p)
					require.NotEqual(t, plain, widened, "the bf16 rows are other inputs")
				}
			}
		})
	}
}

// TestTrainThreadIndependent trains every architecture (dense and sparse
// inputs, node and link heads, heterogeneous) a few steps on 1 and 3
// threads: the losses and the final weights must be the same bits.
func TestTrainThreadIndependent(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on large blocks")
	}
	for _, tc := range threadModelCases() {
		t.Run(tc.name, func(t *testing.T) {
			one := atThreads(1, func() []uint64 { return trainFew(t, tc) })
			three := atThreads(3, func() []uint64 { return trainFew(t, tc) })
			if !slices.Equal(one, three) {
				i := 0
				for i < len(one) && one[i] == three[i] {
					i++
				}
				t.Fatalf("1 and 3 threads differ first at value %d of %d", i, len(one))
			}
		})
	}
}

// TestKernelInputsCrossMinWork guards the tests above against shrinking
// below the size where the kernels start goroutines.
func TestKernelInputsCrossMinWork(t *testing.T) {
	b := bigBlock(rand.New(rand.NewPCG(1, 1)), 20000, 6000, 10)
	assert.Greater(t, len(b.Indices)*24, par.MinWork)
}
