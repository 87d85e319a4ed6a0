package train

import (
	"fmt"
	"math"
	"slices"

	"mpignn/config"
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// gatLayer is a graph attention layer (Veličković et al.; PyG GATConv, DGL
// GATConv) over a sampled block, with H heads of width F:
//
//	z = h·W                                  (every source, H·F wide)
//	e_ij = LeakyReLU_0.2(a_src·z_j + a_dst·z_i [+ a_edge·W_e x_ij])  per head
//	α_ij = softmax over j in N(i) ∪ {i} of e_ij   per head and destination
//	o_i  = sum_j dropout(α_ij) z_j                per head
//
// Each destination attends over its sampled in-edges plus one self edge (as
// PyG adds self-loops; a sampled j == i is skipped so there is exactly one).
// The bracketed edge term is there with edge features (Config.EdgeDim):
// x_ij are the edge's features, and the self edge's are the mean of the
// destination's in-edges' (see attnEdges), as PyG's GATConv(edge_dim=) with
// its default fill_value 'mean'.
//
// Hidden layers concatenate the heads (out = H·F = Hidden), the last layer
// averages them (out = F = Classes); a bias is added after either.
//
// Attention dropout drops α_ij (after the softmax, inverted scaling, as
// PyG) with a mask keyed like the feature masks: (seed, step, layer
// AttnLayer(l), ORIGINAL id of the destination, unit = k·H + head), where k
// is the edge's position in the destination's list (0 = the self edge, then
// the sampled neighbors in block order, which is canonical). So masks do
// not depend on the rank count or thread count.
type gatLayer[T Float] struct {
	layer, in int
	edim      int // edge feature width (Config.EdgeDim), 0: none

	w, aSrc, aDst, bias  []T
	gw, gaSrc, gaDst, gb []T
	// The edge term (edim > 0): PyG's lin_edge (edim x H·F, no bias) and
	// att_edge (H x F) add lin_edge(e_ij)·att_edge per head to the score.
	wEdge, aEdge, gwEdge, gaEdge []T

	attnEdges[T]
	attnHeads[T]
	z        []T    // NumSrc x H·F
	el, er   []T    // a_src·z_j per source and head, a_dst·z_i per destination and head
	u, gu    []T    // lin_edge folded into att_edge (edim x H), and its gradient
	se       []T    // the edge term per edge and head
	s        []T    // pre-activation score per edge and head
	o        []T    // output rows
	ds       []T    // gradient w.r.t. s per edge and head
	dz       []T    // gradient w.r.t. z
	del, der []T    // gradients w.r.t. el and er
	dh       []T    // gradient w.r.t. the input rows
	bt       blockT // the edge lists by source, for the backward scatter
}

// AttnLayer is the layer index under which GAT's attention-dropout masks of
// layer l are keyed (distinct from the feature-dropout layers InputLayer and
// 0..Layers-2).
func AttnLayer(l int) int { return -2 - l }

// leakySlope is the negative slope of GAT's LeakyReLU (PyG and DGL default).
const leakySlope = 0.2

// GAT's parameters (GATv2 shares them).
const (
	headsKey    = "heads"
	attnDropKey = "attn_dropout"
)

// attentionParams are the hyper-parameters of the attention layers.
func attentionParams() []Param {
	return []Param{
		{Key: headsKey, Kind: ParamInt, Default: "8", Help: "gat, gatv2: attention heads per layer (concatenated in hidden layers, averaged in the last; --hidden counts all heads)"},
		{Key: attnDropKey, Kind: ParamFloat, Default: "0", Omit: "0", Help: "gat, gatv2: dropout probability of the attention coefficients"},
	}
}

// gatArch is GAT's registry entry.
func gatArch() Arch {
	return Arch{
		Name: ArchGAT, Doc: "GAT, multi-head attention (LeakyReLU 0.2, self edge), heads concatenated in hidden layers, averaged in the last",
		Params:   attentionParams(),
		Validate: validateGAT,
		// GATConv(edge_dim=): lin_edge and att_edge in the score.
		EdgeFeatures: true,
		New32:        func(c Config, l int) Layer[float32] { return newGAT[float32](c, l) },
		New64:        func(c Config, l int) Layer[float64] { return newGAT[float64](c, l) },
		// GATConv: one projection lin (no bias), att_src/att_dst (1, H, F),
		// the bias after the heads.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			in, _ := c.LayerDims(l)
			g := newGAT[float32](c, l)
			hf := g.heads * g.f
			es := []pygEntry{
				one(m+"w", p+"lin.weight", []int{hf, in}, true),
				one(m+"att_src", p+"att_src", []int{1, g.heads, g.f}, false),
				one(m+"att_dst", p+"att_dst", []int{1, g.heads, g.f}, false),
				one(m+"b", p+"bias", []int{g.width()}, false),
			}
			if g.edim > 0 {
				es = append(es,
					one(m+"w_edge", p+"lin_edge.weight", []int{hf, g.edim}, true),
					one(m+"att_edge", p+"att_edge", []int{1, g.heads, g.f}, false))
			}
			return es
		},
		pygImport: foldGATLinSrc,
		pygSpec: func(c Config, s *PyGModelSpec) {
			s.Class = "torch_geometric.nn.models.GAT"
			s.Kwargs["heads"] = c.Opts.Int(headsKey)
			if ad := c.Opts.Float32(attnDropKey); ad != c.Dropout {
				s.Notes = append(s.Notes, fmt.Sprintf("mpignn trained with attention dropout %v; PyG's GAT model sets GATConv(dropout=) to its dropout %v (evaluation mode: no effect)", ad, c.Dropout))
			}
		},
	}
}

