package dtrain

import (
	"encoding/json"
	"fmt"
	"math"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// inferSpec is what predict, embed and link predict share of their
// configuration (an EmbedConfig, which PredictConfig embeds), plus what
// sets node classification apart.
type inferSpec struct {
	what string // the command, which prefixes messages
	// cfg is the checkpoint, the partition and how to infer (its Out and
	// Pairs are the caller's).
	cfg EmbedConfig
	// classify is predict's node classification: a link checkpoint is
	// refused, the partition's classes must be the model's, and a
	// heterogeneous model may also be inferred on sampled neighbourhoods
	// (the node loader reads typed inputs; the sampled embedding of a link
	// model reads features only).
	classify bool
	// targets is the kind of real targets predict's model must have
	// (train.Config.Targets; "" for classes).
	targets string
	// logits (predict --logits) needs layer-wise inference.
	logits bool
	// edge is predict --task edge: a checkpoint of another task is
	// refused before the partition is opened.
	edge bool
	// open, if set, opens the store over the partition (its error is
	// returned as is): predict opens its loader over the same store there.
	// Nil opens the store alone.
	// It sees inf with everything but the store, embeddings and model set.
	open func(inf *inference) (*dsample.Store, error)
}

// inference is a checkpoint's model with its chosen weights, over the
// opened partition and store: what predict, embed and link predict run.
type inference struct {
	ck    *train.Checkpoint
	info  runInfo
	fan   []int  // the sampled mode's fanouts
	mode  string // EvalLayerwise or EvalSampled
	part  *partition.Part
	het   *heteroSetup // nil for a homogeneous graph
	store *dsample.Store
	typed dsample.TypedInputs // a heterogeneous model's input rows
	model *train.Model
	// sparse holds a heterogeneous model's learnable input embeddings
	// (nil without them).
	sparse *sparseInputs
	// validAdj is the train+valid adjacency of a run trained with
	// --use-valid-edges (nil otherwise): embeddings are inferred over it.
	validAdj *[3][]int64
	emb      *dsample.Embeddings // the rows of every node (embed, link predict)
}

func (inf *inference) close() {
	if inf.emb != nil {
		inf.emb.Free()
	}
	if inf.sparse != nil {
		inf.sparse.close()
	}
	if inf.store != nil {
		inf.store.Close()
	}
}

// taskOf names the node task of a model's targets kind.
func taskOf(targets string) string {
	if targets == "" {
		return TaskNode
	}
	return targets
}

// openInference loads the checkpoint and the partition, checks that they
// fit, opens the store and builds the model with the weights to use (and
// a heterogeneous model's learnable embeddings). It is collective.
func openInference(c *collectives.Comm, s inferSpec) (*inference, error) {
	what := s.what
	ck, err := LoadCheckpoint(c, s.cfg.CheckpointDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := overrideGCNNorm(ck, s.cfg.GCNNorm, s.cfg.Eval, s.cfg.Fanouts, s.cfg.Full); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	inf := &inference{ck: ck}
	if len(ck.RunInfo) > 0 {
		if err := json.Unmarshal(ck.RunInfo, &inf.info); err != nil {
			return nil, fmt.Errorf("%s: checkpoint run info: %w", what, err)
		}
	}
	info := inf.info
	if s.edge && !ck.Model.IsEdge() {
		task := taskOf(ck.Model.Targets)
		if ck.Model.IsLink() {
			task = TaskLink
		}
		return nil, config.Errorf("%s {Task} edge: checkpoint %s holds a %s model, not an edge model: predict with {Task} %s", what, s.cfg.CheckpointDir, task, task)
	}
	if s.classify && info.Task == TaskEdge {
		return nil, config.Errorf("%s: checkpoint %s holds an edge model (train {Task} edge), which does not classify nodes: predict with {Task} edge", what, s.cfg.CheckpointDir)
	}
	if s.classify && info.Task == TaskLink {
		return nil, config.Errorf("%s: checkpoint %s holds a link-prediction model (train {Task} link), which does not classify nodes: score node pairs with predict {Task} link {Pairs} FILE, or write node embeddings with embed", what, s.cfg.CheckpointDir)
	}
	if s.classify && ck.Model.Targets != s.targets {
		return nil, config.Errorf("%s: checkpoint %s holds a model of %s, not of %s: predict with {Task} %s", what, s.cfg.CheckpointDir, taskOf(ck.Model.Targets), taskOf(s.targets), taskOf(ck.Model.Targets))
	}
	inf.fan = inferenceFanouts(s.cfg.Fanouts, s.cfg.Full, info.EvalFanouts, ck.Model.Layers)
	if len(inf.fan) != ck.Model.Layers {
		return nil, fmt.Errorf("%s: %d fanouts for a %d-layer model", what, len(inf.fan), ck.Model.Layers)
	}
	if inf.mode, err = inferenceMode(s.cfg.Eval, s.cfg.Fanouts, s.cfg.Full); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	mode := inf.mode
	if s.logits && mode != EvalLayerwise {
		return nil, config.Errorf("%s: {Logits} needs layer-wise inference (the exact full-neighbourhood logits): drop {Fanouts}, {Full} and {Eval} sampled", what)
	}
	if s.cfg.Batch > math.MaxInt32/c.Size() {
		return nil, config.Errorf("%s: {Batch} %d x %d ranks is more than %d nodes per step", what, s.cfg.Batch, c.Size(), math.MaxInt32)
	}
	part, err := openPart(c, s.cfg.PartDir)
	if err != nil {
		return nil, err
	}
	inf.part = part
	m := part.Meta
	switch {
	case (m.Hetero == nil) != (ck.Model.Hetero == nil):
		return nil, fmt.Errorf("%s: the checkpoint holds a %s model but partition %s is %s", what, graphKind(ck.Model.Hetero != nil), s.cfg.PartDir, graphKind(m.Hetero != nil))
	case s.classify && s.targets != "" && (m.FeatDim != ck.Model.InDim || m.TargetDim != ck.Model.Classes):
		return nil, fmt.Errorf("%s: partition %s has %d features and %d targets per node, the checkpoint's model %d and %d",
			what, s.cfg.PartDir, m.FeatDim, m.TargetDim, ck.Model.InDim, ck.Model.Classes)
	case s.classify && s.targets == "" && (m.FeatDim != ck.Model.InDim || m.NumClasses != ck.Model.Classes):
		return nil, fmt.Errorf("%s: partition %s has %d features and %d classes, the checkpoint's model %d and %d",
			what, s.cfg.PartDir, m.FeatDim, m.NumClasses, ck.Model.InDim, ck.Model.Classes)
	case m.Hetero != nil && mode != EvalLayerwise && !s.classify:
		return nil, config.Errorf("%s: a heterogeneous model is inferred layer-wise here: drop {Fanouts}, {Full} and {Eval} sampled", what)
	case m.Hetero != nil:
		if inf.het, err = predictSetup(ck, info, m); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	case m.FeatDim != ck.Model.InDim:
		return nil, fmt.Errorf("%s: partition %s has %d features, the checkpoint's model %d", what, s.cfg.PartDir, m.FeatDim, ck.Model.InDim)
	}
	if ck.Model.EdgeDim > 0 && m.EdgeFeatDim != ck.Model.EdgeDim {
		return nil, config.Errorf("%s: the checkpoint's model reads %d edge features per edge ({UseEdgeFeat}) but partition %s has %d: use the partition it was trained on, written with them ({EdgeFeat})", what, ck.Model.EdgeDim, s.cfg.PartDir, m.EdgeFeatDim)
	}
	if mode == EvalSampled {
		if err := checkFits(c, ck.Model.EstimateInference(inf.fan, s.cfg.Batch, m.NumNodes), "lower {Batch} or {Fanouts}"); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	if info.RowNorm {
		rowNormalizePart(part)
		rowNormalizeTyped(part)
	}
	if err := inf.readValidEdges(c, s); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			inf.close()
		}
	}()
	if s.open != nil {
		if inf.store, err = s.open(inf); err != nil {
			return nil, err
		}
	} else {
		so := s.cfg.Store
		so.ReleasePart = true
		// The edge features are fetched into the blocks (sampled or
		// layer-wise) only for a model that reads them.
		so.NoEdgeFeat = ck.Model.EdgeDim == 0
		if inf.store, err = dsample.OpenStore(c, part, so); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	params := ck.BestParams
	if het := inf.het; het != nil {
		if inf.sparse, err = het.openEmbeddings(c, inf.store, ck.Seed); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if inf.sparse != nil {
			if err := inf.sparse.Import(ck.Sparse); err != nil {
				return nil, fmt.Errorf("%s: checkpoint embeddings: %w", what, err)
			}
			// The checkpoint keeps the learnable embeddings of its last
			// epoch only: the weights that go with them are the final ones.
			params = nil
			if !s.cfg.Final && s.cfg.Note != nil && c.Rank() == 0 {
				config.Fprintf(s.cfg.Note, "%s: the checkpoint keeps the learnable embeddings of its last epoch only, so the final weights are used with them (as {Final})\n", what)
			}
		}
		inf.typed = het.typedInputs(inf.store, inf.sparse.embOf())
	}
	if inf.model, err = train.NewModel(ck.Model, ck.Seed); err != nil {
		return nil, err
	}
	if s.cfg.Final || params == nil {
		params = ck.Params
	}
	if err := inf.model.SetParams(params); err != nil {
		return nil, err
	}
	ok = true
	return inf, nil
}

// readValidEdges keeps the train+valid adjacency of a run trained with
// --use-valid-edges, whose test figures came from embeddings over that
// graph: inference runs on it too, so that scoring its test pairs gives
// back its figures. It is collective.
func (inf *inference) readValidEdges(c *collectives.Comm, s inferSpec) error {
	if inf.info.Link == nil || !inf.info.Link.UseValidEdges {
		return nil
	}
	var adj [3][]int64
	var verr error
	if inf.mode != EvalLayerwise {
		verr = config.Errorf("%s: checkpoint %s was trained with {Link.UseValidEdges}, whose test embeddings are inferred layer-wise over train+valid edges: drop {Fanouts}/{Full}/{Eval} sampled", s.what, s.cfg.CheckpointDir)
	} else if adj[0], adj[1], adj[2], verr = inf.part.MergedValidAdjacency(); verr != nil {
		verr = fmt.Errorf("%s: rank %d: %w", s.what, c.Rank(), verr)
	}
	if err := collectives.Agree(c, verr); err != nil {
		return err
	}
	inf.validAdj = &adj
	if s.cfg.Note != nil && c.Rank() == 0 {
		config.Fprintf(s.cfg.Note, "%s: message passing over the training and valid edges, as the checkpoint's run ({Link.UseValidEdges})\n", s.what)
	}
	return nil
}
