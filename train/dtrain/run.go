package dtrain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/kernels"
	"mpignn/train/metrics"
)

// TrainConfig configures Train. Every rank passes the same values; Out,
// Progress and Metrics are used on rank 0 only.
//
// Each option is defined once, in the option struct of the package that
// uses it; TrainConfig holds those structs and adds only what belongs to
// the whole run (the partition, evaluation on full neighborhoods, feature
// normalisation, output files). Fields that Train derives itself are named
// in each struct's comment and must be left zero.
type TrainConfig struct {
	PartDir string
	// Model: Arch, Hidden, Dropout, InputDropout and the architecture's Opts.
	// InDim and Classes come from the partition, Layers from
	// len(Loader.Fanouts) and EdgeDim from the partition with UseEdgeFeat.
	Model train.Config
	// UseEdgeFeat gives the model the partition's edge features: Train sets
	// Model.EdgeDim to their width (META's edge_feat_dim, which every
	// rank's part must share) and the store fetches them into every block,
	// sampled or layer-wise. It needs an architecture that reads them and a
	// partition written with them; without it the store leaves them out
	// and the run trains as on the partition written without them.
	UseEdgeFeat bool
	// Trainer: Adam and Seed, which drives everything random (weights,
	// dropout, batch order and sampling: it is also the loader's seed),
	// MaxSteps and Prefetch (batches fetched ahead; it changes no result,
	// so it is not part of the checkpoint's run info and a resume may use
	// another value).
	Trainer train.Options
	// Loader: Fanouts, EvalFanouts, Batch (PER RANK; the global batch is
	// Size·Batch) or GlobalBatch (over all ranks, whatever their count: the
	// same configuration trains the same model on any number of ranks, up
	// to float summation order), Replace and Split ("" = the partition's
	// default). Seed is Trainer.Seed.
	Loader dsample.LoaderOptions
	// EvalFull evaluates valid/test on the full neighborhood, overriding
	// Loader.EvalFanouts.
	EvalFull bool
	// Eval is the evaluation mode: EvalLayerwise (exact layer-wise
	// inference), EvalSampled (the loader's evaluation fanouts), or "" for
	// the default (layer-wise, but sampled with EvalFull or temporal
	// sampling; see resolveEval).
	Eval string
	// Task is "node" (also what "" means: node classification) or "link"
	// (link prediction on the partition's link split; Model.Decoder picks
	// the pair scorer, "" = dot).
	Task string
	// Link configures the link task.
	Link LinkOptions
	// Hetero configures runs on heterogeneous partitions (refused on
	// homogeneous ones unless zero).
	Hetero HeteroOptions
	// LinkSplit, if set, is the link split the partition must hold (its
	// META "link.split"); "" accepts whatever it holds. LinkRelation
	// likewise names the relation a heterogeneous partition's link split
	// must be of.
	LinkSplit, LinkRelation string
	// RowNorm scales every feature row to unit L1 norm before training.
	RowNorm bool
	// Store: Transport and CacheMB. ReleasePart and NoEdgeFeat (from
	// UseEdgeFeat) are set by Train.
	Store dsample.StoreOptions
	// Run: Epochs, CheckpointDir, CheckpointEvery and EvalEvery. Metrics
	// and RunInfo are set by Train.
	Run train.RunOptions

	Metrics string // JSONL file ("" = none)
	Resume  bool
	// InitFrom, if set, is a PyG-layout safetensors state dict (mpignn
	// export, or PyG's own) whose weights replace the initial ones.
	InitFrom string
	// ResumeAuto resumes when Run.CheckpointDir holds a checkpoint and
	// starts a fresh run when it holds none (--resume auto: one job script
	// for the first run and every requeue). It implies nothing else.
	ResumeAuto bool
	// Stop, if set, is train.Trainer.Stop: this rank was asked to stop (a
	// signal). All ranks then stop after the same step, write a checkpoint
	// and Train returns a Result with Stopped set.
	Stop func() bool
	// OverwriteCheckpoint lets a fresh run (not Resume) start in a
	// Run.CheckpointDir that already holds a checkpoint; without it such a
	// run is refused, so an old checkpoint is never replaced by accident.
	OverwriteCheckpoint bool

	// Out takes the result lines (kernels, transport, layout, resume,
	// memory; the final line is the caller's, Result.WriteFinal); nil =
	// discard.
	Out      io.Writer
	Progress io.Writer // progress bar / lines; nil = none
	Quiet    bool
	// Settings is the command line's resolved settings, kept in the run
	// info for the record (not compared on resume).
	Settings string
	// Precision is the precision of the layers' matrix products:
	// kernels.PrecisionFP32 (also what "" means) or PrecisionBF16, bf16
	// inputs with fp32 accumulation (train.Model.UseBF16), which every
	// rank's CPU must support (kernels.NewBF16). It is part of the
	// checkpoint's run info: a resume continues at its checkpoint's.
	Precision string
	// EmulateBF16 is FOR TESTS ONLY: Precision bf16 then runs on
	// kernels.NewBF16Emulated (bf16 rounding, fp32 kernel) instead of
	// being refused on a CPU without bf16, so that the tests of machines
	// without it cover the bf16 path end to end. It is slower than fp32
	// and not a user setting (the command line takes it from an
	// environment variable the tests set).
	EmulateBF16 bool
	// Reporter, if set, also receives every rank's progress (tests).
	Reporter train.Reporter
}

