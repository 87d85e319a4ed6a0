package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/partition/dpartition"
	"mpignn/spmd"
	"mpignn/spmd/launched"
	"mpignn/train"
	"mpignn/train/dtrain"
	"mpignn/train/kernels"
	"mpignn/train/optim"
)

// trainFlags are the flags of `mpignn train`.
type trainFlags struct {
	cfg    dtrain.TrainConfig
	data   string
	split  string
	method string
	// methodSet: --method was given (a chunked dataset's default is
	// ml, not the metis the flag shows; chunkedMethod).
	methodSet bool
	// chunkedMethod is the distributed method of a chunked --data
	// (dpartition.ChooseMethod, in validate).
	chunkedMethod string
	partSeed      uint64
	// cacheDir is --cache-dir: where --data's partitions go ("" = beside
	// the dataset, else the user cache; partition.CacheOptions.Dirs).
	cacheDir string
	// sparse is --sparse-features, the feature storage of --data's
	// partitions (partition.UseSparse).
	sparse string
	// featDType is --feat-dtype, the feature type of --data's partitions
	// (partition.Options.FeatDType).
	featDType string
	// nodeFeat is --node-feat: --data's node features made from its edge
	// features (graph.FromEdgesMean/Sum).
	nodeFeat string
	// linkSplit is --link-split: the split --data partitions with, or the
	// one the --parts partition must hold.
	linkSplit string
	threads   int
	isa       string        // --isa
	timeout   time.Duration // --timeout
	stopFile  string        // --stop-file
	// cpuProfile is --cpuprofile: the file (one per rank when there are
	// several, cpuProfilePath) of the CPU profile of the run.
	cpuProfile string
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
// checkpoint's settings (dtrain.CheckpointSettings, as flags), which are
// taken for every flag not given explicitly before the flags are checked
// and derived.
func parseTrainResumed(args []string, resume [][2]string) (*trainFlags, error) {
	fs := newFlagSet("train", "./mpirun.sh -n P ./bin/mpignn train (--parts PARTDIR | --data RAWDIR) [flags]",
		"Trains on P ranks, one per partition: --parts takes a directory from mpignn partition with P parts;\n"+
			"--data partitions a dataset into P parts first and caches them (see --cache-dir): one in the OGB raw\n"+
			"layout on rank 0 (METIS), a chunked one (mpignn convert, gen --format chunked) with all P ranks.")
	f := &trainFlags{}
	c := &f.cfg
	addPartsFlag(fs, &c.PartDir)
	fs.StringVar(&f.data, "data", "", "dataset to partition into one part per rank and cache (see --cache-dir): in the OGB raw layout, partitioned on rank 0; or chunked (mpignn convert), partitioned by all ranks")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "where --data keeps its partitions (default: beside the dataset, in its parent directory; where that is read-only, $XDG_CACHE_HOME/mpignn or ~/.cache/mpignn)")
	fs.StringVar(&f.split, "split", "", "split to train on (default: the partition's default; for --data: public, else the first)")
	fs.StringVar(&f.method, "method", partition.MethodMetis, "partitioning method for --data: metis or random; for a chunked dataset ml (multilevel, its default), lp, parmetis (PT-Scotch) or random (as partition --method)")
	fs.Uint64Var(&f.partSeed, "part-seed", 1, "partitioning seed for --data (METIS, PT-Scotch, lp, random and the link split) (default 1, as partition --seed)")
	fs.StringVar(&f.featDType, "feat-dtype", "fp32", "feature type of --data's partitions: fp32, bf16 or fp16 (two bytes a value; partition --feat-dtype)")
	fs.StringVar(&f.sparse, "sparse-features", partition.SparseAuto, fmt.Sprintf("feature storage of --data's partitions: auto (CSR rows when under %g %% nonzero), on or off", 100*partition.SparseAutoDensity))
	fs.StringVar(&f.nodeFeat, "node-feat", "", "for --data: "+nodeFeatFlagUsage)
	fanout := addFanoutFlag(fs, "fanout", "10,5", "neighbors sampled")
	evalFanout := addFanoutFlag(fs, "eval-fanout", "", "fanouts for valid/test (default: --fanout)")
	fs.BoolVar(&c.EvalFull, "eval-full", false, "evaluate valid/test on the full neighborhood, sampled (implies --eval sampled)")
	fs.StringVar(&c.Eval, "eval", "", "evaluation: layer-wise (exact full-neighborhood inference, each layer once for every node) or sampled (--eval-fanout neighborhoods per seed) (default layer-wise; sampled with --temporal or --eval-full)")
	layers := addLayersFlag(fs)
	addBatchFlag(fs, &c.Loader.Batch, 64, "seeds (edges for --task link: default 512 there, 64 for nodes)")
	fs.IntVar(&c.Loader.GlobalBatch, "global-batch", 0, "seeds (edges for --task link) per step over ALL ranks, whatever their count, each rank taking the seeds it owns: the same flags train the same model on any number of ranks, up to float summation order (instead of --batch)")
	fs.BoolVar(&c.Loader.Replace, "replace", false, "sample neighbors with replacement")
	temporal := addTemporalFlags(fs)
	model := addModelFlags(fs, &c.Model)
	fs.BoolVar(&c.UseEdgeFeat, "use-edge-feat", false, "give the model the partition's edge features (PyG's edge_dim: their width), in training, evaluation and inference; needs a model that reads them and a partition written with them (partition --edge-feat; with --data it partitions with them)")
	fs.IntVar(&c.Hetero.EmbedDim, "embed-dim", 0, "heterogeneous: width of the learnable embeddings of node types without features (default: --hidden)")
	fs.StringVar(&c.Hetero.EmbedTypes, "embed-types", "", "heterogeneous: node types with learnable embeddings: the featureless ones (default), all, or a comma-separated list; a type with features reads them beside its embedding")
	fs.StringVar(&c.Hetero.SparseOpt, "sparse-opt", "", "heterogeneous: optimizer of the learnable embeddings, adam or adagrad (default adam)")
	fs.Float64Var(&c.Hetero.SparseLR, "sparse-lr", 0, "heterogeneous: learning rate of the learnable embeddings (default 0.01)")
	fs.StringVar(&c.Hetero.Push, "embed-push", "", "heterogeneous: how embedding gradients reach their owners, alltoallv (deterministic; default) or accumulate (one-sided MPI_Accumulate, rma transport)")
	fs.IntVar(&c.Hetero.Bases, "bases", 0, "rgcn: number of basis matrices shared by the relations (0 = one full weight per relation)")
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
	addISAFlag(fs, &f.isa)
	addPrecisionFlag(fs, &c.Precision)
	addTimeoutFlag(fs, &f.timeout)
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", cpuProfileHelp)
	fs.IntVar(&c.Trainer.Prefetch, "prefetch", 0, "training batches fetched (sampled and gathered) ahead while the current step computes (default 0 = off: it did not pay on 2 cores, see BENCHMARKS.md; ignored with learnable embeddings); results are the same")
	fs.StringVar(&c.Trainer.Metric, "metric", "", "the validation figure that selects the best epoch (the checkpoint's weights and the final line's figures): acc (node), mrr, auc or hits@K (link), rocauc, f1_micro or f1_macro (multilabel), rmse or mae (regression); default: the task's first")
	fs.StringVar(&c.Trainer.Recipe.Optimizer, "optimizer", "adam", "optimizer of the model's weights: adam (torch.optim.Adam, --weight-decay an L2 term in the gradient), adamw (decoupled weight decay, torch.optim.AdamW) or sgd (torch.optim.SGD); all take --lr and --weight-decay")
	momentum := fs.Float64("momentum", 0, "sgd: momentum factor (0 = plain SGD)")
	fs.BoolVar(&c.Trainer.Recipe.Nesterov, "nesterov", false, "sgd: Nesterov momentum (needs --momentum)")
	fs.StringVar(&c.Trainer.Recipe.LRSchedule, "lr-schedule", "constant", "learning-rate schedule: constant, step:E,G (multiply the rate by G every E epochs) or cosine (decay to 0 over --epochs)")
	fs.IntVar(&c.Trainer.Recipe.Warmup, "warmup", 0, "ramp the learning rate up linearly over the first N optimizer steps (steps, not epochs; 0 = off)")
	clip := fs.Float64("clip-grad-norm", 0, "scale the all-reduced gradient of the model's weights to this global L2 norm when it is larger (torch.nn.utils.clip_grad_norm_; not the learnable embeddings; 0 = off)")
	fs.IntVar(&c.Trainer.Recipe.EarlyStop, "early-stop", 0, "stop after N evaluations in a row that do not improve the --metric (the best model is kept; 0 = off)")
	fs.IntVar(&c.Trainer.MaxSteps, "max-steps", 0, "end every epoch after this many steps (0 = all; for timing a few steps of a long epoch)")
	fs.StringVar(&c.Task, "task", dtrain.TaskNode, "node (node classification), link (link prediction on the partition's link split), multilabel (binary tasks per node: BCE, ROC-AUC) or regression (real values per node: MSE, RMSE/MAE); the last two need a partition of real targets (partition --labels); edge (a class or real values per edge from raw/edge-label.csv.gz, held out by the link split: accuracy, or RMSE/MAE)")
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
	f.methodSet = flagSet(fs, "method")
	f.shared = startupFields("train", fs)
	c.EmulateBF16 = os.Getenv(emulateBF16Env) == "1"
	if err := parseCheckpointEvery(*ckEvery, &c.Run); err != nil {
		return nil, err
	}
	if err := globalBatchFlags(fs, c); err != nil {
		return nil, err
	}
	// The rules checked here are about the command line itself, not about
	// configuration values (those are dtrain.TrainConfig.Validate's): which
	// flags were given (--parts or --data, --stop-file with --checkpoint,
	// --layers against the --fanout list, link flags on a node task) and
	// how --split is spelled for the link task (resolveTask).
	if (c.PartDir == "") == (f.data == "") {
		return nil, errors.New("give exactly one of --parts PARTDIR or --data RAWDIR")
	}
	if f.stopFile != "" && c.Run.CheckpointDir == "" {
		return nil, errors.New("--stop-file needs --checkpoint: a stop writes a checkpoint to continue from")
	}
	if err := f.resolveTask(fs); err != nil {
		return nil, err
	}
	if f.data == "" && c.Task != dtrain.TaskLink && c.Task != dtrain.TaskEdge {
		c.Loader.Split = f.split // "" = the partition's default split
	}
	if err := fanoutPlans(c, fanout, evalFanout); err != nil {
		return nil, err
	}
	if c.Loader.Temporal, c.Loader.FixedSeedTime, c.Loader.SeedTime, err = temporal.parse(); err != nil {
		return nil, err
	}
	if err := checkLayers(*layers, fanout, len(c.Loader.Fanouts)); err != nil {
		return nil, err
	}
	if err := model.apply(fs, &c.Model, &c.Trainer.Adam); err != nil {
		return nil, err
	}
	c.Trainer.Recipe.Momentum, c.Trainer.Recipe.ClipGradNorm = float32(*momentum), float32(*clip)
	if c.Store.Transport, err = transport.parse(); err != nil {
		return nil, err
	}
	// 0 is the library's "every epoch"; the flag's default says 1.
	if c.Run.EvalEvery < 1 {
		return nil, fmt.Errorf("--eval-every %d must be positive", c.Run.EvalEvery)
	}
	if err := f.validate(); err != nil {
		return nil, flagNames(err, trainFieldFlags())
	}
	return f, nil
}

