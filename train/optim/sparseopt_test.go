package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sparseSteps draws steps of distinct ascending rows of an n-row table with
// gradients of width d; some rows are never touched.
func sparseSteps(n, d, steps int) (rows [][]int64, grads [][]float32) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range steps {
		var r []int64
		var g []float32
		for i := range int64(n) {
			if i%4 != 3 && rng.IntN(2) == 0 { // rows 3, 7, ... stay untouched
				r = append(r, i)
				for range d {
					g = append(g, float32(rng.NormFloat64()))
				}
			}
		}
		rows, grads = append(rows, r), append(grads, g)
	}
	return rows, grads
}

func initTable(n, d int) []float32 {
	p := make([]float32, n*d)
	for i := range p {
		p[i] = float32(i%7) / 10
	}
	return p
}

// TestSparseAdamMatchesDenseAdamPerRow checks SparseAdam against the dense
// Adam run on each row alone, stepping only when the row is touched: equal
// bit for bit (the same formula), and untouched rows unchanged.
func TestSparseAdamMatchesDenseAdamPerRow(t *testing.T) {
	const n, d = 12, 3
	rows, grads := sparseSteps(n, d, 6)
	params := initTable(n, d)
	init := append([]float32(nil), params...)
	opt, err := NewSparseAdam(params, d, DefaultSparseAdam(0.01))
	require.NoError(t, err)
	ref := append([]float32(nil), params...)
	dense := make([]*Adam, n)
	for i := range dense {
		dense[i], err = NewAdam(d, DefaultAdam(0.01, 0))
		require.NoError(t, err)
	}
	for s := range rows {
		require.NoError(t, opt.Step(rows[s], grads[s]))
		for i, r := range rows[s] {
			require.NoError(t, dense[r].Step(ref[r*d:(r+1)*d], grads[s][i*d:(i+1)*d]))
		}
	}
	assert.Equal(t, ref, params)
	for r := 3; r < n; r += 4 {
		assert.Equal(t, init[r*d:(r+1)*d], params[r*d:(r+1)*d], "untouched row %d", r)
	}
}

// TestSparseAdagradMatchesDense checks SparseAdagrad against dense Adagrad
// over the whole table with zero gradients for untouched rows.
func TestSparseAdagradMatchesDense(t *testing.T) {
	const n, d = 12, 3
	rows, grads := sparseSteps(n, d, 6)
	params := initTable(n, d)
	opt, err := NewSparseAdagrad(params, d, DefaultSparseAdagrad(0.1))
	require.NoError(t, err)
	ref := initTable(n, d)
	sum := make([]float32, n*d)
	for s := range rows {
		require.NoError(t, opt.Step(rows[s], grads[s]))
		full := make([]float32, n*d)
		for i, r := range rows[s] {
			copy(full[r*d:(r+1)*d], grads[s][i*d:(i+1)*d])
		}
		for k, g := range full {
			sum[k] += g * g
			if sum[k] > 0 {
				ref[k] -= 0.1 * g / (float32(sqrt64(sum[k])) + 1e-10)
			}
		}
	}
	assert.InDeltaSlice(t, ref, params, 1e-6)
}

func sqrt64(x float32) float64 {
	z := float64(x)
	r := z
	for range 60 { // Newton's iteration, independent of the code under test
		if r == 0 {
			return 0
		}
		r = (r + z/r) / 2
	}
	return r
}

// TestSparseStateRoundTrip checks that exporting the state of every row and
// importing it into a fresh optimizer (over copied parameters) continues
// bit-identically.
func TestSparseStateRoundTrip(t *testing.T) {
	const n, d = 12, 3
	rows, grads := sparseSteps(n, d, 8)
	all := make([]int64, n)
	for i := range all {
		all[i] = int64(i)
	}
	for _, name := range []string{"adam", "adagrad"} {
		t.Run(name, func(t *testing.T) {
			straight := initTable(n, d)
			a, err := NewSparseOptimizer(name, straight, d, 0.05)
			require.NoError(t, err)
			for s := range rows {
				require.NoError(t, a.Step(rows[s], grads[s]))
			}
			first := initTable(n, d)
			b, err := NewSparseOptimizer(name, first, d, 0.05)
			require.NoError(t, err)
			for s := range rows[:4] {
				require.NoError(t, b.Step(rows[s], grads[s]))
			}
			state := make([]float32, n*b.StateWidth())
			b.ExportState(all, state)
			second := append([]float32(nil), first...)
			c, err := NewSparseOptimizer(name, second, d, 0.05)
			require.NoError(t, err)
			c.ImportState(all, state)
			for s := 4; s < len(rows); s++ {
				require.NoError(t, c.Step(rows[s], grads[s]))
			}
			assert.Equal(t, straight, second)
		})
	}
}

