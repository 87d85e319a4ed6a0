package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"mpignn/collectives"
	"mpignn/sample"
	"mpignn/spmd/launched"
	"mpignn/train/kernels"
)

// newFlagSet returns the flag set of command name (as typed after mpignn:
// "train", "bench sample") whose --help prints synopsis, then about (what
// the command does, may be empty), then every flag.
func newFlagSet(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n", synopsis)
		if about != "" {
			fmt.Fprintf(w, "%s\n", strings.TrimRight(about, "\n"))
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags:\n")
			printFlags(fs)
		}
	}
	return fs
}

// printFlags is flag.PrintDefaults with --name spelling and without the
// "(default X)" suffix where the help text already says what the default
// is (a default that depends on other flags, such as --norm-feat's).
func printFlags(fs *flag.FlagSet) {
	w := fs.Output()
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if !strings.Contains(usage, "default") && !isZeroDefault(f) {
			if name == "string" {
				line += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				line += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w, line)
	})
}

// isZeroDefault reports whether f's default is its type's zero value, which
// the help leaves unsaid (as flag.PrintDefaults does).
func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// usageError is a mistake on the command line (an unknown flag, a value
// that does not parse). main prints it from one rank only: every rank of
// an mpirun job makes the same mistake.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// flagMistake marks an error of a command's flag checks (a value the flag
// does not take, such as --method foo or --checkpoint-every 2step, or flags
// that exclude each other) as a usageError: exit code 2, as for a flag that
// does not parse, printed once by the first rank. Commands apply it to the
// errors of their checks before any work starts; nil and --help pass.
func flagMistake(err error) error {
	var ue *usageError
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &ue) {
		return err
	}
	return &usageError{flagNames(err).Error()}
}

// parseFlags parses args into fs and then refuses a non-finite value (NaN,
// ±Inf: strconv accepts them) in any of its float flags, so that every
// float flag of every command is checked once, here, and a NaN never
// reaches a comparison that it would silently pass. A parse error is one
// line (a usageError; an unknown flag names the closest real one); the
// usage prints only for --help, from the first rank only.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		if launched.Rank() == 0 {
			fs.Usage()
		}
		return err
	case err != nil:
		return flagError(fs, err)
	}
	return finiteFlags(fs)
}

// flagError rewrites an error of the flag package as one line in this
// binary's --name spelling, with the closest flag for an unknown one and a
// pointer to --help.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	help := fmt.Sprintf("mpignn %s --help lists the flags", fs.Name())
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if near := closestFlag(fs, name); near != "" {
			return &usageError{fmt.Sprintf("unknown flag --%s: did you mean --%s? (%s)", name, near, help)}
		}
		return &usageError{fmt.Sprintf("unknown flag --%s (%s)", name, help)}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return &usageError{fmt.Sprintf("--%s needs a value (%s)", strings.TrimLeft(name, "-"), help)}
	}
	// "invalid value \"x\" for flag -epochs: parse error"; a flag.Value of
	// ours says why in place of "parse error", and that reason is kept.
	var val, name string
	if _, serr := fmt.Sscanf(msg, "invalid value %q for flag %s", &val, &name); serr == nil {
		name = strings.TrimSuffix(strings.TrimLeft(name, "-"), ":")
		if f := fs.Lookup(name); f != nil {
			_, reason, _ := strings.Cut(msg, name+": ")
			if reason != "" && reason != "parse error" && reason != "value out of range" {
				return &usageError{fmt.Sprintf("--%s %q: %s", name, val, reason)}
			}
			kind, _ := flag.UnquoteUsage(f)
			if kind == "" {
				kind = "true or false"
			}
			return &usageError{fmt.Sprintf("--%s %q: not a valid value, want %s", name, val, article(kind))}
		}
	}
	if _, serr := fmt.Sscanf(msg, "invalid boolean value %q for %s", &val, &name); serr == nil {
		name = strings.TrimSuffix(strings.TrimLeft(name, "-"), ":")
		if _, reason, _ := strings.Cut(msg, name+": "); reason != "" && reason != "parse error" {
			return &usageError{fmt.Sprintf("--%s %q: %s", name, val, reason)}
		}
		return &usageError{fmt.Sprintf("--%s %q: want true or false (write --%s=false, with =)", name, val, name)}
	}
	return &usageError{msg + " (" + help + ")"}
}

// article names a flag type for a message: "an int", "a float", "a string".
func article(kind string) string {
	switch kind {
	case "int", "uint", "int64", "uint64":
		return "an integer"
	case "float":
		return "a number"
	case "duration":
		return "a duration such as 90s or 2h"
	}
	return "a " + kind
}

// closestFlag returns the flag of fs nearest to name (a prefix of it, or
// within a few edits), or "" when none is near.
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", max(2, len(name)/3)+1
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(name, f.Name)
		if strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// finiteFlags returns an error naming the first float flag of fs (in
// lexical order) whose value is not a finite number.
func finiteFlags(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if v, ok := g.Get().(float64); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("--%s %v: want a finite number", f.Name, v)
		}
	})
	return err
}

