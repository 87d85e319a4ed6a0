package train

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"mpignn/config"
	"mpignn/train/metrics"
)

// Selection metrics (Options.Metric): the validation figure that picks
// the best epoch. "" is the task's default: accuracy for node
// classification, MRR for link prediction, ROC-AUC for multilabel, RMSE
// for regression.
const (
	MetricAcc     = "acc"
	MetricMRR     = "mrr"
	MetricAUC     = "auc"
	MetricROCAUC  = "rocauc"
	MetricF1Micro = "f1_micro"
	MetricF1Macro = "f1_macro"
	MetricRMSE    = "rmse"
	MetricMAE     = "mae"
	// MetricHitsPrefix names Hits@K of link prediction, "hits@K" with K one
	// of metrics.HitsK.
	MetricHitsPrefix = "hits@"
)

// checkMetric reports a name that is no selection metric at all (which
// task it fits is the driver's to check).
func checkMetric(name string) error {
	switch name {
	case "", MetricAcc, MetricMRR, MetricAUC, MetricROCAUC, MetricF1Micro, MetricF1Macro, MetricRMSE, MetricMAE:
		return nil
	}
	if _, err := hitsIndex(name); err == nil {
		return nil
	}
	return config.Errorf("{Metric} %q: want acc, mrr, auc, hits@K (K in %v), rocauc, f1_micro, f1_macro, rmse or mae", name, metrics.HitsKs())
}

// hitsIndex returns the index in LinkFigures.Hits of "hits@K".
func hitsIndex(name string) (int, error) {
	k, ok := strings.CutPrefix(name, MetricHitsPrefix)
	if !ok {
		return 0, fmt.Errorf("%q is not hits@K", name)
	}
	n, err := strconv.Atoi(k)
	if err != nil {
		return 0, fmt.Errorf("%q: K %q is not a number", name, k)
	}
	for i, h := range metrics.HitsKs() {
		if h == n {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%q: K %d is not one of %v", name, n, metrics.HitsKs())
}

// selectionScore is metric's value of an evaluation (accuracy acc, link
// figures, real-target figures), oriented so that higher is better (the
// errors are negated); NaN when the evaluation does not have it.
func selectionScore(metric string, acc float64, link *metrics.LinkFigures, tf *metrics.TargetFigures) float64 {
	nan := math.NaN()
	switch metric {
	case MetricAcc:
		return acc
	case MetricMRR, MetricAUC:
		if link == nil {
			return nan
		}
		if metric == MetricMRR {
			return link.MRR
		}
		return link.AUC
	case MetricROCAUC, MetricF1Micro, MetricF1Macro, MetricRMSE, MetricMAE:
		if tf == nil {
			return nan
		}
		return map[string]float64{MetricROCAUC: tf.ROCAUC, MetricF1Micro: tf.F1Micro, MetricF1Macro: tf.F1Macro, MetricRMSE: -tf.RMSE, MetricMAE: -tf.MAE}[metric]
	}
	if i, err := hitsIndex(metric); err == nil && link != nil {
		return link.Hits[i]
	}
	return nan
}

// betterBy reports whether val beats the best so far by metric: strictly
// higher (ties keep the earlier model), NaN never better, and anything
// better than a NaN best or none.
func (t *Trainer) betterBy(metric string, val *EvalResult) bool {
	if t.best.Params == nil {
		return true
	}
	v := selectionScore(metric, val.Acc, val.Link, val.Targets)
	b := selectionScore(metric, t.best.ValAcc, t.best.ValLink, t.best.ValTargets)
	return v > b || (b != b && v == v)
}
