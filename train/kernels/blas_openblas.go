//go:build !gonumblas

package kernels

// Unless built with -tags gonumblas, gonum's blas32/blas64 are routed to
// OpenBLAS through gonum.org/v1/netlib (cgo; needs libopenblas-dev at
// build time): float64 products (gradient checks) always run there, and
// float32 ones with -tags openblas (by default they run on oneDNN, see
// blas_dnnl.go). BenchmarkGemm measured OpenBLAS about 5x faster than
// gonum's pure-Go kernels on our layer sizes.

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int);
// char *openblas_get_corename(void);
import "C"

import (
	"strings"

	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// init swaps gonum's process-wide BLAS implementation; this is the
// mechanism gonum provides for it, and it runs before any model exists.
func init() {
	blas32.Use(netlib.Implementation{})
	blas64.Use(netlib.Implementation{})
}

// SetBLASThreads keeps OpenBLAS single-threaded whatever n is (oneDNN is
// pinned to one thread per call in dnnl_sgemm.go): gemm parallelises by
// rows of the output itself, which gives the same bits for
// every thread count (OpenBLAS's threading does not), and an idle OpenBLAS
// thread pool would only spin against the Go workers. n is accepted so both
// BLAS builds share one signature.
func SetBLASThreads(n int) {
	_ = n
	C.openblas_set_num_threads(1)
}

// openblasCore is the core type OpenBLAS chose its kernels for, lower case.
func openblasCore() string { return strings.ToLower(C.GoString(C.openblas_get_corename())) }
