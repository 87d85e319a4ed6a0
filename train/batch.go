package train

import (
	"errors"
	"fmt"

	"mpignn/internal/half"
	"mpignn/sample"
)

// The model's entry points take a sample.Batch, which carries both axes a
// step varies along: its input form (layer 0's rows as dense rows X, CSR
// rows XS of a sparse-feature partition, or one matrix per node type XT of
// a heterogeneous graph) and its task (node Labels, or Pairs of seeds with
// PairLabels). The input form is resolved here, once (inputs); the task by
// the model's Head. Nothing above the model chooses among forms.

// inputs are layer 0's input rows in one of three forms (denseInputs,
// csrInputs, typedInputs): what checks them against the blocks and runs
// the layers over them.
type inputs[T Float] interface {
	// check validates the inputs against the (checked) block chain.
	check(n *net[T], blocks []sample.Block) error
	// forward runs the layers over checked inputs, keeping what backward
	// needs.
	forward(n *net[T], blocks []sample.Block, train bool, key MaskKey)
}

// denseInputs are rows of InDim, one per blocks[0] node.
type denseInputs[T Float] []T

// rowInputs are rows of InDim given as views, one per blocks[0] node
// (Batch.XRows): the same inputs as denseInputs, not copied out of the
// feature store.
type rowInputs[T Float] [][]T

// halfRowInputs are rows of InDim 2-byte values of kind (bf16 or fp16)
// given as views, one per blocks[0] node (Batch.XRows16): widened as the
// model reads them, for the float32 model only.
type halfRowInputs struct {
	rows [][]uint16
	kind half.Kind
}

// csrInputs are CSR rows, one per blocks[0] node (homogeneous models).
type csrInputs[T Float] struct{ xs *sample.SparseRows }

// typedInputs are one matrix per node type (heterogeneous models).
type typedInputs[T Float] [][]T

func (x denseInputs[T]) check(n *net[T], blocks []sample.Block) error {
	return n.checkDense(blocks, x)
}

func (x denseInputs[T]) forward(n *net[T], blocks []sample.Block, train bool, key MaskKey) {
	n.forwardDense(blocks, x, train, key)
}

func (x rowInputs[T]) check(n *net[T], blocks []sample.Block) error {
	return checkRowViews(n, blocks, x)
}

func (x rowInputs[T]) forward(n *net[T], blocks []sample.Block, train bool, key MaskKey) {
	n.forwardRows(blocks, x, train, key)
}

func (x halfRowInputs) check(n *net[float32], blocks []sample.Block) error {
	return checkRowViews(n, blocks, x.rows)
}

func (x halfRowInputs) forward(n *net[float32], blocks []sample.Block, train bool, key MaskKey) {
	forwardHalfRows(n, blocks, x.rows, x.kind, train, key)
}

func (x csrInputs[T]) check(n *net[T], blocks []sample.Block) error {
	return n.checkSparse(blocks, x.xs)
}

func (x csrInputs[T]) forward(n *net[T], blocks []sample.Block, train bool, key MaskKey) {
	n.forwardSparse(blocks, x.xs, train, key)
}

func (x typedInputs[T]) check(n *net[T], blocks []sample.Block) error {
	return n.checkHetero(blocks, x)
}

func (x typedInputs[T]) forward(n *net[T], blocks []sample.Block, train bool, key MaskKey) {
	n.forwardHetero(blocks, x, train, key)
}

// batchInputs returns the inputs b carries: XT if set, else XS if set,
// else XRows or XRows16 if they hold rows, else X. It is the one place that
// tells the forms apart.
func batchInputs(b *sample.Batch) inputs[float32] {
	switch {
	case b.XT != nil:
		return typedInputs[float32](b.XT)
	case b.XS != nil:
		return csrInputs[float32]{b.XS}
	case len(b.XRows) > 0:
		return rowInputs[float32](b.XRows)
	case len(b.XRows16) > 0:
		return halfRowInputs{b.XRows16, b.XHalf}
	}
	return denseInputs[float32](b.X)
}

// checkInputs validates the block chain and the inputs against the model.
func (n *net[T]) checkInputs(blocks []sample.Block, in inputs[T]) error {
	if err := n.checkBlocks(blocks); err != nil {
		return err
	}
	return in.check(n, blocks)
}

