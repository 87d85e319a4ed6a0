package train

import (
	"fmt"

	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// relMean computes, for every relation r, the mean of the input rows over
// each destination's sampled r-neighbours, for the destinations of r's
// destination type only: agg[r] has one row per destination of that type,
// in block order (idx[t] lists them; pos maps a destination to its row). A
// destination without r-neighbours gets the zero row, as in the homogeneous
// mean aggregator. It relies on the typed edges being validated and grouped
// by relation (hetInput.prepare).
type relMean[T Float] struct {
	relDst []int   // destination type per relation
	inRels [][]int // per node type: relations ending there, ascending
	idx    [][]int32
	pos    []int32
	agg    [][]T // per relation
	dagg   [][]T // per relation, gradient w.r.t. agg (backward)

	bt   blockT  // the block's edges by source, for scatter
	ecof []T     // per edge: 1/|N_r(i)| of its destination i and relation r
	erow []int32 // per edge: its destination's row in agg[r]

	// ed is the edge-feature width (Config.EdgeDim; 0: none) and eagg[r]
	// the mean of the r-edges' feature rows per destination, laid out as
	// agg: the edge term mean_j e_ij·W_e,r of a layer is eagg[r]·W_e,r,
	// since the mean is linear. Edge features are inputs, not
	// activations: nothing flows back into them.
	ed   int
	eagg [][]T
}

func newRelMean[T Float](c Config) relMean[T] {
	_, dst := relTypes(c.Hetero)
	in := make([][]int, c.Hetero.NumTypes())
	for r, t := range dst {
		in[t] = append(in[t], r)
	}
	return relMean[T]{relDst: dst, inRels: in, idx: make([][]int32, len(in)),
		agg: make([][]T, len(dst)), dagg: make([][]T, len(dst)), ed: c.EdgeDim, eagg: make([][]T, len(dst))}
}

// index groups the destinations (types[:nd]) by node type.
func (a *relMean[T]) index(types []int32, nd int) {
	for t := range a.idx {
		a.idx[t] = a.idx[t][:0]
	}
	a.pos = a.pos[:0]
	for i, t := range types[:nd] {
		a.pos = append(a.pos, int32(len(a.idx[t])))
		a.idx[t] = append(a.idx[t], int32(i))
	}
}

// forward fills agg from the input rows h (w wide).
func (a *relMean[T]) forward(b *sample.Block, h []T, w int) {
	for r, t := range a.relDst {
		a.agg[r] = grow(a.agg[r], len(a.idx[t])*w)
		clearPar(a.agg[r])
	}
	// Each destination writes only its own rows, one per relation, so the
	// split over goroutines does not change any sum.
	par.Range(b.NumDst, len(b.Indices)*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := int(a.pos[i])
			for e, end := b.Indptr[i], b.Indptr[i+1]; e < end; {
				r, f := relRun(b.Etype, e, end)
				dst := a.agg[r][p*w : (p+1)*w]
				for _, j := range b.Indices[e:f] {
					kernels.Axpy(1, h[int(j)*w:(int(j)+1)*w], dst)
				}
				inv := T(1 / float64(f-e))
				for k := range dst {
					dst[k] *= inv
				}
				e = f
			}
		}
	})
	if a.ed > 0 {
		a.forwardEdges(b)
	}
}

// forwardEdges fills eagg from the block's edge features (the model checked
// their width against ed), one writer per destination as in forward.
func (a *relMean[T]) forwardEdges(b *sample.Block) {
	d := a.ed
	for r, t := range a.relDst {
		a.eagg[r] = grow(a.eagg[r], len(a.idx[t])*d)
		clearPar(a.eagg[r])
	}
	par.Range(b.NumDst, len(b.Indices)*d, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := int(a.pos[i])
			for e, end := b.Indptr[i], b.Indptr[i+1]; e < end; {
				r, f := relRun(b.Etype, e, end)
				dst := a.eagg[r][p*d : (p+1)*d]
				for k := e; k < f; k++ {
					for c, v := range b.EdgeFeat[int(k)*d : (int(k)+1)*d] {
						dst[c] += T(v)
					}
				}
				inv := T(1 / float64(f-e))
				for c := range dst {
					dst[c] *= inv
				}
				e = f
			}
		}
	})
}