// fanoutPlans parses --fanout and --eval-fanout once each into the run's
// configuration: their hops are the loader's fanouts (an empty
// --eval-fanout is nil, --fanout's), and a per-relation plan goes as it is
// to dtrain, which resolves it against the partition's schema.
func fanoutPlans(c *dtrain.TrainConfig, fanout, evalFanout *fanoutFlag) error {
	fan, err := fanout.plan()
	if err != nil {
		return err
	}
	eval, err := evalFanout.parse()
	if err != nil {
		return err
	}
	c.Loader.Fanouts, c.Loader.EvalFanouts = fan.Hops, eval.Hops
	if fan.PerRelation() {
		c.Hetero.Fanout = fan
	}
	if eval.PerRelation() {
		c.Hetero.EvalFanout = eval
	}
	return nil
}

// addLayersFlag declares --layers, which only checks the layer count that
// --fanout gives (checkLayers).
func addLayersFlag(fs *flag.FlagSet) *int {
	return fs.Int("layers", 0, "number of layers (default: number of fanouts; must match them)")
}

// checkLayers refuses a --layers n (0 = not given) other than the fanouts'
// count of layers.
func checkLayers(n int, fanout *fanoutFlag, layers int) error {
	if n != 0 && n != layers {
		return fmt.Errorf("--layers %d but --%s %s gives %d layers", n, fanout.name, fanout.value, layers)
	}
	return nil
}

