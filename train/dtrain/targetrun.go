package dtrain

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/metrics"
)

// targetTask learns a partition's real node targets (targets.bin, NaN
// unlabelled): multi-label classification (kind TaskMultilabel) or
// regression (TaskRegression). It trains and evaluates like node
// classification, over the same loader and split, with the model's
// target head; its figures are ROC-AUC and F1, or RMSE and MAE.
type targetTask struct{ kind string }

func (t targetTask) name() string { return t.kind }

func (targetTask) validate(c *TrainConfig) error { return nodeTask{}.validate(c) }

func (targetTask) labelled() bool { return true }

func (t targetTask) resolveModel(m *train.Config, meta *partition.Meta) {
	m.Classes, m.Targets = meta.TargetDim, t.kind
}

func (t targetTask) checkTrainable(c *collectives.Comm, cfg *TrainConfig, meta *partition.Meta, lo dsample.LoaderOptions, m train.Config) error {
	switch {
	case meta.Hetero != nil:
		return config.Errorf("train: {Task} %s: partition %s is heterogeneous; real node targets are read for homogeneous graphs only", t.kind, cfg.PartDir)
	case meta.TargetDim == 0:
		return config.Errorf("train: {Task} %s needs real node targets, and partition %s has %d classes: partition a label file with one column per target (or one real column, with partition --labels real)", t.kind, cfg.PartDir, meta.NumClasses)
	}
	return checkTrainable(c, cfg.PartDir, meta, lo, cfg.Store, m)
}

func (targetTask) open(c *collectives.Comm, part *partition.Part, cfg *TrainConfig, lo dsample.LoaderOptions, m train.Config) (*taskData, error) {
	return nodeTask{}.open(c, part, cfg, lo, m)
}

func (t targetTask) runInfo(ri *runInfo, _ *TrainConfig, _ *partition.Meta) { ri.Task = t.kind }

func (t targetTask) checkpointSettings(ri runInfo, _ train.Config, add func(name, value string)) {
	add("Task", t.kind)
	if ri.Split != "" {
		add("Loader.Split", ri.Split)
	}
}

func (t targetTask) metrics() []string {
	if t.kind == TaskMultilabel {
		return []string{train.MetricROCAUC, train.MetricF1Micro, train.MetricF1Macro}
	}
	return []string{train.MetricRMSE, train.MetricMAE}
}

// final names the selection figure of the best epoch and its test
// figures.
func (t targetTask) final(s metrics.Summary, weights, embeddings string) string {
	f := func(p *float64) string {
		if p == nil {
			return "nan"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	if t.kind == TaskMultilabel {
		return fmt.Sprintf("epochs=%d best_epoch=%d best_val_rocauc=%s test_rocauc=%s test_f1_micro=%s weights=%s%s",
			s.Epochs, s.BestEpoch, f(s.ValROCAUC), f(s.TestROCAUC), f(s.TestF1Micro), weights, embeddings)
	}
	return fmt.Sprintf("epochs=%d best_epoch=%d best_val_rmse=%s test_rmse=%s test_mae=%s weights=%s%s",
		s.Epochs, s.BestEpoch, f(s.ValRMSE), f(s.TestRMSE), f(s.TestMAE), weights, embeddings)
}

func (t targetTask) validatePredict(cfg PredictConfig) error {
	if err := (nodeTask{}).validatePredict(cfg); err != nil {
		return err
	}
	if len(cfg.Out) < 4 || cfg.Out[len(cfg.Out)-4:] != ".npy" {
		return config.Errorf("{Task} %s writes one row of %s per node to a .npy file: {Out} %s must end in .npy", t.kind, t.outputs(cfg.Logits), cfg.Out)
	}
	return nil
}

// outputs says what predict writes per node.
func (t targetTask) outputs(logits bool) string {
	switch {
	case t.kind == TaskRegression:
		return "predicted values"
	case logits:
		return "logits"
	}
	return "probabilities"
}

func (t targetTask) predict(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	return predictNodesAs(c, cfg, t.kind)
}
