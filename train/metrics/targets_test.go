package metrics

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultilabelFigures: ROC-AUC counts a tie as one half, skips a task
// without both classes and unlabelled values; F1 thresholds logits at 0.
func TestMultilabelFigures(t *testing.T) {
	nan := float32(math.NaN())
	// Two tasks over four nodes (row-major): task 0 has both classes,
	// task 1 only positives (left out of ROC-AUC), one value unlabelled.
	z := []float32{0.9, 1, -2.2, 1, 0.5, -1, 0.5, 2}
	y := []float32{1, 1, 0, nan, 1, 1, 0, 1}
	f, err := MultilabelFigures(z, y, 2)
	require.NoError(t, err)
	// Task 0: positives 0.9, 0.5 against negatives -2.2, 0.5: 3.5 of 4.
	assert.InDelta(t, 0.875, f.ROCAUC, 1e-12)
	assert.Equal(t, 1, f.Tasks)
	assert.EqualValues(t, 7, f.Labelled)
	// Task 0: tp 2 (0.9, 0.5), fp 1 (0.5), fn 0: F1 0.8; task 1: tp 2,
	// fn 1 (-1): F1 0.8. Micro: tp 4, fp 1, fn 1: 8/10.
	assert.InDelta(t, 0.8, f.F1Micro, 1e-12)
	assert.InDelta(t, 0.8, f.F1Macro, 1e-12)
	assert.True(t, math.IsNaN(f.RMSE))

	_, err = MultilabelFigures([]float32{1, 2}, []float32{1, 1}, 1)
	assert.ErrorIs(t, err, ErrNoBothClasses)

	// Checkpoints keep the figures, NaN as null.
	b, err := json.Marshal(f)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"rmse":null`)
	var back TargetFigures
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, f.ROCAUC, back.ROCAUC)
	assert.True(t, math.IsNaN(back.MAE))
}

// TestRegressionFigures pools every labelled value.
func TestRegressionFigures(t *testing.T) {
	nan := float32(math.NaN())
	f := RegressionFigures([]float32{1, 2, 3, 4}, []float32{0, 2, nan, 6}, 2)
	assert.InDelta(t, math.Sqrt(5.0/3), f.RMSE, 1e-12)
	assert.InDelta(t, 1.0, f.MAE, 1e-12)
	assert.EqualValues(t, 3, f.Labelled)
	assert.True(t, math.IsNaN(f.ROCAUC))
	assert.True(t, math.IsNaN(RegressionFigures([]float32{1}, []float32{nan}, 1).RMSE))
}

// TestClassFigures: macro F1 as scikit-learn computes it
// (f1_score([0,1,2,2,1], [0,2,2,1,1], average="macro") = 0.6666...),
// unlabelled items skipped, a class in neither labels nor predictions
// left out.
func TestClassFigures(t *testing.T) {
	nan := float32(math.NaN())
	f := ClassFigures([]int{0, 2, 2, 1, 1, 0}, []float32{0, 1, 2, 2, 1, nan}, 5)
	assert.InDelta(t, 2.0/3, f.F1Macro, 1e-12)
	assert.Equal(t, int64(5), f.Labelled)
	assert.True(t, math.IsNaN(f.RMSE) && math.IsNaN(f.F1Micro))
	assert.True(t, math.IsNaN(ClassFigures(nil, nil, 3).F1Macro))
}
