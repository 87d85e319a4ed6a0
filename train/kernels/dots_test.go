package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeadDotsMatchDot: HeadDots gives the bits of one Dot per (row,
// segment), on float32 (the vector kernel where the CPU has AVX) and
// float64 (dot4): every row count up to 17 (so each padded last group of
// eight), one to five segments, values a segment apart or shared, widths
// around GAT's head widths (each tail of the four-column chunks), rows
// anywhere in the source and repeated, with NaN, infinities and zeros of
// both signs among the values.
func TestHeadDotsMatchDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 43))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 1e-40}
	vec := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			if r.IntN(32) == 0 {
				x[i] = special[r.IntN(len(special))]
			} else {
				x[i] = (r.Float64()*2 - 1) * math.Pow(2, float64(r.IntN(30)-15))
			}
		}
		return x
	}
	for _, f := range []int{1, 3, 4, 5, 47, 64, 100} {
		for _, segs := range []int{1, 2, 3, 4, 5} {
			for _, n := range []int{1, 2, 3, 5, 7, 8, 9, 11, 16, 17} {
				t.Run(fmt.Sprintf("f%d/segs%d/rows%d", f, segs, n), func(t *testing.T) {
					stride := segs*f + 3
					src := vec(20 * stride)
					rows := make([]int, n)
					for k := range rows {
						rows[k] = r.IntN(20)*stride + r.IntN(3)
					}
					for _, vs := range []int{0, f} {
						v := vec(segs * f)
						checkHeadDots(t, v, vs, src, rows, f, segs)
						checkHeadDots(t, f32(v), vs, f32(src), rows, f, segs)
					}
				})
			}
		}
	}
}

// checkHeadDots compares HeadDots with Dot, bit for bit, and checks that
// nothing past the n·segs outputs is written.
func checkHeadDots[T Float](t *testing.T, v []T, vs int, src []T, rows []int, f, segs int) {
	n := len(rows)
	out := make([]T, n*segs+2)
	guard := T(math.Pi)
	out[n*segs], out[n*segs+1] = guard, guard
	HeadDots(out, v, vs, src, n, func(k int) int { return rows[k] }, f, segs)
	for k := range n {
		for s := range segs {
			want := Dot(v[s*vs:s*vs+f], src[rows[k]+s*f:rows[k]+(s+1)*f])
			got := out[k*segs+s]
			require.Equal(t, math.Float64bits(float64(want)), math.Float64bits(float64(got)),
				"row %d, segment %d (vs %d): got %v, want %v", k, s, vs, got, want)
		}
	}
	require.Equal(t, []T{guard, guard}, out[n*segs:], "written past the outputs")
}

// f32 rounds values to float32.
func f32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}
