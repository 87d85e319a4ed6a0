//go:build !amd64

package simd

// hasAVX2: no assembly outside amd64; DropRow and MixWords run their scalar loops.
func hasAVX2() bool { return false }

// dropRow is never called where hasAVX2 is false.
func dropRow(dst, src []float32, words []uint64, n int, t uint32, scale float32, relu bool) {
	panic("simd: no dropout kernel on this architecture")
}

// mixWords is never called where hasAVX2 is false.
func mixWords(dst []uint64, key uint64) { panic("simd: no hash kernel on this architecture") }
