package train

import (
	"fmt"
	"math"

	"mpignn/config"
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// ginLayer is a graph isomorphism layer (Xu et al., "How Powerful are
// Graph Neural Networks?"; PyG GINConv) over a sampled block, or with
// edge features its GINE variant (Hu et al., "Strategies for Pre-training
// Graph Neural Networks"; PyG GINEConv):
//
//	a_i  = (1+ε)·h_i + sum_{e: j -> i} m_e
//	m_e  = h_j                              (gin)
//	m_e  = ReLU(h_j + e_ij·W_e + b_e)         (gine, W_e: EdgeDim x in)
//	out_i = ReLU(a_i·W1 + b1)·W2 + b2        (the MLP, in -> out -> out)
//
// The MLP is the one torch_geometric.nn.models.GIN builds in init_conv:
// MLP([in, out, out]) with BasicGNN's act (ReLU) and norm (None), plain
// last layer, no dropout inside. The aggregation is a plain sum over the
// sampled in-edges, and GINConv adds no self-loops: a sampled edge j -> i
// with j == i (a self-loop in the data) is a message like any other, so
// with it the node's own row counts 2+ε times, as in PyG. (mpignn's SAGE,
// GCN and GAT skip such an edge because they add their own self term.)
//
// ε is the constant of the eps parameter, or, with train_eps, a learnable
// 1x1 tensor starting at eps (PyG registers it as a buffer or a Parameter,
// and both are in the state dict). Like every mpignn tensor it takes the
// optimizer's weight decay, as PyTorch's Adam applies weight_decay to
// every parameter of model.parameters(), ε included.
type ginLayer[T Float] struct {
	in, out, edim int
	trainEps      bool
	eps0          T // ε without train_eps

	w1, b1, w2, b2, eps, we, be []T
	gw1, gb1, gw2, gb2, geps    []T
	gwe, gbe                    []T

	msg    []T // gine: the message pre-activation h_j + e_ij·W_e + b_e per edge, ne x in
	agg    []T // a, the aggregate (1+ε)·h_i + sum of messages, NumDst x in
	z1     []T // a·W1 + b1, NumDst x out
	r      []T // ReLU(z1)
	o      []T // output rows, NumDst x out
	dr     []T // gradient w.r.t. r, then z1
	da     []T // gradient w.r.t. a, NumDst x in
	dmsg   []T // gine: gradient w.r.t. msg
	dh     []T // gradient w.r.t. the input rows, NumSrc x in
	rowEps []T // per destination da_i·h_i (dz1_i·pw_i when sparse), summed in order for ε's gradient
	dense  []T // gine, sparse layer 0: the input rows made dense

	// Sparse layer 0 of gin (Pass.Sparse): pw = X·W1 for every source and
	// dpw its gradient; z1 is then (1+ε)·pw_i + sum_j pw_j + b1.
	pw, dpw []T

	bt blockT // the block's edges by source, for the backward scatter
}

// GIN's parameters (GINE shares them) and its architecture names.
const (
	ArchGIN     = "gin"
	ArchGINE    = "gine"
	trainEpsKey = "train_eps"
	epsKey      = "eps"
)

// ginParams are the hyper-parameters of GIN and GINE, PyG's GINConv and
// GINEConv arguments of the same names.
func ginParams() []Param {
	return []Param{
		{Key: trainEpsKey, Kind: ParamBool, Default: "false", Omit: "false", Help: "gin, gine: learn ε, the weight of a node's own row ((1+ε)·h_i), as PyG's train_eps"},
		{Key: epsKey, Kind: ParamFloat, Default: "0", Omit: "0", Help: "gin, gine: ε (its initial value with --train-eps), as PyG's eps"},
	}
}

// ginArch is GIN's registry entry.
func ginArch() Arch {
	return Arch{
		Name: ArchGIN, Doc: "GIN, MLP((1+ε)·h_i + sum of in-neighbours' rows), MLP in -> out -> out with ReLU; learnable ε with --train-eps",
		Params:   ginParams(),
		Validate: validateGIN,
		New32:    func(c Config, l int) Layer[float32] { return newGIN[float32](c, l) },
		New64:    func(c Config, l int) Layer[float64] { return newGIN[float64](c, l) },
		pyg:      ginPyG,
		pygSpec: func(c Config, s *PyGModelSpec) {
			s.Class = "torch_geometric.nn.models.GIN"
			ginKwargs(c, s)
		},
	}
}

// gineArch is GINE's registry entry.
func gineArch() Arch {
	return Arch{
		Name: ArchGINE, Doc: "GINE, MLP((1+ε)·h_i + sum of ReLU(h_j + Linear(e_ij))), GIN with edge features (needs them)",
		Params:       ginParams(),
		Validate:     validateGIN,
		New32:        func(c Config, l int) Layer[float32] { return newGIN[float32](c, l) },
		New64:        func(c Config, l int) Layer[float64] { return newGIN[float64](c, l) },
		EdgeFeatures: true, NeedsEdgeFeatures: true,
		pyg: ginPyG,
		pygSpec: func(c Config, s *PyGModelSpec) {
			// PyG has GINEConv but no model class of it.
			s.Class = "GINE"
			s.Kwargs["edge_dim"] = c.EdgeDim
			ginKwargs(c, s)
			s.Notes = append(s.Notes, "PyG has no GINE model class: GINE (scripts/pyg_check.py) is torch_geometric.nn.models.GIN with "+
				"GINEConv(MLP([in, out, out]), train_eps, eps, edge_dim) in place of GINConv; forward(x, edge_index, edge_attr)")
		},
	}
}

// ginKwargs adds GINConv's and GINEConv's arguments to the PyG spec.
func ginKwargs(c Config, s *PyGModelSpec) {
	s.Kwargs["train_eps"] = c.Opts.Bool(trainEpsKey)
	s.Kwargs["eps"] = c.Opts.Float32(epsKey)
}

// ginPyG names layer l's tensors as PyG's GINConv/GINEConv over
// torch_geometric.nn.MLP: nn.lins.0 and nn.lins.1 (Linear, weight
// output-major), eps (shape (1,); a buffer holding the configured value
// without train_eps) and, for GINE, lin (Linear(edge_dim, in)).
func ginPyG(c Config, l int, m, p string) []pygEntry {
	in, out := c.LayerDims(l)
	es := []pygEntry{
		one(m+"w1", p+"nn.lins.0.weight", []int{out, in}, true),
		one(m+"b1", p+"nn.lins.0.bias", []int{out}, false),
		one(m+"w2", p+"nn.lins.1.weight", []int{out, out}, true),
		one(m+"b2", p+"nn.lins.1.bias", []int{out}, false),
	}
	if c.Opts.Bool(trainEpsKey) {
		es = append(es, one(m+"eps", p+"eps", []int{1}, false))
	} else {
		es = append(es, fixed(p+"eps", c.Opts.Float32(epsKey), fmt.Sprintf("eps %v (a constant: train_eps false)", c.Opts.Float32(epsKey))))
	}
	if c.EdgeDim > 0 {
		es = append(es,
			one(m+"w_edge", p+"lin.weight", []int{in, c.EdgeDim}, true),
			one(m+"b_edge", p+"lin.bias", []int{in}, false))
	}
	return es
}

// validateGIN checks ε and that GINE has edge features to read. The
// settings are checked before the partition gives InDim and EdgeDim
// (ValidateSettings), so only a complete config (InDim set) without edge
// features is refused.
func validateGIN(c Config) error {
	eps := c.Opts.Float32(epsKey)
	switch {
	case math.IsNaN(float64(eps)) || math.IsInf(float64(eps), 0):
		return config.Errorf("{Opts.Eps} %v must be a finite number", eps)
	case c.Arch == ArchGINE && c.EdgeDim == 0 && c.InDim > 0:
		return config.Errorf("{Arch} gine reads edge features (ReLU(h_j + Linear(e_ij))) but {EdgeDim} is 0: give it a partition's edge features, or use gin")
	}
	return nil
}

func newGIN[T Float](c Config, l int) *ginLayer[T] {
	in, out := c.LayerDims(l)
	return &ginLayer[T]{in: in, out: out, edim: c.EdgeDim, trainEps: c.Opts.Bool(trainEpsKey), eps0: T(c.Opts.Float32(epsKey))}
}

func (g *ginLayer[T]) Specs() []ParamSpec {
	s := []ParamSpec{
		{Name: "w1", Rows: g.in, Cols: g.out},
		{Name: "b1", Rows: 1, Cols: g.out, Zero: true},
		{Name: "w2", Rows: g.out, Cols: g.out},
		{Name: "b2", Rows: 1, Cols: g.out, Zero: true},
	}
	if g.trainEps {
		// PyG's reset_parameters fills eps with its initial value.
		s = append(s, ParamSpec{Name: "eps", Rows: 1, Cols: 1, Zero: true, Init: float32(g.eps0)})
	}
	if g.edim > 0 {
		s = append(s,
			ParamSpec{Name: "w_edge", Rows: g.edim, Cols: g.in},
			ParamSpec{Name: "b_edge", Rows: 1, Cols: g.in, Zero: true})
	}
	return s
}

func (g *ginLayer[T]) Bind(p, gr [][]T) {
	g.w1, g.b1, g.w2, g.b2 = p[0], p[1], p[2], p[3]
	g.gw1, g.gb1, g.gw2, g.gb2 = gr[0], gr[1], gr[2], gr[3]
	k := 4
	g.eps, g.geps = nil, nil
	if g.trainEps {
		g.eps, g.geps = p[k], gr[k]
		k++
	}
	if g.edim > 0 {
		g.we, g.be, g.gwe, g.gbe = p[k], p[k+1], gr[k], gr[k+1]
	}
}

// self is 1+ε.
func (g *ginLayer[T]) self() T {
	if g.trainEps {
		return 1 + g.eps[0]
	}
	return 1 + g.eps0
}

func (g *ginLayer[T]) Forward(p *Pass, b *sample.Block, h []T) []T {
	in, out, nd := g.in, g.out, b.NumDst
	switch {
	case p.Sparse != nil && g.edim == 0:
		g.forwardSparse(p.Sparse, b, h)
	default:
		if p.Sparse != nil {
			// GINE's message is not linear in h_j, so the sparse rows
			// cannot be projected first: layer 0 reads them dense.
			h = g.densify(p.Sparse, h)
		}
		if g.edim > 0 {
			g.messages(p, b, h)
		}
		g.aggregate(b, h)
		g.z1 = grow(g.z1, nd*out)
		fillRows(g.z1, nd, g.b1)
		gemm(p, false, false, nd, out, in, 1, g.agg, in, g.w1, out, 1, g.z1, out)
	}
	g.r = grow(g.r, nd*out)
	par.Range(len(g.r), len(g.r)/4, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			g.r[k] = max(g.z1[k], 0)
		}
	})
	o := grow(g.o, nd*out)
	g.o = o
	fillRows(o, nd, g.b2)
	gemm(p, false, false, nd, out, out, 1, g.r, out, g.w2, out, 1, o, out)
	return o
}

