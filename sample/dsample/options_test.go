package dsample

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/sample"
)

// TestLoaderOptionsValidate: each bad option is refused naming its field.
func TestLoaderOptionsValidate(t *testing.T) {
	ok := LoaderOptions{Batch: 4, Fanouts: []int{5, -1}}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name  string
		edit  func(o *LoaderOptions)
		field string
		want  string
	}{
		{"batch", func(o *LoaderOptions) { o.Batch = 0 }, "Batch", "Batch 0 must be positive"},
		{"batch and global batch", func(o *LoaderOptions) { o.GlobalBatch = 16 }, "Batch", "Batch 4 and GlobalBatch 16 exclude each other"},
		{"negative global batch", func(o *LoaderOptions) { o.Batch, o.GlobalBatch = 0, -1 }, "GlobalBatch", "GlobalBatch -1 must be positive"},
		{"no layers", func(o *LoaderOptions) { o.Fanouts = nil }, "Fanouts", "needs at least one layer"},
		{"zero fanout", func(o *LoaderOptions) { o.Fanouts = []int{5, 0} }, "Fanouts", "Fanouts: layer 1 has fanout 0"},
		{"too large", func(o *LoaderOptions) { o.Fanouts = []int{MaxFanout + 1, 1} }, "Fanouts", "layer 0 has fanout 1073741825"},
		{"eval fanout", func(o *LoaderOptions) { o.EvalFanouts = []int{-1, -2} }, "EvalFanouts", "EvalFanouts: layer 1 has fanout -2"},
		{"eval layers", func(o *LoaderOptions) { o.EvalFanouts = []int{1} }, "EvalFanouts", "1 fanouts for 2 layers"},
		{"strict without strategy", func(o *LoaderOptions) { o.Temporal.Strict = true }, "Temporal.Strict", "need Temporal uniform or last"},
		{"seed time without strategy", func(o *LoaderOptions) { o.FixedSeedTime = true }, "Temporal.Strict", "need Temporal uniform or last"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			err := o.Validate()
			var fe *config.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	global := ok
	global.Batch, global.GlobalBatch = 0, 10
	require.NoError(t, global.Validate(), "a global batch without a per-rank one")
	assert.Equal(t, 10, global.GlobalSize(3))
	assert.Equal(t, 4, global.RankShare(3), "10 seeds over 3 ranks: 4 at most on average, rounded up")
	assert.Equal(t, 12, ok.GlobalSize(3))
	assert.Equal(t, 4, ok.RankShare(3))
	on := ok
	on.Temporal, on.FixedSeedTime = sample.Temporal{Strategy: sample.TemporalLast, Strict: true}, true
	assert.NoError(t, on.Validate(), "strict and a seed time with a strategy")
}
