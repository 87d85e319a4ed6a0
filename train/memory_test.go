package train

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBlockRows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fanouts []int
		batch   int
		nodes   int64
		want    []float64
	}{
		{"fanouts", []int{10, 5}, 64, 3000, []float64{64, 704, 3000}},
		{"small", []int{2, 2}, 4, 1000, []float64{4, 12, 36}},
		{"all neighbors", []int{-1, 3}, 8, 500, []float64{8, 500, 500}},
		{"batch beyond the graph", []int{5}, math.MaxInt, 100, []float64{100, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, blockRows(tc.fanouts, tc.batch, tc.nodes))
		})
	}
}

func TestEstimateTraining(t *testing.T) {
	c := Config{InDim: 16, Hidden: 32, Classes: 5, Layers: 2}
	e := c.EstimateTraining([]int{5, 5}, nil, 64, 3000)
	// 2·16·32+32 + 2·32·5+5 = 1381 float32 parameters.
	require.Equal(t, float64(c.NumParams()), 1381.0)
	assert.Equal(t, 1381.0*4, e.Params)
	assert.Equal(t, e.Params, e.Grads)
	assert.Equal(t, 2*e.Params, e.Adam)
	assert.Equal(t, e.Params, e.Best)
	assert.Positive(t, e.Activations)
	// Inference has no gradients, Adam state or best copy, and fewer buffers.
	inf := c.EstimateInference([]int{5, 5}, 64, 3000)
	assert.Equal(t, e.Params, inf.Params)
	assert.Zero(t, inf.Grads+inf.Adam+inf.Best)
	assert.Less(t, inf.Activations, e.Activations)
	// Full-neighborhood evaluation can dominate the activations.
	full := c.EstimateTraining([]int{5, 5}, []int{-1, -1}, 64, 1e6)
	assert.Greater(t, full.Activations, c.EstimateTraining([]int{5, 5}, nil, 64, 1e6).Activations)

	// The between-layer tensors count too (SAGE-shaped layers, as the
	// estimate assumes).
	bc := Config{InDim: 16, Hidden: 32, Classes: 5, Layers: 3, Residual: true, Norm: NormLayer, JK: JKCat}
	assert.Equal(t, float64(bc.NumParams()), bc.numParams())

	// Widths whose parameter count overflows an int still give a finite,
	// huge estimate.
	huge := Config{InDim: 1433, Hidden: 1 << 40, Classes: 7, Layers: 3}.EstimateTraining([]int{10, 10, 10}, nil, 64, 2708)
	assert.False(t, math.IsInf(huge.Total(), 0) || math.IsNaN(huge.Total()))
	assert.Greater(t, huge.Total(), 1e24)
}

func TestCheckMemory(t *testing.T) {
	c := Config{InDim: 1433, Hidden: 1_000_000_000, Classes: 7, Layers: 2}
	big := c.EstimateTraining([]int{10, 5}, nil, 64, 2708)
	small := Config{InDim: 1433, Hidden: 16, Classes: 7, Layers: 2}.EstimateTraining([]int{10, 5}, nil, 64, 2708)
	absurd := Config{InDim: 1433, Hidden: 1 << 40, Classes: 7, Layers: 2}.EstimateTraining([]int{10, 5}, nil, 64, 2708)
	const gib = 1 << 30
	for _, tc := range []struct {
		name      string
		e         MemoryEstimate
		available int64
		ranks     int
		want      []string // nil = fits
	}{
		{"small fits", small, 8 * gib, 2, nil},
		{"small, memory unknown", small, 0, 1, nil},
		{"hidden 1e9", big, 23 * gib, 1, []string{"model needs ~", "TiB", "parameters ", "Adam ", "23 GiB available", "lower --hidden"}},
		{"hidden 1e9, 2 ranks", big, 23 * gib, 2, []string{"23 GiB available for 2 ranks (12 GiB each)"}},
		{"hidden 1e9, memory unknown", big, 0, 1, nil},
		{"beyond any machine", absurd, 0, 1, []string{"more than any machine can address"}},
		{"shared by ranks", MemoryEstimate{Params: 3 * gib}, 8 * gib, 3, []string{"8 GiB available for 3 ranks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMemory(tc.e, tc.available, tc.ranks, "lower --hidden/--batch/--fanout")
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestCheckMemoryNamesLargest: an estimate with store parts that does not
// fit is refused in one line naming its largest part, model or store; one
// that fits passes, and the model-only message is unchanged.
func TestCheckMemoryNamesLargest(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name      string
		e         MemoryEstimate
		available int64
		want      string // "" = fits
	}{
		{"fits", MemoryEstimate{Params: gib, Store: []MemoryPart{{"degree table", gib}}}, 4 * gib, ""},
		{"store part largest", MemoryEstimate{Params: gib, Store: []MemoryPart{{"graph share", 2 * gib}, {"degree table", 3 * gib}}}, 4 * gib,
			"; the largest part is degree table (3 GiB); lower it"},
		{"model part largest", MemoryEstimate{Activations: 5 * gib, Store: []MemoryPart{{"feature share", gib}}}, 4 * gib,
			"; the largest part is activations (5 GiB); lower it"},
		{"model only", MemoryEstimate{Activations: 5 * gib}, 4 * gib, "available; lower it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMemory(tc.e, tc.available, 1, "lower it")
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
			for _, p := range tc.e.Store {
				assert.Contains(t, err.Error(), p.Name, "the estimate lists every part")
			}
		})
	}
	assert.Equal(t, MemoryPart{"b", 3}, MemoryEstimate{Params: 1, Store: []MemoryPart{{"a", 2}, {"b", 3}, {"c", 3}}}.Largest())
	assert.Equal(t, 6.0, MemoryEstimate{Params: 1, Store: []MemoryPart{{"a", 2}, {"b", 3}}}.Total())
}
