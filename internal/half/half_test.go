package half

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refFormat is a brute-force reference for rounding to a 16-bit format:
// every non-negative finite pattern of the format as a float64 (sorted,
// they increase with the bits), plus Inf placed at the value where the
// next binade would start, which is IEEE's overflow threshold rule.
type refFormat struct {
	vals []float64
	bits []uint16
}

func newRef(widen func(uint16) float32, inf uint16, infAt float64) refFormat {
	var r refFormat
	for h := uint16(0); h < inf; h++ {
		r.vals = append(r.vals, float64(widen(h)))
		r.bits = append(r.bits, h)
	}
	r.vals = append(r.vals, infAt)
	r.bits = append(r.bits, inf)
	return r
}

// round returns the nearest pattern to x, a tie to the even pattern,
// found by search over every value rather than by bit manipulation.
func (r refFormat) round(x float32) uint16 {
	a := math.Abs(float64(x))
	sign := uint16(0)
	if math.Signbit(float64(x)) {
		sign = 0x8000
	}
	i := sort.SearchFloat64s(r.vals, a) // first value >= a
	if i == len(r.vals) {
		return sign | r.bits[len(r.bits)-1]
	}
	if r.vals[i] == a || i == 0 {
		return sign | r.bits[i]
	}
	lo, hi := r.vals[i-1], r.vals[i]
	switch {
	case a-lo < hi-a:
		return sign | r.bits[i-1]
	case a-lo > hi-a:
		return sign | r.bits[i]
	case r.bits[i-1]&1 == 0:
		return sign | r.bits[i-1]
	}
	return sign | r.bits[i]
}

// cases are the edge values both formats are checked on, besides random
// bit patterns.
func cases() []float32 {
	xs := []float32{0, 1, -1, 0.1, -0.1, 1.0 / 3, 65504, 65505, 65519, 65520, 65536, -65519, -65520,
		1 + 1.0/2048, 1 + 3.0/2048, 1 + 1.0/256, 1 + 3.0/256, 1 + 1.0/128,
		0x1p-14, 0x1p-24, 0x1p-25, 0x3p-25, 0x1p-26, 0x5p-26, 0x1.ffcp-15, 0x1.ffep-15,
		math.MaxFloat32, -math.MaxFloat32, 0x1.fffep127, 0x1.ff7fp127, 0x1.ff8p127, math.SmallestNonzeroFloat32,
		float32(math.Copysign(0, -1))}
	rng := rand.New(rand.NewPCG(43, 1))
	for range 200000 {
		x := math.Float32frombits(rng.Uint32())
		if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			xs = append(xs, x)
		}
	}
	// Values in binary16's range, where most of its cases are.
	for range 200000 {
		xs = append(xs, float32(rng.NormFloat64()*math.Pow(2, float64(rng.IntN(44)-26))))
	}
	return xs
}

func TestRoundToNearestEven(t *testing.T) {
	bf := newRef(FromBF16, 0x7f80, 0x1p128)
	fp := newRef(FromFP16, 0x7c00, 65536)
	xs := cases()
	tests := []struct {
		name string
		ref  refFormat
		conv func(float32) uint16
	}{
		{"bf16", bf, ToBF16},
		{"fp16", fp, func(x float32) uint16 { h, _ := ToFP16(x); return h }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := 0
			for _, x := range xs {
				if got, want := tc.conv(x), tc.ref.round(x); got != want {
					if bad++; bad <= 5 {
						t.Errorf("%s(%g = %#08x) = %#04x, want %#04x", tc.name, x, math.Float32bits(x), got, want)
					}
				}
			}
			assert.Zero(t, bad, "%d of %d values rounded wrong", bad, len(xs))
		})
	}
}

// TestKnownValues: the expected bits are what torch 1.13 gives for
// tensor(x).to(torch.bfloat16) and tensor(x).half().
func TestKnownValues(t *testing.T) {
	tests := []struct {
		name string
		x    float32
		bf16 uint16
		fp16 uint16
		ok   bool // ToFP16's ok
	}{
		{"one", 1, 0x3f80, 0x3c00, true},
		{"tie down to even", 1 + 1.0/2048, 0x3f80, 0x3c00, true}, // fp16: halfway between 1 and 1+2^-10
		{"tie up to even", 1 + 3.0/2048, 0x3f80, 0x3c02, true},   // fp16: halfway, odd below
		{"bf16 tie down", 1 + 1.0/256, 0x3f80, 0x3c04, true},     // bf16: halfway between 1 and 1+2^-7
		{"bf16 tie up", 1 + 3.0/256, 0x3f82, 0x3c0c, true},       // bf16: halfway, odd below
		{"largest fp16", 65504, 0x4780, 0x7bff, true},
		{"rounds down to 65504", 65519, 0x4780, 0x7bff, true},      // below the overflow threshold
		{"overflows fp16", 65520, 0x4780, 0x7c00, false},           // the tie rounds to even: Inf
		{"smallest subnormal", 0x1p-24, 0x3380, 0x0001, true},      // 2^-24
		{"half of it ties to zero", 0x1p-25, 0x3300, 0x0000, true}, // even is 0
		{"three halves tie to two", 0x3p-25, 0x33c0, 0x0002, true},
		{"subnormal to normal carry", 0x1.ffep-15, 0x3880, 0x0400, true},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000, 0x8000, true},
		{"bf16 overflow to inf", math.MaxFloat32, 0x7f80, 0x7c00, false},
		{"inf", float32(math.Inf(-1)), 0xff80, 0xfc00, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.bf16, ToBF16(tc.x), "bf16")
			h, ok := ToFP16(tc.x)
			assert.Equal(t, tc.fp16, h, "fp16")
			assert.Equal(t, tc.ok, ok, "fp16 ok")
		})
	}
}

