package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/sample"
	"mpignn/train/metrics"
)

// targetBatch is a batch of blocks with random real targets for a model of
// kind: 0/1 for multilabel, normal values for regression, with every fifth
// value unlabelled (NaN).
func targetBatch(t *testing.T, cfg Config, seed uint64) (*Model, *sample.Batch, []float64) {
	t.Helper()
	m, blocks, x, _ := testCase(t, cfg, seed)
	r := rand.New(rand.NewPCG(seed, 2))
	seeds := blocks[len(blocks)-1].NumDst
	y := make([]float32, seeds*cfg.Classes)
	for i := range y {
		switch {
		case i%5 == 3:
			y[i] = float32(math.NaN())
		case cfg.Targets == TargetsMultilabel:
			y[i] = float32(r.IntN(2))
		default:
			y[i] = float32(r.NormFloat64())
		}
	}
	return m, &sample.Batch{Blocks: blocks, X: x, Targets: y, TargetDim: cfg.Classes}, to64(x)
}

// TestTargetGradCheck checks the multi-label and regression heads'
// gradients through every architecture against float64 finite
// differences, and their loss against the formula written out.
func TestTargetGradCheck(t *testing.T) {
	for _, kind := range []string{TargetsMultilabel, TargetsRegression} {
		for _, tc := range forEachArch([]gradCase{
			{"2layer", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2}, false},
			{"2layer-dropout", Config{InDim: 5, Hidden: 6, Classes: 4, Layers: 2, Dropout: 0.3}, true},
		}) {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				cfg := tc.cfg
				cfg.Targets = kind
				m, b, x := targetBatch(t, cfg, 13)
				key := MaskKey{Seed: 5, Step: 2}
				n := mustNet(t, cfg, to64(m.Params()))
				loss, _, err := n.lossOf(b, dense(x), 1, tc.drop, key)
				require.NoError(t, err)
				// The loss written out: the mean over each seed's row
				// width of its labelled values' BCE or squared error.
				z := n.out[len(b.Blocks)-1]
				want := 0.0
				for i, y := range b.Targets {
					if y != y {
						continue
					}
					v, yt := z[i], float64(y)
					if kind == TargetsMultilabel {
						p := 1 / (1 + math.Exp(-v))
						want -= (yt*math.Log(p) + (1-yt)*math.Log(1-p)) / float64(cfg.Classes)
					} else {
						want += (v - yt) * (v - yt) / float64(cfg.Classes)
					}
				}
				assert.InDelta(t, want, loss, 1e-12)
				n.backward(b.Blocks, tc.drop)
				checkGradients(t, n, cfg.Tensors(), func() float64 {
					l, _, err := n.lossOf(b, dense(x), 0, tc.drop, key)
					require.NoError(t, err)
					return l
				})
			})
		}
	}
}

// TestTargetHeadRefuses: batches a real-target head cannot score.
func TestTargetHeadRefuses(t *testing.T) {
	cfg := Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2, Targets: TargetsMultilabel}
	m, b, _ := targetBatch(t, cfg, 3)
	cases := []struct {
		name string
		edit func(b *sample.Batch)
		want string
	}{
		{"labels", func(b *sample.Batch) { b.Labels = []int32{1} }, "needs real targets"},
		{"width", func(b *sample.Batch) { b.TargetDim = 2 }, "targets are 2 wide, the model predicts 3"},
		{"count", func(b *sample.Batch) { b.Targets = b.Targets[:4] }, "got 4 target values"},
		{"not binary", func(b *sample.Batch) { b.Targets[1] = 0.5 }, "multi-label targets are 0, 1 or NaN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := *b
			cp.Targets = append([]float32(nil), b.Targets...)
			c.edit(&cp)
			_, _, err := m.Evaluate(&cp)
			assert.ErrorContains(t, err, c.want)
		})
	}
	assert.ErrorContains(t, Config{InDim: 5, Classes: 3, Layers: 1, Targets: "rank"}.Validate(), `targets "rank"`)
	assert.ErrorContains(t, Config{InDim: 5, Classes: 3, Layers: 1, Targets: TargetsRegression, Decoder: DecoderDot}.Validate(), "one head")
}

