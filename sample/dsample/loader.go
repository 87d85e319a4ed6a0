package dsample

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/graph"
	"mpignn/sample"
)

// Split names accepted by Loader.Steps and Loader.Batch.
const (
	SplitTrain = "train"
	SplitValid = "valid"
	SplitTest  = "test"
)

// LoaderOptions configure NewLoader.
type LoaderOptions struct {
	// Fanouts in PyG order: Fanouts[0] is the hop from the seeds (the LAST
	// block); -1 takes all neighbours.
	Fanouts []int
	// EvalFanouts are used for valid/test; nil means Fanouts. Same length
	// as Fanouts (one per model layer).
	EvalFanouts []int
	// Batch is the PER-RANK batch size B; the global batch is P·B.
	Batch int
	// GlobalBatch, when positive, is the number of seeds of a step over
	// ALL ranks, whatever their count: each rank takes the seeds of each
	// global step that it owns (their number differs between ranks and
	// steps anyway), so the same options train the same model on any
	// number of ranks up to float summation order. It replaces Batch,
	// which must then be 0; 0 means P·Batch.
	GlobalBatch int
	Replace     bool
	Seed        uint64
	// Split names the dataset split ("" = the partition's default,
	// Meta.Split).
	Split string
	// RelFanouts and EvalRelFanouts are per-relation fanouts of a
	// heterogeneous partition (sample.FanoutPlan.Resolve); nil means
	// Fanouts (EvalFanouts) for every relation. They need as many hops as
	// Fanouts, and are ignored for a homogeneous partition.
	RelFanouts, EvalRelFanouts sample.RelFanouts
	// Temporal turns temporal sampling on (the partition must have edge
	// times): each seed is expanded at its node time (Part.NodeTime), or at
	// SeedTime when FixedSeedTime.
	Temporal      sample.Temporal
	FixedSeedTime bool
	SeedTime      int64
}

// splitSeeds is one rank's share of a split, with what global batching
// needs: each node's canonical index among all nodes of the split.
type splitSeeds struct {
	global, orig []int64
	index        []int64
	total        int64 // nodes of the split over all ranks

	// steps of the most recent epoch, computed once per epoch
	epoch int
	steps [][]int
}

// Loader cuts the train/valid/test seeds into global batches (see
// sample.EpochBatches and sample.RankSteps) and samples and gathers each rank's share.
type Loader struct {
	s      *Store
	o      LoaderOptions
	splits [3]splitSeeds // train, valid, test
	// typed reads the input rows of a heterogeneous partition's node
	// types (SetTypedInputs); byType is its scratch.
	typed  TypedInputs
	byType [][]int64
	seedT  []int64 // scratch: the step's seed times (temporal sampling)
}

// TypedInputs reads the input rows of the nodes of one type of a
// heterogeneous graph: their features, or their learnable embeddings. It
// appends the rows of nodes (new global ids, all of type t) to dst and
// returns it, adding what it read to st. It is collective: the Loader calls
// it for every node type in type order on every rank, with an empty nodes
// list where a rank has none of the type.
type TypedInputs func(t int, nodes []int64, dst []float32, st *GatherStats) ([]float32, error)

// SetTypedInputs sets how the Loader reads input rows of a heterogeneous
// partition; Batch fills Batch.XT and XTNodes through it instead of X.
func (l *Loader) SetTypedInputs(f TypedInputs) { l.typed = f }

// NewLoader prepares the three splits of the store's partition. It is
// collective (one Allgatherv per split, to number the split's nodes
// canonically by original id).
func NewLoader(s *Store, o LoaderOptions) (*Loader, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	if o.EvalFanouts == nil {
		o.EvalFanouts = o.Fanouts
	}
	if s.graph.Schema() != nil {
		if err := resolveRelFanouts(&o.RelFanouts, &o.EvalRelFanouts, o.Fanouts, o.EvalFanouts, s.graph.NumRels()); err != nil {
			return nil, fmt.Errorf("loader: %w", err)
		}
	}
	p := s.part
	name := o.Split
	if name == "" {
		name = p.Meta.Split
	}
	sp, ok := p.Splits[name]
	if !ok {
		if len(p.Splits) == 0 && p.Meta.Link != nil {
			// The one way to get here by hand: a node run on a partition
			// made for link prediction.
			return nil, errors.New("the partition holds a link-prediction split (partition --link-split) and no node split: train it with --task link, or partition without --link-split for node classification")
		}
		have := make([]string, 0, len(p.Splits))
		for s := range p.Splits {
			have = append(have, s)
		}
		slices.Sort(have)
		return nil, config.Errorf("partition has no split %q (it has %s): give one of them with {Split}", name, strings.Join(have, ", "))
	}
	l := &Loader{s: s, o: o}
	if err := s.sampler.SetTemporal(o.Temporal); err != nil {
		return nil, fmt.Errorf("loader: %w", err)
	}
	if o.Temporal.On() && !o.FixedSeedTime && p.NodeTime == nil {
		return nil, fmt.Errorf("loader: temporal sampling of node seeds needs node times, but the partition has none (give a seed time for all seeds)")
	}
	for i, ids := range [][]int64{sp.Train, sp.Valid, sp.Test} {
		ss := &l.splits[i]
		ss.epoch = -1
		ss.global = ids
		ss.orig = make([]int64, len(ids))
		for j, g := range ids {
			ss.orig[j] = p.Orig[g-p.Lo]
		}
		all, _, err := collectives.Allgatherv(s.c, ss.orig)
		if err != nil {
			return nil, fmt.Errorf("loader: %w", err)
		}
		slices.Sort(all)
		ss.total = int64(len(all))
		if ss.index, err = sample.CanonicalIndex(all, ss.orig); err != nil {
			return nil, fmt.Errorf("loader: split %s: %w", name, err)
		}
	}
	return l, nil
}

