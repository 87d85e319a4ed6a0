package dtrain

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"mpignn/internal/osx"
	"mpignn/internal/testhold"
	"mpignn/partition"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// PredictConfig configures Predict. Every rank passes the same values.
// It is an EmbedConfig (the checkpoint, the partition and how to infer,
// which predict, embed and link predict share) plus what only predict has:
// Out is a CSV of original_node_id,predicted_class lines (or the .npy of
// Logits), Pairs is for TaskLink, and the Store's ReleasePart is set by
// Predict.
type PredictConfig struct {
	EmbedConfig
	// Task is TaskNode ("" too: classify every node) or TaskLink: score
	// the node pairs of Pairs with a link checkpoint (PredictLink).
	Task string
	// Logits writes every scored node's raw class logits to Out as a .npy
	// (float32, nodes x classes, row i = original id i, of the labelled
	// type in a heterogeneous graph) instead of classes; layer-wise only.
	Logits bool
}

// Predict classifies every node of the partitioned graph with a
// checkpoint's weights and writes original_node_id,predicted_class lines,
// sorted by node id, to cfg.Out (rank 0, atomically). Every rank scores the
// nodes it owns; the results are gathered with Allgatherv. It returns the
// number of nodes written. With Task TaskLink it is PredictLink of the
// same settings and returns the number of pairs. It is collective.
func Predict(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	if err := cfg.Validate(); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	t, err := taskNamed(cfg.Task)
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	return t.predict(c, cfg)
}

// predictNodes is Predict of the node task: it classifies every node (cfg
// is valid). It is collective.
func predictNodes(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	return predictNodesAs(c, cfg, "")
}

// predictNodesAs is predictNodes for a model of real targets of kind
// (train.Config.Targets; "" classifies): the output rows of every node
// go to cfg.Out as .npy (multilabel probabilities, or logits with
// cfg.Logits; regression values).
func predictNodesAs(c *collectives.Comm, cfg PredictConfig, targets string) (int64, error) {
	wantRows := cfg.Logits || targets != ""
	// Every owned node (of a heterogeneous graph: of the labelled type) is
	// scored: the loader sees them as the "test" share of the run's split
	// (it batches evaluation splits in fixed order over all ranks).
	var loader *dsample.Loader
	var lo, hi, total, origBase int64
	open := func(inf *inference) (*dsample.Store, error) {
		part, het, info := inf.part, inf.het, inf.info
		m := part.Meta
		lo, hi, total = part.Lo, part.Hi, m.NumNodes
		if het != nil {
			t := het.schema.TypeIndex(m.Hetero.LabelType)
			lo, hi, total = part.TypeLo[t], part.TypeLo[t+1], het.schema.Count(t)
			// The file names nodes by their ids within the labelled type,
			// as the dataset's files do.
			origBase = het.schema.NodeOrig[t]
		}
		all := make([]int64, hi-lo)
		for i := range all {
			all[i] = lo + int64(i)
		}
		split := info.Split
		if split == "" {
			split = m.Split
		}
		if sp := part.Splits[split]; sp != nil {
			cp := *sp
			cp.Test = all
			part.Splits[split] = &cp
		} else {
			part.Splits[split] = &graph.Split{Test: all}
		}
		lopt := dsample.LoaderOptions{Fanouts: inf.fan, EvalFanouts: inf.fan, Batch: cfg.Batch, Seed: inf.ck.Seed, Split: split}
		if het != nil && cfg.Fanouts == nil && !cfg.Full && info.Hetero != nil {
			lopt.RelFanouts, lopt.EvalRelFanouts = info.Hetero.EvalRelFanouts, info.Hetero.EvalRelFanouts
		}
		so := cfg.Store
		so.NoEdgeFeat = inf.ck.Model.EdgeDim == 0 // as openInference's own store
		store, l, err := openLoader(c, part, so, lopt)
		loader = l
		return store, err
	}
	inf, err := openInference(c, inferSpec{
		what: "predict", cfg: cfg.EmbedConfig,
		classify: true, targets: targets, logits: cfg.Logits, open: open,
	})
	if err != nil {
		return 0, err
	}
	defer inf.close()
	if inf.het != nil {
		loader.SetTypedInputs(inf.typed)
	}
	ck, model, mode := inf.ck, inf.model, inf.mode
	// pairs holds (original id, class) of this rank's nodes.
	var pairs []int64
	var rows []float32 // with Logits: this rank's logits, in pairs order
	var localErr error
	if mode == EvalLayerwise {
		if pairs, rows, err = predictLayerwise(inf.store, model, inf.typed, lo, hi, origBase, wantRows); err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
	} else if pairs, rows, localErr, err = predictSampled(loader, model, origBase, wantRows); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	// Tests stop a rank here, between its share of the inference and the
	// exchange of the results, to stall the job at a known point.
	testhold.At("predict-infer")
	if err := collectives.Agree(c, localErr); err != nil {
		return 0, err
	}
	got, _, err := collectives.Allgatherv(c, pairs)
	if err != nil {
		return 0, fmt.Errorf("predict: gather: %w", err)
	}
	var logits []float32
	if wantRows {
		if logits, _, err = collectives.Allgatherv(c, rows); err != nil {
			return 0, fmt.Errorf("predict: gather: %w", err)
		}
	}
	n := int64(len(got) / 2)
	var werr error
	if c.Rank() == 0 {
		switch {
		case n != total:
			werr = fmt.Errorf("predict: scored %d nodes but the graph has %d", n, total)
		case targets == train.TargetsMultilabel && !cfg.Logits:
			for i, z := range logits {
				logits[i] = float32(1 / (1 + math.Exp(-float64(z))))
			}
			werr = writeLogits(cfg.Out, got, logits, ck.Model.Classes)
		case wantRows:
			werr = writeLogits(cfg.Out, got, logits, ck.Model.Classes)
		default:
			werr = writePredictions(cfg.Out, got)
		}
	}
	if err := collectives.Agree(c, werr); err != nil {
		return 0, err
	}
	return n, nil
}