// densify writes the sparse rows x (values vals) into dense rows.
func (g *ginLayer[T]) densify(x *sample.SparseRows, vals []T) []T {
	in, ns := g.in, x.Rows()
	g.dense = grow(g.dense, ns*in)
	par.Range(ns, len(vals)+ns*in, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := g.dense[i*in : (i+1)*in]
			clear(row)
			for e := x.Indptr[i]; e < x.Indptr[i+1]; e++ {
				row[x.Indices[e]] += vals[e]
			}
		}
	})
	return g.dense
}

// messages fills msg with GINE's pre-activations h_j + e_ij·W_e + b_e.
func (g *ginLayer[T]) messages(p *Pass, b *sample.Block, h []T) {
	in, ne := g.in, len(b.Indices)
	g.msg = grow(g.msg, ne*in)
	fillRows(g.msg, ne, g.be)
	gemm(p, false, false, ne, in, g.edim, 1, edgeFeat[T](b), g.edim, g.we, in, 1, g.msg, in)
	par.Range(ne, ne*in, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			kernels.Axpy(1, h[int(b.Indices[k])*in:(int(b.Indices[k])+1)*in], g.msg[k*in:(k+1)*in])
		}
	})
}

// edgeFeat returns the block's edge features in the layer's element type:
// the float32 values themselves, or a float64 copy for the models of the
// gradient checks.
func edgeFeat[T Float](b *sample.Block) []T {
	if e, ok := any(b.EdgeFeat).([]T); ok {
		return e
	}
	out := make([]T, len(b.EdgeFeat))
	for i, v := range b.EdgeFeat {
		out[i] = T(v)
	}
	return out
}

