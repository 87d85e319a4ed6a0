package train

import (
	"errors"
	"fmt"

	"mpignn/sample"
	"mpignn/train/kernels"
)

// Float is the element type of the generic model core: float32 in
// production and float64 for the gradient checks in tests.
type Float interface{ ~float32 | ~float64 }

// floatT is the short name the generic layer code uses for Float.
type floatT = Float

// ParamSpec describes one parameter tensor of a layer. Weights are stored
// input-major (Rows = input width) so that a layer computes H·W with
// row-major node matrices.
type ParamSpec struct {
	Name string // short name, unique within the layer ("w_self", "b", ...)
	Rows int
	Cols int
	// Zero starts the tensor at zero (biases), or at Init where that is
	// set (GIN's learnable ε starts at its eps, as PyG's reset_parameters
	// fills it); otherwise it is Glorot uniform with limit
	// sqrt(6/(Rows+Cols)).
	Zero bool
	// Init is the constant a Zero tensor starts at (0: zero; GIN's ε,
	// LayerNorm's scale 1).
	Init float32
}

// Pass is what a layer needs to know about the pass it runs in besides its
// block and input rows.
type Pass struct {
	Train bool    // training: dropout (and attention dropout) on
	Key   MaskKey // selects the dropout masks of this step
	// Prev is the block whose destinations are this layer's input rows (the
	// block of the layer below), nil for the first layer, whose input rows
	// are the features of the sampled input nodes.
	Prev *sample.Block
	// SrcDeg, if set, gives the in-degree (without self-loops) of every
	// source node in the layer below, in place of Prev's destinations:
	// layer-wise inference (infer.go) has no block below, only the
	// previous layer's rows and each node's full in-degree.
	SrcDeg []int32
	// Types is the node type of each of the block's nodes (destinations
	// first) in a heterogeneous model, nil in a homogeneous one.
	Types []int32
	// Sparse is set for layer 0 when the inputs are sparse rows (see
	// sparse.go): the layer's h is then the values of Sparse's entries,
	// one per entry, instead of dense rows, and the input gradient is not
	// asked for. Nil otherwise.
	Sparse *sample.SparseRows
	// BF16, if set, runs the layer's matrix products with bf16 inputs
	// (Model.UseBF16; precision.go); nil runs them in fp32.
	BF16 *kernels.BF16
}

// fusedForward is a Layer that can run the activation which follows it
// (ReLU and dropout, row by row) inside its own Forward: ForwardThen is
// Forward, calling then(o, lo, hi) once for every range of its output rows
// o as soon as they are final (each row in exactly one range), so the
// rows are still in cache. The result must be that of Forward followed by
// then over all rows.
type fusedForward[T Float] interface {
	ForwardThen(p *Pass, b *sample.Block, h []T, then func(o []T, lo, hi int)) []T
}

// fusedBackward is a Layer that can run the backward of the activation
// below it (through dropout and ReLU, row by row) inside its own Backward:
// BackwardThen is Backward, calling then(dh, lo, hi) once for every range
// of the rows of the input gradient dh as soon as they are final (each
// row in exactly one range). The result must be that of Backward followed
// by then over all rows.
type fusedBackward[T Float] interface {
	BackwardThen(p *Pass, b *sample.Block, h, dz []T, wantInput bool, then func(dh []T, lo, hi int)) []T
}

// Layer is one message-passing layer over a sampled block: it maps the
// b.NumSrc() input rows h (row-major, InDim wide) to b.NumDst output rows.
// Destination i of a block is also its source i (blocks list destinations
// first), so a layer finds a node's own input row at the same index.
//
// A layer owns its output and gradient buffers and reuses them across
// calls; the model applies the activation and dropout between layers, and
// the head turns the last layer's rows into a loss.
type Layer[T Float] interface {
	// Specs lists the layer's parameter tensors in buffer order.
	Specs() []ParamSpec
	// Bind hands the layer its views of the flat parameter and gradient
	// buffers, one per spec, in Specs order.
	Bind(params, grads [][]T)
	// Forward returns the b.NumDst output rows (valid until the next
	// Forward on this layer). It may keep what Backward needs.
	Forward(p *Pass, b *sample.Block, h []T) []T
	// Backward ADDS the parameter gradients given dout, the gradient of the
	// loss w.r.t. the rows of the last Forward (same p, b and h), and, when
	// wantInput is set, returns the gradient w.r.t. h (b.NumSrc() rows,
	// valid until the next Backward). dout may be overwritten.
	Backward(p *Pass, b *sample.Block, h, dout []T, wantInput bool) []T
}

// Head turns the last layer's rows of the seeds into a loss over a
// batch's targets: its task. Node classification (classifyHead) scores one
// row of logits per seed against Batch.Labels with softmax cross-entropy;
// link prediction (linkHead, link.go) scores pairs of seed rows
// (Batch.Pairs) with a decoder, which may have parameters of its own,
// against Batch.PairLabels with binary cross-entropy.
type Head[T Float] interface {
	// Specs lists the head's parameter tensors in buffer order (after the
	// layers'); nil for a head without parameters.
	Specs() []ParamSpec
	// Bind hands the head its views of the flat parameter and gradient
	// buffers, one per spec, in Specs order.
	Bind(params, grads [][]T)
	// Check validates the batch's targets for this head against the
	// seeds (the last block's destinations), seeds of them.
	Check(b *sample.Batch, seeds int) error
	// Loss returns the summed loss over the batch's targets given the
	// seeds' rows z and the number of correct predictions. It writes
	// scale·d(summed loss)/dz into dz (len(z) values), or, for a head
	// whose gradient passes through parameters of its own, keeps what
	// Backward needs to do so when scale != 0.
	Loss(z []T, b *sample.Batch, scale T, dz []T) (float64, int)
	// Backward completes dz after a Loss with scale != 0 (adding the
	// head's parameter gradients); a head whose Loss already wrote dz does
	// nothing.
	Backward(dz []T)
}