// scatter is the adjoint of forward: it adds dagg[r][row of i]/|N_r(i)| to
// dh[j] for every sampled edge j -r-> i. Sources are shared between
// destinations, so it runs over sources (one writer per row of dh), each
// row taking its terms in the serial (destination, edge) order.
func (a *relMean[T]) scatter(b *sample.Block, w int, dh []T) {
	ne := len(b.Indices)
	a.ecof = grow(a.ecof, ne)
	a.erow = growIdx(a.erow, ne)
	par.Range(b.NumDst, 4*ne, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for e, end := b.Indptr[i], b.Indptr[i+1]; e < end; {
				_, f := relRun(b.Etype, e, end)
				inv := T(1 / float64(f-e))
				for ; e < f; e++ {
					a.ecof[e], a.erow[e] = inv, a.pos[i]
				}
			}
		}
	})
	a.bt.build(b)
	par.Range(b.NumSrc(), ne*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := dh[j*w : (j+1)*w]
			for _, e := range a.bt.edges(j) {
				p := int(a.erow[e])
				kernels.Axpy(a.ecof[e], a.dagg[b.Etype[e]][p*w:(p+1)*w], row)
			}
		}
	})
}

// gatherRows copies rows idx of src (w wide) into dst, in idx order.
func gatherRows[T Float](src []T, w int, idx []int32, dst []T) {
	par.Range(len(idx), len(idx)*w, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := int(idx[k])
			copy(dst[k*w:(k+1)*w], src[i*w:(i+1)*w])
		}
	})
}

// scatterRows copies (add: adds) row k of src (w wide) into row idx[k]
// of dst; idx's rows are distinct, so each has one writer.
func scatterRows[T Float](src []T, w int, idx []int32, dst []T, add bool) {
	par.Range(len(idx), len(idx)*w, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := int(idx[k])
			if add {
				kernels.Axpy(1, src[k*w:(k+1)*w], dst[i*w:(i+1)*w])
			} else {
				copy(dst[i*w:(i+1)*w], src[k*w:(k+1)*w])
			}
		}
	})
}

// hsageLayer is PyG's to_hetero(GraphSAGE, aggr="sum"): one SAGEConv per
// relation r (W_neigh,r, W_root,r, b_r), and a destination v of type t sums
// the convolutions of ALL relations ending at t, including those where v
// sampled no neighbour (their mean is zero, the root term and bias count):
//
//	out_v = sum_{r: dst(r)=t} mean_{u in N_r(v)} h_u·W_neigh,r + h_v·W_root,r + b_r
//
// The root terms of a type share their input, so the layer sums W_root,r
// and b_r over the type's relations and applies them in one product.
// Destinations of a type without incoming relations get zero rows.
type hsageLayer[T Float] struct {
	in, out int
	rels    []string
	rm      relMean[T]

	wNeigh, wRoot, bias  [][]T // per relation
	gNeigh, gRoot, gBias [][]T
	wEdge, gEdge         [][]T // per relation, Config.EdgeDim > 0 only
	wsum, bsum           [][]T // per type: sum of W_root,r and b_r over its relations
	hg, og               [][]T // per type: gathered own input rows; output rows (forward) / their gradient (backward)
	gtmp, dh, dhg        []T
	o                    []T
}

