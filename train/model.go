package train

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"mpignn/config"
	"mpignn/internal/half"
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// Config describes a model: its architecture (a registry name, see Archs)
// and the hyperparameters. Every architecture stacks Layers message-passing
// layers of widths InDim -> Hidden -> ... -> Classes with ReLU and dropout
// between them, under a softmax cross-entropy head, or, with a Decoder, a
// pair decoder over the last layer's rows under binary cross-entropy.
type Config struct {
	// Arch is the architecture: "sage" (also what "" means), "gcn" or
	// "gat". Checkpoints store it beside the config JSON, not inside it.
	Arch    string  `json:"-"`
	InDim   int     `json:"in_dim"`  // input feature width
	Hidden  int     `json:"hidden"`  // width of every hidden layer (GAT: all heads together)
	Classes int     `json:"classes"` // number of output logits
	Layers  int     `json:"layers"`  // number of layers (= number of blocks)
	Dropout float32 `json:"dropout"` // drop probability between layers, in [0,1)
	// InputDropout is the drop probability of the input features (DGL's
	// feat_drop on the first layer), in [0,1). It regularises models on
	// small graphs with wide sparse features (Cora, CiteSeer).
	InputDropout float32 `json:"input_dropout,omitempty"`
	// EdgeDim is the width of the edge features the layers read
	// (sample.Block.EdgeFeat; PyG's edge_dim), 0 for a model that reads
	// none. Only architectures with Arch.EdgeFeatures take it. Omitted
	// from JSON when 0, so other configs serialise as before.
	EdgeDim int `json:"edge_dim,omitempty"`
	// Opts are the architecture's own hyper-parameters (Arch.Params:
	// GAT's heads and attn_dropout, ...), written at the JSON object's top
	// level like the fields above (see Opts).
	Opts Opts `json:"-"`
	// Decoder selects the task head: "" is node classification (softmax
	// cross-entropy over Classes logits per seed); DecoderDot and
	// DecoderMLP make a link predictor whose GNN output rows are node
	// embeddings of width Classes, scored per pair (see Decoders). It is
	// omitted from JSON when empty so node configs (and their checkpoints)
	// serialise exactly as before.
	Decoder string `json:"decoder,omitempty"`
	// Targets selects a head for real node targets instead of classes:
	// TargetsMultilabel (Classes binary tasks, binary cross-entropy) or
	// TargetsRegression (Classes values, squared error). Omitted from JSON
	// when empty, so class and link configs serialise as before.
	Targets string `json:"targets,omitempty"`
	// EdgeOut makes the link decoder an edge predictor (the edge task):
	// with DecoderMLP, its last layer outputs EdgeOut values per pair
	// instead of one logit: EdgeOut class logits under softmax
	// cross-entropy (Targets ""), or EdgeOut real values under squared
	// error (Targets TargetsRegression, NaN unlabelled). 0 (omitted from
	// JSON) is link prediction, so link configs serialise as before.
	EdgeOut int `json:"edge_out,omitempty"`
	// Hetero makes a heterogeneous model: the node types, relations and
	// per-type input widths. InDim is then 0 and every node type's input
	// rows go through their own linear projection to Hidden before layer
	// 0. The heterogeneous architectures ("rgcn", "hsage", see
	// HeteroArchs) read the relations; a homogeneous one (any of Archs)
	// then runs its layers over the typed blocks ignoring node and edge
	// types, as the Heterogeneous Graph Benchmark (Lv et al., KDD 2021)
	// runs its GCN and GAT baselines on the homogenized graph. A pointer
	// with omitempty so homogeneous configs (and checkpoints) serialise
	// exactly as before.
	Hetero *HeteroConfig `json:"hetero,omitempty"`
	// Residual, Norm and JK act between the layers of a homogeneous model
	// (between.go, after PyG's BasicGNN): Residual adds each hidden
	// layer's input rows (through a learned projection where the widths
	// differ) to its activated output; Norm "layer" is LayerNorm on every
	// hidden layer's output before the activation; JK ("cat", "max",
	// "last") is jumping knowledge: every layer outputs Hidden rows and a
	// final linear map reads their combination. All are omitted from JSON
	// when unset, so other configs serialise as before.
	Residual bool   `json:"residual,omitempty"`
	Norm     string `json:"norm,omitempty"`
	JK       string `json:"jk,omitempty"`
}

// Link decoders accepted by Config.Decoder.
const (
	// DecoderDot scores a pair by the inner product <h_u, h_v>; it has no
	// parameters.
	DecoderDot = "dot"
	// DecoderMLP scores a pair as OGB's LinkPredictor does:
	// relu((h_u ⊙ h_v)·W1 + b1)·W2 + b2 with W1 C x C and W2 C x 1.
	DecoderMLP = "mlp"
)

// Decoders returns the names of the link decoders.
func Decoders() []string { return []string{DecoderDot, DecoderMLP} }

// IsLink reports whether the config is a link predictor (has a decoder).
func (c Config) IsLink() bool { return c.Decoder != "" }

// IsEdge reports whether the config is an edge predictor (the edge task:
// a decoder with EdgeOut outputs per pair).
func (c Config) IsEdge() bool { return c.EdgeOut > 0 }

// ArchName returns the architecture's registry name ("" reads as "sage").
func (c Config) ArchName() string {
	if c.Arch == "" {
		return ArchSAGE
	}
	return c.Arch
}

