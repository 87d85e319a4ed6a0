package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// dropWidths are DropRow's bit-test widths: every width up to 300 (each
// tail length after 0 to 37 full vectors, the model's 100 and 256) and a
// wide odd one.
func dropWidths() []int {
	ws := make([]int, 0, 301)
	for w := 1; w <= 300; w++ {
		ws = append(ws, w)
	}
	return append(ws, 1031)
}

// dropValues returns n values where one in four is special: ±0, NaN, ±Inf,
// subnormals of both signs, the largest float32 (its product by a scale
// above 1 overflows); the rest spread over magnitudes and both signs.
func dropValues(r *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-39, -3e-39, math.MaxFloat32, -math.MaxFloat32}
	x := make([]float32, n)
	for i := range x {
		if r.IntN(4) == 0 {
			x[i] = special[r.IntN(len(special))]
		} else {
			x[i] = float32((r.Float64()*2 - 1) * math.Pow(2, float64(r.IntN(60)-30)))
		}
	}
	return x
}

// dropWords returns the words of n units with random draws, one in eight
// set to t-1, t or t+1 (16 bits kept) so that the compare's edge shows.
func dropWords(r *rand.Rand, n int, t uint32) []uint64 {
	words := make([]uint64, (n+3)/4)
	for g := range words {
		words[g] = r.Uint64()
		for l := range 4 {
			if r.IntN(8) == 0 {
				d := uint64(uint16(int(t) - 1 + r.IntN(3)))
				words[g] = words[g]&^(0xffff<<(16*l)) | d<<(16*l)
			}
		}
	}
	return words
}

// dropRef is the rule DropRow implements, written with a branch on the
// draw rather than dropUnit's indexed multiplier: ReLU as Go's max, then
// v·scale if kept, v·0 if dropped.
func dropRef(v float32, draw uint16, t uint32, scale float32, relu bool) float32 {
	if relu {
		v = max(v, 0)
	}
	zero := float32(0)
	if uint32(draw) >= t {
		return v * scale
	}
	return v * zero
}

// sameBits reports whether a and b are the same float32, NaN matching NaN
// whatever its payload.
func sameBits(a, b float32) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// TestDropRowMatchesScalar checks DropRow (the AVX2 loop and its scalar
// tail) and DropScalar against dropRef bit for bit: every width of
// dropWidths, ReLU on and off, in place and out of place, thresholds at
// both ends and the middle, scales of common dropout rates and one that
// overflows; and that nothing past dst is written.
func TestDropRowMatchesScalar(t *testing.T) {
	if !hasAVX2() {
		t.Log("no AVX2: DropRow runs its scalar loop, checked here all the same")
	}
	thresholds := []uint32{0, 1, 32768, 65535, 65536}
	scales := []float32{2, float32(1 / (1 - 0.1)), 1000, 3e38}
	r := rand.New(rand.NewPCG(43, 2))
	for _, relu := range []bool{false, true} {
		for _, alias := range []bool{false, true} {
			t.Run(fmt.Sprintf("relu=%v/alias=%v", relu, alias), func(t *testing.T) {
				for _, w := range dropWidths() {
					for k, th := range thresholds {
						scale := scales[(w+k)%len(scales)]
						src := dropValues(r, w)
						words := dropWords(r, w, th)
						want := make([]float32, w)
						for u := range want {
							want[u] = dropRef(src[u], uint16(words[u/4]>>(16*(u%4))), th, scale, relu)
						}
						scalar := make([]float32, w)
						DropScalar(scalar, src, words, th, scale, relu)
						// dst inside a longer buffer with sentinels after it.
						buf := make([]float32, w+9)
						for i := range buf {
							buf[i] = 7
						}
						dst := buf[:w]
						in := src
						if alias {
							copy(dst, src)
							in = dst
						}
						DropRow(dst, in, words, th, scale, relu)
						for u := range w {
							require.Truef(t, sameBits(want[u], scalar[u]), "DropScalar w=%d t=%d unit %d: %g, want %g", w, th, u, scalar[u], want[u])
							require.Truef(t, sameBits(want[u], dst[u]), "DropRow w=%d t=%d unit %d (v=%g): %g, want %g", w, th, u, src[u], dst[u], want[u])
						}
						require.Equal(t, []float32{7, 7, 7, 7, 7, 7, 7, 7, 7}, buf[w:], "w=%d: written past dst", w)
					}
				}
			})
		}
	}
}