// aggregate fills agg with a_i = (1+ε)·h_i + sum of the messages of i's
// edges in block order, one writer per destination row.
func (g *ginLayer[T]) aggregate(b *sample.Block, h []T) {
	in, nd := g.in, b.NumDst
	g.agg = grow(g.agg, nd*in)
	self := g.self()
	par.Range(nd, (len(b.Indices)+nd)*in, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := g.agg[i*in : (i+1)*in]
			for k, v := range h[i*in : (i+1)*in] {
				dst[k] = self * v
			}
			if g.edim == 0 {
				// The sum over the sources in edge order, as the Axpy
				// loop added them, in registers (kernels.AddRows).
				kernels.AddRows(dst, h, in, b.Indices[b.Indptr[i]:b.Indptr[i+1]])
				continue
			}
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				for k, v := range g.msg[int(e)*in : int(e+1)*in] {
					dst[k] += max(v, 0)
				}
			}
		}
	})
}

// forwardSparse computes z1 of GIN's layer 0 over sparse inputs (values
// vals): the first linear map commutes with the sum, so every source is
// projected first (pw = X·W1) and z1_i = (1+ε)·pw_i + sum_j pw_j + b1.
func (g *ginLayer[T]) forwardSparse(x *sample.SparseRows, b *sample.Block, vals []T) {
	out, nd, ns := g.out, b.NumDst, b.NumSrc()
	g.pw = grow(g.pw, ns*out)
	kernels.Spmm(x.Indptr, x.Indices, vals, ns, g.w1, out, g.pw, false)
	g.z1 = grow(g.z1, nd*out)
	self := g.self()
	par.Range(nd, (len(b.Indices)+nd)*out, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := g.z1[i*out : (i+1)*out]
			for k, v := range g.pw[i*out : (i+1)*out] {
				dst[k] = self * v
			}
			kernels.AddRows(dst, g.pw, out, b.Indices[b.Indptr[i]:b.Indptr[i+1]])
			for k, v := range g.b1 {
				dst[k] += v
			}
		}
	})
}

