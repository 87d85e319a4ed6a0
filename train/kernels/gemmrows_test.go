package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGemmRowsIsGemm: running the blocks of RowBlocks one by one with
// GemmRows, in any order, gives Gemm's bits, for products that Gemm runs as
// one call and products it cuts (a short last block included), with B
// transposed or not and beta 0 and 1, in float32 (the build's kernel) and
// float64.
func TestGemmRowsIsGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 43))
	for _, sh := range []struct{ m, n, k int }{
		{5, 7, 3},        // one call: below the cut
		{64, 256, 100},   // one block of exactly gemmBlock rows
		{1000, 256, 100}, // cut: 15 full blocks and one of 40
		{4099, 47, 256},
	} {
		size, count := RowBlocks(sh.m, sh.n, sh.k)
		require.GreaterOrEqual(t, size*count, sh.m)
		require.Less(t, size*(count-1), sh.m)
		for _, c := range []struct {
			tB   bool
			beta float32
		}{{false, 0}, {false, 1}, {true, 0}, {true, 1}} {
			tB, beta := c.tB, c.beta
			ldb := sh.n
			if tB {
				ldb = sh.k // B is stored n x k
			}
			t.Run(fmt.Sprintf("%dx%dx%d/tB=%v/beta%g", sh.m, sh.n, sh.k, tB, beta), func(t *testing.T) {
				a := randFeatures(r, sh.m*sh.k)
				b := randFeatures(r, sh.k*sh.n)
				c0 := randFeatures(r, sh.m*sh.n)
				want := append([]float32(nil), c0...)
				Gemm(false, tB, sh.m, sh.n, sh.k, 1, a, sh.k, b, ldb, beta, want, sh.n)
				got := append([]float32(nil), c0...)
				for blk := count - 1; blk >= 0; blk-- { // last block first
					GemmRows(tB, blk*size, min((blk+1)*size, sh.m), sh.n, sh.k, a, sh.k, b, ldb, beta, got, sh.n)
				}
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "element %d", i)
				}
				a64, b64, c64 := convert[float64](a), convert[float64](b), convert[float64](c0)
				want64 := append([]float64(nil), c64...)
				Gemm(false, tB, sh.m, sh.n, sh.k, 1, a64, sh.k, b64, ldb, float64(beta), want64, sh.n)
				for blk := range count {
					GemmRows(tB, blk*size, min((blk+1)*size, sh.m), sh.n, sh.k, a64, sh.k, b64, ldb, float64(beta), c64, sh.n)
				}
				for i := range want64 {
					require.Equal(t, math.Float64bits(want64[i]), math.Float64bits(c64[i]), "float64 element %d", i)
				}
			})
		}
	}
}
