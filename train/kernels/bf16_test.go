package kernels

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/half"
)

// TestRoundBF16: nearest even on the 16 dropped bits, exact values kept,
// NaN kept a NaN, overflow to infinity as IEEE rounding gives.
func TestRoundBF16(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   float32
		want uint16
	}{
		{"one", 1, 0x3f80},
		{"minus two", -2, 0xc000},
		{"zero", 0, 0},
		{"minus zero", float32(math.Copysign(0, -1)), 0x8000},
		{"tie to even (down)", math.Float32frombits(0x3f808000), 0x3f80},
		{"tie to even (up)", math.Float32frombits(0x3f818000), 0x3f82},
		{"above the tie", math.Float32frombits(0x3f808001), 0x3f81},
		{"below the tie", math.Float32frombits(0x3f807fff), 0x3f80},
		{"infinity", float32(math.Inf(1)), 0x7f80},
		{"max float32 overflows", math.MaxFloat32, 0x7f80},
		{"NaN stays NaN", math.Float32frombits(0x7f800001), 0x7fc0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, half.ToBF16(tc.in))
			got := widenBF16([]uint16{half.ToBF16(tc.in)}, nil)[0]
			if math.IsNaN(float64(tc.in)) {
				assert.True(t, math.IsNaN(float64(got)))
			}
		})
	}
}

// bf16Kernels returns the BF16 products this machine runs: the emulation
// always, oneDNN's where the CPU has bf16 (elsewhere NewBF16 must refuse
// with ErrNoBF16, checked here too).
func bf16Kernels(t *testing.T) map[string]*BF16 {
	ks := map[string]*BF16{"emulated": NewBF16Emulated()}
	native, err := NewBF16()
	if !CPUHasBF16() {
		require.ErrorIs(t, err, ErrNoBF16)
		require.Nil(t, native)
		return ks
	}
	require.NoError(t, err)
	ks["native"] = native
	return ks
}

// TestBF16Gemm checks the bf16 products on the model's three forms
// (forward with its weight in SetWeights, weight gradient, input gradient
// through the transposed weight), with partial 64-row blocks, padded
// leading dimensions and both betas: within bf16 input rounding of the
// float64 product of the fp32 inputs (the error an 8-bit mantissa makes,
// ~2^-8 relative), but NOT equal to fp32's (the inputs were rounded), and
// the same bits on 1 thread and on 4.
func TestBF16Gemm(t *testing.T) {
	ks := bf16Kernels(t)
	defer func() {
		for _, k := range ks {
			k.Close()
		}
	}()
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name    string
		tA, tB  bool
		m, n, k int
		pad     int
		alpha   float32
		beta    float32
		weightB bool // op(B) is taken from SetWeights' buffer
	}{
		{"fwd", false, false, 1000, 256, 100, 0, 1, 0, true},
		{"fwd-beta1-pad", false, false, 777, 48, 256, 3, 1, 1, true},
		{"fwd-small", false, false, 5, 7, 3, 0, 1, 1, true},
		{"dW", true, false, 100, 256, 3001, 0, 1, 1, false},
		{"dW-pad-alpha", true, false, 130, 64, 500, 2, 0.5, 0, false},
		{"dH", false, true, 1000, 100, 256, 0, 1, 0, true},
		{"dH-pad", false, true, 333, 256, 47, 5, 1, 0, true},
	} {
		_, _, ar, ac, br, bc := blasShapes(tc.tA, tc.tB, tc.m, tc.n, tc.k)
		lda, ldb, ldc := ac+tc.pad, bc+tc.pad, tc.n+tc.pad
		a := randFeatures(r, ar*lda)
		// The weights buffer holds other tensors around op(B), as the
		// model's flat parameter buffer does.
		w := randFeatures(r, 37+br*ldb+11)
		b := w[37 : 37+br*ldb]
		c0 := randFeatures(r, tc.m*ldc)
		// want: the float64 product of the fp32 inputs.
		want := make([]float64, tc.m*tc.n)
		for i := range tc.m {
			for j := range tc.n {
				s := 0.0
				for l := range tc.k {
					ai, bi := i*lda+l, l*ldb+j
					if tc.tA {
						ai = l*lda + i
					}
					if tc.tB {
						bi = j*ldb + l
					}
					av, bv := a[ai], b[bi]
					s += float64(av) * float64(bv)
				}
				want[i*tc.n+j] = float64(tc.alpha)*s + float64(tc.beta)*float64(c0[i*ldc+j])
			}
		}
		fp32 := append([]float32(nil), c0...)
		Gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, fp32, ldc)
		for name, k := range ks {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				run := func() []float32 {
					if tc.weightB {
						k.SetWeights(w)
					} else {
						k.SetWeights(nil)
					}
					c := append([]float32(nil), c0...)
					k.Gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
					return c
				}
				got := run()
				scale, diff, from32 := 0.0, 0.0, 0.0
				for i := range tc.m {
					for j := range tc.n {
						g := float64(got[i*ldc+j])
						scale = max(scale, math.Abs(want[i*tc.n+j]))
						diff = max(diff, math.Abs(g-want[i*tc.n+j]))
						from32 = max(from32, math.Abs(g-float64(fp32[i*ldc+j])))
					}
					for j := tc.n; j < ldc; j++ {
						require.Equal(t, c0[i*ldc+j], got[i*ldc+j], "padding C[%d,%d]", i, j)
					}
				}
				t.Logf("max |bf16 - exact| / max |exact| = %.3g", diff/scale)
				require.LessOrEqual(t, diff/scale, 1e-2, "beyond bf16 input rounding")
				require.Greater(t, from32/scale, 1e-5, "equal to fp32: the inputs were not rounded to bf16")
				prev := runtime.GOMAXPROCS(1)
				one := run()
				runtime.GOMAXPROCS(4)
				four := run()
				runtime.GOMAXPROCS(prev)
				require.Equal(t, got, one, "1 thread vs %d", prev)
				require.Equal(t, got, four, "4 threads vs %d", prev)
			})
		}
	}
}

