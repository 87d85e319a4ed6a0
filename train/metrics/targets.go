package metrics

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// TargetFigures are the evaluation figures of a task with real targets
// over one split: multi-label classification (ROCAUC, F1Micro, F1Macro,
// from logits) or regression (RMSE, MAE, from predictions). Figures that do
// not apply to the task are NaN.
type TargetFigures struct {
	// ROCAUC is OGB's ogbn-proteins figure: the ROC-AUC of every task that
	// has both a positive and a negative labelled node in the split,
	// averaged over those tasks (Tasks counts them).
	ROCAUC float64
	Tasks  int
	// F1Micro and F1Macro threshold the probabilities at 0.5 (a logit > 0
	// is a positive prediction) over the labelled values: micro pools the
	// counts of all tasks, macro averages the per-task F1 over every task
	// (a task with no positive label and no positive prediction scores 0,
	// as scikit-learn's zero_division default does).
	F1Micro float64
	F1Macro float64
	// RMSE and MAE pool every labelled value of every target.
	RMSE float64
	MAE  float64
	// Labelled counts the labelled (non-NaN) values the figures are over.
	Labelled int64
}

// targetFiguresJSON is TargetFigures in a checkpoint: non-finite figures
// are null.
type targetFiguresJSON struct {
	ROCAUC   *float64 `json:"rocauc"`
	Tasks    int      `json:"tasks"`
	F1Micro  *float64 `json:"f1_micro"`
	F1Macro  *float64 `json:"f1_macro"`
	RMSE     *float64 `json:"rmse"`
	MAE      *float64 `json:"mae"`
	Labelled int64    `json:"labelled"`
}

// MarshalJSON implements json.Marshaler (non-finite figures as null).
func (f TargetFigures) MarshalJSON() ([]byte, error) {
	return json.Marshal(targetFiguresJSON{
		ROCAUC: finitePtr(f.ROCAUC), Tasks: f.Tasks, F1Micro: finitePtr(f.F1Micro), F1Macro: finitePtr(f.F1Macro),
		RMSE: finitePtr(f.RMSE), MAE: finitePtr(f.MAE), Labelled: f.Labelled,
	})
}

// UnmarshalJSON implements json.Unmarshaler (null reads as NaN).
func (f *TargetFigures) UnmarshalJSON(data []byte) error {
	var w targetFiguresJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("target figures: %w", err)
	}
	*f = TargetFigures{
		ROCAUC: OrNaN(w.ROCAUC), Tasks: w.Tasks, F1Micro: OrNaN(w.F1Micro), F1Macro: OrNaN(w.F1Macro),
		RMSE: OrNaN(w.RMSE), MAE: OrNaN(w.MAE), Labelled: w.Labelled,
	}
	return nil
}

// ErrNoBothClasses is returned when no task of a multi-label split has
// both classes, so that ROC-AUC is undefined (OGB's evaluator raises then).
var ErrNoBothClasses = errors.New("no task has both a positive and a negative labelled node")

