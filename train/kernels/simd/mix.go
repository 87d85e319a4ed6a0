package simd

// Weyl and the two multipliers of SplitMix64's finalizer (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014),
// the constants of internal/hashkey's Golden and Mix64, which this package
// may not import (it is a leaf).
const (
	weyl = 0x9E3779B97F4A7C15
	mixA = 0xBF58476D1CE4E5B9
	mixB = 0x94D049BB133111EB
)

// MixWords fills dst with the first len(dst) outputs of the SplitMix64
// stream whose state is key: dst[g] = mix(key + (g+1)·weyl), with mix
// hashkey.Mix64's finalizer. It is hashkey.Stream's sequence (and so
// sample.MaskWord(key, g) for every g), bit for bit: the arithmetic is on
// integers, so the vector loop and the scalar one agree exactly. On amd64
// with AVX2 it runs eight words per step (mixWordsAVX2 in mix_amd64.s,
// which multiplies 64-bit lanes from 32-bit products, since AVX2 has no
// 64-bit multiply); elsewhere, and on the last len(dst) mod 4 words, the
// scalar loop.
func MixWords(dst []uint64, key uint64) {
	v := 0
	if hasAVX2() {
		v = len(dst) &^ 3
		if v > 0 {
			mixWords(dst[:v], key)
		}
	}
	MixScalar(dst[v:], key+uint64(v)*weyl)
}

// MixScalar is MixWords' scalar loop, which the vector one must match.
func MixScalar(dst []uint64, key uint64) {
	for g := range dst {
		key += weyl
		z := key
		z = (z ^ (z >> 30)) * mixA
		z = (z ^ (z >> 27)) * mixB
		dst[g] = z ^ (z >> 31)
	}
}