// Result is what Train returns on every rank.
type Result struct {
	Summary metrics.Summary
	Epochs  []metrics.Epoch // epochs run by this call
	Params  []float32       // final weights
	Weights string          // WeightsHash(Params)
	// Embeddings is a digest of the learnable embeddings and their
	// optimizer state (heterogeneous runs with featureless types; "" else).
	Embeddings string
	Transport  collectives.Transport
	// Stopped is set when the run stopped early on request (Stop) after
	// writing its checkpoint; Summary and the digests are then empty.
	Stopped bool

	// What WriteFinal needs besides the figures: the task formats them,
	// and a run of no epochs names its start and its checkpoint.
	task                    task
	initFrom, checkpointDir string
}

// runInfo is stored in checkpoints: the settings that must not change when a
// run is resumed, because they change what the model sees. Its JSON (names
// and order of the fields) is read back from existing checkpoints: it must
// not change.
type runInfo struct {
	Dataset     string `json:"dataset"`
	Split       string `json:"split"`
	GlobalBatch int    `json:"global_batch"`
	Fanouts     []int  `json:"fanouts"`
	EvalFanouts []int  `json:"eval_fanouts"`
	Replace     bool   `json:"replace"`
	RowNorm     bool   `json:"row_norm"`
	// Link runs only (absent from node runs' JSON, which stays as before).
	Task      string       `json:"task,omitempty"`
	LinkSplit string       `json:"link_split,omitempty"`
	Link      *LinkOptions `json:"link,omitempty"`
	// MaxSteps is train.Options.MaxSteps (absent when 0).
	MaxSteps int `json:"max_steps,omitempty"`
	// Metric is train.Options.Metric, the selection figure (absent for the
	// task's default): a resume must select the same way.
	Metric string `json:"metric,omitempty"`
	// Recipe is train.Options.Recipe, normalized (absent for the default,
	// Adam at a constant rate): a resume must continue the same recipe.
	Recipe *train.Recipe `json:"recipe,omitempty"`
	// Hetero holds the settings of a heterogeneous run (absent otherwise).
	Hetero *heteroRunInfo `json:"hetero,omitempty"`
	// Temporal holds the temporal sampling settings (absent when off).
	Temporal *temporalRunInfo `json:"temporal,omitempty"`
	// Eval is "layer-wise" for runs evaluated by layer-wise inference
	// (absent for sampled evaluation, which the eval fanouts describe):
	// it selects the best epoch, so a resume must evaluate the same way.
	Eval string `json:"eval,omitempty"`
	// Settings is TrainConfig.Settings (absent when empty).
	Settings string `json:"settings,omitempty"`
	// Kernels is the numeric path of the run's products (jobKernels), for
	// the record and for the line a resume on another path prints; like
	// Settings it is not compared (a resume may change it).
	Kernels string `json:"kernels,omitempty"`
	// Precision is TrainConfig.Precision when it is bf16 (absent at fp32,
	// as in checkpoints written before it existed): compared on resume,
	// since a model trained on bf16 products continues on them.
	Precision string `json:"precision,omitempty"`
}

