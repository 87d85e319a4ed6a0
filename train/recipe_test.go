package train

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/train/metrics"
)

// recipeCases are one run of each recipe option.
func recipeCases() []struct {
	name string
	r    Recipe
} {
	return []struct {
		name string
		r    Recipe
	}{
		{"adamw", Recipe{Optimizer: OptAdamW}},
		{"sgd", Recipe{Optimizer: OptSGD}},
		{"sgd-momentum", Recipe{Optimizer: OptSGD, Momentum: 0.9}},
		{"sgd-nesterov", Recipe{Optimizer: OptSGD, Momentum: 0.8, Nesterov: true}},
		{"step-warmup", Recipe{LRSchedule: "step:1,0.5", Warmup: 5}},
		{"cosine", Recipe{LRSchedule: "cosine"}},
		{"clip", Recipe{ClipGradNorm: 0.05}},
		{"early-stop", Recipe{EarlyStop: 1}},
	}
}

// TestRecipeResumeEqualsUninterrupted: with each recipe option, a run
// stopped after epoch 2 (checkpoint) and resumed to its end trains the
// same bits as the uninterrupted run, optimizer state and best model too.
func TestRecipeResumeEqualsUninterrupted(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	const epochs = 4
	for _, tc := range recipeCases() {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(0.3)
			o.Recipe = tc.r
			if tc.r.Optimizer == OptSGD {
				o.Adam.LR = 0.1
			}
			newT := func() *Trainer {
				tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
				require.NoError(t, err)
				return tr
			}
			straight := newT()
			sumA, err := straight.Run(RunOptions{Epochs: epochs})
			require.NoError(t, err)

			ckDir := filepath.Join(t.TempDir(), "ck")
			first := newT()
			first.Stop = func() bool { return first.Epoch() >= 2 }
			_, err = first.Run(RunOptions{Epochs: epochs, CheckpointDir: ckDir})
			if sumA.StoppedEarly == 0 || sumA.StoppedEarly > 2 {
				require.ErrorIs(t, err, ErrStopped)
			}
			ck, err := LoadCheckpoint(ckDir)
			require.NoError(t, err)
			assert.Equal(t, tc.r, *ck.Recipe)
			second := newT()
			require.NoError(t, second.Restore(ck))
			sumB, err := second.Run(RunOptions{Epochs: epochs})
			require.NoError(t, err)

			assert.True(t, slices.Equal(straight.Model().Params(), second.Model().Params()), "weights differ (max rel %.3g)", maxRelDiff(straight.Model().Params(), second.Model().Params()))
			assert.Equal(t, straight.opt.M, second.opt.M)
			assert.Equal(t, straight.opt.V, second.opt.V)
			assert.Equal(t, straight.opt.T, second.opt.T)
			assert.Equal(t, straight.Step(), second.Step())
			assert.True(t, slices.Equal(straight.Best().Params, second.Best().Params))
			sumA.TotalS, sumB.TotalS = 0, 0
			if sumA.StoppedEarly == 0 {
				assert.Equal(t, sumA, sumB)
			} else {
				// Stopped early by epoch 2: the resume stops at once.
				assert.Equal(t, sumA.StoppedEarly, sumB.StoppedEarly)
				assert.Equal(t, sumA.BestEpoch, sumB.BestEpoch)
			}
			// The option took effect: the weights differ from a plain run's.
			plain := testOptions(0.3)
			ref, err := newTrainer(plain, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
			require.NoError(t, err)
			_, err = ref.Run(RunOptions{Epochs: epochs})
			require.NoError(t, err)
			if tc.r.EarlyStop == 0 {
				assert.False(t, slices.Equal(ref.Model().Params(), straight.Model().Params()), "the recipe changed nothing")
			}
		})
	}
}

