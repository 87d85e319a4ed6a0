package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/internal/osx"
	"mpignn/spmd"
)

// benchCommands are the subcommands of `mpignn bench`.
func benchCommands() map[string]func(args []string) error {
	return map[string]func(args []string) error{
		"comm":    runBenchComm,
		"sample":  runBenchSample,
		"infer":   runBenchInfer,
		"threads": runBenchThreads,
	}
}

func runBench(args []string) error {
	subs := benchCommands()
	const usage = "usage: mpignn bench comm|sample|infer|threads [flags]  (mpignn bench NAME -h lists NAME's flags)"
	if len(args) == 0 {
		return errors.New("missing benchmark name; " + usage)
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Println(usage)
		return flag.ErrHelp
	}
	run, ok := subs[args[0]]
	if !ok {
		return fmt.Errorf("unknown benchmark %q; %s", args[0], usage)
	}
	return run(args[1:])
}

// commBenchConfig holds the flags of `bench comm`.
type commBenchConfig struct {
	rows       int64
	dim        int
	batch      int
	iters      int
	warmup     int
	seed       uint64
	transports []collectives.Transport
	shared     []collectives.Field // flags every rank must agree on
	timeout    time.Duration       // --timeout
}

func parseCommBench(args []string) (commBenchConfig, error) {
	fs := newFlagSet("bench comm", "./mpirun.sh -n P ./bin/mpignn bench comm [flags]",
		"Times reading remote rows of a distributed array through each transport.")
	cfg := commBenchConfig{}
	fs.Int64Var(&cfg.rows, "rows", 50000, "rows owned by each rank")
	fs.IntVar(&cfg.dim, "dim", 128, "float32 elements per row (128 = 512-byte rows)")
	fs.IntVar(&cfg.batch, "batch", 8192, "rows each rank fetches per round")
	fs.IntVar(&cfg.iters, "iters", 50, "timed rounds per transport")
	fs.IntVar(&cfg.warmup, "warmup", 3, "untimed rounds before timing")
	addSeedFlag(fs, &cfg.seed, 1, "the random row choice")
	list := fs.String("transport", "rma,alltoallv", "comma-separated transports to measure (rma, alltoallv)")
	addTimeoutFlag(fs, &cfg.timeout)
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.shared = startupFields("bench comm", fs)
	if cfg.rows < 1 || cfg.dim < 1 || cfg.batch < 0 || cfg.iters < 1 || cfg.warmup < 0 {
		return cfg, errors.New("--rows, --dim and --iters must be positive, --batch and --warmup not negative")
	}
	// The owned rows and one round's fetched rows are allocated up front:
	// refuse sizes that cannot fit rather than crash in make().
	need := (float64(cfg.rows)+float64(cfg.batch))*float64(cfg.dim)*4 + float64(cfg.batch)*8
	if avail, ok := osx.FitsMemory(need); !ok {
		return cfg, fmt.Errorf("--rows %d --batch %d --dim %d need ~%s per rank but this machine has %s available; lower them",
			cfg.rows, cfg.batch, cfg.dim, osx.FormatBytes(need), osx.FormatBytes(float64(avail)))
	}
	for _, s := range strings.Split(*list, ",") {
		t, err := collectives.ParseTransport(strings.TrimSpace(s))
		if err != nil {
			return cfg, err
		}
		if t == collectives.TransportAuto {
			return cfg, errors.New("--transport lists concrete transports (rma, alltoallv); auto is always reported")
		}
		cfg.transports = append(cfg.transports, t)
	}
	return cfg, nil
}

// commResult is one transport's measurement, reduced over ranks.
type commResult struct {
	t         collectives.Transport
	skipped   string  // why the transport was not measured
	rowsPerS  float64 // per rank, mean over ranks
	mbPerS    float64 // per rank, mean over ranks
	slowestS  float64 // timed seconds of the slowest rank
	remoteFrc float64 // fraction of fetched rows owned by another rank
}

// runBenchComm measures how fast each rank reads random rows of a
// distributed array through each transport. Every rank owns --rows rows;
// each round, every rank fetches --batch rows chosen uniformly among the rows
// of the OTHER ranks (on one rank: its own), which is the access pattern of
// remote feature gathering.
func runBenchComm(args []string) error {
	cfg, err := parseCommBench(args)
	if err != nil {
		return fmt.Errorf("bench comm: %w", err)
	}
	// spmd.Run ends the whole job through MPI_Abort when any rank fails.
	runWorld(func(w *spmd.World) error { return benchComm(w, cfg, os.Stdout) })
	return nil
}