// modelFlags are the model and optimizer flags of train that bench threads
// declares too, so that both spell, default and convert them the same
// way. The task's own defaults (linkDefaults) are set by name on the flag
// set, before apply.
type modelFlags struct {
	dropout, inDropout, lr, weightDecay *float64
	// archParams are the flags of the architectures' own parameters
	// (train.ArchParams), in their order.
	archParams []train.Param
}

// addModelFlags declares --model and --hidden (into m), the flags of every
// architecture's own parameters (train.ArchParams: --heads,
// --attn-dropout, ...), and the flags that apply converts: --dropout,
// --input-dropout, --lr and --weight-decay.
func addModelFlags(fs *flag.FlagSet, m *train.Config) *modelFlags {
	var docs []string
	for _, a := range append(train.Archs(), train.HeteroArchs()...) {
		docs = append(docs, a+" ("+train.ArchDoc(a)+")")
	}
	fs.StringVar(&m.Arch, "model", "", "model, for homogeneous graphs: "+strings.Join(train.Archs(), ", ")+"; for heterogeneous ones: "+strings.Join(train.HeteroArchs(), ", ")+", or any homogeneous one HGB style (typed input projections, then its layers over the graph ignoring node and edge types) (default: sage, or hsage on a heterogeneous partition). "+strings.Join(docs, "; "))
	fs.IntVar(&m.Hidden, "hidden", 128, "hidden width")
	fs.BoolVar(&m.Residual, "residual", false, "add every hidden layer's input rows to its activated output (a learned projection where the widths differ), before dropout (PyG DeepGCNLayer block res)")
	fs.StringVar(&m.Norm, "norm", "", "layer: LayerNorm of every hidden layer's output before the ReLU (per node, PyG's BasicGNN norm with LayerNorm mode node); no batch norm (its statistics would span the ranks)")
	fs.StringVar(&m.JK, "jk", "", "jumping knowledge: cat, max or last; every layer outputs --hidden rows and a final linear map reads their combination (PyG's BasicGNN jk)")
	return &modelFlags{archParams: addArchFlags(fs),
		dropout:     fs.Float64("dropout", 0.5, "dropout probability between layers (default 0.5; 0 for --task link)"),
		inDropout:   fs.Float64("input-dropout", -1, "dropout probability of the input features (default: --dropout, as DGL's feat_drop)"),
		lr:          fs.Float64("lr", 0.01, "Adam learning rate"),
		weightDecay: fs.Float64("weight-decay", 5e-4, "L2 weight decay (added to the gradient) (default 5e-4; 0 for --task link)"),
	}
}