// temporalRunInfo records temporal sampling in the run info: a resume must
// sample as the run it continues did.
type temporalRunInfo struct {
	Strategy string `json:"strategy"`
	Strict   bool   `json:"strict,omitempty"`
	SeedTime *int64 `json:"seed_time,omitempty"`
}

// newRunInfo derives the run info from the loader options as the run
// resolved them (Split and EvalFanouts filled in), so that the checkpoint
// records exactly what the loader was given.
func newRunInfo(dataset string, ranks int, lo dsample.LoaderOptions, rowNorm bool) runInfo {
	ri := runInfo{
		Dataset: dataset, Split: lo.Split, GlobalBatch: lo.GlobalSize(ranks), Fanouts: lo.Fanouts,
		EvalFanouts: lo.EvalFanouts, Replace: lo.Replace, RowNorm: rowNorm,
	}
	if lo.Temporal.On() {
		ri.Temporal = &temporalRunInfo{Strategy: lo.Temporal.Strategy.String(), Strict: lo.Temporal.Strict}
		if lo.FixedSeedTime {
			t := lo.SeedTime
			ri.Temporal.SeedTime = &t
		}
	}
	return ri
}

// Validate reports a configuration Train cannot run, naming the field at
// fault (config.FieldError): the options of the run itself, and those of
// each nested options type through its own Validate (Loader, Trainer, the
// settings of Model). What only the partition decides (its schema, link
// split, times) is checked by Train. Train calls it; a caller that builds
// the configuration long before (a command line) calls it to fail early.
func (c *TrainConfig) Validate() error {
	lo, m := &c.Loader, &c.Model
	if c.PartDir == "" {
		return config.Errorf("{PartDir}: no partition directory")
	}
	if err := config.In("Run", c.Run.Validate()); err != nil {
		return err
	}
	if c.Precision != "" {
		if err := kernels.CheckPrecision(c.Precision); err != nil {
			return config.Errorf("{Precision} %v", err)
		}
	}
	switch {
	case c.Resume && c.Run.CheckpointDir == "":
		return config.Errorf("{Resume} needs a checkpoint directory ({Run.CheckpointDir})")
	case c.OverwriteCheckpoint && c.Run.CheckpointDir == "":
		return config.Errorf("{OverwriteCheckpoint} needs a checkpoint directory ({Run.CheckpointDir})")
	case (c.Resume || c.ResumeAuto) && c.OverwriteCheckpoint:
		return config.Errorf("{Resume} and {OverwriteCheckpoint} exclude each other: continue the checkpoint or start over")
	case (c.Resume || c.ResumeAuto) && c.InitFrom != "":
		return config.Errorf("{Resume} and {InitFrom} exclude each other: a resumed run continues the checkpoint's weights")
	case c.ResumeAuto && c.Run.CheckpointDir == "":
		return config.Errorf("{ResumeAuto} needs a checkpoint directory ({Run.CheckpointDir})")
	// The derived fields are refused rather than overwritten, so that a
	// caller who sets one learns that it has no effect.
	case lo.Seed != 0:
		return config.Errorf("{Loader.Seed} is {Trainer.Seed}: leave it zero")
	case m.InDim != 0 || m.Classes != 0 || m.Layers != 0:
		return config.Errorf("{Model.InDim}, Classes and Layers come from the partition and the fanouts: leave them zero")
	case m.EdgeDim != 0:
		return config.Errorf("{Model.EdgeDim} comes from the partition with {UseEdgeFeat}: leave it zero")
	case c.Store.NoEdgeFeat:
		return config.Errorf("{Store.NoEdgeFeat} is set by Train (from {UseEdgeFeat}): leave it false")
	case c.Run.Metrics != nil || c.Run.RunInfo != nil:
		return config.Errorf("{Run.Metrics} and {Run.RunInfo} are set by Train: leave them nil")
	}
	t, err := taskNamed(c.Task)
	if err != nil {
		return err
	}
	if err := t.validate(c); err != nil {
		return err
	}
	if err := config.In("Loader", lo.Validate()); err != nil {
		return err
	}
	if err := config.In("Trainer", c.Trainer.Validate()); err != nil {
		return err
	}
	if m := c.Trainer.Metric; m != "" && !slices.Contains(t.metrics(), m) {
		return config.Errorf("{Trainer.Metric} %s does not apply to {Task} %s, which selects on %s", m, t.name(), strings.Join(t.metrics(), ", "))
	}
	if err := config.In("Store", c.Store.Validate()); err != nil {
		return err
	}
	settings := *m
	settings.Layers = len(lo.Fanouts)
	if (c.Resume || c.ResumeAuto) && settings.Arch == "" {
		// The checkpoint names the model (the run takes it before it
		// starts); its own parameters are checked against it then.
		settings.Opts = ""
	}
	if err := config.In("Model", settings.ValidateSettings()); err != nil {
		return err
	}
	if err := validateEdgeFeat(c, t); err != nil {
		return err
	}
	if !c.Hetero.isZero() {
		if err := c.Hetero.Validate(); err != nil {
			return err
		}
		if err := c.Hetero.validateWith(m.Hidden, lo); err != nil {
			return err
		}
	}
	if _, err := resolveEval(c.Eval, c.EvalFull, lo.Temporal.On()); err != nil {
		return err
	}
	if c.LinkSplit != "" {
		link := partition.LinkOptions{Split: c.LinkSplit, Relation: c.LinkRelation}
		if err := link.Validate(); err != nil {
			return config.Renamed(err, map[string]string{"Split": "LinkSplit", "Relation": "LinkRelation"})
		}
	}
	return nil
}