func newGAT[T Float](c Config, l int) *gatLayer[T] {
	in, _ := c.LayerDims(l)
	return &gatLayer[T]{layer: l, in: in, edim: c.EdgeDim, attnHeads: newAttnHeads[T](c, l)}
}

// attnHeads is what GAT's and GATv2's layers share about their heads: H
// heads of width F, concatenated in the layers below the output and
// averaged in the conv to the output, the attention per edge and head of
// the last Forward and its dropout multipliers.
type attnHeads[T Float] struct {
	heads, f int
	concat   bool // concatenate the heads; false: average them
	attnDrop float32
	alpha    []T // attention per edge and head, before dropout
	keep     []T // dropout multiplier per edge and head (0 or 1/(1-p)); nil without dropout
	keepBuf  []T // storage of keep
}

func newAttnHeads[T Float](c Config, l int) attnHeads[T] {
	_, out := c.LayerDims(l)
	a := attnHeads[T]{heads: c.Opts.Int(headsKey), attnDrop: c.Opts.Float32(attnDropKey), f: out}
	if !c.convToOut(l) {
		a.concat, a.f = true, out/a.heads
	}
	return a
}

// width is the output width: H·F concatenated or F averaged.
func (a *attnHeads[T]) width() int {
	if a.concat {
		return a.heads * a.f
	}
	return a.f
}

// startPass sizes alpha for ne edges and, when the pass drops attention
// (training with attnDrop > 0), keep; it reports whether it does.
func (a *attnHeads[T]) startPass(train bool, ne int) bool {
	a.alpha = grow(a.alpha, ne*a.heads)
	a.keep = nil
	if !train || a.attnDrop == 0 {
		return false
	}
	a.keepBuf = grow(a.keepBuf, ne*a.heads)
	a.keep = a.keepBuf
	return true
}

// aggregate writes one destination's output row: the bias plus, per head,
// its edges [e0,e1)'s source rows of z (H·F wide, sources esrc) weighted
// by coef, in edge order.
func (a *attnHeads[T]) aggregate(row, bias, z []T, esrc []int32, e0, e1 int) {
	hf, F := a.heads*a.f, a.f
	copy(row, bias)
	var buf [coefBuf]T
	cf := coefs(buf[:], e1-e0)
	for hd := range a.heads {
		c0 := a.col(hd)
		for e := e0; e < e1; e++ {
			cf[e-e0] = a.coef(e, hd)
		}
		// One Axpy per edge in edge order, as a kernel that keeps the
		// head's columns in registers (kernels.AxpyRows: the same bits).
		kernels.AxpyRows(row[c0:c0+F], z, F, hf, hd*F, esrc[e0:e1], cf)
	}
}