// addArchFlags declares a flag for every architecture's own parameter
// (train.ArchParams, except those set only for evaluation) and returns
// them for applyArchFlags.
func addArchFlags(fs *flag.FlagSet) []train.Param {
	var ps []train.Param
	for _, p := range train.ArchParams() {
		if p.EvalOnly {
			continue
		}
		switch p.Kind {
		case train.ParamBool:
			fs.Bool(p.Flag(), p.Default == "true", p.Help)
		case train.ParamChoice:
			fs.String(p.Flag(), p.Default, p.Help+": "+strings.Join(p.Choices, ", "))
		default:
			fs.String(p.Flag(), p.Default, p.Help+" (default "+p.Default+")")
		}
		ps = append(ps, p)
	}
	return ps
}

// applyArchFlags sets m's architecture parameters from the flags of
// addArchFlags: each flag given, and the defaults of m's architecture. A
// parameter given to a model without it is refused, naming the flag.
func applyArchFlags(fs *flag.FlagSet, ps []train.Param, m *train.Config) error {
	// An architecture's flags default to its settings for that
	// architecture only; given to another model they reach the config,
	// which refuses them (they would have no effect).
	for _, p := range ps {
		name := p.Flag()
		if !flagSet(fs, name) && !train.ArchOwns(m.Arch, name) {
			continue
		}
		if err := m.SetOpt(name, fs.Lookup(name).Value.String()); err != nil {
			return flagNames(config.In("Model", err))
		}
	}
	return nil
}