// hsageArch is HeteroSAGE's registry entry.
func hsageArch() Arch {
	return Arch{
		Name: ArchHSAGE, Hetero: true, EdgeFeatures: true,
		Doc:      "HeteroSAGE: one GraphSAGE per relation, summed per destination type (PyG to_hetero, aggr=sum)",
		Validate: validateHSAGE,
		New32:    func(c Config, l int) Layer[float32] { return newHSAGE[float32](c, l) },
		New64:    func(c Config, l int) Layer[float64] { return newHSAGE[float64](c, l) },
		// HeteroConv({edge_type: SAGEConv}, aggr="sum"): PyG's ModuleDict
		// keys an edge type as "<src___rel___dst>". With edge features
		// each edge type's conv is PyG's GeneralConv(in, out,
		// in_edge_channels=D, aggr="mean", skip_linear=True): out_i =
		// mean_j (lin_msg(x_j) + lin_edge(e_ij)) + lin_self(x_i)
		// (torch_geometric/nn/conv/general_conv.py, PyG 2.6), which is
		// HeteroSAGE's relation term when the two biases inside the mean
		// are zero and lin_self carries b_r.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			in, out := c.LayerDims(l)
			var es []pygEntry
			for _, r := range c.Hetero.Relations {
				q := p + "convs." + pygKey("<"+r+">") + "."
				if ed := c.EdgeDim; ed > 0 {
					es = append(es,
						one(m+r+".w_neigh", q+"lin_msg.weight", []int{out, in}, true),
						zeroEntry(q+"lin_msg.bias", []int{out}),
						one(m+r+".w_root", q+"lin_self.weight", []int{out, in}, true),
						one(m+r+".b", q+"lin_self.bias", []int{out}, false),
						one(m+r+".w_edge", q+"lin_edge.weight", []int{out, ed}, true),
						zeroEntry(q+"lin_edge.bias", []int{out}))
					continue
				}
				es = append(es,
					one(m+r+".w_neigh", q+"lin_l.weight", []int{out, in}, true),
					one(m+r+".b", q+"lin_l.bias", []int{out}, false),
					one(m+r+".w_root", q+"lin_r.weight", []int{out, in}, true))
			}
			return es
		},
		pygSpec: func(c Config, s *PyGModelSpec) {
			s.Class = "HeteroSAGE"
			if c.EdgeDim > 0 {
				s.Kwargs["edge_dim"] = c.EdgeDim
				s.Notes = append(s.Notes, "convs[l] = HeteroConv({edge_type: GeneralConv(hidden, out, in_edge_channels=edge_dim, aggr='mean', skip_linear=True)}, aggr='sum'), "+
					"lin_msg.bias and lin_edge.bias zero; forward(x_dict, edge_index_dict, edge_attr_dict), a relation without edge attributes taking zero rows")
				return
			}
			s.Notes = append(s.Notes, "convs[l] = HeteroConv({edge_type: SAGEConv(hidden, out, aggr='mean')}, aggr='sum') (PyG to_hetero(GraphSAGE, aggr='sum') computes the same)")
		},
	}
}

func newHSAGE[T Float](c Config, l int) *hsageLayer[T] {
	in, out := c.LayerDims(l)
	nt := c.Hetero.NumTypes()
	return &hsageLayer[T]{in: in, out: out, rels: c.Hetero.Relations, rm: newRelMean[T](c),
		wsum: make([][]T, nt), bsum: make([][]T, nt), hg: make([][]T, nt), og: make([][]T, nt)}
}

// Specs lists per relation W_neigh, W_root and b, then with edge features
// (Config.EdgeDim) W_edge: a model without them keeps its layout.
func (s *hsageLayer[T]) Specs() []ParamSpec {
	var specs []ParamSpec
	for _, r := range s.rels {
		specs = append(specs,
			ParamSpec{Name: r + ".w_neigh", Rows: s.in, Cols: s.out},
			ParamSpec{Name: r + ".w_root", Rows: s.in, Cols: s.out},
			ParamSpec{Name: r + ".b", Rows: 1, Cols: s.out, Zero: true})
		if ed := s.rm.ed; ed > 0 {
			specs = append(specs, ParamSpec{Name: r + ".w_edge", Rows: ed, Cols: s.out})
		}
	}
	return specs
}

