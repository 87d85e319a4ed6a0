package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/spmd"
	"mpignn/train"
	"mpignn/train/dtrain"
)

// benchThreadsConfig holds the flags of `bench threads`.
type benchThreadsConfig struct {
	parts   string
	threads []int // nil = benchThreadsDefault
	steps   int
	warmup  int
	infer   bool
	chunk   int
	out     string // --out: JSON lines ("" = none)
	model   train.Config
	trainer train.Options
	loader  dsample.LoaderOptions
	store   dsample.StoreOptions
	shared  []collectives.Field
	timeout time.Duration
	isa     string
}

func parseBenchThreads(args []string) (benchThreadsConfig, error) {
	fs := newFlagSet("bench threads", "./mpirun.sh -n 1 ./bin/mpignn bench threads --parts PARTDIR [flags]",
		"Trains --steps steps (and with --infer runs a layer-wise inference) once per thread count of --threads,\n"+
			"in one process, and prints each phase's seconds and speed-up over the first count, and whether the\n"+
			"weights came out the same for every count (they must). Usually run on one rank (a 1-part partition);\n"+
			"on several, every rank runs every count and the slowest rank's time is reported.")
	var cfg benchThreadsConfig
	addPartsFlag(fs, &cfg.parts)
	list := fs.String("threads", "", "comma-separated thread counts to run, each setting GOMAXPROCS and the BLAS threads (default: 1, 2, 4, ... up to this rank's share of the cores, and that share)")
	fs.IntVar(&cfg.steps, "steps", 30, "timed training steps per thread count (capped at the epoch's step count)")
	fs.IntVar(&cfg.warmup, "warmup", 2, "untimed training steps before each thread count's timed ones (a throwaway model)")
	fs.BoolVar(&cfg.infer, "infer", false, "also time one layer-wise inference (train's evaluation) of the trained model per thread count")
	fs.IntVar(&cfg.chunk, "chunk", dtrain.DefaultInferChunk, "--infer: destination nodes per rank per inference step")
	fs.StringVar(&cfg.out, "out", "", "also write the table as JSON lines to this file (rank 0): one line per thread count, then a summary line")
	// The model, loader and optimizer flags are train's (same names and
	// defaults), so a bench measures what train with those flags runs.
	fanout := addFanoutFlag(fs, "fanout", "10,5", "neighbors sampled")
	layers := addLayersFlag(fs)
	addBatchFlag(fs, &cfg.loader.Batch, 64, "seeds")
	fs.BoolVar(&cfg.loader.Replace, "replace", false, "sample neighbors with replacement")
	model := addModelFlags(fs, &cfg.model)
	addSeedFlag(fs, &cfg.trainer.Seed, 1, "weights, batch order, sampling and dropout")
	fs.IntVar(&cfg.trainer.Prefetch, "prefetch", 0, "training batches fetched ahead (train's --prefetch)")
	addCacheFlag(fs, &cfg.store.CacheMB)
	tr := addTransportFlag(fs)
	addISAFlag(fs, &cfg.isa)
	var err error
	if cfg.shared, err = parsePartsCommand(fs, args, "bench threads", &cfg.parts, &cfg.timeout); err != nil {
		return cfg, err
	}
	if cfg.steps < 1 || cfg.warmup < 0 || cfg.chunk < 1 {
		return cfg, errors.New("--steps and --chunk must be positive, --warmup not negative")
	}
	if cfg.threads, err = parseThreadList(*list); err != nil {
		return cfg, err
	}
	if cfg.loader.Fanouts, err = fanout.layers(); err != nil {
		return cfg, err
	}
	if err := checkLayers(*layers, fanout, len(cfg.loader.Fanouts)); err != nil {
		return cfg, err
	}
	if err := model.apply(fs, &cfg.model, &cfg.trainer.Adam); err != nil {
		return cfg, err
	}
	if cfg.model.Arch == "" {
		cfg.model.Arch = train.ArchSAGE
	}
	if !slices.Contains(train.Archs(), cfg.model.Arch) {
		return cfg, fmt.Errorf("--model %s: bench threads runs the homogeneous models (%s)", cfg.model.Arch, strings.Join(train.Archs(), ", "))
	}
	cfg.model.Layers = len(cfg.loader.Fanouts)
	if err := cfg.model.ValidateSettings(); err != nil {
		return cfg, flagNames(err, trainFieldFlags())
	}
	if cfg.store.Transport, err = tr.parse(); err != nil {
		return cfg, err
	}
	cfg.loader.EvalFanouts = cfg.loader.Fanouts
	cfg.loader.Seed = cfg.trainer.Seed
	cfg.trainer.MaxSteps = cfg.steps
	// The loader's and store's own rules (their fields named as flags).
	if err := cfg.loader.Validate(); err != nil {
		return cfg, err
	}
	return cfg, cfg.store.Validate()
}