// apply sets the model's dropouts and architecture parameters and Adam's
// rate and decay from the parsed flags. A parameter given to a model
// without it is refused, naming the flag.
func (f *modelFlags) apply(fs *flag.FlagSet, m *train.Config, adam *optim.AdamConfig) error {
	// Converted here, once: the model and the trainer compute in float32.
	m.Dropout = float32(*f.dropout)
	m.InputDropout = float32(*f.dropout)
	if *f.inDropout >= 0 {
		m.InputDropout = float32(*f.inDropout)
	}
	*adam = optim.DefaultAdam(float32(*f.lr), float32(*f.weightDecay))
	return applyArchFlags(fs, f.archParams, m)
}

// validate checks the configuration as the library would: the run's
// (dtrain.TrainConfig.Validate, which nests the loader's, trainer's and
// model's) and that of --data's partitioning (partition.Options).
func (f *trainFlags) validate() error {
	v := f.cfg
	if v.PartDir == "" {
		v.PartDir = f.data // --data's partition is made at run time
	}
	if err := v.Validate(); err != nil {
		return err
	}
	po := f.partOptions()
	if f.featDType != "fp32" && f.data == "" {
		return fmt.Errorf("--feat-dtype %s applies to --data (a partition from --parts has its feature type; give partition --feat-dtype)", f.featDType)
	}
	if f.nodeFeat != "" && f.data == "" {
		return errors.New("--node-feat applies to --data (a partition from --parts has its node features; give partition --node-feat)")
	}
	if f.data != "" && isChunked(f.data) {
		if f.nodeFeat != "" {
			return errors.New("--node-feat: not supported for chunked datasets yet")
		}
		// The chunked dataset's methods are dpartition's.
		var err error
		if f.chunkedMethod, err = dpartition.ChooseMethod(f.method, f.methodSet, ""); err != nil {
			return err
		}
		po.Method = ""
	}
	return po.Validate()
}

// globalBatchFlags refuses --batch with --global-batch (two sizes of the
// same batch: a mistake on the command line, exit code 2, one line) and a
// typed --global-batch 0, and with --global-batch leaves the per-rank
// batch unset, as the loader options want.
func globalBatchFlags(fs *flag.FlagSet, c *dtrain.TrainConfig) error {
	if !flagSet(fs, "global-batch") {
		return nil
	}
	if flagSet(fs, "batch") {
		return &usageError{fmt.Sprintf("--batch %d and --global-batch %d exclude each other: --batch counts per rank, --global-batch over all ranks (give one)", c.Loader.Batch, c.Loader.GlobalBatch)}
	}
	if err := explicitZero(fs, "global-batch"); err != nil {
		return err
	}
	c.Loader.Batch = 0
	return nil
}

