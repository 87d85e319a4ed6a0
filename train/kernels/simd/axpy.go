package simd

import "fmt"

// AxpyRows adds weighted rows to dst: for each column c < w,
//
//	dst[c] = dst[c] + a[0]·src[idx[0]*stride+c] + a[1]·src[idx[1]*stride+c] + ...
//
// in k order, each term one rounded product then one rounded addition,
// and a row whose weight is ±0 skipped: the bits of one Axpy(a[k], row
// idx[k], dst) per k, in k order (gonum's Saxpy rounds the same two
// operations and returns at once for alpha == 0, so that 0·Inf or 0·NaN
// never reaches dst and -0 stays -0), NaN payloads included.
// It keeps up to 64 columns of dst in registers over all the rows, so dst
// is read and written once instead of once per row. It reports false,
// having done nothing, where the CPU lacks AVX (the caller then runs its
// Axpy loop, same bits). w must be positive and len(a) at least len(idx);
// it panics if dst is shorter than w or a row lies outside src.
func AxpyRows(dst, src []float32, w, stride int, idx []int32, a []float32) bool {
	if !hasRows() {
		return false
	}
	if w <= 0 || stride < w || len(a) < len(idx) {
		panic(fmt.Sprintf("simd: AxpyRows needs columns (%d), a stride (%d) of at least the columns and a weight per row (%d for %d)", w, stride, len(a), len(idx)))
	}
	if len(idx) == 0 {
		return true
	}
	Check(len(dst), len(src), w, stride, idx)
	axpyRowsAVX(&dst[0], &src[0], w, stride, len(idx), &idx[0], &a[0])
	return true
}