func (l *Loader) split(name string) (*splitSeeds, []int, error) {
	switch name {
	case SplitTrain:
		return &l.splits[0], l.o.Fanouts, nil
	case SplitValid:
		return &l.splits[1], l.o.EvalFanouts, nil
	case SplitTest:
		return &l.splits[2], l.o.EvalFanouts, nil
	}
	return nil, nil, fmt.Errorf("loader: unknown split %q (want train, valid or test)", name)
}

// GlobalBatch returns the seeds per step over all ranks: the options'
// GlobalBatch, or P·B.
func (l *Loader) GlobalBatch() int { return l.o.GlobalSize(l.s.c.Size()) }

// NumNodes returns the number of nodes of a split over all ranks.
func (l *Loader) NumNodes(split string) (int64, error) {
	ss, _, err := l.split(split)
	if err != nil {
		return 0, err
	}
	return ss.total, nil
}

// Steps returns the number of steps of an epoch of split, ceil(N/G) for
// the global batch G (GlobalBatch),
// which is the same on every rank. It is local.
func (l *Loader) Steps(split string, epoch int) (int, error) {
	ss, _, err := l.split(split)
	if err != nil {
		return 0, err
	}
	return sample.NumSteps(ss.total, l.GlobalBatch()), nil
}

// StepSeeds returns this rank's seeds (new and original ids) of one step,
// in permutation order. It is local.
func (l *Loader) StepSeeds(split string, epoch, step int) (global, orig []int64, err error) {
	ss, _, err := l.split(split)
	if err != nil {
		return nil, nil, err
	}
	if ss.epoch != epoch || ss.steps == nil {
		steps, err := sample.RankSteps(l.o.Seed, epoch, ss.total, l.GlobalBatch(), ss.index)
		if err != nil {
			return nil, nil, fmt.Errorf("loader: %w", err)
		}
		ss.epoch, ss.steps = epoch, steps
	}
	if step < 0 || step >= len(ss.steps) {
		return nil, nil, fmt.Errorf("loader: step %d of split %s outside [0,%d)", step, split, len(ss.steps))
	}
	locals := ss.steps[step]
	global = make([]int64, len(locals))
	orig = make([]int64, len(locals))
	for i, j := range locals {
		global[i], orig[i] = ss.global[j], ss.orig[j]
	}
	return global, orig, nil
}

// Batch samples and gathers this rank's share of step `step` of `epoch`
// (0-based) of split into out, reusing out's buffers; it sets every field
// of out. With Steps it makes the Loader a train.BatchSource. It is COLLECTIVE:
// every rank calls it for every step, also when it owns no seed of the step.
// Random choices are keyed by (Seed, epoch, step, layer, original node id).
func (l *Loader) Batch(split string, epoch, step int, out *sample.Batch) error {
	defer l.s.c.Phase("sample")()
	ss, fan, err := l.split(split)
	if err != nil {
		return err
	}
	seeds, orig, err := l.StepSeeds(split, epoch, step)
	if err != nil {
		return err
	}
	G := int64(l.GlobalBatch())
	out.GlobalSeeds = int(min(G, ss.total-int64(step)*G))
	out.Seeds, out.SeedsOrig = seeds, orig
	var st sample.SampleStats
	base := sample.Key{Seed: l.o.Seed, Epoch: epoch, Batch: step}
	rel := l.o.RelFanouts
	if split != SplitTrain {
		rel = l.o.EvalRelFanouts
	}
	times, err := l.seedTimes(seeds, l.seedT)
	if err != nil {
		// Fail after the collectives (sampling nothing), so that the other
		// ranks do not hang.
		seeds, orig, times = nil, nil, []int64{}
	}
	l.seedT = times
	blocks, serr := l.s.sampler.Sample(Request{Seeds: seeds, SeedsOrig: orig, Times: times, Fanouts: fan, Rel: l.s.relPlan(rel), Key: base, Replace: l.o.Replace, Stats: &st})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("loader: %s epoch %d step %d: %w", split, epoch, step, err)
	}
	out.Blocks = blocks
	var g GatherStats
	if schema := l.s.graph.Schema(); schema != nil {
		err = l.gatherTyped(schema, &blocks[0], out, &g)
	} else if l.s.feat.Sparse(NodeFeat()) {
		// Sparse features reach the model as CSR rows (Batch.XS), never
		// densified: layer 0 then works per stored entry.
		if out.XS == nil {
			out.XS = &sample.SparseRows{}
		}
		out.X = out.X[:0]
		err = l.s.feat.GatherSparse(NodeFeat(), blocks[0].Nodes, out.XS, &g)
	} else {
		err = l.gatherDense(blocks[0].Nodes, out, &g)
	}
	if err != nil {
		return fmt.Errorf("loader: %s epoch %d step %d: %w", split, epoch, step, err)
	}
	if k := l.s.part.Meta.TargetDim; k > 0 {
		out.TargetDim = k
		out.Targets, err = l.s.Targets(seeds, out.Targets)
	} else {
		out.Labels, err = l.s.Labels(seeds, out.Labels)
	}
	if err != nil {
		return fmt.Errorf("loader: %s epoch %d step %d: %w", split, epoch, step, err)
	}
	out.Stats = batchStats(g, st)
	return nil
}

