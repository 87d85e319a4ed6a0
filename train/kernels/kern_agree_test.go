package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGemmKernelsAgree checks every kernel built in (gemmKernels: without
// tags oneDNN fp32, the default, and OpenBLAS) against the build's own on the model's three product forms, with row counts that do
// and do not fill the 64-row blocks, padded leading dimensions and both
// betas the model uses. fp32 kernels must agree to float32 rounding; bf16
// ones to bf16 input rounding (8-bit mantissa). It also checks that each
// kernel, the build's own included, gives the same bits on 1 and 2
// threads.
func TestGemmKernelsAgree(t *testing.T) {
	kernels := gemmKernels(t)
	defer func() {
		for _, k := range kernels {
			if k.close != nil {
				k.close()
			}
		}
	}()
	ref := kernels[0]
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name    string
		tA, tB  bool
		m, n, k int
		pad     int // extra leading-dimension columns on every operand
		beta    float32
		weightB bool
	}{
		{"fwd", false, false, 1000, 256, 100, 0, 0, true},
		{"fwd-beta1-pad", false, false, 777, 48, 256, 3, 1, true},
		{"fwd-small", false, false, 5, 7, 3, 0, 1, true},
		{"dW", true, false, 100, 256, 3001, 0, 1, false},
		{"dW-pad", true, false, 130, 64, 500, 2, 0, false},
		{"dH", false, true, 1000, 100, 256, 0, 0, true},
		{"dH-pad", false, true, 333, 256, 47, 5, 0, true},
	} {
		_, _, ar, ac, br, bc := blasShapes(tc.tA, tc.tB, tc.m, tc.n, tc.k)
		lda, ldb, ldc := ac+tc.pad, bc+tc.pad, tc.n+tc.pad
		a := randFeatures(r, ar*lda)
		b := randFeatures(r, br*ldb)
		c0 := randFeatures(r, tc.m*ldc)
		run := func(k benchKernel) []float32 {
			c := append([]float32(nil), c0...)
			k.gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, tc.beta, c, ldc)
			return c
		}
		want := run(ref)
		for _, k := range kernels {
			if k.weightB && !tc.weightB {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", k.name, tc.name), func(t *testing.T) {
				got := run(k)
				scale, diff := 0.0, 0.0
				for i := range tc.m {
					for j := range tc.n {
						w, g := float64(want[i*ldc+j]), float64(got[i*ldc+j])
						scale = max(scale, math.Abs(w))
						diff = max(diff, math.Abs(g-w))
					}
				}
				// Padding columns of C must be untouched.
				for i := range tc.m {
					for j := tc.n; j < ldc; j++ {
						require.Equal(t, c0[i*ldc+j], got[i*ldc+j], "padding C[%d,%d]", i, j)
					}
				}
				tol := 1e-5
				if k.name == "dnnl-bf16" || k.name == "dnnl-bf16w" {
					tol = 2e-2
				}
				t.Logf("max |diff| / max |ref| = %.3g", diff/scale)
				require.LessOrEqual(t, diff/scale, tol)
				// Same bits on one thread.
				prev := runtime.GOMAXPROCS(1)
				one := run(k)
				runtime.GOMAXPROCS(prev)
				require.Equal(t, got, one, "1 thread vs %d", prev)
			})
		}
	}
}
