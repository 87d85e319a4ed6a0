//go:build !gonumblas && !openblas

package kernels

// openblasKernels returns OpenBLAS's float32 gemm, which the default build
// still links (for float64) but no longer uses for the model: BenchmarkGemm
// and TestGemmKernelsAgree keep comparing the two without extra tags.
func openblasKernels() []benchKernel {
	return []benchKernel{{name: "openblas", gemm: func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		gemmSplit(blasSgemm, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}}}
}