func (s *hsageLayer[T]) Bind(p, g [][]T) {
	nr := len(s.rels)
	k := 3
	if s.rm.ed > 0 {
		k = 4
		s.wEdge, s.gEdge = make([][]T, nr), make([][]T, nr)
	}
	s.wNeigh, s.wRoot, s.bias = make([][]T, nr), make([][]T, nr), make([][]T, nr)
	s.gNeigh, s.gRoot, s.gBias = make([][]T, nr), make([][]T, nr), make([][]T, nr)
	for r := 0; r < nr; r++ {
		s.wNeigh[r], s.wRoot[r], s.bias[r] = p[k*r], p[k*r+1], p[k*r+2]
		s.gNeigh[r], s.gRoot[r], s.gBias[r] = g[k*r], g[k*r+1], g[k*r+2]
		if k == 4 {
			s.wEdge[r], s.gEdge[r] = p[k*r+3], g[k*r+3]
		}
	}
}

func (s *hsageLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	in, out, nd := s.in, s.out, b.NumDst
	s.rm.index(p.Types, nd)
	s.rm.forward(b, h, in)
	s.o = grow(s.o, nd*out)
	clearPar(s.o)
	for t, rels := range s.rm.inRels {
		idx := s.rm.idx[t]
		n := len(idx)
		if n == 0 || len(rels) == 0 {
			continue
		}
		ws, bs := grow(s.wsum[t], in*out), grow(s.bsum[t], out)
		s.wsum[t], s.bsum[t] = ws, bs
		clear(ws)
		clear(bs)
		for _, r := range rels {
			kernels.Axpy(1, s.wRoot[r], ws)
			kernels.Axpy(1, s.bias[r], bs)
		}
		hg, og := grow(s.hg[t], n*in), grow(s.og[t], n*out)
		s.hg[t], s.og[t] = hg, og
		gatherRows(h, in, idx, hg)
		fillRows(og, n, bs)
		gemm(p, false, false, n, out, in, 1, hg, in, ws, out, 1, og, out)
		for _, r := range rels {
			gemm(p, false, false, n, out, in, 1, s.rm.agg[r], in, s.wNeigh[r], out, 1, og, out)
			if ed := s.rm.ed; ed > 0 {
				gemm(p, false, false, n, out, ed, 1, s.rm.eagg[r], ed, s.wEdge[r], out, 1, og, out)
			}
		}
		scatterRows(og, out, idx, s.o, false)
	}
	return s.o
}

func (s *hsageLayer[T]) Backward(p *Pass, b *sample.Block, _, dz []T, wantInput bool) []T {
	in, out := s.in, s.out
	if wantInput {
		s.dh = grow(s.dh, b.NumSrc()*in)
		clearPar(s.dh)
	}
	for t, rels := range s.rm.inRels {
		idx := s.rm.idx[t]
		n := len(idx)
		if n == 0 || len(rels) == 0 {
			continue
		}
		dg := s.og[t] // forward rows are no longer needed: reuse for dO_t
		gatherRows(dz, out, idx, dg)
		// W_root,r and b_r of the type's relations see the same gradient.
		s.gtmp = grow(s.gtmp, in*out+out)
		gw, gb := s.gtmp[:in*out], s.gtmp[in*out:]
		clear(gb)
		colSum(dg, n, out, gb)
		gemm(p, true, false, in, out, n, 1, s.hg[t], in, dg, out, 0, gw, out)
		for _, r := range rels {
			kernels.Axpy(1, gb, s.gBias[r])
			kernels.Axpy(1, gw, s.gRoot[r])
			gemm(p, true, false, in, out, n, 1, s.rm.agg[r], in, dg, out, 1, s.gNeigh[r], out)
			if ed := s.rm.ed; ed > 0 {
				gemm(p, true, false, ed, out, n, 1, s.rm.eagg[r], ed, dg, out, 1, s.gEdge[r], out)
			}
		}
		if !wantInput {
			continue
		}
		s.dhg = grow(s.dhg, n*in)
		gemm(p, false, true, n, in, out, 1, dg, out, s.wsum[t], out, 0, s.dhg, in)
		scatterRows(s.dhg, in, idx, s.dh, true)
		for _, r := range rels {
			s.rm.dagg[r] = grow(s.rm.dagg[r], n*in)
			gemm(p, false, true, n, in, out, 1, dg, out, s.wNeigh[r], out, 0, s.rm.dagg[r], in)
		}
	}
	if !wantInput {
		return nil
	}
	// scatter reads dagg[r] only at destinations with r-edges, whose type
	// has destinations, so every row it reads was written above.
	s.rm.scatter(b, in, s.dh)
	return s.dh
}