// openPart loads this rank's partition: its part, or with fewer parts than
// ranks its share of the part its node's ranks hold in one copy (see
// dsample.OpenPart, which makes c shared then). It is collective.
func openPart(c *collectives.Comm, dir string) (*partition.Part, error) {
	return dsample.OpenPart(c, dir)
}

// openLoader opens the feature store and the loader over part. It is
// collective. The caller closes the store. The store copies the partition's
// edges and features into its MPI windows and takes them out of part
// (ReleasePart), so the copies are not held twice for the whole run.
func openLoader(c *collectives.Comm, part *partition.Part, so dsample.StoreOptions, lo dsample.LoaderOptions) (*dsample.Store, *dsample.Loader, error) {
	so.ReleasePart = true
	st, err := dsample.OpenStore(c, part, so)
	if err != nil {
		return nil, nil, fmt.Errorf("open feature store: %w", err)
	}
	l, err := dsample.NewLoader(st, lo)
	if err = collectives.Agree(c, config.In("Loader", err)); err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("loader: %w", err)
	}
	return st, l, nil
}

// transportLine is the line rank 0 prints about the resolved transport.
func transportLine(requested collectives.Transport, st *dsample.Store) string {
	got := st.Transport()
	switch {
	case got == collectives.TransportRMA:
		return "transport: rma"
	case requested != collectives.TransportAuto:
		return fmt.Sprintf("transport: %v (requested)", got)
	case st.TransportReason() != "":
		return fmt.Sprintf("transport: %v (%s)", got, st.TransportReason())
	}
	return fmt.Sprintf("transport: %v (auto)", got)
}

// Train runs the whole training job on every rank: load the partition, open
// the store and loader, build (or resume) the trainer, run the epochs with
// metrics and checkpoints on rank 0, and print the kernels, transport and
// layout lines (and on the way out the memory line) on rank 0. The final
// line is the caller's to print, from the Result (Result.WriteFinal). It is
// collective.
func Train(c *collectives.Comm, cfg TrainConfig) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	t, err := taskNamed(cfg.Task)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	out := cfg.Out
	if out == nil || c.Rank() != 0 {
		out = io.Discard
	}
	// Whatever this run created is removed again on the way out if
	// nothing was written to it.
	var made createdOutputs
	defer made.removeEmpty()
	if err := prepareOutputs(c, &cfg, &made, out); err != nil {
		return nil, err
	}
	bf16, err := openBF16(c, cfg)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if bf16 != nil {
		defer bf16.Close()
	}
	j, err := openJob(c, cfg, t, out, bf16)
	if err != nil {
		return nil, err
	}
	defer j.close()
	tr, info, err := j.newTrainer()
	if err != nil {
		return nil, err
	}
	return j.run(tr, info, &made)
}

