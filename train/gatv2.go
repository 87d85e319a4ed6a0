package train

import (
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// ArchGATv2 is GATv2's registry name.
const ArchGATv2 = "gatv2"

// gatv2Layer is GATv2's attention layer (Brody et al., "How attentive are
// graph attention networks?"; PyG GATv2Conv with its defaults:
// share_weights=False, bias=True, add_self_loops=True, fill_value 'mean')
// over a sampled block, H heads of width F:
//
//	l_j  = W_l·x_j + b_l,  r_i = W_r·x_i + b_r      (H·F wide each)
//	m_ij = l_j + r_i [+ W_e·x_ij]                   (x_ij the edge's features)
//	e_ij = a · LeakyReLU_0.2(m_ij)                  per head
//	α_ij = softmax over j in N(i) ∪ {i} of e_ij     per head and destination
//	o_i  = sum_j dropout(α_ij) l_j                  per head
//
// Unlike GAT the nonlinearity comes before the attention vector, so the
// ranking of the neighbours can depend on the destination ("dynamic"
// attention). The edge lists, self edge, edge features, head layout and
// attention dropout (keyed by original destination ids, so masks do not
// depend on the rank or thread count) are GAT's: see gatLayer and
// attnEdges.
type gatv2Layer[T Float] struct {
	layer, in int
	edim      int

	wl, bl, wr, br, att, bias, we []T
	gwl, gbl, gwr, gbr, gatt, gb  []T
	gwe                           []T

	attnEdges[T]
	attnHeads[T]
	xl  []T // NumSrc x H·F: l_j, what the messages carry
	xr  []T // NumDst x H·F: r_i
	xe  []T // edges x H·F: W_e·x_ij (edim > 0)
	m   []T // edges x H·F: m_ij, before the LeakyReLU
	o   []T
	ds  []T // gradient w.r.t. the score per edge and head
	dm  []T // gradient w.r.t. m per edge
	dxl []T // gradient w.r.t. xl
	dxr []T // gradient w.r.t. xr
	dh  []T
	bt  blockT
}

// gatv2Arch is GATv2's registry entry. It shares GAT's parameters (heads,
// attn_dropout) and their validation.
func gatv2Arch() Arch {
	return Arch{
		Name: ArchGATv2, Doc: "GATv2, dynamic multi-head attention a·LeakyReLU(W_l x_j + W_r x_i), self edge, heads concatenated in hidden layers, averaged in the last",
		Params:       attentionParams(),
		Validate:     validateGAT,
		New32:        func(c Config, l int) Layer[float32] { return newGATv2[float32](c, l) },
		New64:        func(c Config, l int) Layer[float64] { return newGATv2[float64](c, l) },
		EdgeFeatures: true,
		// GATv2Conv (PyG 2.6): lin_l (source) and lin_r (target) with
		// biases, att (1, H, F), lin_edge without bias, the output bias.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			g := newGATv2[float32](c, l)
			hf := g.heads * g.f
			es := []pygEntry{
				one(m+"w_l", p+"lin_l.weight", []int{hf, g.in}, true),
				one(m+"b_l", p+"lin_l.bias", []int{hf}, false),
				one(m+"w_r", p+"lin_r.weight", []int{hf, g.in}, true),
				one(m+"b_r", p+"lin_r.bias", []int{hf}, false),
				one(m+"att", p+"att", []int{1, g.heads, g.f}, false),
				one(m+"b", p+"bias", []int{g.width()}, false),
			}
			if g.edim > 0 {
				es = append(es, one(m+"w_edge", p+"lin_edge.weight", []int{hf, g.edim}, true))
			}
			return es
		},
		pygSpec: func(c Config, s *PyGModelSpec) {
			gatArch().pygSpec(c, s)
			s.Kwargs["v2"] = true
		},
	}
}

func newGATv2[T Float](c Config, l int) *gatv2Layer[T] {
	in, _ := c.LayerDims(l)
	return &gatv2Layer[T]{layer: l, in: in, edim: c.EdgeDim, attnHeads: newAttnHeads[T](c, l)}
}