// TestTargetScoresOrder: the figures do not depend on how the rows were
// split among ranks or batches, since they are ordered by node id first.
func TestTargetScoresOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const n, k = 50, 3
	ids := r.Perm(n)
	z, y := make([]float32, n*k), make([]float32, n*k)
	for i := range z {
		z[i], y[i] = float32(r.NormFloat64()), float32(r.IntN(2))
	}
	var a, b TargetScores
	for i, id := range ids {
		a.Add([]int64{int64(id)}, z[i*k:(i+1)*k], y[i*k:(i+1)*k])
	}
	for i := n - 1; i >= 0; i-- {
		b.Add([]int64{int64(ids[i])}, z[i*k:(i+1)*k], y[i*k:(i+1)*k])
	}
	for _, kind := range []string{TargetsMultilabel, TargetsRegression} {
		fa, err := a.Figures(LocalReducer{}, kind, k)
		require.NoError(t, err)
		fb, err := b.Figures(LocalReducer{}, kind, k)
		require.NoError(t, err)
		assert.Equal(t, metricsBits(fa), metricsBits(fb))
	}
}

// metricsBits spells figures as bits, so that NaN compares equal.
func metricsBits(f *metrics.TargetFigures) [5]uint64 {
	return [5]uint64{math.Float64bits(f.ROCAUC), math.Float64bits(f.F1Micro), math.Float64bits(f.F1Macro), math.Float64bits(f.RMSE), math.Float64bits(f.MAE)}
}

// TestSelectionScore: every selection metric reads its figure, errors are
// negated (lower is better), and a figure the evaluation lacks is NaN.
func TestSelectionScore(t *testing.T) {
	link := &metrics.LinkFigures{AUC: 0.9, MRR: 0.4, Hits: [metrics.NumHitsK]float64{0.1, 0.2, 0.3, 0.5, 0.6}}
	tf := &metrics.TargetFigures{ROCAUC: 0.8, F1Micro: 0.5, F1Macro: 0.4, RMSE: 0.3, MAE: 0.2}
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{MetricAcc, 0.7}, {MetricMRR, 0.4}, {MetricAUC, 0.9}, {"hits@10", 0.3}, {"hits@100", 0.6},
		{MetricROCAUC, 0.8}, {MetricF1Micro, 0.5}, {MetricF1Macro, 0.4}, {MetricRMSE, -0.3}, {MetricMAE, -0.2},
	} {
		assert.Equal(t, c.want, selectionScore(c.metric, 0.7, link, tf), c.metric)
		require.NoError(t, checkMetric(c.metric))
	}
	assert.True(t, math.IsNaN(selectionScore(MetricRMSE, 0.7, link, nil)))
	assert.True(t, math.IsNaN(selectionScore("hits@10", 0.7, nil, tf)))
	assert.ErrorContains(t, checkMetric("hits@7"), `Metric "hits@7"`)
	assert.ErrorContains(t, checkMetric("f1"), `Metric "f1"`)

	// betterBy: strictly better, NaN never better, better than a NaN best.
	tr := &Trainer{}
	tr.best.Params = []float32{1}
	tr.best.ValTargets = &metrics.TargetFigures{RMSE: 0.3}
	assert.True(t, tr.betterBy(MetricRMSE, &EvalResult{Targets: &metrics.TargetFigures{RMSE: 0.29}}))
	assert.False(t, tr.betterBy(MetricRMSE, &EvalResult{Targets: &metrics.TargetFigures{RMSE: 0.3}}))
	assert.False(t, tr.betterBy(MetricRMSE, &EvalResult{Targets: &metrics.TargetFigures{RMSE: math.NaN()}}))
	tr.best.ValTargets.RMSE = math.NaN()
	assert.True(t, tr.betterBy(MetricRMSE, &EvalResult{Targets: &metrics.TargetFigures{RMSE: 1}}))
}