func TestSparseOptimizerRejects(t *testing.T) {
	params := make([]float32, 12)
	tests := []struct {
		name  string
		rows  []int64
		grads []float32
		want  string
	}{
		{"short grads", []int64{0, 1}, make([]float32, 3), "3 gradient values for 2 rows"},
		{"row out of range", []int64{4}, make([]float32, 3), "outside [0,4)"},
		{"duplicate", []int64{1, 1}, make([]float32, 6), "not distinct and ascending"},
		{"descending", []int64{2, 1}, make([]float32, 6), "not distinct and ascending"},
	}
	for _, name := range []string{"adam", "adagrad"} {
		o, err := NewSparseOptimizer(name, params, 3, 0.1)
		require.NoError(t, err)
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				assert.ErrorContains(t, o.Step(tc.rows, tc.grads), tc.want)
			})
		}
	}
	_, err := NewSparseOptimizer("sgd", params, 3, 0.1)
	assert.ErrorContains(t, err, "want adam or adagrad")
	_, err = NewSparseAdam(params, 5, DefaultSparseAdam(0.1))
	assert.ErrorContains(t, err, "not rows of 5")
	_, err = NewSparseAdagrad(params, 3, SparseAdagradConfig{LR: 0.1})
	assert.ErrorContains(t, err, "eps")
}

// TestSparseConfigValidate: each hyper-parameter out of range (NaN too) is
// refused by Validate and so by the constructor, with the message a user
// of --sparse-opt reads.
func TestSparseConfigValidate(t *testing.T) {
	nan := float32(math.NaN())
	adam := func(f func(c *SparseAdamConfig)) SparseAdamConfig {
		c := DefaultSparseAdam(0.01)
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  SparseAdamConfig
		want string
	}{
		{"default", DefaultSparseAdam(0.01), ""},
		{"zero betas", adam(func(c *SparseAdamConfig) { c.Beta1, c.Beta2 = 0, 0 }), ""},
		{"zero lr", adam(func(c *SparseAdamConfig) { c.LR = 0 }), "sparse adam: lr 0 must be positive"},
		{"nan lr", adam(func(c *SparseAdamConfig) { c.LR = nan }), "sparse adam: lr NaN must be positive"},
		{"beta1 one", adam(func(c *SparseAdamConfig) { c.Beta1 = 1 }), "sparse adam: betas 1, 0.999 must be in [0,1)"},
		{"beta2 negative", adam(func(c *SparseAdamConfig) { c.Beta2 = -0.5 }), "sparse adam: betas 0.9, -0.5 must be in [0,1)"},
		{"zero eps", adam(func(c *SparseAdamConfig) { c.Eps = 0 }), "sparse adam: eps 0 must be positive"},
	} {
		t.Run("adam "+tc.name, func(t *testing.T) {
			_, nerr := NewSparseAdam(make([]float32, 4), 2, tc.cfg)
			requireRefused(t, tc.want, tc.cfg.Validate(), nerr)
		})
	}
	for _, tc := range []struct {
		name string
		cfg  SparseAdagradConfig
		want string
	}{
		{"default", DefaultSparseAdagrad(0.01), ""},
		{"negative lr", SparseAdagradConfig{LR: -1, Eps: 1e-10}, "sparse adagrad: lr -1 must be positive"},
		{"nan eps", SparseAdagradConfig{LR: 0.1, Eps: nan}, "sparse adagrad: eps NaN must be positive"},
		{"zero eps", SparseAdagradConfig{LR: 0.1}, "sparse adagrad: eps 0 must be positive"},
	} {
		t.Run("adagrad "+tc.name, func(t *testing.T) {
			_, nerr := NewSparseAdagrad(make([]float32, 4), 2, tc.cfg)
			requireRefused(t, tc.want, tc.cfg.Validate(), nerr)
		})
	}
}

// requireRefused checks that a config's Validate and the constructor that
// calls it agree: both succeed (want "") or both fail with want.
func requireRefused(t *testing.T, want string, verr, nerr error) {
	t.Helper()
	if want == "" {
		require.NoError(t, verr)
		require.NoError(t, nerr)
		return
	}
	require.EqualError(t, verr, want)
	require.EqualError(t, nerr, want)
}