// prepareOutputs resolves ResumeAuto into cfg.Resume and prepares the
// checkpoint directory. Outputs come first: a bad checkpoint directory is
// refused before the partition is loaded. It is collective.
func prepareOutputs(c *collectives.Comm, cfg *TrainConfig, made *createdOutputs, out io.Writer) error {
	if cfg.ResumeAuto {
		found, err := hasCheckpoint(c, cfg.Run.CheckpointDir)
		if err != nil {
			return err
		}
		cfg.Resume = found
		if !found {
			config.Fprintf(out, "no checkpoint in %s: starting a fresh run ({ResumeAuto})\n", cfg.Run.CheckpointDir)
		}
	}
	return made.prepareCheckpointDir(c, *cfg)
}

// job is one Train call between its stages: the configuration as the run
// resolved it and what it opened over the partition.
type job struct {
	c    *collectives.Comm
	cfg  TrainConfig // Resume resolved (prepareOutputs)
	task task
	out  io.Writer // rank 0's result lines; io.Discard elsewhere
	meta *partition.Meta
	// lo is the loader's options as this run resolves them: what the
	// loader samples and what the checkpoint records are the same values.
	lo       dsample.LoaderOptions
	evalMode string       // EvalLayerwise or EvalSampled
	model    train.Config // the model's config with the partition's sizes
	het      *heteroSetup // nil for a homogeneous partition
	data     *taskData
	sparse   *sparseInputs       // learnable input embeddings (nil without)
	typed    dsample.TypedInputs // heterogeneous inputs, nil otherwise
	kern     string              // the numeric path (jobKernels)
	bf16     *kernels.BF16       // the layers' bf16 products; nil at fp32
}

// openJob loads the partition, resolves the run's options and model for
// the task, checks that the run can be trained, opens the task's store,
// batch source and evaluator (and the learnable embeddings), and prints
// the kernels, transport and layout lines. It is collective; the caller
// closes the job.
func openJob(c *collectives.Comm, cfg TrainConfig, t task, out io.Writer, bf16 *kernels.BF16) (*job, error) {
	part, err := openPart(c, cfg.PartDir)
	if err != nil {
		return nil, err
	}
	j := &job{c: c, cfg: cfg, task: t, out: out, meta: part.Meta, bf16: bf16}
	if err := j.resolve(); err != nil {
		return nil, err
	}
	if cfg.RowNorm {
		rowNormalizePart(part)
		rowNormalizeTyped(part)
	}
	if j.data, err = t.open(c, part, &j.cfg, j.lo, j.model); err != nil {
		return nil, err
	}
	if j.het != nil {
		if j.sparse, err = j.het.openEmbeddings(c, j.data.store, cfg.Trainer.Seed); err != nil {
			j.data.store.Close()
			if j.data.close != nil {
				j.data.close()
			}
			return nil, err
		}
		j.typed = j.het.typedInputs(j.data.store, j.sparse.embOf())
		j.data.src.SetTypedInputs(j.typed)
	}
	kern, uniform, err := jobKernels(c, rankPath(bf16))
	if err != nil {
		j.close()
		return nil, err
	}
	j.kern = kern
	fmt.Fprintln(out, kernelsLine(kern, uniform))
	fmt.Fprintln(out, transportLine(cfg.Store.Transport, j.data.store))
	if line := layoutLine(j.meta, c); line != "" {
		fmt.Fprintln(out, line)
	}
	return j, nil
}

