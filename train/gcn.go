package train

import (
	"errors"
	"math"

	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// gcnLayer is a graph convolution (Kipf & Welling; PyG GCNConv, DGL
// GraphConv with norm='both') over a sampled block with a self-loop on
// every destination:
//
//	out_i = b + (sum_{j in N(i) ∪ {i}} c_ij h_j)·W,  c_ij = 1/sqrt(d_i·d_j)
//
// Degrees on a sampled block. DGL takes d_j as the out-degree of source j
// WITHIN the block; that counts the edges to whichever other seeds share
// this rank's batch, so it would change with the rank count (and the
// batch). Here every degree is the number of sampled in-neighbors of a
// node plus its self-loop, counted where that node is a destination, which
// is a function of (seed, epoch, step, layer, node) only:
//
//   - d_i (destination i of block l): 1 + its sampled in-edges in block l;
//   - d_j (source j of block l >= 1): 1 + its sampled in-edges in block
//     l-1, whose destinations are exactly block l's sources (the sampled
//     neighborhood that produced h_j);
//   - the first layer has no block below it, and whether a source of
//     block 0 is also one of its destinations depends on which seeds share
//     the batch, so there d_j is taken as d_i: c_ij = 1/d_i, the mean over
//     N(i) ∪ {i} (DGL's norm='right'). With Config.GCNNorm "sym" it takes
//     the sources' full in-degrees from Pass.SrcDeg instead (layer-wise
//     inference only), which is GCNConv's full-graph normalisation.
//
// With a full neighborhood (fanout -1) layers 1.. are exactly full-graph
// GCN (PyG's gcn_norm with self-loops). A sampled edge j -> i with j == i
// (a self-loop in the data) is skipped: the layer adds exactly one.
//
// The layer aggregates before it transforms (agg·W on the NumDst rows, as
// GraphSAGE does), so the product runs over destinations only.
type gcnLayer[T Float] struct {
	in, out  int
	symFirst bool // layer 0 under GCNNorm "sym": Pass.SrcDeg is required there
	w, bias  []T
	gw, gb   []T

	ew   []T // c_ij per edge of the block (0 for a sampled self-loop)
	sw   []T // c_ii of the added self-loop, per destination
	agg  []T // normalised aggregate incl. the self-loop, NumDst x in
	o    []T // output rows, NumDst x out
	dh   []T // gradient w.r.t. the input rows, NumSrc x in
	dagg []T // gradient w.r.t. agg

	// Sparse layer 0 (Pass.Sparse): pw = X·W for every source and dpw its
	// gradient.
	pw, dpw []T

	bt blockT // the block's edges by source, for the backward scatter
}

// GCNNormSym is GCN's gcn_norm parameter for GCNConv's symmetric
// normalisation on the first layer too; GCNNormMean (the default, not
// stored) is mpignn's 1/d_i there, the mean over in-neighbours and self,
// as on a sampled block the sources' degrees are unknown. Only layer-wise
// inference knows every source's full in-degree, so "sym" is an
// evaluation setting (predict/embed --gcn-norm sym, to evaluate a model
// trained with PyG's GCNConv).
const (
	GCNNormSym  = "sym"
	GCNNormMean = "mean"
	gcnNormKey  = "gcn_norm"
)

// gcnArch is GCN's registry entry.
func gcnArch() Arch {
	return Arch{
		Name: ArchGCN, Doc: "GCN, symmetric normalisation with self-loops over the sampled block",
		Params: []Param{{
			Key: gcnNormKey, Kind: ParamChoice, Choices: []string{GCNNormMean, GCNNormSym}, Default: GCNNormMean, Omit: GCNNormMean, EvalOnly: true,
			Help: "gcn: first-layer normalisation; sym = GCNConv's 1/sqrt(d_i*d_j) with full degrees (layer-wise inference; for a model trained with PyG, imported by train --init-from) instead of mpignn's mean over in-neighbours and self",
		}},
		New32: func(c Config, l int) Layer[float32] { return newGCN[float32](c, l) },
		New64: func(c Config, l int) Layer[float64] { return newGCN[float64](c, l) },
		// A source's degree is counted where it is a destination, in the
		// layer below; the first layer takes the destination's unless
		// gcn_norm is sym.
		SrcDegree:      func(Config) bool { return true },
		FirstSrcDegree: gcnSymFirst,
		Sampled: func(c Config) error {
			if gcnSymFirst(c) {
				return errors.New("model: gcn_norm sym needs every first-layer source's full in-degree, which only layer-wise inference (Layerwise) has; sampled blocks use mpignn's first-layer mean")
			}
			return nil
		},
		// GCNConv: lin (no bias of its own), then the conv's bias.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			in, out := c.LayerDims(l)
			return []pygEntry{
				one(m+"w", p+"lin.weight", []int{out, in}, true),
				one(m+"b", p+"bias", []int{out}, false),
			}
		},
		pygSpec: func(_ Config, s *PyGModelSpec) {
			s.Class = "torch_geometric.nn.models.GCN"
			s.Notes = append(s.Notes, "layer 0 normalises by 1/d_i (mean over in-neighbours and self) where GCNConv uses 1/sqrt(d_i*d_j); "+
				"layers 1.. equal GCNConv (symmetric, one self-loop). To reproduce mpignn exactly run convs[0] with normalize=False on "+
				"edge_index with self-loops and edge_weight = 1/deg_in_plus_1[dst]; mpignn predict --gcn-norm sym evaluates GCNConv's normalisation instead "+
				"(for a model trained in PyG)")
		},
	}
}

