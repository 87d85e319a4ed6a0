package dtrain

import (
	"fmt"
	"math"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/metrics"
)

// LinkOptions configure a link-prediction run. They are stored in the
// checkpoint's run info (a resume must not change them).
type LinkOptions struct {
	// NegRatio negatives per positive edge, at least 1 (the link task
	// refuses 0, as dsample.LinkLoaderOptions does).
	NegRatio int `json:"neg_ratio"`
	// NegStrict redraws negatives that are edges of the training graph.
	NegStrict bool `json:"neg_strict,omitempty"`
	// UseValidEdges adds the valid edges to the graph the test split is
	// embedded on (the OGB collab rule); training never sees them.
	UseValidEdges bool `json:"use_valid_edges,omitempty"`
	// KeepSeedEdges leaves each step's positive edges in message passing
	// (leaks the target; for measuring the leak only).
	KeepSeedEdges bool `json:"keep_seed_edges,omitempty"`
}

// Validate reports link options no link run can use, naming the field.
// TrainConfig.Validate calls it (as {Link...}) for the link task.
func (o LinkOptions) Validate() error {
	if o.NegRatio < 1 {
		return config.Errorf("{NegRatio} %d must be at least 1", o.NegRatio)
	}
	return nil
}

// checkLinkTrainable is checkTrainable for the link task. It is collective.
func checkLinkTrainable(c *collectives.Comm, partDir string, meta *partition.Meta, lo dsample.LoaderOptions, so dsample.StoreOptions, o LinkOptions, want, relation string, model train.Config) error {
	var err error
	k := o.NegRatio
	switch lm := meta.Link; {
	case lm == nil:
		err = config.Errorf("train {Task} link: partition %s has no link split: partition the dataset with {LinkSplit} (for example random:0.85,0.05,0.10, or time)", partDir)
	case want != "" && want != lm.Split:
		err = config.Errorf("train: {LinkSplit} %s but partition %s holds link split %s (repartition, or drop the flag)", want, partDir, lm.Split)
	case relation != "" && relation != lm.Relation:
		err = config.Errorf("train: {LinkRelation} %s but partition %s holds a link split of %q (repartition with {LinkRelation}, or drop the flag)", relation, partDir, lm.Relation)
	case lo.GlobalBatch == 0 && lo.Batch > math.MaxInt32/c.Size()/(1+k):
		err = config.Errorf("train: {Loader.Batch} %d x %d ranks x %d pairs per edge is more than %d pairs per step", lo.Batch, c.Size(), 1+k, math.MaxInt32)
	case lo.GlobalBatch > math.MaxInt32/(1+k):
		err = config.Errorf("train: {Loader.GlobalBatch} %d x %d pairs per edge is more than %d pairs per step", lo.GlobalBatch, 1+k, math.MaxInt32)
	case lm.Train == 0:
		err = fmt.Errorf("train: link split %s of %s has no training edges (valid %d, test %d)", lm.Split, partDir, lm.Valid, lm.Test)
	case o.UseValidEdges && !lm.ValidAdj:
		err = config.Errorf("train: {Link.UseValidEdges} but partition %s stores no valid-edge adjacency", partDir)
	case lo.Temporal.On() && !lm.HasTime:
		err = config.Errorf("train: {Loader.Temporal} needs the link split's edge times, but link split %s of %s has none (use {LinkSplit} time)", lm.Split, partDir)
	case lo.Temporal.On() && o.UseValidEdges:
		err = config.Errorf("train: {Link.UseValidEdges} with {Loader.Temporal}: evaluate on a partition made with {Link.Graph} all instead, where every earlier event is visible at a test edge's time")
	case lm.Graph == partition.LinkGraphAll && !lo.Temporal.Strict:
		err = config.Errorf("train: partition %s keeps the valid and test events in message passing ({Link.Graph} all): only strict temporal sampling ({Loader.Temporal} uniform|last {Loader.Temporal.Strict}) keeps an evaluated edge and its simultaneous events out", partDir)
	}
	if err := collectives.Agree(c, err); err != nil {
		return err
	}
	e := model.EstimateLinkTraining(lo.Fanouts, lo.EvalFanouts, lo.RankShare(c.Size())*(1+k), meta.NumNodes)
	if e.Store, err = storeEstimate(c, meta, so); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := checkFits(c, e, "lower {Model.Hidden}, "+batchField(lo)+", {Link.NegRatio} or {Loader.Fanouts}"); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// openLinkLoader opens the store, the link loader and the evaluator over
// part (and, with UseValidEdges, the train+valid adjacency for the test
// split). It is collective; the caller closes the evaluator (closeAll) and
// then the store.
func openLinkLoader(c *collectives.Comm, part *partition.Part, so dsample.StoreOptions, lo dsample.LoaderOptions, o LinkOptions, width int) (*dsample.Store, *dsample.LinkLoader, *linkEvaluator, error) {
	// The merged adjacency is built from the partition's edge arrays,
	// which the store releases once copied into its windows.
	var indptr, indices, orig []int64
	var err error
	if o.UseValidEdges {
		indptr, indices, orig, err = part.MergedValidAdjacency()
		if err != nil {
			err = fmt.Errorf("rank %d: %w", c.Rank(), err)
		}
	}
	if err := collectives.Agree(c, err); err != nil {
		return nil, nil, nil, err
	}
	so.ReleasePart = true
	st, err := dsample.OpenStore(c, part, so)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open feature store: %w", err)
	}
	ll, err := dsample.NewLinkLoader(st, dsample.LinkLoaderOptions{
		Fanouts: lo.Fanouts, EvalFanouts: lo.EvalFanouts, RelFanouts: lo.RelFanouts, EvalRelFanouts: lo.EvalRelFanouts,
		Batch: lo.Batch, GlobalBatch: lo.GlobalBatch, Replace: lo.Replace, Seed: lo.Seed,
		NegRatio: o.NegRatio, NegStrict: o.NegStrict, KeepSeedEdges: o.KeepSeedEdges,
		Temporal: lo.Temporal,
	})
	if err != nil {
		st.Close()
		return nil, nil, nil, fmt.Errorf("loader: %w", err)
	}
	ev := &linkEvaluator{c: c, l: ll, part: part, width: width}
	if o.UseValidEdges {
		if ev.testGr, err = ll.OpenGraph(indptr, indices, orig); err != nil {
			ll.Close()
			st.Close()
			return nil, nil, nil, fmt.Errorf("open train+valid graph: %w", err)
		}
	}
	return st, ll, ev, nil
}

// closeAll frees the evaluator's embeddings, the test graph and the
// loader's id map. It is collective.
func (e *linkEvaluator) closeAll() error {
	err := e.close()
	if e.testGr != nil {
		if err2 := e.testGr.Close(); err == nil {
			err = err2
		}
		e.testGr = nil
	}
	if err2 := e.l.Close(); err == nil {
		err = err2
	}
	return err
}

// linkFinal formats the test figures of the final line.
func linkFinal(s metrics.Summary) string {
	v := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	return fmt.Sprintf("best_val_mrr=%.4f test_auc=%.4f test_mrr=%.4f test_hits@10=%.4f test_hits@50=%.4f",
		v(s.BestValMRR), v(s.TestAUC), v(s.TestMRR), v(s.TestHits10), v(s.TestHits50))
}