// MultilabelFigures computes the multi-label figures of n rows of k
// logits z against targets y (0/1, NaN unlabelled), rows in a fixed order
// (the order changes no figure but keeps the float sums reproducible).
func MultilabelFigures(z, y []float32, k int) (TargetFigures, error) {
	f := TargetFigures{RMSE: math.NaN(), MAE: math.NaN()}
	n := len(y) / max(k, 1)
	var aucSum float64
	var tp, fp, fn int64
	var f1Sum float64
	type scored struct {
		s   float32
		pos bool
	}
	var col []scored
	for t := range k {
		col = col[:0]
		var ttp, tfp, tfn int64
		for i := range n {
			v := y[i*k+t]
			if v != v {
				continue
			}
			pos, pred := v == 1, z[i*k+t] > 0
			col = append(col, scored{z[i*k+t], pos})
			switch {
			case pos && pred:
				ttp++
			case pred:
				tfp++
			case pos:
				tfn++
			}
		}
		f.Labelled += int64(len(col))
		tp, fp, fn = tp+ttp, fp+tfp, fn+tfn
		if d := 2*ttp + tfp + tfn; d > 0 {
			f1Sum += float64(2*ttp) / float64(d)
		}
		// ROC-AUC as the Mann-Whitney statistic with tied scores sharing
		// their mean rank: what scikit-learn's trapezoidal curve gives.
		slices.SortFunc(col, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
		var npos, nneg int64
		var rankSum float64
		for i := 0; i < len(col); {
			j := i
			for j < len(col) && col[j].s == col[i].s {
				j++
			}
			mid := float64(i+j+1) / 2 // mean of the 1-based ranks i+1..j
			for _, c := range col[i:j] {
				if c.pos {
					npos++
					rankSum += mid
				} else {
					nneg++
				}
			}
			i = j
		}
		if npos > 0 && nneg > 0 {
			aucSum += (rankSum - float64(npos)*float64(npos+1)/2) / (float64(npos) * float64(nneg))
			f.Tasks++
		}
	}
	if d := 2*tp + fp + fn; d > 0 {
		f.F1Micro = float64(2*tp) / float64(d)
	}
	if k > 0 {
		f.F1Macro = f1Sum / float64(k)
	}
	if f.Tasks == 0 {
		f.ROCAUC = math.NaN()
		return f, ErrNoBothClasses
	}
	f.ROCAUC = aucSum / float64(f.Tasks)
	return f, nil
}

// RegressionFigures computes RMSE and MAE of n rows of k predictions p
// against targets y (NaN unlabelled), pooled over every labelled value.
func RegressionFigures(p, y []float32, k int) TargetFigures {
	f := TargetFigures{ROCAUC: math.NaN(), F1Micro: math.NaN(), F1Macro: math.NaN()}
	var se, ae float64
	for i, v := range y[:len(y)/max(k, 1)*k] {
		if v != v {
			continue
		}
		d := float64(p[i]) - float64(v)
		se += d * d
		ae += math.Abs(d)
		f.Labelled++
	}
	if f.Labelled == 0 {
		f.RMSE, f.MAE = math.NaN(), math.NaN()
		return f
	}
	f.RMSE = math.Sqrt(se / float64(f.Labelled))
	f.MAE = ae / float64(f.Labelled)
	return f
}

// TargetLine holds a real-target task's figures as epoch and summary lines
// write them (inline, like TestFigures): all nil, and absent, for the other
// tasks; a figure that is undefined (NaN, or not the task's) is nil too. A
// summary line holds the best epoch's.
type TargetLine struct {
	ValROCAUC   *float64 `json:"val_rocauc,omitempty"`
	TestROCAUC  *float64 `json:"test_rocauc,omitempty"`
	ValF1Micro  *float64 `json:"val_f1_micro,omitempty"`
	TestF1Micro *float64 `json:"test_f1_micro,omitempty"`
	ValF1Macro  *float64 `json:"val_f1_macro,omitempty"`
	TestF1Macro *float64 `json:"test_f1_macro,omitempty"`
	ValRMSE     *float64 `json:"val_rmse,omitempty"`
	TestRMSE    *float64 `json:"test_rmse,omitempty"`
	ValMAE      *float64 `json:"val_mae,omitempty"`
	TestMAE     *float64 `json:"test_mae,omitempty"`
}

// SetTargets fills the line's figures from val and test (nothing for a
// nil one).
func (l *TargetLine) SetTargets(val, test *TargetFigures) {
	if val != nil {
		l.ValROCAUC, l.ValF1Micro, l.ValF1Macro = finitePtr(val.ROCAUC), finitePtr(val.F1Micro), finitePtr(val.F1Macro)
		l.ValRMSE, l.ValMAE = finitePtr(val.RMSE), finitePtr(val.MAE)
	}
	if test != nil {
		l.TestROCAUC, l.TestF1Micro, l.TestF1Macro = finitePtr(test.ROCAUC), finitePtr(test.F1Micro), finitePtr(test.F1Macro)
		l.TestRMSE, l.TestMAE = finitePtr(test.RMSE), finitePtr(test.MAE)
	}
}

// ClassFigures computes the macro F1 of single-label class predictions
// pred against labels y (both in [0, classes); y NaN unlabelled, skipped)
// as scikit-learn's f1_score(average="macro") does: the mean of the
// per-class F1 over the classes present in the labels or the predictions
// (a class with no true positive scores 0). F1Micro is left NaN: for one
// label per item it is the accuracy, which the caller reports as such.
func ClassFigures(pred []int, y []float32, classes int) TargetFigures {
	f := TargetFigures{ROCAUC: math.NaN(), F1Micro: math.NaN(), F1Macro: math.NaN(), RMSE: math.NaN(), MAE: math.NaN()}
	tp, fp, fn := make([]int, classes), make([]int, classes), make([]int, classes)
	for i, v := range y {
		if v != v || i >= len(pred) {
			continue
		}
		c, p := int(v), pred[i]
		if c < 0 || c >= classes || p < 0 || p >= classes {
			continue
		}
		f.Labelled++
		if c == p {
			tp[c]++
		} else {
			fp[p]++
			fn[c]++
		}
	}
	sum, present := 0.0, 0
	for c := range classes {
		if tp[c]+fp[c]+fn[c] == 0 {
			continue
		}
		present++
		sum += 2 * float64(tp[c]) / float64(2*tp[c]+fp[c]+fn[c])
	}
	if present > 0 {
		f.F1Macro = sum / float64(present)
	}
	return f
}
