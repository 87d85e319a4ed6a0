//go:build !amd64

package simd

// hasRows: no assembly outside amd64; callers run their portable loops.
func hasRows() bool { return false }

// sumRows is never called where hasRows is false.
func sumRows(dst, src []float32, w, stride int, idx []int32, add bool, scale float32) {
	panic("simd: no row kernel on this architecture")
}

// maskScale is never called where hasRows is false.
func maskScale(d, y []float32, n int, scale float32) {
	panic("simd: no mask kernel on this architecture")
}

// axpyRowsAVX is never called where hasRows is false.
func axpyRowsAVX(dst, src *float32, w, stride, n int, idx *int32, a *float32, load int) {
	panic("simd: no row kernel on this architecture")
}

// dotRows8AVX is never called where hasRows is false.
func dotRows8AVX(out, v *float32, vs int, rows *[8]*float32, f, n, segs int) {
	panic("simd: no dot kernel on this architecture")
}