// gatherDense fills out.X with the rows of nodes, or out.XRows (XRows16)
// with views of them when out asks for views and the table has them.
func (l *Loader) gatherDense(nodes []int64, out *sample.Batch, g *GatherStats) error {
	if out.ViewInputs {
		views, buf, ok, err := l.s.feat.GatherViews(NodeFeat(), nodes, out.XRows, out.XBuf, g)
		out.XRows, out.XBuf = views, buf
		if ok {
			out.X = out.X[:0]
			return err
		}
		views16, buf16, kind, ok, err := l.s.feat.GatherHalfViews(NodeFeat(), nodes, out.XRows16, out.XBuf16, g)
		out.XRows16, out.XBuf16, out.XHalf = views16, buf16, kind
		if ok {
			out.X = out.X[:0]
			return err
		}
	}
	var err error
	out.X, err = l.s.feat.Gather(NodeFeat(), nodes, out.X, g)
	return err
}

// gatherTyped fills out.XT and out.XTNodes with the input rows of b0's
// nodes, grouped by node type in their order in b0. Every type's read is
// made even after a failure, so that the collective reads stay matched on
// all ranks; the first error is returned.
func (l *Loader) gatherTyped(schema *graph.Schema, b0 *sample.Block, out *sample.Batch, g *GatherStats) error {
	if l.typed == nil {
		return fmt.Errorf("heterogeneous partition but no typed input reader (SetTypedInputs)")
	}
	T := schema.NumTypes()
	if len(l.byType) != T {
		l.byType = make([][]int64, T)
	}
	for t := range l.byType {
		l.byType[t] = l.byType[t][:0]
	}
	for i, v := range b0.Nodes {
		t := schema.TypeOf(b0.Orig[i])
		l.byType[t] = append(l.byType[t], v)
	}
	for len(out.XT) < T {
		out.XT = append(out.XT, nil)
	}
	for len(out.XTNodes) < T {
		out.XTNodes = append(out.XTNodes, nil)
	}
	out.XT, out.XTNodes = out.XT[:T], out.XTNodes[:T]
	start := time.Now()
	var first error
	for t := range T {
		out.XTNodes[t] = append(out.XTNodes[t][:0], l.byType[t]...)
		var err error
		out.XT[t], err = l.typed(t, out.XTNodes[t], out.XT[t][:0], g)
		if err != nil && first == nil {
			first = fmt.Errorf("node type %s: %w", schema.NodeTypes[t], err)
		}
	}
	g.Time = time.Since(start)
	return first
}

// resolveRelFanouts defaults the training and evaluation relation fanouts
// of a heterogeneous graph of R relations (nil: fanouts and evalFanouts for
// every relation) and checks that both fit R and have one hop per layer
// (len(fanouts)).
func resolveRelFanouts(rel, evalRel *sample.RelFanouts, fanouts, evalFanouts []int, R int) error {
	if *rel == nil {
		*rel = sample.UniformRelFanouts(fanouts, R)
	}
	if *evalRel == nil {
		*evalRel = sample.UniformRelFanouts(evalFanouts, R)
	}
	for _, f := range []sample.RelFanouts{*rel, *evalRel} {
		if err := f.Check(R); err != nil {
			return err
		}
		if len(f) != len(fanouts) {
			return fmt.Errorf("%d relation fanout hops for %d layers", len(f), len(fanouts))
		}
	}
	return nil
}

// batchStats is what a loader reports for one batch: the gather and sample
// counters of the step.
func batchStats(g GatherStats, st sample.SampleStats) sample.BatchStats {
	return sample.BatchStats{
		Gather:    g.Time,
		LocalRows: g.LocalRows, CachedRows: g.CachedRows, RemoteRows: g.RemoteRows,
		CacheLookups: g.CacheLookups,
		BytesMoved:   g.Bytes + st.Bytes,
		Sample:       st,
	}
}
