//go:build openblas && !gonumblas

package kernels

// -tags openblas runs the model's float32 products on OpenBLAS, the
// default before oneDNN (issue 17): kept so the two can be compared end to
// end, and for machines without libdnnl.

// BLASName names the kernel the model's float32 matrix products use.
const BLASName = "openblas"

// Path names the numeric path of the model's float32 products: OpenBLAS
// and the core type whose kernels it chose for this CPU (OPENBLAS_CORETYPE
// pins one), e.g. "openblas fp32 haswell".
func Path() string { return "openblas fp32 " + openblasCore() }

// sgemm is the float32 kernel of gemm.
func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	blasSgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
