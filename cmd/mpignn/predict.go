package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"mpignn/collectives"
	"mpignn/internal/tempout"
	"mpignn/partition/dpartition"
	"mpignn/spmd"
	"mpignn/train/dtrain"
)

// inferFlags are the flags predict and embed share.
type inferFlags struct {
	fs        *flag.FlagSet
	cfg       dtrain.EmbedConfig
	fanout    *fanoutFlag
	transport *transportFlag
	threads   int
	isa       string
	timeout   time.Duration
}

func newInferFlags(name, synopsis, about, outHelp string) *inferFlags {
	f := &inferFlags{fs: newFlagSet(name, synopsis, about)}
	fs, cfg := f.fs, &f.cfg
	addPartsFlag(fs, &cfg.PartDir)
	fs.StringVar(&cfg.CheckpointDir, "checkpoint", "", "checkpoint directory written by mpignn train (required)")
	fs.StringVar(&cfg.Out, "out", "", outHelp)
	f.fanout = addFanoutFlag(fs, "fanout", "", "inference fanouts (default: the run's evaluation fanouts)")
	fs.BoolVar(&cfg.Full, "full", false, "sampled inference with every neighbor (overrides --fanout)")
	fs.StringVar(&cfg.Eval, "eval", "", "inference: layer-wise (exact, every neighbor, each layer once per node) or sampled (--fanout neighborhoods) (default layer-wise; sampled with --fanout or --full)")
	addBatchFlag(fs, &cfg.Batch, 1024, "nodes")
	fs.BoolVar(&cfg.Final, "final", false, "use the final weights instead of the best-validation ones")
	fs.StringVar(&cfg.GCNNorm, "gcn-norm", "", "gcn: first-layer normalisation; sym = GCNConv's 1/sqrt(d_i*d_j) with full degrees (layer-wise inference; for a model trained with PyG, imported by train --init-from) instead of mpignn's mean over in-neighbours and self")
	f.transport = addTransportFlag(fs)
	addCacheFlag(fs, &cfg.Store.CacheMB)
	addThreadsFlag(fs, &f.threads)
	addISAFlag(fs, &f.isa)
	addTimeoutFlag(fs, &f.timeout)
	return f
}

// parse parses args and checks the shared flags.
func (f *inferFlags) parse(args []string) error {
	if err := parseFlags(f.fs, args); err != nil {
		return err
	}
	if f.fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	}
	cfg := &f.cfg
	var err error
	if cfg.Fanouts, err = f.fanout.list(); err != nil { // nil = the checkpoint's
		return err
	}
	cfg.Note = flagWriter{Writer: os.Stdout}
	if cfg.Store.Transport, err = f.transport.parse(); err != nil {
		return err
	}
	return cfg.Validate()
}

// runInfer runs body under MPI after the start-up agreement. Under mpirun,
// OpenMPI forwards SIGINT/SIGTERM to every rank: rank 0 removes its
// unfinished --out temporary (the name is known before it exists) and every
// rank exits 130/143, so the job ends (the others after rank 0: see
// interruptLinger). Listening starts after MPI_Init so
// that no handler the MPI library installs replaces ours.
func (f *inferFlags) runInfer(name string, body func(c *collectives.Comm, w *spmd.World) error) {
	shared := startupFields(name, f.fs)
	cleanup := tempout.NewCleanup("mpignn " + name)
	cleanup.Add(tempout.Own(f.cfg.Out))
	runWorld(func(w *spmd.World) error {
		if w.Rank() != 0 {
			cleanup.Linger(interruptLinger)
		}
		defer cleanup.Listen()()
		c, err := newComm(w, f.timeout)
		if err != nil {
			return err
		}
		if err := agreeStartup(c, append(shared, dpartition.MetaFields(f.cfg.PartDir)...)); err != nil {
			return err
		}
		if err := collectives.Agree(c, setCompute(f.threads, f.isa, w.Size())); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		kern, err := dtrain.KernelsLine(c)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if w.IsRoot() {
			fmt.Println(kern)
		}
		defer c.Phase(name)()
		return body(c, w)
	})
}

// runPredict implements `mpignn predict --parts PARTDIR --checkpoint DIR
// --out FILE`: every rank classifies the nodes it owns with the checkpoint's
// best-validation weights; rank 0 writes original_node_id,predicted_class.
// With --task link --pairs FILE it scores the given node pairs instead.
func runPredict(args []string) error {
	f := newInferFlags("predict", "./mpirun.sh -n P ./bin/mpignn predict --parts PARTDIR --checkpoint DIR --out FILE [--task link --pairs FILE] [flags]",
		"Classifies every node with a checkpoint of mpignn train (best-validation weights unless --final); with\n"+
			"--task link it scores the src,dst pairs of --pairs instead (original ids).",
		"output CSV: original_node_id,predicted_class, or with --task link src,dst,score,prob (required)")
	task := f.fs.String("task", dtrain.TaskNode, "node (classify every node), link (score the pairs of --pairs), multilabel (every node's probabilities, or --logits, as .npy) regression (every node's values as .npy) or edge (every valid and test edge's class or values, CSV src,dst,split,...); the checkpoint's task")
	f.fs.StringVar(&f.cfg.Pairs, "pairs", "", "--task link: file of src,dst lines (original node ids) to score")
	logits := f.fs.Bool("logits", false, "write every node's raw class logits (float32 .npy, nodes x classes, row = original id; the labelled type's nodes in a heterogeneous graph) to --out instead of classes (layer-wise inference)")
	if err := f.parse(args); err != nil {
		return flagMistake(err)
	}
	pc := dtrain.PredictConfig{EmbedConfig: f.cfg, Task: *task, Logits: *logits}
	if err := pc.Validate(); err != nil {
		return flagMistake(err)
	}
	f.runInfer("predict", func(c *collectives.Comm, w *spmd.World) error {
		n, err := dtrain.Predict(c, pc)
		if err != nil {
			return err
		}
		if w.IsRoot() && pc.Task == dtrain.TaskLink {
			fmt.Printf("predict: wrote %d pair scores to %s\n", n, f.cfg.Out)
		} else if w.IsRoot() && pc.Task == dtrain.TaskEdge {
			fmt.Printf("predict: wrote the predictions of %d valid and test edges to %s\n", n, f.cfg.Out)
		} else if w.IsRoot() && *logits {
			fmt.Printf("predict: wrote the logits of %d nodes to %s\n", n, f.cfg.Out)
		} else if w.IsRoot() {
			fmt.Printf("predict: wrote %d predictions to %s\n", n, f.cfg.Out)
		}
		return nil
	})
	return nil
}

// runEmbed implements `mpignn embed --parts PARTDIR --checkpoint DIR --out
// FILE`: the output rows of the checkpoint's model for every node, by
// original id, as .npy or the mpignn binary layout.
func runEmbed(args []string) error {
	f := newInferFlags("embed", "./mpirun.sh -n P ./bin/mpignn embed --parts PARTDIR --checkpoint DIR --out FILE [flags]",
		"Writes every node's model output row (its embedding), by original id, with a checkpoint of mpignn train.",
		"output file: FILE.npy (NumPy float32, nodes x width) or any other name for the mpignn binary layout (required)")
	if err := f.parse(args); err != nil {
		return flagMistake(err)
	}
	f.runInfer("embed", func(c *collectives.Comm, w *spmd.World) error {
		n, err := dtrain.Embed(c, f.cfg)
		if err != nil {
			return err
		}
		if w.IsRoot() {
			fmt.Printf("embed: wrote %d embeddings to %s\n", n, f.cfg.Out)
		}
		return nil
	})
	return nil
}
