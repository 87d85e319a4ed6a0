package train

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// decoderPrefix names the decoder's tensors in Config.Tensors ("dec.w1").
const decoderPrefix = "dec."

// decoderSpecs lists the decoder's parameter tensors in buffer order: none
// for the dot product, and for the MLP W1 (C x C), b1 (1 x C), W2 (C x O),
// b2 (1 x O), input-major like the layers' weights, where O is 1 for link
// prediction and EdgeOut for an edge predictor.
func decoderSpecs(c Config) []ParamSpec {
	if c.Decoder != DecoderMLP {
		return nil
	}
	w, o := c.Classes, c.PairOut()
	return []ParamSpec{
		{Name: "w1", Rows: w, Cols: w},
		{Name: "b1", Rows: 1, Cols: w, Zero: true},
		{Name: "w2", Rows: w, Cols: o},
		{Name: "b2", Rows: 1, Cols: o, Zero: true},
	}
}

// PairOut is the decoder's output width per pair: EdgeOut for an edge
// predictor, else 1 (a link logit).
func (c Config) PairOut() int { return max(c.EdgeOut, 1) }

// decoder scores pairs of embeddings (u_i, v_i), each row C wide. It owns
// work buffers reused across calls, so it is not safe for concurrent use.
type decoder[T Float] struct {
	mlp bool
	c   int
	out int // outputs per pair (Config.PairOut)

	w1, b1, w2, b2     []T
	gw1, gb1, gw2, gb2 []T

	x  []T // MLP: u ⊙ v, P x C (kept for backward)
	r  []T // MLP: ReLU of the hidden layer, P x C (kept for backward)
	dr []T // MLP: gradient w.r.t. the hidden layer, P x C
	dx []T // MLP: gradient w.r.t. x, P x C
}

func newDecoder[T Float](c Config) *decoder[T] {
	return &decoder[T]{mlp: c.Decoder == DecoderMLP, c: c.Classes, out: c.PairOut()}
}

// bind hands the decoder its parameter and gradient views (decoderSpecs
// order; nothing for the dot product).
func (d *decoder[T]) bind(p, g [][]T) {
	if !d.mlp {
		return
	}
	d.w1, d.b1, d.w2, d.b2 = p[0], p[1], p[2], p[3]
	d.gw1, d.gb1, d.gw2, d.gb2 = g[0], g[1], g[2], g[3]
}

// forward writes the logit of pair i into z[i] (an edge predictor: its
// out values into z[i*out:(i+1)*out]) for the p pairs whose endpoint rows
// are u and v (row-major, p x C each).
func (d *decoder[T]) forward(u, v []T, p int, z []T) {
	c := d.c
	if !d.mlp {
		par.Range(p, p*c, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				s := T(0)
				for k, a := range u[i*c : (i+1)*c] {
					s += a * v[i*c+k]
				}
				z[i] = s
			}
		})
		return
	}
	d.x = grow(d.x, p*c)
	par.Range(p*c, p*c, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			d.x[k] = u[k] * v[k]
		}
	})
	d.r = grow(d.r, p*c)
	fillRows(d.r, p, d.b1)
	kernels.Gemm(false, false, p, c, c, 1, d.x, c, d.w1, c, 1, d.r, c)
	par.Range(p*c, p*c, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			d.r[k] = max(d.r[k], 0)
		}
	})
	if o := d.out; o > 1 {
		fillRows(z[:p*o], p, d.b2)
		kernels.Gemm(false, false, p, o, c, 1, d.r, c, d.w2, o, 1, z[:p*o], o)
		return
	}
	for i := range z[:p] {
		z[i] = d.b2[0]
	}
	kernels.Gemm(false, false, p, 1, c, 1, d.r, c, d.w2, 1, 1, z[:p], 1)
}

