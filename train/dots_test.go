package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDotsMatchDot: dot4 and rowDots (any row count, so every
// padded tail) give the bits of one dot per pair, on lengths around GAT's
// head widths, with NaN, infinities and zeros of both signs among the
// values, in float32 and float64.
func TestDotsMatchDot(t *testing.T) {
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
	for _, n := range []int{1, 3, 47, 64, 100} {
		for _, rows := range []int{1, 2, 3, 4, 5, 7, 8, 11} {
			t.Run(fmt.Sprintf("n%d/rows%d", n, rows), func(t *testing.T) {
				const stride, off = 130, 5
				v, src := vec(n), vec(20*stride)
				idx := make([]int32, rows)
				for k := range idx {
					idx[k] = int32(r.IntN(20))
				}
				checkDots(t, v, src, idx, stride, off)
				checkDots(t, f32(v), f32(src), idx, stride, off)
			})
		}
	}
}

// checkDots compares rowDots and dot4 with dot, bit for bit.
func checkDots[T Float](t *testing.T, v, src []T, idx []int32, stride, off int) {
	n := len(v)
	row := func(k int) []T { j := int(idx[k])*stride + off; return src[j : j+n] }
	out := make([]T, 2*len(idx))
	rowDots(v, src, stride, off, idx, out, 2)
	for k := range idx {
		require.Equal(t, bitsOf([]T{dot(v, row(k))}), bitsOf([]T{out[2*k]}), "rowDots row %d", k)
	}
	k3 := min(3, len(idx)-1)
	s0, s1, s2, s3 := dot4(row(0), v, v, row(k3), row(k3), row(0), v, v)
	want := []T{dot(row(0), v), dot(v, row(k3)), dot(row(k3), row(0)), dot(v, v)}
	require.Equal(t, bitsOf(want), bitsOf([]T{s0, s1, s2, s3}), "dot4")
}

// f32 rounds values to float32.
func f32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}
