package graph_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"mpignn/graph"
)

// A dataset on disk is a directory in the OGB raw layout (what `mpignn
// gen` and `mpignn download` write). Here a small synthetic one is
// generated and written first, then read back as any dataset is.
func ExampleReadOGB() {
	dir, err := os.MkdirTemp("", "mpignn-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := graph.Generate(graph.GenOptions{Nodes: 1000, AvgDegree: 8, Classes: 4, FeatDim: 16, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	data := filepath.Join(dir, "toy")
	if err := graph.WriteSynthetic(data, s); err != nil {
		log.Fatal(err)
	}

	// The edge file stores every undirected pair once per direction;
	// UndirectedOptions is how this project reads its datasets.
	d, err := graph.ReadOGB(data, graph.UndirectedOptions())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d nodes, %d in-edges, %d classes, %d features per node\n",
		d.Name, d.NumNodes, d.In.NumEdges(), d.NumClasses, d.Feat.Dim)
	names := make([]string, 0, len(d.Splits))
	for name := range d.Splits {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		sp := d.Splits[name]
		fmt.Printf("split %s: %d train, %d valid, %d test\n", name, len(sp.Train), len(sp.Valid), len(sp.Test))
	}
	// In holds in-edges: the sources of the edges into a node, ascending.
	fmt.Println("in-neighbours of node 0:", d.In.Neighbors(0))
	// Output:
	// toy: 1000 nodes, 8000 in-edges, 4 classes, 16 features per node
	// split random: 600 train, 200 valid, 200 test
	// in-neighbours of node 0: [43 83 181 972]
}

// BuildInCSR turns an edge list into the in-adjacency every other package
// works on: row v lists the sources of the edges into v, ascending.
func ExampleBuildInCSR() {
	// A ring 0-1-2-3-4-5-0 with the chord 0-3, each pair given once.
	src := []int64{0, 1, 2, 3, 4, 5, 0}
	dst := []int64{1, 2, 3, 4, 5, 0, 3}
	in := graph.BuildInCSR(6, src, dst, graph.BuildOptions{Undirected: true})
	for v := range in.NumRows() {
		fmt.Println(v, "<-", in.Neighbors(v))
	}
	// Output:
	// 0 <- [1 3 5]
	// 1 <- [0 2]
	// 2 <- [1 3]
	// 3 <- [0 2 4]
	// 4 <- [3 5]
	// 5 <- [0 4]
}
