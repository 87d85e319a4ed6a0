package kernels

import "mpignn/train/kernels/simd"

// MaskScale computes d[k] *= T(pos)·scale for k < len(d), pos = 1 where
// y[k] > 0 and 0 elsewhere: the gradient through a ReLU followed by
// inverted dropout (scale 1/(1-p), or 1), whose output is positive exactly
// where the unit was kept and active. On float32 with AVX and a positive
// scale it runs 8 lanes at a time (simd.MaskScale: the same product,
// scale or +0, and the same rounded multiplication); otherwise the scalar
// loop.
func MaskScale[T Float](d, y []T, scale T) {
	if d32, ok := any(d).([]float32); ok && scale > 0 && simd.MaskScale(d32, any(y).([]float32), float32(scale)) {
		return
	}
	for k := range d {
		pos := 0
		if y[k] > 0 {
			pos = 1
		}
		d[k] *= T(pos) * scale
	}
}
