package main

import (
	"errors"
	"flag"
	"fmt"

	"mpignn/collectives"
	"mpignn/internal/tempout"
	"mpignn/spmd"
	"mpignn/train/dist"
)

// runPredict implements `mpignn predict --parts PARTDIR --checkpoint DIR
// --out FILE`: every rank classifies the nodes it owns with the checkpoint's
// best-validation weights; rank 0 writes original_node_id,predicted_class.
func runPredict(args []string) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	var cfg dist.PredictConfig
	addPartsFlag(fs, &cfg.PartDir)
	fs.StringVar(&cfg.CheckpointDir, "checkpoint", "", "checkpoint directory written by mpignn train (required)")
	fs.StringVar(&cfg.Out, "out", "", "output CSV: original_node_id,predicted_class (required)")
	fanout := addFanoutFlag(fs, "fanout", "", "inference fanouts (default: the run's evaluation fanouts)")
	fs.BoolVar(&cfg.Full, "full", false, "use every neighbor (overrides --fanout)")
	addBatchFlag(fs, &cfg.Batch, 1024, "nodes")
	fs.BoolVar(&cfg.Final, "final", false, "use the final weights instead of the best-validation ones")
	transport := addTransportFlag(fs)
	addCacheFlag(fs, &cfg.Store.CacheMB)
	var threads int
	addThreadsFlag(fs, &threads)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	shared := startupFields("predict", fs)
	if cfg.PartDir == "" || cfg.CheckpointDir == "" || cfg.Out == "" {
		return errors.New("--parts, --checkpoint and --out are required")
	}
	var err error
	if cfg.Fanouts, err = fanout.parse(); err != nil { // nil = the checkpoint's
		return err
	}
	if cfg.Store.Transport, err = transport.parse(); err != nil {
		return err
	}
	// Under mpirun, OpenMPI forwards SIGINT/SIGTERM to every rank: rank 0
	// removes its unfinished --out temporary (the name is known before it
	// exists) and every rank exits 130/143, so the job ends. Listening
	// starts after MPI_Init so that no handler the MPI library installs
	// replaces ours.
	cleanup := tempout.NewCleanup("mpignn predict")
	cleanup.Add(tempout.Own(cfg.Out))
	spmd.Run(func(w *spmd.World) error {
		defer cleanup.Listen()()
		c, err := collectives.NewComm()
		if err != nil {
			return err
		}
		if err := agreeStartup(c, append(shared, partsFields(cfg.PartDir)...)); err != nil {
			return err
		}
		if err := dist.Agree(c, setThreads(threads, w.Size())); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		n, err := dist.Predict(c, cfg)
		if err != nil {
			return err
		}
		if w.IsRoot() {
			fmt.Printf("predict: wrote %d predictions to %s\n", n, cfg.Out)
		}
		return nil
	})
	return nil
}
