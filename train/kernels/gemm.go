package kernels

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// Float is the element type of every kernel: float32 for the model,
// float64 for its gradient checks.
type Float interface{ ~float32 | ~float64 }

// Gemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices:
// float32 products (the model) with sgemm, the build's kernel (oneDNN by
// default, see BLASName), float64 ones (the gradient checks) with
// whichever BLAS implementation blas64 uses (OpenBLAS, or gonum with
// -tags gonumblas). op(A) is m x k, op(B) is k x n and C is m x n.
//
// Large products are cut into blocks of gemmBlock rows of C, spread over
// GOMAXPROCS goroutines, each calling a single-threaded kernel. The cut
// depends only on the shape, never on the number of threads, so every
// element of C comes from the same BLAS call with the same operands on any
// machine: results are bit-identical for any thread count. (OpenBLAS's own
// threading, and cuts that depend on the thread count, change the low bits:
// its kernels treat a block's edge rows differently.)
func Gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	gemmSplit(gemmSerial[T], tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	if m > 0 && n > 0 {
		nudgeULP(c) // nothing, except in the golden tests' -tags gemmulp build
	}
}

// gemmKernel is one single-threaded row-major product implementation:
// C = alpha·op(A)·op(B) + beta·C on the calling goroutine. gemmSplit runs
// any of them over the same fixed row blocks, so every kernel library keeps
// the thread-count independence of gemm.
type gemmKernel[T Float] func(tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// gemmSplit is gemm with the per-block product supplied by serial.
func gemmSplit[T Float, E any](serial func(tA, tB bool, m, n, k int, alpha T, a []E, lda int, b []E, ldb int, beta T, c []T, ldc int),
	tA, tB bool, m, n, k int, alpha T, a []E, lda int, b []E, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if m <= gemmBlock || m*n*k < gemmParallelWork {
		serial(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	blocks := (m + gemmBlock - 1) / gemmBlock
	workers := min(runtime.GOMAXPROCS(0), blocks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				blk := int(next.Add(1) - 1)
				if blk >= blocks {
					return
				}
				lo := blk * gemmBlock
				hi := min(lo+gemmBlock, m)
				aoff := lo * lda // op(A) rows are rows of A
				if tA {
					aoff = lo // op(A) rows are columns of A
				}
				serial(tA, tB, hi-lo, n, k, alpha, a[aoff:], lda, b, ldb, beta, c[lo*ldc:], ldc)
			}
		}()
	}
	wg.Wait()
}

// gemmBlock is the number of rows of C per BLAS call in a split product, and
// gemmParallelWork the m·n·k below which a product is one call.
const (
	gemmBlock        = 64
	gemmParallelWork = 1 << 18
)

// gemmSerial is gemm on the calling goroutine.
func gemmSerial[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb, ar, ac, br, bc := blasShapes(tA, tB, m, n, k)
	switch av := any(a).(type) {
	case []float32:
		sgemm(tA, tB, m, n, k, float32(alpha), av, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blas64.Gemm(ta, tb, float64(alpha),
			blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: av},
			blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: any(b).([]float64)},
			float64(beta),
			blas64.General{Rows: m, Cols: n, Stride: ldc, Data: any(c).([]float64)})
	}
}

// blasShapes returns gonum's transpose flags and the stored shapes (rows x
// cols) of A and B for C = op(A)·op(B) with op(A) m x k and op(B) k x n.
func blasShapes(tA, tB bool, m, n, k int) (ta, tb blas.Transpose, ar, ac, br, bc int) {
	ta, tb = blas.NoTrans, blas.NoTrans
	ar, ac, br, bc = m, k, k, n
	if tA {
		ta, ar, ac = blas.Trans, k, m
	}
	if tB {
		tb, br, bc = blas.Trans, n, k
	}
	return ta, tb, ar, ac, br, bc
}

