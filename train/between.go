package train

import (
	"fmt"
	"math"
	"strings"

	"mpignn/config"
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// Between the layers: residual connections, LayerNorm and jumping
// knowledge, the same for every homogeneous architecture (the net applies
// them to whatever rows a layer returns). The order follows PyG 2.6's
// BasicGNN.forward (torch_geometric/nn/models/basic_gnn.py): every layer
// but the conv to the output is
//
//	a_l = dropout( relu(norm_l(conv_l(h_l))) + P_l·h_l )
//
// where the residual term P_l·h_l (Residual; P_l the identity when the
// layer's input and output widths are equal, else a learned in x Hidden
// matrix without bias) sits where PyG's DeepGCNLayer(block="res") puts it
// (torch_geometric/nn/models/deep_gcn.py: h = x + act(norm(conv(x))), then
// dropout); BasicGNN itself has no residual option. Without JK the last
// layer is the conv to the output, untouched. With JK every layer,
// the last included, outputs Hidden rows through the same steps and the
// output is lin(JK(a_0, ..., a_{L-1})) with JK "cat" (the rows side by
// side, Hidden·L wide), "max" (element-wise maximum over the layers) or
// "last" (a_{L-1}) and lin a Hidden·L (cat) or Hidden by Classes map with
// bias, as BasicGNN's JumpingKnowledge and lin.
//
// LayerNorm normalises each node's row on its own (PyG's LayerNorm with
// mode="node", which is torch.nn.LayerNorm(Hidden), eps 1e-5): a function
// of the row only, so it is exact for any rank count. Batch norm is not
// offered: its statistics are over all the nodes of a batch, which are
// spread over the ranks, so it would need an Allreduce of the per-feature
// sums per layer per step (forward and backward), and its value would
// depend on which nodes share a step, which mpignn's evaluation (sampled
// or layer-wise, per rank) does not reproduce.

// Config.Norm and Config.JK values.
const (
	NormLayer = "layer"
	JKCat     = "cat"
	JKMax     = "max"
	JKLast    = "last"
)

// JKModes returns the jumping knowledge modes of Config.JK.
func JKModes() []string { return []string{JKCat, JKMax, JKLast} }

// normEps is LayerNorm's epsilon (torch.nn.LayerNorm's and PyG's default).
const normEps = 1e-5

// hasBetween reports whether c uses residual connections, a norm or
// jumping knowledge.
func (c Config) hasBetween() bool { return c.Residual || c.Norm != "" || c.JK != "" }

// convToOut reports whether layer l's convolution writes the model's
// output rows (Classes wide): the last layer, unless jumping knowledge
// maps every layer's Hidden rows to the output.
func (c Config) convToOut(l int) bool { return l == c.Layers-1 && c.JK == "" }

// validateBetween checks Residual, Norm and JK against the architecture
// and the layer count (when set).
func (c Config) validateBetween(a Arch) error {
	switch c.Norm {
	case "", NormLayer:
	default:
		return config.Errorf("{Norm} %q: want %s (batch norm is not offered: its statistics would span the ranks)", c.Norm, NormLayer)
	}
	switch c.JK {
	case "", JKCat, JKMax, JKLast:
	default:
		return config.Errorf("{JK} %q: want %s", c.JK, strings.Join(JKModes(), ", "))
	}
	field := ""
	switch {
	case c.Residual:
		field = "{Residual}"
	case c.Norm != "":
		field = "{Norm}"
	case c.JK != "":
		field = "{JK}"
	default:
		return nil
	}
	if a.Hetero {
		return config.Errorf(field+" is not available for the heterogeneous model %s (residual, norm and jk are for %s)", a.Name, strings.Join(Archs(), ", "))
	}
	if c.Layers == 1 {
		switch {
		case c.JK != "":
			return config.Errorf("{JK} %q needs at least 2 layers: one layer has nothing to combine", c.JK)
		case c.Norm != "":
			return config.Errorf("{Norm} %q needs at least 2 layers: one layer has nothing between layers to normalise", c.Norm)
		default:
			return config.Errorf("{Residual} needs at least 2 layers: one layer has no hidden layer to skip")
		}
	}
	return nil
}

// betweenSpec is one between-layer tensor: its full name and layer.
type betweenSpec struct {
	ParamSpec
	name  string
	layer int
}

// betweenSpecs lists the between-layer tensors of c in buffer order: for
// each layer l with a norm or a residual projection, "l<l>.norm.w" (the
// LayerNorm scale, starting at 1), "l<l>.norm.b", "l<l>.res.w" (in x
// Hidden, only where the widths differ); then the jumping knowledge map
// "jk.w" (Hidden·L or Hidden x Classes) and "jk.b". Empty without them.
func betweenSpecs(c Config) []betweenSpec {
	if !c.hasBetween() {
		return nil
	}
	var ss []betweenSpec
	for l := 0; l < c.Layers; l++ {
		if c.convToOut(l) {
			continue
		}
		in, out := c.LayerDims(l)
		pre := fmt.Sprintf("l%d.", l)
		if c.Norm != "" {
			ss = append(ss,
				betweenSpec{ParamSpec{Name: "norm.w", Rows: 1, Cols: out, Zero: true, Init: 1}, pre + "norm.w", l},
				betweenSpec{ParamSpec{Name: "norm.b", Rows: 1, Cols: out, Zero: true}, pre + "norm.b", l})
		}
		if c.Residual && in != out {
			ss = append(ss, betweenSpec{ParamSpec{Name: "res.w", Rows: in, Cols: out}, pre + "res.w", l})
		}
	}
	if c.JK != "" {
		k := c.jkWidth()
		ss = append(ss,
			betweenSpec{ParamSpec{Name: "w", Rows: k, Cols: c.Classes}, "jk.w", c.Layers},
			betweenSpec{ParamSpec{Name: "b", Rows: 1, Cols: c.Classes, Zero: true}, "jk.b", c.Layers})
	}
	return ss
}

// jkWidth is the width of the rows the jumping knowledge map reads.
func (c Config) jkWidth() int {
	if c.JK == JKCat {
		return c.Hidden * c.Layers
	}
	return c.Hidden
}

// betweenLayer is the state of one layer's between-layer steps.
type betweenLayer[T Float] struct {
	w, in       int // output (Hidden) and input width
	gamma, beta []T // LayerNorm scale and shift (nil without a norm)
	gg, gbeta   []T
	p, gp       []T // residual projection (nil: identity, or no residual)

	xhat []T // normalised rows (norm)
	rstd []T // 1/sqrt(var+eps) per row (norm)
	y    []T // the rows the ReLU read
	a    []T // output rows
	mask []T // dropout multipliers (keep/(1-p) or 0); nil when no dropout
	mbuf []T // mask's buffer
	tmp  []T // backward work rows
	dres []T // gradient w.r.t. the layer's destination input rows (residual)
}

// between is a net's residual, norm and jumping knowledge state.
type between[T Float] struct {
	cfg    Config
	ls     []betweenLayer[T]
	jw, jb []T // jumping knowledge map (nil without JK)
	gjw    []T
	gjb    []T
	jin    []T     // the rows the map read (seeds x jkWidth)
	jarg   []int32 // max: the layer each element of jin came from
	jout   []T     // output rows
	dj     []T     // gradient w.r.t. jin
	da     []T     // gradient w.r.t. the last layer's output rows (JK)
}

func newBetween[T Float](c Config) *between[T] {
	bw := &between[T]{cfg: c, ls: make([]betweenLayer[T], c.Layers)}
	for l := range bw.ls {
		bw.ls[l].in, bw.ls[l].w = c.LayerDims(l)
	}
	return bw
}

// bind takes the between-layer tensors' views from params and grads,
// which start at the first of them (betweenSpecs order).
func (bw *between[T]) bind(params, grads []T) {
	off := 0
	for _, s := range betweenSpecs(bw.cfg) {
		end := off + s.Rows*s.Cols
		p, g := params[off:end:end], grads[off:end:end]
		off = end
		if s.layer == bw.cfg.Layers {
			if s.Name == "w" {
				bw.jw, bw.gjw = p, g
			} else {
				bw.jb, bw.gjb = p, g
			}
			continue
		}
		bl := &bw.ls[s.layer]
		switch s.Name {
		case "norm.w":
			bl.gamma, bl.gg = p, g
		case "norm.b":
			bl.beta, bl.gbeta = p, g
		case "res.w":
			bl.p, bl.gp = p, g
		}
	}
}

// forwardBetween is forwardLayers for a config with residual, norm or
// jumping knowledge: n.out[l] is a_l for the layers under the between
// steps and the output rows (the conv's, or the JK map's) for the last.
func (n *net[T]) forwardBetween(blocks []sample.Block, x []T, train bool, key MaskKey) {
	h := x
	last := len(blocks) - 1
	for l := range blocks {
		b := &blocks[l]
		p := n.pass(blocks, l, train, key)
		o := n.layers[l].Forward(&p, b, h)
		if !n.cfg.convToOut(l) {
			o = n.bw.layerForward(l, b, o, h, p.Sparse, train, n.cfg.Dropout, key)
		}
		n.out[l] = o
		h = o
	}
	if n.cfg.JK != "" {
		n.out[last] = n.bw.jkForward(n.out, blocks[last].NumDst)
	}
}

// layerForward applies layer l's between steps to its conv output rows z
// (b.NumDst of them) given the layer's input rows h (of b's nodes,
// destinations first; the entries' values when xs is set) and returns a_l.
func (bw *between[T]) layerForward(l int, b *sample.Block, z, h []T, xs *sample.SparseRows, train bool, drop float32, key MaskKey) []T {
	bl := &bw.ls[l]
	nd, w := b.NumDst, bl.w
	y := z
	if bl.gamma != nil {
		bl.xhat = grow(bl.xhat, nd*w)
		bl.rstd = grow(bl.rstd, nd)
		bl.y = grow(bl.y, nd*w)
		layerNorm(z, nd, w, bl.gamma, bl.beta, bl.xhat, bl.rstd, bl.y)
		y = bl.y
	} else {
		bl.y = y
	}
	a := grow(bl.a, nd*w)
	bl.a = a
	par.Range(nd, nd*w, func(lo, hi int) {
		for k := lo * w; k < hi*w; k++ {
			a[k] = max(y[k], 0)
		}
	})
	if bw.cfg.Residual {
		switch {
		case xs != nil:
			kernels.Spmm(xs.Indptr, xs.Indices, h, nd, bl.p, w, a, true)
		case bl.p != nil:
			kernels.Gemm(false, false, nd, w, bl.in, 1, h[:nd*bl.in], bl.in, bl.p, w, 1, a, w)
		default:
			addPar(a, h[:nd*w])
		}
	}
	bl.mask = nil
	if train && drop > 0 {
		// The multipliers of the keyed masks (layer l's keys, as the
		// plain path's reluDropout uses): ones through dropout.
		bl.mbuf = grow(bl.mbuf, nd*w)
		m := bl.mbuf
		fillPar(m, 1)
		dropout(m, w, b.Orig[:nd], l, drop, key)
		mulPar(a, m)
		bl.mask = m
	}
	return a
}

// layerNorm writes the normalised rows xhat = (z - mean)·rstd, rstd and
// y = xhat·gamma + beta for n rows of width w (statistics of each row in
// float64, in column order: one writer per row).
func layerNorm[T Float](z []T, n, w int, gamma, beta, xhat, rstd, y []T) {
	par.Range(n, n*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := z[i*w : (i+1)*w]
			s := 0.0
			for _, v := range row {
				s += float64(v)
			}
			mean := s / float64(w)
			q := 0.0
			for _, v := range row {
				d := float64(v) - mean
				q += d * d
			}
			r := 1 / math.Sqrt(q/float64(w)+normEps)
			rstd[i] = T(r)
			for k, v := range row {
				xh := T((float64(v) - mean) * r)
				xhat[i*w+k] = xh
				y[i*w+k] = xh*gamma[k] + beta[k]
			}
		}
	})
}

