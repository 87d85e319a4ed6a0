package train

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/metrics"
)

// Kinds of real targets (Config.Targets): the head of a node task whose
// targets are not one class per node.
const (
	// TargetsMultilabel is multi-label classification: Classes binary
	// tasks per node, each scored by its own logit with binary
	// cross-entropy (PyTorch's BCEWithLogitsLoss).
	TargetsMultilabel = "multilabel"
	// TargetsRegression is regression: Classes real values per node,
	// predicted by the output row with squared error (PyTorch's MSELoss).
	TargetsRegression = "regression"
)

// targetHead scores a seed's output row against its row of real targets
// (Batch.Targets, NaN unlabelled): binary cross-entropy on logits
// (multilabel) or squared error (regression). A seed's loss is the sum
// over its labelled targets divided by the row width k, so that a fully
// labelled batch's mean loss is PyTorch's mean over all n·k values.
type targetHead[T Float] struct {
	kind    string
	k       int
	rowLoss []float64 // per seed loss of the last Loss, summed in seed order
}

func (h *targetHead[T]) Specs() []ParamSpec { return nil }
func (h *targetHead[T]) Bind(_, _ [][]T)    {}
func (h *targetHead[T]) Backward([]T)       {}

func (h *targetHead[T]) Check(b *sample.Batch, seeds int) error {
	switch {
	case isLinkBatch(b):
		return errors.New("model: a link batch needs a link predictor (config without targets)")
	case len(b.Labels) > 0:
		return fmt.Errorf("model: a %s model needs real targets, got %d class labels", h.kind, len(b.Labels))
	case b.TargetDim != h.k:
		return fmt.Errorf("model: batch targets are %d wide, the model predicts %d", b.TargetDim, h.k)
	case len(b.Targets) != seeds*h.k:
		return fmt.Errorf("model: got %d target values for %d seeds of %d", len(b.Targets), seeds, h.k)
	}
	if h.kind == TargetsMultilabel {
		for i, y := range b.Targets {
			if y == y && y != 0 && y != 1 {
				return fmt.Errorf("model: seed %d target %d is %v; multi-label targets are 0, 1 or NaN (unlabelled)", i/h.k, i%h.k, y)
			}
		}
	}
	return nil
}

// Loss returns the summed loss and, for multilabel, the seeds whose every
// labelled target is predicted right (logit > 0 for a 1); regression
// counts none.
func (h *targetHead[T]) Loss(z []T, b *sample.Batch, scale T, dz []T) (float64, int) {
	n, k := len(b.Targets)/h.k, h.k
	h.rowLoss = growF64(h.rowLoss, n)
	inv := 1 / float64(k)
	var correct atomic.Int64
	par.Range(n, 8*len(z), func(lo, hi int) {
		c := 0
		for i := lo; i < hi; i++ {
			zi, yi, g := z[i*k:(i+1)*k], b.Targets[i*k:(i+1)*k], dz[i*k:(i+1)*k]
			loss, right := 0.0, true
			for t, y := range yi {
				if y != y {
					g[t] = 0
					continue
				}
				x, yt := float64(zi[t]), float64(y)
				var d float64
				if h.kind == TargetsMultilabel {
					// log(1+exp(-|x|)) keeps the loss finite for any logit.
					loss += math.Max(x, 0) - x*yt + math.Log1p(math.Exp(-math.Abs(x)))
					d = 1/(1+math.Exp(-x)) - yt
					right = right && (x > 0) == (yt == 1)
				} else {
					loss += (x - yt) * (x - yt)
					d = 2 * (x - yt)
				}
				g[t] = T(float64(scale) * d * inv)
			}
			h.rowLoss[i] = loss * inv
			if right && h.kind == TargetsMultilabel {
				c++
			}
		}
		correct.Add(int64(c))
	})
	loss := 0.0
	for _, l := range h.rowLoss[:n] {
		loss += l
	}
	return loss, int(correct.Load())
}

// RowGatherer is a Reducer that can also concatenate every rank's rows, in
// rank order, on every rank: what figures over a whole split's
// predictions (ROC-AUC) need. dtrain.Reducer and LocalReducer are ones.
type RowGatherer interface {
	GatherRows(ids []int64, rows []float32) ([]int64, []float32, error)
}

// GatherRows implements RowGatherer: one rank's rows are all the rows.
func (LocalReducer) GatherRows(ids []int64, rows []float32) ([]int64, []float32, error) {
	return ids, rows, nil
}

// TargetScores collects a split's output rows and targets on one rank, by
// original node id, for the figures of a real-target task (Figures).
type TargetScores struct {
	ids       []int64
	out, targ []float32
}

// Reset empties s, keeping its memory.
func (s *TargetScores) Reset() { s.ids, s.out, s.targ = s.ids[:0], s.out[:0], s.targ[:0] }

// Add appends nodes with original ids ids, their output rows out and
// their targets (as wide as out's rows).
func (s *TargetScores) Add(ids []int64, out, targets []float32) {
	s.ids = append(s.ids, ids...)
	s.out = append(s.out, out...)
	s.targ = append(s.targ, targets...)
}

// Figures gathers every rank's rows (collective), orders them by original
// id, so that the figures are the same for any rank count and batch
// order, and computes the figures of kind over k-wide rows.
func (s *TargetScores) Figures(g RowGatherer, kind string, k int) (*metrics.TargetFigures, error) {
	if len(s.ids)*k != len(s.out) || len(s.out) != len(s.targ) {
		return nil, fmt.Errorf("target figures: %d nodes, %d outputs and %d targets of width %d", len(s.ids), len(s.out), len(s.targ), k)
	}
	rows := make([]float32, 0, 2*len(s.out))
	for i := range s.ids {
		rows = append(rows, s.out[i*k:(i+1)*k]...)
		rows = append(rows, s.targ[i*k:(i+1)*k]...)
	}
	ids, all, err := g.GatherRows(s.ids, rows)
	if err != nil {
		return nil, fmt.Errorf("target figures: gather: %w", err)
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(min(max(ids[a]-ids[b], -1), 1)) })
	z, y := make([]float32, 0, len(ids)*k), make([]float32, 0, len(ids)*k)
	for _, i := range order {
		z = append(z, all[2*i*k:(2*i+1)*k]...)
		y = append(y, all[(2*i+1)*k:(2*i+2)*k]...)
	}
	var f metrics.TargetFigures
	if kind == TargetsMultilabel {
		// A split where no task has both classes has no ROC-AUC (NaN,
		// absent from the metrics): OGB's evaluator raises instead, but a
		// run should not die for it at an evaluation.
		f, _ = metrics.MultilabelFigures(z, y, k)
	} else {
		f = metrics.RegressionFigures(z, y, k)
	}
	return &f, nil
}

// Better reports whether a is a strictly better selection score than b
// for kind: a higher ROC-AUC, or a lower RMSE. NaN is never better.
func betterTargets(kind string, a, b *metrics.TargetFigures) bool {
	if b == nil {
		return true
	}
	if kind == TargetsMultilabel {
		return a.ROCAUC > b.ROCAUC || (b.ROCAUC != b.ROCAUC && a.ROCAUC == a.ROCAUC)
	}
	return a.RMSE < b.RMSE || (b.RMSE != b.RMSE && a.RMSE == a.RMSE)
}
