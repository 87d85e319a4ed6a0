package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/testhold"
	"mpignn/partition"
	"mpignn/spmd"
	"mpignn/train"
	"mpignn/train/dist"
)

// trainFlags are the flags of `mpignn train`.
type trainFlags struct {
	cfg      dist.TrainConfig
	data     string
	split    string
	method   string
	partSeed uint64
	// cacheDir is --cache-dir: where --data's partitions go ("" = beside
	// the dataset, else the user cache; partsCacheDirs).
	cacheDir string
	// sparse is --sparse-features, the feature storage of --data's
	// partitions (partition.UseSparse).
	sparse string
	// linkSplit is --link-split: the split --data partitions with, or the
	// one the --parts partition must hold.
	linkSplit string
	threads   int
	timeout   time.Duration // --timeout
	stopFile  string        // --stop-file
	// shared are the flags every rank must agree on (agreeStartup).
	shared []collectives.Field
	// taskDefaults are the flags that took --task link's defaults
	// (linkDefaults) because they were not given.
	taskDefaults []string
	// adopted are the flags a resume took from the checkpoint (name,
	// value), in the checkpoint's order.
	adopted [][2]string
}

func parseTrain(args []string) (*trainFlags, error) { return parseTrainResumed(args, nil) }

// parseTrainResumed parses the flags of `mpignn train`; a resume passes the
// checkpoint's settings (dist.ResumeFlags), which are taken for every flag
// not given explicitly before the flags are checked and derived.
func parseTrainResumed(args []string, resume [][2]string) (*trainFlags, error) {
	fs := newFlagSet("train", "./mpirun.sh -n P ./bin/mpignn train (--parts PARTDIR | --data RAWDIR) [flags]",
		"Trains on P ranks, one per partition: --parts takes a directory from mpignn partition with P parts;\n"+
			"--data partitions a raw dataset into P parts on rank 0 first and caches them (see --cache-dir).")
	f := &trainFlags{}
	c := &f.cfg
	addPartsFlag(fs, &c.PartDir)
	fs.StringVar(&f.data, "data", "", "dataset in the OGB raw layout: partitioned into one part per rank on rank 0 and cached (see --cache-dir)")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "where --data keeps its partitions (default: beside the dataset, in its parent directory; where that is read-only, $XDG_CACHE_HOME/mpignn or ~/.cache/mpignn)")
	fs.StringVar(&f.split, "split", "", "split to train on (default: the partition's default; for --data: public, else the first)")
	fs.StringVar(&f.method, "method", partition.MethodMetis, "partitioning method for --data: metis or random")
	fs.Uint64Var(&f.partSeed, "part-seed", 1, "partitioning seed for --data (METIS and the link split; the same default as partition --seed)")
	fs.StringVar(&f.sparse, "sparse-features", partition.SparseAuto, fmt.Sprintf("feature storage of --data's partitions: auto (CSR rows when under %g %% nonzero), on or off", 100*partition.SparseAutoDensity))
	fanout := addFanoutFlag(fs, "fanout", "10,5", "neighbors sampled")
	evalFanout := addFanoutFlag(fs, "eval-fanout", "", "fanouts for valid/test (default: --fanout)")
	fs.BoolVar(&c.EvalFull, "eval-full", false, "evaluate valid/test on the full neighborhood, sampled (implies --eval sampled)")
	fs.StringVar(&c.Eval, "eval", "", "evaluation: layer-wise (exact full-neighborhood inference, each layer once for every node) or sampled (--eval-fanout neighborhoods per seed) (default layer-wise; sampled with --temporal or --eval-full)")
	layers := fs.Int("layers", 0, "number of layers (default: number of fanouts; must match them)")
	addBatchFlag(fs, &c.Loader.Batch, 64, "seeds (edges for --task link: default 512 there, 64 for nodes)")
	fs.BoolVar(&c.Loader.Replace, "replace", false, "sample neighbors with replacement")
	temporal := addTemporalFlags(fs)
	fs.StringVar(&c.Model.Arch, "model", "", "model: "+strings.Join(train.Archs(), ", ")+" (GraphSAGE mean, GCN, GAT) for homogeneous graphs, "+strings.Join(train.HeteroArchs(), ", ")+" (HeteroSAGE, R-GCN) for heterogeneous ones (default: sage, or hsage on a heterogeneous partition)")
	fs.IntVar(&c.Hetero.EmbedDim, "embed-dim", 0, "heterogeneous: width of the learnable embeddings of node types without features (default: --hidden)")
	fs.StringVar(&c.Hetero.EmbedTypes, "embed-types", "", "heterogeneous: node types with learnable embeddings: the featureless ones (default), all, or a comma-separated list; a type with features reads them beside its embedding")
	fs.StringVar(&c.Hetero.SparseOpt, "sparse-opt", "", "heterogeneous: optimizer of the learnable embeddings, adam or adagrad (default adam)")
	fs.Float64Var(&c.Hetero.SparseLR, "sparse-lr", 0, "heterogeneous: learning rate of the learnable embeddings (default 0.01)")
	fs.StringVar(&c.Hetero.Push, "embed-push", "", "heterogeneous: how embedding gradients reach their owners, alltoallv (deterministic; default) or accumulate (one-sided MPI_Accumulate, rma transport)")
	fs.IntVar(&c.Hetero.Bases, "bases", 0, "rgcn: number of basis matrices shared by the relations (0 = one full weight per relation)")
	heads := fs.Int("heads", 8, "GAT: attention heads per layer (concatenated in hidden layers, averaged in the last; --hidden counts all heads)")
	attnDropout := fs.Float64("attn-dropout", 0, "GAT: dropout probability of the attention coefficients")
	fs.IntVar(&c.Model.Hidden, "hidden", 128, "hidden width")
	dropout := fs.Float64("dropout", 0.5, "dropout probability between layers (default 0.5; 0 for --task link)")
	inDropout := fs.Float64("input-dropout", -1, "dropout probability of the input features (default: --dropout, as DGL's feat_drop)")
	lr := fs.Float64("lr", 0.01, "Adam learning rate")
	weightDecay := fs.Float64("weight-decay", 5e-4, "L2 weight decay (added to the gradient) (default 5e-4; 0 for --task link)")
	fs.IntVar(&c.Run.Epochs, "epochs", 50, "total epochs (a resumed run continues up to this count)")
	addSeedFlag(fs, &c.Trainer.Seed, 1, "weights, batch order, sampling and dropout")
	fs.BoolVar(&c.RowNorm, "norm-feat", true, "scale every feature row to unit L1 norm (default true; false for --task link --decoder dot, whose logits start near 0 on unit-L1 rows)")
	fs.StringVar(&c.Metrics, "metrics", "", "JSONL metrics file written by rank 0 (one line per epoch + summary)")
	fs.StringVar(&c.Run.CheckpointDir, "checkpoint", "", "checkpoint directory (rank 0 writes it)")
	fs.StringVar(&f.stopFile, "stop-file", "", "stop as on SIGUSR1 (checkpoint after the current step, exit 75) once this file exists; rank 0 looks for it 4 times a second. For batch scripts: a signal relayed to ranks that are still starting ends them, a file does not (hostfiles/slurm/train.sbatch)")
	ckEvery := fs.String("checkpoint-every", "1", "checkpoint every N epochs, every Nsteps optimizer steps (500steps) or every duration (30m, 500s; rank 0's clock), and after the last epoch; steps and durations checkpoint in the middle of an epoch")
	fs.IntVar(&c.Run.EvalEvery, "eval-every", 1, "evaluate valid/test (and keep the best model) every N epochs and after the last")
	fs.Var(resumeFlag{&c.Resume, &c.ResumeAuto}, "resume", "continue from the checkpoint in --checkpoint; --resume auto continues if there is one and starts fresh if not")
	fs.StringVar(&c.InitFrom, "init-from", "", "start from the weights of a PyTorch Geometric state dict, FILE.safetensors (mpignn export, or safetensors.torch.save_file(model.state_dict(), FILE)) of the same architecture")
	fs.BoolVar(&c.OverwriteCheckpoint, "overwrite-checkpoint", false, "start a fresh run even if --checkpoint already holds a checkpoint (replaced at the first save)")
	transport := addTransportFlag(fs)
	addCacheFlag(fs, &c.Store.CacheMB)
	fs.BoolVar(&c.Quiet, "quiet", false, "no progress output (the transport and final lines still print)")
	addThreadsFlag(fs, &f.threads)
	addTimeoutFlag(fs, &f.timeout)
	fs.IntVar(&c.Trainer.Prefetch, "prefetch", 0, "training batches fetched (sampled and gathered) ahead while the current step computes (default 0 = off: it did not pay on 2 cores, see BENCHMARKS.md; ignored with learnable embeddings); results are the same")
	fs.IntVar(&c.Trainer.MaxSteps, "max-steps", 0, "end every epoch after this many steps (0 = all; for timing a few steps of a long epoch)")
	fs.StringVar(&c.Task, "task", dist.TaskNode, "node (node classification) or link (link prediction on the partition's link split)")
	fs.StringVar(&c.Model.Decoder, "decoder", "", "link task: pair scorer, dot or mlp (default mlp)")
	fs.StringVar(&c.LinkRelation, "relation", "", "link task on a heterogeneous graph: the relation (src___rel___dst) whose edges are predicted; --link-split may then also name a split directory of the dataset (time, u1)")
	fs.StringVar(&f.linkSplit, "link-split", "", "link task: held-out edges, random:TRAIN,VALID,TEST (with --data the default is random:0.85,0.05,0.10) or time (the dataset's split/time edge files); with --parts it must match the partition's")
	fs.IntVar(&c.Link.NegRatio, "neg-ratio", 1, "link task: negative edges per positive (uniform destinations)")
	fs.BoolVar(&c.Link.NegStrict, "neg-strict", false, "link task: redraw negatives that are edges of the training graph")
	fs.BoolVar(&c.Link.UseValidEdges, "use-valid-edges", false, "link task: message passing over train+valid edges when scoring the test split (OGB collab rule)")
	fs.BoolVar(&c.Link.KeepSeedEdges, "keep-seed-edges", false, "link task: do NOT exclude the step's positive edges from message passing (leaks the target; for ablations)")
	if err := parseFlags(fs, joinResumeAuto(fs, args)); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if f.adopted, err = adoptResumeFlags(fs, resume); err != nil {
		return nil, err
	}
	f.shared = startupFields("train", fs)
	if err := parseCheckpointEvery(*ckEvery, &c.Run); err != nil {
		return nil, err
	}
	if (c.PartDir == "") == (f.data == "") {
		return nil, errors.New("give exactly one of --parts PARTDIR or --data RAWDIR")
	}
	if f.stopFile != "" && c.Run.CheckpointDir == "" {
		return nil, errors.New("--stop-file needs --checkpoint: a stop writes a checkpoint to continue from")
	}
	if err := f.resolveTask(fs); err != nil {
		return nil, err
	}
	if f.data == "" && c.Task != dist.TaskLink {
		c.Loader.Split = f.split // "" = the partition's default split
	}
	if fanout.isRelSpec() {
		// Per-relation fanouts: resolved against the partition's schema in
		// dist.Train; the per-hop maxima size the run meanwhile.
		c.Hetero.Fanout = fanout.value
		c.Loader.Fanouts, err = fanout.relHops()
	} else {
		c.Loader.Fanouts, err = fanout.layers()
	}
	if err != nil {
		return nil, err
	}
	if evalFanout.isRelSpec() {
		c.Hetero.EvalFanout = evalFanout.value
		c.Loader.EvalFanouts, err = evalFanout.relHops()
	} else {
		c.Loader.EvalFanouts, err = evalFanout.parse() // nil = --fanout
	}
	if err != nil {
		return nil, err
	}
	if c.Loader.Temporal, c.Loader.FixedSeedTime, c.Loader.SeedTime, err = temporal.parse(); err != nil {
		return nil, err
	}
	if c.Loader.FixedSeedTime && c.Task == dist.TaskLink {
		return nil, errors.New("--seed-time: link seeds are expanded at their own edge's time; the flag is for node tasks")
	}
	if *layers != 0 && *layers != len(c.Loader.Fanouts) {
		return nil, fmt.Errorf("--layers %d but --fanout %s gives %d layers", *layers, fanout.value, len(c.Loader.Fanouts))
	}
	if !(*dropout >= 0 && *dropout < 1) {
		return nil, fmt.Errorf("--dropout %v must be in [0,1)", *dropout)
	}
	c.Model.Dropout = float32(*dropout)
	if *inDropout < 0 {
		*inDropout = *dropout
	}
	if *inDropout >= 1 {
		return nil, fmt.Errorf("--input-dropout %v must be in [0,1)", *inDropout)
	}
	c.Model.InputDropout = float32(*inDropout)
	// Converted here, once: the trainer computes in float32.
	c.Trainer.Adam = train.DefaultAdam(float32(*lr), float32(*weightDecay))
	if err := setArchFlags(fs, c, *heads, *attnDropout); err != nil {
		return nil, err
	}
	if c.Store.Transport, err = transport.parse(); err != nil {
		return nil, err
	}
	if c.Trainer.Prefetch < 0 {
		return nil, fmt.Errorf("--prefetch %d must be 0 (off) or more batches ahead", c.Trainer.Prefetch)
	}
	if c.Run.EvalEvery < 1 {
		return nil, fmt.Errorf("--eval-every %d must be positive", c.Run.EvalEvery)
	}
	if f.method != partition.MethodMetis && f.method != partition.MethodRandom {
		return nil, fmt.Errorf("--method %q: want metis or random", f.method)
	}
	if f.sparse != partition.SparseAuto && f.sparse != partition.SparseOn && f.sparse != partition.SparseOff {
		return nil, fmt.Errorf("--sparse-features %q: want %s, %s or %s", f.sparse, partition.SparseAuto, partition.SparseOn, partition.SparseOff)
	}
	return f, nil
}

