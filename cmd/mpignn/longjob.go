package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"mpignn/collectives"
	"mpignn/spmd"
	"mpignn/train"
	"mpignn/train/dtrain"
)

// Long jobs: preemption signals, --resume auto and --checkpoint-every in
// steps or time (see docs/long-jobs.md).

// exitStopped is the exit code of a train run that stopped on SIGUSR1 or
// SIGTERM after writing its checkpoint: EX_TEMPFAIL of sysexits.h ("try
// again later"), distinct from success, from errors (1), from flag
// mistakes (2) and from deaths by signal (128+N), so that a batch script
// requeues on exactly this code.
const exitStopped = 75

// resumeFlag is --resume: a boolean flag (so `--resume` alone keeps its
// meaning) that also accepts the value auto (`--resume=auto`; `--resume
// auto` is joined into that form before parsing, see joinResumeAuto).
type resumeFlag struct{ resume, auto *bool }

func (r resumeFlag) String() string {
	switch {
	case r.auto != nil && *r.auto:
		return "auto"
	case r.resume != nil && *r.resume:
		return "true"
	}
	return "false"
}

func (r resumeFlag) Set(s string) error {
	switch s {
	case "auto":
		*r.resume, *r.auto = false, true
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true, false or auto")
	}
	*r.resume, *r.auto = b, false
	return nil
}

// IsBoolFlag lets `--resume` stand alone.
func (r resumeFlag) IsBoolFlag() bool { return true }

// joinResumeAuto rewrites `--resume auto` (two arguments) into
// `--resume=auto`: Go's flag package never gives a boolean flag the next
// argument, so "auto" would otherwise end the flags as a stray positional
// argument. Only a --resume in flag position is rewritten: the value of a
// flag that takes one (say `--metrics --resume`) is skipped.
func joinResumeAuto(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return append(out, args[i:]...) // the flags end here
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if (name == "resume") && !hasValue && i+1 < len(args) && args[i+1] == "auto" {
			out = append(out, a+"=auto")
			i++
			continue
		}
		out = append(out, a)
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			out = append(out, args[i+1]) // this flag's value
			i++
		}
	}
	return out
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// checkpointEvery is --checkpoint-every: a bare count is epochs (as
// before), NNNsteps is optimizer steps (counted across epochs) and a Go
// duration (30m, 500s, 1h30m) is time on rank 0's clock. Steps and time
// checkpoint in the middle of an epoch too; every form also checkpoints
// after the last epoch.
func parseCheckpointEvery(s string, o *train.RunOptions) error {
	bad := func() error {
		return fmt.Errorf("--checkpoint-every %q: want epochs (5), steps (500steps) or a duration (30m, 500s)", s)
	}
	o.CheckpointEvery, o.CheckpointSteps, o.CheckpointInterval = 0, 0, 0
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return fmt.Errorf("--checkpoint-every %d must be positive", n)
		}
		o.CheckpointEvery = n
		return nil
	}
	if num, ok := strings.CutSuffix(s, "steps"); ok {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 1 {
			return bad()
		}
		o.CheckpointSteps = n
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return bad()
	}
	if d <= 0 {
		return fmt.Errorf("--checkpoint-every %s must be positive", s)
	}
	o.CheckpointInterval = d
	return nil
}

// stopSignals catches the signals that ask a train run to checkpoint and
// stop: SIGUSR1 (Slurm's --signal, scancel --signal=USR1; mpirun and srun
// pass it on to every rank) and, when checkpointing, SIGTERM. Each rank
// prints one line when a signal arrives and answers Requested from then
// on; the trainer agrees on it at the next step. Without --checkpoint
// SIGTERM keeps its default action (the process ends at once, 143) and
// SIGUSR1 is reported and otherwise ignored: there is nothing to save.
// A second SIGTERM ends the process at once.
type stopSignals struct {
	got  atomic.Bool
	stop func()
}

// stopFile, when not empty, is a second way to ask (train --stop-file):
// rank 0 looks for the file every stopFilePoll and stops as on SIGUSR1 once
// it exists. A batch script that relays its signal this way cannot kill
// ranks that have not yet installed their handler (a signal delivered
// while they start ends them), and a request made before they start is
// not lost.
func listenStopSignals(checkpointing bool, rank int, stopFile string) *stopSignals {
	s := &stopSignals{}
	ch := make(chan os.Signal, 2)
	sigs := []os.Signal{syscall.SIGUSR1}
	if checkpointing {
		sigs = append(sigs, syscall.SIGTERM)
	}
	signal.Notify(ch, sigs...)
	quit := make(chan struct{})
	var poll <-chan time.Time
	var ticker *time.Ticker
	if stopFile != "" && rank == 0 {
		ticker = time.NewTicker(stopFilePoll)
		poll = ticker.C
	}
	go func() {
		for {
			select {
			case <-poll:
				if _, err := os.Stat(stopFile); err == nil && s.got.CompareAndSwap(false, true) {
					why, _ := os.ReadFile(stopFile)
					fmt.Fprintf(os.Stderr, "mpignn train: rank %d: stop requested by %s (%s); stopping after the current step to write a checkpoint\n",
						rank, stopFile, strings.TrimSpace(string(why)))
					poll = nil
				}
			case sig := <-ch:
				name := map[os.Signal]string{syscall.SIGUSR1: "SIGUSR1", syscall.SIGTERM: "SIGTERM"}[sig]
				if sig == syscall.SIGTERM {
					signal.Reset(syscall.SIGTERM) // a second one ends the process
				}
				switch {
				case !checkpointing:
					fmt.Fprintf(os.Stderr, "mpignn train: rank %d: %s received; no --checkpoint to write, training goes on\n", rank, name)
				case s.got.CompareAndSwap(false, true):
					fmt.Fprintf(os.Stderr, "mpignn train: rank %d: %s received; stopping after the current step to write a checkpoint\n", rank, name)
				}
			case <-quit:
				if ticker != nil {
					ticker.Stop()
				}
				return
			}
		}
	}()
	s.stop = func() {
		signal.Stop(ch)
		close(quit)
	}
	return s
}

