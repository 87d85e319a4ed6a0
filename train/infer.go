package train

import (
	"errors"
	"fmt"

	"mpignn/sample"
)

// Layer-wise inference (DistDGL's inference()): instead of sampling an
// L-hop neighbourhood per seed, the caller computes layer 0 for EVERY node
// from all its in-neighbours, keeps those rows, computes layer 1 from them,
// and so on. Each node's row of each layer is computed once, so the cost is
// linear in the edges rather than exponential in the hops, and the result
// is the model's exact full-neighbourhood output: the same as evaluating
// with fanout -1 at every layer, up to float summation order.
//
// The methods below run one layer of the model over one full-neighbourhood
// block at a time; sample/dsample drives them over the distributed graph.

// NumLayers returns the number of message-passing layers.
func (m *Model) NumLayers() int { return m.n.cfg.Layers }

// LayerInDim and LayerOutDim return the row widths layer l reads and
// writes. A heterogeneous model's layer 0 reads its projected inputs
// (Hidden wide, see InferInput).
func (m *Model) LayerInDim(l int) int {
	if m.n.het != nil && l == 0 {
		return m.n.cfg.Hidden
	}
	in, _ := m.n.cfg.LayerDims(l)
	return in
}

// LayerOutDim returns the row width layer l writes (the last layer: the
// logits, or the embedding a decoder scores).
func (m *Model) LayerOutDim(l int) int {
	_, out := m.n.cfg.LayerDims(l)
	return out
}

// NeedsSrcDegree reports whether InferLayer needs the in-degree of every
// source node for layers above the first: GCN normalises edge j -> i by
// the degrees of both ends, and a source's degree is counted where it is a
// destination, in the layer below.
func (m *Model) NeedsSrcDegree() bool { return m.n.cfg.ArchName() == ArchGCN }

// FirstLayerSrcDegree reports whether InferLayer (and InferLayerSparse)
// need the source degrees on the first layer too: GCN with GCNNorm "sym".
// The degrees are then every node's in-degree in the graph, which the
// caller must know before layer 0.
func (m *Model) FirstLayerSrcDegree() bool { return m.n.cfg.GCNNorm == GCNNormSym }

// Typed reports whether the model is heterogeneous: its layer 0 reads the
// typed input projections of InferInput, and its blocks carry Etype.
func (m *Model) Typed() bool { return m.n.het != nil }

// InferInput returns the projected input rows x·W_in,t + b_in,t (Hidden
// wide) of len(x)/InDims[t] nodes of type t of a heterogeneous model, as
// its forward pass computes them in evaluation mode. The result aliases a
// work buffer valid until the next InferInput.
func (m *Model) InferInput(t int, x []float32) ([]float32, error) {
	h := m.n.het
	if h == nil {
		return nil, errors.New("infer input: the model is homogeneous")
	}
	if t < 0 || t >= h.cfg.NumTypes() {
		return nil, fmt.Errorf("infer input: node type %d outside [0,%d)", t, h.cfg.NumTypes())
	}
	d, hd := h.cfg.InDims[t], h.hidden
	if len(x)%d != 0 {
		return nil, fmt.Errorf("infer input: node type %q: %d values are not rows of %d", h.cfg.NodeTypes[t], len(x), d)
	}
	n := len(x) / d
	h.proj = grow(h.proj, n*hd)
	for k := 0; k < n; k++ {
		copy(h.proj[k*hd:(k+1)*hd], h.b[t])
	}
	if n > 0 {
		gemm(false, false, n, hd, d, 1, x, d, h.w[t], hd, 1, h.proj, hd)
	}
	return h.proj, nil
}

// InferLayer runs layer l in evaluation mode over b, a block whose
// destinations have ALL their in-neighbours (fanout -1), and returns the
// b.NumDst output rows, after the ReLU for every layer but the last (the
// rows the next layer reads). h holds the layer's input rows of b.Nodes:
// the features for layer 0 of a homogeneous model, InferInput's
// projections for layer 0 of a heterogeneous one, else the previous
// layer's InferLayer rows. For l > 0 of a model that NeedsSrcDegree,
// srcDeg[j] is the in-degree of b.Nodes[j] (without self-loops) in the
// layer below, which with full neighbourhoods is its in-degree in the
// graph; so is layer 0 when FirstLayerSrcDegree; otherwise srcDeg is
// ignored and may be nil. The result aliases
// the layer's output buffer, valid until the next call for the same l.
func (m *Model) InferLayer(l int, b *sample.Block, h []float32, srcDeg []int32) ([]float32, error) {
	return m.inferLayer(l, b, h, nil, srcDeg)
}

