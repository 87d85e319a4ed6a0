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
	fs := newFlagSet("convert", "mpignn convert --data RAWDIR --out CHUNKED [--chunk-nodes N --chunk-edges M]",
		"Converts a dataset in the OGB raw layout (homogeneous or heterogeneous CSV, or OGB's npz) into DistDGL's\n"+
			"chunked format, a chunk at a time, in one process (under mpirun rank 0 alone runs it). The result is\n"+
			"the input of the distributed partitioner: ./mpirun.sh -n P ./bin/mpignn partition --data CHUNKED ...\n"+
			"(or train --data CHUNKED), where every rank reads a run of whole node chunks and PT-Scotch needs a node\n"+
			"on every rank: the default chunks suit jobs of up to 64 ranks.")
	data := fs.String("data", "", "dataset directory in the OGB raw layout (required)")
	out := fs.String("out", "", "output chunked dataset directory (required; must not exist or be empty)")
	var o graph.ConvertOptions
	fs.Int64Var(&o.ChunkNodes, "chunk-nodes", 0, fmt.Sprintf("nodes per node-data chunk (bounds memory; ranks read whole chunks, so a later job of P ranks needs at least P chunks) (default: per node type of n nodes, ceil(n/%d) up to %d: at least %d chunks, or one per node)", graph.AutoNodeChunks, graph.MaxAutoChunkNodes, graph.AutoNodeChunks/2))
	fs.Int64Var(&o.ChunkEdges, "chunk-edges", 8<<20, "edges per edge chunk (bounds memory)")
	fs.IntVar(&o.Workers, "workers", 0, "parallelism of the split readers (0 = GOMAXPROCS)")
	fs.StringVar(&o.EdgeLabels, "edge-labels", "", "how raw/edge-label.csv.gz (the edge task's labels) is written to edge_data label: classes (int64, -1 unlabelled) or real (float32 rows, NaN unlabelled); default: classes when it has one column, real when several (as partition --edge-labels reads the raw layout)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkConvert(fs, *data, *out, o); err != nil {
		return flagMistake(err)
	}
	if !onRankZero("convert", "a dataset is converted by one process") {
		return nil
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

// checkConvert checks convert's command line.
func checkConvert(fs *flag.FlagSet, data, out string, o graph.ConvertOptions) error {
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if data == "" || out == "" {
		return errors.New("--data and --out are required")
	}
	if err := explicitZero(fs, "chunk-nodes"); err != nil {
		return err
	}
	if o.ChunkNodes < 0 || o.ChunkEdges < 1 {
		return fmt.Errorf("--chunk-nodes %d and --chunk-edges %d must be positive", o.ChunkNodes, o.ChunkEdges)
	}
	switch o.EdgeLabels {
	case graph.LabelsAuto, graph.LabelsClasses, graph.LabelsReal:
	default:
		return fmt.Errorf("--edge-labels %s: want %s or %s", o.EdgeLabels, graph.LabelsClasses, graph.LabelsReal)
	}
	if graph.IsChunkedLayout(data) {
		return fmt.Errorf("--data %s is already a chunked dataset (%s)", data, graph.ChunkedMetaFile)
	}
	return nil
}