func (g *ginLayer[T]) Backward(p *Pass, b *sample.Block, h, dout []T, wantInput bool) []T {
	in, out, nd, ns := g.in, g.out, b.NumDst, b.NumSrc()
	// The MLP: o = r·W2 + b2, r = ReLU(z1).
	colSum(dout, nd, out, g.gb2)
	gemm(p, true, false, out, out, nd, 1, g.r, out, dout, out, 1, g.gw2, out)
	g.dr = grow(g.dr, nd*out)
	gemm(p, false, true, nd, out, out, 1, dout, out, g.w2, out, 0, g.dr, out)
	par.Range(len(g.dr), len(g.dr)/4, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if g.z1[k] <= 0 {
				g.dr[k] = 0
			}
		}
	})
	colSum(g.dr, nd, out, g.gb1)
	if p.Sparse != nil && g.edim == 0 {
		// dpw: the adjoint of z1's sum; W1 gets Xᵀ·dpw and ε the sum of
		// dz1_i·pw_i.
		g.epsGrad(g.dr, g.pw, nd, out)
		g.dpw = grow(g.dpw, ns*out)
		g.scatter(b, g.dr, out, g.dpw, nil)
		kernels.SpmmT(p.Sparse.Indptr, p.Sparse.Indices, h, ns, g.dpw, out, g.gw1)
		return nil
	}
	if p.Sparse != nil {
		h = g.dense
	}
	gemm(p, true, false, in, out, nd, 1, g.agg, in, g.dr, out, 1, g.gw1, out)
	g.da = grow(g.da, nd*in)
	gemm(p, false, true, nd, in, out, 1, g.dr, out, g.w1, out, 0, g.da, in)
	g.epsGrad(g.da, h, nd, in)
	if g.edim > 0 {
		g.edgeGrads(p, b)
	}
	if !wantInput || p.Sparse != nil {
		return nil
	}
	dh := grow(g.dh, ns*in)
	g.dh = dh
	g.scatter(b, g.da, in, dh, g.dmsg)
	return dh
}

