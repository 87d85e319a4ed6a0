//go:build !gonumblas

package train

// By default every matrix product of the model runs on OpenBLAS: gonum's
// blas32/blas64 are routed to it through gonum.org/v1/netlib (cgo). It
// needs libopenblas-dev at build time. BenchmarkGemm measured it about 5x
// faster than gonum's pure-Go kernels on our layer sizes; build with
// -tags gonumblas for the pure-Go fallback.

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
import "C"

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// BLASName names the BLAS implementation the model's matrix products use.
const BLASName = "openblas"

// init swaps gonum's process-wide BLAS implementation; this is the
// mechanism gonum provides for it, and it runs before any model exists.
func init() {
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
}

// SetBLASThreads keeps OpenBLAS single-threaded whatever n is: gemm
// parallelises by rows of the output itself, which gives the same bits for
// every thread count (OpenBLAS's threading does not), and an idle OpenBLAS
// thread pool would only spin against the Go workers. n is accepted so both
// BLAS builds share one signature.
func SetBLASThreads(n int) {
	_ = n
	C.openblas_set_num_threads(1)
}
