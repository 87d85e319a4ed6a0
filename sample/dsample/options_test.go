package dsample

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
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
		{"too large", func(o *LoaderOptions) { o.Fanouts = []int{sample.MaxFanout + 1, 1} }, "Fanouts", "layer 0 has fanout 1073741825"},
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

// TestOtherOptionsValidate: the link loader's, Embed's and the stores'
// options are refused by their Validate, naming the field; their doors
// (NewLinkLoader, Store.Embed, OpenStore, OpenGraphStore,
// OpenFeatureStore) call it before anything collective.
func TestOtherOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     interface{ Validate() error }
		field string // "" = valid
		want  string
	}{
		{"link ok", LinkLoaderOptions{Fanouts: []int{2}, Batch: 4, NegRatio: 1}, "", ""},
		{"link global ok", LinkLoaderOptions{Fanouts: []int{2}, GlobalBatch: 40, NegRatio: 1}, "", ""},
		{"edge ok", LinkLoaderOptions{Fanouts: []int{2}, Batch: 4, EdgeTargets: true}, "", ""},
		{"edge negatives", LinkLoaderOptions{Fanouts: []int{2}, Batch: 4, NegRatio: 1, EdgeTargets: true}, "EdgeTargets", "NegRatio 1 and NegStrict are the link task's"},
		{"edge strict", LinkLoaderOptions{Fanouts: []int{2}, Batch: 4, NegStrict: true, EdgeTargets: true}, "EdgeTargets", "scores labelled edges only"},
		{"link batch", LinkLoaderOptions{Fanouts: []int{2}, NegRatio: 1}, "Batch", "Batch 0 must be positive"},
		{"link fanouts", LinkLoaderOptions{Batch: 4, NegRatio: 1}, "Fanouts", "needs at least one layer"},
		{"link eval fanouts", LinkLoaderOptions{Fanouts: []int{2}, EvalFanouts: []int{0}, Batch: 4, NegRatio: 1}, "EvalFanouts", "layer 0 has fanout 0"},
		{"link negatives", LinkLoaderOptions{Fanouts: []int{2}, Batch: 4}, "NegRatio", "NegRatio 0 negatives per positive"},
		{"embed ok", EmbedOptions{Width: 3, Fanouts: []int{-1}, GlobalBatch: 8}, "", ""},
		{"embed width", EmbedOptions{Fanouts: []int{-1}, Batch: 8}, "Width", "Width 0 must be positive"},
		{"embed batch", EmbedOptions{Width: 3, Fanouts: []int{-1}, Batch: 2, GlobalBatch: 8}, "Batch", "exclude each other"},
		{"embed fanouts", EmbedOptions{Width: 3, Batch: 8}, "Fanouts", "needs at least one layer"},
		{"store ok", StoreOptions{CacheMB: 2, DegreeTableMB: -1}, "", ""},
		{"store cache", StoreOptions{CacheMB: -1}, "CacheMB", "CacheMB -1: want a finite size"},
		{"store table", StoreOptions{DegreeTableMB: math.NaN()}, "DegreeTableMB", "DegreeTableMB is NaN"},
		{"store transport", StoreOptions{Transport: 7}, "Transport", "Transport 7: want auto, rma or alltoallv"},
		{"graph ok", GraphOptions{Transport: collectives.TransportRMA}, "", ""},
		{"feature cache", FeatureOptions{CacheMB: math.Inf(1)}, "CacheMB", "want a finite size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
