package train

import (
	"errors"
	"fmt"

	"mpignn/sample"
	"mpignn/train/kernels"
)

// Layer-wise inference (DistDGL's inference()): instead of sampling an
// L-hop neighbourhood per seed, the caller computes layer 0 for EVERY node
// from all its in-neighbours, keeps those rows, computes layer 1 from them,
// and so on. Each node's row of each layer is computed once, so the cost is
// linear in the edges rather than exponential in the hops, and the result
// is the model's exact full-neighbourhood output: the same as evaluating
// with fanout -1 at every layer, up to float summation order.
//
// Layerwise runs one layer of the model at a time over one
// full-neighbourhood block; package train/dtrain drives it over the
// distributed graph. It is a view of the model (same weights, same work
// buffers): not safe for concurrent use, nor between a Train's forward
// and backward.
type Layerwise struct{ m *Model }

// OutWidth returns the width of the model's output rows (the logits, or
// the embedding a decoder scores): the last layer's, or with JK the map's.
func (lw Layerwise) OutWidth() int { return lw.m.n.cfg.Classes }

// JK reports whether the model has jumping knowledge: its output rows
// are then not the last Layer's but JK's over every layer's rows of the
// nodes (PyG's BasicGNN.inference refuses cat and max; mpignn keeps each
// layer's rows of a rank's nodes instead).
func (lw Layerwise) JK() bool { return lw.m.n.cfg.JK != "" }

// JKOutput returns the output rows (OutDim of the model: Classes wide) of
// n nodes from rows[l], layer l's rows of the same nodes (as Layer returns
// them, Hidden wide), through the jumping knowledge combination and map.
// The result aliases a work buffer valid until the next call.
func (lw Layerwise) JKOutput(rows [][]float32, n int) ([]float32, error) {
	c := lw.m.n.cfg
	if c.JK == "" {
		return nil, errors.New("infer jk: the model has no jumping knowledge")
	}
	if len(rows) != c.Layers {
		return nil, fmt.Errorf("infer jk: got %d layers' rows for %d layers", len(rows), c.Layers)
	}
	for l, r := range rows {
		if len(r) != n*c.Hidden {
			return nil, fmt.Errorf("infer jk: layer %d: got %d values, want %d (%d nodes x %d)", l, len(r), n*c.Hidden, n, c.Hidden)
		}
	}
	return lw.m.n.bw.jkForward(rows, n), nil
}

// Layerwise returns the model's layer-wise inference view.
func (m *Model) Layerwise() Layerwise {
	m.n.roundWeights() // a bf16 model's weights as they are now, for every layer it runs
	return Layerwise{m: m}
}

// NumLayers returns the number of message-passing layers.
func (lw Layerwise) NumLayers() int { return lw.m.n.cfg.Layers }

// InDim returns the row width layer l reads. A heterogeneous model's layer
// 0 reads its projected inputs (Hidden wide, see Input).
func (lw Layerwise) InDim(l int) int {
	n := lw.m.n
	if n.het != nil && l == 0 {
		return n.cfg.Hidden
	}
	in, _ := n.cfg.LayerDims(l)
	return in
}

// OutDim returns the row width layer l writes (the last layer: the logits,
// or the embedding a decoder scores; with JK every layer writes Hidden
// rows and JKOutput the model's).
func (lw Layerwise) OutDim(l int) int {
	_, out := lw.m.n.cfg.LayerDims(l)
	return out
}

// NeedsSrcDegree reports whether Layer needs the in-degree of every source
// node for layers above the first: GCN normalises edge j -> i by the
// degrees of both ends, and a source's degree is counted where it is a
// destination, in the layer below.
func (lw Layerwise) NeedsSrcDegree() bool { return lw.m.n.srcDeg != nil && lw.m.n.srcDeg(lw.m.n.cfg) }

// FirstLayerSrcDegree reports whether Layer (and LayerSparse) need the
// source degrees on the first layer too (GCN with gcn_norm "sym"). The
// degrees are then every node's in-degree in the graph, which the caller
// must know before layer 0.
func (lw Layerwise) FirstLayerSrcDegree() bool {
	return lw.m.n.firstSrcDeg != nil && lw.m.n.firstSrcDeg(lw.m.n.cfg)
}

// Typed reports whether the model is heterogeneous: its layer 0 reads the
// typed input projections of Input, and its blocks carry Etype.
func (lw Layerwise) Typed() bool { return lw.m.n.het != nil }

// Input returns the projected input rows x·W_in,t + b_in,t (Hidden wide)
// of len(x)/InDims[t] nodes of type t of a heterogeneous model, as its
// forward pass computes them in evaluation mode. The result aliases a work
// buffer valid until the next Input.
func (lw Layerwise) Input(t int, x []float32) ([]float32, error) {
	h := lw.m.n.het
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
		kernels.Gemm(false, false, n, hd, d, 1, x, d, h.w[t], hd, 1, h.proj, hd)
	}
	return h.proj, nil
}

// Layer runs layer l in evaluation mode over b, a block whose destinations
// have ALL their in-neighbours (fanout -1), and returns the b.NumDst output
// rows, after the ReLU for every layer but the last (the rows the next
// layer reads). h holds the layer's input rows of b.Nodes: the features
// for layer 0 of a homogeneous model, Input's projections for layer 0 of a
// heterogeneous one, else the previous layer's rows. For l > 0 of a model
// that NeedsSrcDegree, srcDeg[j] is the in-degree of b.Nodes[j] (without
// self-loops) in the layer below, which with full neighbourhoods is its
// in-degree in the graph; so is layer 0 when FirstLayerSrcDegree;
// otherwise srcDeg is ignored and may be nil. The result aliases the
// layer's output buffer, valid until the next call for the same l.
func (lw Layerwise) Layer(l int, b *sample.Block, h []float32, srcDeg []int32) ([]float32, error) {
	return lw.layer(l, b, h, nil, srcDeg)
}

