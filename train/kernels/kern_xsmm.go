//go:build xsmm

package kernels

// libxsmm fp32 kernels, built only with -tags xsmm (needs libxsmm-dev,
// libxsmm 1.17, static libraries). libxsmm JIT-compiles one kernel per
// block shape; it works column-major and, in 1.17, supports no transposed
// first operand, so a row-major product with op(B) = Bᵀ transposes B once
// per call into a scratch copy. Only alpha = 1 and beta ∈ {0, 1} exist
// there, which is all the model uses.

// #cgo LDFLAGS: -lxsmm -lxsmmnoblas -lpthread -lrt -ldl -lm
// #include <stdint.h>
// #include <libxsmm.h>
//
// // kern_xsmm runs the row-major block C(m x n) = op(A)·B + beta·C as the
// // column-major Cᵀ = Bᵀ·op(A)ᵀ; ta = 1 means op(A) = Aᵀ, which is a
// // transposed second operand for libxsmm. Returns nonzero when libxsmm
// // has no kernel for the shape.
// static int kern_xsmm(int ta, int64_t m, int64_t n, int64_t k,
//     const float *a, int64_t lda, const float *b, int64_t ldb,
//     float beta, float *c, int64_t ldc) {
//   int flags = ta ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
//   float alpha = 1.0f;
//   libxsmm_blasint xl = ldb, yl = lda, cl = ldc;
//   libxsmm_smmfunction f = libxsmm_smmdispatch(n, m, k, &xl, &yl, &cl,
//       &alpha, &beta, &flags, NULL);
//   if (!f) return 1;
//   f(b, a, c);
//   return 0;
// }
import "C"

import (
	"fmt"
	"unsafe"
)

// xsmmGemm multiplies through libxsmm's JIT kernels, block by block. It
// keeps the transposed copy of B between calls; products on one xsmmGemm
// must not overlap in time.
type xsmmGemm struct {
	bt []float32 // Bᵀ scratch for op(B) = Bᵀ
}

// newXSMM initialises libxsmm (idempotent) and returns a kernel.
func newXSMM() *xsmmGemm {
	C.libxsmm_init()
	return &xsmmGemm{}
}

// gemm is a gemm-compatible product. It panics on alpha ≠ 1, beta ∉ {0,1}
// or a shape libxsmm cannot compile: those are programming errors, the
// model never asks for them.
func (x *xsmmGemm) gemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if alpha != 1 || (beta != 0 && beta != 1) {
		panic(fmt.Sprintf("kernels: libxsmm supports alpha=1, beta 0 or 1; got alpha=%v beta=%v", alpha, beta))
	}
	if tB {
		// B is n x k (ldb); op(B) = Bᵀ is k x n, stored row-major in bt.
		if cap(x.bt) < k*n {
			x.bt = make([]float32, k*n)
		}
		bt := x.bt[:k*n]
		for i := range n {
			row := b[i*ldb : i*ldb+k]
			for j, v := range row {
				bt[j*n+i] = v
			}
		}
		b, ldb, tB = bt, n, false
	}
	gemmSplit(xsmmSerial, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// xsmmSerial runs one block (op(B) = B always, see gemm).
func xsmmSerial(tA, _ bool, m, n, k int, _ float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta := C.int(0)
	if tA {
		ta = 1
	}
	if C.kern_xsmm(ta, C.int64_t(m), C.int64_t(n), C.int64_t(k),
		(*C.float)(unsafe.Pointer(&a[0])), C.int64_t(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int64_t(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.int64_t(ldc)) != 0 {
		panic(fmt.Sprintf("kernels: libxsmm has no kernel for %dx%dx%d (tA=%v)", m, n, k, tA))
	}
}
