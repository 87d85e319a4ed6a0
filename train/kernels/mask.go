package kernels

import (
	"mpignn/internal/prefetch"
	"mpignn/train/kernels/simd"
)

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

// DropRow writes into dst the inverted dropout of the float32 row src (dst
// may alias it): unit u, after max(v, 0) when relu, times scale where its
// 16-bit draw (bits [16·(u mod 4), +16) of words[u/4], sample.MaskWord's
// packing) is at least t, else times 0, with the bits of the model's
// scalar loop. It runs simd.DropRow: eight units per step where the CPU has
// AVX2, the scalar loop elsewhere.
func DropRow(dst, src []float32, words []uint64, t uint32, scale float32, relu bool) {
	simd.DropRow(dst, src, words, t, scale, relu)
}

// MaskWords fills words with the packed draws of a mask row:
// words[g] = sample.MaskWord(key, g), the SplitMix64 stream of key, bit for
// bit. It runs simd.MixWords: eight words per step where the CPU has AVX2
// (a 100-wide input row's 25 words in 23 ns instead of 40, 64 words in 46
// instead of 97, BenchmarkMixWords), the scalar loop elsewhere.
func MaskWords(words []uint64, key uint64) { simd.MixWords(words, key) }

// Prefetch starts loading row's cache lines without waiting for them
// (internal/prefetch); it changes no value. It takes the model's rows of
// either precision and 2-byte feature rows.
func Prefetch[E Float | uint16](row []E) {
	switch r := any(row).(type) {
	case []float32:
		prefetch.Float32s(r)
	case []float64:
		prefetch.Float64s(r)
	case []uint16:
		prefetch.Uint16s(r)
	}
}