// coefBuf is the number of edge coefficients a row's scratch holds on the
// stack; more take a heap slice (coefs).
const coefBuf = 64

// coefs returns n values of scratch: buf's if it holds them, else new.
func coefs[T Float](buf []T, n int) []T {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]T, n)
}

func (g *gatLayer[T]) Specs() []ParamSpec {
	hf := g.heads * g.f
	specs := []ParamSpec{
		{Name: "w", Rows: g.in, Cols: hf},
		{Name: "att_src", Rows: g.heads, Cols: g.f}, // Glorot over (H, F), as PyG's glorot on (1, H, F)
		{Name: "att_dst", Rows: g.heads, Cols: g.f},
		{Name: "b", Rows: 1, Cols: g.width(), Zero: true},
	}
	if g.edim > 0 {
		// After the others, so a model without edge features keeps its
		// layout (and its initial values).
		specs = append(specs,
			ParamSpec{Name: "w_edge", Rows: g.edim, Cols: hf},
			ParamSpec{Name: "att_edge", Rows: g.heads, Cols: g.f})
	}
	return specs
}

func (g *gatLayer[T]) Bind(p, gr [][]T) {
	g.w, g.aSrc, g.aDst, g.bias = p[0], p[1], p[2], p[3]
	g.gw, g.gaSrc, g.gaDst, g.gb = gr[0], gr[1], gr[2], gr[3]
	if g.edim > 0 {
		g.wEdge, g.aEdge, g.gwEdge, g.gaEdge = p[4], p[5], gr[4], gr[5]
	}
}

// attnEdges are an attention layer's per-destination edge lists, self
// edge first: destination i's edges are [eoff[i], eoff[i+1]) with sources
// esrc, then its sampled in-edges in block order, a sampled j == i skipped
// (PyG's remove_self_loops then add_self_loops). With edge features (dim >
// 0), ef holds each listed edge's features, dim per edge: a sampled edge's
// own, and for the self edge the mean of the destination's other listed
// in-edges' features (zero without any), which is what PyG's
// add_self_loops(fill_value='mean') gives the loop it adds.
type attnEdges[T Float] struct {
	eoff, esrc []int32
	ef         []T
}

// edges builds the per-destination edge lists (and, for dim > 0, their
// features): list lengths in parallel, offsets in order, then each
// destination fills its own range.
func (a *attnEdges[T]) edges(b *sample.Block, dim int) {
	nd := b.NumDst
	a.eoff = growIdx(a.eoff, nd+1)
	a.eoff[0] = 0
	par.Range(nd, len(b.Indices)+nd, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			n := int32(1)
			for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
				if int(j) != i {
					n++
				}
			}
			a.eoff[i+1] = n
		}
	})
	for i := 0; i < nd; i++ {
		a.eoff[i+1] += a.eoff[i]
	}
	ne := int(a.eoff[nd])
	a.esrc = growIdx(a.esrc, ne)
	if dim > 0 {
		a.ef = grow(a.ef, ne*dim)
	}
	par.Range(nd, (len(b.Indices)+nd)*(1+dim), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k := a.eoff[i]
			a.esrc[k] = int32(i)
			for p := b.Indptr[i]; p < b.Indptr[i+1]; p++ {
				if j := b.Indices[p]; int(j) != i {
					k++
					a.esrc[k] = j
					if dim > 0 {
						for d, v := range b.EdgeFeat[int(p)*dim : int(p+1)*dim] {
							a.ef[int(k)*dim+d] = T(v)
						}
					}
				}
			}
			if dim > 0 {
				// The self edge: the mean over the others, summed in
				// list order (torch's scatter mean: a sum, then one
				// division by the count).
				e0, e1 := int(a.eoff[i]), int(a.eoff[i+1])
				self := a.ef[e0*dim : (e0+1)*dim]
				clear(self)
				for e := e0 + 1; e < e1; e++ {
					kernels.Axpy(1, a.ef[e*dim:(e+1)*dim], self)
				}
				if n := e1 - e0 - 1; n > 0 {
					for d := range self {
						self[d] /= T(n)
					}
				}
			}
		}
	})
}