// maxThreadsPerCore bounds --threads: more compute threads than this many
// per core only adds scheduling overhead, and a typo such as 100000 would
// exhaust the runtime's thread limit (a crash, not an error).
const maxThreadsPerCore = 4

// checkThreads refuses a --threads value above maxThreadsPerCore x the
// cores of this machine (n < 1 means the default share).
func checkThreads(n int) error {
	if limit := maxThreadsPerCore * runtime.NumCPU(); n > limit {
		return fmt.Errorf("--threads %d: more than %d (%d x the %d cores of this machine)", n, limit, maxThreadsPerCore, runtime.NumCPU())
	}
	return nil
}

// Flags shared by several commands. Each is declared here once, so that its
// name, help text and parsing are the same in every command; the names are
// also what agreeStartup reports, and scripts rely on them.

// addPartsFlag declares --parts, the partition directory every rank loads.
func addPartsFlag(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "parts", "", "partition directory (from mpignn partition) with one part per rank")
}

// addThreadsFlag declares --threads (applied by setThreads).
func addThreadsFlag(fs *flag.FlagSet, p *int) {
	fs.IntVar(p, "threads", 0, "compute threads per rank (default: cores / ranks on this node)")
}

// checkedValue is a string flag whose values a kernels check accepts
// (--isa: kernels.CheckISA, --precision: kernels.CheckPrecision): the flag
// package refuses any other value, so the name is checked once, while
// parsing, as a usage error before any work.
type checkedValue struct {
	p     *string
	def   string
	check func(string) error
}

func (v checkedValue) String() string {
	if v.p == nil {
		return v.def
	}
	return *v.p
}

func (v checkedValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), strconv.Quote(s)+": "))
	}
	*v.p = s
	return nil
}

// addISAFlag declares --isa (applied by setISA), whose default is native.
func addISAFlag(fs *flag.FlagSet, p *string) {
	*p = kernels.ISANative
	fs.Var(checkedValue{p, kernels.ISANative, kernels.CheckISA}, "isa", "cap the instruction set (`class`) of the float32 matrix products at one of "+strings.Join(kernels.ISAs(), ", ")+
		"\n(native: the CPU's best). Every CPU that has the class computes the same bits: --isa avx2 makes\n"+
		"the nodes of a mixed cluster, or a resume on other nodes, train bit for bit alike (docs/training.md)")
}

// setISA applies --isa before the first product; a CPU without the class
// is refused (the caller agrees on the error: nodes may differ).
func setISA(isa string) error {
	if err := kernels.SetISA(isa); err != nil {
		return fmt.Errorf("--isa %s: %w", isa, err)
	}
	return nil
}

// addPrecisionFlag declares --precision (dtrain.TrainConfig.Precision),
// whose default is fp32.
func addPrecisionFlag(fs *flag.FlagSet, p *string) {
	*p = kernels.PrecisionFP32
	fs.Var(checkedValue{p, kernels.PrecisionFP32, kernels.CheckPrecision}, "precision", "precision of the layers' matrix products, `fp32` or bf16: bf16 inputs (activations, and the weights\n"+
		"rounded once per step) with fp32 accumulation, fp32 master weights, gradients and optimizer; needs a CPU\n"+
		"with AVX512_BF16 or AMX-BF16 (refused elsewhere); a resume keeps the checkpoint's (docs/training.md)")
}

// emulateBF16Env, set to 1, makes --precision bf16 run on
// kernels.NewBF16Emulated instead of refusing a CPU without bf16
// (dtrain.TrainConfig.EmulateBF16). FOR TESTS ONLY: it lets the
// end-to-end tests of machines without bf16 run the bf16 path; it is
// slower than fp32 and deliberately not a flag.
const emulateBF16Env = "MPIGNN_TEST_EMULATE_BF16"

// addCacheFlag declares --cache-mb, the size of the feature store's hot
// remote-row cache (dsample.StoreOptions.CacheMB).
func addCacheFlag(fs *flag.FlagSet, p *float64) {
	fs.Float64Var(p, "cache-mb", 0, "per-rank cache of hot remote feature rows, MiB (0 = off)")
}

// addSeedFlag declares --seed; what says what it seeds, since that differs
// between commands (and so does the default, which scripts rely on).
func addSeedFlag(fs *flag.FlagSet, p *uint64, def uint64, what string) {
	fs.Uint64Var(p, "seed", def, "seed of "+what)
}

// addBatchFlag declares --batch as a per-rank count per step: what names
// the counted items (seeds, nodes).
func addBatchFlag(fs *flag.FlagSet, p *int, def int, what string) {
	fs.IntVar(p, "batch", def, what+" per step PER RANK (global batch = ranks x batch)")
}

// transportFlag is a --transport flag, parsed after the flag set so that
// a bad value is reported like every other bad value (no usage dump).
type transportFlag struct{ value string }

// addTransportFlag declares --transport (default auto).
func addTransportFlag(fs *flag.FlagSet) *transportFlag {
	f := &transportFlag{}
	fs.StringVar(&f.value, "transport", "auto", "how remote rows are read: auto (rma where one-sided MPI works everywhere, else alltoallv), rma or alltoallv")
	return f
}

