package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// rowsWidths are the widths the bit tests run: every width up to 17 (each
// tail length, alone and after full vectors), the edges of every column
// block (8, 16, 32, 64 and their neighbours), the model's widths (47, 100,
// 256) and wide rows.
func rowsWidths() []int {
	ws := make([]int, 0, 48)
	for w := 1; w <= 17; w++ {
		ws = append(ws, w)
	}
	return append(ws, 23, 31, 32, 33, 47, 63, 64, 65, 71, 95, 96, 97, 100, 127, 128, 129, 255, 256, 257, 1000, 1024, 1031)
}

// randRows returns n rows of w values spread over many magnitudes and both
// signs, with exact zeros of both signs, so that rounding and the order
// of additions show in the bits.
func randRows(r *rand.Rand, n, w int) []float32 {
	x := make([]float32, n*w)
	for i := range x {
		switch r.IntN(16) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		default:
			x[i] = float32((r.Float64()*2 - 1) * math.Pow(2, float64(r.IntN(40)-20)))
		}
	}
	return x
}

// TestRowsMatchScalar checks the assembly against the scalar loop bit for
// bit: every width of rowsWidths, rows w or more apart, degrees 1 to 40
// with repeated rows, all
// three modes (sum, mean-like scale, add onto dst), and that not one value
// past dst's w columns is written.
func TestRowsMatchScalar(t *testing.T) {
	if !hasRows() {
		t.Skip("no row kernel on this CPU (needs AVX on amd64): callers run the portable loop")
	}
	type mode struct {
		name  string
		add   bool
		scale float32
	}
	modes := []mode{{"sum", false, 1}, {"mean", false, 1 / float32(3)}, {"scale7", false, float32(1 / float64(7))}, {"add", true, 1}}
	degrees := []int{1, 2, 3, 5, 15, 40}
	r := rand.New(rand.NewPCG(43, 1))
	for _, w := range rowsWidths() {
		for _, deg := range degrees {
			for _, m := range modes {
				// Rows w apart, and (the column bands of colSum) a few
				// values more.
				stride := w + deg%3
				t.Run(fmt.Sprintf("w%d/stride%d/deg%d/%s", w, stride, deg, m.name), func(t *testing.T) {
					const ns = 50
					src := randRows(r, ns, stride)
					idx := make([]int32, deg)
					for k := range idx {
						idx[k] = int32(r.IntN(ns)) // repeats allowed, as multi-edges
					}
					start := randRows(r, 1, w+9) // 9 guard values past the row
					got := append([]float32(nil), start...)
					want := append([]float32(nil), start...)
					require.True(t, SumRowsStride(got, src, w, stride, idx, m.add, m.scale))
					Scalar(want, src, w, stride, idx, m.add, m.scale)
					for c := range want {
						require.Equal(t, math.Float32bits(want[c]), math.Float32bits(got[c]),
							"column %d: got %g, want %g", c, got[c], want[c])
					}
				})
			}
		}
	}
}

// TestRowsChecksBounds: an index outside src, a short dst or (AxpyRows) too
// few weights panic before the assembly reads anything.
func TestRowsChecksBounds(t *testing.T) {
	if !hasRows() {
		t.Skip("no row kernel on this CPU")
	}
	src := make([]float32, 4*10)
	sum := func(dst []float32, idx []int32) func() {
		return func() { SumRows(dst, src, 10, idx, false, 1) }
	}
	axpy := func(dst []float32, idx []int32, a []float32) func() {
		return func() { AxpyRows(dst, src, 10, 10, idx, a) }
	}
	one, two := []float32{1}, []float32{1, 1}
	cases := []struct {
		name string
		call func()
	}{
		{"sum: index past the rows", sum(make([]float32, 10), []int32{0, 4})},
		{"sum: negative index", sum(make([]float32, 10), []int32{-1})},
		{"sum: short destination", sum(make([]float32, 9), []int32{1})},
		{"axpy: index past the rows", axpy(make([]float32, 10), []int32{0, 4}, two)},
		{"axpy: negative index", axpy(make([]float32, 10), []int32{-1}, one)},
		{"axpy: short destination", axpy(make([]float32, 9), []int32{1}, one)},
		{"axpy: too few weights", axpy(make([]float32, 10), []int32{1, 2}, one)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { require.Panics(t, c.call) })
	}
}

// TestMaskScaleMatchScalar: MaskScale gives the bits of the scalar loop
// d[k] *= T(pos)·scale of the model's backward pass, over lengths with
// every tail, y with zeros of both signs, NaN and infinities, and d with
// the same, for the scales 1 (no dropout) and 1/(1-p).
func TestMaskScaleMatchScalar(t *testing.T) {
	if !hasRows() {
		t.Skip("no mask kernel on this CPU")
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -1e-40}
	r := rand.New(rand.NewPCG(43, 4))
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 100, 1000, 4099} {
		for _, scale := range []float32{1, float32(1 / (1 - 0.5)), float32(1 / (1 - 0.3))} {
			t.Run(fmt.Sprintf("n%d/scale%g", n, scale), func(t *testing.T) {
				y, d := randRows(r, 1, n), randRows(r, 1, n)
				for k := range n {
					if r.IntN(8) == 0 {
						y[k] = special[r.IntN(len(special))]
					}
					if r.IntN(8) == 0 {
						d[k] = special[r.IntN(len(special))]
					}
				}
				want := append([]float32(nil), d...)
				for k := range want {
					pos := 0
					if y[k] > 0 {
						pos = 1
					}
					want[k] *= float32(pos) * scale
				}
				require.True(t, MaskScale(d, y, scale))
				for k := range want {
					require.Equal(t, math.Float32bits(want[k]), math.Float32bits(d[k]), "element %d: y %g", k, y[k])
				}
			})
		}
	}
}