func benchComm(w *spmd.World, cfg commBenchConfig, out io.Writer) error {
	c, err := newComm(w, cfg.timeout)
	if err != nil {
		return err
	}
	if err := agreeStartup(c, cfg.shared); err != nil {
		return err
	}
	auto, err := collectives.ResolveTransport(c, collectives.TransportAuto)
	if err != nil {
		return fmt.Errorf("resolve transport: %w", err)
	}
	_, why, err := collectives.ProbeRMA(c)
	if err != nil {
		return err
	}
	rowBytes := 4 * cfg.dim
	var results []commResult
	for _, t := range cfg.transports {
		if t == collectives.TransportRMA && auto != collectives.TransportRMA {
			results = append(results, commResult{t: t, skipped: "one-sided MPI unavailable: " + why})
			continue
		}
		r, err := benchTransport(c, cfg, t, rowBytes)
		if err != nil {
			return fmt.Errorf("transport %s: %w", t, err)
		}
		results = append(results, r)
	}
	if !w.IsRoot() {
		return nil
	}
	fmt.Fprintf(out, "bench comm: %d ranks (%s), %d rows x %d B per rank, batch %d, %d rounds\n",
		c.Size(), strings.SplitN(w.Library(), "\n", 2)[0], cfg.rows, rowBytes, cfg.batch, cfg.iters)
	fmt.Fprintf(out, "%-10s %14s %12s %10s %8s\n", "transport", "rows/s/rank", "MB/s/rank", "seconds", "remote")
	for _, r := range results {
		if r.skipped != "" {
			fmt.Fprintf(out, "%-10s skipped: %s\n", r.t, r.skipped)
			continue
		}
		fmt.Fprintf(out, "%-10s %14.0f %12.1f %10.3f %7.0f%%\n", r.t, r.rowsPerS, r.mbPerS, r.slowestS, 100*r.remoteFrc)
	}
	fmt.Fprintf(out, "auto picked: %s\n", auto)
	return nil
}

func benchTransport(c *collectives.Comm, cfg commBenchConfig, t collectives.Transport, rowBytes int) (commResult, error) {
	a, err := collectives.NewDistArray(c, cfg.rows, rowBytes, t)
	if err != nil {
		return commResult{}, err
	}
	defer a.Free()
	local := a.Local()
	for i := range local {
		local[i] = byte(c.Rank()*7 + i)
	}
	if err := a.Seal(); err != nil {
		return commResult{}, err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(c.Rank())))
	offsets := a.Offsets()
	total := offsets[len(offsets)-1]
	lo, hi := offsets[c.Rank()], offsets[c.Rank()+1]
	others := total - (hi - lo)
	rows := make([]int64, cfg.batch)
	pick := func() {
		for i := range rows {
			if others == 0 {
				rows[i] = lo + rng.Int64N(hi-lo)
				continue
			}
			g := rng.Int64N(others)
			if g >= lo {
				g += hi - lo // skip this rank's own range
			}
			rows[i] = g
		}
	}
	dst := make([]byte, cfg.batch*rowBytes)
	for range cfg.warmup {
		pick()
		if err := a.Fetch(rows, dst); err != nil {
			return commResult{}, err
		}
	}
	if err := c.Barrier(); err != nil {
		return commResult{}, err
	}
	var elapsed float64
	for range cfg.iters {
		pick() // not timed: choosing rows is not communication
		t0 := collectives.Wtime()
		if err := a.Fetch(rows, dst); err != nil {
			return commResult{}, err
		}
		elapsed += collectives.Wtime() - t0
	}
	// Check one fetched row so that a transport returning garbage cannot
	// produce a fast number.
	if cfg.batch > 0 {
		g := rows[0]
		owner := a.Owner(g)
		i := g - offsets[owner]
		for j := 0; j < rowBytes; j++ {
			if want := byte(owner*7 + int(i)*rowBytes + j); dst[j] != want {
				return commResult{}, fmt.Errorf("row %d byte %d: got %d, want %d", g, j, dst[j], want)
			}
		}
	}
	fetched := float64(cfg.batch * cfg.iters)
	rate := 0.0
	if elapsed > 0 {
		rate = fetched / elapsed
	}
	sums := []float64{rate, 0}
	if others > 0 {
		sums[1] = 1
	}
	if err := collectives.Allreduce(c, sums, collectives.Sum); err != nil {
		return commResult{}, err
	}
	slowest, err := collectives.AllreduceScalar(c, elapsed, collectives.Max)
	if err != nil {
		return commResult{}, err
	}
	p := float64(c.Size())
	return commResult{
		t:         t,
		rowsPerS:  sums[0] / p,
		mbPerS:    sums[0] / p * float64(rowBytes) / 1e6,
		slowestS:  slowest,
		remoteFrc: sums[1] / p,
	}, nil
}