// parseThreadList parses --threads: positive counts, each at most
// checkThreads' bound, without repeats; "" is nil (the default list).
func parseThreadList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--threads %q: %q is not a positive thread count", s, f)
		}
		if err := checkThreads(n); err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("--threads %q: %d is listed twice", s, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchThreadsDefault is the default --threads: the powers of two below
// limit, then limit (limit = this rank's share of the node's cores, what
// train uses by default).
func benchThreadsDefault(limit int) []int {
	limit = max(limit, 1)
	out := make([]int, 0, bits.Len(uint(limit))+1)
	for n := 1; n < limit; n *= 2 {
		out = append(out, n)
	}
	return append(out, limit)
}

// runBenchThreads implements `mpignn bench threads`.
func runBenchThreads(args []string) error {
	cfg, err := parseBenchThreads(args)
	if err != nil {
		return fmt.Errorf("bench threads: %w", err)
	}
	runWorld(func(w *spmd.World) error { return benchThreads(w, cfg, os.Stdout) }, trainFieldFlags())
	return nil
}

// threadsPhases are the rows of the table: the trainer's phase timers
// (train.PhaseTimes, the metrics' sample_s, gather_s, ...), the steps'
// wall time, and with --infer the layer-wise inference and its split
// (dtrain.InferStats). The values of one run are gathered in this order.
var threadsPhases = []struct{ name, key string }{
	{"sample", "sample_s"}, {"gather", "gather_s"}, {"forward", "forward_s"}, {"backward", "backward_s"},
	{"allreduce", "allreduce_s"}, {"optimizer", "optimizer_s"}, {"wait (prefetch)", "wait_s"},
	{"steps total", "steps_s"},
	{"infer sample", "infer_sample_s"}, {"infer gather", "infer_gather_s"}, {"infer compute", "infer_compute_s"},
	{"infer total", "infer_s"},
}

// threadsRun is one thread count's measurement, the slowest rank's time of
// each phase, and its digests.
type threadsRun struct {
	threads   int
	transport collectives.Transport // as resolved
	secs      []float64             // threadsPhases order
	weights   string                // final weights (the same on every rank)
	infer     string                // rank 0's inference rows ("" without --infer)
	// inferSame is false when some rank's inference rows differ from its
	// rows of the first thread count.
	inferSame bool
}

func benchThreads(w *spmd.World, cfg benchThreadsConfig, out io.Writer) error {
	c, part, err := openRankPart(w, cfg.parts, cfg.timeout, cfg.shared)
	if err != nil {
		return err
	}
	meta := part.Meta
	if meta.Hetero != nil {
		return fmt.Errorf("bench threads: %s is heterogeneous; the benchmark runs homogeneous models", cfg.parts)
	}
	if cfg.loader.Split == "" {
		cfg.loader.Split = meta.Split
	}
	cfg.model.InDim, cfg.model.Classes = meta.FeatDim, meta.NumClasses
	threads := cfg.threads
	if threads == nil {
		threads = benchThreadsDefault(runtime.NumCPU() / dtrain.LocalRanks(c.Size()))
	}
	if out == nil || c.Rank() != 0 {
		out = io.Discard
	}
	if err := setISA(cfg.isa); err != nil {
		return err
	}
	// Each count starts from the partition alone: the store and loader are
	// opened after the thread count is set, as in a train run, so that
	// nothing sized by the thread count carries over from the previous one.
	var runs []threadsRun
	var firstInfer string // this rank's inference rows at the first count
	for i, n := range threads {
		if err := setThreads(n, c.Size()); err != nil {
			return err
		}
		r, inferLocal, err := benchThreadsOnce(c, part, cfg, n)
		if err != nil {
			return fmt.Errorf("bench threads: --threads %d: %w", n, err)
		}
		if i == 0 {
			firstInfer = inferLocal
		}
		differ := 0.0
		if inferLocal != firstInfer {
			differ = 1
		}
		if differ, err = collectives.AllreduceScalar(c, differ, collectives.Max); err != nil {
			return err
		}
		r.inferSame = differ == 0
		runs = append(runs, r)
	}
	if c.Rank() != 0 {
		return nil
	}
	infer := ""
	if cfg.infer {
		infer = ", layer-wise inference"
	}
	fmt.Fprintf(out, "bench threads: %s (%s, %d nodes), %d ranks, transport %s, model %s hidden %d x %d layers, fanout %s, batch %d/rank, %d timed steps (+%d warm-up) per thread count%s\n",
		cfg.parts, meta.Dataset, meta.NumNodes, c.Size(), runs[0].transport, cfg.model.Arch, cfg.model.Hidden, cfg.model.Layers,
		benchFanoutString(cfg.loader.Fanouts), cfg.loader.Batch, cfg.steps, cfg.warmup, infer)
	writeThreadsTable(out, runs, cfg.infer, cfg.trainer.Prefetch > 0)
	same := threadsSame(runs)
	fmt.Fprintln(out, threadsSameLine(runs, same))
	if cfg.out != "" {
		if err := writeThreadsJSON(cfg.out, runs, cfg.infer, same); err != nil {
			return fmt.Errorf("bench threads: --out: %w", err)
		}
	}
	if !same {
		return errors.New("bench threads: the results depend on the thread count (see the lines above); they must not")
	}
	return nil
}

// benchThreadsOnce opens the store and loader, runs the warm-up steps on a
// throwaway model, then the timed steps on a fresh one (the same initial
// weights for every count) and, with --infer, one layer-wise inference of
// the trained model. It returns the run (times reduced to the slowest
// rank) and the digest of this rank's inference rows. It is collective.
func benchThreadsOnce(c *collectives.Comm, part *partition.Part, cfg benchThreadsConfig, n int) (threadsRun, string, error) {
	r := threadsRun{threads: n}
	store, err := dsample.OpenStore(c, part, cfg.store) // ReleasePart false: the next count reopens it
	if err != nil {
		return r, "", fmt.Errorf("open feature store: %w", err)
	}
	defer store.Close()
	r.transport = store.Transport()
	loader, err := dsample.NewLoader(store, cfg.loader)
	if err = collectives.Agree(c, config.In("Loader", err)); err != nil {
		return r, "", flagNames(err, trainFieldFlags())
	}
	newTrainer := func(steps int) (*train.Trainer, error) {
		m, err := train.NewModel(cfg.model, cfg.trainer.Seed)
		if err != nil {
			return nil, err
		}
		o := cfg.trainer
		o.MaxSteps = steps
		return train.NewTrainer(o, m, dtrain.Reducer{C: c}, loader)
	}
	if cfg.warmup > 0 {
		tr, err := newTrainer(cfg.warmup)
		if err != nil {
			return r, "", err
		}
		if _, err := tr.TrainEpoch(); err != nil {
			return r, "", fmt.Errorf("warm-up: %w", err)
		}
	}
	tr, err := newTrainer(cfg.steps)
	if err != nil {
		return r, "", err
	}
	// The previous count's garbage is collected here, not in the timed
	// steps of this one.
	runtime.GC()
	res, err := tr.TrainEpoch()
	if err != nil {
		return r, "", err
	}
	r.weights = dtrain.WeightsHash(tr.Model().Params())
	var st dtrain.InferStats
	var inferWall time.Duration
	inferLocal := ""
	if cfg.infer {
		start := time.Now()
		emb, err := dtrain.Infer(store, tr.Model(), dtrain.InferOptions{Chunk: cfg.chunk, Stats: &st})
		if err != nil {
			return r, "", fmt.Errorf("layer-wise inference: %w", err)
		}
		inferWall = time.Since(start)
		inferLocal = dtrain.WeightsHash(emb.Local())
		if err := emb.Free(); err != nil {
			return r, "", err
		}
	}
	t := &res.Times
	secs := []float64{ // threadsPhases order
		t.Seconds(train.PhaseSample), t.Seconds(train.PhaseGather), t.Seconds(train.PhaseForward), t.Seconds(train.PhaseBackward),
		t.Seconds(train.PhaseAllreduce), t.Seconds(train.PhaseOptimizer), t.Seconds(train.PhaseWait),
		res.Wall.Seconds(),
		st.Sample.Seconds(), st.Gather.Seconds(), st.Compute.Seconds(), inferWall.Seconds(),
	}
	if err := collectives.Allreduce(c, secs, collectives.Max); err != nil {
		return r, "", err
	}
	r.secs = secs
	r.infer = inferLocal
	return r, inferLocal, nil
}

// threadsRows returns the indices of threadsPhases the table shows: the
// inference rows only with --infer, the prefetch wait only with prefetch.
func threadsRows(infer, prefetch bool) []int {
	var rows []int
	for i, p := range threadsPhases {
		switch {
		case strings.HasPrefix(p.name, "infer") && !infer:
		case p.key == "wait_s" && !prefetch:
		default:
			rows = append(rows, i)
		}
	}
	return rows
}

// speedup is base/t (0 where t is 0: a phase that took no time).
func speedup(base, t float64) float64 {
	if t <= 0 {
		return 0
	}
	return base / t
}

// writeThreadsTable prints one row per phase and, per thread count, its
// seconds and its speed-up over the first count.
func writeThreadsTable(out io.Writer, runs []threadsRun, infer, prefetch bool) {
	fmt.Fprintf(out, "%-16s", "phase")
	for _, r := range runs {
		fmt.Fprintf(out, " %12s %7s", fmt.Sprintf("%d thr s", r.threads), "x")
	}
	fmt.Fprintln(out)
	for _, i := range threadsRows(infer, prefetch) {
		fmt.Fprintf(out, "%-16s", threadsPhases[i].name)
		for _, r := range runs {
			fmt.Fprintf(out, " %12.3f %6.2fx", r.secs[i], speedup(runs[0].secs[i], r.secs[i]))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "x = speed-up over %d thread(s); times are the slowest rank's\n", runs[0].threads)
}

// threadsSame reports whether every count gave the first count's weights
// (and, with --infer, inference rows on every rank).
func threadsSame(runs []threadsRun) bool {
	for _, r := range runs {
		if r.weights != runs[0].weights || !r.inferSame {
			return false
		}
	}
	return true
}

// threadsSameLine is the determinism check's line: "identical" with the
// digests, or "DIFFER" with each count's.
func threadsSameLine(runs []threadsRun, same bool) string {
	if same {
		s := fmt.Sprintf("weights: identical for every thread count (%s)", runs[0].weights)
		if runs[0].infer != "" {
			s += fmt.Sprintf("; inference rows identical (rank 0: %s)", runs[0].infer)
		}
		return s
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%d: %s", r.threads, r.weights)
		switch {
		case r.infer == "":
		case r.inferSame:
			parts[i] += " inference same"
		default:
			parts[i] += " inference differs"
		}
	}
	return "weights or inference rows DIFFER across thread counts (" + strings.Join(parts, ", ") + ")"
}

// writeThreadsJSON writes the table as JSON lines: per thread count the
// seconds and speed-ups of its phases (the keys of the metrics' epoch
// lines, sample_s, ..., with _x for the speed-up), then a summary line.
func writeThreadsJSON(path string, runs []threadsRun, infer, same bool) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	rows := threadsRows(infer, true)
	for _, r := range runs {
		line := map[string]any{"type": "threads", "threads": r.threads, "weights": r.weights}
		for _, i := range rows {
			k := threadsPhases[i].key
			line[k] = r.secs[i]
			line[strings.TrimSuffix(k, "_s")+"_x"] = speedup(runs[0].secs[i], r.secs[i])
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	if err := enc.Encode(map[string]any{"type": "summary", "base_threads": runs[0].threads, "identical": same}); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