// InferLayerSparse is InferLayer for layer 0 of a homogeneous model with
// the input rows of b.Nodes as sparse rows (a sparse-feature partition):
// the layer projects the stored entries first, as in training. srcDeg is
// as for InferLayer (needed on layer 0 only if FirstLayerSrcDegree).
func (m *Model) InferLayerSparse(b *sample.Block, xs *sample.SparseRows, srcDeg []int32) ([]float32, error) {
	if m.n.het != nil {
		return nil, errors.New("infer layer 0: a heterogeneous model takes dense per-type inputs, not sparse rows")
	}
	if xs.Rows() != b.NumSrc() || xs.Cols != m.n.cfg.InDim {
		return nil, fmt.Errorf("infer layer 0: got %d sparse input rows of width %d, want %d x %d", xs.Rows(), xs.Cols, b.NumSrc(), m.n.cfg.InDim)
	}
	if err := xs.Check(); err != nil {
		return nil, fmt.Errorf("infer layer 0: %w", err)
	}
	return m.inferLayer(0, b, xs.Values, xs, srcDeg)
}

// inferLayer is InferLayer with layer 0's inputs optionally sparse (h is
// then xs's values).
func (m *Model) inferLayer(l int, b *sample.Block, h []float32, xs *sample.SparseRows, srcDeg []int32) ([]float32, error) {
	n := m.n
	if l < 0 || l >= n.cfg.Layers {
		return nil, fmt.Errorf("infer layer %d: the model has %d layers", l, n.cfg.Layers)
	}
	if err := checkBlock(b); err != nil {
		return nil, fmt.Errorf("infer layer %d: %w", l, err)
	}
	in, out := m.LayerInDim(l), m.LayerOutDim(l)
	if want := b.NumSrc() * in; xs == nil && len(h) != want {
		return nil, fmt.Errorf("infer layer %d: got %d input values, want %d (%d nodes x %d)", l, len(h), want, b.NumSrc(), in)
	}
	p := Pass{Sparse: xs}
	if (l > 0 || m.FirstLayerSrcDegree()) && m.NeedsSrcDegree() {
		if len(srcDeg) != b.NumSrc() {
			return nil, fmt.Errorf("infer layer %d: got %d source degrees for %d nodes", l, len(srcDeg), b.NumSrc())
		}
		p.SrcDeg = srcDeg
	}
	if n.het != nil {
		types, err := n.het.blockTypes(b, n.het.inferTypes[:0])
		if err != nil {
			return nil, fmt.Errorf("infer layer %d: %w", l, err)
		}
		n.het.inferTypes = types
		p.Types = types
	}
	o := n.layers[l].Forward(&p, b, h)
	if l < n.cfg.Layers-1 {
		reluDropout(o, out, b.Orig[:b.NumDst], l, false, 0, MaskKey{})
	}
	return o, nil
}

// ScoreLogits returns the summed softmax cross-entropy of logits (one row
// of Classes per label) against labels and the number of rows whose
// arg-max is the label, as Evaluate reports them for a batch.
func (m *Model) ScoreLogits(logits []float32, labels []int32) (float64, int, error) {
	n := m.n
	if n.dec != nil {
		return 0, 0, fmt.Errorf("score logits: a link predictor (decoder %q) has no node labels", n.cfg.Decoder)
	}
	if len(logits) != len(labels)*n.cfg.Classes {
		return 0, 0, fmt.Errorf("score logits: %d values for %d labels of %d classes", len(logits), len(labels), n.cfg.Classes)
	}
	if err := n.head.Check(labels); err != nil {
		return 0, 0, err
	}
	n.dz = grow(n.dz, len(logits))
	loss, correct := n.head.Loss(logits, labels, 0, n.dz)
	return loss, correct, nil
}

// PredictRows appends to dst the arg-max class of every row of logits (one
// row of Classes per node, as InferLayer's last layer returns them).
func (m *Model) PredictRows(logits []float32, dst []int32) []int32 {
	return appendArgmax(dst, logits, m.n.cfg.Classes)
}

// checkBlock validates one block's structure (the per-block part of
// checkBlocks).
func checkBlock(b *sample.Block) error {
	ns := b.NumSrc()
	switch {
	case b.NumDst < 0 || b.NumDst > ns:
		return fmt.Errorf("num_dst %d outside [0,%d]", b.NumDst, ns)
	case len(b.Orig) != ns:
		return fmt.Errorf("%d orig ids for %d nodes", len(b.Orig), ns)
	case len(b.Indptr) != b.NumDst+1 || b.Indptr[0] != 0 || int(b.Indptr[b.NumDst]) != len(b.Indices):
		return fmt.Errorf("indptr (len %d) does not frame %d destinations and %d edges", len(b.Indptr), b.NumDst, len(b.Indices))
	}
	for i := 0; i < b.NumDst; i++ {
		if b.Indptr[i+1] < b.Indptr[i] {
			return fmt.Errorf("indptr decreases at destination %d", i)
		}
	}
	for e, j := range b.Indices {
		if j < 0 || int(j) >= ns {
			return fmt.Errorf("edge %d source %d outside [0,%d)", e, j, ns)
		}
	}
	return nil
}
