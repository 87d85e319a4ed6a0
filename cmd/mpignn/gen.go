package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"mpignn/graph"
	"mpignn/internal/tempout"
	"mpignn/train"
)

// runGen implements `mpignn gen`: generate a synthetic graph with planted
// communities and write it in the OGB raw layout.
func runGen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	var o graph.GenOptions
	fs.Int64Var(&o.Nodes, "nodes", 100000, "number of nodes")
	fs.Float64Var(&o.AvgDegree, "avg-degree", 25, "mean undirected degree (directed edges / nodes); the edge file gets nodes*avg-degree lines")
	fs.IntVar(&o.Classes, "classes", 47, "number of classes (planted communities)")
	fs.IntVar(&o.FeatDim, "feat-dim", 100, "feature dimension")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (same seed, same graph)")
	out := fs.String("out", "", "output dataset directory (must not exist or be empty)")
	fs.Float64Var(&o.TrainFrac, "train-frac", 0, "fraction of nodes in train (default 0.6 when no split flag is given)")
	fs.Float64Var(&o.ValidFrac, "valid-frac", 0, "fraction of nodes in valid (default 0.2); test gets the rest")
	fs.Int64Var(&o.Train, "train", 0, "train node count (counts override fractions)")
	fs.Int64Var(&o.Valid, "valid", 0, "valid node count")
	fs.Int64Var(&o.Test, "test", 0, "test node count (default: all nodes not in train/valid)")
	fs.Float64Var(&o.Homophily, "homophily", 0.8, "probability that an edge is planted inside a class")
	fs.Float64Var(&o.FeatSep, "feat-sep", 2, "distance scale between class centroids, in units of the feature noise (2: features alone classify ~45% of 47 classes)")
	fs.Float64Var(&o.PowerLaw, "power-law", 2.5, "exponent of the power-law degree distribution (> 2)")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines (0 = GOMAXPROCS); does not change the output")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mpignn gen --out DIR [--nodes N --avg-degree D --classes C --feat-dim F --seed S]\n"+
			"                  [--train-frac F --valid-frac F | --train N --valid N --test N]\n"+
			"Writes DIR/raw/*.csv.gz and DIR/split/%s/{train,valid,test}.csv.gz.\n", graph.GenSplitName)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return errors.New("--out DIR is required")
	}
	if (o.Train > 0 || o.Valid > 0 || o.Test > 0) && (o.TrainFrac > 0 || o.ValidFrac > 0) {
		return errors.New("give split sizes either as counts (--train/--valid/--test) or as fractions (--train-frac/--valid-frac), not both")
	}
	if _, err := os.Stat(*out); err == nil {
		if ents, _ := os.ReadDir(*out); len(ents) > 0 {
			return fmt.Errorf("%s exists and is not empty; refusing to overwrite", *out)
		}
	}
	// In GenOptions zero means "default"; an explicit 0 on the command line
	// means none (a control graph), which a negligible positive value gives.
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "homophily" && o.Homophily == 0:
			o.Homophily = 1e-12
		case f.Name == "feat-sep" && o.FeatSep == 0:
			o.FeatSep = 1e-12
		}
	})
	// Refuse sizes that cannot fit before allocating: the runtime's out of
	// memory is a crash with a trace, not an error.
	need, err := graph.GenMemory(o)
	if err != nil {
		return err
	}
	if avail := train.AvailableMemory(); need > float64(1<<47) || (avail > 0 && need > float64(avail)) {
		return fmt.Errorf("--nodes %d --feat-dim %d --avg-degree %v need ~%s of memory but this machine has %s available; lower them",
			o.Nodes, o.FeatDim, o.AvgDegree, train.FormatBytes(need), train.FormatBytes(float64(avail)))
	}
	// SIGINT/SIGTERM (Ctrl-C, scancel, a Slurm time limit) remove the
	// half-written dataset and exit 130/143; nothing exists before it.
	cleanup := tempout.NewCleanup("mpignn gen")
	defer cleanup.Listen()()
	cleanup.Add(tempout.Own(*out))
	t0 := time.Now()
	s, err := graph.Generate(o)
	if err != nil {
		return err
	}
	tGen := time.Since(t0)
	if err := graph.WriteSynthetic(*out, s); err != nil {
		return err
	}
	st, so := s.Stats, s.Opt
	fmt.Printf("wrote %s: %d nodes, %d undirected edges (%d edge lines), %d classes, dim %d, split %q %d/%d/%d\n",
		*out, so.Nodes, st.Edges, 2*st.Edges, so.Classes, so.FeatDim, graph.GenSplitName, so.Train, so.Valid, so.Test)
	fmt.Printf("edge homophily %.4f, max degree %d\n", st.EdgeHomophily, st.MaxDegree)
	fmt.Printf("planted accuracy ceiling (%d test nodes): features-only %.4f, features+neighbour labels %.4f\n",
		st.EvalNodes, st.FeatureOnlyAcc, st.OracleAcc)
	fmt.Printf("time: generate %.1fs, write %.1fs\n", tGen.Seconds(), (time.Since(t0) - tGen).Seconds())
	return nil
}