// coef returns the factor that multiplies a source row in the output:
// the (dropped) attention, divided by H when the heads are averaged.
func (a *attnHeads[T]) coef(e, hd int) T {
	v := a.alpha[e*a.heads+hd]
	if a.keep != nil {
		v *= a.keep[e*a.heads+hd]
	}
	if !a.concat {
		v /= T(a.heads)
	}
	return v
}

// srcDots sets out[k·H+hd] = do_hd·x_hd for every source srcs[k] and
// head hd: do_hd is head hd's columns of a destination's output gradient
// do (its own F columns, or all of them when the heads are averaged),
// x_hd head hd's F columns of row srcs[k] of x (H·F wide). It is each
// edge's dα before the softmax's Jacobian (x = z in GAT, x_l in GATv2).
func (a *attnHeads[T]) srcDots(out, do, x []T, srcs []int32) {
	vs := 0
	if a.concat {
		vs = a.f
	}
	hf := a.heads * a.f
	kernels.HeadDots(out, do, vs, x, len(srcs), func(k int) int { return int(srcs[k]) * hf }, a.f, a.heads)
}

// prefetchSrcs starts loading the rows idx of x (w wide) without waiting
// for them: the next destination's (or source's) scattered rows then
// arrive while this one is computed.
func prefetchSrcs[T Float](x []T, w int, idx []int32) {
	for _, j := range idx {
		kernels.Prefetch(x[int(j)*w : (int(j)+1)*w])
	}
}

// col is the first output column head hd writes.
func (a *attnHeads[T]) col(hd int) int {
	if a.concat {
		return hd * a.f
	}
	return 0
}

func (g *gatLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	return g.ForwardThen(p, b, h, nil)
}

// ForwardThen is Forward with the activation fused in (fusedForward):
// then runs on each range of destinations as their rows are written.
func (g *gatLayer[T]) ForwardThen(p *Pass, b *sample.Block, h []T, then func(o []T, lo, hi int)) []T {
	H, F, in := g.heads, g.f, g.in
	hf := H * F
	nd, ns := b.NumDst, b.NumSrc()
	g.edges(b, g.edim)
	ne := len(g.esrc)
	g.z = grow(g.z, ns*hf)
	g.el, g.er = grow(g.el, ns*H), grow(g.er, nd*H)
	// el_j and er_j: a head of row j of z against the head's attention
	// vector, eight rows side by side (kernels.HeadDots).
	scores := func(lo, hi int) {
		row := func(k int) int { return (lo + k) * hf }
		kernels.HeadDots(g.el[lo*H:], g.aSrc, F, g.z, hi-lo, row, F, H)
		if lo < nd {
			kernels.HeadDots(g.er[lo*H:], g.aDst, F, g.z, min(hi, nd)-lo, row, F, H)
		}
	}
	switch {
	case p.Sparse != nil:
		kernels.Spmm(p.Sparse.Indptr, p.Sparse.Indices, h, ns, g.w, hf, g.z, false) // h holds the entry values
		par.Range(ns, ns*hf, scores)
	case p.BF16 != nil:
		gemm(p, false, false, ns, hf, in, 1, h[:ns*in], in, g.w, hf, 0, g.z, hf)
		par.Range(ns, ns*hf, scores)
	default:
		// The projection a block of rows at a time (Gemm's own blocks,
		// kernels.GemmRows), each block's scores while its rows of z
		// are in cache.
		byRowBlocks(ns, hf, in, func(r0, r1 int) {
			kernels.GemmRows(false, r0, r1, hf, in, h[:ns*in], in, g.w, hf, 0, g.z, hf)
			scores(r0, r1)
		})
	}
	if g.edim > 0 {
		// lin_edge(x_ij)·att_edge = x_ij·u with u = W_e·att_edge per
		// head: one (edim x H) fold instead of H·F values per edge.
		g.u = grow(g.u, g.edim*H)
		for d := range g.edim {
			for hd := range H {
				g.u[d*H+hd] = kernels.Dot(g.wEdge[d*hf+hd*F:d*hf+(hd+1)*F], g.aEdge[hd*F:(hd+1)*F])
			}
		}
		g.se = grow(g.se, ne*H)
		gemm(p, false, false, ne, H, g.edim, 1, g.ef, g.edim, g.u, H, 0, g.se, H)
	}
	g.s = grow(g.s, ne*H)
	drop := g.startPass(p.Train, ne)
	width := g.width()
	o := grow(g.o, nd*width)
	g.o = o
	scale := T(1 / (1 - float64(g.attnDrop)))
	thr := sample.MaskThreshold(g.attnDrop)
	par.Range(nd, ne*hf, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if i+1 < hi {
				prefetchSrcs(g.z, hf, g.esrc[g.eoff[i+1]:g.eoff[i+2]])
			}
			e0, e1 := int(g.eoff[i]), int(g.eoff[i+1])
			if drop {
				// Unit (e-e0)·H+hd of the destination's mask row is the
				// multiplier of edge e, head hd: keep[e0·H : e1·H] in order.
				rk := sample.MaskKey(p.Key.Seed, int(p.Key.Step), AttnLayer(g.layer), b.Orig[i])
				maskRow(g.keep[e0*H:e1*H], rk, thr, scale)
			}
			for hd := range H {
				for e := e0; e < e1; e++ {
					s := g.el[int(g.esrc[e])*H+hd] + g.er[i*H+hd]
					if g.edim > 0 {
						s += g.se[e*H+hd]
					}
					g.s[e*H+hd] = s
					g.alpha[e*H+hd] = leaky(s)
				}
				softmaxHead(g.alpha, e0, e1, H, hd)
			}
			g.aggregate(o[i*width:(i+1)*width], g.bias, g.z, g.esrc, e0, e1)
		}
		if then != nil {
			then(o, lo, hi)
		}
	})
	return o
}

