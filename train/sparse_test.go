package train

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/sample"
)

// sparsify zeroes about 85 % of x (width dim) and returns the result both
// dense and as sparse rows.
func sparsify(r *rand.Rand, x []float32, dim int) ([]float32, *sample.SparseRows) {
	xs := &sample.SparseRows{}
	xs.Reset(dim)
	for i := range x {
		if r.Float64() < 0.85 {
			x[i] = 0
		}
	}
	for i := 0; i < len(x)/dim; i++ {
		xs.AppendDense(x[i*dim : (i+1)*dim])
	}
	return x, xs
}

// relClose asserts |a-b| <= tol·max(1, max|a|) elementwise.
func relClose(t *testing.T, want, got []float32, tol float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	scale := 1.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range want {
		require.LessOrEqualf(t, math.Abs(float64(want[i]-got[i])), tol*scale, "%s[%d]: dense %v sparse %v", what, i, want[i], got[i])
	}
}

// TestSparseMatchesDense: every architecture gives the same logits, loss
// and gradients on sparse input rows as on the same rows dense, with and
// without (input) dropout, in training and evaluation.
func TestSparseMatchesDense(t *testing.T) {
	for _, tc := range gradCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.InDim = 23 // wide enough for rows with several zeros
			md, blocks, x, y := testCase(t, cfg, 7)
			ms, err := NewModel(cfg, 7)
			require.NoError(t, err)
			require.NoError(t, ms.SetParams(md.Params()))
			x, xs := sparsify(rand.New(rand.NewPCG(3, 4)), x, cfg.InDim)
			require.NoError(t, xs.Check())
			require.Equal(t, x, xs.Dense())
			key := MaskKey{Seed: 11, Step: 5}
			for _, train := range []bool{false, true} {
				clear(md.Grads())
				clear(ms.Grads())
				ld, cd, err := fb(md.n, &sample.Batch{Blocks: blocks, Labels: y}, dense(x), 0.25, train, key)
				require.NoError(t, err)
				ls, cs, err := fb(ms.n, &sample.Batch{Blocks: blocks, Labels: y}, sparse[float32](xs), 0.25, train, key)
				require.NoError(t, err)
				require.InDelta(t, ld, ls, 1e-5*math.Max(1, math.Abs(ld)))
				require.Equal(t, cd, cs)
				relClose(t, md.Grads(), ms.Grads(), 1e-5, "grads")
			}
			od, err := md.Forward(&sample.Batch{Blocks: blocks, X: x})
			require.NoError(t, err)
			od = append([]float32(nil), od...)
			os, err := ms.Forward(&sample.Batch{Blocks: blocks, XS: xs})
			require.NoError(t, err)
			relClose(t, od, os, 1e-5, "logits")
			pd, err := md.Predict(&sample.Batch{Blocks: blocks, X: x}, nil)
			require.NoError(t, err)
			ps, err := ms.Predict(&sample.Batch{Blocks: blocks, XS: xs}, nil)
			require.NoError(t, err)
			require.Equal(t, pd, ps)
		})
	}
}

// TestSparseInputErrors: malformed sparse inputs give one clear error.
func TestSparseInputErrors(t *testing.T) {
	cfg := Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2}
	m, blocks, x, y := testCase(t, cfg, 1)
	good := func() *sample.SparseRows {
		xs := &sample.SparseRows{}
		xs.Reset(cfg.InDim)
		for i := 0; i < len(x)/cfg.InDim; i++ {
			xs.AppendDense(x[i*cfg.InDim : (i+1)*cfg.InDim])
		}
		return xs
	}
	cases := []struct {
		name   string
		break_ func(*sample.SparseRows)
		want   string
	}{
		{"width", func(s *sample.SparseRows) { s.Cols = 6 }, "width 6"},
		{"rows", func(s *sample.SparseRows) { s.Indptr = s.Indptr[:len(s.Indptr)-1] }, "sparse input rows"},
		{"column", func(s *sample.SparseRows) { s.Indices[0] = 9 }, "outside [0,5)"},
		{"unsorted", func(s *sample.SparseRows) { s.Indices[0], s.Indices[1] = s.Indices[1], s.Indices[0] }, "not increasing"},
		{"values", func(s *sample.SparseRows) { s.Values = s.Values[:1] }, "does not frame"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs := good()
			tc.break_(xs)
			_, _, err := m.Train(&sample.Batch{Blocks: blocks, XS: xs, Labels: y}, 1, MaskKey{})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSparseThreadIndependent: the sparse kernels give bit-identical
// outputs and gradients on 1 and 4 threads (rows are split for X·W, output
// columns for Xᵀ·dP, so no sum changes order), on inputs large enough to
// take the parallel paths.
func TestSparseThreadIndependent(t *testing.T) {
	for _, arch := range Archs() {
		t.Run(arch, func(t *testing.T) {
			cfg := Config{Arch: arch, InDim: 300, Hidden: 64, Classes: 5, Layers: 2, Dropout: 0.3, InputDropout: 0.2}
			switch arch {
			case ArchGAT:
				cfg.Opts = GATOpts(4, 0)
			case ArchGINE:
				cfg.EdgeDim = 3
				fallthrough
			case ArchGIN:
				cfg.Opts = GINOpts(true, 0.1)
			}
			r := rand.New(rand.NewPCG(5, 6))
			blocks := synthBlocks(r, []int{900, 300, 100}, []int{6, 4}, 7)
			if cfg.EdgeDim > 0 {
				addEdgeFeat(r, blocks, cfg.EdgeDim)
			}
			_, xs := sparsify(r, randFeatures(r, 900*cfg.InDim), cfg.InDim)
			y := randLabels(r, 100, cfg.Classes)
			run := func(threads int) ([]float32, []float32) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
				m, err := NewModel(cfg, 9)
				require.NoError(t, err)
				_, _, err = m.Train(&sample.Batch{Blocks: blocks, XS: xs, Labels: y}, 0.01, MaskKey{Seed: 2, Step: 3})
				require.NoError(t, err)
				out, err := m.Forward(&sample.Batch{Blocks: blocks, XS: xs})
				require.NoError(t, err)
				return append([]float32(nil), out...), append([]float32(nil), m.Grads()...)
			}
			o1, g1 := run(1)
			o4, g4 := run(4)
			require.Equal(t, o1, o4)
			require.Equal(t, g1, g4)
		})
	}
}
