package simd

import "fmt"

// SumRows runs, on float32 rows, what train/kernels' SumRows (add false)
// and AddRows (add true) compute: for each column c < w,
//
//	dst[c] = start + src[idx[0]*w+c] + src[idx[1]*w+c] + ...
//
// in k order, one rounded addition each, with start = +0 (then, unless
// scale is 1, one rounded product by scale) or, under add, start = dst[c]
// (no scale). It reports false, having done nothing, where the CPU lacks
// the instructions (the caller then runs its portable loop, same bits).
// idx must be non-empty and w positive; it panics if dst is shorter than w
// or an index lies outside src (the assembly reads raw memory).
func SumRows(dst, src []float32, w int, idx []int32, add bool, scale float32) bool {
	return SumRowsStride(dst, src, w, w, idx, add, scale)
}

// SumRowsStride is SumRows over rows stride values apart in src (row j is
// src[j*stride : j*stride+w]), e.g. a band of columns of a row-major
// matrix.
func SumRowsStride(dst, src []float32, w, stride int, idx []int32, add bool, scale float32) bool {
	if !hasRows() {
		return false
	}
	if len(idx) == 0 || w <= 0 || stride < w {
		panic(fmt.Sprintf("simd: SumRows needs rows (%d), columns (%d) and a stride (%d) of at least the columns", len(idx), w, stride))
	}
	Check(len(dst), len(src), w, stride, idx)
	sumRows(dst, src, w, stride, idx, add, scale)
	return true
}

// Check panics unless dst holds w values and every row idx[k] (w values
// from idx[k]*stride) lies inside src (ns values): one pass over idx,
// cheap next to w values per row.
func Check(nd, ns, w, stride int, idx []int32) {
	if w < 0 || nd < w {
		panic(fmt.Sprintf("simd: rows: destination of %d values, want %d", nd, w))
	}
	if w == 0 {
		return
	}
	for k, j := range idx {
		if j < 0 || int(j)*stride+w > ns {
			panic(fmt.Sprintf("simd: rows: row %d (position %d) outside %d source values", j, k, ns))
		}
	}
}

// Scalar is the reference SumRowsStride must match bit for bit: the plain
// scalar loop (explicit conversions keep a compiler from fusing
// anything).
func Scalar[T ~float32 | ~float64](dst, src []T, w, stride int, idx []int32, add bool, scale T) {
	for c := range w {
		var s T
		if add {
			s = dst[c]
		}
		for _, j := range idx {
			s = T(s + src[int(j)*stride+c])
		}
		if !add && len(idx) > 0 && scale != 1 {
			s = T(s * scale)
		}
		dst[c] = s
	}
}