func TestNaNStaysNaN(t *testing.T) {
	for _, bits := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff, 0xff800001} {
		x := math.Float32frombits(bits)
		assert.True(t, math.IsNaN(float64(FromBF16(ToBF16(x)))), "bf16 %#08x", bits)
		h, ok := ToFP16(x)
		assert.False(t, ok)
		assert.True(t, math.IsNaN(float64(FromFP16(h))), "fp16 %#08x", bits)
	}
}

// TestWidenExact: every 16-bit pattern widens to the value whose rounding
// gives it back (so a stored value survives widening and narrowing).
func TestWidenExact(t *testing.T) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	for _, k := range []Kind{BF16, FP16} {
		dst := make([]float32, len(src))
		Widen(k, dst, src)
		back := make([]uint16, len(src))
		Narrow(k, back, dst)
		for i, h := range src {
			if math.IsNaN(float64(dst[i])) {
				continue
			}
			require.Equal(t, h, back[i], "%v pattern %#04x widened to %g", k, h, dst[i])
		}
	}
}

// TestWidenValues: every 16-bit pattern widens to the value its fields
// define, computed in float64 from the formats' definitions.
func TestWidenValues(t *testing.T) {
	tests := []struct {
		name          string
		widen         func(uint16) float32
		expBits, bias int
	}{
		{"bf16", FromBF16, 8, 127},
		{"fp16", FromFP16, 5, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			manBits := 15 - tc.expBits
			maxExp := 1<<tc.expBits - 1
			for i := range 1 << 16 {
				h := uint16(i)
				e := int(h>>manBits) & maxExp
				m := float64(int(h) & (1<<manBits - 1))
				var want float64
				switch {
				case e == maxExp && m == 0:
					want = math.Inf(1)
				case e == maxExp:
					want = math.NaN()
				case e == 0:
					want = m * math.Pow(2, float64(1-tc.bias-manBits))
				default:
					want = (1 + m/float64(int(1)<<manBits)) * math.Pow(2, float64(e-tc.bias))
				}
				if h&0x8000 != 0 {
					want = -want
				}
				got := tc.widen(h)
				if math.IsNaN(want) {
					require.True(t, math.IsNaN(float64(got)), "%#04x", h)
					continue
				}
				require.Equal(t, float32(want), got, "%#04x", h)
				require.Equal(t, math.Signbit(want), math.Signbit(float64(got)), "%#04x sign", h)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		k    Kind
		xs   []float32
		want int
	}{
		{"bf16 takes anything", BF16, []float32{1e38, float32(math.NaN()), float32(math.Inf(1))}, -1},
		{"fp16 in range", FP16, []float32{0, -65504, 65504, 1e-9}, -1},
		{"fp16 above 65504", FP16, []float32{1, 2, 65504.5}, 2},
		{"fp16 below -65504", FP16, []float32{-65505, 1}, 0},
		{"fp16 NaN", FP16, []float32{1, float32(math.NaN())}, 1},
		{"fp16 Inf", FP16, []float32{float32(math.Inf(-1))}, 0},
		{"fp32 never", F32, []float32{float32(math.NaN())}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Check(tc.k, tc.xs))
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Kind
		err  string
	}{
		{"", F32, ""}, {"fp32", F32, ""}, {"bf16", BF16, ""}, {"fp16", FP16, ""},
		{"float16", F32, `feature type "float16": want fp32, bf16 or fp16`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			k, err := Parse(tc.in)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, k)
		})
	}
}

// TestWidenTails: Widen's unrolled loop and its tail give the per-value
// conversions for lengths around its step of four.
func TestWidenTails(t *testing.T) {
	for n := range 10 {
		src := make([]uint16, n)
		for i := range src {
			src[i] = uint16(0x3c01 + 977*i)
		}
		for _, tc := range []struct {
			k   Kind
			one func(uint16) float32
		}{{BF16, FromBF16}, {FP16, FromFP16}} {
			dst := make([]float32, n+1)
			dst[n] = -7 // past the end: untouched
			Widen(tc.k, dst, src)
			for i, h := range src {
				assert.Equal(t, math.Float32bits(tc.one(h)), math.Float32bits(dst[i]), "%v n=%d i=%d", tc.k, n, i)
			}
			assert.Equal(t, float32(-7), dst[n])
		}
	}
}