// rgcnLayer is R-GCN (Schlichtkrull et al.; DGL RelGraphConv with
// self_loop=True and per-relation mean normalisation 1/|N_r(v)|):
//
//	out_v = h_v·W_self + sum_r mean_{u in N_r(v)} h_u·W_r + b
//
// With Bases B > 0 the relation weights are W_r = sum_b a_rb·V_b (basis
// decomposition): parameters V_0..V_{B-1} (in x out each) and the
// coefficients a (R x B), both Glorot-initialised as DGL does.
type rgcnLayer[T Float] struct {
	in, out, bases int
	rels           []string
	rm             relMean[T]

	wSelf, bias, gSelf, gBias []T
	wRel, gRel                [][]T // per relation (Bases = 0)
	wEdge, gEdge              [][]T // per relation (Config.EdgeDim > 0)
	v, gv                     [][]T // per basis (Bases > 0)
	coef, gcoef               []T   // R x B (Bases > 0)

	wr   []T   // composed W_r, R x in x out (Bases > 0)
	gwr  []T   // gradient w.r.t. the composed W_r (Bases > 0)
	og   [][]T // per type: relation messages (forward) / gathered dO (backward)
	o    []T
	dh   []T
	dagg []T
}

// rgcnArch is R-GCN's registry entry.
func rgcnArch() Arch {
	return Arch{
		Name: ArchRGCN, Hetero: true, EdgeFeatures: true,
		Doc:   "R-GCN: H_dst·W_self + sum over relations r of mean_r(H_nbr)·W_r + b, optional basis decomposition W_r = sum_b a_rb·V_b",
		New32: func(c Config, l int) Layer[float32] { return newRGCN[float32](c, l) },
		New64: func(c Config, l int) Layer[float64] { return newRGCN[float64](c, l) },
		// RGCNConv(in, out, num_relations, num_bases, aggr="mean"): root
		// (in, out), bias, and weight (R, in, out), or with bases weight
		// (B, in, out) and comp (R, B); all input-major.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			in, out := c.LayerDims(l)
			es := []pygEntry{
				one(m+"w_self", p+"root", []int{in, out}, false),
				one(m+"b", p+"bias", []int{out}, false),
			}
			R, B := c.Hetero.NumRels(), c.Hetero.Bases
			var ws []string
			if B == 0 {
				for _, r := range c.Hetero.Relations {
					ws = append(ws, m+r+".w")
				}
				es = append(es, pygEntry{mp: ws, pyg: p + "weight", shape: []int{R, in, out}})
				return append(es, rgcnEdgeEntry(c, m, p, out)...)
			}
			for k := 0; k < B; k++ {
				ws = append(ws, fmt.Sprintf("%sbasis%d", m, k))
			}
			es = append(es, pygEntry{mp: ws, pyg: p + "weight", shape: []int{B, in, out}},
				one(m+"coef", p+"comp", []int{R, B}, false))
			return append(es, rgcnEdgeEntry(c, m, p, out)...)
		},
		pygSpec: func(c Config, s *PyGModelSpec) {
			s.Class = "RGCN"
			s.Kwargs["num_bases"] = c.Hetero.Bases
			if c.EdgeDim > 0 {
				s.Kwargs["edge_dim"] = c.EdgeDim
				s.Notes = append(s.Notes, "PyG's RGCNConv has no edge_attr: with edge_dim the conv is scripts/pyg_check.py's RGCNEdgeConv, RGCNConv plus "+
					"edge_weight (R, edge_dim, out): out_i += sum_r mean_{j in N_r(i)} e_ij edge_weight[r]")
			}
			s.Notes = append(s.Notes, "convs[l] = RGCNConv(hidden, out, num_relations=len(edge_types), num_bases=num_bases or None, aggr='mean') "+
				"over the homogenized graph: node types concatenated in node_types order, edge_type = index in edge_types")
		},
	}
}