// resolve fills in the loader's options, the evaluation mode and the
// model's config from the partition's META, the heterogeneous setup and
// the task, and checks that the run can be trained. It is collective.
func (j *job) resolve() error {
	cfg, meta := &j.cfg, j.meta
	lo := cfg.Loader
	lo.Seed = cfg.Trainer.Seed
	if lo.Split == "" {
		lo.Split = meta.Split
	}
	if cfg.EvalFull {
		lo.EvalFanouts = slices.Repeat([]int{-1}, len(lo.Fanouts))
	}
	if lo.EvalFanouts == nil {
		lo.EvalFanouts = lo.Fanouts
	}
	evalMode, err := resolveEval(cfg.Eval, cfg.EvalFull, lo.Temporal.On())
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	mcfg := cfg.Model
	mcfg.InDim, mcfg.Classes, mcfg.Layers = meta.FeatDim, meta.NumClasses, len(lo.Fanouts)
	// A heterogeneous partition types the model, its inputs and the
	// fanouts; the outcome depends only on META and the (agreed) flags, so
	// every rank decides the same.
	het, err := setupHetero(meta, cfg.Hetero, &mcfg, &lo, j.task.labelled())
	switch {
	case err != nil:
		return fmt.Errorf("train: %w", err)
	case het != nil && cfg.EvalFull:
		lo.EvalRelFanouts = nil // every relation takes all neighbours
	}
	j.task.resolveModel(&mcfg, meta)
	if err := resolveEdgeFeat(cfg, meta, &mcfg); err != nil {
		return err
	}
	if err := j.task.checkTrainable(j.c, cfg, meta, lo, mcfg); err != nil {
		return err
	}
	j.lo, j.evalMode, j.model, j.het = lo, evalMode, mcfg, het
	return nil
}

// close frees what openJob opened, in the order Train always has: the
// embeddings, the store, then the rest of the task's data. It is
// collective.
func (j *job) close() {
	j.sparse.close()
	j.data.store.Close()
	if j.data.close != nil {
		j.data.close()
	}
}

// newTrainer builds the model (with imported weights for InitFrom), the
// run info and the trainer with the task's evaluator, and restores the
// checkpoint of a resumed run, printing the resume lines. It returns the
// trainer and the run info's JSON. It is collective.
func (j *job) newTrainer() (*train.Trainer, []byte, error) {
	c, cfg := j.c, &j.cfg
	model, err := train.NewModel(j.model, cfg.Trainer.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("train: %w", err)
	}
	if j.bf16 != nil {
		model.UseBF16(j.bf16)
	}
	if cfg.InitFrom != "" {
		if err := initFrom(c, cfg.InitFrom, model, j.sparse); err != nil {
			return nil, nil, err
		}
	}
	ri := newRunInfo(j.meta.Dataset, c.Size(), j.lo, cfg.RowNorm)
	ri.MaxSteps = cfg.Trainer.MaxSteps
	ri.Metric = cfg.Trainer.Metric
	if r := cfg.Trainer.Recipe.Normalized(); !r.IsZero() {
		ri.Recipe = &r
	}
	ri.Settings = cfg.Settings
	ri.Kernels = j.kern
	if j.bf16 != nil {
		ri.Precision = kernels.PrecisionBF16
	}
	if j.evalMode == EvalLayerwise {
		ri.Eval = EvalLayerwise
	}
	if j.het != nil {
		ri.Hetero = j.het.runInfo(j.lo)
	}
	j.task.runInfo(&ri, cfg, j.meta)
	info, err := json.Marshal(ri)
	if err != nil {
		return nil, nil, err
	}
	tr, err := train.NewTrainer(cfg.Trainer, model, Reducer{C: c}, j.data.src)
	if err != nil {
		return nil, nil, fmt.Errorf("train: %w", err)
	}
	if ev := j.data.evaluator(j.evalMode, j.typed); ev != nil {
		tr.Evaluator = ev
	}
	if j.sparse != nil {
		tr.Sparse = j.sparse
	}
	if cfg.Resume {
		if err := j.restore(tr, info); err != nil {
			return nil, nil, err
		}
	}
	return tr, info, nil
}

// restore loads the checkpoint of a resumed run into tr after checking its
// settings against this run's (info), and prints where the run resumes. It
// is collective.
func (j *job) restore(tr *train.Trainer, info []byte) error {
	cfg, out := &j.cfg, j.out
	ck, err := LoadCheckpoint(j.c, cfg.Run.CheckpointDir)
	if err == nil {
		err = checkResume(ck, tr.Model().Config(), cfg.Trainer.Adam, cfg.Trainer.Seed, info)
	}
	if err == nil {
		err = tr.Restore(ck)
	}
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if line := resumeKernelsLine(checkpointKernels(ck), j.kern); line != "" {
		fmt.Fprintln(out, line)
	}
	if ck.EpochStep > 0 {
		fmt.Fprintf(out, "resumed from %s in epoch %d after its step %d (step %d)\n", cfg.Run.CheckpointDir, tr.Epoch()+1, ck.EpochStep, tr.Step())
	} else {
		fmt.Fprintf(out, "resumed from %s at epoch %d (step %d)\n", cfg.Run.CheckpointDir, tr.Epoch(), tr.Step())
	}
	return nil
}

