package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/sample"
)

// TestDropoutRowsKernel checks that dropoutRows on float32 rows (the
// vector kernel on the packed draws) gives, bit for bit, what dropUnit
// gives unit by unit on sample.MaskDraw's draws: widths around the
// kernel's 8-unit steps and the model's, ReLU on and off, in place and
// out of place, several rates. NaN, ±0 and ±Inf are among the inputs.
func TestDropoutRowsKernel(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40}
	r := rand.New(rand.NewPCG(43, 4))
	key := MaskKey{Seed: 7, Step: 3}
	const rows = 13
	for _, w := range []int{1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 100, 256} {
		for _, p := range []float32{0.1, 0.5, 0.9} {
			for _, relu := range []bool{false, true} {
				for _, inPlace := range []bool{false, true} {
					t.Run(fmt.Sprintf("w=%d/p=%g/relu=%v/inplace=%v", w, p, relu, inPlace), func(t *testing.T) {
						orig := make([]int64, rows)
						x := make([]float32, rows*w)
						for i := range orig {
							orig[i] = int64(r.IntN(1 << 20))
						}
						for k := range x {
							if r.IntN(8) == 0 {
								x[k] = special[r.IntN(len(special))]
							} else {
								x[k] = float32(r.NormFloat64())
							}
						}
						scale := float32(1 / (1 - float64(p)))
						f := [2]float32{0, scale}
						thr := int32(sample.MaskThreshold(p))
						want := make([]float32, len(x))
						for i, id := range orig {
							rk := sample.MaskKey(key.Seed, int(key.Step), 2, id)
							for u := range w {
								want[i*w+u] = dropUnit(x[i*w+u], sample.MaskDraw(rk, u), thr, &f, relu)
							}
						}
						o := make([]float32, len(x))
						in := x
						if inPlace {
							copy(o, x)
							in = o
						}
						dropoutRows(o, in, w, orig, 2, p, key, relu)
						for k := range o {
							same := math.Float32bits(o[k]) == math.Float32bits(want[k]) || (o[k] != o[k] && want[k] != want[k])
							require.Truef(t, same, "row %d unit %d (x=%g): %g, want %g", k/w, k%w, x[k], o[k], want[k])
						}
					})
				}
			}
		}
	}
}

// TestMaskRowMatchesDraws: the attention-dropout multipliers of a row
// (maskRow, whose words come from kernels.MaskWords at once) are scale
// exactly where sample.MaskDraw's draw of the unit reaches the threshold,
// and 0 elsewhere, for every length up to 300 (words on the stack and
// past it) and several rates.
func TestMaskRowMatchesDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range []float32{0.1, 0.5, 0.9} {
		thr := sample.MaskThreshold(p)
		scale := float32(1 / (1 - float64(p)))
		for n := 1; n <= 300; n++ {
			rk := r.Uint64()
			keep := make([]float32, n)
			maskRow(keep, rk, thr, scale)
			for u := range keep {
				want := float32(0)
				if sample.MaskDraw(rk, u) >= thr {
					want = scale
				}
				require.Equal(t, want, keep[u], "p=%g, %d units: unit %d", p, n, u)
			}
		}
	}
}