// Normalized returns c with Arch spelled out, so that two homogeneous
// configurations of the same model compare equal with == (use Equal when
// either may be heterogeneous: Hetero is a pointer).
func (c Config) Normalized() Config {
	c.Arch = c.ArchName()
	return c
}

// Equal reports whether c and o describe the same model: the same fields
// after Normalized, with Hetero compared by value.
func (c Config) Equal(o Config) bool {
	ch, oh := c.Hetero, o.Hetero
	c.Hetero, o.Hetero = nil, nil
	return c.Normalized() == o.Normalized() && ch.equal(oh)
}

// InputLayer is the layer index under which dropout masks of the input
// features are keyed (hidden layers use 0..Layers-2).
const InputLayer = -1

// Validate reports a configuration the model cannot be built from (of a
// built-in architecture).
func (c Config) Validate() error { return c.validate(builtinArchs()) }

// validate is Validate with the architectures of t.
func (c Config) validate(t archTable) error {
	switch {
	case c.Hetero == nil && c.InDim <= 0:
		return fmt.Errorf("model config: in_dim %d must be positive", c.InDim)
	case c.Hetero != nil && c.InDim != 0:
		return fmt.Errorf("model config: in_dim %d must be 0 for a heterogeneous model (per-type input widths are hetero.in_dims)", c.InDim)
	case c.Hetero != nil && c.Hidden <= 0:
		return fmt.Errorf("model config: hidden %d must be positive for a heterogeneous model (the width of the typed input projections)", c.Hidden)
	case c.Classes <= 0:
		return fmt.Errorf("model config: classes %d must be positive", c.Classes)
	case c.Layers <= 0:
		return fmt.Errorf("model config: layers %d must be positive", c.Layers)
	case c.Layers > 1 && c.Hidden <= 0:
		return fmt.Errorf("model config: hidden %d must be positive for %d layers", c.Hidden, c.Layers)
	}
	switch c.Targets {
	case "", TargetsMultilabel, TargetsRegression:
	default:
		return fmt.Errorf("model config: targets %q: want %s or %s", c.Targets, TargetsMultilabel, TargetsRegression)
	}
	switch {
	case c.EdgeOut < 0:
		return fmt.Errorf("model config: edge_out %d must not be negative", c.EdgeOut)
	case c.EdgeOut > 0 && c.Decoder != DecoderMLP:
		return fmt.Errorf("model config: edge_out %d needs decoder %s (got %q)", c.EdgeOut, DecoderMLP, c.Decoder)
	case c.EdgeOut > 0 && c.Targets != "" && c.Targets != TargetsRegression:
		return fmt.Errorf("model config: edge_out %d with targets %q: an edge predictor has classes or %s", c.EdgeOut, c.Targets, TargetsRegression)
	case c.EdgeOut == 0 && c.Targets != "" && c.Decoder != "":
		return fmt.Errorf("model config: targets %q and decoder %q: a model has one head", c.Targets, c.Decoder)
	}
	if err := c.validateSettings(t); err != nil {
		return fmt.Errorf("model config: %w", err)
	}
	a, err := t.lookup(c.Arch)
	if err != nil {
		return fmt.Errorf("model config: %w", err)
	}
	switch {
	case a.Hetero && c.Hetero == nil:
		return fmt.Errorf("model config: %s is a heterogeneous model and needs a hetero section (node types, relations, input widths)", a.Name)
	case !a.Hetero && c.Hetero != nil && c.Hetero.Bases != 0:
		// A homogeneous architecture on a heterogeneous graph (HGB
		// style, see Hetero) has no relation weights to decompose.
		return fmt.Errorf("model config: hetero.bases %d applies to rgcn only, not %s", c.Hetero.Bases, a.Name)
	case !a.Hetero && c.Hetero != nil && c.EdgeDim > 0:
		// The hetero sampler's blocks carry no edge features.
		return fmt.Errorf("model config: edge_dim %d: %s on a heterogeneous graph reads no edge features", c.EdgeDim, a.Name)
	}
	if c.Hetero != nil {
		if err := c.Hetero.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// ValidateSettings checks the settings a user chooses (Arch, Hidden,
// the dropouts, the architecture's Opts, Decoder), naming
// the field at fault (config.FieldError), before the partition gives
// InDim, Classes and Hetero: Validate checks them again with the rest.
// Layers, when set, is the layer count (GAT's hidden layers concatenate
// their heads); the hidden width of a heterogeneous model is checked by
// Validate. It knows the built-in architectures.
func (c Config) ValidateSettings() error { return c.validateSettings(builtinArchs()) }

// validateSettings is ValidateSettings with the architectures of t.
func (c Config) validateSettings(t archTable) error {
	a, err := t.lookup(c.Arch)
	if err != nil {
		return config.Errorf("{Arch} %q: want one of %s", c.Arch, strings.Join(append(t.names(false), t.names(true)...), ", "))
	}
	switch {
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return config.Errorf("{Dropout} %v must be in [0,1)", c.Dropout)
	case !(c.InputDropout >= 0 && c.InputDropout < 1):
		return config.Errorf("{InputDropout} %v must be in [0,1)", c.InputDropout)
	case c.Decoder != "" && c.Decoder != DecoderDot && c.Decoder != DecoderMLP:
		return config.Errorf("{Decoder} %q: want %s", c.Decoder, strings.Join(Decoders(), " or "))
	}
	if err := c.validateOpts(t, a); err != nil {
		return err
	}
	if err := c.validateBetween(a); err != nil {
		return err
	}
	switch {
	case c.EdgeDim < 0:
		return config.Errorf("{EdgeDim} %d must not be negative", c.EdgeDim)
	case c.EdgeDim > 0 && !a.EdgeFeatures:
		return config.Errorf("{EdgeDim} %d: %s reads no edge features (%s do)", c.EdgeDim, a.Name, strings.Join(t.edgeArchs(), ", "))
	}
	if a.Validate == nil {
		return nil
	}
	return a.Validate(c)
}

// LayerDims returns the input and output width of layer l. Layer 0 of a
// heterogeneous model reads the Hidden-wide typed input projections.
func (c Config) LayerDims(l int) (in, out int) {
	in, out = c.Hidden, c.Hidden
	if l == 0 && c.Hetero == nil {
		in = c.InDim
	}
	if c.convToOut(l) {
		out = c.Classes
	}
	return in, out
}

// Tensor locates one parameter tensor inside the flat parameter (and
// gradient) buffer: elements [Offset, Offset+Rows*Cols), row-major.
type Tensor struct {
	Name   string // "l0.w_self", "l0.w_neigh", "l0.b", ...: layer prefix + ParamSpec.Name
	Layer  int
	Rows   int
	Cols   int
	Offset int
	Zero   bool    // initialised to a constant: zero (biases) or Init
	Init   float32 // the constant of a Zero tensor (GIN's ε; 0 otherwise)
}

// Size returns the number of elements of the tensor.
func (t Tensor) Size() int { return t.Rows * t.Cols }

// IsBias reports whether the tensor is a bias (of a layer or the decoder).
func (t Tensor) IsBias() bool {
	return strings.HasSuffix(t.Name, ".b") || strings.HasPrefix(t.Name, decoderPrefix+"b")
}

// Tensors returns the layout of the flat parameter buffer: the tensors of
// layer 0 in its Specs order, then layer 1, and so on, then those of the
// link decoder if any ("dec.w1", ..., with Layer = Layers). For GraphSAGE a
// layer of widths in -> out holds W_self (in x out), W_neigh (in x out) and
// the bias (1 x out). The decoder comes last so that a node config's layout,
// and hence InitParams, is the same as before decoders existed. It returns
// nil for an invalid configuration.
func (c Config) Tensors() []Tensor { return c.tensors(builtinArchs()) }

// tensors is Tensors with the architectures of t.
func (c Config) tensors(t archTable) []Tensor {
	if c.validate(t) != nil {
		return nil
	}
	a, _ := t.lookup(c.Arch)
	var ts []Tensor
	off := 0
	for l := 0; l < c.Layers; l++ {
		for _, s := range newLayer[float32](a, c, l).Specs() {
			t := Tensor{Name: fmt.Sprintf("l%d.%s", l, s.Name), Layer: l, Rows: s.Rows, Cols: s.Cols, Offset: off, Zero: s.Zero, Init: s.Init}
			off += t.Size()
			ts = append(ts, t)
		}
	}
	for _, s := range decoderSpecs(c) {
		t := Tensor{Name: decoderPrefix + s.Name, Layer: c.Layers, Rows: s.Rows, Cols: s.Cols, Offset: off, Zero: s.Zero}
		off += t.Size()
		ts = append(ts, t)
	}
	for _, s := range inputSpecs(c) {
		t := Tensor{Name: s.Name, Layer: InputLayer, Rows: s.Rows, Cols: s.Cols, Offset: off, Zero: s.Zero}
		off += t.Size()
		ts = append(ts, t)
	}
	// The between-layer tensors (norms, residual projections, the jumping
	// knowledge map) come after everything else, so that a model without
	// them keeps its layout.
	for _, s := range betweenSpecs(c) {
		t := Tensor{Name: s.name, Layer: s.layer, Rows: s.Rows, Cols: s.Cols, Offset: off, Zero: s.Zero, Init: s.Init}
		off += t.Size()
		ts = append(ts, t)
	}
	return ts
}

// NumParams returns the length of the flat parameter buffer.
func (c Config) NumParams() int { return c.paramCount(builtinArchs()) }

// paramCount is NumParams with the architectures of t.
func (c Config) paramCount(t archTable) int {
	n := 0
	for _, ts := range c.tensors(t) {
		n += ts.Size()
	}
	return n
}

// initTag separates the hash inputs of weight initialisation from every
// other keyed draw (sampling, dropout, batch order).
const initTag = 0x696e69742d77 // "init-w"

// InitParams fills a new flat parameter buffer deterministically from seed:
// Glorot/Xavier uniform weights (limit sqrt(6/(in+out))) and zero biases.
// Element i of tensor t is a pure function of (seed, t, i) through the
// counter-based sample.Hash64, so every rank, whatever the rank count, gets
// bit-identical parameters without a broadcast.
func InitParams(cfg Config, seed uint64) ([]float32, error) {
	return initParams(cfg, builtinArchs(), seed)
}

// initParams is InitParams with the architectures of tab.
func initParams(cfg Config, tab archTable, seed uint64) ([]float32, error) {
	if err := cfg.validate(tab); err != nil {
		return nil, err
	}
	p := make([]float32, cfg.paramCount(tab))
	for ti, t := range cfg.tensors(tab) {
		if t.Zero {
			// Biases start at zero, a learnable constant (GIN's ε,
			// LayerNorm's scale) at its Init.
			if t.Init != 0 {
				for i := range t.Size() {
					p[t.Offset+i] = t.Init
				}
			}
			continue
		}
		limit := math.Sqrt(6 / float64(t.Rows+t.Cols))
		w := p[t.Offset : t.Offset+t.Size()]
		for i := range w {
			u := sample.Float64From(sample.Hash64(initTag, seed, uint64(ti), uint64(i)))
			w[i] = float32((2*u - 1) * limit)
		}
	}
	return p, nil
}

// MaskKey selects the dropout masks of one training step. Masks are a pure
// function of (Seed, Step, layer, original node id, unit), so every rank
// count draws the same mask for the same node. Step is the global optimizer
// step (counted across epochs), which every rank knows.
type MaskKey struct {
	Seed uint64
	Step int64
}

// Model is a network with float32 parameters and gradients, each in
// one flat buffer (see Config.Tensors) so that gradients can be reduced with
// a single Allreduce. Work buffers are reused across steps. A Model is not
// safe for concurrent use.
type Model struct {
	n *net[float32]
}

// ModelOption changes how NewModel builds a model.
type ModelOption func(*modelOptions)

type modelOptions struct {
	archs []Arch
}

// WithArchs makes architectures besides the built-in ones available to
// the model's Config.Arch (an extra one of a built-in name replaces it).
// A model of an extra architecture trains and evaluates like any other;
// its checkpoints name an architecture only this option knows, and the
// Config methods that know only built-in ones (Validate, Tensors,
// NumParams, the PyG mapping) refuse it.
func WithArchs(archs ...Arch) ModelOption {
	return func(o *modelOptions) { o.archs = append(o.archs, archs...) }
}

// NewModel builds a model with parameters initialised by InitParams(cfg,
// seed) (for an architecture of WithArchs: by the same rule).
func NewModel(cfg Config, seed uint64, opts ...ModelOption) (*Model, error) {
	var o modelOptions
	for _, f := range opts {
		f(&o)
	}
	tab := builtinArchs().with(o.archs)
	p, err := initParams(cfg, tab, seed)
	if err != nil {
		return nil, err
	}
	n, err := newNetIn(cfg, tab, p, nil)
	if err != nil {
		return nil, err
	}
	return &Model{n: n}, nil
}

// Config returns the model configuration (with Arch spelled out).
func (m *Model) Config() Config { return m.n.cfg }

// Params returns the flat parameter buffer (aliased: writes change the model).
func (m *Model) Params() []float32 { return m.n.params }

// Grads returns the flat gradient buffer, same layout as Params (aliased).
func (m *Model) Grads() []float32 { return m.n.grads }

// SetParams copies p (for example from a checkpoint) into the model.
func (m *Model) SetParams(p []float32) error {
	if len(p) != len(m.n.params) {
		return fmt.Errorf("set params: got %d values, model has %d", len(p), len(m.n.params))
	}
	copy(m.n.params, p)
	return nil
}

// appendArgmax appends to dst the arg-max class of every row of logits
// (c classes wide).
func appendArgmax(dst []int32, logits []float32, c int) []int32 {
	for i := 0; i < len(logits)/c; i++ {
		dst = append(dst, int32(argmax(logits[i*c:(i+1)*c])))
	}
	return dst
}

// net is the generic model core: layers and a head over one flat parameter
// buffer, with ReLU and dropout between the layers.
type net[T floatT] struct {
	cfg    Config
	params []T
	grads  []T
	layers []Layer[T]
	head   Head[T]      // softmax cross-entropy, or a link decoder (link.go)
	het    *hetInput[T] // typed inputs of a heterogeneous model; nil for homogeneous
	bw     *between[T]  // residual, norm and jumping knowledge; nil when the config has none
	// sampled is the architecture's Arch.Sampled: whether the config can
	// run on sampled blocks (nil: always).
	sampled func(Config) error
	// srcDeg and firstSrcDeg are the architecture's Arch.SrcDegree and
	// FirstSrcDegree (what layer-wise inference must give its layers).
	srcDeg, firstSrcDeg func(Config) bool

	// work buffers, grown on demand and reused across steps
	out [][]T // layer l: output rows (after ReLU+dropout for hidden layers), aliasing the layer's buffer
	dz  []T   // gradient w.r.t. the logits
	xd  []T   // input features after input dropout (training only)
	xin []T   // the input rows layer 0 read in the last forward (x or xd; with xsIn the entry values)
	// xsIn is the sparse input structure layer 0 read in the last forward
	// (forwardSparse), nil when it read dense rows.
	xsIn *sample.SparseRows
	key  MaskKey // the masks of the last forward, for backward
	// bf16 runs the layers' products with bf16 inputs (Model.UseBF16);
	// nil: fp32.
	bf16 *kernels.BF16
}

// newNet builds the layers of cfg over params; grads is the gradient
// buffer to use (the trainer passes a prefix of its reduction buffer) or nil
// to allocate one.
func newNet[T floatT](cfg Config, params, grads []T) (*net[T], error) {
	return newNetIn(cfg, builtinArchs(), params, grads)
}

// newNetIn is newNet with the architectures of tab.
func newNetIn[T floatT](cfg Config, tab archTable, params, grads []T) (*net[T], error) {
	if err := cfg.validate(tab); err != nil {
		return nil, err
	}
	if want := cfg.paramCount(tab); len(params) != want {
		return nil, fmt.Errorf("model: %d parameters for a model of %d", len(params), want)
	}
	a, _ := tab.lookup(cfg.Arch)
	cfg = cfg.Normalized()
	n := &net[T]{cfg: cfg, params: params, head: newHead[T](cfg),
		sampled: a.Sampled, srcDeg: a.SrcDegree, firstSrcDeg: a.FirstSrcDegree}
	for l := 0; l < cfg.Layers; l++ {
		n.layers = append(n.layers, newLayer[T](a, cfg, l))
	}
	if cfg.Hetero != nil {
		n.het = newHetInput[T](cfg)
	}
	if cfg.hasBetween() {
		n.bw = newBetween[T](cfg)
	}
	n.out = make([][]T, cfg.Layers)
	if grads == nil {
		grads = make([]T, len(params))
	}
	n.bindGrads(grads)
	return n, nil
}

// bindGrads makes grads (same length as params) the gradient buffer and
// hands every layer its parameter and gradient views.
func (n *net[T]) bindGrads(grads []T) {
	n.grads = grads
	off := 0
	for _, ly := range n.layers {
		specs := ly.Specs()
		ps, gs := make([][]T, len(specs)), make([][]T, len(specs))
		for i, s := range specs {
			end := off + s.Rows*s.Cols
			ps[i], gs[i] = n.params[off:end:end], grads[off:end:end]
			off = end
		}
		ly.Bind(ps, gs)
	}
	if specs := n.head.Specs(); len(specs) > 0 {
		ps, gs := make([][]T, len(specs)), make([][]T, len(specs))
		for i, s := range specs {
			end := off + s.Rows*s.Cols
			ps[i], gs[i] = n.params[off:end:end], grads[off:end:end]
			off = end
		}
		n.head.Bind(ps, gs)
	}
	if n.het != nil {
		specs := inputSpecs(n.cfg)
		ps, gs := make([][]T, len(specs)), make([][]T, len(specs))
		for i, s := range specs {
			end := off + s.Rows*s.Cols
			ps[i], gs[i] = n.params[off:end:end], grads[off:end:end]
			off = end
		}
		n.het.bind(ps, gs)
	}
	if n.bw != nil {
		n.bw.bind(n.params[off:], grads[off:])
	}
}

// grow returns buf resliced to n elements, reallocating only when the
// capacity is short (with headroom so slowly growing batches settle).
func grow[T floatT](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]T, n, n+n/8)
}

