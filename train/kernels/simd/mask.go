package simd

// MaskScale computes, for k < len(d), d[k] *= m[k] with m[k] = scale
// where y[k] > 0 and 0 elsewhere (NaN counts as not positive): the
// backward pass through a ReLU and inverted dropout, whose output is
// positive exactly where the unit was kept and active. scale must be
// positive, so that m[k] is scale or +0 as the scalar T(pos)·scale is; it
// panics otherwise or if y is shorter than d. It reports false, having
// done nothing, where the CPU lacks AVX.
func MaskScale(d, y []float32, scale float32) bool {
	if !hasRows() {
		return false
	}
	if !(scale > 0) || len(y) < len(d) {
		panic("simd: MaskScale needs a positive scale and y as long as d")
	}
	n := len(d) &^ 7
	if n > 0 {
		maskScale(d, y, n, scale)
	}
	for k := n; k < len(d); k++ {
		pos := float32(0)
		if y[k] > 0 {
			pos = 1
		}
		d[k] *= pos * scale
	}
	return true
}
