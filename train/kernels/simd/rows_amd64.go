package simd

import "golang.org/x/sys/cpu"

// hasRows reports whether sumRows can run: it needs AVX (VEX-encoded
// 256-bit adds, multiplies and masked moves).
func hasRows() bool { return cpu.X86.HasAVX }

// sumRows is SumRows on checked operands.
func sumRows(dst, src []float32, w, stride int, idx []int32, add bool, scale float32) {
	mode := 0
	if add {
		mode |= rowsLoad
	} else if scale != 1 {
		mode |= rowsScale
	}
	sumRowsAVX(&dst[0], &src[0], w, stride, len(idx), &idx[0], mode, scale)
}

// Modes of sumRowsAVX: start from dst's values (else +0); multiply the
// sums by scale before storing them.
const (
	rowsLoad  = 1
	rowsScale = 2
)

// sumRowsAVX: for each column c < w, dst[c] = (start + Σ_k
// src[idx[k]*stride+c]) (· scale), adding in k order; n = len(idx) > 0.
// In rows_amd64.s.
//
//go:noescape
func sumRowsAVX(dst, src *float32, w, stride, n int, idx *int32, mode int, scale float32)

// maskScale runs maskScaleAVX on the first n (a multiple of 8) values.
func maskScale(d, y []float32, n int, scale float32) { maskScaleAVX(&d[0], &y[0], n, scale) }

// maskScaleAVX is MaskScale's vector loop. In mask_amd64.s.
//
//go:noescape
func maskScaleAVX(d, y *float32, n int, scale float32)

// axpyRowsAVX: for each column c < w, dst[c] = start + Σ_k
// a[k]·src[idx[k]*stride+c] for k = 0..n-1 in order (n > 0), start dst[c]
// (load 1) or +0 (load 0). In axpy_amd64.s.
//
//go:noescape
func axpyRowsAVX(dst, src *float32, w, stride, n int, idx *int32, a *float32, load int)

// dotRows8AVX is DotRows8's vector loop over the first n (a positive
// multiple of 4, at most f) columns of each of segs > 0 segments f apart.
// In dots_amd64.s.
//
//go:noescape
func dotRows8AVX(out, v *float32, vs int, rows *[8]*float32, f, n, segs int)