// run runs the epochs with the metrics file and progress on rank 0 and
// returns the Result: stopped on request, or summarized. It is collective.
func (j *job) run(tr *train.Trainer, info []byte, made *createdOutputs) (*Result, error) {
	c, cfg, out := j.c, &j.cfg, j.out
	var mw *metrics.Writer
	var localErr error
	if c.Rank() == 0 && cfg.Metrics != "" {
		made.noteMetrics(cfg.Metrics)
		mw, localErr = metrics.Create(cfg.Metrics, tr.Epoch())
	}
	if err := collectives.Agree(c, localErr); err != nil {
		return nil, err
	}
	if mw != nil {
		defer mw.Close()
		for _, w := range mw.Warnings {
			fmt.Fprintf(out, "warning: %s\n", w)
		}
	}
	rec := &recorder{next: cfg.Reporter}
	if c.Rank() == 0 && cfg.Progress != nil {
		rec.progress = train.NewProgress(cfg.Progress, cfg.Run.Epochs, cfg.Quiet)
	}
	tr.Reporter = &phaseReporter{c: c, next: rec}
	tr.Stop = cfg.Stop
	ro := cfg.Run
	ro.Metrics, ro.RunInfo, ro.Kernels = mw, info, j.kern
	ro.Checkpointing = ro.CheckpointDir != ""
	if c.Rank() != 0 {
		ro.CheckpointDir = "" // rank 0 writes the checkpoints
	}
	if ro.Epochs == 0 {
		if err := saveUntrained(c, tr, ro, cfg.InitFrom != ""); err != nil {
			return nil, err
		}
	}
	res := &Result{Transport: j.data.store.Transport(), task: j.task, initFrom: cfg.InitFrom, checkpointDir: cfg.Run.CheckpointDir}
	sum, err := tr.Run(ro)
	if errors.Is(err, train.ErrStopped) {
		res.Stopped = true
		if ro.Checkpointing {
			config.Fprintf(out, "stopped on request after step %d (%d epochs complete): checkpoint written to %s; continue with {Resume} (or {ResumeAuto})\n",
				tr.Step(), tr.Epoch(), cfg.Run.CheckpointDir)
		} else {
			config.Fprintf(out, "stopped on request after step %d (%d epochs complete), without a checkpoint (no {Run.CheckpointDir})\n", tr.Step(), tr.Epoch())
		}
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	res.Summary = sum
	res.Epochs = rec.epochs
	if err := j.summarize(tr, res); err != nil {
		return nil, err
	}
	return res, nil
}

// summarize prints the memory line (measured while the stores and the
// model are still held: what the job needs, per rank) and fills in res's
// weights and their digests, printing the embedding push time. It is
// collective.
func (j *job) summarize(tr *train.Trainer, res *Result) error {
	mem, err := memoryLine(j.c)
	if err != nil {
		return err
	}
	if mem != "" {
		fmt.Fprintln(j.out, mem)
	}
	res.Params = slices.Clone(tr.Model().Params())
	res.Weights = WeightsHash(res.Params)
	if j.sparse != nil {
		// The digest covers the tables and their optimizer state, in
		// original-id order, so it compares runs of any rank count.
		blob, err := j.sparse.Export()
		if err != nil {
			return fmt.Errorf("train: embeddings digest: %w", err)
		}
		digest := sha256.Sum256(blob)
		res.Embeddings = hex.EncodeToString(digest[:8])
		fmt.Fprintf(j.out, "embedding push: %.3fs in total (%s)\n", j.sparse.pushTime.Seconds(), j.het.opts.Push)
	}
	return nil
}

// WriteFinal writes the run's final line (`final: ...`, what `train`
// prints last) to w, with the task's figures; a stopped run has none and
// writes nothing. Fields named in it are spelled as w spells them
// (config.Fprintf).
func (r *Result) WriteFinal(w io.Writer) error {
	if r.Stopped || r.task == nil {
		return nil
	}
	emb := ""
	if r.Embeddings != "" {
		emb = " embeddings=" + r.Embeddings
	}
	if r.Summary.Epochs == 0 {
		// --epochs 0: nothing was trained or evaluated, so there are no
		// accuracies to print (they would read 0.0000); say what the run
		// did instead.
		what := "the initial weights"
		if r.initFrom != "" {
			what = "imported " + r.initFrom
		}
		if r.checkpointDir != "" {
			_, err := fmt.Fprintf(w, "final: epochs=0 weights=%s%s: %s, not trained or evaluated; predict and embed --checkpoint %s evaluate it\n", r.Weights, emb, what, r.checkpointDir)
			return err
		}
		// The field is in the format, not an argument, so that the
		// writer spells it (--checkpoint on the command line).
		_, err := config.Fprintf(w, "final: epochs=0 weights=%s%s: %s, not trained or evaluated; no checkpoint written (no {Run.CheckpointDir})\n", r.Weights, emb, what)
		return err
	}
	early := ""
	if e := r.Summary.StoppedEarly; e > 0 {
		early = fmt.Sprintf(" stopped_early=%d", e)
	}
	_, err := fmt.Fprintf(w, "final: %s%s\n", r.task.final(r.Summary, r.Weights, emb), early)
	return err
}

// createdOutputs records the outputs this run created on rank 0 (the
// checkpoint directory with its missing parents, the metrics file), so that
// a run that ends before writing to them does not leave an empty directory
// or file behind. What existed before the run is never removed.
type createdOutputs struct {
	dirs    []string // deepest first
	metrics string
}

// prepareCheckpointDir runs train.PrepareCheckpointDir on rank 0 (the rank
// that writes checkpoints) and agrees on the outcome. It is collective.
func (o *createdOutputs) prepareCheckpointDir(c *collectives.Comm, cfg TrainConfig) error {
	var err error
	if c.Rank() == 0 && cfg.Run.CheckpointDir != "" {
		o.dirs, err = train.PrepareCheckpointDir(cfg.Run.CheckpointDir, cfg.Resume, cfg.OverwriteCheckpoint)
	}
	return collectives.Agree(c, err)
}

// hasCheckpoint reports on every rank whether dir holds a checkpoint file,
// as rank 0 (the rank that writes them) sees it. It is collective.
func hasCheckpoint(c *collectives.Comm, dir string) (bool, error) {
	var found []byte
	var err error
	if c.Rank() == 0 {
		_, serr := os.Stat(filepath.Join(dir, train.CheckpointFile))
		switch {
		case serr == nil:
			found = []byte{1}
		case errors.Is(serr, fs.ErrNotExist):
			found = []byte{0}
		default:
			err = fmt.Errorf("checkpoint directory %s: %w", dir, serr)
		}
	}
	found, err = collectives.BcastBytes(c, 0, found, err)
	if err != nil {
		return false, err
	}
	return len(found) == 1 && found[0] == 1, nil
}

// noteMetrics records path as created by this run if it does not exist yet.
func (o *createdOutputs) noteMetrics(path string) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		o.metrics = path
	}
}

