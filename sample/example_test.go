package sample_test

import (
	"fmt"
	"log"

	"mpignn/graph"
	"mpignn/sample"
)

// ReferenceBlocks samples one batch on one process: the blocks of a
// two-layer model for the seeds 0 and 4, taking up to 2 neighbours per node
// in the outer hop and 1 in the inner one. The distributed sampler
// (sample/dsample) returns the same blocks on any number of ranks.
func ExampleReferenceBlocks() {
	// A ring 0-1-2-3-4-5-0 with the chord 0-3.
	src := []int64{0, 1, 2, 3, 4, 5, 0}
	dst := []int64{1, 2, 3, 4, 5, 0, 3}
	d := &graph.Dataset{Name: "ring", NumNodes: 6,
		In: graph.BuildInCSR(6, src, dst, graph.BuildOptions{Undirected: true})}

	// The key fixes every random choice: the same seed, epoch and batch
	// give the same sample wherever it is computed.
	key := sample.Key{Seed: 1, Epoch: 0, Batch: 0}
	blocks, err := sample.ReferenceBlocks(d, []int64{0, 4}, []int{2, 1}, key, false)
	if err != nil {
		log.Fatal(err)
	}
	// blocks[0] reads the input features; the destinations of the last
	// block are the seeds.
	for l, b := range blocks {
		fmt.Printf("block %d: nodes %v, the first %d are destinations\n", l, b.Nodes, b.NumDst)
		for i := range b.NumDst {
			var from []int64
			for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
				from = append(from, b.Nodes[j])
			}
			fmt.Printf("  %d <- %v\n", b.Nodes[i], from)
		}
	}
	// Output:
	// block 0: nodes [0 4 1 5 3 2], the first 5 are destinations
	//   0 <- [3]
	//   4 <- [3]
	//   1 <- [2]
	//   5 <- [0]
	//   3 <- [0]
	// block 1: nodes [0 4 1 5 3], the first 2 are destinations
	//   0 <- [1 5]
	//   4 <- [3 5]
}

// EpochBatches cuts an epoch's training nodes into global batches, in an
// order that depends only on (seed, epoch): every rank computes the same
// batches and takes its own seeds from each.
func ExampleEpochBatches() {
	train := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for epoch := range 2 {
		batches, err := sample.EpochBatches(1, epoch, train, 4)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("epoch", epoch, batches)
	}
	// Output:
	// epoch 0 [[3 9 1 2] [7 4 0 8] [5 6]]
	// epoch 1 [[7 5 6 2] [3 9 8 1] [4 0]]
}
