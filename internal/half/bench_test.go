package half

import "testing"

// BenchmarkWiden: one feature row of 100 values (the peer graph's width)
// widened, against the float32 copy it replaces.
func BenchmarkWiden(b *testing.B) {
	src := make([]uint16, 100)
	for i := range src {
		src[i] = uint16(0x3c00 + i)
	}
	dst := make([]float32, 100)
	f32 := make([]float32, 100)
	for _, k := range []Kind{BF16, FP16} {
		b.Run(k.String(), func(b *testing.B) {
			b.SetBytes(int64(4 * len(dst)))
			for b.Loop() {
				Widen(k, dst, src)
			}
		})
	}
	b.Run("copy-fp32", func(b *testing.B) {
		b.SetBytes(int64(4 * len(dst)))
		for b.Loop() {
			copy(dst, f32)
		}
	})
}