// TestDropRowSpecialValues pins the cases the ReLU and the zero multiplier
// must get right, on a full vector of eight so that the AVX2 loop computes
// them (the scalar tail is checked by TestDropRowMatchesScalar).
func TestDropRowSpecialValues(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name string
		v    float32
		keep bool
		relu bool
		want float32
	}{
		{"relu -0 kept is +0", negZero, true, true, 0},
		{"relu -0 dropped is +0", negZero, false, true, 0},
		{"-0 kept stays -0", negZero, true, false, negZero},
		{"-0 dropped stays -0", negZero, false, false, negZero},
		{"negative dropped is -0", -3, false, false, negZero},
		{"relu negative is +0", -3, true, true, 0},
		{"relu NaN stays NaN", nan, true, true, nan},
		{"NaN dropped stays NaN", nan, false, false, nan},
		{"Inf dropped is NaN", inf, false, false, nan},
		{"relu -Inf is +0", float32(math.Inf(-1)), true, true, 0},
		{"subnormal kept doubles", math.SmallestNonzeroFloat32, true, true, 2 * math.SmallestNonzeroFloat32},
		{"kept times scale", 1.5, true, false, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every unit draws 1000; t = 1000 keeps, 1001 drops.
			th := uint32(1001)
			if tc.keep {
				th = 1000
			}
			words := []uint64{0x03e8_03e8_03e8_03e8, 0x03e8_03e8_03e8_03e8}
			src := make([]float32, 8)
			for u := range src {
				src[u] = tc.v
			}
			dst := make([]float32, 8)
			DropRow(dst, src, words, th, 2, tc.relu)
			for u, got := range dst {
				require.Truef(t, sameBits(tc.want, got), "unit %d: %g (bits %#x), want %g (bits %#x)", u, got, math.Float32bits(got), tc.want, math.Float32bits(tc.want))
			}
		})
	}
}

// TestDropRowPanics checks the operand checks that guard the assembly.
func TestDropRowPanics(t *testing.T) {
	tests := []struct {
		name  string
		n, ns int
		nw    int
		t     uint32
	}{
		{"short source", 9, 8, 3, 1},
		{"short words", 9, 9, 2, 1},
		{"threshold above 65536", 8, 8, 2, 65537},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Panics(t, func() {
				DropRow(make([]float32, tc.n), make([]float32, tc.ns), make([]uint64, tc.nw), tc.t, 2, true)
			})
		})
	}
}

// BenchmarkDropRow compares the scalar loop (the model's loop before the
// kernel, on the same packed draws) with DropRow on 20000 rows of the
// model's widths, ReLU on, p = 0.5.
func BenchmarkDropRow(b *testing.B) {
	const rows = 20000
	r := rand.New(rand.NewPCG(43, 3))
	for _, w := range []int{100, 256} {
		x := dropValues(r, rows*w)
		words := dropWords(r, rows*w, 32768)
		o := make([]float32, rows*w)
		nw := (w + 3) / 4
		for _, k := range []struct {
			name string
			fn   func(dst, src []float32, words []uint64, t uint32, scale float32, relu bool)
		}{{"scalar", DropScalar}, {"kernel", DropRow}} {
			b.Run(fmt.Sprintf("w=%d/%s", w, k.name), func(b *testing.B) {
				b.SetBytes(int64(rows * w * 4))
				for b.Loop() {
					for i := range rows {
						k.fn(o[i*w:(i+1)*w], x[i*w:(i+1)*w], words[i*nw:(i+1)*nw], 32768, 2, true)
					}
				}
			})
		}
	}
}
