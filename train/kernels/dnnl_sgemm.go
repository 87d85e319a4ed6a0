//go:build (!gonumblas && !openblas) || dnnl

package kernels

// oneDNN's fp32 gemm (dnnl_sgemm, oneDNN 2.6, libdnnl-dev): the default
// kernel of every float32 product of the model (blas_dnnl.go), and a
// BenchmarkGemm kernel beside OpenBLAS in -tags openblas,dnnl builds. It
// runs one block of gemmSplit on the calling thread, so results do not
// depend on the thread count.

// #cgo LDFLAGS: -ldnnl -lgomp
// #include <stdint.h>
// #include <omp.h>
// #include <oneapi/dnnl/dnnl.h>
//
// // Debian's oneDNN uses OpenMP, whose thread count is a per-thread
// // setting: every call pins it to 1 on the thread it runs on, because the
// // Go side already runs one block per core.
// static int kern_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k,
//     float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
//     float beta, float *c, int64_t ldc) {
//   omp_set_num_threads(1);
//   return (int)dnnl_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
// }
import "C"

import (
	"fmt"
	"unsafe"
)

// dnnlSgemm is a gemmKernel over oneDNN's fp32 gemm.
//
// Panics, as gonum's BLAS does, only for programming errors: the shapes
// come from the model, and checkGemm refuses a bad shape or a short slice
// here, before C reads memory that is not there (gonum checks the same).
// Past that check dnnl_sgemm can only fail to allocate its packing
// buffers (dnnl_out_of_memory); that is a failed allocation like one of Go's
// own, which the Go runtime makes fatal too, so it panics as well, naming
// the status.
func dnnlSgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(tA, tB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		// C = beta·C; A and B are empty, so there is no &a[0] to pass.
		scaleRows(m, n, beta, c, ldc)
		return
	}
	ta, tb := C.char('N'), C.char('N')
	if tA {
		ta = 'T'
	}
	if tB {
		tb = 'T'
	}
	st := C.kern_sgemm(ta, tb, C.int64_t(m), C.int64_t(n), C.int64_t(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.int64_t(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int64_t(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.int64_t(ldc))
	if st != C.dnnl_success {
		panic(fmt.Sprintf("kernels: dnnl_sgemm %dx%dx%d: status %d (out of memory)", m, n, k, int(st)))
	}
}
