package simd

import "fmt"

// DropRow writes into dst the inverted dropout of the row src under the
// 16-bit draws packed in words (four per word, unit u in bits
// [16·(u mod 4), 16·(u mod 4)+16) of words[u/4], as sample.MaskWord packs
// them): for u < len(dst), with v = src[u] (first max(v, 0) when relu),
//
//	dst[u] = v · (scale if draw(u) >= t, else 0)
//
// which is the model's dropUnit bit for bit: a kept unit is one rounded
// v·scale, a dropped one v·0 (+0 or -0 by v's sign, NaN stays NaN), and
// the ReLU is Go's max(v, 0) (NaN stays NaN, -0 becomes +0). dst may alias
// src. t must lie in [0, 65536] (0 keeps all, 65536 drops all). On amd64
// with AVX2 it runs up to sixteen units per step (dropRowAVX2 in
// drop_amd64.s); elsewhere, and on the last len(dst) mod 4 units, the
// scalar loop. It
// panics if src or words are too short or t is out of range.
func DropRow(dst, src []float32, words []uint64, t uint32, scale float32, relu bool) {
	n := len(dst)
	if len(src) < n || len(words) < (n+3)/4 || t > 1<<16 {
		panic(fmt.Sprintf("simd: DropRow: %d units need as many sources (%d), %d words (%d) and a threshold in [0, 65536] (%d)",
			n, len(src), (n+3)/4, len(words), t))
	}
	v := 0
	if hasAVX2() {
		v = n &^ 3
		if v > 0 {
			dropRow(dst, src, words, v, t, scale, relu)
		}
	}
	DropScalar(dst[v:n], src[v:n], words[v/4:], t, scale, relu)
}

// DropScalar is the scalar loop DropRow must match bit for bit, written as
// the model's dropUnit is: the index of the multiplier {0, scale} is the
// sign bit of t-1-draw, one rounded product, no branch on the draw. It
// also serves DropRow's tails (words starts at the word of dst[0], so a
// tail must start at a multiple of four units).
func DropScalar(dst, src []float32, words []uint64, t uint32, scale float32, relu bool) {
	f := [2]float32{0, scale}
	ti := int32(t)
	for u := range dst {
		v := src[u]
		if relu {
			v = max(v, 0)
		}
		draw := int32(uint16(words[u/4] >> (16 * (u % 4))))
		dst[u] = v * f[uint32(ti-1-draw)>>31]
	}
}