// resolveTask checks the link-task flags: given to a node run they would
// have no effect, so they are refused. For the link task --split time is
// another spelling of --link-split time.
func (f *trainFlags) resolveTask(fs *flag.FlagSet) error {
	c := &f.cfg
	switch c.Task {
	case dist.TaskNode:
		var err error
		fs.Visit(func(fl *flag.Flag) {
			switch fl.Name {
			case "decoder", "link-split", "neg-ratio", "neg-strict", "use-valid-edges", "keep-seed-edges", "relation":
				err = fmt.Errorf("--%s applies to --task link only", fl.Name)
			}
		})
		c.Task = ""
		c.Link = dist.LinkOptions{}
		return err
	case dist.TaskLink:
		for _, d := range linkDefaults() {
			if !flagSet(fs, d.name) {
				if err := fs.Set(d.name, d.value); err != nil {
					return err
				}
				f.taskDefaults = append(f.taskDefaults, "--"+d.name)
			}
		}
		// A dot decoder multiplies two embeddings, so with unit-L1 input
		// rows (values ~1/dim) its logits and their gradients start near
		// zero and training stalls at log 2 on wide dense features; with
		// it the features stay as they are unless asked.
		if !flagSet(fs, "norm-feat") && c.Model.Decoder == train.DecoderDot {
			c.RowNorm = false
		}
	default:
		return fmt.Errorf("--task %q: want node or link", c.Task)
	}
	if d := c.Model.Decoder; d != "" && d != train.DecoderDot && d != train.DecoderMLP {
		return fmt.Errorf("--decoder %q: want dot or mlp", d)
	}
	if c.Link.NegRatio < 1 {
		return fmt.Errorf("--neg-ratio %d must be at least 1", c.Link.NegRatio)
	}
	switch {
	case f.split == partition.LinkSplitTime && f.linkSplit == "":
		f.linkSplit = partition.LinkSplitTime
	case f.split != "" && f.split != f.linkSplit:
		return fmt.Errorf("--split %s: the link task takes its split from --link-split (or --split time)", f.split)
	}
	f.split = ""
	if f.linkSplit != "" {
		lo := partition.LinkOptions{Split: f.linkSplit, Relation: c.LinkRelation}
		if err := lo.Check(); err != nil {
			return fmt.Errorf("--link-split/--relation: %w", err)
		}
	}
	if f.data != "" && f.linkSplit == "" {
		f.linkSplit = defaultLinkSplit
	}
	c.LinkSplit = f.linkSplit
	return nil
}

