package train

import (
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// sageLayer is a GraphSAGE layer (PyG SAGEConv with root_weight and a bias
// on lin_l):
//
//	out_i = h_i·W_self + AGG_{j in N(i)} m_j · W_neigh + b
//
// where N(i) are the sampled in-neighbours of destination i, in block
// order, and the aggregator (Opts "aggr") is one of
//
//	mean  m_j = h_j, AGG the mean                 SAGEConv(aggr="mean")
//	sum   m_j = h_j, AGG the sum                  SAGEConv(aggr="sum")
//	max   m_j = h_j, AGG the elementwise maximum  SAGEConv(aggr="max")
//	pool  m_j = relu(h_j·W_pool + b_pool), AGG the elementwise maximum
//	      (SAGEConv(aggr="max", project=True); DGL's "pool"; the root h_i
//	      is not projected, as in PyG)
//
// A destination without sampled neighbours aggregates to the zero vector
// for every aggregator (PyG's scatter fills empty groups with 0).
//
// The maximum's gradient goes, per column, to the one source that holds
// it; among equal values the first in the destination's edge list wins.
// Blocks list a destination's edges in a canonical order (independent of
// threads, ranks and partitions), so the choice, and with it the input
// gradient, is too. (PyTorch's scatter_reduce "amax" would split a tie's
// gradient evenly; ties between distinct real-valued rows are rare, and at
// zero after a ReLU their gradient is masked anyway.)
type sageLayer[T Float] struct {
	in, out              int
	aggr                 string
	wSelf, wNeigh, bias  []T
	gSelf, gNeigh, gBias []T
	wPool, bPool         []T // pool: the projection (in x in) and its bias
	gPool, gbPool        []T

	agg  []T     // aggregate of the neighbour messages, NumDst x in
	arg  []int32 // max, pool: edge holding each maximum of agg, -1 for none
	q    []T     // pool: the projected messages relu(h·W_pool + b_pool), NumSrc x in
	dq   []T     // pool: gradient w.r.t. q, then w.r.t. its pre-activation
	o    []T     // output rows, NumDst x out
	dh   []T     // gradient w.r.t. the input rows, NumSrc x in
	dagg []T     // gradient w.r.t. agg

	// Sparse layer 0 (Pass.Sparse) under mean or sum: pn = X·W_neigh for
	// every source and dpn its gradient; agg then holds the aggregate of
	// pn (NumDst x out). Under pool the projection q = relu(X·W_pool +
	// b_pool) reads the stored entries only. Under max, xd holds the
	// block's input rows densified (NumSrc x in) and the dense path runs
	// on them.
	pn, dpn []T
	xd      []T

	bt blockT // the block's edges by source, for the backward scatter
}

// SAGE's aggregators (Opts key "aggr").
const (
	SAGEMean = "mean"
	SAGEMax  = "max"
	SAGESum  = "sum"
	SAGEPool = "pool"
	aggrKey  = "aggr"
)

// sageArch is GraphSAGE's registry entry.
func sageArch() Arch {
	return Arch{
		Name: ArchSAGE, Doc: "GraphSAGE: H_dst·W_self + AGG(H_nbr)·W_neigh + b, AGG by --aggr: mean, sum, max or pool (max of relu(H·W_pool + b_pool))",
		Params: []Param{{
			Key: aggrKey, Kind: ParamChoice, Choices: []string{SAGEMean, SAGEMax, SAGESum, SAGEPool}, Default: SAGEMean, Omit: SAGEMean,
			Help: "sage: neighbour aggregator (max elementwise; pool the max of relu(Linear(in, in)) of the neighbours, PyG SAGEConv(aggr=\"max\", project=True))",
		}},
		New32: func(c Config, l int) Layer[float32] { return newSAGE[float32](c, l) },
		New64: func(c Config, l int) Layer[float64] { return newSAGE[float64](c, l) },
		// SAGEConv: lin_l on the aggregate (with the bias), lin_r on the
		// root, and with project=True lin = Linear(in, in, bias=True)
		// applied (then relu) to the sources before the aggregation.
		pyg: func(c Config, l int, m, p string) []pygEntry {
			in, out := c.LayerDims(l)
			es := []pygEntry{
				one(m+"w_self", p+"lin_r.weight", []int{out, in}, true),
				one(m+"w_neigh", p+"lin_l.weight", []int{out, in}, true),
				one(m+"b", p+"lin_l.bias", []int{out}, false),
			}
			if sageAggr(c) == SAGEPool {
				es = append(es,
					one(m+"w_pool", p+"lin.weight", []int{in, in}, true),
					one(m+"b_pool", p+"lin.bias", []int{in}, false))
			}
			return es
		},
		pygSpec: func(c Config, s *PyGModelSpec) {
			s.Class = "torch_geometric.nn.models.GraphSAGE"
			switch a := sageAggr(c); a {
			case SAGEPool:
				// GraphSAGE passes its extra keyword arguments on to
				// every SAGEConv.
				s.Kwargs["aggr"] = SAGEMax
				s.Kwargs["project"] = true
			default:
				s.Kwargs["aggr"] = a
			}
			if a := sageAggr(c); a == SAGEMax || a == SAGEPool {
				s.Notes = append(s.Notes, "the maximum's gradient goes to the first source (in block order) among equal values; PyTorch's scatter amax splits it evenly (forward identical)")
			}
		},
	}
}

// sageAggr is c's SAGE aggregator.
func sageAggr(c Config) string { return c.Opts.String(aggrKey, SAGEMean) }

// SAGEOpts returns the Opts of a GraphSAGE model with aggregator aggr
// (none for the default mean, so such a config is unchanged).
func SAGEOpts(aggr string) Opts {
	if aggr == SAGEMean || aggr == "" {
		return ""
	}
	return Opts("").With(aggrKey, aggr)
}

func newSAGE[T Float](c Config, l int) *sageLayer[T] {
	in, out := c.LayerDims(l)
	return &sageLayer[T]{in: in, out: out, aggr: sageAggr(c)}
}

func (s *sageLayer[T]) Specs() []ParamSpec {
	sp := []ParamSpec{
		{Name: "w_self", Rows: s.in, Cols: s.out},
		{Name: "w_neigh", Rows: s.in, Cols: s.out},
		{Name: "b", Rows: 1, Cols: s.out, Zero: true},
	}
	if s.aggr == SAGEPool {
		sp = append(sp,
			ParamSpec{Name: "w_pool", Rows: s.in, Cols: s.in},
			ParamSpec{Name: "b_pool", Rows: 1, Cols: s.in, Zero: true})
	}
	return sp
}

func (s *sageLayer[T]) Bind(p, g [][]T) {
	s.wSelf, s.wNeigh, s.bias = p[0], p[1], p[2]
	s.gSelf, s.gNeigh, s.gBias = g[0], g[1], g[2]
	if s.aggr == SAGEPool {
		s.wPool, s.bPool = p[3], p[4]
		s.gPool, s.gbPool = g[3], g[4]
	}
}

// Aggregate, then transform. Under mean or sum the neighbour term may also
// be computed the other way round, AGG(h_j·W_neigh), and DGL's SAGEConv
// does so when the input is wider than the output (lin_before_mp =
// in_src_feats > out_feats, python/dgl/nn/pytorch/conv/sageconv.py). That
// rule is for full graphs, where sources and destinations are the same
// nodes. On a sampled block the projection must then run over all NumSrc
// rows instead of NumDst, and sampling keeps NumSrc close to the edge
// count (few repeats), so projecting first moves more bytes and does
// NumSrc/NumDst times the products. Counted on a real batch of the peer
// run (fanout 15,10,5, batch 1024, widths 100 -> 256 -> 256 -> 47; values
// read and written by the aggregation and the neighbour product's operands,
// the output rows left out as they are the same either way):
//
//	layer  NumSrc  NumDst   edges  in->out  aggregate first      transform first
//	0      158671   82289  411443  100->256  57.6 M values, 2.1 GMAC  161.8 M, 4.1 GMAC
//	1       82289   13975  139683  256->256  42.9 M, 0.92 GMAC       77.9 M, 5.4 GMAC
//	2       13975    1024   15014  256->47    4.4 M, 0.012 GMAC       4.9 M, 0.17 GMAC
//
// Even layer 2, the one DGL's rule would switch (256 > 47), moves 13 %
// more and does 14 times the products transformed first; projecting first
// pays on a block only where edges·(in-out) > NumSrc·(in+out) -
// 2·NumDst·in, i.e. with many edges per distinct source (large fanouts
// into a small graph). No layer of this configuration gains, so the order
// stays aggregate-then-transform everywhere (and the bits with it); only
// a sparse layer 0 projects first (forwardSparse), where the projection
// reads the stored entries only.

// commutes reports whether the aggregator commutes with the projection
// W_neigh (a linear aggregator), so that a sparse layer 0 can project the
// stored entries first.
func (s *sageLayer[T]) commutes() bool { return s.aggr == SAGEMean || s.aggr == SAGESum }

func (s *sageLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	return s.ForwardThen(p, b, h, nil)
}

// ForwardThen is Forward with the activation fused in (fusedForward): the
// blocked pass runs then on each block, the others on all rows at the end.
func (s *sageLayer[T]) ForwardThen(p *Pass, b *sample.Block, h []T, then func(o []T, lo, hi int)) []T {
	o := s.forward(p, b, h, then)
	if then != nil && !s.blocked(p) {
		par.Range(b.NumDst, len(o), func(lo, hi int) { then(o, lo, hi) })
	}
	return o
}

// blocked reports whether Forward runs block by block (forwardBlocked).
func (s *sageLayer[T]) blocked(p *Pass) bool {
	return p.Sparse == nil && s.commutes() && p.BF16 == nil
}

func (s *sageLayer[T]) forward(p *Pass, b *sample.Block, h []T, then func(o []T, lo, hi int)) []T {
	if p.Sparse != nil {
		switch {
		case s.commutes():
			return s.forwardSparse(p, b, h)
		case s.aggr == SAGEPool:
			return s.forwardSparsePool(p, b, h)
		}
		s.xd = densify(p.Sparse, h, s.in, s.xd)
		h = s.xd
	}
	in, out, nd := s.in, s.out, b.NumDst
	s.agg = grow(s.agg, nd*in)
	if s.blocked(p) {
		return s.forwardBlocked(b, h, then)
	}
	switch s.aggr {
	case SAGEMean, SAGESum:
		sumAggregate(b, h, in, s.agg, s.aggr == SAGEMean)
	case SAGEMax:
		s.arg = growIdx(s.arg, nd*in)
		maxAggregate(b, h, in, s.agg, s.arg)
	case SAGEPool:
		ns := b.NumSrc()
		s.q = grow(s.q, ns*in)
		fillRows(s.q, ns, s.bPool)
		gemm(p, false, false, ns, in, in, 1, h, in, s.wPool, in, 1, s.q, in)
		reluPar(s.q)
		s.arg = growIdx(s.arg, nd*in)
		maxAggregate(b, s.q, in, s.agg, s.arg)
	}
	o := grow(s.o, nd*out)
	s.o = o
	fillRows(o, nd, s.bias)
	// Destinations are the first NumDst sources, so h[:nd*in] are their
	// own rows.
	gemm(p, false, false, nd, out, in, 1, h[:nd*in], in, s.wSelf, out, 1, o, out)
	gemm(p, false, false, nd, out, in, 1, s.agg, in, s.wNeigh, out, 1, o, out)
	return o
}

// forwardBlocked is Forward under mean or sum at full precision, a block
// of output rows at a time: the block's aggregation, its bias rows and its
// two products (kernels.GemmRows, the calls Gemm makes for the block) run
// back to back, so the block's rows of the output and of the aggregate
// stay in cache between them instead of travelling through memory once
// per pass. Every value gets the operations of the pass-by-pass order, so
// the bits are the same.
func (s *sageLayer[T]) forwardBlocked(b *sample.Block, h []T, then func(o []T, lo, hi int)) []T {
	in, out, nd := s.in, s.out, b.NumDst
	o := grow(s.o, nd*out)
	s.o = o
	mean := s.aggr == SAGEMean
	byRowBlocks(nd, out, in, func(r0, r1 int) {
		aggregateRows(b, h, in, s.agg, mean, r0, r1)
		for i := r0; i < r1; i++ {
			copy(o[i*out:(i+1)*out], s.bias)
		}
		kernels.GemmRows(false, r0, r1, out, in, h[:nd*in], in, s.wSelf, out, 1, o, out)
		kernels.GemmRows(false, r0, r1, out, in, s.agg, in, s.wNeigh, out, 1, o, out)
		if then != nil {
			then(o, r0, r1)
		}
	})
	return o
}

func (s *sageLayer[T]) Backward(p *Pass, b *sample.Block, h, dz []T, wantInput bool) []T {
	return s.BackwardThen(p, b, h, dz, wantInput, nil)
}

// BackwardThen is Backward with the backward of the activation below fused
// in (fusedBackward): then runs on every range of the input gradient's
// rows once they are final.
func (s *sageLayer[T]) BackwardThen(p *Pass, b *sample.Block, h, dz []T, wantInput bool, then func(dh []T, lo, hi int)) []T {
	dh, fused := s.backward(p, b, h, dz, wantInput, then)
	if then != nil && dh != nil && !fused {
		par.Range(b.NumSrc(), len(dh), func(lo, hi int) { then(dh, lo, hi) })
	}
	return dh
}

// backward is Backward; fused reports whether it ran then itself.
func (s *sageLayer[T]) backward(p *Pass, b *sample.Block, h, dz []T, wantInput bool, then func(dh []T, lo, hi int)) (dh []T, fused bool) {
	in, out, nd := s.in, s.out, b.NumDst
	colSum(dz, nd, out, s.gBias)
	if p.Sparse != nil {
		switch {
		case s.commutes():
			s.backwardSparse(p, b, h, dz)
			return nil, false
		case s.aggr == SAGEPool:
			s.backwardSparsePool(p, b, h, dz)
			return nil, false
		}
		// The rows Forward densified; a sparse layer 0 is never asked
		// for its input gradient.
		h, wantInput = s.xd, false
	}
	gemm(p, true, false, in, out, nd, 1, h[:nd*in], in, dz, out, 1, s.gSelf, out)
	gemm(p, true, false, in, out, nd, 1, s.agg, in, dz, out, 1, s.gNeigh, out)
	pool := s.aggr == SAGEPool
	if !wantInput && !pool {
		return nil, false
	}
	ns := b.NumSrc()
	s.dagg = grow(s.dagg, nd*in)
	gemm(p, false, true, nd, in, out, 1, dz, out, s.wNeigh, out, 0, s.dagg, in)
	if pool {
		// dq: the max's adjoint, then through the ReLU; W_pool and b_pool
		// get hᵀ·dq and its column sums; the input gets dq·W_poolᵀ plus
		// the root term.
		s.dq = grow(s.dq, ns*in)
		maxScatter(&s.bt, b, s.dagg, s.arg, in, s.dq)
		reluMask(s.dq, s.q)
		gemm(p, true, false, in, in, ns, 1, h, in, s.dq, in, 1, s.gPool, in)
		colSum(s.dq, ns, in, s.gbPool)
		if !wantInput {
			return nil, false
		}
		dh = grow(s.dh, ns*in)
		s.dh = dh
		gemm(p, false, true, ns, in, in, 1, s.dq, in, s.wPool, in, 0, dh, in)
		gemm(p, false, true, nd, in, out, 1, dz, out, s.wSelf, out, 1, dh[:nd*in], in)
		return dh, false
	}
	dh = grow(s.dh, ns*in)
	s.dh = dh
	gemm(p, false, true, nd, in, out, 1, dz, out, s.wSelf, out, 0, dh[:nd*in], in)
	switch s.aggr {
	case SAGEMean, SAGESum:
		// The rows past the destinations start from zero in the scatter
		// itself, and leave it final: then runs there.
		terms := scatterTerms(&s.bt, b, s.dagg, in, s.aggr == SAGEMean)
		scatterSources(&s.bt, b, terms, in, dh, nd, then)
		return dh, true
	}
	clearPar(dh[nd*in:])
	maxScatterAdd(&s.bt, b, s.dagg, s.arg, in, dh)
	return dh, false
}

// forwardSparse is Forward over sparse inputs (values vals) for a linear
// aggregator: the self term X_dst·W_self directly, the neighbour term as
// the mean or sum of X·W_neigh over each destination's sources (either
// commutes with the projection).
func (s *sageLayer[T]) forwardSparse(p *Pass, b *sample.Block, vals []T) []T {
	x := p.Sparse
	out, nd, ns := s.out, b.NumDst, b.NumSrc()
	s.pn = grow(s.pn, ns*out)
	kernels.Spmm(x.Indptr, x.Indices, vals, ns, s.wNeigh, out, s.pn, false)
	s.agg = grow(s.agg, nd*out)
	sumAggregate(b, s.pn, out, s.agg, s.aggr == SAGEMean)
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

// backwardSparse adds the weight gradients of a sparse layer 0 under a
// linear aggregator: W_self gets X_dstᵀ·dz, W_neigh gets Xᵀ·dpn with dpn
// the aggregate's adjoint applied to dz.
func (s *sageLayer[T]) backwardSparse(p *Pass, b *sample.Block, vals, dz []T) {
	x := p.Sparse
	out, nd, ns := s.out, b.NumDst, b.NumSrc()
	kernels.SpmmT(x.Indptr, x.Indices, vals, nd, dz, out, s.gSelf)
	s.dpn = grow(s.dpn, ns*out)
	clearPar(s.dpn)
	sumScatter(&s.bt, b, dz, out, s.dpn, s.aggr == SAGEMean)
	kernels.SpmmT(x.Indptr, x.Indices, vals, ns, s.dpn, out, s.gNeigh)
}

// forwardSparsePool is Forward over sparse inputs under pool: the
// projection's linear part X·W_pool reads the stored entries only (the
// ReLU and the max follow it, so it is exact), as does the root term
// X_dst·W_self.
func (s *sageLayer[T]) forwardSparsePool(p *Pass, b *sample.Block, vals []T) []T {
	x := p.Sparse
	in, out, nd, ns := s.in, s.out, b.NumDst, b.NumSrc()
	s.q = grow(s.q, ns*in)
	fillRows(s.q, ns, s.bPool)
	kernels.Spmm(x.Indptr, x.Indices, vals, ns, s.wPool, in, s.q, true)
	reluPar(s.q)
	s.agg = grow(s.agg, nd*in)
	s.arg = growIdx(s.arg, nd*in)
	maxAggregate(b, s.q, in, s.agg, s.arg)
	o := grow(s.o, nd*out)
	s.o = o
	fillRows(o, nd, s.bias)
	gemm(p, false, false, nd, out, in, 1, s.agg, in, s.wNeigh, out, 1, o, out)
	kernels.Spmm(x.Indptr, x.Indices, vals, nd, s.wSelf, out, o, true)
	return o
}

// backwardSparsePool adds the weight gradients of a sparse layer 0 under
// pool: W_self gets X_dstᵀ·dz, W_neigh aggᵀ·dz, and W_pool Xᵀ·dq with dq
// the max's and the ReLU's adjoints applied to dz·W_neighᵀ (b_pool its
// column sums).
func (s *sageLayer[T]) backwardSparsePool(p *Pass, b *sample.Block, vals, dz []T) {
	x := p.Sparse
	in, out, nd, ns := s.in, s.out, b.NumDst, b.NumSrc()
	kernels.SpmmT(x.Indptr, x.Indices, vals, nd, dz, out, s.gSelf)
	gemm(p, true, false, in, out, nd, 1, s.agg, in, dz, out, 1, s.gNeigh, out)
	s.dagg = grow(s.dagg, nd*in)
	gemm(p, false, true, nd, in, out, 1, dz, out, s.wNeigh, out, 0, s.dagg, in)
	s.dq = grow(s.dq, ns*in)
	maxScatter(&s.bt, b, s.dagg, s.arg, in, s.dq)
	reluMask(s.dq, s.q)
	kernels.SpmmT(x.Indptr, x.Indices, vals, ns, s.dq, in, s.gPool)
	colSum(s.dq, ns, in, s.gbPool)
}