// backward ADDS the decoder's parameter gradients for dz (gradient of the
// loss w.r.t. the logits of the last forward over the same u, v) and
// WRITES the gradients w.r.t. u and v into du and dv.
func (d *decoder[T]) backward(u, v []T, p int, dz, du, dv []T) {
	c := d.c
	if !d.mlp {
		par.Range(p, p*c, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				g := dz[i]
				for k := i * c; k < (i+1)*c; k++ {
					du[k] = g * v[k]
					dv[k] = g * u[k]
				}
			}
		})
		return
	}
	d.dr = grow(d.dr, p*c)
	if o := d.out; o > 1 {
		// An edge predictor's O outputs: the same steps as below with
		// dz a p x O matrix (the link path keeps its own loops, whose bits
		// its goldens pin).
		colSum(dz[:p*o], p, o, d.gb2)
		kernels.Gemm(true, false, c, o, p, 1, d.r, c, dz[:p*o], o, 1, d.gw2, o)
		kernels.Gemm(false, true, p, c, o, 1, dz[:p*o], o, d.w2, o, 0, d.dr, c)
		par.Range(p*c, p*c, func(lo, hi int) {
			for k := lo; k < hi; k++ {
				if d.r[k] <= 0 {
					d.dr[k] = 0
				}
			}
		})
		d.backwardHidden(u, v, p, du, dv)
		return
	}
	for _, g := range dz[:p] {
		d.gb2[0] += g
	}
	kernels.Gemm(true, false, c, 1, p, 1, d.r, c, dz[:p], 1, 1, d.gw2, 1)
	// Through the second linear layer and the ReLU: a hidden unit passed
	// gradient exactly when its output is positive.
	par.Range(p, p*c, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := dz[i]
			for k := 0; k < c; k++ {
				pos := T(0)
				if d.r[i*c+k] > 0 {
					pos = 1
				}
				d.dr[i*c+k] = g * d.w2[k] * pos
			}
		}
	})
	d.backwardHidden(u, v, p, du, dv)
}

// backwardHidden completes the MLP's backward from d.dr (the gradient
// w.r.t. the hidden layer's pre-activation): the first layer's gradients
// and those of u and v.
func (d *decoder[T]) backwardHidden(u, v []T, p int, du, dv []T) {
	c := d.c
	colSum(d.dr, p, c, d.gb1)
	kernels.Gemm(true, false, c, c, p, 1, d.x, c, d.dr, c, 1, d.gw1, c)
	d.dx = grow(d.dx, p*c)
	kernels.Gemm(false, true, p, c, c, 1, d.dr, c, d.w1, c, 0, d.dx, c)
	par.Range(p*c, p*c, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			du[k] = d.dx[k] * v[k]
			dv[k] = d.dx[k] * u[k]
		}
	})
}

// linkHead is the Head of link prediction: the decoder scores pairs of
// seed rows (u_i, v_i) under binary cross-entropy with logits. It keeps
// the pair state of its last Loss for Backward.
type linkHead[T Float] struct {
	cfg Config
	dec *decoder[T]

	// active is set by a Loss a backward may follow (scale != 0) and
	// cleared by Backward: ScorePairs must not reuse the decoder's work
	// buffers in between.
	active bool
	pairs  []int32 // the batch's pairs (aliased; valid until Backward)
	u, v   []T     // gathered endpoint rows, P x C
	du, dv []T     // their gradients
	z      []T     // pair logits
	dz     []T     // scale·d(summed loss)/d(logit)

	rowLoss []float64 // per pair loss, summed in pair order
	bySeed  bySource  // the pairs' endpoints grouped by seed (Backward)
}

func newLinkHead[T Float](c Config) *linkHead[T] {
	return &linkHead[T]{cfg: c, dec: newDecoder[T](c)}
}

func (h *linkHead[T]) Specs() []ParamSpec       { return decoderSpecs(h.cfg) }
func (h *linkHead[T]) Bind(params, grads [][]T) { h.dec.bind(params, grads) }

// Check validates that b is a link batch with valid pairs of its seeds.
func (h *linkHead[T]) Check(b *sample.Batch, seeds int) error {
	if !isLinkBatch(b) {
		return fmt.Errorf("model: a link predictor (decoder %q) is trained on pairs, not node labels", h.cfg.Decoder)
	}
	if h.cfg.IsEdge() {
		return checkEdgePairs(h.cfg, b, seeds)
	}
	return checkPairs(b.Pairs, b.PairLabels, seeds)
}

// checkPairs validates link targets against the seeds of the batch: two
// in-range seed indices per pair and one 0/1 label per pair.
func checkPairs(pairs []int32, labels []float32, seeds int) error {
	if len(pairs) != 2*len(labels) {
		return fmt.Errorf("model: %d pair indices for %d pair labels (want two per pair)", len(pairs), len(labels))
	}
	for i, j := range pairs {
		if j < 0 || int(j) >= seeds {
			return fmt.Errorf("model: pair %d endpoint %d is seed %d, outside [0,%d)", i/2, i%2, j, seeds)
		}
	}
	for i, y := range labels {
		if y != 0 && y != 1 {
			return fmt.Errorf("model: pair %d label %v is neither 0 nor 1", i, y)
		}
	}
	return nil
}