// stopFilePoll is how often rank 0 looks for --stop-file: a stat, cheap
// beside a training step, and soon enough for a preemption notice given
// minutes ahead.
const stopFilePoll = 250 * time.Millisecond

// Requested reports whether a stop signal arrived.
func (s *stopSignals) Requested() bool { return s.got.Load() }

// Close stops listening.
func (s *stopSignals) Close() { s.stop() }

// quietOnError wraps the body of a run that listens with s: once the body
// has failed there is nothing left to checkpoint, so s stops listening and
// the stop signals are ignored from then on. The launcher may still send
// SIGTERM while this rank finalizes (OpenMPI does, after another rank
// exited 1 first), and a failed job must not answer it with "stopping
// after the current step to write a checkpoint".
func (s *stopSignals) quietOnError(body func(w *spmd.World) error) func(w *spmd.World) error {
	return func(w *spmd.World) error {
		err := body(w)
		if err != nil {
			s.Close()
			signal.Ignore(syscall.SIGUSR1, syscall.SIGTERM)
		}
		return err
	}
}

// adoptResumeFlags sets every flag of resume (the checkpoint's settings,
// dtrain.CheckpointSettings as flags) that was not given explicitly, and returns those it
// set. A flag that applies only to a task or a model (--neg-ratio,
// --heads) is taken only when the task and model in effect (given, or
// else the checkpoint's) are that task or model, so that an explicit
// --task or --model is refused by the settings comparison, naming it, and
// not by a flag check about a flag the user never typed. An explicit flag
// that contradicts the checkpoint is kept: dtrain.Train refuses it by name.
// The flags returned are those whose value is not their default (what a
// user would want to see).
func adoptResumeFlags(fs *flag.FlagSet, resume [][2]string) ([][2]string, error) {
	if len(resume) == 0 {
		return nil, nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	effective := func(name string) string {
		if given[name] {
			return fs.Lookup(name).Value.String()
		}
		for _, kv := range resume {
			if kv[0] == name {
				return kv[1]
			}
		}
		return fs.Lookup(name).Value.String()
	}
	task, model := effective("task"), effective("model")
	var set [][2]string
	for _, kv := range resume {
		name, value := kv[0], kv[1]
		switch {
		case given[name] || fs.Lookup(name) == nil:
			continue
		case name == "batch" && given["global-batch"] || name == "global-batch" && given["batch"]:
			// Two spellings of the one global batch: the one given
			// stands, and the comparison checks it against the
			// checkpoint's.
			continue
		case task != "link" && (name == "decoder" || name == "neg-ratio" || name == "neg-strict" || name == "use-valid-edges" || name == "keep-seed-edges"):
			continue
		case (task == "link" || task == "edge") && name == "split":
			continue
		case train.IsArchParam(name) && !train.ArchOwns(model, name):
			continue
		case name == "use-edge-feat" && !slices.Contains(train.EdgeArchs(), model):
			// Likewise the edge features: a given model that reads none
			// is refused by the comparison, not by this flag's check.
			continue
		case effective("optimizer") != train.OptSGD && (name == "momentum" || name == "nesterov"):
			// SGD's only; a given other optimizer is refused by the
			// comparison, by name.
			continue
		case name == "eval" && (given["temporal"] || given["eval-full"]):
			// Their default evaluation differs; the comparison names
			// the flag that changed.
			continue
		}
		fl := fs.Lookup(name)
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("the checkpoint's --%s %s: %w", name, value, err)
		}
		if fl.Value.String() != fl.DefValue {
			set = append(set, kv)
		}
	}
	return set, nil
}

// resumeTrainFlags parses the train flags again with the settings of the
// checkpoint in --checkpoint (read on rank 0) for the flags not given, and
// prints those that differ from the defaults on rank 0. Without a
// checkpoint (--resume auto's fresh start) f is returned as it is. It is
// collective.
func resumeTrainFlags(c *collectives.Comm, f *trainFlags, args []string) (*trainFlags, error) {
	settings, err := dtrain.LoadCheckpointSettings(c, f.cfg.Run.CheckpointDir)
	if err != nil || len(settings) == 0 {
		return f, err
	}
	// The checkpoint names fields: take each as the flag that sets it.
	flagOf := flagSpeller([]map[string]string{trainFieldFlags()})
	var resume [][2]string
	for _, kv := range settings {
		if name, ok := strings.CutPrefix(flagOf(kv[0]), "--"); ok {
			resume = append(resume, [2]string{name, kv[1]})
		}
	}
	nf, err := parseTrainResumed(args, resume)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if c.Rank() == 0 && len(nf.adopted) > 0 {
		shown := make([]string, len(nf.adopted))
		for i, kv := range nf.adopted {
			shown[i] = "--" + kv[0] + " " + kv[1]
		}
		fmt.Printf("resume: settings from the checkpoint: %s\n", strings.Join(shown, " "))
	}
	return nf, nil
}