func (g *gatLayer[T]) Backward(p *Pass, b *sample.Block, h, dout []T, wantInput bool) []T {
	return g.BackwardThen(p, b, h, dout, wantInput, nil)
}

// BackwardThen is Backward with the backward of the activation below fused
// in (fusedBackward): the input gradient's product runs a block of rows at
// a time (Gemm's own blocks), then on each block while it is in cache.
func (g *gatLayer[T]) BackwardThen(p *Pass, b *sample.Block, h, dout []T, wantInput bool, then func(dh []T, lo, hi int)) []T {
	H, F, in := g.heads, g.f, g.in
	hf := H * F
	nd, ns := b.NumDst, b.NumSrc()
	ne := len(g.esrc)
	width := g.width()
	colSum(dout, nd, width, g.gb)
	// Per destination (independent rows): gradient of the scores s, and
	// er's gradient, the sum of its edges' ds in edge order.
	g.ds = grow(g.ds, ne*H)
	g.der = grow(g.der, nd*H)
	par.Range(nd, ne*hf, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if i+1 < hi {
				prefetchSrcs(g.z, hf, g.esrc[g.eoff[i+1]:g.eoff[i+2]])
			}
			e0, e1 := int(g.eoff[i]), int(g.eoff[i+1])
			// dα_e = do·z_j for every edge and head, stored in ds.
			g.srcDots(g.ds[e0*H:], dout[i*width:], g.z, g.esrc[e0:e1])
			for hd := range H {
				// Times the dropout multiplier and 1/H; then the
				// softmax Jacobian.
				var sum T
				for e := e0; e < e1; e++ {
					da := g.ds[e*H+hd]
					if g.keep != nil {
						da *= g.keep[e*H+hd]
					}
					if !g.concat {
						da /= T(H)
					}
					g.ds[e*H+hd] = da
					sum += g.alpha[e*H+hd] * da
				}
				var der T
				for e := e0; e < e1; e++ {
					de := g.alpha[e*H+hd] * (g.ds[e*H+hd] - sum)
					if g.s[e*H+hd] < 0 {
						de *= leakySlope
					}
					g.ds[e*H+hd] = de
					der += de
				}
				g.der[i*H+hd] = der
			}
		}
	})
	if g.edim > 0 {
		// The edge term's gradients: gu = efᵀ·ds (a product over the
		// edges in order), then through u = W_e·att_edge.
		g.gu = grow(g.gu, g.edim*H)
		gemm(p, true, false, g.edim, H, ne, 1, g.ef, g.edim, g.ds, H, 0, g.gu, H)
		for d := range g.edim {
			for hd := range H {
				gu := g.gu[d*H+hd]
				kernels.Axpy(gu, g.aEdge[hd*F:(hd+1)*F], g.gwEdge[d*hf+hd*F:d*hf+(hd+1)*F])
				kernels.Axpy(gu, g.wEdge[d*hf+hd*F:d*hf+(hd+1)*F], g.gaEdge[hd*F:(hd+1)*F])
			}
		}
	}
	// Per source (sources are shared between destinations, so the loop
	// runs over sources, one writer per row): z's gradient from the
	// messages and el's from the scores, each summed in the serial
	// (destination, edge) order, then the terms through el = z·a_src and
	// er = z·a_dst.
	g.bt.buildLists(g.eoff, g.esrc, nd, ns)
	g.bt.buildNbr()
	g.dz = grow(g.dz, ns*hf)
	g.del = grow(g.del, ns*H)
	par.Range(ns, ne*hf+ns*hf, func(lo, hi int) {
		var buf [4 * coefBuf]T
		for j := lo; j < hi; j++ {
			if j+1 < hi {
				prefetchSrcs(dout, width, g.bt.nbr[g.bt.off[j+1]:g.bt.off[j+2]])
			}
			dzj := g.dz[j*hf : (j+1)*hf]
			del := g.del[j*H : (j+1)*H]
			clear(del)
			// Each head's columns of dz_j take their edges' terms in
			// edge order from +0, heads apart (they are other
			// columns), so a head at a time is the serial order of
			// every element. The sums start in registers
			// (AxpyRowsZero): dz_j is written once, never cleared in
			// memory first. The edges' coefficients and ds are read
			// in one pass over the (scattered) edges, every head's at
			// once: head hd's coefficients go to cf[hd·n:], and each
			// head's del still sums its edges in order.
			es := g.bt.edges(j)
			dsts := g.bt.nbr[g.bt.off[j]:g.bt.off[j+1]]
			n := len(es)
			cf := coefs(buf[:], n*H)
			for k, e := range es {
				for hd := range H {
					cf[hd*n+k] = g.coef(int(e), hd)
					del[hd] += g.ds[int(e)*H+hd]
				}
			}
			for hd := range H {
				kernels.AxpyRowsZero(dzj[hd*F:(hd+1)*F], dout, F, width, g.col(hd), dsts, cf[hd*n:(hd+1)*n])
			}
			for hd := range H {
				kernels.Axpy(del[hd], g.aSrc[hd*F:(hd+1)*F], dzj[hd*F:(hd+1)*F])
				if j < nd {
					kernels.Axpy(g.der[j*H+hd], g.aDst[hd*F:(hd+1)*F], dzj[hd*F:(hd+1)*F])
				}
			}
		}
	})
	// The attention vectors' gradients sum over all sources in order:
	// goroutines split their columns, never the sources.
	par.Range(hf, ns*hf, func(lo, hi int) {
		for j := 0; j < ns; j++ {
			for hd := lo / F; hd*F < hi; hd++ {
				c0, c1 := max(lo, hd*F), min(hi, (hd+1)*F)
				zj := g.z[j*hf+c0 : j*hf+c1]
				kernels.Axpy(g.del[j*H+hd], zj, g.gaSrc[c0:c1])
				if j < nd {
					kernels.Axpy(g.der[j*H+hd], zj, g.gaDst[c0:c1])
				}
			}
		}
	})
	if p.Sparse != nil {
		kernels.SpmmT(p.Sparse.Indptr, p.Sparse.Indices, h, ns, g.dz, hf, g.gw) // h holds the entry values
		return nil
	}
	gemm(p, true, false, in, hf, ns, 1, h[:ns*in], in, g.dz, hf, 1, g.gw, hf)
	if !wantInput {
		return nil
	}
	g.dh = grow(g.dh, ns*in)
	productThen(p, ns, in, hf, g.dz, hf, g.w, hf, g.dh, in, then)
	return g.dh
}