// LayerSparse is Layer for layer 0 of a homogeneous model with the input
// rows of b.Nodes as sparse rows (a sparse-feature partition): the layer
// projects the stored entries first, as in training. srcDeg is as for
// Layer (needed on layer 0 only if FirstLayerSrcDegree).
func (lw Layerwise) LayerSparse(b *sample.Block, xs *sample.SparseRows, srcDeg []int32) ([]float32, error) {
	n := lw.m.n
	if n.het != nil {
		return nil, errors.New("infer layer 0: a heterogeneous model takes dense per-type inputs, not sparse rows")
	}
	if xs.Rows() != b.NumSrc() || xs.Cols != n.cfg.InDim {
		return nil, fmt.Errorf("infer layer 0: got %d sparse input rows of width %d, want %d x %d", xs.Rows(), xs.Cols, b.NumSrc(), n.cfg.InDim)
	}
	if err := xs.Check(); err != nil {
		return nil, fmt.Errorf("infer layer 0: %w", err)
	}
	return lw.layer(0, b, xs.Values, xs, srcDeg)
}

// layer is Layer with layer 0's inputs optionally sparse (h is then xs's
// values).
func (lw Layerwise) layer(l int, b *sample.Block, h []float32, xs *sample.SparseRows, srcDeg []int32) ([]float32, error) {
	n := lw.m.n
	if l < 0 || l >= n.cfg.Layers {
		return nil, fmt.Errorf("infer layer %d: the model has %d layers", l, n.cfg.Layers)
	}
	if err := checkBlock(b); err != nil {
		return nil, fmt.Errorf("infer layer %d: %w", l, err)
	}
	if err := checkEdgeFeat(b, n.cfg.EdgeDim); err != nil {
		return nil, fmt.Errorf("infer layer %d: %w", l, err)
	}
	in, out := lw.InDim(l), lw.OutDim(l)
	if want := b.NumSrc() * in; xs == nil && len(h) != want {
		return nil, fmt.Errorf("infer layer %d: got %d input values, want %d (%d nodes x %d)", l, len(h), want, b.NumSrc(), in)
	}
	p := Pass{Sparse: xs, BF16: n.bf16}
	if (l > 0 || lw.FirstLayerSrcDegree()) && lw.NeedsSrcDegree() {
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
	switch {
	case n.bw != nil && !n.cfg.convToOut(l):
		o = n.bw.layerForward(l, b, o, h, xs, false, 0, MaskKey{})
	case l < n.cfg.Layers-1:
		reluDropout(o, out, b.Orig[:b.NumDst], l, false, 0, MaskKey{})
	}
	return o, nil
}

// Score returns the summed loss of a classifier's logits (one row of
// Classes per label, as the last Layer returns them) against labels and
// the number of rows whose arg-max is the label, as Evaluate reports them
// for a batch.
func (lw Layerwise) Score(logits []float32, labels []int32) (float64, int, error) {
	n := lw.m.n
	if n.cfg.IsLink() {
		return 0, 0, fmt.Errorf("score logits: a link predictor (decoder %q) has no node labels", n.cfg.Decoder)
	}
	if len(logits) != len(labels)*n.cfg.Classes {
		return 0, 0, fmt.Errorf("score logits: %d values for %d labels of %d classes", len(logits), len(labels), n.cfg.Classes)
	}
	if err := (classifyHead[float32]{classes: n.cfg.Classes}).checkLabels(labels); err != nil {
		return 0, 0, err
	}
	n.dz = grow(n.dz, len(logits))
	loss, correct := n.head.Loss(logits, &sample.Batch{Labels: labels}, 0, n.dz)
	return loss, correct, nil
}

// ScoreTargets is Score for a model of real targets: the summed loss of
// output rows (Classes each) against targets of the same shape (NaN
// unlabelled) and, for multilabel, the nodes whose every labelled target
// is predicted right.
func (lw Layerwise) ScoreTargets(rows, targets []float32) (float64, int, error) {
	n := lw.m.n
	if n.cfg.Targets == "" {
		return 0, 0, errors.New("score targets: the model has no real targets")
	}
	c := n.cfg.Classes
	b := &sample.Batch{Targets: targets, TargetDim: c}
	if len(rows) != len(targets) {
		return 0, 0, fmt.Errorf("score targets: %d values for %d targets", len(rows), len(targets))
	}
	if err := n.head.Check(b, len(targets)/c); err != nil {
		return 0, 0, err
	}
	n.dz = grow(n.dz, len(rows))
	loss, correct := n.head.Loss(rows, b, 0, n.dz)
	return loss, correct, nil
}

// Predict appends to dst the arg-max class of every row of logits (one
// row of Classes per node, as the last Layer returns them).
func (lw Layerwise) Predict(logits []float32, dst []int32) []int32 {
	return appendArgmax(dst, logits, lw.m.n.cfg.Classes)
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

// checkEdgeFeat checks that a block carries the edge features a model of
// EdgeDim edgeDim reads (none needed when 0: such a model ignores them), so
// that a store opened without them (dsample.StoreOptions.NoEdgeFeat) or
// over another partition is one error, not a layer reading past a slice.
func checkEdgeFeat(b *sample.Block, edgeDim int) error {
	if edgeDim == 0 {
		return nil
	}
	if b.EdgeFeatDim != edgeDim || len(b.EdgeFeat) != edgeDim*len(b.Indices) {
		return fmt.Errorf("the block carries %d edge features per edge (%d values for %d edges) but the model reads %d (edge_dim)", b.EdgeFeatDim, len(b.EdgeFeat), len(b.Indices), edgeDim)
	}
	return nil
}