// blasSgemm is a gemmKernel over gonum's blas32, i.e. OpenBLAS (routed in
// blas_openblas.go) or gonum's pure-Go kernels (-tags gonumblas): the
// float32 kernel of the openblas and gonumblas builds.
func blasSgemm(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb, ar, ac, br, bc := blasShapes(tA, tB, m, n, k)
	blas32.Gemm(ta, tb, alpha,
		blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta,
		blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// native is gonum's pure-Go BLAS, used directly for the short row
// operations of the sparse kernels: its SIMD assembly beats a Go loop by 2x
// there, and unlike the cgo BLAS it costs nothing per call.
type native = gonum.Implementation

// Axpy computes y += alpha·x over len(y) elements.
func Axpy[T Float](alpha T, x, y []T) {
	switch yv := any(y).(type) {
	case []float32:
		native{}.Saxpy(len(yv), float32(alpha), any(x).([]float32), 1, yv, 1)
	case []float64:
		native{}.Daxpy(len(yv), float64(alpha), any(x).([]float64), 1, yv, 1)
	}
}

// span is the number of elements a row-major r x c operand with leading
// dimension ld occupies.
func span(r, c, ld int) int {
	if r == 0 || c == 0 {
		return 0
	}
	return (r-1)*ld + c
}

// checkGemm panics unless the operands of C = op(A)·op(B) + C (lengths
// na, nb, nc) hold the row-major shapes gemm is asked for: the checks
// gonum's BLAS makes, for kernels that read raw pointers (oneDNN). A bad
// shape is a programming error of the model, never bad input.
func checkGemm(tA, tB bool, m, n, k, na, lda, nb, ldb, nc, ldc int) {
	_, _, ar, ac, br, bc := blasShapes(tA, tB, m, n, k)
	switch {
	case m < 0 || n < 0 || k < 0:
		panic(fmt.Sprintf("kernels: gemm: negative dimension %dx%dx%d", m, n, k))
	case lda < max(1, ac) || ldb < max(1, bc) || ldc < max(1, n):
		panic(fmt.Sprintf("kernels: gemm %dx%dx%d: leading dimensions %d,%d,%d too small", m, n, k, lda, ldb, ldc))
	case na < span(ar, ac, lda) || nb < span(br, bc, ldb) || nc < span(m, n, ldc):
		panic(fmt.Sprintf("kernels: gemm %dx%dx%d: operands of %d,%d,%d elements too short", m, n, k, na, nb, nc))
	}
}

// scaleRows computes C = beta·C on an m x n block, setting it to zero for
// beta = 0 (BLAS semantics: C is not read then, so NaNs in it vanish).
func scaleRows[T Float](m, n int, beta T, c []T, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// RowBlocks returns how Gemm cuts a product with m rows of C, n columns
// and k inner terms into row blocks: blocks of size rows (the last may be
// shorter), count of them; one block of m rows when it does not cut.
func RowBlocks(m, n, k int) (size, count int) {
	if m <= gemmBlock || m*n*k < gemmParallelWork {
		return m, 1
	}
	return gemmBlock, (m + gemmBlock - 1) / gemmBlock
}

// GemmRows runs, on the calling goroutine, the part of Gemm(false, tB,
// m, n, k, 1, a, lda, b, ldb, beta, c, ldc) that computes rows [lo, hi) of
// C, for a block [lo, hi) of RowBlocks(m, n, k): the very call Gemm makes
// for that block, so the bits are Gemm's. A caller that runs several
// products over the same rows block by block, or follows a product with a
// pass over its rows, keeps each block in cache between them instead of
// streaming all of C through memory once per pass.
func GemmRows[T Float](tB bool, lo, hi, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if hi <= lo || n == 0 {
		return
	}
	gemmSerial(false, tB, hi-lo, n, k, 1, a[lo*lda:], lda, b, ldb, beta, c[lo*ldc:], ldc)
	if lo == 0 {
		nudgeULP(c) // as Gemm does after the whole product (gemmulp builds only)
	}
}