// jkForward combines the first s rows (the seeds) of every layer's output
// and applies the map: the output rows.
func (bw *between[T]) jkForward(outs [][]T, s int) []T {
	c := bw.cfg
	hd, k := c.Hidden, c.jkWidth()
	bw.jin = grow(bw.jin, s*k)
	jin := bw.jin
	switch c.JK {
	case JKCat:
		par.Range(s, s*k, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				for l, a := range outs {
					copy(jin[i*k+l*hd:i*k+(l+1)*hd], a[i*hd:(i+1)*hd])
				}
			}
		})
	case JKMax:
		bw.jarg = growIdx(bw.jarg, s*hd)
		par.Range(s, s*k*len(outs), func(lo, hi int) {
			for e := lo * hd; e < hi*hd; e++ {
				best, arg := outs[0][e], int32(0)
				for l := 1; l < len(outs); l++ {
					if v := outs[l][e]; v > best {
						best, arg = v, int32(l)
					}
				}
				jin[e], bw.jarg[e] = best, arg
			}
		})
	case JKLast:
		copy(jin, outs[len(outs)-1][:s*hd])
	}
	o := grow(bw.jout, s*c.Classes)
	bw.jout = o
	fillRows(o, s, bw.jb)
	kernels.Gemm(false, false, s, c.Classes, k, 1, jin, k, bw.jw, c.Classes, 1, o, c.Classes)
	return o
}