// taskDefault is a flag value that --task link uses when the flag is not
// given.
type taskDefault struct{ name, value string }

// linkDefaults are the link task's own defaults, where they differ from the
// node task's: BENCHMARKS.md's Cora link settings (MLP decoder, no dropout,
// no weight decay, 512 edges per step; with the node default fanout 10,5 and
// 50 epochs the plain command reaches test AUC 0.93-0.94 on Cora, issue 24).
// The node task's defaults stay as they are (its golden results use them).
func linkDefaults() []taskDefault {
	return []taskDefault{{"decoder", train.DecoderMLP}, {"dropout", "0"}, {"weight-decay", "0"}, {"batch", "512"}}
}

// settingsLine is the line rank 0 prints at start-up: the settings that
// decide the model and its training, as resolved, and which of them took
// the task's defaults.
func (f *trainFlags) settingsLine() string {
	c := &f.cfg
	task := c.Task
	if task == "" {
		task = dist.TaskNode
	}
	model := c.Model.Arch
	if model == "" {
		model = "default"
	}
	fan := make([]string, len(c.Loader.Fanouts))
	for i, v := range c.Loader.Fanouts {
		fan[i] = fmt.Sprint(v)
	}
	s := fmt.Sprintf("settings: --task %s --model %s", task, model)
	if c.Model.Decoder != "" {
		s += " --decoder " + c.Model.Decoder
	}
	s += fmt.Sprintf(" --hidden %d --fanout %s --batch %d --dropout %g --input-dropout %g --lr %g --weight-decay %g --norm-feat=%v --epochs %d --seed %d",
		c.Model.Hidden, strings.Join(fan, ","), c.Loader.Batch, c.Model.Dropout, c.Model.InputDropout, c.Trainer.Adam.LR, c.Trainer.Adam.WeightDecay, c.RowNorm, c.Run.Epochs, c.Trainer.Seed)
	if len(f.taskDefaults) > 0 {
		s += fmt.Sprintf(" (%s: --task %s defaults)", strings.Join(f.taskDefaults, " "), task)
	}
	return s
}

