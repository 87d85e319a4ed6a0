package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/train/kernels/simd"
)

// axpyRows is the loop SumRows and AddRows replace (train's aggregation
// and scatter before issue 43): one Axpy per row into dst.
func axpyRows[T Float](dst, src []T, w int, idx []int32, add bool, scale T) {
	d := dst[:w]
	if !add {
		clear(d)
	}
	for _, j := range idx {
		Axpy(1, src[int(j)*w:(int(j)+1)*w], d)
	}
	if !add && len(idx) > 0 {
		for c := range d {
			d[c] *= scale
		}
	}
}

// TestRowsMatchAxpyLoop: SumRows and AddRows give the Axpy loop's bits,
// float32 (the assembly where the CPU has AVX) and float64 (the loop
// itself), over widths across the column blocks and their tails, and
// degrees 0 (an isolated destination: zeros, not scaled) to 30.
func TestRowsMatchAxpyLoop(t *testing.T) {
	widths := []int{1, 3, 7, 8, 9, 15, 16, 17, 33, 47, 64, 65, 100, 256, 257, 1030}
	degrees := []int{0, 1, 2, 10, 30}
	r := rand.New(rand.NewPCG(43, 2))
	for _, w := range widths {
		for _, deg := range degrees {
			for _, add := range []bool{false, true} {
				name := fmt.Sprintf("w%d/deg%d/add=%v", w, deg, add)
				const ns = 40
				idx := make([]int32, deg)
				for k := range idx {
					idx[k] = int32(r.IntN(ns))
				}
				src := make([]float64, ns*w)
				start := make([]float64, w)
				for i := range src {
					src[i] = (r.Float64()*2 - 1) * math.Pow(2, float64(r.IntN(30)-15))
				}
				for i := range start {
					start[i] = r.NormFloat64()
				}
				scale := 1 / float64(max(deg, 1))
				t.Run(name+"/float32", func(t *testing.T) {
					s32, st32 := to32(src), to32(start)
					got, want := append([]float32(nil), st32...), append([]float32(nil), st32...)
					if add {
						AddRows(got, s32, w, idx)
					} else {
						SumRows(got, s32, w, idx, float32(scale))
					}
					axpyRows(want, s32, w, idx, add, float32(scale))
					for c := range want {
						require.Equal(t, math.Float32bits(want[c]), math.Float32bits(got[c]), "column %d", c)
					}
				})
				t.Run(name+"/float64", func(t *testing.T) {
					got, want := append([]float64(nil), start...), append([]float64(nil), start...)
					if add {
						AddRows(got, src, w, idx)
					} else {
						SumRows(got, src, w, idx, scale)
					}
					simd.Scalar(want, src, w, w, idx, add, scale)
					for c := range want {
						require.Equal(t, math.Float64bits(want[c]), math.Float64bits(got[c]), "column %d", c)
					}
				})
			}
		}
	}
}

// convert returns x's values as another float type.
func convert[D, S Float](x []S) []D {
	y := make([]D, len(x))
	for i, v := range x {
		y[i] = D(v)
	}
	return y
}

func to32(x []float64) []float32 { return convert[float32](x) }

// BenchmarkRows times one block's mean aggregation (every destination
// the mean of deg random source rows, as sumAggregate runs it on one
// thread) with SumRows against the Axpy loop it replaced, at the peer
// run's widths: 100 (layer 0's features) and 256 (hidden).
func BenchmarkRows(b *testing.B) {
	const nd, ns = 2048, 20000
	for _, w := range []int{100, 256} {
		for _, deg := range []int{5, 10, 15} {
			r := rand.New(rand.NewPCG(1, 2))
			src := make([]float32, ns*w)
			for i := range src {
				src[i] = r.Float32()
			}
			idx := make([]int32, nd*deg)
			for k := range idx {
				idx[k] = int32(r.IntN(ns))
			}
			dst := make([]float32, nd*w)
			scale := 1 / float32(deg)
			run := func(b *testing.B, f func(d []float32, ix []int32)) {
				b.SetBytes(int64(nd * deg * w * 4))
				for b.Loop() {
					for i := range nd {
						f(dst[i*w:(i+1)*w], idx[i*deg:(i+1)*deg])
					}
				}
			}
			b.Run(fmt.Sprintf("w%d/deg%d/SumRows", w, deg), func(b *testing.B) {
				run(b, func(d []float32, ix []int32) { SumRows(d, src, w, ix, scale) })
			})
			b.Run(fmt.Sprintf("w%d/deg%d/Axpy", w, deg), func(b *testing.B) {
				run(b, func(d []float32, ix []int32) { axpyRows(d, src, w, ix, false, scale) })
			})
		}
	}
}

// TestAddColumnsMatchColumnLoop: AddColumns gives the bits of the column
// loop it replaced in train's colSum (per column, s += x[i*w+c] over the
// rows in order) for bands at the start, middle and end of rows, tails of
// every length, and row counts across the tile of 256.
func TestAddColumnsMatchColumnLoop(t *testing.T) {
	cases := []struct{ n, w, lo, hi int }{
		{1, 1, 0, 1}, {3, 5, 0, 5}, {7, 47, 0, 47}, {300, 47, 10, 30}, {255, 256, 0, 256},
		{256, 256, 128, 256}, {257, 100, 3, 99}, {600, 256, 0, 128}, {513, 71, 64, 71}, {40, 1030, 1, 1029},
	}
	r := rand.New(rand.NewPCG(43, 3))
	for _, c := range cases {
		x := make([]float64, c.n*c.w)
		for i := range x {
			x[i] = (r.Float64()*2 - 1) * math.Pow(2, float64(r.IntN(30)-15))
		}
		start := make([]float64, c.hi-c.lo)
		for i := range start {
			start[i] = r.NormFloat64()
		}
		name := fmt.Sprintf("n%d/w%d/%d-%d", c.n, c.w, c.lo, c.hi)
		t.Run(name+"/float32", func(t *testing.T) {
			x32 := to32(x)
			got, want := to32(start), to32(start)
			AddColumns(got, x32, c.n, c.w, c.lo, c.hi)
			columnLoop(want, x32, c.n, c.w, c.lo, c.hi)
			for k := range want {
				require.Equal(t, math.Float32bits(want[k]), math.Float32bits(got[k]), "column %d", c.lo+k)
			}
		})
		t.Run(name+"/float64", func(t *testing.T) {
			got, want := append([]float64(nil), start...), append([]float64(nil), start...)
			AddColumns(got, x, c.n, c.w, c.lo, c.hi)
			columnLoop(want, x, c.n, c.w, c.lo, c.hi)
			for k := range want {
				require.Equal(t, math.Float64bits(want[k]), math.Float64bits(got[k]), "column %d", c.lo+k)
			}
		})
	}
}

// columnLoop is train's colSum before issue 43, on one band: down each
// column in row order.
func columnLoop[T Float](acc, x []T, n, w, lo, hi int) {
	for k := lo; k < hi; k++ {
		s := acc[k-lo]
		for i := range n {
			s += x[i*w+k]
		}
		acc[k-lo] = s
	}
}
