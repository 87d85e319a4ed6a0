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
	return axpyRows(dst, src, w, stride, idx, a, 1)
}

// AxpyRowsZero is AxpyRows on a dst first set to +0 (each column's sum
// starts from +0: the bits of clearing dst, then AxpyRows), without
// reading dst: a row that is written whole (GAT's gradient of z) is not
// first cleared in memory, then read back.
func AxpyRowsZero(dst, src []float32, w, stride int, idx []int32, a []float32) bool {
	return axpyRows(dst, src, w, stride, idx, a, 0)
}

// axpyRows runs the kernel: load 1 starts each sum from dst, 0 from +0.
func axpyRows(dst, src []float32, w, stride int, idx []int32, a []float32, load int) bool {
	if !hasRows() {
		return false
	}
	if w <= 0 || stride < w || len(a) < len(idx) {
		panic(fmt.Sprintf("simd: AxpyRows needs columns (%d), a stride (%d) of at least the columns and a weight per row (%d for %d)", w, stride, len(a), len(idx)))
	}
	if len(idx) == 0 {
		if load == 0 {
			clear(dst[:w])
		}
		return true
	}
	Check(len(dst), len(src), w, stride, idx)
	axpyRowsAVX(&dst[0], &src[0], w, stride, len(idx), &idx[0], &a[0], load)
	return true
}