// defaultLinkSplit is the held-out share of edges of `train --task link
// --data` (PyG's RandomLinkSplit defaults are 0.1/0.1; OGB collab-like
// benchmarks hold out less).
const defaultLinkSplit = "random:0.85,0.05,0.10"

// setArchFlags checks --model and applies the GAT-only flags: given to
// another model they would have no effect, so they are refused.
func setArchFlags(fs *flag.FlagSet, c *dist.TrainConfig, heads int, attnDropout float64) error {
	m := &c.Model
	if train.ArchDoc(m.Arch) == "" {
		return fmt.Errorf("--model %q: want one of %s", m.Arch, strings.Join(append(train.Archs(), train.HeteroArchs()...), ", "))
	}
	if m.Arch != train.ArchGAT {
		var err error
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "heads" || f.Name == "attn-dropout" {
				err = fmt.Errorf("--%s applies to --model gat only, not %s", f.Name, m.ArchName())
			}
		})
		return err
	}
	if heads < 1 {
		return fmt.Errorf("--heads %d must be positive", heads)
	}
	if !(attnDropout >= 0 && attnDropout < 1) {
		return fmt.Errorf("--attn-dropout %v must be in [0,1)", attnDropout)
	}
	if len(c.Loader.Fanouts) > 1 && m.Hidden%heads != 0 {
		return fmt.Errorf("--hidden %d must be a multiple of --heads %d (hidden layers concatenate the heads)", m.Hidden, heads)
	}
	m.Heads, m.AttnDropout = heads, float32(attnDropout)
	return nil
}