// checkDense validates dense input rows x against blocks[0] and the input
// width.
func (n *net[T]) checkDense(blocks []sample.Block, x []T) error {
	if err := n.checkHomogeneous(); err != nil {
		return err
	}
	if want := blocks[0].NumSrc() * n.cfg.InDim; len(x) != want {
		return fmt.Errorf("model: got %d input values, want %d (%d nodes x %d)", len(x), want, blocks[0].NumSrc(), n.cfg.InDim)
	}
	return nil
}

// checkHomogeneous refuses the one-matrix input forms for a heterogeneous
// model.
func (n *net[T]) checkHomogeneous() error {
	if n.het != nil {
		return errors.New("model: a heterogeneous model takes one input matrix per node type (Batch.XT)")
	}
	return nil
}

// checkRowViews is checkDense for input rows given as views of any element
// type.
func checkRowViews[T Float, E any](n *net[T], blocks []sample.Block, x [][]E) error {
	if err := n.checkHomogeneous(); err != nil {
		return err
	}
	if want := blocks[0].NumSrc(); len(x) != want {
		return fmt.Errorf("model: got %d input rows, want %d", len(x), want)
	}
	for i, r := range x {
		if len(r) != n.cfg.InDim {
			return fmt.Errorf("model: input row %d has %d values, want %d", i, len(r), n.cfg.InDim)
		}
	}
	return nil
}

