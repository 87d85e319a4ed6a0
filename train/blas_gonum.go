//go:build gonumblas

package train

// BLASName names the BLAS implementation the model's matrix products use:
// gonum's pure-Go kernels, selected with -tags gonumblas (no cgo, no
// libopenblas needed; 5-16x slower on the layer sizes of BenchmarkGemm).
const BLASName = "gonum"

// SetBLASThreads is a no-op for gonum's kernels, which split work over up
// to GOMAXPROCS goroutines.
func SetBLASThreads(n int) {}
