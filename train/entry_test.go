package train

import "mpignn/sample"

// Helpers of the tests that drive the generic model core directly: a
// float64 net for gradient checks, or a step with dropout off (Model.Train
// always trains).

func dense[T Float](x []T) inputs[T]                  { return denseInputs[T](x) }
func sparse[T Float](xs *sample.SparseRows) inputs[T] { return csrInputs[T]{xs} }
func typed[T Float](xt [][]T) inputs[T]               { return typedInputs[T](xt) }

// fb is Model.Train on the core with dropout chosen by train: the forward
// and loss over b's blocks and targets with inputs in, then the backward.
func fb[T Float](n *net[T], b *sample.Batch, in inputs[T], scale T, train bool, key MaskKey) (float64, int, error) {
	loss, correct, err := n.lossOf(b, in, scale, train, key)
	if err != nil {
		return 0, 0, err
	}
	n.backward(b.Blocks, train)
	return loss, correct, nil
}
