package partition_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"mpignn/graph"
	"mpignn/partition"
)

// WriteDataset partitions a graph in memory and writes the partition
// directory that every rank of a training job loads its part from (what
// `mpignn partition` does for a dataset on disk). Each part owns a
// contiguous range of new node ids and keeps the in-edges of its nodes;
// the sources it does not own are its halo.
func ExampleWriteDataset() {
	dir, err := os.MkdirTemp("", "mpignn-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := graph.Generate(graph.GenOptions{Nodes: 1000, AvgDegree: 8, Classes: 4, FeatDim: 16, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	d := s.Data
	d.In = s.BuildIn()

	out := filepath.Join(dir, "parts")
	meta, err := partition.WriteDataset(out, d, 2, partition.Options{Method: partition.MethodMetis, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(meta.NumParts, "parts of", meta.NumNodes, "nodes")
	for p := range meta.NumParts {
		part, err := partition.Load(out, p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("part %d owns [%d,%d): %d in-edges, %d halo nodes, %d training nodes\n",
			p, part.Lo, part.Hi, len(part.Indices), len(part.Halo), len(part.Splits["random"].Train))
	}
	// Output:
	// 2 parts of 1000 nodes
	// part 0 owns [0,515): 4120 in-edges, 209 halo nodes, 309 training nodes
	// part 1 owns [515,1000): 3880 in-edges, 238 halo nodes, 291 training nodes
}

// Random is the partitioner without METIS: a balanced random assignment,
// a pure function of (nodes, parts, seed).
func ExampleRandom() {
	fmt.Println(partition.Random(10, 3, 1))
	// Output:
	// [0 0 0 2 1 1 1 2 0 2]
}