// jkBackward adds the map's gradients given dz (seeds x Classes) and
// leaves the gradient w.r.t. jin in bw.dj.
func (bw *between[T]) jkBackward(dz []T, s int) {
	c := bw.cfg
	k := c.jkWidth()
	colSum(dz, s, c.Classes, bw.gjb)
	kernels.Gemm(true, false, k, c.Classes, s, 1, bw.jin, k, dz, c.Classes, 1, bw.gjw, c.Classes)
	bw.dj = grow(bw.dj, s*k)
	kernels.Gemm(false, true, s, k, c.Classes, 1, dz, c.Classes, bw.jw, c.Classes, 0, bw.dj, k)
}

// jkGrad adds to da (rows of layer l's output, at least s of them) the
// part of bw.dj that flows to layer l's first s rows.
func (bw *between[T]) jkGrad(l int, da []T, s int) {
	c := bw.cfg
	hd, k := c.Hidden, c.jkWidth()
	dj := bw.dj
	switch c.JK {
	case JKCat:
		par.Range(s, s*hd, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				addRow(da[i*hd:(i+1)*hd], dj[i*k+l*hd:i*k+(l+1)*hd])
			}
		})
	case JKMax:
		par.Range(s, s*hd, func(lo, hi int) {
			for e := lo * hd; e < hi*hd; e++ {
				if int(bw.jarg[e]) == l {
					da[e] += dj[e]
				}
			}
		})
	case JKLast:
		if l == c.Layers-1 {
			addPar(da[:s*hd], dj[:s*hd])
		}
	}
}