// checkBlocks validates the structure of the block chain.
func (n *net[T]) checkBlocks(blocks []sample.Block) error {
	if n.sampled != nil {
		if err := n.sampled(n.cfg); err != nil {
			return err
		}
	}
	if len(blocks) != n.cfg.Layers {
		return fmt.Errorf("model: got %d blocks for a %d-layer model", len(blocks), n.cfg.Layers)
	}
	for l := range blocks {
		b := &blocks[l]
		ns := b.NumSrc()
		if err := checkBlock(b); err != nil {
			return fmt.Errorf("model: block %d: %w", l, err)
		}
		if err := checkEdgeFeat(b, n.cfg.EdgeDim); err != nil {
			return fmt.Errorf("model: block %d: %w", l, err)
		}
		if l > 0 && ns != blocks[l-1].NumDst {
			return fmt.Errorf("model: block %d has %d nodes but block %d has %d destinations", l, ns, l-1, blocks[l-1].NumDst)
		}
	}
	return nil
}

// forwardDense computes every layer's output rows from dense input rows x;
// layer l computes only the blocks[l].NumDst rows that layer l+1 reads.
func (n *net[T]) forwardDense(blocks []sample.Block, x []T, train bool, key MaskKey) {
	if train && n.cfg.InputDropout > 0 {
		// A copy: x belongs to the batch source, which may reuse it.
		n.xd = grow(n.xd, len(x))
		dropoutRows(n.xd, x, n.cfg.InDim, blocks[0].Orig, InputLayer, n.cfg.InputDropout, key, false)
		x = n.xd
	}
	n.xin, n.xsIn, n.key = x, nil, key
	n.forwardLayers(blocks, x, train, key)
}