// runTrain implements `mpignn train`.
func runTrain(args []string) error {
	f, err := parseTrain(args)
	if err != nil {
		return err // main names the command
	}
	// Listening starts before MPI: a preemption signal during start-up
	// must not kill the rank (SIGUSR1's default action).
	sigs := listenStopSignals(f.cfg.Run.CheckpointDir != "", testhold.Rank(), f.stopFile)
	defer sigs.Close()
	f.cfg.Stop = sigs.Requested
	stopped := false
	runWorld(func(w *spmd.World) error {
		c, err := newComm(w, f.timeout)
		if err != nil {
			return err
		}
		fields := f.shared
		if f.cfg.PartDir != "" {
			fields = append(fields, partsFields(f.cfg.PartDir)...)
		}
		if err := agreeStartup(c, fields); err != nil {
			return err
		}
		if err := dist.Agree(c, setThreads(f.threads, w.Size())); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if f.cfg.Resume || f.cfg.ResumeAuto {
			if f, err = resumeTrainFlags(c, f, args); err != nil {
				return err
			}
			f.cfg.Stop = sigs.Requested
		}
		if f.data != "" {
			var link *partition.LinkOptions
			if f.cfg.Task == dist.TaskLink {
				link = &partition.LinkOptions{Split: f.linkSplit, Relation: f.cfg.LinkRelation}
			}
			// Times are read only for temporal sampling, so plain runs keep
			// their untimed caches (and results).
			dir, err := prepareParts(c, f.data, f.split, f.method, f.partSeed, link, f.cfg.Loader.Temporal.On(), f.sparse, f.cacheDir, os.Stdout)
			if err != nil {
				return err
			}
			f.cfg.PartDir = dir
			// Every rank opens rank 0's partition: check that they all
			// see the same one (a shared file system can lag).
			if err := agreeStartup(c, partsFields(dir)); err != nil {
				return err
			}
		}
		f.cfg.Out = os.Stdout
		f.cfg.Progress = os.Stderr
		f.cfg.Settings = strings.TrimPrefix(f.settingsLine(), "settings: ")
		if w.IsRoot() {
			fmt.Println(f.settingsLine())
		}
		res, err := dist.Train(c, f.cfg)
		stopped = err == nil && res.Stopped
		return err
	}, trainFieldFlags())
	if stopped {
		sigs.Close()
		os.Exit(exitStopped) // after MPI_Finalize: every rank exits so
	}
	return nil
}

