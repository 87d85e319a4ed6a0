//go:build gonumblas

package kernels

// BLASName names the kernel the model's float32 matrix products use:
// gonum's pure-Go kernels, selected with -tags gonumblas (no cgo, no
// libopenblas or libdnnl needed; 5-16x slower on the layer sizes of
// BenchmarkGemm). float64 products use them too.
const BLASName = "gonum"

// Path names the numeric path of the model's float32 products: gonum's
// assembly uses SSE2 on every x86-64 CPU, so there is one class.
func Path() string { return "gonum fp32 sse2" }

// sgemm is the float32 kernel of gemm.
func sgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	blasSgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SetBLASThreads is a no-op for gonum's kernels, which split work over up
// to GOMAXPROCS goroutines.
func SetBLASThreads(n int) {}