// writeLogits writes the logits rows (classes wide, in the order of the
// (orig, class) pairs) as a .npy file sorted by original id, atomically.
func writeLogits(path string, pairs []int64, rows []float32, classes int) error {
	n := int64(len(pairs) / 2)
	if int64(len(rows)) != n*int64(classes) {
		return fmt.Errorf("predict: %d logits for %d nodes of %d classes", len(rows), n, classes)
	}
	var buf bytes.Buffer
	writeEmbedHeader(&buf, path, n, classes)
	out := make([]float32, len(rows))
	for i := int64(0); i < n; i++ {
		o := pairs[2*i] // 0..n-1: every node was scored once (checked by the caller's count)
		if o < 0 || o >= n {
			return fmt.Errorf("predict: node id %d outside [0,%d)", o, n)
		}
		copy(out[o*int64(classes):(o+1)*int64(classes)], rows[i*int64(classes):(i+1)*int64(classes)])
	}
	binary.Write(&buf, binary.LittleEndian, out)
	if err := osx.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	return nil
}

// graphKind names a model's or partition's kind in messages.
func graphKind(hetero bool) string {
	if hetero {
		return "heterogeneous"
	}
	return "homogeneous"
}

// predictSetup rebuilds the heterogeneous side of a checkpointed run: the
// schema and learnable types from the model config, the embedding settings
// from the run info.
func predictSetup(ck *train.Checkpoint, info runInfo, m *partition.Meta) (*heteroSetup, error) {
	schema, err := ck.Model.Hetero.Schema()
	if err != nil {
		return nil, err
	}
	if info.Hetero == nil || len(ck.Sparse) == 0 && slices.Contains(ck.Model.Hetero.Learnable, true) {
		return nil, errors.New("the checkpoint lacks the heterogeneous run's embedding settings or state")
	}
	if !slices.Equal(schema.NodeTypes, m.Hetero.NodeTypes) || !slices.Equal(schema.NodeOrig, m.Hetero.NodeOrig) {
		return nil, fmt.Errorf("the checkpoint's node types %v do not match the partition's %v", schema.NodeTypes, m.Hetero.NodeTypes)
	}
	opts := HeteroOptions{EmbedDim: info.Hetero.EmbedDim, SparseOpt: info.Hetero.SparseOpt, SparseLR: info.Hetero.SparseLR, Push: PushAlltoallv}
	s := &heteroSetup{schema: schema, opts: opts, learnable: make([]bool, schema.NumTypes()), featDim: make([]int, schema.NumTypes())}
	copy(s.learnable, ck.Model.Hetero.Learnable)
	for t, name := range schema.NodeTypes {
		s.featDim[t] = m.Hetero.FeatDims[name]
	}
	return s, nil
}