// rgcnEdgeEntry is R-GCN's edge term in the export: the relations' W_e,r
// stacked input-major as RGCNConv stacks its weight, under the name
// edge_weight, which PyG's RGCNConv lacks (it takes no edge_attr); nothing
// without edge features.
func rgcnEdgeEntry(c Config, m, p string, out int) []pygEntry {
	if c.EdgeDim == 0 {
		return nil
	}
	var ws []string
	for _, r := range c.Hetero.Relations {
		ws = append(ws, m+r+".w_edge")
	}
	return []pygEntry{{mp: ws, pyg: p + "edge_weight", shape: []int{c.Hetero.NumRels(), c.EdgeDim, out}}}
}

func newRGCN[T Float](c Config, l int) *rgcnLayer[T] {
	in, out := c.LayerDims(l)
	return &rgcnLayer[T]{in: in, out: out, bases: c.Hetero.Bases, rels: c.Hetero.Relations,
		rm: newRelMean[T](c), og: make([][]T, c.Hetero.NumTypes())}
}

// baseSpecs are the tensors of R-GCN without edge features.
func (g *rgcnLayer[T]) baseSpecs() []ParamSpec {
	specs := []ParamSpec{
		{Name: "w_self", Rows: g.in, Cols: g.out},
		{Name: "b", Rows: 1, Cols: g.out, Zero: true},
	}
	if g.bases == 0 {
		for _, r := range g.rels {
			specs = append(specs, ParamSpec{Name: r + ".w", Rows: g.in, Cols: g.out})
		}
		return specs
	}
	for k := 0; k < g.bases; k++ {
		specs = append(specs, ParamSpec{Name: fmt.Sprintf("basis%d", k), Rows: g.in, Cols: g.out})
	}
	return append(specs, ParamSpec{Name: "coef", Rows: len(g.rels), Cols: g.bases})
}

// Specs lists W_self, b and the relation weights (or bases and
// coefficients), then with edge features (Config.EdgeDim) one W_e,r per
// relation: a model without them keeps its layout.
func (g *rgcnLayer[T]) Specs() []ParamSpec {
	specs := g.baseSpecs()
	if ed := g.rm.ed; ed > 0 {
		for _, r := range g.rels {
			specs = append(specs, ParamSpec{Name: r + ".w_edge", Rows: ed, Cols: g.out})
		}
	}
	return specs
}

func (g *rgcnLayer[T]) Bind(p, gr [][]T) {
	g.wSelf, g.bias, g.gSelf, g.gBias = p[0], p[1], gr[0], gr[1]
	nb := len(g.baseSpecs())
	if g.rm.ed > 0 {
		g.wEdge, g.gEdge = p[nb:], gr[nb:]
	}
	if g.bases == 0 {
		g.wRel, g.gRel = p[2:nb], gr[2:nb]
		return
	}
	g.v, g.gv = p[2:2+g.bases], gr[2:2+g.bases]
	g.coef, g.gcoef = p[2+g.bases], gr[2+g.bases]
}

// weight returns W_r (composed in Forward when bases are used).
func (g *rgcnLayer[T]) weight(r int) []T {
	if g.bases == 0 {
		return g.wRel[r]
	}
	sz := g.in * g.out
	return g.wr[r*sz : (r+1)*sz]
}

func (g *rgcnLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	in, out, nd := g.in, g.out, b.NumDst
	if g.bases > 0 {
		sz, nb := in*out, g.bases
		g.wr = grow(g.wr, len(g.rels)*sz)
		// Each W_r is written by one goroutine per element range.
		par.Range(sz, len(g.rels)*nb*sz, func(lo, hi int) {
			for r := range g.rels {
				w := g.wr[r*sz+lo : r*sz+hi]
				clear(w)
				for k := 0; k < nb; k++ {
					kernels.Axpy(g.coef[r*nb+k], g.v[k][lo:hi], w)
				}
			}
		})
	}
	g.rm.index(p.Types, nd)
	g.rm.forward(b, h, in)
	o := grow(g.o, nd*out)
	g.o = o
	fillRows(o, nd, g.bias)
	gemm(p, false, false, nd, out, in, 1, h[:nd*in], in, g.wSelf, out, 1, o, out)
	for t, rels := range g.rm.inRels {
		idx := g.rm.idx[t]
		n := len(idx)
		if n == 0 || len(rels) == 0 {
			continue
		}
		og := grow(g.og[t], n*out)
		g.og[t] = og
		clearPar(og)
		for _, r := range rels {
			gemm(p, false, false, n, out, in, 1, g.rm.agg[r], in, g.weight(r), out, 1, og, out)
			if ed := g.rm.ed; ed > 0 {
				gemm(p, false, false, n, out, ed, 1, g.rm.eagg[r], ed, g.wEdge[r], out, 1, og, out)
			}
		}
		scatterRows(og, out, idx, o, true)
	}
	return o
}

