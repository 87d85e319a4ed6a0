package kernels

import "mpignn/train/kernels/simd"

// Row sums of a sparse-dense product: the mean or sum aggregation of
// sampled neighbours (dst = Σ_k src[idx[k]], then a scale) and its
// adjoint, the scatter of destination gradients to a source row (dst +=
// Σ_k src[idx[k]]).
//
// Why a kernel of its own: as a loop of Axpy calls, every edge loads and
// stores the whole destination row and pays a call, and those loads and
// stores were most of the aggregation's time (gonum's AxpyUnitary, 15 % of
// a step's CPU). On float32 with AVX, SumRows and AddRows keep a block of
// up to 64 columns of the destination in eight registers across all of a
// row's edges and store it once (package simd).
//
// The bits are those of the Axpy loop. Every element receives the same
// float32 operations in the same order: it starts from +0 (SumRows) or its
// stored value (AddRows), adds src[idx[0]][c], src[idx[1]][c], ... one
// rounded addition each, in k order (Axpy's 1·x is x exactly), and SumRows
// then multiplies by the scale (one rounded product; skipped for a scale
// of 1, which is exact). Lanes of a vector are independent elements, there
// is no fused multiply-add and no reordering, so 8 lanes give the scalar
// loop's bits (TestRowsMatchScalar checks widths 1 to 1031 against it).
// float64 (the gradient checks) and CPUs without AVX run the Axpy loop.

// SumRows writes into dst (w wide) the sum of the rows src[idx[k]*w :
// (idx[k]+1)*w] in k order, starting from +0, multiplied by scale unless
// scale is 1; with idx empty, dst is zeroed and not scaled. It panics if
// an index lies outside src (a programming error of the model).
func SumRows[T Float](dst, src []T, w int, idx []int32, scale T) {
	if len(idx) == 0 || w == 0 {
		clear(dst[:w])
		return
	}
	if rowsSIMD(dst, src, w, idx, false, scale) {
		return
	}
	d := dst[:w]
	clear(d)
	for _, j := range idx {
		Axpy(1, src[int(j)*w:(int(j)+1)*w], d)
	}
	if scale != 1 {
		for c := range d {
			d[c] *= scale
		}
	}
}

// AddRows adds to dst (w wide) the rows src[idx[k]*w : (idx[k]+1)*w] in k
// order, one rounded addition per row and element.
func AddRows[T Float](dst, src []T, w int, idx []int32) {
	if len(idx) == 0 || w == 0 || rowsSIMD(dst, src, w, idx, true, 1) {
		return
	}
	d := dst[:w]
	for _, j := range idx {
		Axpy(1, src[int(j)*w:(int(j)+1)*w], d)
	}
}

// rowsSIMD runs the float32 kernel of package simd where the CPU has one
// and reports whether it did.
func rowsSIMD[T Float](dst, src []T, w int, idx []int32, add bool, scale T) bool {
	d, ok := any(dst).([]float32)
	if !ok {
		return false
	}
	return simd.SumRows(d, any(src).([]float32), w, idx, add, float32(scale))
}

// AddColumns adds to acc (hi-lo wide) the columns lo..hi-1 of the n rows
// of x (w wide), each column summed in row order, one rounded addition per
// row: a band of the column sums of a row-major matrix (the bias
// gradient). It reads x a row at a time (a band of a row is contiguous)
// and, on float32 with AVX, keeps up to 64 sums in registers over a tile
// of 256 rows, storing them once per tile; the bits are those of the
// column loop s += x[i*w+c] over i.
func AddColumns[T Float](acc, x []T, n, w, lo, hi int) {
	const tile = 256
	bw := hi - lo
	if bw <= 0 || n == 0 {
		return
	}
	a := acc[:bw]
	var seq [tile]int32
	for k := range seq {
		seq[k] = int32(k)
	}
	for r0 := 0; r0 < n; r0 += tile {
		r1 := min(r0+tile, n)
		band := x[r0*w+lo : (r1-1)*w+hi]
		if a32, ok := any(a).([]float32); ok && simd.SumRowsStride(a32, any(band).([]float32), bw, w, seq[:r1-r0], true, 1) {
			continue
		}
		for i := range r1 - r0 {
			for c, v := range band[i*w : i*w+bw] {
				a[c] += v
			}
		}
	}
}

// AxpyRows adds to dst (w wide) the rows src[idx[k]*stride+off :][:w]
// weighted by a[k], in k order: the bits of Axpy(a[k], row, dst) for k = 0,
// 1, ... (a zero weight skips its row, as Axpy does). On float32 with AVX
// it keeps up to 64 columns of dst in registers over all the rows
// (simd.AxpyRows); elsewhere it runs that Axpy loop. GAT's attention
// aggregation and its adjoint are such weighted row sums.
func AxpyRows[T Float](dst, src []T, w, stride, off int, idx []int32, a []T) {
	if len(idx) == 0 || w == 0 {
		return
	}
	if d, ok := any(dst).([]float32); ok && simd.AxpyRows(d, any(src[off:]).([]float32), w, stride, idx, any(a).([]float32)) {
		return
	}
	d := dst[:w]
	for k, j := range idx {
		r := int(j)*stride + off
		Axpy(a[k], src[r:r+w], d)
	}
}

// AxpyRowsZero is AxpyRows on dst first set to +0, the bits of clear(dst)
// then AxpyRows; on float32 with AVX, dst is only written
// (simd.AxpyRowsZero), not cleared in memory and read back.
func AxpyRowsZero[T Float](dst, src []T, w, stride, off int, idx []int32, a []T) {
	if w == 0 {
		return
	}
	if d, ok := any(dst).([]float32); ok && simd.AxpyRowsZero(d, any(src[off:]).([]float32), w, stride, idx, any(a).([]float32)) {
		return
	}
	clear(dst[:w])
	AxpyRows(dst, src, w, stride, off, idx, a)
}
