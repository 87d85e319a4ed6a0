package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
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
	ks := []benchKernel{{name: BLASName, gemm: Gemm[float32]}}
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

// randFeatures returns n standard normal float32 values from r.
func randFeatures(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}