// forwardRows is forwardDense over input rows given as views (row i is
// x[i]); see forwardViews.
func (n *net[T]) forwardRows(blocks []sample.Block, x [][]T, train bool, key MaskKey) {
	pre := func(i int) { kernels.Prefetch(x[i]) }
	n.forwardViews(blocks, len(x), func(i int, _ []T) []T { return x[i] }, pre, train, key)
}

// forwardHalfRows is forwardRows over views of 2-byte rows (bf16 or fp16,
// kind): each row is widened into the layers' copy as it is read, and the
// input dropout then runs on it in place, while it is in cache.
func forwardHalfRows(n *net[float32], blocks []sample.Block, x [][]uint16, kind half.Kind, train bool, key MaskKey) {
	widen := func(i int, row []float32) []float32 {
		half.Widen(kind, row, x[i])
		return row
	}
	n.forwardViews(blocks, len(x), widen, func(i int) { kernels.Prefetch(x[i]) }, train, key)
}

// forwardViews runs the layers over rows input rows, row i being what
// row(i, dst) returns: a view of its values, or dst (row i of the layers'
// copy) written with them. The input dropout reads each
// row as it is returned and writes the one copy the layers need (pre
// prefetching the scattered rows a few ahead); without dropout the rows
// are copied as they are.
func (n *net[T]) forwardViews(blocks []sample.Block, rows int, row func(i int, dst []T) []T, pre func(i int), train bool, key MaskKey) {
	w := n.cfg.InDim
	xd := grow(n.xd, rows*w)
	n.xd = xd
	at := func(i int) []T { return xd[i*w : (i+1)*w] }
	if train && n.cfg.InputDropout > 0 {
		in := func(i int) []T { return row(i, at(i)) }
		dropoutRowsOf(xd, in, w, blocks[0].Orig, InputLayer, n.cfg.InputDropout, key, false, pre)
	} else {
		par.Range(rows, rows*w, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if r := row(i, at(i)); w > 0 && &r[0] != &at(i)[0] {
					copy(at(i), r)
				}
			}
		})
	}
	n.xin, n.xsIn, n.key = xd, nil, key
	n.forwardLayers(blocks, xd, train, key)
}

