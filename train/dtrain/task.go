package dtrain

import (
	"fmt"
	"strconv"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/metrics"
)

// Task names of TrainConfig.Task and PredictConfig.Task.
const (
	TaskNode = "node"
	TaskLink = "link"
	// TaskMultilabel and TaskRegression learn a partition's real node
	// targets (Meta.TargetDim per node): binary tasks, or real values.
	TaskMultilabel = train.TargetsMultilabel
	TaskRegression = train.TargetsRegression
)

// task is what sets one learning task apart in the drivers: the options
// only it takes, the model's output, what its partition must hold, the
// batch source and evaluator it trains with, what its checkpoint records,
// its final line and its prediction. Train, Predict and CheckpointSettings
// ask the task instead of branching on its name, so that a new task is a
// new implementation here rather than a branch in each of them.
//
// The implementations are stateless: what a method needs of the run it is
// given, so the same value serves a training run, a checkpoint's settings
// and a prediction.
type task interface {
	// name is the task's TrainConfig.Task value, as the run info records it.
	name() string
	// validate checks the task's own options of c (and refuses another
	// task's), naming the field at fault. TrainConfig.Validate calls it
	// after the options every task shares.
	validate(c *TrainConfig) error
	// labelled reports whether the task learns the partition's node labels:
	// a heterogeneous partition must then have a labelled node type.
	labelled() bool
	// resolveModel sets the model's output for the task (Classes, and the
	// decoder) once the partition and the heterogeneous setup have filled
	// in the rest.
	resolveModel(m *train.Config, meta *partition.Meta)
	// checkTrainable refuses, on every rank alike, a run the partition
	// cannot serve or whose batches would not fit in memory. lo is the
	// loader's options as the run resolved them. It is collective.
	checkTrainable(c *collectives.Comm, cfg *TrainConfig, meta *partition.Meta, lo dsample.LoaderOptions, m train.Config) error
	// open opens the store over part, the batch source and what the
	// evaluator needs. It is collective; the caller closes the store and
	// then the rest (taskData.close).
	open(c *collectives.Comm, part *partition.Part, cfg *TrainConfig, lo dsample.LoaderOptions, m train.Config) (*taskData, error)
	// runInfo records the task's settings in the checkpoint's run info
	// (nothing for node classification, whose run info predates tasks).
	runInfo(ri *runInfo, cfg *TrainConfig, meta *partition.Meta)
	// checkpointSettings adds the task's settings of a checkpoint's run
	// (CheckpointSettings) through add.
	checkpointSettings(ri runInfo, m train.Config, add func(name, value string))
	// metrics lists the selection metrics (train.Options.Metric) the task
	// has figures for, its default first.
	metrics() []string
	// final formats the figures of the final line of a trained run
	// (epochs > 0): what follows "final: ", without the newline.
	final(s metrics.Summary, weights, embeddings string) string
	// validatePredict checks the task's own options of a prediction (and
	// refuses another task's), naming the field at fault, after those
	// every task shares (PredictConfig.Validate).
	validatePredict(cfg PredictConfig) error
	// predict runs Predict for the task (cfg is valid).
	predict(c *collectives.Comm, cfg PredictConfig) (int64, error)
}

// typedSource is a batch source that also reads a heterogeneous graph's
// typed inputs (both loaders are).
type typedSource interface {
	train.BatchSource
	SetTypedInputs(dsample.TypedInputs)
}

// taskData is what a task opens over the partition for training.
type taskData struct {
	store *dsample.Store
	src   typedSource
	// evaluator returns the trainer's evaluator for the run's evaluation
	// mode (EvalLayerwise or EvalSampled) and typed inputs; nil keeps the
	// trainer's own evaluation over the batch source.
	evaluator func(mode string, typed dsample.TypedInputs) train.Evaluator
	// close frees what the task opened besides the store (nil: nothing).
	// Train calls it after closing the store, as it always has.
	close func()
}

// taskNamed returns the task of a TrainConfig.Task or PredictConfig.Task
// value ("" is node classification).
func taskNamed(name string) (task, error) {
	switch name {
	case "", TaskNode:
		return nodeTask{}, nil
	case TaskLink:
		return linkTask{}, nil
	case TaskMultilabel, TaskRegression:
		return targetTask{kind: name}, nil
	case TaskEdge:
		return edgeTask{}, nil
	}
	return nil, config.Errorf("{Task} %q: want %s, %s, %s, %s or %s", name, TaskNode, TaskLink, TaskMultilabel, TaskRegression, TaskEdge)
}

// nodeTask is node classification on the partition's labels and split.
type nodeTask struct{}

func (nodeTask) name() string { return TaskNode }

func (nodeTask) validate(c *TrainConfig) error {
	switch {
	case c.Model.Decoder != "":
		return config.Errorf("{Model.Decoder} applies to the link task only")
	case c.Link != LinkOptions{} || c.LinkSplit != "":
		return config.Errorf("{Link} and {LinkSplit} apply to the link task only")
	}
	return nil
}

func (nodeTask) labelled() bool { return true }

// resolveModel keeps the partition's classes, which Train has set.
func (nodeTask) resolveModel(*train.Config, *partition.Meta) {}

func (nodeTask) checkTrainable(c *collectives.Comm, cfg *TrainConfig, meta *partition.Meta, lo dsample.LoaderOptions, m train.Config) error {
	if meta.TargetDim > 0 {
		// Every rank reads the same META, so all refuse alike.
		return config.Errorf("train: partition %s has %d real targets per node, not classes: train it with {Task} %s or %s", cfg.PartDir, meta.TargetDim, TaskMultilabel, TaskRegression)
	}
	return checkTrainable(c, cfg.PartDir, meta, lo, cfg.Store, m)
}

