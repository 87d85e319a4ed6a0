//go:build dnnl

package kernels

import "testing"

// dnnlKernels returns oneDNN's fp32 gemm (unless it is the build's
// default kernel, listed first by gemmKernels), its bf16 matmul converting both
// operands per call, and the bf16 matmul reusing a bf16 copy of the weight
// operand (converted once per step in a model), for BenchmarkGemm and the
// agreement test; the bf16 ones only on a CPU with bf16 instructions.
func dnnlKernels(tb testing.TB) []benchKernel {
	fp32 := func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		gemmSplit(dnnlSgemm, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	var ks []benchKernel
	if BLASName != "dnnl-fp32" { // else it is the build's own kernel already
		ks = append(ks, benchKernel{name: "dnnl-fp32", gemm: fp32})
	}
	if !CPUHasBF16() {
		// oneDNN 2.6 has no bf16 matmul here (status 3): NewBF16 refuses
		// such a CPU (TestBF16Gemm).
		return ks
	}
	perCall, err := newDNNLBF16()
	if err != nil {
		tb.Fatal(err)
	}
	weights, err := newDNNLBF16()
	if err != nil {
		tb.Fatal(err)
	}
	// w16 caches the bf16 copy of the one weight matrix it was last given,
	// as a model would keep it for a step.
	var w16 []uint16
	var wOf *float32
	var wLen int
	reuse := func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		br, bc := k, n
		if tB {
			br, bc = n, k
		}
		bs := b[:span(br, bc, ldb)]
		if wOf != &bs[0] || wLen != len(bs) {
			w16 = toBF16(bs, w16)
			wOf, wLen = &bs[0], len(bs)
		}
		weights.gemmB16(tA, tB, m, n, k, alpha, a, lda, w16, ldb, beta, c, ldc)
	}
	return append(ks,
		benchKernel{name: "dnnl-bf16", gemm: perCall.gemm, close: perCall.Close},
		benchKernel{name: "dnnl-bf16w", gemm: reuse, weightB: true, close: weights.Close})
}
