package simd

import "fmt"

// DotRows8 sets, for every row r < 8 and segment s < segs,
//
//	out[s*8+r] = v[s*vs]·rows[r][s*f] + v[s*vs+1]·rows[r][s*f+1] + ... (f terms)
//
// each sum from +0 in column order, one rounded product (the v value
// first) then one rounded addition (the sum first) per term, nothing
// fused: the bits of the scalar loop DotScalar. Segment s of a row is its
// columns [s·f, (s+1)·f), of v its values [s·vs, s·vs+f); vs 0 dots every
// segment with the same values. It is GAT's attention scores and their
// gradient: eight edges' source rows against a destination's (or the
// attention vector's) heads, a head per segment.
//
// A scalar dot is a chain of dependent additions the order forbids
// splitting. Here a lane holds a row's chain, eight rows side by side, the
// rows' columns turned into lanes four at a time, and two segments run
// interleaved so each waits out the other's addition latency. Callers with
// fewer than eight rows repeat one and drop its sums.
//
// It reports false, having done nothing, where the CPU lacks AVX (the
// caller then runs its scalar loop). It panics if out, v or a row is too
// short, or f or segs is negative.
func DotRows8(out, v []float32, vs int, rows *[8][]float32, f, segs int) bool {
	if !hasRows() {
		return false
	}
	if f < 0 || segs < 0 || vs < 0 || len(out) < 8*segs || segs > 0 && len(v) < (segs-1)*vs+f {
		panic(fmt.Sprintf("simd: DotRows8: %d segments of %d values (values %d apart) need %d outputs (%d) and %d values (%d)",
			segs, f, vs, 8*segs, len(out), (segs-1)*vs+f, len(v)))
	}
	if segs == 0 {
		return true
	}
	var p [8]*float32
	for r, row := range rows {
		if len(row) < segs*f {
			panic(fmt.Sprintf("simd: DotRows8: row %d holds %d values, want %d segments of %d", r, len(row), segs, f))
		}
		if f > 0 {
			p[r] = &row[0]
		}
	}
	f4 := f &^ 3
	if f4 > 0 {
		dotRows8AVX(&out[0], &v[0], vs, &p, f, f4, segs)
	} else {
		clear(out[:8*segs])
	}
	// The last f mod 4 columns go on each lane's chain in Go.
	for s := range segs {
		for r, row := range rows {
			acc := out[s*8+r]
			for c := f4; c < f; c++ {
				acc += float32(v[s*vs+c] * row[s*f+c])
			}
			out[s*8+r] = acc
		}
	}
	return true
}

// DotScalar is the loop DotRows8 must match bit for bit: out[s*8+r] is
// row r's dot with v over segment s (explicit conversions keep a compiler
// from fusing the product into the addition).
func DotScalar(out, v []float32, vs int, rows *[8][]float32, f, segs int) {
	for s := range segs {
		for r, row := range rows {
			var acc float32
			for c := range f {
				acc += float32(v[s*vs+c] * row[s*f+c])
			}
			out[s*8+r] = acc
		}
	}
}