// productThen computes c = a·bᵀ (m x n, a m x k, b n x k) and runs then on
// every range of c's rows: at full precision a block of rows at a time
// (Gemm's own blocks, so the same bits), then right after each block
// while it is in cache; in bf16 the whole product first. then may be nil.
func productThen[T floatT](p *Pass, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, then func(c []T, lo, hi int)) {
	if p.BF16 != nil || then == nil {
		gemm(p, false, true, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
		if then != nil {
			par.Range(m, m*n, func(lo, hi int) { then(c, lo, hi) })
		}
		return
	}
	byRowBlocks(m, n, k, func(r0, r1 int) {
		kernels.GemmRows(true, r0, r1, n, k, a, lda, b, ldb, 0, c, ldc)
		then(c, r0, r1)
	})
}

// byRowBlocks runs f on every row block [r0, r1) of an m x n product of k
// inner terms as Gemm cuts it (kernels.RowBlocks), the blocks spread over
// the threads: the frame of a pass that runs a block's products
// (kernels.GemmRows) and what follows them while the block is in cache.
func byRowBlocks(m, n, k int, f func(r0, r1 int)) {
	size, count := kernels.RowBlocks(m, n, k)
	par.Range(count, m*n*k, func(lo, hi int) {
		for blk := lo; blk < hi; blk++ {
			f(blk*size, min((blk+1)*size, m))
		}
	})
}

// leaky is GAT's LeakyReLU.
func leaky[T Float](s T) T {
	if s < 0 {
		return s * leakySlope
	}
	return s
}

// validateGAT checks the attention settings of a GAT configuration.
func validateGAT(c Config) error {
	heads, ad := c.Opts.Int(headsKey), c.Opts.Float32(attnDropKey)
	switch {
	case heads < 1:
		return config.Errorf("{Opts.Heads} %d must be positive", heads)
	case !(ad >= 0 && ad < 1):
		return config.Errorf("{Opts.AttnDropout} %v must be in [0,1)", ad)
	case c.Layers > 1 && c.Hidden%heads != 0:
		return config.Errorf("{Hidden} %d must be a multiple of {Opts.Heads} %d (hidden layers concatenate the heads)", c.Hidden, heads)
	}
	return nil
}

// GATOpts returns the Opts of a GAT (or GATv2) layer stack with heads
// attention heads and attention dropout attnDrop.
func GATOpts(heads int, attnDrop float32) Opts {
	o := Opts("").With(headsKey, heads)
	if attnDrop != 0 {
		o = o.With(attnDropKey, attnDrop)
	}
	return o
}

// foldGATLinSrc renames GATConv's pre-2.5 convs.l.lin_src.weight (and the
// identical lin_dst.weight) to convs.l.lin.weight.
func foldGATLinSrc(cfg Config, got map[string]NamedTensor) error {
	for l := 0; l < cfg.Layers; l++ {
		p := fmt.Sprintf("convs.%d.", l)
		src, okS := got[p+"lin_src.weight"]
		if !okS {
			continue
		}
		if _, ok := got[p+"lin.weight"]; ok {
			return fmt.Errorf("pyg import: both %slin.weight and %slin_src.weight are present", p, p)
		}
		if dst, ok := got[p+"lin_dst.weight"]; ok {
			if !slices.Equal(dst.Shape, src.Shape) || !slices.Equal(dst.Data, src.Data) {
				return fmt.Errorf("pyg import: %slin_src.weight and %slin_dst.weight differ; a homogeneous GAT layer has one projection", p, p)
			}
			delete(got, p+"lin_dst.weight")
		}
		delete(got, p+"lin_src.weight")
		src.Name = p + "lin.weight"
		got[src.Name] = src
	}
	return nil
}

// softmaxHead turns the attention logits of head hd on the edges [e0,e1)
// of one destination (a[e*H+hd]) into their softmax, computed in float64
// and max-shifted. GAT and GATv2 share it; they differ in the logits. The
// attention-dropout multipliers of the destination's edges are drawn
// before it, all heads at once (maskRow).
func softmaxHead[T Float](a []T, e0, e1, H, hd int) {
	mx := math.Inf(-1)
	for e := e0; e < e1; e++ {
		mx = math.Max(mx, float64(a[e*H+hd]))
	}
	sum := 0.0
	for e := e0; e < e1; e++ {
		v := math.Exp(float64(a[e*H+hd]) - mx)
		a[e*H+hd] = T(v)
		sum += v
	}
	for e := e0; e < e1; e++ {
		a[e*H+hd] = T(float64(a[e*H+hd]) / sum)
	}
}
