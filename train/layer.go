package train

import (
	"fmt"
	"strings"

	"mpignn/config"
	"mpignn/sample"
)

// Float is the element type of the generic model core: float32 in
// production and float64 for the gradient checks in tests.
type Float interface{ ~float32 | ~float64 }

// floatT is the short name the kernels use for Float.
type floatT = Float

// ParamSpec describes one parameter tensor of a layer. Weights are stored
// input-major (Rows = input width) so that a layer computes H·W with
// row-major node matrices.
type ParamSpec struct {
	Name string // short name, unique within the layer ("w_self", "b", ...)
	Rows int
	Cols int
	// Zero starts the tensor at zero (biases); otherwise it is Glorot
	// uniform with limit sqrt(6/(Rows+Cols)).
	Zero bool
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

// Head turns the last layer's rows into a loss. Node classification uses
// softmax cross-entropy over one row of logits per seed; link prediction
// does not go through a Head: its rows are embeddings that the decoder
// (link.go) scores per pair under binary cross-entropy.
type Head[T Float] interface {
	// Check validates the targets (one label per seed).
	Check(labels []int32) error
	// Loss returns the summed loss over the rows of z and the number of
	// correct predictions, and writes scale·d(summed loss)/dz into dz.
	Loss(z []T, labels []int32, scale T, dz []T) (float64, int)
}

// classifyHead is softmax cross-entropy over Classes logits per seed.
type classifyHead[T Float] struct{ classes int }

func (h classifyHead[T]) Check(labels []int32) error {
	for i, y := range labels {
		if y < 0 || int(y) >= h.classes {
			return fmt.Errorf("model: seed %d label %d outside [0,%d)", i, y, h.classes)
		}
	}
	return nil
}

func (h classifyHead[T]) Loss(z []T, labels []int32, scale T, dz []T) (float64, int) {
	return softmaxCE(z, labels, h.classes, scale, dz)
}

// Architecture names accepted by Config.Arch (and `mpignn train --model`).
const (
	ArchSAGE = "sage"
	ArchGCN  = "gcn"
	ArchGAT  = "gat"
	// ArchRGCN and ArchHSAGE are the heterogeneous architectures.
	ArchRGCN  = "rgcn"
	ArchHSAGE = "hsage"
)

// archSpec is one registry entry: how to validate a configuration of the
// architecture and how to build its layer l in either precision. (Go has
// no generic function values, hence one constructor per element type.)
type archSpec struct {
	name   string
	doc    string
	hetero bool // needs Config.Hetero and typed blocks

	validate func(Config) error // architecture-specific checks only
	new32    func(c Config, l int) Layer[float32]
	new64    func(c Config, l int) Layer[float64]
}

// archRegistry returns the registry. It is a function, not a package
// variable, so nothing can modify it at run time.
func archRegistry() []archSpec {
	return []archSpec{
		{
			name: ArchSAGE, doc: "GraphSAGE, mean aggregator: H_dst·W_self + mean(H_nbr)·W_neigh + b",
			validate: noAttention,
			new32:    func(c Config, l int) Layer[float32] { return newSAGE[float32](c, l) },
			new64:    func(c Config, l int) Layer[float64] { return newSAGE[float64](c, l) },
		},
		{
			name: ArchGCN, doc: "GCN, symmetric normalisation with self-loops over the sampled block",
			validate: noAttention,
			new32:    func(c Config, l int) Layer[float32] { return newGCN[float32](c, l) },
			new64:    func(c Config, l int) Layer[float64] { return newGCN[float64](c, l) },
		},
		{
			name: ArchGAT, doc: "GAT, multi-head attention (LeakyReLU 0.2, self edge), heads concatenated in hidden layers, averaged in the last",
			validate: validateGAT,
			new32:    func(c Config, l int) Layer[float32] { return newGAT[float32](c, l) },
			new64:    func(c Config, l int) Layer[float64] { return newGAT[float64](c, l) },
		},
		{
			name: ArchRGCN, hetero: true,
			doc:      "R-GCN: H_dst·W_self + sum over relations r of mean_r(H_nbr)·W_r + b, optional basis decomposition W_r = sum_b a_rb·V_b",
			validate: noAttention,
			new32:    func(c Config, l int) Layer[float32] { return newRGCN[float32](c, l) },
			new64:    func(c Config, l int) Layer[float64] { return newRGCN[float64](c, l) },
		},
		{
			name: ArchHSAGE, hetero: true,
			doc:      "HeteroSAGE: one GraphSAGE per relation, summed per destination type (PyG to_hetero, aggr=sum)",
			validate: validateHSAGE,
			new32:    func(c Config, l int) Layer[float32] { return newHSAGE[float32](c, l) },
			new64:    func(c Config, l int) Layer[float64] { return newHSAGE[float64](c, l) },
		},
	}
}

// Archs returns the names of the registered homogeneous architectures (the
// ones a Config without Hetero can name).
func Archs() []string {
	var names []string
	for _, a := range archRegistry() {
		if !a.hetero {
			names = append(names, a.name)
		}
	}
	return names
}

// HeteroArchs returns the names of the registered heterogeneous
// architectures (they need Config.Hetero and typed blocks).
func HeteroArchs() []string {
	var names []string
	for _, a := range archRegistry() {
		if a.hetero {
			names = append(names, a.name)
		}
	}
	return names
}

// ArchDoc returns a one-line description of a registered architecture ("" if
// unknown).
func ArchDoc(name string) string {
	a, err := lookupArch(name)
	if err != nil {
		return ""
	}
	return a.doc
}

// lookupArch finds an architecture by name; "" means GraphSAGE, the only
// architecture before the registry existed.
func lookupArch(name string) (archSpec, error) {
	if name == "" {
		name = ArchSAGE
	}
	for _, a := range archRegistry() {
		if a.name == name {
			return a, nil
		}
	}
	return archSpec{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(append(Archs(), HeteroArchs()...), ", "))
}

// newLayer builds layer l of a validated configuration in precision T.
func newLayer[T Float](a archSpec, c Config, l int) Layer[T] {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(a.new32(c, l)).(Layer[T])
	}
	return any(a.new64(c, l)).(Layer[T])
}

// noAttention refuses GAT-only settings on architectures without attention,
// so a config never carries settings that have no effect.
func noAttention(c Config) error {
	switch {
	case c.Heads != 0:
		return config.Errorf("{Heads} applies to {Arch} gat only, not %s", c.ArchName())
	case c.AttnDropout != 0:
		return config.Errorf("{AttnDropout} applies to {Arch} gat only, not %s", c.ArchName())
	}
	return nil
}

func validateGAT(c Config) error {
	switch {
	case c.Heads < 1:
		return config.Errorf("{Heads} %d must be positive", c.Heads)
	case !(c.AttnDropout >= 0 && c.AttnDropout < 1):
		return config.Errorf("{AttnDropout} %v must be in [0,1)", c.AttnDropout)
	case c.Layers > 1 && c.Hidden%c.Heads != 0:
		return config.Errorf("{Hidden} %d must be a multiple of {Heads} %d (hidden layers concatenate the heads)", c.Hidden, c.Heads)
	}
	return nil
}