// epsGrad adds to ε's gradient (train_eps) the sum over destinations of
// d_i·x_i (w wide rows): per-row dots in parallel, summed in row order.
func (g *ginLayer[T]) epsGrad(d, x []T, nd, w int) {
	if !g.trainEps {
		return
	}
	g.rowEps = grow(g.rowEps, nd)
	par.Range(nd, nd*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g.rowEps[i] = kernels.Dot(d[i*w:(i+1)*w], x[i*w:(i+1)*w])
		}
	})
	var s T
	for _, v := range g.rowEps[:nd] {
		s += v
	}
	g.geps[0] += s
}

// edgeGrads computes GINE's message gradients dmsg_e = da_i ⊙ [msg_e > 0]
// for every edge e ending at i and adds W_e's and b_e's gradients.
func (g *ginLayer[T]) edgeGrads(p *Pass, b *sample.Block) {
	in, nd, ne := g.in, b.NumDst, len(b.Indices)
	g.dmsg = grow(g.dmsg, ne*in)
	par.Range(nd, ne*in, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			da := g.da[i*in : (i+1)*in]
			for e := int(b.Indptr[i]); e < int(b.Indptr[i+1]); e++ {
				m, dm := g.msg[e*in:(e+1)*in], g.dmsg[e*in:(e+1)*in]
				for k, v := range m {
					dm[k] = 0
					if v > 0 {
						dm[k] = da[k]
					}
				}
			}
		}
	})
	colSum(g.dmsg, ne, in, g.gbe)
	gemm(p, true, false, g.edim, in, ne, 1, edgeFeat[T](b), g.edim, g.dmsg, in, 1, g.gwe, in)
}

// scatter writes into d (NumSrc x w) the adjoint of the aggregation
// applied to gd (NumDst x w): (1+ε)·gd[j] for a destination j, plus, for
// every edge e: j -> i, gd[i] (gin) or dmsg[e] (gine, dmsg non-nil). It
// runs over sources (one writer per row of d), each row taking its self
// term, then its edges in ascending edge order: the same sum on any
// thread count.
func (g *ginLayer[T]) scatter(b *sample.Block, gd []T, w int, d, dmsg []T) {
	g.bt.build(b)
	if dmsg == nil {
		g.bt.buildNbr()
	}
	nd := b.NumDst
	self := g.self()
	par.Range(b.NumSrc(), (len(b.Indices)+nd)*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := d[j*w : (j+1)*w]
			clear(row)
			if j < nd {
				kernels.Axpy(self, gd[j*w:(j+1)*w], row)
			}
			// Then the edge terms in ascending edge order, one rounded
			// addition each (kernels.AddRows, in registers): the message
			// gradient of each edge, or the gradient of its destination.
			if dmsg != nil {
				kernels.AddRows(row, dmsg, w, g.bt.edges(j))
			} else {
				kernels.AddRows(row, gd, w, g.bt.nbr[g.bt.off[j]:g.bt.off[j+1]])
			}
		}
	})
}

// GINOpts returns the Opts of a GIN (or GINE) layer stack: ε fixed at eps,
// or learnable from eps with trainEps.
func GINOpts(trainEps bool, eps float32) Opts {
	o := Opts("")
	if trainEps {
		o = o.With(trainEpsKey, true)
	}
	if eps != 0 {
		o = o.With(epsKey, eps)
	}
	return o
}
