package train

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"mpignn/sample"
)

// benchKernel is one matrix-product implementation BenchmarkGemm times.
// weightB marks a kernel that reuses a bf16 copy of op(B) made on its
// first call, i.e. weights converted once per step: it only applies to the
// products whose B is a weight matrix (fwd, dH), not to dW.
type benchKernel struct {
	name    string
	gemm    gemmKernel[float32]
	weightB bool
	close   func()
}

// gemmKernels lists the build's kernel (BLASName, first: the reference of
// TestGemmKernelsAgree), OpenBLAS beside it when the build links it but
// does not use it for float32 (the default oneDNN build), and the kernels
// of the libraries this test binary was built with (-tags dnnl, xsmm).
func gemmKernels(tb testing.TB) []benchKernel {
	ks := []benchKernel{{name: BLASName, gemm: gemm[float32]}}
	ks = append(ks, openblasKernels()...)
	ks = append(ks, dnnlKernels(tb)...)
	return append(ks, xsmmKernels(tb)...)
}

// BenchmarkGemm times the three matrix products of one GraphSAGE layer at
// the sizes of the peer-comparison run (rows = destination nodes of a
// block, in = 100 features or 256 hidden, out = 256):
//
//	fwd:   Z  = H·W          (rows x in)·(in x out)
//	dW:    gW = Hᵀ·dZ        (in x rows)·(rows x out)
//	dH:    dH = dZ·Wᵀ        (rows x out)·(out x in)
//
// with every kernel the binary has (the default oneDNN fp32 and OpenBLAS;
// -tags dnnl adds oneDNN bf16, -tags xsmm libxsmm), each over the
// same fixed row blocks; GFLOP/s is reported per sub-benchmark, named
// kernel/op/rows/in. bf16 timings include converting the operands.
func BenchmarkGemm(b *testing.B) {
	// One BLAS thread per GOMAXPROCS, so `-cpu 1,2` compares both
	// implementations at equal core counts.
	SetBLASThreads(runtime.GOMAXPROCS(0))
	kernels := gemmKernels(b)
	defer func() {
		for _, k := range kernels {
			if k.close != nil {
				k.close()
			}
		}
	}()
	const out = 256
	r := rand.New(rand.NewPCG(1, 2))
	for _, rows := range []int{10_000, 50_000, 90_000} {
		for _, in := range []int{100, 256} {
			h := randFeatures(r, rows*in)
			w := randFeatures(r, in*out)
			dz := randFeatures(r, rows*out)
			z := make([]float32, rows*out)
			gw := make([]float32, in*out)
			dh := make([]float32, rows*in)
			flops := 2 * float64(rows) * float64(in) * float64(out)
			for _, op := range []struct {
				name    string
				weightB bool // B is the weight matrix
				f       func(g gemmKernel[float32])
			}{
				{"fwd", true, func(g gemmKernel[float32]) { g(false, false, rows, out, in, 1, h, in, w, out, 0, z, out) }},
				{"dW", false, func(g gemmKernel[float32]) { g(true, false, in, out, rows, 1, h, in, dz, out, 0, gw, out) }},
				{"dH", true, func(g gemmKernel[float32]) { g(false, true, rows, in, out, 1, dz, out, w, out, 0, dh, in) }},
			} {
				for _, k := range kernels {
					if k.weightB && !op.weightB {
						continue
					}
					b.Run(fmt.Sprintf("%s/%s/rows=%d/in=%d", k.name, op.name, rows, in), func(b *testing.B) {
						// One untimed call (b.Loop starts the clock): the
						// first kernel of a shape would otherwise pay the
						// page faults of the fresh output, and oneDNN and
						// libxsmm their per-shape setup, which a model pays
						// once per shape, not per step.
						op.f(k.gemm)
						for b.Loop() {
							op.f(k.gemm)
						}
						b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// peerBlocks builds a block chain with the level sizes a batch of the
// peer-comparison run has (200k nodes, average in-degree 40, fanout
// 15,10,5, batch 1024): about 196k input nodes, 52k and 6k intermediate
// destinations, 1024 seeds. scale shrinks every level (1 = full size).
func peerBlocks(r *rand.Rand, scale int) []sample.Block {
	sizes := []int{196_000 / scale, 52_000 / scale, 6_000 / scale, 1024 / scale}
	return synthBlocks(r, sizes, []int{15, 10, 5}, 0)
}

// BenchmarkTrainStep times one full forward+backward of the peer-comparison
// model (100 -> 256 -> 256 -> 47, 3 layers, dropout 0.5) on one batch.
// Per-phase time is reported so the BLAS share can be seen.
func BenchmarkTrainStep(b *testing.B) {
	SetBLASThreads(runtime.GOMAXPROCS(0))
	for _, scale := range []int{1, 4} {
		b.Run(fmt.Sprintf("%s/batch=%d", BLASName, 1024/scale), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			cfg := Config{InDim: 100, Hidden: 256, Classes: 47, Layers: 3, Dropout: 0.5}
			blocks := peerBlocks(r, scale)
			x := randFeatures(r, blocks[0].NumSrc()*cfg.InDim)
			y := randLabels(r, blocks[2].NumDst, cfg.Classes)
			m, err := NewModel(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			var times PhaseTimes
			step := int64(0)
			for b.Loop() {
				w := startWatch(&times)
				if _, _, err := m.n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, dense(x), 1/1024., true, MaskKey{Seed: 1, Step: step}); err != nil {
					b.Fatal(err)
				}
				w.lap(PhaseForward)
				m.n.backward(blocks, true)
				w.lap(PhaseBackward)
				step++
			}
			n := float64(b.N)
			b.ReportMetric(times.Seconds(PhaseForward)/n*1e3, "fwd-ms/op")
			b.ReportMetric(times.Seconds(PhaseBackward)/n*1e3, "bwd-ms/op")
			b.ReportMetric(stepFlops(cfg, blocks)*n/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// stepFlops counts the dense matrix-product flops of one training step.
func stepFlops(cfg Config, blocks []sample.Block) float64 {
	f := 0.0
	for l, bl := range blocks {
		in, out := cfg.LayerDims(l)
		one := 2 * float64(bl.NumDst) * float64(in) * float64(out)
		f += 2 * one // forward: self and neighbor products
		f += 2 * one // weight gradients
		if l > 0 {
			f += 2 * one // input gradients
		}
	}
	return f
}