// parse returns the transport named by the flag.
func (f *transportFlag) parse() (collectives.Transport, error) {
	t, err := collectives.ParseTransport(f.value)
	if err != nil {
		return 0, fmt.Errorf("--transport: %w", err)
	}
	return t, nil
}

// fanoutFlag is a flag holding one fanout per layer, "15,10,5", hop from
// the seeds first, -1 = all neighbors.
type fanoutFlag struct {
	name  string
	value string
}

// addFanoutFlag declares a fanout flag; help says what the fanouts are
// for, and the format is appended in the same words everywhere.
func addFanoutFlag(fs *flag.FlagSet, name, def, help string) *fanoutFlag {
	f := &fanoutFlag{name: name}
	fs.StringVar(&f.value, name, def, help+" (comma-separated, one per layer, hop from the seeds first; -1 = all neighbors)")
	return f
}

// parse returns the flag's plan, parsed once (sample.ParseFanoutPlan,
// per relation too: a parsed plan is valid), or the zero plan for an empty
// value, which commands with an optional fanout read as their default.
// Its errors name this flag and its value.
func (f *fanoutFlag) parse() (sample.FanoutPlan, error) {
	p, err := sample.ParseFanoutPlan(f.value)
	if err != nil {
		return sample.FanoutPlan{}, fmt.Errorf("--%s %q: %w", f.name, f.value, err)
	}
	return p, nil
}

// plan is parse for a flag that must name at least one layer.
func (f *fanoutFlag) plan() (sample.FanoutPlan, error) {
	p, err := f.parse()
	if err == nil && len(p.Hops) == 0 {
		err = errors.New("--" + f.name + " needs at least one layer")
	}
	return p, err
}

// list is parse for a command that samples a homogeneous graph or every
// relation alike: one fanout per layer, nil for an empty value.
func (f *fanoutFlag) list() ([]int, error) {
	p, err := f.parse()
	return p.Hops, f.plainOnly(p, err)
}

// layers is list for a flag that must name at least one layer.
func (f *fanoutFlag) layers() ([]int, error) {
	p, err := f.plan()
	return p.Hops, f.plainOnly(p, err)
}

// plainOnly refuses a per-relation plan where one list is wanted.
func (f *fanoutFlag) plainOnly(p sample.FanoutPlan, err error) error {
	if err == nil && p.PerRelation() {
		err = fmt.Errorf("--%s %q: per-relation fanouts apply to train and sample only", f.name, f.value)
	}
	return err
}

// temporalFlags are --temporal, --temporal-strict and --seed-time, shared
// by train and sample.
type temporalFlags struct {
	strategy string
	strict   bool
	seedTime string
}

func addTemporalFlags(fs *flag.FlagSet) *temporalFlags {
	t := &temporalFlags{}
	fs.StringVar(&t.strategy, "temporal", "none", "temporal sampling on a partition with times (partition --time): uniform (uniform among the edges not newer than the seed's time), last (the most recent ones) or none")
	fs.BoolVar(&t.strict, "temporal-strict", false, "temporal sampling: only edges strictly older than the seed's time (keeps simultaneous events out)")
	fs.StringVar(&t.seedTime, "seed-time", "", "temporal sampling: the time every seed is expanded at (default: node seeds at their node time, link seeds at their edge's time)")
	return t
}

// parse returns the temporal configuration and the fixed seed time, if
// --seed-time was given. Whether they go together is the library's rule
// (dsample.ValidateTemporal, which LoaderOptions.Validate applies; the
// sample command, without loader options, applies it itself).
func (t *temporalFlags) parse() (tp sample.Temporal, fixed bool, seedTime int64, err error) {
	if tp.Strategy, err = sample.ParseTemporalStrategy(t.strategy); err != nil {
		return tp, false, 0, fmt.Errorf("--temporal: %w", err)
	}
	tp.Strict = t.strict
	if t.seedTime != "" {
		if seedTime, err = strconv.ParseInt(t.seedTime, 10, 64); err != nil {
			return tp, false, 0, fmt.Errorf("--seed-time %q: want an integer time", t.seedTime)
		}
		fixed = true
	}
	return tp, fixed, seedTime, nil
}

// explicitZero refuses 0 given on the command line for any of the named
// integer flags: their library fields read 0 as "the default", which the
// flags spell out (--link-negs 100), so a typed 0 is a mistake rather
// than a request for the default. A rule about the command line alone.
func explicitZero(fs *flag.FlagSet, names ...string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && f.Value.String() == "0" && slices.Contains(names, f.Name) {
			err = fmt.Errorf("--%s 0: must be at least 1", f.Name)
		}
	})
	return err
}

// nodeFeatFlagUsage is the help of --node-feat (partition and train).
const nodeFeatFlagUsage = "node features of a dataset without raw/node-feat.csv.gz, made from its edge features (raw/edge-feat.csv.gz, as ogbn-proteins has): from-edges:mean (each node's row the mean of its in-edges' rows; zeros without in-edges) or from-edges:sum"
