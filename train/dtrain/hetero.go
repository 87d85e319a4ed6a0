package dtrain

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mpignn/config"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// Sparse optimizers and embedding push methods of HeteroOptions.
const (
	SparseAdam    = "adam"
	SparseAdagrad = "adagrad"

	PushAlltoallv  = "alltoallv"
	PushAccumulate = "accumulate"
)

// HeteroOptions configure training on a heterogeneous partition (format
// version 2). Their zero value is the default everywhere; on a homogeneous
// partition any non-zero field is refused.
type HeteroOptions struct {
	// Fanout and EvalFanout are per-relation fanout plans
	// (sample.ParseFanoutPlan of "rel=15,10;*=5,5"), resolved against the
	// partition's schema; their Hops are Loader.Fanouts (EvalFanouts). The
	// zero plan gives Loader.Fanouts (EvalFanouts) to every relation.
	Fanout, EvalFanout sample.FanoutPlan
	// EmbedDim is the width of the learnable embeddings of node types
	// without features (0 = Model.Hidden).
	EmbedDim int
	// EmbedTypes names the node types that get learnable embeddings:
	// "" the types without features; "all" every type; else a
	// comma-separated list (which must include the featureless types). A
	// type with features and an embedding reads both, side by side (the
	// embedding acts as a learnable node id, as PyG's MovieLens example
	// adds nn.Embedding to the movie features).
	EmbedTypes string
	// SparseOpt is the embeddings' optimizer, SparseAdam ("" too) or
	// SparseAdagrad, with learning rate SparseLR (0 = 0.01).
	SparseOpt string
	SparseLR  float64
	// Push sends a step's embedding gradients to their owners:
	// PushAlltoallv ("" too; deterministic, so resume is bit-identical) or
	// PushAccumulate (one-sided MPI_Accumulate, rma transport only).
	Push string
	// Bases is R-GCN's number of basis matrices (0 = none).
	Bases int
}

// isZero reports whether every option is its default (the plans have no
// relation lists), as a homogeneous partition needs.
func (h HeteroOptions) isZero() bool {
	return h.Fanout.Hops == nil && h.EvalFanout.Hops == nil && !h.Fanout.PerRelation() && !h.EvalFanout.PerRelation() &&
		h.EmbedDim == 0 && h.EmbedTypes == "" && h.SparseOpt == "" && h.SparseLR == 0 && h.Push == "" && h.Bases == 0
}

// Validate reports heterogeneous options no run can use, naming the
// field (as Hetero.*, the path in TrainConfig): a value out of range, a
// fanout plan that is not zero and not valid. TrainConfig.Validate calls
// it, and checks what depends on its other fields (validateWith).
func (h HeteroOptions) Validate() error {
	if _, err := h.resolved(1); err != nil { // EmbedDim 0 is Model.Hidden's: validateWith
		return err
	}
	for _, p := range h.plans() {
		if p.plan.Hops == nil && p.plan.Rels == nil {
			continue
		}
		if err := p.plan.Validate(); err != nil {
			return config.Errorf("%s: %s", config.Name(p.field), err)
		}
	}
	return nil
}

// validateWith checks the options against the rest of the run's: the
// embedding width Model.Hidden gives, and each non-zero fanout plan's Hops
// against the loader's fanouts, which count the layers.
func (h HeteroOptions) validateWith(hidden int, lo *dsample.LoaderOptions) error {
	if _, err := h.resolved(hidden); err != nil {
		return err
	}
	eval := lo.EvalFanouts
	if eval == nil {
		eval = lo.Fanouts
	}
	for i, p := range h.plans() {
		hops := [2][]int{lo.Fanouts, eval}[i]
		if (p.plan.Hops != nil || p.plan.Rels != nil) && !slices.Equal(p.plan.Hops, hops) {
			return config.Errorf("%s: per hop %v, but the loader's fanouts are %v", config.Name(p.field), p.plan.Hops, hops)
		}
	}
	return nil
}

// plans are the two fanout plans with their fields.
func (h HeteroOptions) plans() [2]struct {
	field string
	plan  sample.FanoutPlan
} {
	return [2]struct {
		field string
		plan  sample.FanoutPlan
	}{{"Hetero.Fanout", h.Fanout}, {"Hetero.EvalFanout", h.EvalFanout}}
}

// defaultSparseLR is the embeddings' learning rate when none is given.
const defaultSparseLR = 0.01