// Loss runs the decoder over the pairs of the seeds' rows z (pairs: two
// local seed indices each, labels: 1 positive, 0 negative) and the binary
// cross-entropy with logits. It returns the summed loss and the number of
// pairs whose logit has the label's sign (logit > 0 for a positive). With
// scale != 0 it keeps scale·d(summed loss)/d(logit) for Backward; dz is
// filled there.
func (h *linkHead[T]) Loss(z []T, b *sample.Batch, scale T, _ []T) (float64, int) {
	pairs, labels := b.Pairs, b.PairLabels
	c, p := h.cfg.Classes, len(labels)
	if h.cfg.IsEdge() {
		p = len(pairs) / 2
	}
	h.u, h.v = grow(h.u, p*c), grow(h.v, p*c)
	par.Range(p, 2*p*c, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a, b := int(pairs[2*i]), int(pairs[2*i+1])
			copy(h.u[i*c:(i+1)*c], z[a*c:(a+1)*c])
			copy(h.v[i*c:(i+1)*c], z[b*c:(b+1)*c])
		}
	})
	o := h.cfg.PairOut()
	h.z, h.dz = grow(h.z, p*o), grow(h.dz, p*o)
	h.dec.forward(h.u, h.v, p, h.z)
	var loss float64
	var correct int
	if h.cfg.IsEdge() {
		loss, correct = h.edgeLoss(b, scale)
	} else {
		h.rowLoss = growF64(h.rowLoss, p)
		loss, correct = bceWithLogits(h.z, labels, scale, h.dz, h.rowLoss)
	}
	h.pairs, h.active = pairs, scale != 0
	return loss, correct
}

// bceWithLogits writes scale·d(sum of losses)/d(z) into dz and returns the
// summed binary cross-entropy (float64) and the number of correct signs.
// The loss max(z,0) - z·y + log(1+exp(-|z|)) never overflows, and its
// derivative sigmoid(z) - y is evaluated without exp of a large argument.
// rowLoss (one per label) receives the per-pair losses: pairs are scored
// in parallel, and their losses summed in pair order afterwards, so the
// sum is the serial loop's bit for bit.
func bceWithLogits[T Float](z []T, labels []float32, scale T, dz []T, rowLoss []float64) (float64, int) {
	var correct atomic.Int64
	par.Range(len(labels), 32*len(labels), func(lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			zi, y := float64(z[i]), float64(labels[i])
			rowLoss[i] = math.Max(zi, 0) - zi*y + math.Log1p(math.Exp(-math.Abs(zi)))
			if (zi > 0) == (y == 1) {
				n++
			}
			dz[i] = scale * T(sigmoid(zi)-y)
		}
		correct.Add(int64(n))
	})
	loss := 0.0
	for _, l := range rowLoss[:len(labels)] {
		loss += l
	}
	return loss, int(correct.Load())
}

// sigmoid is 1/(1+exp(-z)) in the form that cannot overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Backward runs the decoder backward for the last Loss and writes into dz
// the gradient w.r.t. the seeds' rows (summed over all pairs that use a
// seed, in pair order so the result is deterministic).
func (h *linkHead[T]) Backward(dz []T) {
	if !h.active {
		return
	}
	c, p := h.cfg.Classes, len(h.z)/h.cfg.PairOut()
	h.du, h.dv = grow(h.du, p*c), grow(h.dv, p*c)
	h.dec.backward(h.u, h.v, p, h.dz, h.du, h.dv)
	// Seeds are shared between pairs, so the sum runs over seeds (one
	// writer per row of dz), each taking its pairs' terms in pair order,
	// endpoint u before v, as a serial loop over pairs adds them.
	h.bySeed.build(h.pairs[:2*p], len(dz)/c)
	par.Range(len(dz)/c, 2*p*c, func(lo, hi int) {
		for s := lo; s < hi; s++ {
			row := dz[s*c : (s+1)*c]
			clear(row)
			for _, q := range h.bySeed.edges(s) {
				i := int(q) / 2
				g := h.du
				if q%2 == 1 {
					g = h.dv
				}
				kernels.Axpy(1, g[i*c:(i+1)*c], row)
			}
		}
	})
	h.active, h.pairs = false, nil
}

// scorePairs writes the decoder logits of the pairs (hu[i], hv[i]) into
// out (validated widths), in evaluation mode.
func (h *linkHead[T]) scorePairs(hu, hv, out []T) error {
	if h.active {
		return errors.New("score pairs: called between the forward and backward of a link step")
	}
	h.dec.forward(hu, hv, len(out)/h.cfg.PairOut(), out)
	return nil
}
