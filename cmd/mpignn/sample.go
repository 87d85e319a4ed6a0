package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/spmd"
)

// sampleConfig holds the flags of `mpignn sample`.
type sampleConfig struct {
	parts string
	seeds []int64 // original ids, ascending, distinct
	// typedSeeds are "type:id" entries of --seeds (heterogeneous graphs),
	// resolved against the partition's schema.
	typedSeeds []string
	// plan is --fanout, per relation too (resolved against the
	// partition's schema), and fanouts its hops; fanSpec is the value as
	// typed, for the output's header.
	plan    sample.FanoutPlan
	fanouts []int
	fanSpec string
	key     sample.Key
	replace bool
	// temporal sampling: tp, and the fixed seed time when fixedTime.
	tp        sample.Temporal
	fixedTime bool
	seedTime  int64
	transport collectives.Transport
	shared    []collectives.Field // flags every rank must agree on
	timeout   time.Duration       // --timeout
}

func parseSample(args []string) (sampleConfig, error) {
	fs := flag.NewFlagSet("sample", flag.ContinueOnError)
	var cfg sampleConfig
	addPartsFlag(fs, &cfg.parts)
	seeds := fs.String("seeds", "", "comma-separated ORIGINAL node ids to sample from (heterogeneous graphs: type:id, e.g. author:3, or homogenized ids)")
	fan := addFanoutFlag(fs, "fanout", "10,5", "neighbors sampled")
	addSeedFlag(fs, &cfg.key.Seed, 0, "the sampling (train's --seed, whose default is 1) (default 0)")
	fs.IntVar(&cfg.key.Epoch, "epoch", 0, "epoch of the random key")
	fs.IntVar(&cfg.key.Batch, "step", 0, "step (batch index) of the random key")
	fs.BoolVar(&cfg.replace, "replace", false, "sample with replacement")
	temporal := addTemporalFlags(fs)
	tr := addTransportFlag(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ./mpirun.sh -n P ./bin/mpignn sample --parts DIR --seeds 3,17,42 [--fanout 10,5 --seed 7 --transport auto|rma|alltoallv]\n"+
			"Prints every sampled edge \"dst src\" per layer (forward order), in original ids, sorted; the output\n"+
			"does not depend on the number of ranks or the transport. With --temporal uniform|last (partition --time)\n"+
			"lines are \"dst@seedtime src@edgetime\": every edge with its time and the time its destination was expanded at.\n")
		printFlags(fs)
	}
	var err error
	if cfg.shared, err = parsePartsCommand(fs, args, "sample", &cfg.parts, &cfg.timeout); err != nil {
		return cfg, err
	}
	var plain []string
	for _, f := range strings.Split(*seeds, ",") {
		if f = strings.TrimSpace(f); strings.Contains(f, ":") {
			cfg.typedSeeds = append(cfg.typedSeeds, f)
		} else {
			plain = append(plain, f)
		}
	}
	if cfg.seeds, err = sampleInt64List("--seeds", strings.Join(plain, ",")); err != nil {
		return cfg, err
	}
	if len(cfg.seeds)+len(cfg.typedSeeds) == 0 {
		return cfg, errors.New("--seeds needs at least one node id")
	}
	slices.Sort(cfg.seeds)
	cfg.seeds = slices.Compact(cfg.seeds)
	if cfg.plan, err = fan.plan(); err != nil {
		return cfg, err
	}
	cfg.fanouts, cfg.fanSpec = cfg.plan.Hops, fan.value
	if cfg.transport, err = tr.parse(); err != nil {
		return cfg, err
	}
	if cfg.tp, cfg.fixedTime, cfg.seedTime, err = temporal.parse(); err != nil {
		return cfg, err
	}
	if err := dsample.ValidateTemporal(cfg.tp, cfg.fixedTime); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func sampleInt64List(flagName, s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an integer", flagName, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// runSample implements `mpignn sample`.
func runSample(args []string) error {
	cfg, err := parseSample(args)
	if err != nil {
		return flagMistake(err)
	}
	runWorld(func(w *spmd.World) error { return sampleMain(w, cfg, os.Stdout) })
	return nil
}

func sampleMain(w *spmd.World, cfg sampleConfig, out io.Writer) error {
	c, part, err := openRankPart(w, cfg.parts, cfg.timeout, cfg.shared)
	if err != nil {
		return err
	}
	m := part.Meta
	var schema *graph.Schema
	if m.Hetero != nil {
		if schema, err = m.Hetero.Schema(); err != nil {
			return err
		}
	}
	if err := cfg.resolveSeeds(schema); err != nil {
		return err
	}
	for _, v := range cfg.seeds {
		if v < 0 || v >= m.NumNodes {
			return fmt.Errorf("--seeds: node %d outside [0,%d) of %s", v, m.NumNodes, cfg.parts)
		}
	}
	s, err := dsample.OpenStore(c, part, dsample.StoreOptions{Transport: cfg.transport, ReleasePart: true})
	if err != nil {
		return err
	}
	defer s.Close()
	if w.IsRoot() {
		why := ""
		if r := s.TransportReason(); r != "" {
			why = " (" + r + ")"
		}
		fmt.Fprintf(os.Stderr, "transport: %s%s\n", s.Transport(), why)
	}
	// Each rank samples the seeds it owns, in ascending original id.
	var seedsG, seedsO []int64
	for i, o := range part.Orig {
		if _, ok := slices.BinarySearch(cfg.seeds, o); ok {
			seedsG = append(seedsG, part.Lo+int64(i))
			seedsO = append(seedsO, o)
		}
	}
	sampleSortByOrig(seedsG, seedsO)
	var text []byte
	if cfg.tp.On() {
		text, err = sampleTemporal(c, s, part, schema, cfg, seedsG, seedsO)
	} else if schema != nil {
		text, err = sampleTyped(c, s, schema, cfg, seedsG, seedsO)
	} else {
		var blocks []sample.Block
		if blocks, err = s.Sampler().Sample(dsample.Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: cfg.fanouts, Key: cfg.key, Replace: cfg.replace}); err == nil {
			text, err = dsample.GatherText(c, blocks)
		}
	}
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	if !w.IsRoot() {
		return nil
	}
	fanStr := make([]string, len(cfg.fanouts))
	for i, f := range cfg.fanouts {
		fanStr[i] = strconv.Itoa(f)
	}
	if cfg.plan.PerRelation() {
		fanStr = []string{cfg.fanSpec}
	}
	seedStr := make([]string, len(cfg.seeds))
	for i, v := range cfg.seeds {
		seedStr[i] = strconv.FormatInt(v, 10)
	}
	temporal := ""
	if cfg.tp.On() {
		temporal = " temporal " + cfg.tp.String()
		if cfg.fixedTime {
			temporal += fmt.Sprintf(" seed-time %d", cfg.seedTime)
		}
	}
	if _, err := fmt.Fprintf(out, "# sample seeds %s fanout %s seed %d epoch %d step %d replace %v%s\n",
		strings.Join(seedStr, ","), strings.Join(fanStr, ","), cfg.key.Seed, cfg.key.Epoch, cfg.key.Batch, cfg.replace, temporal); err != nil {
		return err
	}
	_, err = out.Write(text)
	return err
}