// TestBF16Weights: an op(B) in SetWeights' buffer is taken from the copy
// made then (a later change of the buffer is not seen until the next
// SetWeights: the weights are rounded once per step), and one outside it
// is rounded per call.
func TestBF16Weights(t *testing.T) {
	p := NewBF16Emulated()
	defer p.Close()
	w := []float32{9, 1, 2, 3, 4, 9}
	a := []float32{1, 1}
	c := make([]float32, 2)
	p.SetWeights(w)
	p.Gemm(false, false, 1, 2, 2, 1, a, 2, w[1:5], 2, 0, c, 2)
	assert.Equal(t, []float32{4, 6}, c)
	w[1] = 100 // not seen: the copy is SetWeights'
	p.Gemm(false, false, 1, 2, 2, 1, a, 2, w[1:5], 2, 0, c, 2)
	assert.Equal(t, []float32{4, 6}, c)
	p.SetWeights(w)
	p.Gemm(false, false, 1, 2, 2, 1, a, 2, w[1:5], 2, 0, c, 2)
	assert.Equal(t, []float32{103, 6}, c)
	other := []float32{1, 2, 3, 4}
	p.Gemm(false, false, 1, 2, 2, 1, a, 2, other, 2, 0, c, 2)
	assert.Equal(t, []float32{4, 6}, c)
	other[0] = 5 // seen: rounded per call
	p.Gemm(false, false, 1, 2, 2, 1, a, 2, other, 2, 0, c, 2)
	assert.Equal(t, []float32{8, 6}, c)
	// 1 + 2^-9 rounds to 1 in bf16, in A and in B alike.
	tiny := float32(1 + 1.0/512)
	p.Gemm(false, false, 1, 1, 1, 1, []float32{tiny}, 1, []float32{tiny}, 1, 0, c, 1)
	assert.Equal(t, float32(1), c[0])
}

// TestCheckPrecision: the two precisions, and a clear refusal otherwise.
func TestCheckPrecision(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"fp32", ""},
		{"bf16", ""},
		{"fp16", `"fp16": want one of fp32, bf16`},
		{"", `"": want one of fp32, bf16`},
	} {
		err := CheckPrecision(tc.in)
		if tc.err == "" {
			assert.NoError(t, err, tc.in)
		} else {
			assert.EqualError(t, err, tc.err, tc.in)
		}
	}
}