// writePredictions writes (orig, class) pairs sorted by orig to path via a
// temporary file, fsync and rename (osx.WriteFileAtomic).
func writePredictions(path string, pairs []int64) error {
	idx := make([]int, len(pairs)/2)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(pairs[2*a], pairs[2*b]) })
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	w.WriteString("original_node_id,predicted_class\n")
	var line []byte
	for _, i := range idx {
		line = strconv.AppendInt(line[:0], pairs[2*i], 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, pairs[2*i+1], 10)
		line = append(line, '\n')
		w.Write(line)
	}
	w.Flush()
	if err := osx.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("predict: %w", err) // names path once

	}
	return nil
}

// inferenceFanouts resolves the fanouts of predict and embed: the whole
// neighborhood with full, else the given ones, else the run's evaluation
// fanouts when they fit the model, else the whole neighborhood.
func inferenceFanouts(given []int, full bool, evalFanouts []int, layers int) []int {
	switch {
	case full:
		return slices.Repeat([]int{-1}, layers)
	case given != nil:
		return given
	case len(evalFanouts) == layers:
		return evalFanouts
	}
	return slices.Repeat([]int{-1}, layers)
}

// predictSampled classifies this rank's share of the loader's test split
// (every node to predict) on sampled neighbourhoods and returns (original
// id - origBase, class) pairs. A rank-local failure is returned as
// localErr after the rank has taken part in every step's collectives.
func predictSampled(loader *dsample.Loader, model *train.Model, origBase int64, wantRows bool) (pairs []int64, rows []float32, localErr, err error) {
	steps, err := loader.Steps(train.SplitTest, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	var pred []int32
	// b's buffers are reused from step to step: Batch sets every field.
	var b sample.Batch
	for s := 0; s < steps; s++ {
		if err := loader.Batch(train.SplitTest, 0, s, &b); err != nil {
			localErr = fmt.Errorf("predict step %d/%d: %w", s+1, steps, err)
			continue
		}
		if localErr != nil {
			continue
		}
		if len(b.Blocks) == 0 || b.Blocks[len(b.Blocks)-1].NumDst == 0 {
			continue
		}
		if wantRows {
			// The rows' arg-max is the class: Predict's own forward is
			// not run twice.
			out, ferr := model.Forward(&b)
			if ferr != nil {
				localErr = fmt.Errorf("predict step %d/%d: %w", s+1, steps, ferr)
				continue
			}
			rows = append(rows, out...)
			pred = model.Layerwise().Predict(out, pred[:0])
		} else if pred, err = model.Predict(&b, pred[:0]); err != nil {
			localErr = fmt.Errorf("predict step %d/%d: %w", s+1, steps, err)
			continue
		}
		last := &b.Blocks[len(b.Blocks)-1]
		for i, y := range pred {
			pairs = append(pairs, last.Orig[i]-origBase, int64(y))
		}
	}
	return pairs, rows, localErr, nil
}

// predictLayerwise classifies this rank's nodes with new ids in [lo,hi)
// by layer-wise inference and returns (original id - origBase, class)
// pairs. It is collective.
func predictLayerwise(store *dsample.Store, model *train.Model, typed dsample.TypedInputs, lo, hi, origBase int64, wantRows bool) ([]int64, []float32, error) {
	emb, err := inferRows(store, model, typed, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	p := store.Part()
	classes := int64(model.Config().Classes)
	local := emb.Local()[(lo-p.Lo)*classes : (hi-p.Lo)*classes]
	pred := model.Layerwise().Predict(local, nil)
	var rows []float32
	if wantRows {
		rows = slices.Clone(local)
	}
	if err := emb.Free(); err != nil {
		return nil, nil, err
	}
	pairs := make([]int64, 0, 2*len(pred))
	for i, y := range pred {
		pairs = append(pairs, p.Orig[lo-p.Lo+int64(i)]-origBase, int64(y))
	}
	return pairs, rows, nil
}