// resolveSeeds turns the type:id entries of --seeds into homogenized
// original ids (heterogeneous partitions only) and sorts and dedups all
// seeds.
func (cfg *sampleConfig) resolveSeeds(schema *graph.Schema) error {
	if len(cfg.typedSeeds) > 0 && schema == nil {
		return fmt.Errorf("--seeds %s: type:id seeds need a heterogeneous partition", cfg.typedSeeds[0])
	}
	if cfg.plan.PerRelation() && schema == nil {
		return fmt.Errorf("--fanout %s: per-relation fanouts need a heterogeneous partition", cfg.fanSpec)
	}
	for _, ts := range cfg.typedSeeds {
		name, id, _ := strings.Cut(ts, ":")
		t := schema.TypeIndex(name)
		if t < 0 {
			return fmt.Errorf("--seeds %s: no node type %q (types: %s)", ts, name, strings.Join(schema.NodeTypes, ", "))
		}
		v, err := strconv.ParseInt(id, 10, 64)
		if err != nil || v < 0 || v >= schema.Count(t) {
			return fmt.Errorf("--seeds %s: want an id in [0,%d) of type %s", ts, schema.Count(t), name)
		}
		cfg.seeds = append(cfg.seeds, schema.NodeOrig[t]+v)
	}
	cfg.typedSeeds = nil
	slices.Sort(cfg.seeds)
	cfg.seeds = slices.Compact(cfg.seeds)
	return nil
}

// sampleTemporal samples the seeds with temporal sampling, each at the
// fixed --seed-time or at its node time, and gathers the canonical text
// with times (and relations on a heterogeneous partition). The node times
// are read before the store released the partition's arrays: they are
// kept in the Part.
func sampleTemporal(c *collectives.Comm, s *dsample.Store, part *partition.Part, schema *graph.Schema, cfg sampleConfig, seedsG, seedsO []int64) ([]byte, error) {
	if err := s.Sampler().SetTemporal(cfg.tp); err != nil {
		return nil, fmt.Errorf("--temporal: %w", err)
	}
	var why string
	times := make([]int64, len(seedsG))
	for i, g := range seedsG {
		switch {
		case cfg.fixedTime:
			times[i] = cfg.seedTime
		case part.NodeTime == nil:
			why = fmt.Sprintf("--temporal: partition %s has no node times; give --seed-time T", cfg.parts)
		default:
			times[i] = part.NodeTime[g-part.Lo]
		}
	}
	var local error
	if why != "" {
		local = errors.New(why)
	}
	if err := collectives.Agree(c, local); err != nil {
		return nil, err
	}
	rf := sample.UniformRelFanouts(cfg.fanouts, 1)
	if schema != nil {
		var err error
		if rf, err = cfg.plan.Resolve(schema); err != nil {
			return nil, fmt.Errorf("--fanout: %w", err)
		}
	}
	blocks, err := s.Sampler().Sample(dsample.Request{Seeds: seedsG, SeedsOrig: seedsO, Times: times, Rel: rf, Key: cfg.key, Replace: cfg.replace})
	if err != nil {
		return nil, err
	}
	return dsample.GatherTextAt(c, blocks, schema)
}

// sampleTyped samples the seeds on a heterogeneous partition with
// per-relation fanouts and gathers the canonical text with relations.
func sampleTyped(c *collectives.Comm, s *dsample.Store, schema *graph.Schema, cfg sampleConfig, seedsG, seedsO []int64) ([]byte, error) {
	rf, err := cfg.plan.Resolve(schema)
	if err != nil {
		return nil, fmt.Errorf("--fanout: %w", err)
	}
	blocks, err := s.Sampler().Sample(dsample.Request{Seeds: seedsG, SeedsOrig: seedsO, Rel: rf, Key: cfg.key, Replace: cfg.replace})
	if err != nil {
		return nil, err
	}
	return dsample.GatherTextRel(c, blocks, schema)
}

// sampleSortByOrig sorts the aligned id slices by original id.
func sampleSortByOrig(g, o []int64) {
	idx := make([]int, len(g))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(o[a], o[b]) })
	g2, o2 := slices.Clone(g), slices.Clone(o)
	for i, j := range idx {
		g[i], o[i] = g2[j], o2[j]
	}
}