func (g *rgcnLayer[T]) Backward(p *Pass, b *sample.Block, h, dz []T, wantInput bool) []T {
	in, out, nd := g.in, g.out, b.NumDst
	sz := in * out
	colSum(dz, nd, out, g.gBias)
	gemm(p, true, false, in, out, nd, 1, h[:nd*in], in, dz, out, 1, g.gSelf, out)
	if g.bases > 0 {
		g.gwr = grow(g.gwr, len(g.rels)*sz)
		clear(g.gwr)
	}
	if wantInput {
		g.dh = grow(g.dh, b.NumSrc()*in)
		gemm(p, false, true, nd, in, out, 1, dz, out, g.wSelf, out, 0, g.dh[:nd*in], in)
		clearPar(g.dh[nd*in:])
	}
	for t, rels := range g.rm.inRels {
		idx := g.rm.idx[t]
		n := len(idx)
		if n == 0 || len(rels) == 0 {
			continue
		}
		dg := g.og[t]
		gatherRows(dz, out, idx, dg)
		for _, r := range rels {
			var gw []T
			if g.bases == 0 {
				gw = g.gRel[r]
			} else {
				gw = g.gwr[r*sz : (r+1)*sz]
			}
			gemm(p, true, false, in, out, n, 1, g.rm.agg[r], in, dg, out, 1, gw, out)
			if ed := g.rm.ed; ed > 0 {
				gemm(p, true, false, ed, out, n, 1, g.rm.eagg[r], ed, dg, out, 1, g.gEdge[r], out)
			}
			if wantInput {
				g.rm.dagg[r] = grow(g.rm.dagg[r], n*in)
				gemm(p, false, true, n, in, out, 1, dg, out, g.weight(r), out, 0, g.rm.dagg[r], in)
			}
		}
	}
	if g.bases > 0 {
		// W_r = sum_k a_rk V_k: dV_k += sum_r a_rk dW_r, da_rk += <dW_r, V_k>.
		// Goroutines split the elements of the V_k (each summing its
		// relations in order) and, separately, the (r, k) dot products
		// (each a serial sum of its own).
		nb, nr := g.bases, len(g.rels)
		par.Range(sz, nr*nb*sz, func(lo, hi int) {
			for r := range nr {
				gw := g.gwr[r*sz+lo : r*sz+hi]
				for k := 0; k < nb; k++ {
					kernels.Axpy(g.coef[r*nb+k], gw, g.gv[k][lo:hi])
				}
			}
		})
		par.Range(nr*nb, nr*nb*sz, func(lo, hi int) {
			for rk := lo; rk < hi; rk++ {
				r, k := rk/nb, rk%nb
				gw := g.gwr[r*sz : (r+1)*sz]
				dot := T(0)
				for e, v := range g.v[k] {
					dot += v * gw[e]
				}
				g.gcoef[rk] += dot
			}
		})
	}
	if !wantInput {
		return nil
	}
	g.rm.scatter(b, in, g.dh)
	return g.dh
}

// relRun returns the relation of edge e and the end of its run: the edges
// [e, f) of one destination (whose edges end at end) that share it, since
// a destination's edges are grouped by relation.
func relRun(etype []int32, e, end int32) (r, f int32) {
	r, f = etype[e], e+1
	for f < end && etype[f] == r {
		f++
	}
	return r, f
}
