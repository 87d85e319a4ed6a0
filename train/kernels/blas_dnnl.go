//go:build !gonumblas && !openblas

package kernels

// By default the model's float32 products run on oneDNN's fp32 gemm
// (dnnl_sgemm, dnnl_sgemm.go; needs libdnnl-dev): on this project's CPU it
// beat Debian's OpenBLAS 0.3.21, which runs its AVX2 kernels there, by
// 1.2-3x on every layer shape of BenchmarkGemm (BENCHMARKS.md, issue 17).
// float64 products (gradient checks) stay on OpenBLAS. -tags openblas
// builds the OpenBLAS float32 path, -tags gonumblas the pure-Go one.

// BLASName names the kernel the model's float32 matrix products use.
const BLASName = "dnnl-fp32"

// Path names the numeric path of the model's float32 products: the
// library, the precision and the instruction-set class its kernel was
// compiled for ("onednn fp32 avx2"). Two processes on the same path
// compute the same bits; see isa.go for why the class matters, and for
// the marks Go's FMA path adds (pathClass).
func Path() string { return "onednn fp32 " + pathClass(dnnlClass(), goFMA()) }

// sgemm is the float32 kernel of gemm.
func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	dnnlSgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
