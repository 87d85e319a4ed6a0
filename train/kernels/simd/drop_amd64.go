package simd

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether dropRowAVX2 and mixWordsAVX2 can run: they
// work on integers in 256-bit registers (VPMOVZXWD, VPCMPGTD, VPMULUDQ and
// the 64-bit lane shifts on ymm are AVX2, not AVX).
func hasAVX2() bool { return cpu.X86.HasAVX2 }

// dropRow runs dropRowAVX2 on the first n (a multiple of 4) units; the
// signed compare draw > t-1 is draw >= t for t in [0, 65536].
func dropRow(dst, src []float32, words []uint64, n int, t uint32, scale float32, relu bool) {
	dropRowAVX2(&dst[0], &src[0], &words[0], n, int32(t)-1, scale, relu)
}

// dropRowAVX2 is DropRow's vector loop. In drop_amd64.s.
//
//go:noescape
func dropRowAVX2(dst, src *float32, words *uint64, n int, tm1 int32, scale float32, relu bool)

// mixWords runs mixWordsAVX2 on dst (len a multiple of 4).
func mixWords(dst []uint64, key uint64) { mixWordsAVX2(&dst[0], len(dst), key) }

// mixWordsAVX2 is MixWords' vector loop. In mix_amd64.s.
//
//go:noescape
func mixWordsAVX2(dst *uint64, n int, key uint64)