// layerBackward takes the gradient da w.r.t. a_l (b.NumDst rows, may be
// overwritten) back through layer l's between steps: it adds the norm's
// and the projection's gradients, leaves the residual's gradient w.r.t.
// the destinations' input rows in bl.dres when wantInput, and returns the
// gradient w.r.t. the conv's output rows.
func (bw *between[T]) layerBackward(l int, b *sample.Block, da, h []T, xs *sample.SparseRows, wantInput bool) []T {
	bl := &bw.ls[l]
	nd, w := b.NumDst, bl.w
	if bl.mask != nil {
		mulPar(da, bl.mask)
	}
	if bw.cfg.Residual {
		switch {
		case xs != nil:
			kernels.SpmmT(xs.Indptr, xs.Indices, h, nd, da, w, bl.gp)
		case bl.p != nil:
			kernels.Gemm(true, false, bl.in, w, nd, 1, h[:nd*bl.in], bl.in, da, w, 1, bl.gp, w)
		}
		if wantInput {
			bl.dres = grow(bl.dres, nd*bl.in)
			if bl.p != nil {
				kernels.Gemm(false, true, nd, bl.in, w, 1, da, w, bl.p, w, 0, bl.dres, bl.in)
			} else {
				copyPar(bl.dres, da)
			}
		}
	}
	y := bl.y
	par.Range(nd, nd*w, func(lo, hi int) {
		for k := lo * w; k < hi*w; k++ {
			pos := 0
			if y[k] > 0 {
				pos = 1
			}
			da[k] *= T(pos)
		}
	})
	if bl.gamma == nil {
		return da
	}
	t := grow(bl.tmp, nd*w)
	bl.tmp = t
	par.Range(nd, nd*w, func(lo, hi int) {
		for k := lo * w; k < hi*w; k++ {
			t[k] = da[k] * bl.xhat[k]
		}
	})
	colSum(t, nd, w, bl.gg)
	colSum(da, nd, w, bl.gbeta)
	// d z = rstd·(g - mean(g) - xhat·mean(g·xhat)) with g = da·gamma, per
	// row (the LayerNorm adjoint), written over da.
	par.Range(nd, nd*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g, xh := da[i*w:(i+1)*w], bl.xhat[i*w:(i+1)*w]
			s1, s2 := 0.0, 0.0
			for k := range g {
				gk := float64(g[k] * bl.gamma[k])
				s1 += gk
				s2 += gk * float64(xh[k])
			}
			m1, m2 := s1/float64(w), s2/float64(w)
			r := float64(bl.rstd[i])
			for k := range g {
				gk := float64(g[k] * bl.gamma[k])
				g[k] = T(r * (gk - m1 - float64(xh[k])*m2))
			}
		}
	})
	return da
}

