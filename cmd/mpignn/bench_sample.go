package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/internal/osx"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/spmd"
)

// benchSampleConfig holds the flags of `bench sample`.
type benchSampleConfig struct {
	parts string
	// loader and store are the options of the loader timed (the library
	// checks them, dsample.LoaderOptions.Validate and
	// StoreOptions.Validate; ReleasePart is set when the store opens).
	loader  dsample.LoaderOptions
	store   dsample.StoreOptions
	steps   int
	warmup  int
	shared  []collectives.Field // flags every rank must agree on
	timeout time.Duration       // --timeout
}

func parseBenchSample(args []string) (benchSampleConfig, error) {
	fs := newFlagSet("bench sample", "./mpirun.sh -n P ./bin/mpignn bench sample --parts PARTDIR [flags]",
		"Runs the training loader without the model and prints where the time goes.")
	var cfg benchSampleConfig
	addPartsFlag(fs, &cfg.parts)
	fan := addFanoutFlag(fs, "fanout", "15,10,5", "neighbors sampled")
	addBatchFlag(fs, &cfg.loader.Batch, 1024, "seeds")
	fs.IntVar(&cfg.steps, "steps", 20, "timed training steps (capped at the epoch's step count)")
	fs.IntVar(&cfg.warmup, "warmup", 2, "untimed steps before timing")
	addSeedFlag(fs, &cfg.loader.Seed, 1, "batch order and sampling (train's --seed)")
	addCacheFlag(fs, &cfg.store.CacheMB)
	tr := addTransportFlag(fs)
	temporal := addTemporalFlags(fs)
	var err error
	if cfg.shared, err = parsePartsCommand(fs, args, "bench sample", &cfg.parts, &cfg.timeout); err != nil {
		return cfg, err
	}
	if cfg.steps < 1 || cfg.warmup < 0 {
		return cfg, errors.New("--steps must be positive, --warmup not negative")
	}
	lo := &cfg.loader
	if lo.Fanouts, err = fan.layers(); err != nil {
		return cfg, err
	}
	if cfg.store.Transport, err = tr.parse(); err != nil {
		return cfg, err
	}
	if lo.Temporal, lo.FixedSeedTime, lo.SeedTime, err = temporal.parse(); err != nil {
		return cfg, err
	}
	// The loader's and store's own rules, checked before MPI starts so
	// that a mistake is one line naming its flag (exit code 2).
	if err := lo.Validate(); err != nil {
		return cfg, err
	}
	return cfg, cfg.store.Validate()
}

// runBenchSample implements `mpignn bench sample`: it runs the training
// loader (sampling + feature gathering, no model) over the first steps of an
// epoch and reports per-rank throughput split into local sampling, remote
// sampling and feature gathering, and where feature rows came from.
func runBenchSample(args []string) error {
	cfg, err := parseBenchSample(args)
	if err != nil {
		return fmt.Errorf("bench sample: %w", err)
	}
	runWorld(func(w *spmd.World) error { return benchSample(w, cfg, os.Stdout) })
	return nil
}

// benchSampleRow is one rank's measurement; all fields are float64 so that
// ranks can Allgather them as one array.
type benchSampleRow struct {
	edges, localEdges, remoteEdges float64
	localS, remoteS, gatherS       float64
	rows, localRows, cachedRows    float64
	remoteRows, gatherBytes        float64
	adjBytes, featBytes            float64
	rssMB, pssMB                   float64
	seeds                          float64
}

const benchSampleFields = 16

func (r benchSampleRow) slice() []float64 {
	return []float64{r.edges, r.localEdges, r.remoteEdges, r.localS, r.remoteS, r.gatherS, r.rows, r.localRows,
		r.cachedRows, r.remoteRows, r.gatherBytes, r.adjBytes, r.featBytes, r.rssMB, r.seeds, r.pssMB}
}

func benchSampleRowFrom(x []float64) benchSampleRow {
	return benchSampleRow{x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[15], x[14]}
}