// setThreads gives each rank its share of the node's cores (for both Go's
// scheduler and the BLAS kernels): oversubscribed BLAS threads spin and slow
// everyone down. An explicit n above the sane bound is refused (checkThreads)
// and nothing is changed; the caller agrees on the error, since ranks on
// different nodes may see different core counts.
func setThreads(n, worldSize int) error {
	if err := checkThreads(n); err != nil {
		return err
	}
	if n < 1 {
		n = max(1, runtime.NumCPU()/dist.LocalRanks(worldSize))
	}
	runtime.GOMAXPROCS(n)
	train.SetBLASThreads(n)
	return nil
}

// partsCacheDirs lists where --data mode keeps its partitions, in order of
// preference: under cacheDir when given (and nowhere else), else next to
// the dataset, then the user's cache directory (the dataset directory may
// be read-only).
func partsCacheDirs(data, name, cacheDir string) []string {
	if cacheDir != "" {
		return []string{filepath.Join(cacheDir, name)}
	}
	abs, err := filepath.Abs(data)
	if err != nil {
		abs = data
	}
	dirs := []string{filepath.Join(filepath.Dir(abs), name)}
	if base := os.Getenv("XDG_CACHE_HOME"); base != "" {
		dirs = append(dirs, filepath.Join(base, "mpignn", name))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache", "mpignn", name))
	}
	return dirs
}