// classifyHead is softmax cross-entropy over Classes logits per seed.
type classifyHead[T Float] struct {
	classes int
	rowLoss []float64 // per seed loss of the last Loss, summed in seed order
}

func (h *classifyHead[T]) Specs() []ParamSpec { return nil }
func (h *classifyHead[T]) Bind(_, _ [][]T)    {}
func (h *classifyHead[T]) Backward([]T)       {}

func (h *classifyHead[T]) Check(b *sample.Batch, seeds int) error {
	switch {
	case isLinkBatch(b):
		return errors.New("model: a link batch needs a link predictor (config without a decoder)")
	case b.Labels == nil:
		return errors.New("model: labels are required")
	case len(b.Labels) != seeds:
		return fmt.Errorf("model: got %d labels for %d seeds", len(b.Labels), seeds)
	}
	return h.checkLabels(b.Labels)
}

// checkLabels validates the class of every label.
func (h classifyHead[T]) checkLabels(labels []int32) error {
	for i, y := range labels {
		if y < 0 || int(y) >= h.classes {
			return fmt.Errorf("model: seed %d label %d outside [0,%d)", i, y, h.classes)
		}
	}
	return nil
}

func (h *classifyHead[T]) Loss(z []T, b *sample.Batch, scale T, dz []T) (float64, int) {
	h.rowLoss = growF64(h.rowLoss, len(b.Labels))
	return softmaxCE(z, b.Labels, h.classes, scale, dz, h.rowLoss)
}

// newHead builds the head of cfg: the link decoder if it names one, else
// softmax cross-entropy.
func newHead[T Float](cfg Config) Head[T] {
	if cfg.IsLink() {
		return newLinkHead[T](cfg)
	}
	if cfg.Targets != "" {
		return &targetHead[T]{kind: cfg.Targets, k: cfg.Classes}
	}
	return &classifyHead[T]{classes: cfg.Classes}
}

// isLinkBatch reports whether b is a link batch (scored pairs, no node
// labels expected).
func isLinkBatch(b *sample.Batch) bool { return len(b.Pairs) > 0 || len(b.PairLabels) > 0 }

// Architecture names accepted by Config.Arch (and `mpignn train --model`).
const (
	ArchSAGE = "sage"
	ArchGCN  = "gcn"
	ArchGAT  = "gat"
	// ArchRGCN and ArchHSAGE are the heterogeneous architectures.
	ArchRGCN  = "rgcn"
	ArchHSAGE = "hsage"
)

// Arch is one architecture a model can be built from. A layer is one file
// that declares its Arch and one line in builtinArchs: the Arch owns the
// architecture's hyper-parameters (Params: their flags, defaults and help;
// Validate), so the shared Config keeps only what every model has, and
// its checkpoint keys are those parameters' keys; it says what layer-wise
// inference needs from it (SrcDegree) and how it exports to PyTorch
// Geometric (pyg, pygSpec). (Go has no generic function values, hence one
// constructor per element type; float64 models only run in gradient
// checks.) The built-in ones are listed by Archs and HeteroArchs; others
// are handed to NewModel with WithArchs, so no table is ever modified at
// run time.
type Arch struct {
	Name   string
	Doc    string
	Hetero bool // needs Config.Hetero and typed blocks

	// Params are the architecture's own hyper-parameters, kept in
	// Config.Opts under their keys.
	Params []Param
	// Validate checks the architecture-specific settings only (nil: none)
	// after the Opts keys are checked against Params.
	Validate func(Config) error
	New32    func(c Config, l int) Layer[float32]
	New64    func(c Config, l int) Layer[float64]
	// EdgeFeatures marks an architecture whose layers read the block's
	// edge features (sample.Block.EdgeFeat, Config.EdgeDim wide) when
	// Config.EdgeDim is set.
	EdgeFeatures bool
	// NeedsEdgeFeatures marks an architecture that cannot run without
	// them (Config.EdgeDim > 0 once the config is complete).
	NeedsEdgeFeatures bool

	// SrcDegree reports whether layer-wise inference must give the layers
	// above the first every source's in-degree (Pass.SrcDeg), and
	// FirstSrcDegree whether layer 0 needs it too (nil: neither).
	SrcDegree, FirstSrcDegree func(Config) bool
	// Sampled refuses a config that cannot run on sampled blocks (nil:
	// every config can).
	Sampled func(Config) error

	// pyg lists layer l's tensors in PyG's names, with m the mpignn
	// prefix of the layer ("l0.") and p PyG's ("convs.0."); pygSpec fills
	// the PyG class and its constructor arguments (a homogeneous model's
	// shared ones are set). Nil: no PyG export.
	pyg     func(c Config, l int, m, p string) []pygEntry
	pygSpec func(c Config, s *PyGModelSpec)
	// pygImport, if set, rewrites a state dict before it is matched
	// against pyg's names (older PyG spellings of the same tensors).
	pygImport func(c Config, got map[string]NamedTensor) error
}

// newLayer builds layer l of a validated configuration in precision T.
func newLayer[T Float](a Arch, c Config, l int) Layer[T] {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(a.New32(c, l)).(Layer[T])
	}
	return any(a.New64(c, l)).(Layer[T])
}
