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

// SetBLASThreads sets the number of threads OpenBLAS uses for one product
// (n < 1 is ignored). Under mpirun give each rank its share of the cores
// (cores per node / ranks per node): OpenBLAS threads busy-wait, so
// oversubscribing cores is much slower than using fewer threads.
func SetBLASThreads(n int) {
	if n >= 1 {
		C.openblas_set_num_threads(C.int(n))
	}
}