// writable reports whether dir's permission bits allow writing. The bits
// are checked rather than attempting a write, because root may write into
// directories marked read-only (such as the shared datasets).
func writable(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir() && st.Mode().Perm()&0o222 != 0
}

// reusable reports whether dir holds a partition of the wanted shape whose
// part files all match their META.json checksums: a damaged cache (a
// truncated or flipped file) is rebuilt, not handed to every rank to fail
// on. link (nil for node tasks) must match the partition's link section.
func reusable(dir string, parts int, method, split string, seed uint64, link *partition.LinkOptions, timed, sparse bool) bool {
	m, err := partition.LoadMeta(dir)
	if err != nil || m.NumParts != parts || m.Method != method || (m.Time != nil) != timed || m.SparseFeat != sparse {
		return false
	}
	if (m.Link != nil) != (link != nil) || (link != nil && !link.Matches(m.Link, seed)) {
		return false
	}
	if _, ok := m.Splits[split]; !ok && link == nil {
		return false
	}
	return partition.VerifyFiles(dir, m) == nil
}

// prepareParts partitions the dataset at data into one part per rank on
// rank 0 (or reuses a cached partition whose META matches), and returns the
// directory on every rank. It is collective. link, when set, makes a
// link-prediction partition (seeded by seed too); timed reads and stores
// the dataset's times (partition.Options.Time).
func prepareParts(c *collectives.Comm, data, split, method string, seed uint64, link *partition.LinkOptions, timed bool, sparse, cacheDir string, out *os.File) (string, error) {
	if isChunked(data) {
		// Every rank partitions: ranks that wait for a slower one's chunk
		// (or PT-Scotch) may wait long, as in mpignn partition, which has no
		// --timeout either.
		defer c.Untimed("partition --data on every rank")()
		return prepareChunkedParts(c, data, split, method, seed, link, timed, sparse, cacheDir, out)
	}
	var dir string
	var err error
	// Partitioning a large dataset takes rank 0 minutes, during which the
	// others wait in the broadcast below by design.
	defer c.Untimed("partition --data on rank 0")()
	if c.Rank() == 0 {
		dir, err = partitionOnRoot(c.Size(), data, split, method, seed, link, timed, sparse, cacheDir, out)
	}
	b, err := dist.BcastBytes(c, 0, []byte(dir), err)
	if err != nil {
		return "", fmt.Errorf("train --data %s: %w", data, err)
	}
	return string(b), nil
}

func partitionOnRoot(parts int, data, split, method string, seed uint64, link *partition.LinkOptions, timed bool, sparseMode, cacheDir string, out *os.File) (string, error) {
	if graph.IsHeteroLayout(data) {
		if _, err := partition.UseSparse(sparseMode, nil, true, link != nil); err != nil {
			return "", fmt.Errorf("--sparse-features: %w", err)
		}
		return partitionHeteroOnRoot(parts, data, split, method, seed, link, timed, cacheDir, out)
	}
	ro := graph.UndirectedOptions()
	if link != nil {
		if err := link.Check(); err != nil {
			return "", err
		}
		ro = link.ReadOptions(ro)
	}
	ro.Time = timed
	d, err := graph.ReadOGB(data, ro)
	if err != nil {
		return "", err
	}
	if split, err = partition.ResolveSplit(d, split); err != nil {
		return "", err
	}
	sparse, err := partition.UseSparse(sparseMode, d.Feat, false, link != nil)
	if err != nil {
		return "", fmt.Errorf("--sparse-features: %w", err)
	}
	name := fmt.Sprintf("%s-%s-parts-%d-%s-seed%d", filepath.Base(filepath.Clean(data)), split, parts, method, seed)
	if link != nil {
		// Everything that changes a link partition is in the name, so
		// that runs with different link options never share a cache.
		name = fmt.Sprintf("%s-%s-parts-%d-%s-seed%d", filepath.Base(filepath.Clean(data)), link.Key(), parts, method, seed)
	}
	if timed {
		name += "-time" // untimed caches keep their names
	}
	if sparse {
		name += "-sparse" // dense caches keep their names
	}
	return cachedParts(data, name, cacheDir, parts, method, split, seed, link, timed, sparse, out, func(dir string) error {
		mode := partition.SparseOff
		if sparse {
			mode = partition.SparseOn
		}
		_, err := partition.WriteDataset(dir, d, parts, partition.Options{
			Method: method, Seed: seed, Split: split, Undirected: true, Overwrite: true, Link: link, Time: timed,
			SparseFeatures: mode,
		})
		return err
	})
}

