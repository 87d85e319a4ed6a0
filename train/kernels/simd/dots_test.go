package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDotRows8MatchScalar checks DotRows8 bit for bit against DotScalar:
// every width up to 17 and GAT's head widths (each tail of the four-column
// chunks), one to five segments (pairs and a single one left), values a
// segment apart or shared (vs 0), rows anywhere in a source (repeats
// included), with NaN, infinities and zeros of both signs among the
// values, and nothing written past the outputs.
func TestDotRows8MatchScalar(t *testing.T) {
	if !hasRows() {
		t.Skip("no row kernel on this CPU (needs AVX on amd64): callers run the scalar loop")
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40}
	r := rand.New(rand.NewPCG(43, 8))
	for _, f := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 47, 64, 100} {
		for _, segs := range []int{1, 2, 3, 4, 5} {
			for _, vs := range []int{0, f, f + 3} {
				t.Run(fmt.Sprintf("f%d/segs%d/vs%d", f, segs, vs), func(t *testing.T) {
					const nrows = 12
					stride := segs*f + 5
					src := randRows(r, nrows, stride)
					v := randRows(r, 1, segs*(f+3)+1)
					for _, x := range [][]float32{src, v} {
						for k := range x {
							if r.IntN(48) == 0 {
								x[k] = special[r.IntN(len(special))]
							}
						}
					}
					var rows [8][]float32
					for k := range rows {
						j := r.IntN(nrows)
						rows[k] = src[j*stride+r.IntN(5):][:segs*f]
					}
					got := randRows(r, 1, 8*segs+3)
					want := append([]float32(nil), got...)
					require.True(t, DotRows8(got, v, vs, &rows, f, segs))
					DotScalar(want, v, vs, &rows, f, segs)
					for k := range want {
						require.Equal(t, math.Float32bits(want[k]), math.Float32bits(got[k]),
							"output %d (segment %d, row %d): got %g, want %g", k, k/8, k%8, got[k], want[k])
					}
				})
			}
		}
	}
}

// TestDotRows8Panics: short operands are refused, not read past.
func TestDotRows8Panics(t *testing.T) {
	if !hasRows() {
		t.Skip("no row kernel on this CPU")
	}
	ok := func() [8][]float32 {
		var rows [8][]float32
		for k := range rows {
			rows[k] = make([]float32, 8)
		}
		return rows
	}
	short := ok()
	short[5] = short[5][:7]
	for _, c := range []struct {
		name string
		call func()
	}{
		{"short out", func() { rows := ok(); DotRows8(make([]float32, 15), make([]float32, 8), 4, &rows, 4, 2) }},
		{"short v", func() { rows := ok(); DotRows8(make([]float32, 16), make([]float32, 7), 4, &rows, 4, 2) }},
		{"short row", func() { DotRows8(make([]float32, 16), make([]float32, 8), 4, &short, 4, 2) }},
		{"negative width", func() { rows := ok(); DotRows8(make([]float32, 16), make([]float32, 8), 4, &rows, -4, 2) }},
	} {
		t.Run(c.name, func(t *testing.T) { require.Panics(t, c.call) })
	}
}

// BenchmarkDotRows8 is GAT's backward on the peer graph's hidden layers:
// eight edges' rows against four heads of 64.
func BenchmarkDotRows8(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const f, segs = 64, 4
	src := randRows(r, 8, segs*f)
	v := randRows(r, 1, segs*f)
	var rows [8][]float32
	for k := range rows {
		rows[k] = src[k*segs*f : (k+1)*segs*f]
	}
	out := make([]float32, 8*segs)
	for _, name := range []string{"avx", "scalar"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if name == "avx" {
					DotRows8(out, v, f, &rows, f, segs)
				} else {
					DotScalar(out, v, f, &rows, f, segs)
				}
			}
		})
	}
}