// forwardLayers runs the layers over the input rows x of blocks[0]'s nodes.
func (n *net[T]) forwardLayers(blocks []sample.Block, x []T, train bool, key MaskKey) {
	n.roundWeights()
	if n.bw != nil {
		n.forwardBetween(blocks, x, train, key)
		return
	}
	h := x
	last := len(blocks) - 1
	for l := range blocks {
		b := &blocks[l]
		_, out := n.cfg.LayerDims(l)
		p := n.pass(blocks, l, train, key)
		var o []T
		switch fl, ok := n.layers[l].(fusedForward[T]); {
		case l == last:
			o = n.layers[l].Forward(&p, b, h)
		case ok:
			orig := b.Orig[:b.NumDst]
			o = fl.ForwardThen(&p, b, h, func(o []T, lo, hi int) {
				reluDropoutRange(o, out, orig, l, train, n.cfg.Dropout, key, lo, hi)
			})
		default:
			o = n.layers[l].Forward(&p, b, h)
			reluDropout(o, out, b.Orig[:b.NumDst], l, train, n.cfg.Dropout, key)
		}
		n.out[l] = o
		h = o
	}
}

// pass describes layer l's part of a pass over blocks.
func (n *net[T]) pass(blocks []sample.Block, l int, train bool, key MaskKey) Pass {
	p := Pass{Train: train, Key: key, BF16: n.bf16}
	if l > 0 {
		p.Prev = &blocks[l-1]
	} else {
		p.Sparse = n.xsIn
	}
	if n.het != nil {
		p.Types = n.het.types[l]
	}
	return p
}