// gcnSymFirst reports whether c normalises the first layer as GCNConv.
func gcnSymFirst(c Config) bool { return c.Opts.String(gcnNormKey, GCNNormMean) == GCNNormSym }

func newGCN[T Float](c Config, l int) *gcnLayer[T] {
	in, out := c.LayerDims(l)
	return &gcnLayer[T]{in: in, out: out, symFirst: l == 0 && gcnSymFirst(c)}
}

func (g *gcnLayer[T]) Specs() []ParamSpec {
	return []ParamSpec{
		{Name: "w", Rows: g.in, Cols: g.out},
		{Name: "b", Rows: 1, Cols: g.out, Zero: true},
	}
}

func (g *gcnLayer[T]) Bind(p, gr [][]T) {
	g.w, g.bias = p[0], p[1]
	g.gw, g.gb = gr[0], gr[1]
}

// inDegree is the number of sampled in-edges of destination i of b that are
// not self-loops.
func inDegree(b *sample.Block, i int) int {
	d := 0
	for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
		if int(j) != i {
			d++
		}
	}
	return d
}

// norms fills ew and sw for block b (see the type comment).
func (g *gcnLayer[T]) norms(p *Pass, b *sample.Block) {
	nd := b.NumDst
	g.ew, g.sw = grow(g.ew, len(b.Indices)), grow(g.sw, nd)
	// Each destination writes only its own coefficients.
	par.Range(nd, 4*(len(b.Indices)+nd), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			di := float64(1 + inDegree(b, i))
			deg := func(j int) float64 {
				switch {
				case p.SrcDeg != nil:
					return float64(1 + p.SrcDeg[j])
				case p.Prev == nil:
					return di
				}
				return float64(1 + inDegree(p.Prev, j)) // block l's sources are block l-1's destinations
			}
			g.sw[i] = T(1 / math.Sqrt(di*deg(i)))
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				j := int(b.Indices[e])
				g.ew[e] = 0
				if j != i {
					g.ew[e] = T(1 / math.Sqrt(di*deg(j)))
				}
			}
		}
	})
}

