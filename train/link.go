package train

import (
	"errors"
	"fmt"
	"math"

	"mpignn/sample"
)

// decoderPrefix names the decoder's tensors in Config.Tensors ("dec.w1").
const decoderPrefix = "dec."

// decoderSpecs lists the decoder's parameter tensors in buffer order: none
// for the dot product, and for the MLP W1 (C x C), b1 (1 x C), W2 (C x 1),
// b2 (1 x 1), input-major like the layers' weights.
func decoderSpecs(c Config) []ParamSpec {
	if c.Decoder != DecoderMLP {
		return nil
	}
	w := c.Classes
	return []ParamSpec{
		{Name: "w1", Rows: w, Cols: w},
		{Name: "b1", Rows: 1, Cols: w, Zero: true},
		{Name: "w2", Rows: w, Cols: 1},
		{Name: "b2", Rows: 1, Cols: 1, Zero: true},
	}
}

// decoder scores pairs of embeddings (u_i, v_i), each row C wide. It owns
// work buffers reused across calls, so it is not safe for concurrent use.
type decoder[T Float] struct {
	mlp bool
	c   int

	w1, b1, w2, b2     []T
	gw1, gb1, gw2, gb2 []T

	x  []T // MLP: u ⊙ v, P x C (kept for backward)
	r  []T // MLP: ReLU of the hidden layer, P x C (kept for backward)
	dr []T // MLP: gradient w.r.t. the hidden layer, P x C
	dx []T // MLP: gradient w.r.t. x, P x C
}

