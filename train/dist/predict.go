package dist

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"mpignn/config"
	"mpignn/internal/testhold"
	"mpignn/partition"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// PredictConfig configures Predict. Every rank passes the same values.
type PredictConfig struct {
	PartDir       string
	CheckpointDir string
	Out           string // CSV written by rank 0: original_node_id,predicted_class
	// Fanouts for inference; nil = the checkpoint's evaluation fanouts.
	// Full overrides them with the whole neighborhood.
	Fanouts []int
	Full    bool
	// Eval is the inference mode: EvalLayerwise (exact), EvalSampled (the
	// fanouts above), or "" for layer-wise unless Fanouts or Full are set.
	Eval  string
	Batch int // per-rank nodes per step
	// Final uses the final weights instead of the best-validation ones.
	Final bool
	// Store: Transport and CacheMB. ReleasePart is set by Predict.
	Store dsample.StoreOptions
	// Logits writes every scored node's raw class logits to Out as a .npy
	// (float32, nodes x classes, row i = original id i, of the labelled
	// type in a heterogeneous graph) instead of classes; layer-wise only.
	Logits bool
	// GCNNorm overrides a GCN checkpoint's first-layer normalisation
	// (train.Config.GCNNorm; "sym" evaluates GCNConv's, layer-wise only).
	GCNNorm string
	// Note, if set, gets rank 0's notes on which weights are used.
	Note io.Writer
}