func (h HeteroOptions) resolved(hidden int) (HeteroOptions, error) {
	if h.EmbedDim == 0 {
		h.EmbedDim = hidden
	}
	if h.SparseOpt == "" {
		h.SparseOpt = SparseAdam
	}
	if h.SparseLR == 0 {
		h.SparseLR = defaultSparseLR
	}
	if h.Push == "" {
		h.Push = PushAlltoallv
	}
	switch {
	case h.EmbedDim < 1:
		return h, config.Errorf("{Hetero.EmbedDim} %d must be positive", h.EmbedDim)
	case h.SparseOpt != SparseAdam && h.SparseOpt != SparseAdagrad:
		return h, config.Errorf("{Hetero.SparseOpt} %q: want %s or %s", h.SparseOpt, SparseAdam, SparseAdagrad)
	case !(h.SparseLR > 0):
		return h, config.Errorf("{Hetero.SparseLR} %v must be positive", h.SparseLR)
	case h.Push != PushAlltoallv && h.Push != PushAccumulate:
		return h, config.Errorf("{Hetero.Push} %q: want %s or %s", h.Push, PushAlltoallv, PushAccumulate)
	case h.Bases < 0:
		return h, config.Errorf("{Hetero.Bases} %d must not be negative", h.Bases)
	}
	return h, nil
}

// heteroSetup is what a heterogeneous partition changes in a run: the
// schema, the per-relation fanouts and the typed model configuration.
type heteroSetup struct {
	schema    *graph.Schema
	opts      HeteroOptions
	learnable []bool // per node type: has a learnable embedding
	// featDim per node type: the width of its features (0 for none); a
	// learnable type's input row is its features followed by EmbedDim
	// embedding columns.
	featDim []int
}

// setupHetero resolves the model and loader options of a run on the
// heterogeneous partition meta: the architecture (HeteroSAGE unless
// another is asked for), per-type input widths (features, or embeddings for
// featureless types), and the relation fanouts. labelled is the task's
// (task.labelled): the partition must then have a labelled node type. It
// is local: every rank computes the same from the same flags and META.
func setupHetero(meta *partition.Meta, ho HeteroOptions, mcfg *train.Config, lo *dsample.LoaderOptions, labelled bool) (*heteroSetup, error) {
	h := meta.Hetero
	if h == nil {
		if slices.Contains(train.HeteroArchs(), mcfg.Arch) {
			return nil, config.Errorf("{Model.Arch} %s needs a heterogeneous partition (format version 2); this one is homogeneous", mcfg.Arch)
		}
		if !ho.isZero() {
			return nil, config.Errorf("{Hetero.EmbedDim}, {Hetero.SparseOpt}, {Hetero.SparseLR}, {Hetero.Push}, {Hetero.Bases} and per-relation fanouts apply to heterogeneous partitions only")
		}
		return nil, nil
	}
	// A homogeneous architecture runs too (HGB style: typed input
	// projections, then its layers over the typed blocks ignoring the
	// types; train.Config.Hetero), on the same per-relation fanouts.
	if mcfg.Arch == "" {
		mcfg.Arch = train.ArchHSAGE
	}
	if ho.Bases > 0 && mcfg.Arch != train.ArchRGCN {
		return nil, config.Errorf("{Hetero.Bases} applies to {Model.Arch} %s only", train.ArchRGCN)
	}
	if labelled && (h.LabelType == "" || meta.NumClasses == 0) {
		return nil, errors.New("the heterogeneous partition has no labelled node type to classify")
	}
	schema, err := h.Schema()
	if err != nil {
		return nil, err
	}
	if ho, err = ho.resolved(mcfg.Hidden); err != nil {
		return nil, err
	}
	s := &heteroSetup{schema: schema, opts: ho, learnable: make([]bool, schema.NumTypes()), featDim: make([]int, schema.NumTypes())}
	chosen, err := embedTypes(ho.EmbedTypes, schema, h.FeatDims)
	if err != nil {
		return nil, err
	}
	inDims := make([]int, schema.NumTypes())
	for t, name := range schema.NodeTypes {
		s.featDim[t] = h.FeatDims[name]
		s.learnable[t] = chosen[t]
		inDims[t] = s.featDim[t]
		if chosen[t] {
			inDims[t] += ho.EmbedDim
		}
	}
	mcfg.InDim, mcfg.Classes, mcfg.Layers = 0, meta.NumClasses, len(lo.Fanouts)
	mcfg.Hetero = train.NewHeteroConfig(schema, inDims, ho.Bases, s.learnable)
	if ho.Fanout.PerRelation() {
		if lo.RelFanouts, err = ho.Fanout.Resolve(schema); err != nil {
			return nil, fmt.Errorf("%w: %w", config.Errorf("{Hetero.Fanout}"), err)
		}
	}
	if ho.EvalFanout.PerRelation() {
		if lo.EvalRelFanouts, err = ho.EvalFanout.Resolve(schema); err != nil {
			return nil, fmt.Errorf("%w: %w", config.Errorf("{Hetero.EvalFanout}"), err)
		}
	}
	return s, nil
}

