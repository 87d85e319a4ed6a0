package kernels

import "mpignn/train/kernels/simd"

// HeadDots sets, for every row k < n and segment s < segs,
//
//	out[k*segs+s] = v[s*vs]·x[s*f] + v[s*vs+1]·x[s*f+1] + ... (f terms), x = src[row(k):]
//
// each sum a chain from +0 in column order, one rounded product (v's value
// first) and one rounded addition per term, nothing fused: the bits of one
// scalar dot per (row, segment). It is GAT's attention scores (segments
// are heads: a row of the projection against the attention vectors) and
// their gradient (the sampled sources' rows against a destination's output
// gradient).
//
// The order of a chain forbids splitting it, so a dot waits out the
// latency of each addition; the speed comes from running many chains side
// by side. On float32 with AVX, eight rows at a time go to
// simd.DotRows8, a row's chain in each lane; elsewhere four segments of a
// row at a time (dot4).
func HeadDots[T Float](out, v []T, vs int, src []T, n int, row func(k int) int, f, segs int) {
	if n == 0 || segs == 0 {
		return
	}
	if o, ok := any(out).([]float32); ok && headDots8(o, any(v).([]float32), vs, any(src).([]float32), n, row, f, segs) {
		return
	}
	seg := func(x []T, s, stride int) []T { return x[s*stride : s*stride+f] }
	for k := range n {
		x := src[row(k):]
		s := 0
		for ; s+4 <= segs; s += 4 {
			out[k*segs+s], out[k*segs+s+1], out[k*segs+s+2], out[k*segs+s+3] = dot4(
				seg(v, s, vs), seg(x, s, f), seg(v, s+1, vs), seg(x, s+1, f),
				seg(v, s+2, vs), seg(x, s+2, f), seg(v, s+3, vs), seg(x, s+3, f))
		}
		for ; s < segs; s++ {
			out[k*segs+s] = Dot(seg(v, s, vs), seg(x, s, f))
		}
	}
}

// headDots8 is HeadDots through simd.DotRows8, eight rows a call (the last
// call's missing rows repeat its last one, and their sums are dropped); it
// reports false, having written nothing, where that kernel cannot run.
func headDots8(out, v []float32, vs int, src []float32, n int, row func(k int) int, f, segs int) bool {
	var buf [8 * 16]float32
	res := buf[:]
	if 8*segs > len(buf) {
		res = make([]float32, 8*segs)
	}
	var rows [8][]float32
	for k0 := 0; k0 < n; k0 += 8 {
		m := min(8, n-k0)
		for r := range rows {
			j := row(k0 + min(r, m-1))
			rows[r] = src[j : j+segs*f]
		}
		if !simd.DotRows8(res, v, vs, &rows, f, segs) {
			return false // the CPU lacks AVX: known at the first call
		}
		for r := range m {
			for s := range segs {
				out[(k0+r)*segs+s] = res[s*8+r]
			}
		}
	}
	return true
}

// Dot returns the inner product of equal-length a and b: a chain from +0
// in index order, a[k]·b[k] then the addition.
func Dot[T Float](a, b []T) T {
	var s T
	for k, x := range a {
		s += x * b[k]
	}
	return s
}

// dot4 returns Dot(a0, b0), ..., Dot(a3, b3), all of a0's length, with
// the bits of four Dot calls: each sum is its own chain, adding its
// products in k order. Running the four chains side by side fills each
// addition's latency with the others' work.
func dot4[T Float](a0, b0, a1, b1, a2, b2, a3, b3 []T) (s0, s1, s2, s3 T) {
	n := len(a0)
	// One length for all eight lets the compiler drop the bounds checks
	// (and panics here, as Dot would, on a short operand).
	b0, a1, b1, a2, b2, a3, b3 = b0[:n], a1[:n], b1[:n], a2[:n], b2[:n], a3[:n], b3[:n]
	for k := range n {
		s0 += a0[k] * b0[k]
		s1 += a1[k] * b1[k]
		s2 += a2[k] * b2[k]
		s3 += a3[k] * b3[k]
	}
	return s0, s1, s2, s3
}