func (g *gatv2Layer[T]) Specs() []ParamSpec {
	hf := g.heads * g.f
	specs := []ParamSpec{
		{Name: "w_l", Rows: g.in, Cols: hf},
		{Name: "b_l", Rows: 1, Cols: hf, Zero: true},
		{Name: "w_r", Rows: g.in, Cols: hf},
		{Name: "b_r", Rows: 1, Cols: hf, Zero: true},
		{Name: "att", Rows: g.heads, Cols: g.f}, // Glorot over (H, F), as PyG's glorot on (1, H, F)
		{Name: "b", Rows: 1, Cols: g.width(), Zero: true},
	}
	if g.edim > 0 {
		specs = append(specs, ParamSpec{Name: "w_edge", Rows: g.edim, Cols: hf})
	}
	return specs
}

func (g *gatv2Layer[T]) Bind(p, gr [][]T) {
	g.wl, g.bl, g.wr, g.br, g.att, g.bias = p[0], p[1], p[2], p[3], p[4], p[5]
	g.gwl, g.gbl, g.gwr, g.gbr, g.gatt, g.gb = gr[0], gr[1], gr[2], gr[3], gr[4], gr[5]
	if g.edim > 0 {
		g.we, g.gwe = p[6], gr[6]
	}
}

// project computes rows·W + b for the first n rows of the layer input
// (dense rows, or the sparse rows of layer 0).
func project[T Float](p *Pass, h []T, n, in, hf int, w, b, dst []T) {
	if p.Sparse != nil {
		kernels.Spmm(p.Sparse.Indptr, p.Sparse.Indices, h, n, w, hf, dst, false) // h holds the entry values
	} else {
		gemm(p, false, false, n, hf, in, 1, h[:n*in], in, w, hf, 0, dst, hf)
	}
	par.Range(n, n*hf, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			kernels.Axpy(1, b, dst[i*hf:(i+1)*hf])
		}
	})
}

func (g *gatv2Layer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	H, F, in := g.heads, g.f, g.in
	hf := H * F
	nd, ns := b.NumDst, b.NumSrc()
	g.edges(b, g.edim)
	ne := len(g.esrc)
	g.xl, g.xr = grow(g.xl, ns*hf), grow(g.xr, nd*hf)
	project(p, h, ns, in, hf, g.wl, g.bl, g.xl)
	project(p, h, nd, in, hf, g.wr, g.br, g.xr)
	if g.edim > 0 {
		g.xe = grow(g.xe, ne*hf)
		gemm(p, false, false, ne, hf, g.edim, 1, g.ef, g.edim, g.we, hf, 0, g.xe, hf)
	}
	g.m = grow(g.m, ne*hf)
	drop := g.startPass(p.Train, ne)
	width := g.width()
	o := grow(g.o, nd*width)
	g.o = o
	scale := T(1 / (1 - float64(g.attnDrop)))
	thr := sample.MaskThreshold(g.attnDrop)
	par.Range(nd, ne*hf*3, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := int(g.eoff[i]), int(g.eoff[i+1])
			ri := g.xr[i*hf : (i+1)*hf]
			for e := e0; e < e1; e++ {
				j := int(g.esrc[e])
				me := g.m[e*hf : (e+1)*hf]
				lj := g.xl[j*hf : (j+1)*hf]
				for k := range me {
					me[k] = lj[k] + ri[k]
				}
				if g.edim > 0 {
					kernels.Axpy(1, g.xe[e*hf:(e+1)*hf], me)
				}
			}
			if drop {
				// Unit (e-e0)·H+hd of the destination's mask row is the
				// multiplier of edge e, head hd: keep[e0·H : e1·H] in order.
				rk := sample.MaskKey(p.Key.Seed, int(p.Key.Step), AttnLayer(g.layer), b.Orig[i])
				maskRow(g.keep[e0*H:e1*H], rk, thr, scale)
			}
			for hd := range H {
				a := g.att[hd*F : (hd+1)*F]
				for e := e0; e < e1; e++ {
					var s T
					for f, v := range g.m[e*hf+hd*F : e*hf+(hd+1)*F] {
						s += leaky(v) * a[f]
					}
					g.alpha[e*H+hd] = s
				}
				softmaxHead(g.alpha, e0, e1, H, hd)
			}
			g.aggregate(o[i*width:(i+1)*width], g.bias, g.xl, g.esrc, e0, e1)
		}
	})
	return o
}

