//go:build !amd64

package simd

// hasDrop: no assembly outside amd64; DropRow runs its scalar loop.
func hasDrop() bool { return false }

// dropRow is never called where hasDrop is false.
func dropRow(dst, src []float32, words []uint64, n int, t uint32, scale float32, relu bool) {
	panic("simd: no dropout kernel on this architecture")
}

// mixWords is never called where hasDrop is false.
func mixWords(dst []uint64, key uint64) { panic("simd: no hash kernel on this architecture") }
