package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGemmEdgeShapes runs the build's float32 kernel (oneDNN by default) on
// the degenerate products a model meets, e.g. a weight gradient over a
// block without destinations (k = 0), where BLAS semantics say C = beta·C
// and beta = 0 clears C even of NaNs (A holds (m-1)·lda elements there, the
// length gonum's BLAS insists on even for k = 0); and checks that a bad shape panics
// (a programming error, as in gonum) instead of reading past a slice.
func TestGemmEdgeShapes(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name    string
		tA, tB  bool
		m, n, k int
		a, b    []float32
		lda     int
		ldb     int
		beta    float32
		c       []float32
		ldc     int
		want    []float32
	}{
		{name: "k=0 beta=0 clears NaN", m: 2, n: 2, k: 0, a: []float32{0}, lda: 1, ldb: 2, beta: 0,
			c: []float32{nan, 1, 2, 3}, ldc: 2, want: []float32{0, 0, 0, 0}},
		{name: "k=0 beta=2 scales, padding kept", m: 2, n: 1, k: 0, a: []float32{0}, lda: 1, ldb: 1, beta: 2,
			c: []float32{1, 9, 3, 9}, ldc: 2, want: []float32{2, 9, 6, 9}},
		{name: "dW with k=0 (tA)", tA: true, m: 2, n: 2, k: 0, lda: 2, ldb: 2, beta: 1,
			c: []float32{1, 2, 3, 4}, ldc: 2, want: []float32{1, 2, 3, 4}},
		{name: "m=0", m: 0, n: 3, k: 2, a: nil, b: make([]float32, 6), lda: 2, ldb: 3, ldc: 3},
		{name: "1x1x1", m: 1, n: 1, k: 1, a: []float32{3}, b: []float32{4}, lda: 1, ldb: 1, beta: 1,
			c: []float32{1}, ldc: 1, want: []float32{13}},
		{name: "dH (tB) 1x2x2", tB: true, m: 1, n: 2, k: 2, a: []float32{1, 2}, b: []float32{1, 0, 0, 1}, lda: 2, ldb: 2,
			c: []float32{nan, nan}, ldc: 2, want: []float32{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := append([]float32(nil), tc.c...)
			Gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, tc.a, tc.lda, tc.b, tc.ldb, tc.beta, c, tc.ldc)
			require.Equal(t, tc.want, c)
		})
	}
}

// TestGemmBadShapesPanic: operands too short for their shape, or leading
// dimensions smaller than a row, panic before any kernel reads them.
func TestGemmBadShapesPanic(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		m, n, k              int
		na, lda, nb, ldb, nc int
		ldc                  int
	}{
		{"short A", 2, 2, 2, 3, 2, 4, 2, 4, 2},
		{"short B", 2, 2, 2, 4, 2, 3, 2, 4, 2},
		{"short C", 2, 2, 2, 4, 2, 4, 2, 3, 2},
		{"lda < k", 2, 2, 2, 4, 1, 4, 2, 4, 2},
		{"ldc < n", 2, 2, 2, 4, 2, 4, 2, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, c := make([]float32, tc.na), make([]float32, tc.nb), make([]float32, tc.nc)
			require.Panics(t, func() {
				Gemm(false, false, tc.m, tc.n, tc.k, 1, a, tc.lda, b, tc.ldb, 0, c, tc.ldc)
			})
		})
	}
}