// TestRecipeRankCounts: each recipe trains the same model on 1 and 3
// ranks with the same global batch (to reduction-order rounding).
func TestRecipeRankCounts(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	for _, tc := range recipeCases() {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(0)
			o.Recipe = tc.r
			if tc.r.Optimizer == OptSGD {
				o.Adam.LR = 0.1
			}
			var params [][]float32
			for _, size := range []int{1, 3} {
				grp := newGroupReducer(size)
				trs := make([]*Trainer, size)
				errs := make([]error, size)
				done := make(chan int)
				for r := range size {
					tr, err := newTrainer(o, rankReducer{grp, r}, newMemSource(g, r, size, o.Seed, []int{5, 3}, 30))
					require.NoError(t, err)
					trs[r] = tr
					go func() {
						_, errs[r] = tr.Run(RunOptions{Epochs: 3})
						done <- r
					}()
				}
				for range size {
					<-done
				}
				require.NoError(t, errors.Join(errs...))
				params = append(params, trs[0].Model().Params())
			}
			assert.Less(t, maxRelDiff(params[0], params[1]), 1e-4)
		})
	}
}

// TestEarlyStop: with EarlyStop 1 the run ends at the first evaluation
// that does not improve, keeps the best model and says where it stopped.
func TestEarlyStop(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0.3)
	o.Recipe.EarlyStop = 1
	tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m.jsonl")
	mw, err := metrics.Create(path, 0)
	require.NoError(t, err)
	s, err := tr.Run(RunOptions{Epochs: 30, Metrics: mw})
	require.NoError(t, err)
	mw.Close()
	require.Positive(t, s.StoppedEarly, "30 epochs all improving the validation accuracy")
	assert.Equal(t, s.StoppedEarly, s.Epochs)
	assert.Equal(t, s.BestEpoch+1, s.StoppedEarly)
	lines, sum, err := metrics.Read(path)
	require.NoError(t, err)
	assert.Len(t, lines, s.StoppedEarly)
	assert.Equal(t, s.StoppedEarly, sum.StoppedEarly)
	assert.Equal(t, tr.Best().Epoch, s.BestEpoch)
}

func TestRecipeValidate(t *testing.T) {
	for _, tc := range []struct {
		r     Recipe
		field string
	}{
		{Recipe{Optimizer: "rmsprop"}, "Recipe.Optimizer"},
		{Recipe{Momentum: 0.9}, "Recipe.Momentum"},
		{Recipe{Optimizer: OptAdamW, Nesterov: true}, "Recipe.Nesterov"},
		{Recipe{Optimizer: OptSGD, Nesterov: true}, "Recipe.Nesterov"},
		{Recipe{Optimizer: OptSGD, Momentum: 1}, "Recipe.Momentum"},
		{Recipe{LRSchedule: "linear"}, "Recipe.LRSchedule"},
		{Recipe{LRSchedule: "step:0,0.5"}, "Recipe.LRSchedule"},
		{Recipe{Warmup: -1}, "Recipe.Warmup"},
		{Recipe{ClipGradNorm: -1}, "Recipe.ClipGradNorm"},
		{Recipe{EarlyStop: -2}, "Recipe.EarlyStop"},
	} {
		err := tc.r.Validate()
		var fe *config.FieldError
		if assert.ErrorAs(t, err, &fe, "%+v", tc.r) {
			assert.Equal(t, tc.field, fe.Field, err.Error())
		}
	}
	for _, r := range []Recipe{{}, {Optimizer: OptAdam, LRSchedule: "constant"}, {Optimizer: OptSGD, Momentum: 0.9, Nesterov: true, LRSchedule: "cosine", Warmup: 10, ClipGradNorm: 1, EarlyStop: 3}} {
		assert.NoError(t, r.Validate(), "%+v", r)
	}
	assert.True(t, Recipe{Optimizer: OptAdam, LRSchedule: "constant"}.IsZero())
}

// TestDefaultRecipeCheckpointHeader: the default recipe writes no recipe
// and no early-stop count, so its checkpoints read as before.
func TestDefaultRecipeCheckpointHeader(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0)
	o.Recipe = Recipe{Optimizer: OptAdam, LRSchedule: "constant"} // the defaults spelled out
	tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
	require.NoError(t, err)
	ck := tr.Checkpoint(nil)
	assert.Nil(t, ck.Recipe)
	data, err := EncodeCheckpoint(ck)
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(data), `"recipe"`) || strings.Contains(string(data), "evals_since_best"))
}