// backward propagates n.dz (gradient of the summed loss w.r.t. the logits)
// and accumulates parameter gradients. Layer 0 of a homogeneous model skips
// the input gradient: the features are not trained. A heterogeneous model
// continues through its typed input projections.
func (n *net[T]) backward(blocks []sample.Block, train bool) {
	n.head.Backward(n.dz) // a decoder fills n.dz from the pair gradients
	if n.bw != nil {
		n.backwardBetween(blocks, train)
		return
	}
	dz := n.dz
	scale := T(1)
	if train && n.cfg.Dropout > 0 {
		scale = T(1 / (1 - float64(n.cfg.Dropout)))
	}
	for l := len(blocks) - 1; l >= 0; l-- {
		b := &blocks[l]
		in, _ := n.cfg.LayerDims(l)
		hin := n.xin
		if l > 0 {
			hin = n.out[l-1]
		}
		p := n.pass(blocks, l, train, n.key)
		// Back through dropout and ReLU of layer l-1: an output is positive
		// exactly when the unit was kept and its pre-activation was positive,
		// and then its derivative is the dropout scale (branch-free: the
		// sign pattern is random; kernels.MaskScale, 8 lanes at a time).
		below := func(dh []T, lo, hi int) {
			kernels.MaskScale(dh[lo*in:hi*in], hin[lo*in:hi*in], scale)
		}
		var dh []T
		switch fb, ok := n.layers[l].(fusedBackward[T]); {
		case l == 0:
			dh = n.layers[l].Backward(&p, b, hin, dz, n.het != nil)
			if n.het != nil {
				n.het.backward(dh, train, n.key)
			}
		case ok:
			dh = fb.BackwardThen(&p, b, hin, dz, true, below)
		default:
			dh = n.layers[l].Backward(&p, b, hin, dz, true)
			par.Range(b.NumSrc(), len(hin), func(lo, hi int) { below(dh, lo, hi) })
		}
		if l == 0 {
			break
		}
		dz = dh
	}
}

// softmaxCE writes scale·d(sum of losses)/d(logits) into dz and returns the
// summed cross-entropy (computed in float64) and the count of correct
// arg-maxes (ties go to the lowest class, as torch.argmax does). Rows run
// in parallel, each writing its loss into rowLoss (one per label), and the
// losses are summed in row order afterwards: the serial loop's sum, bit for
// bit.
func softmaxCE[T floatT](logits []T, labels []int32, classes int, scale T, dz []T, rowLoss []float64) (float64, int) {
	var correct atomic.Int64
	par.Range(len(labels), 8*len(logits), func(lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			y := labels[i]
			z := logits[i*classes : (i+1)*classes]
			g := dz[i*classes : (i+1)*classes]
			arg := argmax(z)
			if arg == int(y) {
				n++
			}
			zmax := float64(z[arg])
			sum := 0.0
			for k, v := range z {
				e := math.Exp(float64(v) - zmax)
				g[k] = T(e)
				sum += e
			}
			rowLoss[i] = math.Log(sum) + zmax - float64(z[y])
			inv := float64(scale) / sum
			for k := range g {
				g[k] = T(float64(g[k]) * inv)
			}
			g[y] -= scale
		}
		correct.Add(int64(n))
	})
	loss := 0.0
	for _, l := range rowLoss[:len(labels)] {
		loss += l
	}
	return loss, int(correct.Load())
}

// argmax returns the index of the first largest element of z (len >= 1). A
// NaN never wins, so a diverged model still yields a valid class index.
func argmax[T floatT](z []T) int {
	arg := 0
	for k := 1; k < len(z); k++ {
		if z[k] > z[arg] || (z[arg] != z[arg] && z[k] == z[k]) {
			arg = k
		}
	}
	return arg
}

// reluDropout applies ReLU and, when training, inverted dropout in place to
// rows of width w; row i belongs to the node with original id orig[i]. The
// loops are written without data-dependent branches (the keep/drop and sign
// decisions are random, so branches would mispredict half the time).
func reluDropout[T floatT](o []T, w int, orig []int64, layer int, train bool, p float32, key MaskKey) {
	par.Range(len(orig), len(o), func(lo, hi int) {
		reluDropoutRange(o, w, orig, layer, train, p, key, lo, hi)
	})
}

// reluDropoutRange is reluDropout of rows [lo, hi) on the calling
// goroutine: what a layer that fuses the activation into its own pass
// runs on each block of its output (fusedForward).
func reluDropoutRange[T floatT](o []T, w int, orig []int64, layer int, train bool, p float32, key MaskKey, lo, hi int) {
	if !train || p == 0 {
		for k, v := range o[lo*w : hi*w] {
			o[lo*w+k] = max(v, 0)
		}
		return
	}
	dropoutRange(o, func(i int) []T { return o[i*w : (i+1)*w] }, w, orig, layer, p, key, true, nil, lo, hi)
}

// dropout applies inverted dropout in place to rows of width w (row i is
// the node with original id orig[i]), without ReLU.
func dropout[T floatT](o []T, w int, orig []int64, layer int, p float32, key MaskKey) {
	dropoutRows(o, o, w, orig, layer, p, key, false)
}

// dropoutRows writes into o the inverted dropout of the rows x (o may be
// x), with the mask keyed by (seed, step, layer, node), preceded by ReLU
// when relu is set (a loop-invariant branch). Writing o from x in the same
// pass spares the input dropout a copy of the gathered rows.
// Each 64-bit hash decides four units (sample.MaskLanes); the keep factor
// is computed from the sign of draw - threshold, without a branch.
func dropoutRows[T floatT](o, x []T, w int, orig []int64, layer int, p float32, key MaskKey, relu bool) {
	dropoutRowsOf(o, func(i int) []T { return x[i*w : (i+1)*w] }, w, orig, layer, p, key, relu, nil)
}

// prefetchRows is how many rows ahead dropoutRowsOf prefetches its input:
// scattered rows (views of the feature store) would otherwise each stall
// on memory, and hashing a row's mask takes about as long as a row's
// memory latency.
const prefetchRows = 4

