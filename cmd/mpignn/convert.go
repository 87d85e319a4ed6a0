package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"mpignn/graph"
	"mpignn/internal/tempout"
)

// runConvert implements `mpignn convert`: a dataset in the OGB raw layout
// (homogeneous or heterogeneous) into DistDGL's chunked format, which the
// distributed partitioner reads a share per rank.
func runConvert(args []string) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	data := fs.String("data", "", "dataset directory in the OGB raw layout (required)")
	out := fs.String("out", "", "output chunked dataset directory (required; must not exist or be empty)")
	var o graph.ConvertOptions
	fs.Int64Var(&o.ChunkNodes, "chunk-nodes", 1<<20, "nodes per node-data chunk (bounds memory; ranks read whole chunks)")
	fs.Int64Var(&o.ChunkEdges, "chunk-edges", 8<<20, "edges per edge chunk (bounds memory)")
	fs.IntVar(&o.Workers, "workers", 0, "parallelism of the split readers (0 = GOMAXPROCS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *data == "" || *out == "" {
		return errors.New("--data and --out are required")
	}
	if o.ChunkNodes < 1 || o.ChunkEdges < 1 {
		return fmt.Errorf("--chunk-nodes %d and --chunk-edges %d must be positive", o.ChunkNodes, o.ChunkEdges)
	}
	if graph.IsChunkedLayout(*data) {
		return fmt.Errorf("--data %s is already a chunked dataset (%s)", *data, graph.ChunkedMetaFile)
	}
	cleanup := tempout.NewCleanup("mpignn convert")
	defer cleanup.Listen()()
	cleanup.Add(tempout.Own(*out))
	t0 := time.Now()
	if err := graph.ConvertToChunked(*data, *out, o); err != nil {
		return err
	}
	c, err := graph.OpenChunked(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "converted %s to %s: %d node types, %d edge types in %.1fs\n", *data, *out, len(c.Meta.NodeType), len(c.Meta.EdgeType), time.Since(t0).Seconds())
	return nil
}
