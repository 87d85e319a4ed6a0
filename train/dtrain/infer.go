package dtrain

import (
	"fmt"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// Evaluation modes (TrainConfig.Eval, `--eval`).
const (
	// EvalLayerwise evaluates with exact layer-wise inference over full
	// neighbourhoods (Infer); the default.
	EvalLayerwise = "layer-wise"
	// EvalSampled evaluates on sampled neighbourhoods with the evaluation
	// fanouts, as training samples (before issue 17, the only mode).
	EvalSampled = "sampled"
)

// resolveEval returns the evaluation mode of a run: mode as given, or the
// default for "". Temporal sampling evaluates every seed at its own time,
// which layer-wise inference (one row per node) cannot express, and
// --eval-full asks for sampled evaluation with fanout -1; both default to
// sampled and refuse an explicit layer-wise.
func resolveEval(mode string, evalFull, temporal bool) (string, error) {
	switch mode {
	case "", EvalLayerwise, EvalSampled:
	default:
		return "", config.Errorf("{Eval} %q: want %s or %s", mode, EvalLayerwise, EvalSampled)
	}
	switch {
	case mode == EvalLayerwise && temporal:
		return "", config.Errorf("{Eval} %s cannot evaluate temporally (every seed at its own time); use {Eval} %s with {Loader.Temporal}", EvalLayerwise, EvalSampled)
	case mode == EvalLayerwise && evalFull:
		return "", config.Errorf("{EvalFull} is sampled evaluation with fanout -1; {Eval} %s is already exact (drop one of them)", EvalLayerwise)
	case mode != "":
		return mode, nil
	case temporal || evalFull:
		return EvalSampled, nil
	}
	return EvalLayerwise, nil
}

// inferenceMode resolves the mode of predict and embed: as given, or
// layer-wise unless fanouts or full ask for sampled inference.
func inferenceMode(mode string, fanouts []int, full bool) (string, error) {
	switch {
	case mode != "" && mode != EvalLayerwise && mode != EvalSampled:
		return "", config.Errorf("{Eval} %q: want %s or %s", mode, EvalLayerwise, EvalSampled)
	case mode == EvalLayerwise && (fanouts != nil || full):
		return "", config.Errorf("{Fanouts} and {Full} choose sampled inference; {Eval} %s uses every neighbour exactly", EvalLayerwise)
	case mode != "":
		return mode, nil
	case fanouts != nil || full:
		return EvalSampled, nil
	}
	return EvalLayerwise, nil
}

// inferRows runs layer-wise inference of m over the store (over graph g if
// not nil), adding its counters to st if not nil. It is collective.
func inferRows(store *dsample.Store, m *train.Model, typed dsample.TypedInputs, g *dsample.GraphStore, st *InferStats) (*dsample.Embeddings, error) {
	return Infer(store, m, InferOptions{Graph: g, Typed: typed, Stats: st})
}

// layerwiseEvaluator implements train.Evaluator for node classification
// with layer-wise inference: one inference computes the logits of every
// node, and valid and test of the same epoch and weights share it.
type layerwiseEvaluator struct {
	c     *collectives.Comm
	store *dsample.Store
	split string // the partition's split the labels are drawn from
	typed dsample.TypedInputs

	cache struct {
		logits []float32 // this rank's rows, owned nodes in new-id order
		epoch  int
		params []float32
	}
	labels  []int32
	rows    []float32
	targets []float32          // a real-target model's targets of the split's nodes
	ids     []int64            // and the nodes' original ids
	scores  train.TargetScores // what the figures are computed over
}

// Evaluate implements train.Evaluator. It is collective.
func (e *layerwiseEvaluator) Evaluate(split string, epoch int, m *train.Model) (train.EvalResult, error) {
	start := time.Now()
	var res train.EvalResult
	p := e.store.Part()
	sp := p.Splits[e.split]
	if sp == nil {
		return res, fmt.Errorf("partition has no split %q", e.split)
	}
	var nodes []int64
	switch split {
	case train.SplitValid:
		nodes = sp.Valid
	case train.SplitTest:
		nodes = sp.Test
	default:
		return res, fmt.Errorf("unknown split %q", split)
	}
	logits, err := e.logits(epoch, m)
	if err != nil {
		return res, err
	}
	var localErr error
	classes := m.Config().Classes
	kind := m.Config().Targets
	if kind != "" {
		e.targets, localErr = e.store.Targets(nodes, e.targets)
		e.ids = e.ids[:0]
		for _, v := range nodes {
			e.ids = append(e.ids, p.Orig[v-p.Lo])
		}
	} else {
		e.labels, localErr = e.store.Labels(nodes, e.labels)
	}
	if localErr == nil {
		e.rows = e.rows[:0]
		for _, v := range nodes {
			r := int(v - p.Lo)
			e.rows = append(e.rows, logits[r*classes:(r+1)*classes]...)
		}
	}
	var sums [4]float64 // loss, correct, count, error flag
	if localErr == nil {
		var correct int
		if kind != "" {
			sums[0], correct, localErr = m.Layerwise().ScoreTargets(e.rows, e.targets)
		} else {
			sums[0], correct, localErr = m.Layerwise().Score(e.rows, e.labels)
		}
		sums[1], sums[2] = float64(correct), float64(len(nodes))
	}
	if localErr != nil {
		sums = [4]float64{3: 1}
	}
	if err := collectives.Allreduce(e.c, sums[:], collectives.Sum); err != nil {
		return res, fmt.Errorf("reduce: %w", err)
	}
	switch {
	case localErr != nil:
		return res, localErr
	case sums[3] != 0:
		return res, fmt.Errorf("%v other rank(s) failed (see their errors)", sums[3])
	}
	res.Count = int64(sums[2])
	if res.Count > 0 {
		res.Loss, res.Acc = sums[0]/sums[2], sums[1]/sums[2]
		if kind != "" {
			// Every rank knows the count, so all of them gather or none.
			e.scores.Reset()
			e.scores.Add(e.ids, e.rows, e.targets)
			if res.Targets, err = e.scores.Figures(Reducer{C: e.c}, kind, classes); err != nil {
				return res, err
			}
		}
	}
	res.Wall = time.Since(start)
	return res, nil
}

// logits returns this rank's logits under m's current weights, from the
// cache when the epoch and weights are those of the last inference.
func (e *layerwiseEvaluator) logits(epoch int, m *train.Model) ([]float32, error) {
	ch := &e.cache
	if ch.logits != nil && ch.epoch == epoch && slices.Equal(ch.params, m.Params()) {
		return ch.logits, nil
	}
	emb, err := inferRows(e.store, m, e.typed, nil, nil)
	if err != nil {
		return nil, err
	}
	// A copy, so that the window is released now: the logits are small.
	ch.logits = append(ch.logits[:0], emb.Local()...)
	if err := emb.Free(); err != nil {
		return nil, err
	}
	ch.epoch = epoch
	ch.params = append(ch.params[:0], m.Params()...)
	return ch.logits, nil
}

// encoder is a model as the sampled embedding of package dsample reads it
// (dsample.Embedder, and TypedEmbedder on a heterogeneous graph): the
// seeds' last-layer rows of a sampled batch.
type encoder struct{ m *train.Model }

func (e encoder) Embed(blocks []sample.Block, x []float32) ([]float32, error) {
	return e.m.Forward(&sample.Batch{Blocks: blocks, X: x})
}

func (e encoder) EmbedHetero(blocks []sample.Block, xs [][]float32) ([]float32, error) {
	return e.m.Forward(&sample.Batch{Blocks: blocks, XT: xs})
}
