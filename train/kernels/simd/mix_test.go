package simd

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// mixRef is SplitMix64's output for state s after the step, written out
// from the paper's definition (not from MixScalar).
func mixRef(s uint64) uint64 {
	s ^= s >> 30
	s *= 0xBF58476D1CE4E5B9
	s ^= s >> 27
	s *= 0x94D049BB133111EB
	return s ^ (s >> 31)
}

// TestMixWordsMatchScalar: every length up to 70 (each tail after 0 to 8
// vector steps) and a long one, from keys that wrap around 2^64 within the
// row, give the reference's words on the vector loop and on the scalar one.
func TestMixWordsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := []uint64{0, 1, ^uint64(0), ^uint64(0) - 3*(weyl>>2), 1 << 63, r.Uint64(), r.Uint64()}
	lens := make([]int, 0, 72)
	for n := range 71 {
		lens = append(lens, n)
	}
	lens = append(lens, 1001)
	for _, key := range keys {
		for _, n := range lens {
			want := make([]uint64, n)
			s := key
			for g := range want {
				s += weyl
				want[g] = mixRef(s)
			}
			got := make([]uint64, n+1)
			got[n] = 7 // a word past the end stays as it was
			MixWords(got[:n], key)
			require.Equal(t, want, got[:n], "key %#x, %d words", key, n)
			require.Equal(t, uint64(7), got[n], "key %#x, %d words: wrote past the end", key, n)
			scalar := make([]uint64, n)
			MixScalar(scalar, key)
			require.Equal(t, want, scalar, "scalar: key %#x, %d words", key, n)
		}
	}
}

// BenchmarkMixWords: 25 words (the mask of a 100-wide input row) and 64
// (a 256-wide hidden row), vector against scalar.
func BenchmarkMixWords(b *testing.B) {
	for _, n := range []int{25, 64} {
		dst := make([]uint64, n)
		b.Run(fmt.Sprintf("vector/%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				MixWords(dst, uint64(i))
			}
		})
		b.Run(fmt.Sprintf("scalar/%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				MixScalar(dst, uint64(i))
			}
		})
	}
}