// resolveTask checks the link-task flags: given to a node run they would
// have no effect, so they are refused (by presence: their defaults, such as
// --neg-ratio 1, are not zero values the library could tell apart). For
// the link task --split time is another spelling of --link-split time, and
// any other --split is refused: the flag means the node split there.
func (f *trainFlags) resolveTask(fs *flag.FlagSet) error {
	c := &f.cfg
	switch c.Task {
	case dtrain.TaskNode, dtrain.TaskMultilabel, dtrain.TaskRegression:
		var err error
		fs.Visit(func(fl *flag.Flag) {
			switch fl.Name {
			case "decoder", "link-split", "neg-ratio", "neg-strict", "use-valid-edges", "keep-seed-edges", "relation":
				err = fmt.Errorf("--%s applies to --task link only", fl.Name)
			}
		})
		if c.Task == dtrain.TaskNode {
			c.Task = "" // node runs' run info predates tasks
		}
		c.Link = dtrain.LinkOptions{}
		return err
	case dtrain.TaskLink:
		for _, d := range linkDefaults() {
			if d.name == "batch" && c.Loader.GlobalBatch > 0 {
				continue // the batch is given, over all ranks
			}
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
	case dtrain.TaskEdge:
		// The edge task scores labelled edges with the MLP decoder and
		// draws no negatives: the link task's negative and decoder flags
		// would have no effect, so they are refused by presence.
		var given []string
		fs.Visit(func(fl *flag.Flag) {
			switch fl.Name {
			case "decoder", "neg-ratio", "neg-strict", "use-valid-edges", "keep-seed-edges", "relation":
				given = append(given, "--"+fl.Name)
			}
		})
		if len(given) > 0 {
			return fmt.Errorf("%s: --task edge has no negatives and always the mlp decoder; these flags are --task link's", strings.Join(given, ", "))
		}
		c.Link = dtrain.LinkOptions{}
	default:
		return nil // refused by dtrain.TrainConfig.Validate
	}
	switch {
	case f.split == partition.LinkSplitTime && f.linkSplit == "":
		f.linkSplit = partition.LinkSplitTime
	case f.split != "" && f.split != f.linkSplit:
		return fmt.Errorf("--split %s: the link task takes its split from --link-split (or --split time)", f.split)
	}
	f.split = ""
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
		task = dtrain.TaskNode
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
	batch := fmt.Sprintf("--batch %d", c.Loader.Batch)
	if c.Loader.GlobalBatch > 0 {
		batch = fmt.Sprintf("--global-batch %d", c.Loader.GlobalBatch)
	}
	s += fmt.Sprintf(" --hidden %d --fanout %s %s --dropout %g --input-dropout %g --lr %g --weight-decay %g --norm-feat=%v --epochs %d --seed %d",
		c.Model.Hidden, strings.Join(fan, ","), batch, c.Model.Dropout, c.Model.InputDropout, c.Trainer.Adam.LR, c.Trainer.Adam.WeightDecay, c.RowNorm, c.Run.Epochs, c.Trainer.Seed)
	if r := c.Trainer.Recipe.Normalized(); !r.IsZero() {
		s += recipeSettings(r)
	}
	if c.UseEdgeFeat {
		s += " --use-edge-feat"
	}
	if c.Precision == kernels.PrecisionBF16 {
		s += " --precision bf16"
	}
	if len(f.taskDefaults) > 0 {
		s += fmt.Sprintf(" (%s: --task %s defaults)", strings.Join(f.taskDefaults, " "), task)
	}
	return s
}

// defaultLinkSplit is the held-out share of edges of `train --task link
// --data` (PyG's RandomLinkSplit defaults are 0.1/0.1; OGB collab-like
// benchmarks hold out less).
const defaultLinkSplit = "random:0.85,0.05,0.10"

// runTrain implements `mpignn train`.
func runTrain(args []string) error {
	f, err := parseTrain(args)
	if err != nil {
		return flagMistake(err) // main names the command
	}
	// Listening starts before MPI: a preemption signal during start-up
	// must not kill the rank (SIGUSR1's default action).
	sigs := listenStopSignals(f.cfg.Run.CheckpointDir != "", launched.Rank(), f.stopFile)
	defer sigs.Close()
	f.cfg.Stop = sigs.Requested
	stopped := false
	runWorld(sigs.quietOnError(func(w *spmd.World) error {
		c, err := newComm(w, f.timeout)
		if err != nil {
			return err
		}
		fields := f.shared
		if f.cfg.PartDir != "" {
			fields = append(fields, dpartition.MetaFields(f.cfg.PartDir)...)
		}
		if err := agreeStartup(c, fields); err != nil {
			return err
		}
		if err := collectives.Agree(c, setCompute(f.threads, f.isa, w.Size())); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if f.cfg.Resume || f.cfg.ResumeAuto {
			if f, err = resumeTrainFlags(c, f, args); err != nil {
				return err
			}
			f.cfg.Stop = sigs.Requested
		}
		if f.data != "" {
			// Spelled as flags on rank 0: the other ranks get its
			// message only, as text.
			explain := func(err error) error { return flagNames(err, trainFieldFlags()) }
			dir, err := dpartition.JobParts(c, f.cacheOptions(w.Size()), os.Stdout, explain)
			if err != nil {
				return fmt.Errorf("train --data %s: %w", f.data, err)
			}
			f.cfg.PartDir = dir
			// Every rank opens rank 0's partition: check that they all
			// see the same one (a shared file system can lag).
			if err := agreeStartup(c, dpartition.MetaFields(dir)); err != nil {
				return err
			}
		}
		f.cfg.Out = flagWriter{os.Stdout, []map[string]string{trainFieldFlags()}}
		f.cfg.Progress = os.Stderr
		f.cfg.Settings = strings.TrimPrefix(f.settingsLine(), "settings: ")
		if w.IsRoot() {
			fmt.Println(f.settingsLine())
		}
		// Profiled from here: what the start-up above did (agreeing,
		// partitioning --data) is not the training the profile is for.
		// The deferred stop covers the error returns; a stop on request
		// returns normally, and the process exits after this function.
		stopProfile, err := startCPUProfile(c, f.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
		res, err := dtrain.Train(c, f.cfg)
		stopped = err == nil && res.Stopped
		if err == nil && w.IsRoot() {
			// The last line of a run: its figures, from the Result (a
			// stopped run has none), before the profile is closed as
			// it always was. A failed write is not the run's error, as
			// for every other line on stdout: it would be rank 0's
			// alone and abort a job that trained.
			_ = res.WriteFinal(f.cfg.Out)
		}
		if perr := stopProfile(); err == nil {
			err = perr
		}
		return err
	}), trainFieldFlags())
	if stopped {
		sigs.Close()
		spmd.Exit(exitStopped) // after MPI_Finalize, on every rank (noted for mpirun.sh: spmd.ExitFileEnv)
	}
	return nil
}

// setCompute applies --threads (setThreads) and --isa (setISA).
func setCompute(threads int, isa string, worldSize int) error {
	if err := setThreads(threads, worldSize); err != nil {
		return err
	}
	return setISA(isa)
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
		n = max(1, runtime.NumCPU()/dtrain.LocalRanks(worldSize))
	}
	runtime.GOMAXPROCS(n)
	kernels.SetBLASThreads(n)
	return nil
}

// cacheOptions are the options --data partitions with, into parts parts
// (the split is resolved when the dataset is read).
func (f *trainFlags) cacheOptions(parts int) partition.CacheOptions {
	o := partition.CacheOptions{Data: f.data, Dir: f.cacheDir, Parts: parts, Options: f.partOptions()}
	if isChunked(f.data) {
		// Chosen by validate; the cache is named after the method used.
		o.Method = f.chunkedMethod
	}
	if f.cfg.Task == dtrain.TaskLink || f.cfg.Task == dtrain.TaskEdge {
		o.Link = &partition.LinkOptions{Split: f.linkSplit, Relation: f.cfg.LinkRelation}
	}
	return o
}

// partOptions are --method, --part-seed, --split, --sparse-features and
// --node-feat as partition options. Times are read only for temporal sampling, and
// edge features only for --use-edge-feat, so plain runs keep their caches (and results).
func (f *trainFlags) partOptions() partition.Options {
	return partition.Options{Method: f.method, Seed: f.partSeed, Split: f.split, Time: f.cfg.Loader.Temporal.On(), SparseFeatures: f.sparse, NodeFeat: f.nodeFeat, EdgeFeat: f.cfg.UseEdgeFeat,
		FeatDType: f.featDType}
}

// recipeSettings spells a recipe other than the default as the flags of
// the settings line (only the ones that differ from their defaults).
func recipeSettings(r train.Recipe) string {
	var s string
	if r.Optimizer != "" {
		s += " --optimizer " + r.Optimizer
	}
	if r.Momentum != 0 {
		s += fmt.Sprintf(" --momentum %g", r.Momentum)
	}
	if r.Nesterov {
		s += " --nesterov"
	}
	if r.LRSchedule != "" {
		s += " --lr-schedule " + r.LRSchedule
	}
	if r.Warmup > 0 {
		s += fmt.Sprintf(" --warmup %d", r.Warmup)
	}
	if r.ClipGradNorm > 0 {
		s += fmt.Sprintf(" --clip-grad-norm %g", r.ClipGradNorm)
	}
	if r.EarlyStop > 0 {
		s += fmt.Sprintf(" --early-stop %d", r.EarlyStop)
	}
	return s
}
