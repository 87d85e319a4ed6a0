package train_test

import (
	"fmt"
	"log"

	"mpignn/sample"
	"mpignn/train"
	"mpignn/train/optim"
)

// One training step of a one-layer GraphSAGE on a batch of two seeds: the
// batch carries its blocks, its input rows (dense X here; XS and XT are
// the other forms) and its targets (node labels here; Pairs and PairLabels
// for a link predictor). Model.Train adds the gradient of the summed loss
// times the scale (1 / seeds: the batch mean) to Grads, and Adam applies
// it. On P ranks the Trainer does the same with an Allreduce of the
// gradients in between.
func ExampleModel_Train() {
	cfg := train.Config{Arch: train.ArchSAGE, InDim: 2, Classes: 2, Layers: 1}
	m, err := train.NewModel(cfg, 1) // weights: a pure function of the seed
	if err != nil {
		log.Fatal(err)
	}
	b := &sample.Batch{
		// Seeds 0 and 1 (destinations come first); node 2 is a neighbour.
		Blocks: []sample.Block{{
			NumDst: 2, Nodes: []int64{0, 1, 2}, Orig: []int64{0, 1, 2},
			Indptr: []int32{0, 1, 3}, Indices: []int32{2, 0, 2},
		}},
		X:      []float32{1, 0, 0, 1, 1, 1},
		Labels: []int32{0, 1},
	}
	opt, err := optim.NewAdam(len(m.Params()), optim.DefaultAdam(0.1, 0))
	if err != nil {
		log.Fatal(err)
	}
	loss, correct, err := m.Train(b, 0.5, train.MaskKey{Seed: 1, Step: 0})
	if err != nil {
		log.Fatal(err)
	}
	if err := opt.Step(m.Params(), m.Grads()); err != nil {
		log.Fatal(err)
	}
	after, correctAfter, err := m.Evaluate(b)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d parameters\n", len(m.Params()))
	fmt.Printf("before the step: mean loss %.4f, %d/2 correct\n", loss/2, correct)
	fmt.Printf("after the step:  mean loss %.4f, %d/2 correct\n", after/2, correctAfter)
	// Output:
	// 10 parameters
	// before the step: mean loss 0.2882, 2/2 correct
	// after the step:  mean loss 0.2182, 2/2 correct
}