// backwardBetween is backward for a config with residual, norm or jumping
// knowledge (n.dz holds the gradient w.r.t. the output rows).
func (n *net[T]) backwardBetween(blocks []sample.Block, train bool) {
	bw := n.bw
	last := len(blocks) - 1
	s := blocks[last].NumDst
	da := n.dz
	if n.cfg.JK != "" {
		bw.jkBackward(n.dz, s)
		bw.da = grow(bw.da, s*n.cfg.Hidden)
		clearPar(bw.da)
		bw.jkGrad(last, bw.da, s)
		da = bw.da
	}
	for l := last; l >= 0; l-- {
		b := &blocks[l]
		hin := n.xin
		if l > 0 {
			hin = n.out[l-1]
		}
		p := n.pass(blocks, l, train, n.key)
		// A heterogeneous model's layer 0 reads its typed input
		// projections, which train: it needs the input gradient too.
		wantInput := l > 0 || n.het != nil
		dz := da
		if !n.cfg.convToOut(l) {
			dz = bw.layerBackward(l, b, da, hin, p.Sparse, wantInput)
		}
		dh := n.layers[l].Backward(&p, b, hin, dz, wantInput)
		if wantInput && n.cfg.Residual && !n.cfg.convToOut(l) {
			addPar(dh[:len(bw.ls[l].dres)], bw.ls[l].dres)
		}
		if l == 0 {
			if n.het != nil {
				n.het.backward(dh, train, n.key)
			}
			break
		}
		if n.cfg.JK != "" {
			bw.jkGrad(l-1, dh, s)
		}
		da = dh
	}
}

// addPar adds src to dst element-wise (rows in parallel, one writer each).
func addPar[T Float](dst, src []T) {
	par.Range(len(dst), len(dst), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			dst[k] += src[k]
		}
	})
}

// mulPar multiplies dst by src element-wise.
func mulPar[T Float](dst, src []T) {
	par.Range(len(dst), len(dst), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			dst[k] *= src[k]
		}
	})
}

// fillPar sets every element of dst to v.
func fillPar[T Float](dst []T, v T) {
	par.Range(len(dst), len(dst), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			dst[k] = v
		}
	})
}

// addRow adds src to dst.
func addRow[T Float](dst, src []T) {
	for k := range dst {
		dst[k] += src[k]
	}
}