// removeEmpty removes the created metrics file if it is still empty, then
// the created directories that are still empty.
func (o *createdOutputs) removeEmpty() {
	if o.metrics != "" {
		if st, err := os.Stat(o.metrics); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
			os.Remove(o.metrics)
		}
	}
	train.RemoveEmptyDirs(o.dirs)
}

// recorder forwards progress to the console (rank 0) and an optional extra
// reporter, and keeps the epoch metrics for the Result.
type recorder struct {
	progress *train.Progress
	next     train.Reporter
	epochs   []metrics.Epoch
}

func (r *recorder) BeginEpoch(epoch, steps int) {
	if r.progress != nil {
		r.progress.BeginEpoch(epoch, steps)
	}
	if r.next != nil {
		r.next.BeginEpoch(epoch, steps)
	}
}

func (r *recorder) StepDone(step int, loss float64) {
	if r.progress != nil {
		r.progress.StepDone(step, loss)
	}
	if r.next != nil {
		r.next.StepDone(step, loss)
	}
}

func (r *recorder) EndEpoch(m *metrics.Epoch) {
	r.epochs = append(r.epochs, *m)
	if r.progress != nil {
		r.progress.EndEpoch(m)
	}
	if r.next != nil {
		r.next.EndEpoch(m)
	}
}