// Predict classifies every node of the partitioned graph with a
// checkpoint's weights and writes original_node_id,predicted_class lines,
// sorted by node id, to cfg.Out (rank 0, atomically). Every rank scores the
// nodes it owns; the results are gathered with Allgatherv. It returns the
// number of nodes written. It is collective.
func Predict(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	if err := cfg.Validate(); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	ck, err := LoadCheckpoint(c, cfg.CheckpointDir)
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	if err := overrideGCNNorm(ck, cfg.GCNNorm, cfg.Eval, cfg.Fanouts, cfg.Full); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	var info runInfo
	if len(ck.RunInfo) > 0 {
		if err := json.Unmarshal(ck.RunInfo, &info); err != nil {
			return 0, fmt.Errorf("predict: checkpoint run info: %w", err)
		}
	}
	if info.Task == TaskLink {
		return 0, config.Errorf("predict: checkpoint %s holds a link-prediction model (train {Task} link), which does not classify nodes: score node pairs with predict {Task} link {Pairs} FILE, or write node embeddings with embed", cfg.CheckpointDir)
	}
	fan := inferenceFanouts(cfg.Fanouts, cfg.Full, info.EvalFanouts, ck.Model.Layers)
	if len(fan) != ck.Model.Layers {
		return 0, fmt.Errorf("predict: %d fanouts for a %d-layer model", len(fan), ck.Model.Layers)
	}
	mode, err := inferenceMode(cfg.Eval, cfg.Fanouts, cfg.Full)
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	if cfg.Logits && mode != EvalLayerwise {
		return 0, config.Errorf("predict: {Logits} needs layer-wise inference (the exact full-neighbourhood logits): drop {Fanouts}, {Full} and {Eval} sampled")
	}
	part, err := openPart(c, cfg.PartDir)
	if err != nil {
		return 0, err
	}
	m := part.Meta
	if (m.Hetero == nil) != (ck.Model.Hetero == nil) {
		return 0, fmt.Errorf("predict: the checkpoint holds a %s model but partition %s is %s", graphKind(ck.Model.Hetero != nil), cfg.PartDir, graphKind(m.Hetero != nil))
	}
	if m.FeatDim != ck.Model.InDim || m.NumClasses != ck.Model.Classes {
		return 0, fmt.Errorf("predict: partition %s has %d features and %d classes, the checkpoint's model %d and %d",
			cfg.PartDir, m.FeatDim, m.NumClasses, ck.Model.InDim, ck.Model.Classes)
	}
	if cfg.Batch > math.MaxInt32/c.Size() {
		return 0, config.Errorf("predict: {Batch} %d x %d ranks is more than %d nodes per step", cfg.Batch, c.Size(), math.MaxInt32)
	}
	if mode == EvalSampled {
		if err := checkFits(c, ck.Model.EstimateInference(fan, cfg.Batch, m.NumNodes), "lower {Batch} or {Fanouts}"); err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
	}
	if info.RowNorm {
		rowNormalizePart(part)
		rowNormalizeTyped(part)
	}
	// Score every owned node (of a heterogeneous graph: of the labelled
	// type): present them to the loader as the "test" share of the default
	// split (the loader batches evaluation splits in fixed order over all
	// ranks).
	lo, hi, total := part.Lo, part.Hi, m.NumNodes
	var het *heteroSetup
	var origBase int64
	if m.Hetero != nil {
		if het, err = predictSetup(ck, info, m); err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
		t := het.schema.TypeIndex(m.Hetero.LabelType)
		lo, hi, total = part.TypeLo[t], part.TypeLo[t+1], het.schema.Count(t)
		// The file names nodes by their ids within the labelled type, as
		// the dataset's files do.
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
	lopt := dsample.LoaderOptions{Fanouts: fan, EvalFanouts: fan, Batch: cfg.Batch, Seed: ck.Seed, Split: split}
	if het != nil && cfg.Fanouts == nil && !cfg.Full && info.Hetero != nil {
		lopt.RelFanouts, lopt.EvalRelFanouts = info.Hetero.EvalRelFanouts, info.Hetero.EvalRelFanouts
	}
	store, loader, err := openLoader(c, part, cfg.Store, lopt)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	var typed dsample.TypedInputs
	if het != nil {
		// The checkpoint holds the embeddings of its last epoch only, so
		// predictions use the final weights with them, not the best ones.
		sparse, err := het.openEmbeddings(c, store, ck.Seed)
		if err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
		defer sparse.close()
		if sparse != nil {
			if err := sparse.Import(ck.Sparse); err != nil {
				return 0, fmt.Errorf("predict: checkpoint embeddings: %w", err)
			}
		}
		typed = het.typedInputs(store, sparse.embOf())
		loader.SetTypedInputs(typed)
	}
	model, err := train.NewModel(ck.Model, ck.Seed)
	if err != nil {
		return 0, err
	}
	params := ck.BestParams
	// The checkpoint keeps the learnable embeddings of its last epoch
	// only, so a model with them predicts with the final weights.
	learnable := het != nil && slices.Contains(het.learnable, true)
	if learnable && !cfg.Final && cfg.Note != nil && c.Rank() == 0 {
		config.Fprintf(cfg.Note, "predict: the checkpoint keeps the learnable embeddings of its last epoch only, so the final weights are used with them (as {Final})\n")
	}
	if cfg.Final || params == nil || learnable {
		params = ck.Params
	}
	if err := model.SetParams(params); err != nil {
		return 0, err
	}
	// pairs holds (original id, class) of this rank's nodes.
	var pairs []int64
	var rows []float32 // with Logits: this rank's logits, in pairs order
	var localErr error
	if mode == EvalLayerwise {
		if pairs, rows, err = predictLayerwise(store, model, typed, lo, hi, origBase, cfg.Logits); err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
	} else if pairs, localErr, err = predictSampled(loader, model, het != nil, origBase); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	// Tests stop a rank here, between its share of the inference and the
	// exchange of the results, to stall the job at a known point.
	testhold.At("predict-infer")
	if err := Agree(c, localErr); err != nil {
		return 0, err
	}
	got, _, err := collectives.Allgatherv(c, pairs)
	if err != nil {
		return 0, fmt.Errorf("predict: gather: %w", err)
	}
	var logits []float32
	if cfg.Logits {
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
		case cfg.Logits:
			werr = writeLogits(cfg.Out, got, logits, ck.Model.Classes)
		default:
			werr = writePredictions(cfg.Out, got)
		}
	}
	if err := Agree(c, werr); err != nil {
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
	if err := train.WriteFileAtomic(path, buf.Bytes()); err != nil {
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
// temporary file, fsync and rename (train.WriteFileAtomic).
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
	if err := train.WriteFileAtomic(path, buf.Bytes()); err != nil {
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
func predictSampled(loader *dsample.Loader, model *train.Model, typed bool, origBase int64) (pairs []int64, localErr, err error) {
	steps, err := loader.Steps(train.SplitTest, 0)
	if err != nil {
		return nil, nil, err
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
		if typed {
			pred, err = model.PredictHetero(b.Blocks, b.XT, pred[:0])
		} else if b.XS != nil {
			pred, err = model.PredictSparse(b.Blocks, b.XS, pred[:0])
		} else {
			pred, err = model.Predict(b.Blocks, b.X, pred[:0])
		}
		if err != nil {
			localErr = fmt.Errorf("predict step %d/%d: %w", s+1, steps, err)
			continue
		}
		last := &b.Blocks[len(b.Blocks)-1]
		for i, y := range pred {
			pairs = append(pairs, last.Orig[i]-origBase, int64(y))
		}
	}
	return pairs, localErr, nil
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
	pred := model.PredictRows(local, nil)
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
