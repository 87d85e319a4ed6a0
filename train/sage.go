package train

import (
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// sageLayer is a GraphSAGE layer with the mean aggregator:
// out_i = h_i·W_self + mean_{j in N(i)} h_j·W_neigh + b, where N(i) are the
// sampled in-neighbors of destination i (a destination without any gets the
// zero vector as its mean).
type sageLayer[T Float] struct {
	in, out              int
	wSelf, wNeigh, bias  []T
	gSelf, gNeigh, gBias []T

	agg  []T // mean of neighbor inputs, NumDst x in
	o    []T // output rows, NumDst x out
	dh   []T // gradient w.r.t. the input rows, NumSrc x in
	dagg []T // gradient w.r.t. agg

	// Sparse layer 0 (Pass.Sparse): pn = X·W_neigh for every source and
	// dpn its gradient; agg then holds mean(pn) (NumDst x out).
	pn, dpn []T

	bt blockT // the block's edges by source, for the backward scatter
}

// sageArch is GraphSAGE's registry entry.
func sageArch() Arch {
	return Arch{
		Name: ArchSAGE, Doc: "GraphSAGE, mean aggregator: H_dst·W_self + mean(H_nbr)·W_neigh + b",
		New32: func(c Config, l int) Layer[float32] { return newSAGE[float32](c, l) },
		New64: func(c Config, l int) Layer[float64] { return newSAGE[float64](c, l) },
		// SAGEConv(aggr="mean"): lin_l on the aggregate (with the bias),
		// lin_r on the root.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			in, out := c.LayerDims(l)
			return []pygEntry{
				one(m+"w_self", p+"lin_r.weight", []int{out, in}, true),
				one(m+"w_neigh", p+"lin_l.weight", []int{out, in}, true),
				one(m+"b", p+"lin_l.bias", []int{out}, false),
			}
		},
		pygSpec: func(_ Config, s *PyGModelSpec) {
			s.Class = "torch_geometric.nn.models.GraphSAGE"
			s.Kwargs["aggr"] = "mean"
		},
	}
}

func newSAGE[T Float](c Config, l int) *sageLayer[T] {
	in, out := c.LayerDims(l)
	return &sageLayer[T]{in: in, out: out}
}

func (s *sageLayer[T]) Specs() []ParamSpec {
	return []ParamSpec{
		{Name: "w_self", Rows: s.in, Cols: s.out},
		{Name: "w_neigh", Rows: s.in, Cols: s.out},
		{Name: "b", Rows: 1, Cols: s.out, Zero: true},
	}
}

func (s *sageLayer[T]) Bind(p, g [][]T) {
	s.wSelf, s.wNeigh, s.bias = p[0], p[1], p[2]
	s.gSelf, s.gNeigh, s.gBias = g[0], g[1], g[2]
}

func (s *sageLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	if p.Sparse != nil {
		return s.forwardSparse(p.Sparse, b, h)
	}
	in, out, nd := s.in, s.out, b.NumDst
	s.agg = grow(s.agg, nd*in)
	meanAggregate(b, h, in, s.agg)
	o := grow(s.o, nd*out)
	s.o = o
	fillRows(o, nd, s.bias)
	// Destinations are the first NumDst sources, so h[:nd*in] are their
	// own rows.
	kernels.Gemm(false, false, nd, out, in, 1, h[:nd*in], in, s.wSelf, out, 1, o, out)
	kernels.Gemm(false, false, nd, out, in, 1, s.agg, in, s.wNeigh, out, 1, o, out)
	return o
}

func (s *sageLayer[T]) Backward(p *Pass, b *sample.Block, h, dz []T, wantInput bool) []T {
	in, out, nd := s.in, s.out, b.NumDst
	colSum(dz, nd, out, s.gBias)
	if p.Sparse != nil {
		s.backwardSparse(p.Sparse, b, h, dz)
		return nil
	}
	kernels.Gemm(true, false, in, out, nd, 1, h[:nd*in], in, dz, out, 1, s.gSelf, out)
	kernels.Gemm(true, false, in, out, nd, 1, s.agg, in, dz, out, 1, s.gNeigh, out)
	if !wantInput {
		return nil
	}
	ns := b.NumSrc()
	dh := grow(s.dh, ns*in)
	s.dh = dh
	kernels.Gemm(false, true, nd, in, out, 1, dz, out, s.wSelf, out, 0, dh[:nd*in], in)
	clearPar(dh[nd*in:])
	s.dagg = grow(s.dagg, nd*in)
	kernels.Gemm(false, true, nd, in, out, 1, dz, out, s.wNeigh, out, 0, s.dagg, in)
	meanScatter(&s.bt, b, s.dagg, in, dh)
	return dh
}

// forwardSparse is Forward over sparse inputs (values vals): the self term
// X_dst·W_self directly, the neighbor term as mean(X·W_neigh) over each
// destination's sources (the mean commutes with the projection).
func (s *sageLayer[T]) forwardSparse(x *sample.SparseRows, b *sample.Block, vals []T) []T {
	out, nd, ns := s.out, b.NumDst, b.NumSrc()
	s.pn = grow(s.pn, ns*out)
	kernels.Spmm(x.Indptr, x.Indices, vals, ns, s.wNeigh, out, s.pn, false)
	s.agg = grow(s.agg, nd*out)
	meanAggregate(b, s.pn, out, s.agg)
	o := grow(s.o, nd*out)
	s.o = o
	par.Range(nd, nd*out, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := o[i*out : (i+1)*out]
			for k := range row {
				row[k] = s.bias[k] + s.agg[i*out+k]
			}
		}
	})
	kernels.Spmm(x.Indptr, x.Indices, vals, nd, s.wSelf, out, o, true)
	return o
}

// backwardSparse adds the weight gradients of a sparse layer 0:
// W_self gets X_dstᵀ·dz, W_neigh gets Xᵀ·dpn with dpn the mean's adjoint
// applied to dz.
func (s *sageLayer[T]) backwardSparse(x *sample.SparseRows, b *sample.Block, vals, dz []T) {
	out, nd, ns := s.out, b.NumDst, b.NumSrc()
	kernels.SpmmT(x.Indptr, x.Indices, vals, nd, dz, out, s.gSelf)
	s.dpn = grow(s.dpn, ns*out)
	clearPar(s.dpn)
	meanScatter(&s.bt, b, dz, out, s.dpn)
	kernels.SpmmT(x.Indptr, x.Indices, vals, ns, s.dpn, out, s.gNeigh)
}