func benchSample(w *spmd.World, cfg benchSampleConfig, out io.Writer) error {
	c, part, err := openRankPart(w, cfg.parts, cfg.timeout, cfg.shared)
	if err != nil {
		return err
	}
	m := part.Meta
	t0 := time.Now()
	so := cfg.store
	so.ReleasePart = true
	s, err := dsample.OpenStore(c, part, so)
	if err != nil {
		return err
	}
	defer s.Close()
	openS := time.Since(t0).Seconds()
	ld, err := dsample.NewLoader(s, cfg.loader)
	if err != nil {
		return err
	}
	steps, err := ld.Steps(dsample.SplitTrain, 0)
	if err != nil {
		return err
	}
	warm := min(cfg.warmup, steps)
	timed := min(cfg.steps, steps-warm)
	if timed < 1 {
		return fmt.Errorf("the epoch has %d steps, fewer than --warmup %d + 1", steps, cfg.warmup)
	}
	var b sample.Batch
	for k := range warm {
		if err := ld.Batch(dsample.SplitTrain, 0, k, &b); err != nil {
			return err
		}
	}
	if err := c.Barrier(); err != nil {
		return err
	}
	var r benchSampleRow
	dim := float64(4 * s.Part().Meta.FeatDim)
	wall := time.Now()
	for k := warm; k < warm+timed; k++ {
		if err := ld.Batch(dsample.SplitTrain, 0, k, &b); err != nil {
			return err
		}
		st := &b.Stats.Sample
		r.edges += float64(st.Edges())
		r.localEdges += float64(st.LocalEdges)
		r.remoteEdges += float64(st.RemoteEdges)
		r.localS += st.Local.Seconds()
		r.remoteS += st.Remote.Seconds()
		r.gatherS += b.Stats.Gather.Seconds()
		g := &b.Stats
		r.localRows += float64(g.LocalRows)
		r.cachedRows += float64(g.CachedRows)
		r.remoteRows += float64(g.RemoteRows)
		r.rows += float64(g.LocalRows + g.CachedRows + g.RemoteRows)
		r.adjBytes += float64(st.Bytes)
		r.featBytes += float64(g.BytesMoved - st.Bytes)
		r.seeds += float64(len(b.Seeds))
	}
	wallS := time.Since(wall).Seconds()
	r.gatherBytes = r.rows * dim
	r.rssMB = procMB("/proc/self/status", "VmHWM:")
	r.pssMB = procMB("/proc/self/smaps_rollup", "Pss:")
	all, err := collectives.Allgather(c, r.slice())
	if err != nil {
		return err
	}
	if !w.IsRoot() {
		return nil
	}
	temporal := ""
	if cfg.loader.Temporal.On() {
		temporal = ", temporal " + cfg.loader.Temporal.String()
		if cfg.loader.FixedSeedTime {
			temporal += fmt.Sprintf(" at %d", cfg.loader.SeedTime)
		}
	}
	fmt.Fprintf(out, "bench sample: %s (%s, %d nodes, %d edges, cut %.1f%%), %d ranks, transport %s, fanout %s%s, batch %d/rank, %d timed steps (+%d warm-up) of %d, cache %.0f MiB/rank (%d hot rows on rank 0, %d halo rows), open %.2fs\n",
		cfg.parts, m.Method, m.NumNodes, m.NumEdges, 100*m.EdgeCut(), c.Size(), s.Transport(), benchFanoutString(cfg.loader.Fanouts), temporal,
		cfg.loader.Batch, timed, warm, steps, cfg.store.CacheMB, s.Features().HotCacheRows(dsample.NodeFeat()), s.Features().HaloCacheRows(dsample.NodeFeat()), openS)
	fmt.Fprintf(out, "%4s %10s %12s %12s %12s %12s %9s %9s %9s %8s %8s %8s %8s\n",
		"rank", "edges/step", "edges/s", "local e/s", "remote e/s", "gather GB/s", "local s", "remote s", "gather s", "rem-row", "rem+cache", "RSS MB", "PSS MB")
	var sum benchSampleRow
	var rssMB, pssMB float64 // max over ranks: the mean row reports the worst rank
	for p := range c.Size() {
		x := benchSampleRowFrom(all[p*benchSampleFields : (p+1)*benchSampleFields])
		benchSamplePrintRow(out, strconv.Itoa(p), x, timed)
		sum = benchSampleAdd(sum, x)
		rssMB, pssMB = max(rssMB, x.rssMB), max(pssMB, x.pssMB)
	}
	mean := benchSampleScale(sum, 1/float64(c.Size()))
	mean.rssMB, mean.pssMB = rssMB, pssMB
	benchSamplePrintRow(out, "mean", mean, timed)
	fmt.Fprintf(out, "wall %.2fs for %d steps: %.0f sampled edges/s over all ranks; rem-row = rows not owned (no cache), rem+cache = rows read remotely with halo+hot caches; RSS = peak (it counts the pages of other ranks' windows read here), PSS = now, shared pages split; mean row: max\n",
		wallS, timed, sum.edges/wallS)
	return nil
}

func benchSamplePrintRow(out io.Writer, name string, x benchSampleRow, steps int) {
	rate := func(n, s float64) float64 {
		if s <= 0 {
			return 0
		}
		return n / s
	}
	frac := func(n, d float64) float64 {
		if d <= 0 {
			return 0
		}
		return 100 * n / d
	}
	fmt.Fprintf(out, "%4s %10.0f %12.0f %12.0f %12.0f %12.2f %9.3f %9.3f %9.3f %7.1f%% %7.1f%% %8.0f %8.0f\n",
		name, x.edges/float64(steps), rate(x.edges, x.localS+x.remoteS), rate(x.localEdges+x.remoteEdges, x.localS),
		rate(x.remoteEdges, x.remoteS), rate(x.gatherBytes, x.gatherS)/1e9, x.localS, x.remoteS, x.gatherS,
		frac(x.rows-x.localRows, x.rows), frac(x.remoteRows, x.rows), x.rssMB, x.pssMB)
}

func benchSampleAdd(a, b benchSampleRow) benchSampleRow {
	x, y := a.slice(), b.slice()
	for i := range x {
		x[i] += y[i]
	}
	return benchSampleRowFrom(x)
}

func benchSampleScale(a benchSampleRow, f float64) benchSampleRow {
	x := a.slice()
	for i := range x {
		x[i] *= f
	}
	return benchSampleRowFrom(x)
}

func benchFanoutString(f []int) string {
	s := make([]string, len(f))
	for i, v := range f {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// procMB reads the kB value of the line starting with key (such as VmHWM:
// in /proc/self/status) in MB; 0 where /proc is unavailable.
func procMB(file, key string) float64 {
	kb := osx.ProcKB(file, key)
	if kb < 0 {
		return 0
	}
	return float64(kb) / 1024
}