// open opens the node loader; evaluation is the trainer's own over its
// evaluation batches, unless layer-wise.
func (nodeTask) open(c *collectives.Comm, part *partition.Part, cfg *TrainConfig, lo dsample.LoaderOptions, _ train.Config) (*taskData, error) {
	store, loader, err := openLoader(c, part, cfg.Store, lo)
	if err != nil {
		return nil, err
	}
	eval := func(mode string, typed dsample.TypedInputs) train.Evaluator {
		if mode != EvalLayerwise {
			return nil
		}
		return &layerwiseEvaluator{c: c, store: store, split: lo.Split, typed: typed}
	}
	return &taskData{store: store, src: loader, evaluator: eval}, nil
}

func (nodeTask) runInfo(*runInfo, *TrainConfig, *partition.Meta) {}

func (nodeTask) checkpointSettings(ri runInfo, _ train.Config, add func(name, value string)) {
	add("Task", TaskNode)
	if ri.Split != "" {
		add("Loader.Split", ri.Split)
	}
}

func (nodeTask) metrics() []string { return []string{train.MetricAcc} }

func (nodeTask) final(s metrics.Summary, weights, embeddings string) string {
	return fmt.Sprintf("epochs=%d best_epoch=%d best_val_acc=%.4f test_acc=%.4f weights=%s%s",
		s.Epochs, s.BestEpoch, s.BestValAcc, s.TestAcc, weights, embeddings)
}

func (nodeTask) validatePredict(cfg PredictConfig) error {
	if cfg.Pairs != "" {
		return config.Errorf("{Pairs} applies to {Task} link only")
	}
	return nil
}

func (nodeTask) predict(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	return predictNodes(c, cfg)
}

// linkTask is link prediction on the partition's link split: the encoder's
// last layer outputs node embeddings that a decoder scores in pairs.
type linkTask struct{}

func (linkTask) name() string { return TaskLink }

func (linkTask) validate(c *TrainConfig) error {
	if c.Loader.FixedSeedTime {
		return config.Errorf("{Loader.SeedTime}: link seeds are expanded at their own edge's time; it is for node tasks")
	}
	return config.In("Link", c.Link.Validate())
}

func (linkTask) labelled() bool { return false }

func (linkTask) resolveModel(m *train.Config, _ *partition.Meta) {
	// The encoder's last layer outputs the embedding (width --hidden)
	// that the decoder scores.
	m.Classes = m.Hidden
	if m.Decoder == "" {
		m.Decoder = train.DecoderDot
	}
}

func (linkTask) checkTrainable(c *collectives.Comm, cfg *TrainConfig, meta *partition.Meta, lo dsample.LoaderOptions, m train.Config) error {
	return checkLinkTrainable(c, cfg.PartDir, meta, lo, cfg.Store, cfg.Link, cfg.LinkSplit, cfg.LinkRelation, m)
}

// open opens the link loader and the link evaluator, which always ranks
// the evaluation edges itself (sampled or, layer-wise, over inferred rows).
func (linkTask) open(c *collectives.Comm, part *partition.Part, cfg *TrainConfig, lo dsample.LoaderOptions, m train.Config) (*taskData, error) {
	store, ll, ev, err := openLinkLoader(c, part, cfg.Store, lo, cfg.Link, m.Classes)
	if err != nil {
		return nil, err
	}
	eval := func(mode string, typed dsample.TypedInputs) train.Evaluator {
		if mode == EvalLayerwise {
			ev.infer = &linkInfer{store: store, typed: typed}
		}
		return ev
	}
	return &taskData{store: store, src: ll, evaluator: eval, close: func() { ev.closeAll() }}, nil
}

func (linkTask) runInfo(ri *runInfo, cfg *TrainConfig, meta *partition.Meta) {
	lk := cfg.Link
	ri.Task, ri.LinkSplit, ri.Link = TaskLink, meta.Link.Split, &lk
}

func (linkTask) checkpointSettings(ri runInfo, m train.Config, add func(name, value string)) {
	add("Task", TaskLink)
	if m.Decoder != "" {
		add("Model.Decoder", m.Decoder)
	}
	if ri.Link != nil {
		add("Link.NegRatio", strconv.Itoa(ri.Link.NegRatio))
		add("Link.NegStrict", strconv.FormatBool(ri.Link.NegStrict))
		add("Link.UseValidEdges", strconv.FormatBool(ri.Link.UseValidEdges))
		add("Link.KeepSeedEdges", strconv.FormatBool(ri.Link.KeepSeedEdges))
	}
}

func (linkTask) metrics() []string {
	out := []string{train.MetricMRR, train.MetricAUC}
	for _, k := range metrics.HitsKs() {
		out = append(out, train.MetricHitsPrefix+strconv.Itoa(k))
	}
	return out
}

// final leaves out the embeddings digest, as the link line always has.
func (linkTask) final(s metrics.Summary, weights, _ string) string {
	return fmt.Sprintf("epochs=%d best_epoch=%d %s weights=%s", s.Epochs, s.BestEpoch, linkFinal(s), weights)
}

func (linkTask) validatePredict(cfg PredictConfig) error {
	if cfg.Pairs == "" {
		return config.Errorf("{Task} link needs {Pairs} FILE (src,dst lines in original ids)")
	}
	return nil
}

func (linkTask) predict(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	return PredictLink(c, cfg.EmbedConfig)
}