func newDecoder[T Float](c Config) *decoder[T] {
	return &decoder[T]{mlp: c.Decoder == DecoderMLP, c: c.Classes}
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

// forward writes the logit of pair i into z[i] for the p pairs whose
// endpoint rows are u and v (row-major, p x C each).
func (d *decoder[T]) forward(u, v []T, p int, z []T) {
	c := d.c
	if !d.mlp {
		for i := 0; i < p; i++ {
			s := T(0)
			for k, a := range u[i*c : (i+1)*c] {
				s += a * v[i*c+k]
			}
			z[i] = s
		}
		return
	}
	d.x = grow(d.x, p*c)
	for k := range d.x {
		d.x[k] = u[k] * v[k]
	}
	d.r = grow(d.r, p*c)
	for i := 0; i < p; i++ {
		copy(d.r[i*c:(i+1)*c], d.b1)
	}
	gemm(false, false, p, c, c, 1, d.x, c, d.w1, c, 1, d.r, c)
	for k, a := range d.r {
		d.r[k] = max(a, 0)
	}
	for i := range z[:p] {
		z[i] = d.b2[0]
	}
	gemm(false, false, p, 1, c, 1, d.r, c, d.w2, 1, 1, z[:p], 1)
}

// backward ADDS the decoder's parameter gradients for dz (gradient of the
// loss w.r.t. the logits of the last forward over the same u, v) and
// WRITES the gradients w.r.t. u and v into du and dv.
func (d *decoder[T]) backward(u, v []T, p int, dz, du, dv []T) {
	c := d.c
	if !d.mlp {
		for i := 0; i < p; i++ {
			g := dz[i]
			for k := i * c; k < (i+1)*c; k++ {
				du[k] = g * v[k]
				dv[k] = g * u[k]
			}
		}
		return
	}
	for _, g := range dz[:p] {
		d.gb2[0] += g
	}
	gemm(true, false, c, 1, p, 1, d.r, c, dz[:p], 1, 1, d.gw2, 1)
	// Through the second linear layer and the ReLU: a hidden unit passed
	// gradient exactly when its output is positive.
	d.dr = grow(d.dr, p*c)
	for i := 0; i < p; i++ {
		g := dz[i]
		for k := 0; k < c; k++ {
			pos := T(0)
			if d.r[i*c+k] > 0 {
				pos = 1
			}
			d.dr[i*c+k] = g * d.w2[k] * pos
		}
	}
	for i := 0; i < p; i++ {
		for k, g := range d.dr[i*c : (i+1)*c] {
			d.gb1[k] += g
		}
	}
	gemm(true, false, c, c, p, 1, d.x, c, d.dr, c, 1, d.gw1, c)
	d.dx = grow(d.dx, p*c)
	gemm(false, true, p, c, c, 1, d.dr, c, d.w1, c, 0, d.dx, c)
	for k, g := range d.dx {
		du[k] = g * v[k]
		dv[k] = g * u[k]
	}
}

// linkState is the pair part of a link step, kept from forwardLinkLoss
// for backward.
type linkState[T Float] struct {
	active bool
	pairs  []int32 // the batch's pairs (aliased; valid until backward)
	u, v   []T     // gathered endpoint embeddings, P x C
	du, dv []T     // their gradients
	z      []T     // pair logits
	dz     []T     // scale·d(summed loss)/d(logit)
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

// forwardLinkLoss is forwardLoss for a link batch: the forward pass over
// blocks, the decoder over the pairs (local seed indices, two per pair)
// and the binary cross-entropy with logits against labels (1 positive, 0
// negative). With scale != 0 it keeps scale·d(summed loss)/d(logit) for
// backward. It returns the summed loss and the number of pairs whose logit
// has the label's sign (logit > 0 for a positive).
func (n *net[T]) forwardLinkLoss(blocks []sample.Block, x []T, pairs []int32, labels []float32, scale T, train bool, key MaskKey) (float64, int, error) {
	return n.pairLoss(blocks, pairs, labels, scale,
		func() error { return n.check(blocks, x, nil) },
		func() { n.forward(blocks, x, train, key) })
}

// pairLoss is forwardLinkLoss over inputs of either kind (untyped or per
// node type): check validates the blocks and inputs, forward runs the
// layers.
func (n *net[T]) pairLoss(blocks []sample.Block, pairs []int32, labels []float32, scale T, check func() error, forward func()) (float64, int, error) {
	n.link.active = false
	if n.dec == nil {
		return 0, 0, errors.New("model: a link batch needs a link predictor (config without a decoder)")
	}
	if err := check(); err != nil {
		return 0, 0, err
	}
	if err := checkPairs(pairs, labels, blocks[len(blocks)-1].NumDst); err != nil {
		return 0, 0, err
	}
	forward()
	loss, correct := n.linkLoss(blocks, pairs, labels, scale)
	return loss, correct, nil
}

// linkLoss runs the decoder over the pairs of the last forward's seed rows
// and the binary cross-entropy, keeping the pair state for backward.
func (n *net[T]) linkLoss(blocks []sample.Block, pairs []int32, labels []float32, scale T) (float64, int) {
	h := n.out[len(blocks)-1]
	c, p := n.cfg.Classes, len(labels)
	ls := &n.link
	ls.u, ls.v = grow(ls.u, p*c), grow(ls.v, p*c)
	for i := 0; i < p; i++ {
		a, b := int(pairs[2*i]), int(pairs[2*i+1])
		copy(ls.u[i*c:(i+1)*c], h[a*c:(a+1)*c])
		copy(ls.v[i*c:(i+1)*c], h[b*c:(b+1)*c])
	}
	ls.z, ls.dz = grow(ls.z, p), grow(ls.dz, p)
	n.dec.forward(ls.u, ls.v, p, ls.z)
	loss, correct := bceWithLogits(ls.z, labels, scale, ls.dz)
	ls.pairs, ls.active = pairs, true
	return loss, correct
}

// bceWithLogits writes scale·d(sum of losses)/d(z) into dz and returns the
// summed binary cross-entropy (float64) and the number of correct signs.
// The loss max(z,0) - z·y + log(1+exp(-|z|)) never overflows, and its
// derivative sigmoid(z) - y is evaluated without exp of a large argument.
func bceWithLogits[T Float](z []T, labels []float32, scale T, dz []T) (float64, int) {
	loss := 0.0
	correct := 0
	for i, y32 := range labels {
		zi, y := float64(z[i]), float64(y32)
		loss += math.Max(zi, 0) - zi*y + math.Log1p(math.Exp(-math.Abs(zi)))
		if (zi > 0) == (y == 1) {
			correct++
		}
		dz[i] = scale * T(sigmoid(zi)-y)
	}
	return loss, correct
}

// sigmoid is 1/(1+exp(-z)) in the form that cannot overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// linkBackward runs the decoder backward for the last link forward and
// leaves the gradient w.r.t. the last layer's rows in n.dz (summed over all
// pairs that use a seed, in pair order so the result is deterministic).
func (n *net[T]) linkBackward(blocks []sample.Block) {
	ls := &n.link
	c, p := n.cfg.Classes, len(ls.z)
	ls.du, ls.dv = grow(ls.du, p*c), grow(ls.dv, p*c)
	n.dec.backward(ls.u, ls.v, p, ls.dz, ls.du, ls.dv)
	n.dz = grow(n.dz, blocks[len(blocks)-1].NumDst*c)
	clear(n.dz)
	for i := 0; i < p; i++ {
		a, b := int(ls.pairs[2*i]), int(ls.pairs[2*i+1])
		axpy(1, ls.du[i*c:(i+1)*c], n.dz[a*c:(a+1)*c])
		axpy(1, ls.dv[i*c:(i+1)*c], n.dz[b*c:(b+1)*c])
	}
	ls.active, ls.pairs = false, nil
}

// ForwardBackwardLink is ForwardBackward for link prediction: pairs holds
// two local seed indices (destinations of the last block) per scored pair,
// labels one target per pair (1 positive, 0 negative). It ADDS to Grads
// scale times the gradient of the SUMMED binary cross-entropy with logits
// (decoder parameters included; pass scale = 1/G with G the pairs of the
// step over all ranks) and returns the summed loss and the number of pairs
// whose logit has the label's sign.
func (m *Model) ForwardBackwardLink(blocks []sample.Block, x []float32, pairs []int32, labels []float32, scale float32, train bool, key MaskKey) (lossSum float64, correct int, err error) {
	loss, correct, err := m.n.forwardLinkLoss(blocks, x, pairs, labels, scale, train, key)
	if err != nil {
		return 0, 0, err
	}
	m.n.backward(blocks, x, train)
	return loss, correct, nil
}

// EvaluateLink scores the pairs of a link batch in evaluation mode without
// touching the gradients and returns the summed loss and correct count.
func (m *Model) EvaluateLink(blocks []sample.Block, x []float32, pairs []int32, labels []float32) (lossSum float64, correct int, err error) {
	loss, correct, err := m.n.forwardLinkLoss(blocks, x, pairs, labels, 0, false, MaskKey{})
	m.n.link.active = false // no backward follows
	return loss, correct, err
}

// Embed runs the GNN in evaluation mode (no dropout) and returns the
// embeddings of the seeds (the destinations of the last block), row-major,
// Classes wide: the rows the decoder scores. The result aliases a work
// buffer and is valid until the next call on m; copy it to keep it.
func (m *Model) Embed(blocks []sample.Block, x []float32) ([]float32, error) {
	return m.Forward(blocks, x)
}

// ScorePairs writes into out the decoder logits of n pairs given the
// endpoint embeddings row-major (hu, hv: n x Classes each, as Embed returns
// them), in evaluation mode. It only reads the parameters, so it can be
// called any number of times (for example over chunks of gathered
// embeddings); it reuses decoder work buffers, so it must not run between
// the forward and backward of a training step, nor concurrently.
func (m *Model) ScorePairs(hu, hv []float32, out []float32) error {
	n := m.n
	if n.dec == nil {
		return errors.New("score pairs: the model has no decoder (node classification config)")
	}
	c := n.cfg.Classes
	if len(hu) != len(out)*c || len(hv) != len(out)*c {
		return fmt.Errorf("score pairs: %d and %d embedding values for %d pairs of width %d", len(hu), len(hv), len(out), c)
	}
	if n.link.active {
		return errors.New("score pairs: called between the forward and backward of a link step")
	}
	n.dec.forward(hu, hv, len(out), out)
	return nil
}