// embedTypes resolves --embed-types to one flag per node type.
func embedTypes(spec string, schema *graph.Schema, featDims map[string]int) ([]bool, error) {
	out := make([]bool, schema.NumTypes())
	for t, name := range schema.NodeTypes {
		out[t] = featDims[name] == 0 || spec == "all"
	}
	if spec == "" || spec == "all" {
		return out, nil
	}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		t := schema.TypeIndex(name)
		if t < 0 {
			return nil, config.Errorf("{Hetero.EmbedTypes}: no node type %q (types: %s)", name, strings.Join(schema.NodeTypes, ", "))
		}
		out[t] = true
	}
	return out, nil
}

// rowNormalizeTyped scales every feature row of every node type to unit L1
// norm, as RowNormalize does for a homogeneous partition.
func rowNormalizeTyped(p *partition.Part) {
	for name, x := range p.TypeFeat {
		RowNormalize(x, p.Meta.Hetero.FeatDims[name])
	}
}

// typedInputs reads the input rows of one node type for the loader:
// features from the store, embeddings from the type's table.
func (s *heteroSetup) typedInputs(st *dsample.Store, emb []*embeddings) dsample.TypedInputs {
	var feat, rows []float32 // scratch of types with features and an embedding
	return func(t int, nodes []int64, dst []float32, g *dsample.GatherStats) ([]float32, error) {
		key := dsample.FeatureKey{NodeType: s.schema.NodeTypes[t], Name: dsample.FeatName}
		if t >= len(emb) || emb[t] == nil {
			return st.Features().Gather(key, nodes, dst, g)
		}
		fd := s.featDim[t]
		if fd == 0 {
			return emb[t].fetch(nodes, dst, g)
		}
		// Features, then the embedding, in one input row per node. Both
		// reads happen even if the first fails: they are collective.
		var err1, err2 error
		feat, err1 = st.Features().Gather(key, nodes, feat[:0], g)
		rows, err2 = emb[t].fetch(nodes, rows[:0], g)
		if err := errors.Join(err1, err2); err != nil {
			return dst, err
		}
		return interleaveRows(dst, feat, fd, rows, s.opts.EmbedDim, len(nodes)), nil
	}
}

// interleaveRows appends n rows of a (width wa) followed by b (width wb) to
// dst.
func interleaveRows(dst, a []float32, wa int, b []float32, wb, n int) []float32 {
	for i := range n {
		dst = append(dst, a[i*wa:(i+1)*wa]...)
		dst = append(dst, b[i*wb:(i+1)*wb]...)
	}
	return dst
}

// heteroRunInfo is the part of the checkpointed run info that a
// heterogeneous run adds (absent from homogeneous runs' JSON).
type heteroRunInfo struct {
	RelFanouts     [][]int `json:"rel_fanouts,omitempty"`
	EvalRelFanouts [][]int `json:"eval_rel_fanouts,omitempty"`
	EmbedDim       int     `json:"embed_dim"`
	EmbedTypes     []bool  `json:"embed_types,omitempty"`
	SparseOpt      string  `json:"sparse_opt"`
	SparseLR       float64 `json:"sparse_lr"`
	Push           string  `json:"push"`
}

func (s *heteroSetup) runInfo(lo dsample.LoaderOptions) *heteroRunInfo {
	return &heteroRunInfo{
		RelFanouts: lo.RelFanouts, EvalRelFanouts: lo.EvalRelFanouts,
		EmbedDim: s.opts.EmbedDim, EmbedTypes: s.learnable, SparseOpt: s.opts.SparseOpt, SparseLR: s.opts.SparseLR, Push: s.opts.Push,
	}
}
