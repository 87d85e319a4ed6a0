package train

import "mpignn/sample"

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
// node plus its self-loop, counted where that node is a destination:
//
//   - d_i (destination i of block l): 1 + its sampled in-edges in block l;
//   - d_j (source j of block l): 1 + its sampled in-edges in block l-1,
//     whose destinations are exactly block l's sources (the neighborhood
//     that produced h_j); for the first layer, 1 + its in-edges in block 0
//     when j is one of block 0's destinations, and 1 for the outermost
//     frontier, whose neighborhood was not sampled.
//
// A node's sampled neighborhood is a function of (seed, epoch, step, layer,
// node) only, so these weights, unlike block out-degrees, are the same for
// any rank count. This is the degree PyG's gcn_norm sees on a
// NeighborLoader subgraph (in-degree + 1, and 1 on the last hop). With a
// full neighborhood (fanout -1) every degree except the frontier's is the
// true degree + 1, i.e. full-graph GCN. A sampled edge j -> i with j == i
// (a self-loop in the data) is skipped: the layer adds exactly one.
//
// The layer aggregates before it transforms (agg·W on the NumDst rows, as
// GraphSAGE does), so the product runs over destinations only.
type gcnLayer[T Float] struct {
	in, out int
	w, bias []T
	gw, gb  []T

	srcNorm []T // 1/sqrt(d_j) per source
	dstNorm []T // 1/sqrt(d_i) per destination
	agg     []T // normalised aggregate incl. the self-loop, NumDst x in
	o       []T // output rows, NumDst x out
	dh      []T // gradient w.r.t. the input rows, NumSrc x in
	dagg    []T // gradient w.r.t. agg
}

func newGCN[T Float](c Config, l int) *gcnLayer[T] {
	in, out := c.LayerDims(l)
	return &gcnLayer[T]{in: in, out: out}
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

// norms fills srcNorm and dstNorm for block b (see the type comment).
func (g *gcnLayer[T]) norms(p *Pass, b *sample.Block) {
	nd, ns := b.NumDst, b.NumSrc()
	g.dstNorm = grow(g.dstNorm, nd)
	for i := range nd {
		g.dstNorm[i] = invSqrt[T](1 + inDegree(b, i))
	}
	g.srcNorm = grow(g.srcNorm, ns)
	for j := range ns {
		d := 0
		switch {
		case p.Prev != nil:
			d = inDegree(p.Prev, j) // block l's sources are block l-1's destinations
		case j < nd:
			d = inDegree(b, j)
		}
		g.srcNorm[j] = invSqrt[T](1 + d)
	}
}

func (g *gcnLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	in, out, nd := g.in, g.out, b.NumDst
	g.norms(p, b)
	g.agg = grow(g.agg, nd*in)
	parallelRows(nd, (len(b.Indices)+nd)*in, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := g.agg[i*in : (i+1)*in]
			clear(dst)
			di := g.dstNorm[i]
			axpy(di*g.srcNorm[i], h[i*in:(i+1)*in], dst)
			for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
				if int(j) != i {
					axpy(di*g.srcNorm[j], h[int(j)*in:(int(j)+1)*in], dst)
				}
			}
		}
	})
	o := grow(g.o, nd*out)
	g.o = o
	for i := 0; i < nd; i++ {
		copy(o[i*out:(i+1)*out], g.bias)
	}
	gemm(false, false, nd, out, in, 1, g.agg, in, g.w, out, 1, o, out)
	return o
}

func (g *gcnLayer[T]) Backward(_ *Pass, b *sample.Block, _, dz []T, wantInput bool) []T {
	in, out, nd := g.in, g.out, b.NumDst
	for i := 0; i < nd; i++ {
		for k, v := range dz[i*out : (i+1)*out] {
			g.gb[k] += v
		}
	}
	gemm(true, false, in, out, nd, 1, g.agg, in, dz, out, 1, g.gw, out)
	if !wantInput {
		return nil
	}
	ns := b.NumSrc()
	g.dagg = grow(g.dagg, nd*in)
	gemm(false, true, nd, in, out, 1, dz, out, g.w, out, 0, g.dagg, in)
	dh := grow(g.dh, ns*in)
	g.dh = dh
	clear(dh)
	// Serial scatter: sources are shared between destinations.
	for i := 0; i < nd; i++ {
		di := g.dstNorm[i]
		gi := g.dagg[i*in : (i+1)*in]
		axpy(di*g.srcNorm[i], gi, dh[i*in:(i+1)*in])
		for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			if int(j) != i {
				axpy(di*g.srcNorm[j], gi, dh[int(j)*in:(int(j)+1)*in])
			}
		}
	}
	return dh
}