func (g *gcnLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	in, out, nd := g.in, g.out, b.NumDst
	g.norms(p, b)
	if p.Sparse != nil {
		return g.forwardSparse(p.Sparse, b, h)
	}
	g.agg = grow(g.agg, nd*in)
	par.Range(nd, (len(b.Indices)+nd)*in, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := g.agg[i*in : (i+1)*in]
			clear(dst)
			kernels.Axpy(g.sw[i], h[i*in:(i+1)*in], dst)
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				if j := int(b.Indices[e]); j != i {
					kernels.Axpy(g.ew[e], h[j*in:(j+1)*in], dst)
				}
			}
		}
	})
	o := grow(g.o, nd*out)
	g.o = o
	fillRows(o, nd, g.bias)
	gemm(p, false, false, nd, out, in, 1, g.agg, in, g.w, out, 1, o, out)
	return o
}

func (g *gcnLayer[T]) Backward(p *Pass, b *sample.Block, h, dz []T, wantInput bool) []T {
	in, out, nd := g.in, g.out, b.NumDst
	colSum(dz, nd, out, g.gb)
	if p.Sparse != nil {
		g.backwardSparse(p.Sparse, b, h, dz)
		return nil
	}
	gemm(p, true, false, in, out, nd, 1, g.agg, in, dz, out, 1, g.gw, out)
	if !wantInput {
		return nil
	}
	ns := b.NumSrc()
	g.dagg = grow(g.dagg, nd*in)
	gemm(p, false, true, nd, in, out, 1, dz, out, g.w, out, 0, g.dagg, in)
	dh := grow(g.dh, ns*in)
	g.dh = dh
	g.scatter(b, g.dagg, in, dh)
	return dh
}

// forwardSparse is Forward over sparse inputs (values vals): project every
// source first (pw = X·W), then take the normalised sum in output space.
func (g *gcnLayer[T]) forwardSparse(x *sample.SparseRows, b *sample.Block, vals []T) []T {
	out, nd, ns := g.out, b.NumDst, b.NumSrc()
	g.pw = grow(g.pw, ns*out)
	kernels.Spmm(x.Indptr, x.Indices, vals, ns, g.w, out, g.pw, false)
	o := grow(g.o, nd*out)
	g.o = o
	par.Range(nd, (len(b.Indices)+nd)*out, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := o[i*out : (i+1)*out]
			copy(dst, g.bias)
			kernels.Axpy(g.sw[i], g.pw[i*out:(i+1)*out], dst)
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				if j := int(b.Indices[e]); j != i {
					kernels.Axpy(g.ew[e], g.pw[j*out:(j+1)*out], dst)
				}
			}
		}
	})
	return o
}

// backwardSparse adds W's gradient of a sparse layer 0: Xᵀ·dpw with dpw
// the normalised sum's adjoint applied to dz.
func (g *gcnLayer[T]) backwardSparse(x *sample.SparseRows, b *sample.Block, vals, dz []T) {
	out, ns := g.out, b.NumSrc()
	g.dpw = grow(g.dpw, ns*out)
	g.scatter(b, dz, out, g.dpw)
	kernels.SpmmT(x.Indptr, x.Indices, vals, ns, g.dpw, out, g.gw)
}

// scatter writes into d (NumSrc x w) the adjoint of the normalised sum
// applied to gd (NumDst x w): sw[i]·gd[i] to row i and ew[e]·gd[i] to row
// j for every edge e: j -> i with j != i. Sources are shared between
// destinations, so it runs over sources (one writer per row of d), adding
// each row's terms in the order of the serial loop over destinations: the
// edges from destinations i < j, the self term, then those from i > j.
func (g *gcnLayer[T]) scatter(b *sample.Block, gd []T, w int, d []T) {
	g.bt.build(b)
	nd := b.NumDst
	par.Range(b.NumSrc(), (len(b.Indices)+nd)*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := d[j*w : (j+1)*w]
			clear(row)
			self := j < nd // the self term is still to add
			for _, e := range g.bt.edges(j) {
				i := int(g.bt.dst[e])
				if i == j {
					continue
				}
				if self && i > j {
					kernels.Axpy(g.sw[j], gd[j*w:(j+1)*w], row)
					self = false
				}
				kernels.Axpy(g.ew[e], gd[i*w:(i+1)*w], row)
			}
			if self {
				kernels.Axpy(g.sw[j], gd[j*w:(j+1)*w], row)
			}
		}
	})
}
