package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/sample/dsample"
	"mpignn/spmd"
	"mpignn/train"
	"mpignn/train/dtrain"
)

// benchInferConfig holds the flags of `bench infer`.
type benchInferConfig struct {
	parts  string
	arch   string
	hidden int
	layers int
	// archParams are the architectures' own flags (addArchFlags), set
	// into model by applyArchFlags.
	archParams []train.Param
	model      train.Config
	chunk      int
	reps       int
	seed       uint64
	cacheMB    float64
	transport  collectives.Transport
	cpuProfile string
	threads    int
	isa        string
	shared     []collectives.Field
	timeout    time.Duration // --timeout
}

func parseBenchInfer(args []string) (benchInferConfig, error) {
	fs := newFlagSet("bench infer", "./mpirun.sh -n P ./bin/mpignn bench infer --parts PARTDIR [flags]",
		"Times layer-wise inference of a random model over every node of the partition.")
	var cfg benchInferConfig
	addPartsFlag(fs, &cfg.parts)
	fs.StringVar(&cfg.arch, "model", train.ArchSAGE, "model: "+strings.Join(train.Archs(), ", "))
	fs.IntVar(&cfg.hidden, "hidden", 256, "hidden width")
	fs.IntVar(&cfg.layers, "layers", 3, "number of layers")
	cfg.archParams = addArchFlags(fs)
	fs.IntVar(&cfg.chunk, "chunk", dtrain.DefaultInferChunk, "destination nodes per rank per step")
	fs.IntVar(&cfg.reps, "reps", 2, "timed inferences (the first also warms the caches)")
	addSeedFlag(fs, &cfg.seed, 1, "initial weights")
	addCacheFlag(fs, &cfg.cacheMB)
	tr := addTransportFlag(fs)
	addThreadsFlag(fs, &cfg.threads)
	addISAFlag(fs, &cfg.isa)
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write rank 0's CPU profile of the timed inferences to this file")
	var err error
	if cfg.shared, err = parsePartsCommand(fs, args, "bench infer", &cfg.parts, &cfg.timeout); err != nil {
		return cfg, err
	}
	if cfg.hidden < 1 || cfg.layers < 1 || cfg.chunk < 1 || cfg.reps < 1 || cfg.cacheMB < 0 {
		return cfg, errors.New("--hidden, --layers, --chunk and --reps must be positive, --cache-mb not negative")
	}
	if cfg.transport, err = tr.parse(); err != nil {
		return cfg, err
	}
	cfg.model.Arch = cfg.arch
	if err := applyArchFlags(fs, cfg.archParams, &cfg.model); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// runBenchInfer implements `mpignn bench infer`: layer-wise inference of a
// randomly initialised homogeneous model over every node of a partition,
// timed, with its split into sampling (building full-neighbourhood
// blocks), reading input rows and computing, per rank.
func runBenchInfer(args []string) error {
	cfg, err := parseBenchInfer(args)
	if err != nil {
		return fmt.Errorf("bench infer: %w", err)
	}
	runWorld(func(w *spmd.World) error {
		if err := setCompute(cfg.threads, cfg.isa, w.Size()); err != nil {
			return err
		}
		return benchInfer(w, cfg, os.Stdout)
	})
	return nil
}

func benchInfer(w *spmd.World, cfg benchInferConfig, out io.Writer) error {
	c, part, err := openRankPart(w, cfg.parts, cfg.timeout, cfg.shared)
	if err != nil {
		return err
	}
	meta := part.Meta
	if meta.Hetero != nil {
		return fmt.Errorf("bench infer: %s is heterogeneous; the benchmark runs homogeneous models", cfg.parts)
	}
	store, err := dsample.OpenStore(c, part, dsample.StoreOptions{Transport: cfg.transport, CacheMB: cfg.cacheMB, ReleasePart: false})
	if err != nil {
		return err
	}
	defer store.Close()
	mcfg := cfg.model
	mcfg.Arch, mcfg.InDim, mcfg.Hidden, mcfg.Classes, mcfg.Layers = cfg.arch, meta.FeatDim, cfg.hidden, meta.NumClasses, cfg.layers
	model, err := train.NewModel(mcfg, cfg.seed)
	if err != nil {
		return err
	}
	if out == nil || c.Rank() != 0 {
		out = io.Discard
	}
	fmt.Fprintf(out, "bench infer: %s (%s, %d nodes), %d ranks, transport %s, model %s hidden %d x %d layers, chunk %d\n",
		cfg.parts, meta.Dataset, meta.NumNodes, c.Size(), store.Transport(), cfg.arch, cfg.hidden, cfg.layers, cfg.chunk)
	var prof *os.File
	for rep := 0; rep < cfg.reps; rep++ {
		if rep == 1 && cfg.cpuProfile != "" && c.Rank() == 0 {
			if prof, err = os.Create(cfg.cpuProfile); err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(prof); err != nil {
				return err
			}
		}
		var st dtrain.InferStats
		start := time.Now()
		emb, err := dtrain.Infer(store, model, dtrain.InferOptions{Chunk: cfg.chunk, Stats: &st})
		if err != nil {
			return err
		}
		if err := emb.Free(); err != nil {
			return err
		}
		wall := time.Since(start)
		row := []float64{wall.Seconds(), st.Sample.Seconds(), st.Gather.Seconds(), st.Compute.Seconds(),
			float64(st.Edges), float64(st.Rows), float64(st.RemoteRows),
			procMB("/proc/self/status", "VmHWM:"), procMB("/proc/self/smaps_rollup", "Pss:")}
		all, err := collectives.Allgather(c, row)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "rep %d: %8s %8s %8s %8s %8s %12s %12s %12s %9s %9s\n", rep+1, "rank", "wall s", "sample s", "gather s", "compute s", "edges", "rows", "remote rows", "peak RSS", "PSS MB")
		for r := 0; r < c.Size(); r++ {
			x := all[r*len(row) : (r+1)*len(row)]
			fmt.Fprintf(out, "       %8d %8.2f %8.2f %8.2f %8.2f %12.0f %12.0f %12.0f %9.0f %9.0f\n", r, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8])
		}
	}
	if prof != nil {
		pprof.StopCPUProfile()
		return prof.Close()
	}
	return nil
}