// lossOf runs the forward pass over b's blocks with the inputs in (b's
// own input fields are not read: in may be of another precision) and the
// head's loss against b's targets. With scale != 0 a backward may follow:
// the head then prepares scale·d(summed loss)/d(seed rows) in n.dz.
func (n *net[T]) lossOf(b *sample.Batch, in inputs[T], scale T, train bool, key MaskKey) (float64, int, error) {
	if err := n.checkInputs(b.Blocks, in); err != nil {
		return 0, 0, err
	}
	last := &b.Blocks[len(b.Blocks)-1]
	if err := n.head.Check(b, last.NumDst); err != nil {
		return 0, 0, err
	}
	in.forward(n, b.Blocks, train, key)
	z := n.out[len(b.Blocks)-1]
	n.dz = grow(n.dz, len(z))
	loss, correct := n.head.Loss(z, b, scale, n.dz)
	return loss, correct, nil
}

// forwardOnly runs the layers in evaluation mode and returns the seeds'
// last-layer rows (aliasing a work buffer).
func (n *net[T]) forwardOnly(blocks []sample.Block, in inputs[T]) ([]T, error) {
	if err := n.checkInputs(blocks, in); err != nil {
		return nil, err
	}
	in.forward(n, blocks, false, MaskKey{})
	return n.out[len(blocks)-1], nil
}

// Train runs one training step's forward and backward over batch b on this
// rank: the layers over b's inputs (whatever their form), then the head's
// loss against b's targets (node labels, or link pairs and their labels),
// with dropout masks selected by key. It ADDS to Grads scale times the
// gradient of the SUMMED loss over the batch's targets; for data-parallel
// training pass scale = 1/G with G the targets (seeds, or pairs) of the
// step over ALL ranks: the Allreduce sum of the ranks' gradients is then
// the gradient of the global batch mean. It returns the summed (unscaled)
// loss and the number of targets predicted correctly (arg-max equals the
// label; for a pair, the logit has the label's sign). After it, InputGrad
// holds the gradients of a heterogeneous model's learnable inputs.
func (m *Model) Train(b *sample.Batch, scale float32, key MaskKey) (lossSum float64, correct int, err error) {
	loss, correct, err := m.n.lossOf(b, batchInputs(b), scale, true, key)
	if err != nil {
		return 0, 0, err
	}
	m.n.backward(b.Blocks, true)
	return loss, correct, nil
}

// Evaluate scores batch b in evaluation mode (no dropout) without touching
// the gradients and returns the summed loss and the number of targets
// predicted correctly.
func (m *Model) Evaluate(b *sample.Batch) (lossSum float64, correct int, err error) {
	return m.n.lossOf(b, batchInputs(b), 0, false, MaskKey{})
}

// Forward runs the layers over b's blocks and inputs in evaluation mode
// and returns the last layer's rows of the seeds, row-major, Classes wide:
// the logits of a classifier, or the embeddings a link decoder scores (see
// ScorePairs). b's targets are not read. The result aliases a work buffer
// and is valid until the next call on m; copy it to keep it.
func (m *Model) Forward(b *sample.Batch) ([]float32, error) {
	return m.n.forwardOnly(b.Blocks, batchInputs(b))
}

// Predict appends to dst the arg-max class of every seed of b (evaluation
// mode).
func (m *Model) Predict(b *sample.Batch, dst []int32) ([]int32, error) {
	logits, err := m.Forward(b)
	if err != nil {
		return dst, err
	}
	return appendArgmax(dst, logits, m.n.cfg.Classes), nil
}

// pairScorer is a head that scores pairs of seed rows outside a step (the
// link decoder).
type pairScorer[T Float] interface {
	scorePairs(hu, hv, out []T) error
}

// ScorePairs writes into out the link decoder's logits of len(out) pairs
// given their endpoint rows (hu, hv: len(out) x Classes each, as Forward
// returns them), in evaluation mode. It only reads the parameters, so it
// can be called any number of times (for example over chunks of gathered
// embeddings); it reuses decoder work buffers, so it must not run between
// the forward and backward of a training step, nor concurrently.
func (m *Model) ScorePairs(hu, hv, out []float32) error {
	ps, ok := m.n.head.(pairScorer[float32])
	if !ok {
		return errors.New("score pairs: the model has no decoder (node classification config)")
	}
	c, w := m.n.cfg.Classes, m.n.cfg.PairOut()
	if len(out)%w != 0 || len(hu) != len(out)/w*c || len(hv) != len(out)/w*c {
		return fmt.Errorf("score pairs: %d and %d embedding values for %d outputs of %d per pair, width %d", len(hu), len(hv), len(out), w, c)
	}
	return ps.scorePairs(hu, hv, out)
}
