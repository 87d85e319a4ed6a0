package train

import (
	"errors"
	"fmt"
	"slices"

	"mpignn/graph"
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// HeteroConfig is the type structure a heterogeneous model is built for: the
// node types and relations of a graph.Schema (same order, same homogenized
// original ids) and the width of each type's input rows.
type HeteroConfig struct {
	// NodeTypes are the node type names, sorted (graph.Schema.NodeTypes).
	NodeTypes []string `json:"node_types"`
	// NodeOrig are the len(NodeTypes)+1 homogenized original id offsets:
	// type t's nodes have original ids [NodeOrig[t], NodeOrig[t+1]). The
	// model finds a block node's type from Block.Orig through them.
	NodeOrig []int64 `json:"node_orig"`
	// Relations are the canonical relation names src___rel___dst, sorted;
	// relation r is the edge type r of Block.Etype.
	Relations []string `json:"relations"`
	// InDims is the width of each node type's input rows: its feature
	// dimension, or the embedding dimension of a learnable type.
	InDims []int `json:"in_dims"`
	// Bases is R-GCN's number of bases (W_r = sum_b a_rb·V_b); 0 keeps one
	// full weight per relation. HeteroSAGE takes 0.
	Bases int `json:"bases,omitempty"`
	// Learnable marks the node types whose input rows are trained (learnable
	// embeddings): for them the model computes Model.InputGrad. Nil means
	// none.
	Learnable []bool `json:"learnable,omitempty"`
}

// NewHeteroConfig returns the HeteroConfig of schema s with per-type input
// widths inDims, bases R-GCN bases and the learnable types (nil: none).
func NewHeteroConfig(s *graph.Schema, inDims []int, bases int, learnable []bool) *HeteroConfig {
	h := &HeteroConfig{
		NodeTypes: slices.Clone(s.NodeTypes),
		NodeOrig:  slices.Clone(s.NodeOrig),
		InDims:    slices.Clone(inDims),
		Bases:     bases,
		Learnable: slices.Clone(learnable),
	}
	for _, r := range s.Relations {
		h.Relations = append(h.Relations, r.String())
	}
	return h
}

// NumTypes returns the number of node types.
func (h *HeteroConfig) NumTypes() int { return len(h.NodeTypes) }

// NumRels returns the number of relations R.
func (h *HeteroConfig) NumRels() int { return len(h.Relations) }

// IsLearnable reports whether node type t's inputs are trained.
func (h *HeteroConfig) IsLearnable(t int) bool { return t < len(h.Learnable) && h.Learnable[t] }

// Schema returns the graph.Schema the config describes (validated
// configs only; it parses the relation names).
func (h *HeteroConfig) Schema() (*graph.Schema, error) {
	s := &graph.Schema{NodeTypes: slices.Clone(h.NodeTypes), NodeOrig: slices.Clone(h.NodeOrig)}
	for i, name := range h.Relations {
		r, err := graph.ParseRelation(name)
		if err != nil {
			return nil, fmt.Errorf("model config: hetero.relations[%d]: %w", i, err)
		}
		s.Relations = append(s.Relations, r)
	}
	return s, nil
}

// Validate checks the config on its own: node types named, sorted and
// distinct, offsets per type from 0 and not decreasing, relations parsed,
// sorted and between known types, a positive input width per type, Bases
// in [0, relations] and a Learnable flag per type (the architecture checks
// whether it takes Bases). Config.Validate calls it.
func (h *HeteroConfig) Validate() error {
	nt, nr := len(h.NodeTypes), len(h.Relations)
	if nt == 0 {
		return errors.New("model config: hetero.node_types is empty")
	}
	for i, name := range h.NodeTypes {
		if name == "" {
			return fmt.Errorf("model config: hetero.node_types[%d] is empty", i)
		}
		if i > 0 && h.NodeTypes[i-1] >= name {
			return fmt.Errorf("model config: hetero.node_types must be sorted and distinct (%q then %q)", h.NodeTypes[i-1], name)
		}
	}
	if len(h.NodeOrig) != nt+1 || h.NodeOrig[0] != 0 {
		return fmt.Errorf("model config: hetero.node_orig needs %d offsets starting at 0 (one per node type plus the end), got %v", nt+1, h.NodeOrig)
	}
	for t := 0; t < nt; t++ {
		if h.NodeOrig[t+1] < h.NodeOrig[t] {
			return fmt.Errorf("model config: hetero.node_orig decreases at type %q (%d then %d)", h.NodeTypes[t], h.NodeOrig[t], h.NodeOrig[t+1])
		}
	}
	if nr == 0 {
		return errors.New("model config: hetero.relations is empty")
	}
	s, err := h.Schema()
	if err != nil {
		return err
	}
	for i, r := range s.Relations {
		if s.TypeIndex(r.Src) < 0 || s.TypeIndex(r.Dst) < 0 {
			return fmt.Errorf("model config: hetero.relations[%d] %s names a node type not in hetero.node_types", i, r)
		}
		if i > 0 && h.Relations[i-1] >= h.Relations[i] {
			return fmt.Errorf("model config: hetero.relations must be sorted and distinct (%q then %q)", h.Relations[i-1], h.Relations[i])
		}
	}
	if len(h.InDims) != nt {
		return fmt.Errorf("model config: hetero.in_dims has %d widths for %d node types", len(h.InDims), nt)
	}
	for t, d := range h.InDims {
		if d <= 0 {
			return fmt.Errorf("model config: hetero.in_dims[%d] (type %q) is %d, must be positive", t, h.NodeTypes[t], d)
		}
	}
	if h.Bases < 0 || h.Bases > nr {
		return fmt.Errorf("model config: hetero.bases %d must be in [0,%d] (0 = one weight per relation)", h.Bases, nr)
	}
	if h.Learnable != nil && len(h.Learnable) != nt {
		return fmt.Errorf("model config: hetero.learnable has %d flags for %d node types", len(h.Learnable), nt)
	}
	return nil
}

// equal compares two configs by value (nil equals only nil).
func (h *HeteroConfig) equal(o *HeteroConfig) bool {
	if h == nil || o == nil {
		return h == o
	}
	return slices.Equal(h.NodeTypes, o.NodeTypes) && slices.Equal(h.NodeOrig, o.NodeOrig) &&
		slices.Equal(h.Relations, o.Relations) && slices.Equal(h.InDims, o.InDims) &&
		h.Bases == o.Bases && slices.Equal(h.Learnable, o.Learnable)
}

func validateHSAGE(c Config) error {
	if c.Hetero != nil && c.Hetero.Bases != 0 {
		return fmt.Errorf("model config: hetero.bases %d applies to rgcn only, not hsage", c.Hetero.Bases)
	}
	return nil
}

// inputPrefix names the typed input projections in Config.Tensors
// ("in.paper.w").
const inputPrefix = "in."

// inputSpecs lists the typed input projections of a heterogeneous config in
// buffer order: per node type W (InDims[t] x Hidden) and b (1 x Hidden).
func inputSpecs(c Config) []ParamSpec {
	if c.Hetero == nil {
		return nil
	}
	var specs []ParamSpec
	for t, name := range c.Hetero.NodeTypes {
		specs = append(specs,
			ParamSpec{Name: inputPrefix + name + ".w", Rows: c.Hetero.InDims[t], Cols: c.Hidden},
			ParamSpec{Name: inputPrefix + name + ".b", Rows: 1, Cols: c.Hidden, Zero: true})
	}
	return specs
}

// relTypes returns the source and destination node type of every relation
// of a validated config.
func relTypes(h *HeteroConfig) (src, dst []int) {
	s, _ := h.Schema()
	for r := range s.Relations {
		src = append(src, s.SrcType(r))
		dst = append(dst, s.DstType(r))
	}
	return src, dst
}

// hetInput is the typed input stage of a heterogeneous model: it finds the
// node types of every block, validates the typed edges, and projects each
// node's input row (from its type's matrix) to Hidden:
//
//	x0[i] = xs[t][k]·W_in,t + b_in,t   for blocks[0] node i, the k-th of type t
//
// It keeps the per-type input gradients of learnable types.
type hetInput[T Float] struct {
	cfg            *HeteroConfig
	hidden         int
	inputDrop      float32
	relSrc, relDst []int

	w, b, gw, gb [][]T // per type

	types [][]int32 // per block: node type of each node
	pos   []int32   // blocks[0] node i -> its row in xs[type]
	origT [][]int64 // per type: original ids of blocks[0]'s nodes of the type, in order
	xs    [][]T     // the input rows the projection read (dropped copies when training)
	xd    [][]T     // dropout copies, per type
	proj  []T       // one type's projected rows (forward) or their gradient (backward)
	x0    []T       // projected rows of blocks[0]'s nodes, NumSrc x Hidden
	dxs   [][]T     // per learnable type: scale·d(loss)/d(xs[t]) of the last backward
	done  []bool    // per type: dxs[t] is from a backward over the current forward
	drop  bool      // the last forward applied input dropout

	// inferTypes are the node types of the block of the last Layerwise.Layer.
	inferTypes []int32
}

func newHetInput[T Float](c Config) *hetInput[T] {
	nt := c.Hetero.NumTypes()
	h := &hetInput[T]{cfg: c.Hetero, hidden: c.Hidden, inputDrop: c.InputDropout,
		types: make([][]int32, c.Layers), origT: make([][]int64, nt), xs: make([][]T, nt),
		xd: make([][]T, nt), dxs: make([][]T, nt), done: make([]bool, nt)}
	h.relSrc, h.relDst = relTypes(c.Hetero)
	return h
}

func (h *hetInput[T]) bind(p, g [][]T) {
	nt := h.cfg.NumTypes()
	h.w, h.b, h.gw, h.gb = make([][]T, nt), make([][]T, nt), make([][]T, nt), make([][]T, nt)
	for t := 0; t < nt; t++ {
		h.w[t], h.b[t], h.gw[t], h.gb[t] = p[2*t], p[2*t+1], g[2*t], g[2*t+1]
	}
}

// typeOf returns the node type of original id o, or -1 outside the schema.
func (h *hetInput[T]) typeOf(o int64) int32 {
	off := h.cfg.NodeOrig
	if o < 0 || o >= off[len(off)-1] {
		return -1
	}
	// First t with off[t+1] > o.
	lo, hi := 0, len(off)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if off[m+1] > o {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return int32(lo)
}

// blockTypes appends to ty the node type of each of b's nodes and checks
// that every typed edge joins nodes of its relation's source and
// destination types, grouped by relation ascending per destination.
func (h *hetInput[T]) blockTypes(b *sample.Block, ty []int32) ([]int32, error) {
	nr := int32(h.cfg.NumRels())
	for i, o := range b.Orig {
		t := h.typeOf(o)
		if t < 0 {
			return ty, fmt.Errorf("node %d has original id %d outside the schema's [0,%d)", i, o, h.cfg.NodeOrig[len(h.cfg.NodeOrig)-1])
		}
		ty = append(ty, t)
	}
	if len(b.Etype) != len(b.Indices) {
		return ty, fmt.Errorf("%d edge types for %d edges; a heterogeneous model needs typed blocks (Block.Etype)", len(b.Etype), len(b.Indices))
	}
	for i := 0; i < b.NumDst; i++ {
		prev := int32(-1)
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			r := b.Etype[e]
			switch {
			case r < 0 || r >= nr:
				return ty, fmt.Errorf("edge %d has relation %d outside [0,%d)", e, r, nr)
			case r < prev:
				return ty, fmt.Errorf("destination %d's edges are not grouped by relation ascending (%d after %d)", i, r, prev)
			case int(ty[i]) != h.relDst[r]:
				return ty, fmt.Errorf("edge %d of relation %s ends at a %s node", e, h.cfg.Relations[r], h.cfg.NodeTypes[ty[i]])
			case int(ty[b.Indices[e]]) != h.relSrc[r]:
				return ty, fmt.Errorf("edge %d of relation %s starts at a %s node", e, h.cfg.Relations[r], h.cfg.NodeTypes[ty[b.Indices[e]]])
			}
			prev = r
		}
	}
	return ty, nil
}

// prepare finds the node types of every block and validates the typed
// edges and the inputs xs against them (the block structure is checked
// already). It also fills the per-type row positions of blocks[0]'s nodes.
func (h *hetInput[T]) prepare(blocks []sample.Block, xs [][]T) error {
	for l := range blocks {
		ty, err := h.blockTypes(&blocks[l], h.types[l][:0])
		if err != nil {
			return fmt.Errorf("model: block %d: %w", l, err)
		}
		h.types[l] = ty
	}
	nt := h.cfg.NumTypes()
	if len(xs) != nt {
		return fmt.Errorf("model: got %d input matrices for %d node types", len(xs), nt)
	}
	b0 := &blocks[0]
	h.pos = slices.Grow(h.pos[:0], b0.NumSrc())
	for t := range h.origT {
		h.origT[t] = h.origT[t][:0]
	}
	for i, t := range h.types[0] {
		h.pos = append(h.pos, int32(len(h.origT[t])))
		h.origT[t] = append(h.origT[t], b0.Orig[i])
	}
	for t := 0; t < nt; t++ {
		if want := len(h.origT[t]) * h.cfg.InDims[t]; len(xs[t]) != want {
			return fmt.Errorf("model: node type %q: got %d input values, want %d (%d nodes x %d)", h.cfg.NodeTypes[t], len(xs[t]), want, len(h.origT[t]), h.cfg.InDims[t])
		}
	}
	return nil
}

// forward applies input dropout (training) and the typed projections and
// returns the Hidden-wide input rows of blocks[0] (valid until the next
// forward). prepare must have succeeded on the same blocks and xs.
func (h *hetInput[T]) forward(b0 *sample.Block, xs [][]T, train bool, key MaskKey) []T {
	hd := h.hidden
	h.drop = train && h.inputDrop > 0
	h.x0 = grow(h.x0, b0.NumSrc()*hd)
	for t := range xs {
		h.done[t] = false
		x, d := xs[t], h.cfg.InDims[t]
		if h.drop {
			// A copy: xs belongs to the caller, which may reuse it.
			h.xd[t] = grow(h.xd[t], len(x))
			dropoutRows(h.xd[t], x, d, h.origT[t], InputLayer, h.inputDrop, key, false)
			x = h.xd[t]
		}
		h.xs[t] = x
		n := len(h.origT[t])
		if n == 0 {
			continue
		}
		h.proj = grow(h.proj, n*hd)
		fillRows(h.proj, n, h.b[t])
		kernels.Gemm(false, false, n, hd, d, 1, x, d, h.w[t], hd, 1, h.proj, hd)
		h.moveRows(t, n, h.x0, true)
	}
	return h.x0
}

// backward adds the projections' parameter gradients given dx0, the
// gradient w.r.t. the projected rows, and computes the input gradients of
// the learnable types (through the input dropout masks of the forward).
func (h *hetInput[T]) backward(dx0 []T, train bool, key MaskKey) {
	hd := h.hidden
	for t := range h.xs {
		n, d := len(h.origT[t]), h.cfg.InDims[t]
		learn := h.cfg.IsLearnable(t)
		if learn {
			h.dxs[t] = grow(h.dxs[t], n*d)
			h.done[t] = true
		}
		if n == 0 {
			continue
		}
		h.proj = grow(h.proj, n*hd)
		h.moveRows(t, n, dx0, false)
		colSum(h.proj, n, hd, h.gb[t])
		kernels.Gemm(true, false, d, hd, n, 1, h.xs[t], d, h.proj, hd, 1, h.gw[t], hd)
		if !learn {
			continue
		}
		dx := h.dxs[t]
		kernels.Gemm(false, true, n, d, hd, 1, h.proj, hd, h.w[t], hd, 0, dx, d)
		if h.drop {
			// d(dropped x)/dx is the mask times the inverted-dropout scale.
			scale := T(1 / (1 - float64(h.inputDrop)))
			thr := sample.MaskThreshold(h.inputDrop)
			orig := h.origT[t]
			par.Range(n, n*d, func(lo, hi int) {
				for k := lo; k < hi; k++ {
					rk := sample.MaskKey(key.Seed, int(key.Step), InputLayer, orig[k])
					row := dx[k*d : (k+1)*d]
					for u := range row {
						if !sample.MaskKeep(rk, u, thr) {
							row[u] = 0
						} else {
							row[u] *= scale
						}
					}
				}
			})
		}
	}
}

// moveRows copies between the n type-local rows of node type t in h.proj
// and the rows of blocks[0]'s nodes of that type in x (Hidden wide): into
// x when toX, else out of it. Every row has one writer.
func (h *hetInput[T]) moveRows(t, n int, x []T, toX bool) {
	hd, ty := h.hidden, h.types[0]
	par.Range(len(ty), len(ty)+n*hd, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if int(ty[i]) != t {
				continue
			}
			k := int(h.pos[i])
			if toX {
				copy(x[i*hd:(i+1)*hd], h.proj[k*hd:(k+1)*hd])
			} else {
				copy(h.proj[k*hd:(k+1)*hd], x[i*hd:(i+1)*hd])
			}
		}
	})
}

// checkHetero validates typed inputs against blocks (checked) and
// prepares the node types.
func (n *net[T]) checkHetero(blocks []sample.Block, xs [][]T) error {
	if n.het == nil {
		return fmt.Errorf("model: a %s model is homogeneous; typed inputs (Batch.XT) need a heterogeneous config", n.cfg.ArchName())
	}
	return n.het.prepare(blocks, xs)
}

// forwardHetero is forward for typed inputs.
func (n *net[T]) forwardHetero(blocks []sample.Block, xs [][]T, train bool, key MaskKey) {
	x0 := n.het.forward(&blocks[0], xs, train, key)
	n.xin, n.xsIn, n.key = x0, nil, key
	n.forwardLayers(blocks, x0, train, key)
}

// InputGrad returns scale·d(loss)/d(Batch.XT[t]) of the last Train of a
// heterogeneous model: rows aligned with XT[t], InDims[t] wide.
// It is nil for a type not marked learnable, for a homogeneous model, and
// when no backward followed the last forward. The result aliases a work
// buffer, valid until the next step.
func (m *Model) InputGrad(t int) []float32 {
	h := m.n.het
	if h == nil || t < 0 || t >= len(h.dxs) || !h.done[t] {
		return nil
	}
	return h.dxs[t]
}
