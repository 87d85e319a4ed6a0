package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestAxpyRowsMatchSaxpy checks AxpyRows (and AxpyRowsZero, on a cleared
// row) bit for bit against one gonum Saxpy per row, the calls they replace
// in GAT:
// every width of rowsWidths, rows w or more apart, degrees 1 to 40 with
// repeated rows, weights of many magnitudes with zeros of both signs, NaN
// and infinities in rows and weights, and not one value written past dst's
// w columns.
func TestAxpyRowsMatchSaxpy(t *testing.T) {
	if !hasRows() {
		t.Skip("no row kernel on this CPU (needs AVX on amd64): callers run the Axpy loop")
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40}
	r := rand.New(rand.NewPCG(43, 7))
	for _, w := range rowsWidths() {
		for _, deg := range []int{0, 1, 2, 3, 5, 15, 40} {
			stride := w + deg%3
			t.Run(fmt.Sprintf("w%d/stride%d/deg%d", w, stride, deg), func(t *testing.T) {
				const ns = 50
				src := randRows(r, ns, stride)
				for k := range src {
					if r.IntN(64) == 0 {
						src[k] = special[r.IntN(len(special))]
					}
				}
				idx := make([]int32, deg)
				for k := range idx {
					idx[k] = int32(r.IntN(ns)) // repeats allowed, as multi-edges
				}
				a := randRows(r, 1, deg)
				if deg > 2 {
					a[1] = special[r.IntN(len(special))]
				}
				start := randRows(r, 1, w+9) // 9 guard values past the row
				got := append([]float32(nil), start...)
				saxpy := append([]float32(nil), start...)
				require.True(t, AxpyRows(got, src, w, stride, idx, a))
				for k, j := range idx {
					gonum.Implementation{}.Saxpy(w, a[k], src[int(j)*stride:], 1, saxpy, 1)
				}
				requireBits(t, saxpy, got, "AxpyRows")

				// AxpyRowsZero: the Saxpy calls on a cleared row, dst's
				// old values never read (NaN there would show).
				zero := randRows(r, 1, w+9)
				for c := range w {
					zero[c] = float32(math.NaN())
				}
				got = append([]float32(nil), zero...)
				saxpy = append([]float32(nil), zero...)
				clear(saxpy[:w])
				require.True(t, AxpyRowsZero(got, src, w, stride, idx, a))
				for k, j := range idx {
					gonum.Implementation{}.Saxpy(w, a[k], src[int(j)*stride:], 1, saxpy, 1)
				}
				requireBits(t, saxpy, got, "AxpyRowsZero")
			})
		}
	}
}

// requireBits requires got to hold want's bits, value by value.
func requireBits(t *testing.T, want, got []float32, what string) {
	t.Helper()
	for c := range want {
		require.Equal(t, math.Float32bits(want[c]), math.Float32bits(got[c]),
			"%s: column %d: got %g, Saxpy %g", what, c, got[c], want[c])
	}
}