// dropoutRowsOf is dropoutRows over rows wherever they are: row i of the
// input is in(i) (w values), e.g. a view of the feature store's rows
// (forwardRows), which spares the gather its copy.
func dropoutRowsOf[T floatT](o []T, in func(i int) []T, w int, orig []int64, layer int, p float32, key MaskKey, relu bool, pre func(i int)) {
	par.Range(len(orig), len(o), func(lo, hi int) {
		dropoutRange(o, in, w, orig, layer, p, key, relu, pre, lo, hi)
	})
}

// dropoutRange is dropoutRowsOf of rows [lo, hi) on the calling goroutine.
// pre, if set, prefetches input row i (scattered rows, views), which it
// calls a few rows ahead.
func dropoutRange[T floatT](o []T, in func(i int) []T, w int, orig []int64, layer int, p float32, key MaskKey, relu bool, pre func(i int), lo, hi int) {
	scale := T(1 / (1 - float64(p)))
	t := int32(sample.MaskThreshold(p))
	if o32, ok := any(o).([]float32); ok {
		// float32 rows run the vector kernel on the row's packed draws,
		// hashed first into a buffer (on the stack up to 512 units).
		nw := (w + sample.MaskLanes - 1) / sample.MaskLanes
		var buf [128]uint64
		words := buf[:0]
		if nw > len(buf) {
			words = make([]uint64, 0, nw)
		}
		words = words[:nw]
		for i := lo; i < hi; i++ {
			if pre != nil && i+prefetchRows < hi {
				pre(i + prefetchRows)
			}
			kernels.MaskWords(words, sample.MaskKey(key.Seed, int(key.Step), layer, orig[i]))
			kernels.DropRow(o32[i*w:(i+1)*w], any(in(i)).([]float32), words, uint32(t), float32(scale), relu)
		}
		return
	}
	// f[1] multiplies a kept unit, f[0] a dropped one: v·f[k] has the bits
	// of v·k·scale for k = 0, 1 (v·1 is exact), NaN and the sign of zero
	// included.
	f := [2]T{0, scale}
	for i := lo; i < hi; i++ {
		rk := sample.MaskKey(key.Seed, int(key.Step), layer, orig[i])
		row, in := o[i*w:(i+1)*w], in(i)[:w]
		g := 0
		for ; (g+1)*sample.MaskLanes <= len(row); g++ {
			// Four units per word, unrolled over fixed-size arrays so
			// the loop carries no bounds checks.
			r := (*[sample.MaskLanes]T)(row[g*sample.MaskLanes:])
			v := (*[sample.MaskLanes]T)(in[g*sample.MaskLanes:])
			bits := sample.MaskWord(rk, g)
			r[0] = dropUnit(v[0], uint32(bits), t, &f, relu)
			r[1] = dropUnit(v[1], uint32(bits>>16), t, &f, relu)
			r[2] = dropUnit(v[2], uint32(bits>>32), t, &f, relu)
			r[3] = dropUnit(v[3], uint32(bits>>48), t, &f, relu)
		}
		if u0 := g * sample.MaskLanes; u0 < len(row) {
			bits := sample.MaskWord(rk, g)
			for u := u0; u < len(row); u++ {
				row[u] = dropUnit(in[u], uint32(bits), t, &f, relu)
				bits >>= 16
			}
		}
	}
}

// dropUnit is one unit of dropoutRows: v (after ReLU when relu is set)
// times f[1] if its 16-bit draw (the low 16 bits of draw) is at least t,
// else times f[0]. The index comes from the sign of t-1-draw, without a
// branch (keep and drop are random, so a branch mispredicts half the time).
func dropUnit[T floatT](v T, draw uint32, t int32, f *[2]T, relu bool) T {
	if relu {
		v = max(v, 0)
	}
	return v * f[uint32(t-1-int32(draw&0xffff))>>31]
}

// maskRow writes into keep the inverted-dropout multipliers of units
// 0..len(keep)-1 of the mask row rk: scale where the unit is kept (its
// draw is at least t), else 0. It draws each 64-bit word once for four
// units, the row's words at once (kernels.MaskWords).
func maskRow[T floatT](keep []T, rk uint64, t uint32, scale T) {
	ti := int32(t)
	f := [2]T{0, scale}
	nw := (len(keep) + sample.MaskLanes - 1) / sample.MaskLanes
	var buf [64]uint64 // on the stack up to 256 units
	words := buf[:min(nw, len(buf))]
	if nw > len(buf) {
		words = make([]uint64, nw)
	}
	kernels.MaskWords(words, rk)
	for g, bits := range words {
		u0 := g * sample.MaskLanes
		for u := u0; u < min(u0+sample.MaskLanes, len(keep)); u++ {
			keep[u] = f[uint32(ti-1-int32(bits&0xffff))>>31]
			bits >>= 16
		}
	}
}

// DropoutKeep reports whether dropout with probability p keeps unit `unit`
// of the layer-`layer` output of the node with original id orig, at the step
// selected by key. It is the exact rule the model uses (a unit is dropped
// when its keyed 16-bit draw is below sample.MaskThreshold(p)); exposed so other code and tests
// can reproduce masks.
func DropoutKeep(key MaskKey, layer int, orig int64, unit int, p float32) bool {
	return sample.MaskKeep(sample.MaskKey(key.Seed, int(key.Step), layer, orig), unit, sample.MaskThreshold(p))
}