func (g *gatv2Layer[T]) Backward(p *Pass, b *sample.Block, h, dout []T, wantInput bool) []T {
	H, F, in := g.heads, g.f, g.in
	hf := H * F
	nd, ns := b.NumDst, b.NumSrc()
	ne := len(g.esrc)
	width := g.width()
	colSum(dout, nd, width, g.gb)
	// Per destination (independent rows): the scores' gradient through
	// the softmax, then m's through att and the LeakyReLU, and r_i's, the
	// sum of its edges' dm in edge order.
	g.ds = grow(g.ds, ne*H)
	g.dm = grow(g.dm, ne*hf)
	g.dxr = grow(g.dxr, nd*hf)
	par.Range(nd, ne*hf*3, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			e0, e1 := int(g.eoff[i]), int(g.eoff[i+1])
			dri := g.dxr[i*hf : (i+1)*hf]
			clear(dri)
			g.srcDots(g.ds[e0*H:], dout[i*width:], g.xl, g.esrc[e0:e1])
			for hd := range H {
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
				a := g.att[hd*F : (hd+1)*F]
				for e := e0; e < e1; e++ {
					ds := g.alpha[e*H+hd] * (g.ds[e*H+hd] - sum)
					g.ds[e*H+hd] = ds
					me := g.m[e*hf+hd*F : e*hf+(hd+1)*F]
					dme := g.dm[e*hf+hd*F : e*hf+(hd+1)*F]
					for f, v := range me {
						d := ds * a[f]
						if v < 0 {
							d *= leakySlope
						}
						dme[f] = d
					}
					kernels.Axpy(1, dme, dri[hd*F:(hd+1)*F])
				}
			}
		}
	})
	// att's gradient, sum over the edges in order of ds·LeakyReLU(m):
	// goroutines split the columns, never the edges.
	par.Range(hf, ne*hf, func(lo, hi int) {
		for e := 0; e < ne; e++ {
			for c := lo; c < hi; c++ {
				g.gatt[c] += g.ds[e*H+c/F] * leaky(g.m[e*hf+c])
			}
		}
	})
	// Per source (one writer per row): l_j's gradient from the messages
	// and the scores, summed in the serial (destination, edge) order.
	g.bt.buildLists(g.eoff, g.esrc, nd, ns)
	g.dxl = grow(g.dxl, ns*hf)
	par.Range(ns, ne*hf*2, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			dl := g.dxl[j*hf : (j+1)*hf]
			clear(dl)
			for _, e := range g.bt.edges(j) {
				ei, i := int(e), int(g.bt.dst[e])
				for hd := range H {
					c0 := g.col(hd)
					kernels.Axpy(g.coef(ei, hd), dout[i*width+c0:i*width+c0+F], dl[hd*F:(hd+1)*F])
				}
				kernels.Axpy(1, g.dm[ei*hf:(ei+1)*hf], dl)
			}
		}
	})
	colSum(g.dxl, ns, hf, g.gbl)
	colSum(g.dxr, nd, hf, g.gbr)
	if g.edim > 0 {
		gemm(p, true, false, g.edim, hf, ne, 1, g.ef, g.edim, g.dm, hf, 1, g.gwe, hf)
	}
	if p.Sparse != nil {
		kernels.SpmmT(p.Sparse.Indptr, p.Sparse.Indices, h, ns, g.dxl, hf, g.gwl) // h holds the entry values
		kernels.SpmmT(p.Sparse.Indptr, p.Sparse.Indices, h, nd, g.dxr, hf, g.gwr)
		return nil
	}
	gemm(p, true, false, in, hf, ns, 1, h[:ns*in], in, g.dxl, hf, 1, g.gwl, hf)
	gemm(p, true, false, in, hf, nd, 1, h[:nd*in], in, g.dxr, hf, 1, g.gwr, hf)
	if !wantInput {
		return nil
	}
	g.dh = grow(g.dh, ns*in)
	gemm(p, false, true, ns, in, hf, 1, g.dxl, hf, g.wl, hf, 0, g.dh, in)
	gemm(p, false, true, nd, in, hf, 1, g.dxr, hf, g.wr, hf, 1, g.dh, in)
	return g.dh
}