// partitionHeteroOnRoot is partitionOnRoot for OGB's heterogeneous layout:
// reverse relations added, the only labelled node type kept.
func partitionHeteroOnRoot(parts int, data, split, method string, seed uint64, link *partition.LinkOptions, timed bool, cacheDir string, out *os.File) (string, error) {
	ro := graph.DefaultHeteroReadOptions()
	ro.Time = timed
	d, err := graph.ReadOGBHetero(data, ro)
	if err != nil {
		return "", err
	}
	opt := partition.Options{Method: method, Seed: seed, Split: split, Undirected: true, Overwrite: true, Time: timed}
	var name string
	if link != nil {
		if link.Relation == "" {
			return "", errors.New("--task link on a heterogeneous dataset needs --relation src___rel___dst")
		}
		if err := link.Check(); err != nil {
			return "", err
		}
		lo := *link
		if lo.Rows, err = lo.ReadHeteroSplit(data, d.Schema); err != nil {
			return "", err
		}
		opt.Link = &lo
		name = fmt.Sprintf("%s-%s-parts-%d-%s-seed%d", filepath.Base(filepath.Clean(data)), link.Key(), parts, method, seed)
	} else {
		if _, opt.Split, err = partition.ResolveHetero(d, opt); err != nil {
			return "", err
		}
		name = fmt.Sprintf("%s-%s-parts-%d-%s-seed%d", filepath.Base(filepath.Clean(data)), opt.Split, parts, method, seed)
	}
	if timed {
		name += "-time"
	}
	return cachedParts(data, name, cacheDir, parts, method, opt.Split, seed, link, timed, false, out, func(dir string) error {
		_, err := partition.WriteHeteroDataset(dir, d, parts, opt)
		return err
	})
}

// cachedParts returns the first reusable partition named name among the
// cache directories of data, or writes one with write into the first
// writable of them.
func cachedParts(data, name, cacheDir string, parts int, method, split string, seed uint64, link *partition.LinkOptions, timed, sparse bool, out *os.File, write func(dir string) error) (string, error) {
	var errs []error
	for _, dir := range partsCacheDirs(data, name, cacheDir) {
		if reusable(dir, parts, method, split, seed, link, timed, sparse) {
			fmt.Fprintf(out, "partition: reusing %s\n", dir)
			return dir, nil
		}
		if err := cacheParentUsable(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := write(dir); err != nil {
			errs = append(errs, fmt.Errorf("partition into %s: %w", dir, err))
			continue
		}
		fmt.Fprintf(out, "partition: wrote %d parts (%s) to %s\n", parts, method, dir)
		return dir, nil
	}
	return "", errors.Join(errs...)
}

// cacheParentUsable makes the parent of the partition cache directory dir
// and says why it cannot take the cache (it cannot be made, or is
// read-only), so that the next place is tried.
func cacheParentUsable(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if !writable(parent) {
		return fmt.Errorf("%s is read-only", parent)
	}
	return nil
}
