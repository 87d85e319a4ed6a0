package train

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"mpignn/config"
	"mpignn/internal/testhold"
	"mpignn/sample"
	"mpignn/train/metrics"
	"mpignn/train/optim"
)

// Options configures a Trainer. Every rank must pass the same values (and
// an identically built model).
type Options struct {
	Adam optim.AdamConfig
	// Seed drives everything random: initial weights, dropout masks and (in
	// the batch source) batch order and sampling.
	Seed uint64
	// MaxSteps, if positive, ends every training epoch after that many
	// steps (the rest of the epoch's batches are skipped). It exists to
	// time a few steps of a long epoch; results then differ from full
	// epochs.
	MaxSteps int
	// Metric is the validation figure that selects the best epoch
	// (selection.go's Metric names; "" is the task's default: accuracy,
	// MRR, ROC-AUC or RMSE).
	Metric string
	// Prefetch is how many training batches are fetched ahead of the step
	// that computes (0 = none): while one step's forward and backward run
	// on another goroutine, the calling goroutine (the one that owns MPI)
	// fetches the following batches. It does not change any result, and
	// it is ignored (no prefetch) when the Trainer has Sparse inputs,
	// whose next batch reads rows the current step updates.
	Prefetch int
	// Recipe chooses the optimizer, the learning-rate schedule, gradient
	// clipping and early stopping (zero: Adam at a constant rate).
	Recipe Recipe
}

// Validate reports an option a Trainer cannot run with, naming its field.
func (o Options) Validate() error {
	if o.Prefetch < 0 {
		return config.Errorf("{Prefetch} %d must be 0 (off) or more batches ahead", o.Prefetch)
	}
	if err := o.Recipe.Validate(); err != nil {
		return err
	}
	return checkMetric(o.Metric)
}

// Best is the best-validation state seen so far. Node classification
// selects on validation accuracy; link prediction (an Evaluator returning
// link figures) on validation MRR.
type Best struct {
	Epoch   int     // 1-based epoch of the best validation score; 0 = none yet
	ValAcc  float64 // its validation accuracy (link: pair accuracy, as the evaluator reports it)
	TestAcc float64 // the test accuracy of the same epoch
	// ValLink and TestLink are the link figures of the best epoch (nil for
	// node classification); ValLink.MRR is the selection score.
	ValLink, TestLink *metrics.LinkFigures
	// ValTargets and TestTargets are a real-target task's figures of the
	// best epoch (nil otherwise): validation ROC-AUC (multilabel) or RMSE
	// (regression) selects it.
	ValTargets, TestTargets *metrics.TargetFigures
	Params                  []float32
}

// Evaluator replaces the Trainer's own evaluation of valid and test (one
// batch-source pass scoring node labels) when set: link prediction ranks
// every evaluation edge against fixed negatives, which needs embeddings of
// all nodes and a gather of scores that live outside this package.
//
// Evaluate is collective: every rank calls it with the same arguments, in
// the same order, and it must return the same result on every rank (as
// Trainer.Evaluate does through the Reducer); a rank-local failure must be
// agreed so that all ranks fail together. epoch is the number of completed
// epochs (the numbering Trainer.Evaluate passes the batch source). m is the
// live model: Evaluate must not change its parameters. The result's Link
// figures, if set, select the best model by validation MRR; Loss and Acc,
// if the evaluator computes them (binary cross-entropy and sign accuracy
// over its pairs), are reported as val_loss/val_acc.
type Evaluator interface {
	Evaluate(split string, epoch int, m *Model) (EvalResult, error)
}

// SparseInputs are learnable input rows outside the flat parameter buffer:
// sharded node embeddings of a heterogeneous graph's featureless types,
// which the batch source reads like features. They are too many to reduce
// densely, so each step sends only the touched rows' gradients to their
// owners, which apply a sparse optimizer.
//
// All methods are collective: every rank calls them in the same order (the
// Trainer guarantees it), and a rank-local failure must be agreed inside so
// that all ranks fail together.
type SparseInputs interface {
	// Update applies the step's gradients: b is this rank's batch of the
	// step just taken and m the model after its dense update, whose
	// InputGrad holds the gradients of b's learnable input rows.
	Update(m *Model, b *sample.Batch) error
	// Export returns the state for a checkpoint (significant on rank 0).
	Export() ([]byte, error)
	// Import restores a state that Export returned (the same bytes on
	// every rank).
	Import(state []byte) error
}

// Trainer runs data-parallel training of a Model as a pure SPMD core: every
// rank builds one with the same Options and calls the same methods in the
// same order; all communication goes through the Reducer, and all input
// through the BatchSource.
//
// One training step on every rank: fetch the batch, forward, backward with
// the loss scaled by 1/G (G = seeds of the step over all ranks), ONE
// AllreduceSum32 over [gradients | loss sum, correct, seeds, error flag],
// then an identical optimizer step everywhere (Options.Recipe: Adam by
// default, AdamW or SGD, at the scheduled rate, after any clipping of the
// reduced gradient). The parameters stay bit-identical
// across ranks because they start equal (InitParams is a pure function of
// the seed) and every rank applies the same update to the same reduced
// gradient.
type Trainer struct {
	opts  Options
	model *Model
	// opt is Adam or AdamW; sgd replaces it for Recipe.Optimizer sgd.
	opt   *optim.Adam
	sgd   *optim.SGD
	sched optim.Schedule
	// totalEpochs is the Run's Epochs (cosine's length); 0 outside Run.
	totalEpochs int
	// sinceBest counts the evaluations since the best one (early stop).
	sinceBest int
	red       Reducer
	src       BatchSource

	// Reporter, if set, receives progress (normally only on rank 0).
	Reporter Reporter
	// Evaluator, if set (on every rank), evaluates valid and test after
	// each evaluated epoch instead of Trainer.Evaluate; link prediction
	// sets it.
	Evaluator Evaluator
	// Sparse, if set (on every rank), holds learnable input rows (node
	// embeddings of featureless types) that are updated after every
	// optimizer step and saved in checkpoints.
	Sparse SparseInputs
	// Stop, if set, reports whether this rank was asked to stop (a
	// SIGUSR1 or SIGTERM the CLI caught). It is read once per step, before
	// the step's Allreduce, and its answer travels in that Allreduce, so
	// every rank stops after the same step: Run then writes a checkpoint
	// and returns ErrStopped. A rank that answers true must keep doing so.
	Stop func() bool

	buf   []float32 // gradients followed by the per-step statistics
	batch sample.Batch
	// scores collects a real-target evaluation's rows (Evaluate).
	scores TargetScores
	// ahead are the extra batch buffers of prefetching (Options.Prefetch
	// of them): batch s lives in slot s mod (Prefetch+1), slot 0 being
	// batch, so a fetch never overwrites the batch being computed.
	ahead []sample.Batch
	epoch int   // completed epochs
	step  int64 // optimizer steps taken, across epochs
	best  Best
	// resume is the progress of an epoch interrupted by a mid-epoch
	// checkpoint (Restore): the next TrainEpoch continues at its step.
	resume *epochProgress
	// run is the state of the Run in progress (nil outside Run): what a
	// step needs to decide on mid-epoch checkpoints and stops.
	run *runState
}

// epochProgress is where an epoch stands after some of its steps: the
// steps done and this rank's metric sums so far (see TrainEpoch).
type epochProgress struct {
	steps int
	sums  [epochSums]float64
}

// runState is what Run shares with the steps of its epochs.
type runState struct {
	o      *RunOptions
	lastCk time.Time // when the last checkpoint was written (or Run began)
	// due and stop are the flags the last step's Allreduce agreed on.
	due, stop bool
	// pending is a checkpoint that came due at an epoch's last step; the
	// end of the epoch writes it.
	pending bool
}

// Per-step statistics appended to the gradient buffer, so that one
// Allreduce per step carries everything.
const (
	tailLoss = iota
	tailFailed
	tailSeeds
	tailStops
	tailLen
)

// The step's flags ride in two elements of the buffer whose length never
// changes: a longer buffer moves the block boundaries of MPI's ring
// reduction, and so the bits of the gradients (measured: one element more
// changed the 3-rank HeteroSAGE golden row). tailFailed counts the ranks
// whose step failed; it holds the slot of the step's correct count, which
// nothing read after the Allreduce (accuracy is summed per epoch).
// tailStops counts the ranks asked to stop, plus one half when the
// checkpoint rank's timed checkpoint is due (only that rank says so). Both
// are exact float32 sums for any job below 2^23 = 8.4 M ranks. (The three
// once shared one element, weighted 1, 2^10 and 2^20: 1024 stopping ranks
// then read as "a checkpoint is due".)

// stepFlags are the flags of a step's Allreduce: this rank's contribution
// before it, the job's counts after.
type stepFlags struct{ failed, stops, due int }

// put writes f into the tail of a reduction buffer. due is 0 or 1.
func (f stepFlags) put(tail []float32) {
	tail[tailFailed] = float32(f.failed)
	tail[tailStops] = float32(f.stops) + float32(f.due)/2
}

// readFlags reads the summed flags from the tail of a reduction buffer.
func readFlags(tail []float32) stepFlags {
	stops := math.Floor(float64(tail[tailStops]))
	return stepFlags{failed: int(tail[tailFailed]), stops: int(stops), due: int(2 * (float64(tail[tailStops]) - stops))}
}

// epochSums is the number of per-rank metric sums of an epoch: loss,
// correct, seeds, remote rows, cache hits, cache lookups.
const epochSums = 6

// ErrStopped is returned by Run when the ranks stopped early on request
// (Trainer.Stop) after writing a checkpoint.
var ErrStopped = errors.New("stopped on request")

// NewTrainer builds a trainer around model (normally NewModel(cfg,
// o.Seed): its current weights are the starting point). The trainer takes
// the model over: it moves the gradient buffer into its reduction buffer,
// so that gradients and step statistics go out in one Allreduce.
func NewTrainer(o Options, model *Model, red Reducer, src BatchSource) (*Trainer, error) {
	if model == nil || red == nil || src == nil {
		return nil, errors.New("trainer: model, reducer and batch source are required")
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	n := len(model.Params())
	o.Recipe = o.Recipe.Normalized()
	opt, err := optim.NewAdam(n, o.Adam)
	if err != nil {
		return nil, err
	}
	t := &Trainer{opts: o, opt: opt, red: red, src: src, buf: make([]float32, n+tailLen), model: model, sched: o.Recipe.schedule()}
	switch o.Recipe.Optimizer {
	case OptAdamW:
		opt.Decoupled = true
	case OptSGD:
		// SGD keeps its momentum buffer in Adam's first moment, so that
		// checkpoints hold it in the same arrays (V stays zero).
		t.sgd, err = optim.NewSGD(0, optim.SGDConfig{Momentum: o.Recipe.Momentum, Nesterov: o.Recipe.Nesterov, WeightDecay: o.Adam.WeightDecay})
		if err != nil {
			return nil, err
		}
		if o.Recipe.Momentum != 0 {
			t.sgd.Buf = opt.M
		}
	}
	copy(t.buf, model.Grads())
	model.n.bindGrads(t.buf[:n:n])
	return t, nil
}

// Model returns the model (its parameters are the live training weights).
func (t *Trainer) Model() *Model { return t.model }

// Optimizer returns the Adam state (with SGD, M holds the momentum buffer
// and T the steps).
func (t *Trainer) Optimizer() *optim.Adam { return t.opt }

// Epoch returns the number of completed epochs.
func (t *Trainer) Epoch() int { return t.epoch }

// Step returns the number of optimizer steps taken so far.
func (t *Trainer) Step() int64 { return t.step }

// Best returns the best-validation state (Params is nil before the first
// evaluated epoch). The slice aliases the trainer.
func (t *Trainer) Best() Best { return t.best }

// TrainResult summarises one training epoch over all ranks.
type TrainResult struct {
	Epoch int // 1-based
	Steps int
	Loss  float64 // mean cross-entropy over the epoch's seeds (link: pairs) (all ranks)
	Acc   float64 // fraction of the epoch's seeds (link: pairs) predicted correctly (all ranks)
	Seeds int64   // seeds (link: scored pairs) trained on, all ranks
	// Wall is this rank's wall time for the epoch's steps; Times splits it
	// by phase (this rank).
	Wall  time.Duration
	Times PhaseTimes
	// Feature traffic summed over ranks.
	RemoteRows   int64
	CacheHits    int64
	CacheLookups int64
}

// TrainEpoch runs the next epoch's training steps. With Options.Prefetch
// > 0 (and no learnable sparse inputs) the batches of the following steps
// are fetched while the current step computes (see prefetch.go); the
// results are the same either way.
func (t *Trainer) TrainEpoch() (TrainResult, error) {
	epoch := t.epoch
	res := TrainResult{Epoch: epoch + 1}
	steps, err := t.src.Steps(SplitTrain, epoch)
	if err != nil {
		return res, fmt.Errorf("epoch %d: training steps: %w", epoch+1, err)
	}
	if steps < 0 {
		return res, fmt.Errorf("epoch %d: batch source reports %d training steps", epoch+1, steps)
	}
	if t.opts.MaxSteps > 0 {
		steps = min(steps, t.opts.MaxSteps)
	}
	if t.sched.Kind == optim.ScheduleCosine && t.totalEpochs == 0 {
		return res, fmt.Errorf("epoch %d: the cosine schedule needs the run's length: train with Run", epoch+1)
	}
	res.Steps = steps
	// Local sums in float64, reduced once at the end of the epoch: loss,
	// correct, seeds, remote rows, cache hits, cache lookups. A resumed
	// epoch starts from the sums of its first steps, so that the epoch's
	// figures are the same bits as without the interruption.
	var sums [epochSums]float64
	first := 0
	if r := t.resume; r != nil {
		t.resume = nil
		if r.steps > steps {
			return res, fmt.Errorf("epoch %d: the checkpoint was written after step %d but the epoch has %d steps", epoch+1, r.steps, steps)
		}
		first, sums = r.steps, r.sums
	}
	if t.Reporter != nil {
		t.Reporter.BeginEpoch(epoch+1, steps)
	}
	start := time.Now()
	p := t.newPipeline(epoch, steps, &res.Times)
	p.next = first
	for s := first; s < steps; s++ {
		loss, err := p.step(s, sums[:])
		if err != nil {
			return res, err
		}
		if t.Reporter != nil {
			t.Reporter.StepDone(s+1, loss)
		}
		// Tests stop a rank here, after the optimizer update of the
		// (1-based, counted across epochs) step N, to signal or stall it
		// at a known step.
		testhold.At("train-step:" + strconv.FormatInt(t.step, 10))
		if err := t.afterStep(epoch, s, steps, &sums); err != nil {
			return res, err
		}
	}
	res.Wall = time.Since(start)
	if err := t.red.AllreduceSum64(sums[:]); err != nil {
		return res, fmt.Errorf("epoch %d: reduce training metrics: %w", epoch+1, err)
	}
	res.Seeds = int64(sums[2])
	if res.Seeds > 0 {
		res.Loss = sums[0] / sums[2]
		res.Acc = sums[1] / sums[2]
	}
	res.RemoteRows, res.CacheHits, res.CacheLookups = int64(sums[3]), int64(sums[4]), int64(sums[5])
	t.epoch++
	return res, nil
}

// afterStep acts on what step s's Allreduce agreed (inside Run only): a
// checkpoint that is due after this step (every CheckpointSteps steps, or
// CheckpointInterval on the checkpoint rank's clock) or a stop request,
// which writes a checkpoint and ends the run with ErrStopped. Every rank
// takes the same branch, because the flags are the reduced ones.
func (t *Trainer) afterStep(epoch, s, steps int, sums *[epochSums]float64) error {
	r := t.run
	if r == nil {
		return nil
	}
	every := r.o.CheckpointSteps > 0 && t.step%r.o.CheckpointSteps == 0
	switch {
	case !(r.stop || r.due || every):
		return nil
	case !r.o.checkpointing():
		if r.stop {
			return fmt.Errorf("epoch %d step %d/%d: %w", epoch+1, s+1, steps, ErrStopped)
		}
		return nil
	case !r.stop && s+1 == steps:
		// The epoch's end is only its evaluation away: its checkpoint is
		// the ordinary end-of-epoch one. A stop does not wait for it.
		r.pending = true
		return nil
	}
	if err := t.saveCheckpoint(r, &epochProgress{steps: s + 1, sums: *sums}, true); err != nil {
		return fmt.Errorf("epoch %d step %d/%d: %w", epoch+1, s+1, steps, err)
	}
	if r.stop {
		return fmt.Errorf("epoch %d step %d/%d: %w", epoch+1, s+1, steps, ErrStopped)
	}
	return nil
}

// saveCheckpoint writes a checkpoint (if write) on the checkpoint rank
// (the one with CheckpointDir) and agrees on the outcome; it is collective
// (write must be the same on every rank that has Checkpointing). prog is
// the progress of the epoch in progress (nil at an epoch's end): the ranks'
// metric sums are then collected into the checkpoint, one row per rank.
func (t *Trainer) saveCheckpoint(r *runState, prog *epochProgress, write bool) error {
	o := r.o
	var localErr error
	if write {
		var sparse []byte
		var err error
		if t.Sparse != nil {
			if sparse, err = t.Sparse.Export(); err != nil {
				return fmt.Errorf("export sparse inputs: %w", err)
			}
		}
		var rows [][]float64
		if prog != nil {
			if rows, err = t.gatherSums(prog.sums); err != nil {
				return err
			}
		}
		if o.CheckpointDir != "" {
			ck := t.Checkpoint(o.RunInfo)
			ck.Sparse = sparse
			if prog != nil {
				ck.EpochStep, ck.EpochSums = prog.steps, rows
			}
			localErr = SaveCheckpoint(o.CheckpointDir, ck)
		}
	}
	if err := t.agree(localErr); err != nil {
		return err
	}
	if write {
		r.lastCk = time.Now()
	}
	return nil
}

// ownSums picks this rank's row of a mid-epoch checkpoint's epoch sums.
// Resumed on another rank count, rank 0 takes the sum of all rows and the
// other ranks none: the epoch's totals are then the same, but they may
// differ in the last bits from an uninterrupted run's (the summation order
// changes).
func (t *Trainer) ownSums(rows [][]float64) [epochSums]float64 {
	var out [epochSums]float64
	rank, size := 0, 1
	if rk, ok := t.red.(ranked); ok {
		rank, size = rk.Rank(), rk.Size()
	}
	switch {
	case len(rows) == size:
		copy(out[:], rows[rank])
	case rank == 0:
		for _, row := range rows {
			for i := range out {
				out[i] += row[i]
			}
		}
	}
	return out
}

// ranked is implemented by Reducers that know the rank and world size
// (the MPI one, the in-process test group).
type ranked interface {
	Rank() int
	Size() int
}

// gatherSums collects every rank's epoch sums, one row per rank in rank
// order, on every rank (an Allreduce of rows that are zero but one's: the
// sums of zeros are exact). A Reducer that does not know ranks is taken as
// one rank.
func (t *Trainer) gatherSums(sums [epochSums]float64) ([][]float64, error) {
	rank, size := 0, 1
	if rk, ok := t.red.(ranked); ok {
		rank, size = rk.Rank(), rk.Size()
	}
	buf := make([]float64, size*epochSums)
	copy(buf[rank*epochSums:], sums[:])
	if size > 1 {
		if err := t.red.AllreduceSum64(buf); err != nil {
			return nil, fmt.Errorf("collect epoch sums: %w", err)
		}
	}
	rows := make([][]float64, size)
	for i := range rows {
		rows[i] = buf[i*epochSums : (i+1)*epochSums : (i+1)*epochSums]
	}
	return rows, nil
}

// trainStep runs one step without prefetching (fetch, compute and finish
// on the calling goroutine) and returns the global mean loss of its batch.
func (t *Trainer) trainStep(epoch, s, steps int, times *PhaseTimes, sums []float64) (float64, error) {
	b := &t.batch
	fetchErr := t.fetch(epoch, s, b, times)
	c := t.compute(epoch, s, steps, b, fetchErr)
	return t.finish(epoch, s, steps, b, &c, times, sums)
}

// fetch fills b with training step s of epoch (the BatchSource call, which
// may run collectives and so stays on the MPI goroutine) and charges its
// time to the sample and gather phases.
func (t *Trainer) fetch(epoch, s int, b *sample.Batch, times *PhaseTimes) error {
	b.Reset()
	// The input dropout makes a copy of the input rows anyway, so the
	// source may leave them where they are (views) instead of gathering
	// them into X first.
	n := t.model.n
	b.ViewInputs = n.het == nil && n.cfg.InputDropout > 0
	start := time.Now()
	err := t.src.Batch(SplitTrain, epoch, s, b)
	// The source times its feature gathering; the rest of producing the
	// batch is sampling.
	elapsed := time.Since(start)
	gather := min(max(b.Stats.Gather, 0), elapsed)
	times[PhaseSample] += elapsed - gather
	times[PhaseGather] += gather
	return err
}

// computed is what the compute part of a step produced: the rank-local
// error (bad batch, failed forward) or the step's local loss sum, correct
// count and targets, and the time of forward and backward.
type computed struct {
	err               error
	loss              float64
	correct, seeds    int
	forward, backward time.Duration
}

// compute checks batch b of step s and runs forward and backward, leaving
// the gradients and the step statistics in t.buf. It makes no MPI call and
// touches only the model, t.buf and b, so it may run on another goroutine
// while the MPI goroutine fetches the next batches.
func (t *Trainer) compute(epoch, s, steps int, b *sample.Batch, fetchErr error) computed {
	where := func() string { return fmt.Sprintf("epoch %d step %d/%d", epoch+1, s+1, steps) }
	var c computed
	n := len(t.buf) - tailLen
	clearPar(t.buf)
	// A link batch scores pairs: its targets (and GlobalSeeds) count pairs.
	link := isLinkBatch(b)
	if fetchErr != nil {
		c.err = fmt.Errorf("%s: batch: %w", where(), fetchErr)
	} else if link && len(b.Labels) > 0 {
		c.err = fmt.Errorf("%s: batch has both %d node labels and %d pair labels", where(), len(b.Labels), len(b.PairLabels))
	} else if seeds := batchTargets(b, link); seeds > 0 {
		if b.GlobalSeeds < seeds {
			c.err = fmt.Errorf("%s: batch source reports %d global seeds but this rank alone has %d", where(), b.GlobalSeeds, seeds)
		} else {
			net := t.model.n
			key := MaskKey{Seed: t.opts.Seed, Step: t.step}
			scale := float32(1 / float64(b.GlobalSeeds))
			start := time.Now()
			loss, correct, err := net.lossOf(b, batchInputs(b), scale, true, key)
			mid := time.Now()
			c.forward = mid.Sub(start)
			if err != nil {
				c.err = fmt.Errorf("%s: %w", where(), err)
			} else {
				net.backward(b.Blocks, true)
				c.backward = time.Since(mid)
				t.buf[n+tailLoss] = float32(loss)
				t.buf[n+tailSeeds] = float32(seeds)
				c.loss, c.correct, c.seeds = loss, correct, seeds
			}
		}
	}
	return c
}

// finish ends step s on the MPI goroutine: it adds the step's local
// figures to sums, makes the step's one Allreduce and, if every rank
// succeeded, the optimizer step (and the sparse-input update). A
// rank-local failure (bad batch) is still followed by the step's
// Allreduce, with an error flag, so that every rank stops at the same step
// instead of the others blocking in the collective.
func (t *Trainer) finish(epoch, s, steps int, b *sample.Batch, c *computed, times *PhaseTimes, sums []float64) (float64, error) {
	where := func() string { return fmt.Sprintf("epoch %d step %d/%d", epoch+1, s+1, steps) }
	n := len(t.buf) - tailLen
	times[PhaseForward] += c.forward
	times[PhaseBackward] += c.backward
	localErr := c.err
	if localErr == nil && c.seeds > 0 {
		sums[0] += c.loss
		sums[1] += float64(c.correct)
		sums[2] += float64(c.seeds)
	}
	sums[3] += float64(b.Stats.RemoteRows)
	sums[4] += float64(b.Stats.CachedRows)
	sums[5] += float64(b.Stats.CacheLookups)
	flags := t.localFlags()
	if localErr != nil {
		clear(t.buf)
		flags.failed = 1
	}
	flags.put(t.buf[n:])
	w := startWatch(times)
	if err := t.red.AllreduceSum32(t.buf); err != nil {
		return 0, fmt.Errorf("%s: allreduce gradients: %w", where(), err)
	}
	w.lap(PhaseAllreduce)
	tail := t.buf[n:]
	sum := readFlags(tail)
	if r := t.run; r != nil {
		r.stop, r.due = sum.stops > 0, sum.due > 0
	}
	switch {
	case localErr != nil:
		return 0, localErr
	case sum.failed != 0:
		return 0, fmt.Errorf("%s: %d other rank(s) failed (see their errors)", where(), sum.failed)
	}
	seeds := int(tail[tailSeeds])
	if seeds == 0 {
		// An empty global batch (only possible with a source that reports
		// more steps than it fills): nothing to learn, no optimizer step.
		return 0, nil
	}
	link := isLinkBatch(b)
	if seeds != b.GlobalSeeds {
		what := "seeds"
		if link {
			what = "pairs"
		}
		return 0, fmt.Errorf("%s: ranks hold %d %s in total but the batch source reports %d", where(), seeds, what, b.GlobalSeeds)
	}
	loss := float64(tail[tailLoss]) / float64(seeds)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("%s: loss is %v (diverged; try a lower learning rate)", where(), loss)
	}
	grads := t.buf[:n]
	if i := firstNonFinite(grads); i >= 0 {
		return loss, fmt.Errorf("%s: gradient of parameter %d is %v (diverged; try a lower learning rate)", where(), i, grads[i])
	}
	if err := t.optimize(epoch, steps, grads); err != nil {
		return loss, fmt.Errorf("%s: %w", where(), err)
	}
	if t.Sparse != nil {
		// Every rank reaches this point of every step with seeds (the
		// early returns above are taken by all ranks alike), so the
		// collective update stays matched.
		if err := t.Sparse.Update(t.model, b); err != nil {
			return loss, fmt.Errorf("%s: sparse inputs: %w", where(), err)
		}
	}
	t.step++
	w.lap(PhaseOptimizer)
	return loss, nil
}

// optimize clips the reduced gradient (Recipe.ClipGradNorm) and takes
// the optimizer step at the scheduled rate of the step: a pure function of
// the step count, the epoch and the run's length, the same on every rank.
// With the default recipe it is exactly Adam.Step.
func (t *Trainer) optimize(epoch, steps int, grads []float32) error {
	r := &t.opts.Recipe
	if r.ClipGradNorm > 0 {
		optim.ClipGradNorm(grads, float64(r.ClipGradNorm))
	}
	lr := t.opts.Adam.LR
	if r.LRSchedule != "" || r.Warmup > 0 {
		lr = optim.Scale(lr, t.sched.Factor(t.step, epoch, int64(t.totalEpochs)*int64(steps)))
	}
	if t.sgd != nil {
		if err := t.sgd.Step(t.model.Params(), grads, lr); err != nil {
			return err
		}
		t.opt.T = t.sgd.T
		return nil
	}
	return t.opt.StepLR(t.model.Params(), grads, lr)
}

// localFlags is this rank's contribution to the flags of a step's
// Allreduce (see tailFailed): a stop request, and on the checkpoint rank a
// timed checkpoint that is due. Only inside Run.
func (t *Trainer) localFlags() stepFlags {
	var f stepFlags
	r := t.run
	if r == nil {
		return f
	}
	if t.Stop != nil && t.Stop() {
		f.stops = 1
	}
	if r.o.CheckpointDir != "" && r.o.CheckpointInterval > 0 && time.Since(r.lastCk) >= r.o.CheckpointInterval {
		f.due = 1
	}
	return f
}

// batchTargets is the number of targets of b on this rank: pair labels for
// a link batch, node labels otherwise.
func batchTargets(b *sample.Batch, link bool) int {
	if link {
		if b.TargetDim > 0 {
			// An edge batch: a target row per pair.
			return len(b.Pairs) / 2
		}
		return len(b.PairLabels)
	}
	return b.NodeTargets()
}

// EvalResult is the evaluation of one split over all ranks.
type EvalResult struct {
	Loss  float64 // mean cross-entropy (link: binary cross-entropy over pairs)
	Acc   float64 // fraction correct (link: pairs whose logit has the label's sign)
	Count int64   // nodes (link: pairs) evaluated, all ranks
	Wall  time.Duration
	// Link holds the ranking figures of a link evaluation (an Evaluator's
	// result); nil for node classification and for Trainer.Evaluate.
	Link *metrics.LinkFigures
	// Targets holds a real-target task's figures (nil for the others, and
	// for a split with no nodes).
	Targets *metrics.TargetFigures
}

// Evaluate scores split with the current weights (no dropout): every rank
// scores its own share of the split's nodes, and the counts are summed
// through the Reducer. It runs in the current epoch's numbering (the batch
// source may key its sampling by it). A rank-local failure keeps the rank
// calling the source until the split is done, so collectives inside the
// source stay matched, and is reported on every rank after the final
// reduction.
func (t *Trainer) Evaluate(split string) (EvalResult, error) {
	start := time.Now()
	var res EvalResult
	epoch := t.epoch
	steps, err := t.src.Steps(split, epoch)
	if err != nil {
		return res, fmt.Errorf("evaluate %s: steps: %w", split, err)
	}
	var sums [4]float64 // loss, correct, count, error flag
	var localErr error
	kind := t.model.Config().Targets
	t.scores.Reset()
	b := &t.batch
	for s := 0; s < steps; s++ {
		b.Reset()
		if err := t.src.Batch(split, epoch, s, b); err != nil {
			if localErr == nil {
				localErr = fmt.Errorf("evaluate %s step %d/%d: batch: %w", split, s+1, steps, err)
			}
			continue
		}
		link := isLinkBatch(b)
		targets := batchTargets(b, link)
		if localErr != nil || targets == 0 {
			continue
		}
		loss, correct, err := t.model.Evaluate(b)
		if err == nil && kind != "" && len(b.SeedsOrig) != targets {
			err = fmt.Errorf("the batch source names %d of its %d seeds (target figures need every seed's original id)", len(b.SeedsOrig), targets)
		}
		if err != nil {
			localErr = fmt.Errorf("evaluate %s step %d/%d: %w", split, s+1, steps, err)
			continue
		}
		if kind != "" {
			t.scores.Add(b.SeedsOrig, t.model.n.out[len(b.Blocks)-1], b.Targets)
		}
		sums[0] += loss
		sums[1] += float64(correct)
		sums[2] += float64(targets)
	}
	if localErr != nil {
		sums = [4]float64{3: 1}
	}
	if err := t.red.AllreduceSum64(sums[:]); err != nil {
		return res, fmt.Errorf("evaluate %s: reduce: %w", split, err)
	}
	res.Wall = time.Since(start)
	switch {
	case localErr != nil:
		return res, localErr
	case sums[3] != 0:
		return res, fmt.Errorf("evaluate %s: %v other rank(s) failed (see their errors)", split, sums[3])
	}
	res.Count = int64(sums[2])
	if res.Count > 0 {
		res.Loss = sums[0] / sums[2]
		res.Acc = sums[1] / sums[2]
		if kind != "" {
			// Every rank knows the count, so all of them gather or none.
			g, ok := t.red.(RowGatherer)
			if !ok {
				return res, fmt.Errorf("evaluate %s: the %s figures need a Reducer that gathers rows", split, kind)
			}
			if res.Targets, err = t.scores.Figures(g, kind, t.model.Config().Classes); err != nil {
				return res, fmt.Errorf("evaluate %s: %w", split, err)
			}
		}
	}
	return res, nil
}

// RunEpoch trains one epoch, evaluates valid and test, updates the best
// model and returns the epoch's metrics (identical on every rank except the
// timings, which are this rank's).
func (t *Trainer) RunEpoch() (metrics.Epoch, error) { return t.runEpoch(true) }

// runEpoch trains one epoch and, if eval, evaluates it. Evaluation draws
// no randomness the training uses (sampling is keyed by split, epoch and
// step), so skipping it leaves the training trajectory unchanged.
func (t *Trainer) runEpoch(eval bool) (metrics.Epoch, error) {
	tr, err := t.TrainEpoch()
	if err != nil {
		return metrics.Epoch{}, err
	}
	if !eval {
		m := newEpochMetrics(tr, nil, nil)
		if t.Reporter != nil {
			t.Reporter.EndEpoch(&m)
		}
		return m, nil
	}
	val, err := t.evaluateSplit(SplitValid)
	if err != nil {
		return metrics.Epoch{}, fmt.Errorf("epoch %d: %w", tr.Epoch, err)
	}
	test, err := t.evaluateSplit(SplitTest)
	if err != nil {
		return metrics.Epoch{}, fmt.Errorf("epoch %d: %w", tr.Epoch, err)
	}
	// Strictly better only: ties keep the earlier (less trained) model.
	t.sinceBest++
	if t.best.Params == nil || t.better(&val) {
		t.sinceBest = 0
		t.best.Epoch, t.best.ValAcc, t.best.TestAcc = tr.Epoch, val.Acc, test.Acc
		t.best.ValLink, t.best.TestLink = cloneFigures(val.Link), cloneFigures(test.Link)
		t.best.ValTargets, t.best.TestTargets = clonePtr(val.Targets), clonePtr(test.Targets)
		t.best.Params = append(t.best.Params[:0], t.model.Params()...)
	}
	m := newEpochMetrics(tr, &val, &test)
	if t.Reporter != nil {
		t.Reporter.EndEpoch(&m)
	}
	return m, nil
}

// evaluateSplit evaluates split through the Evaluator if one is set, else
// with Trainer.Evaluate.
func (t *Trainer) evaluateSplit(split string) (EvalResult, error) {
	if t.Evaluator == nil {
		return t.Evaluate(split)
	}
	start := time.Now()
	res, err := t.Evaluator.Evaluate(split, t.epoch, t.model)
	if err != nil {
		return res, fmt.Errorf("evaluate %s: %w", split, err)
	}
	if res.Wall == 0 {
		res.Wall = time.Since(start)
	}
	return res, nil
}

// better reports whether val is strictly better than the best so far:
// link results compare validation MRR, node results validation accuracy.
// A link result always beats a best state without link figures.
func (t *Trainer) better(val *EvalResult) bool {
	if t.opts.Metric != "" {
		return t.betterBy(t.opts.Metric, val)
	}
	if kind := t.model.Config().Targets; kind != "" && val.Targets != nil {
		return betterTargets(kind, val.Targets, t.best.ValTargets)
	}
	if val.Count == 0 && val.Link == nil {
		// Nothing to validate on (a split without validation data): the
		// latest evaluated epoch stands, so the final figures are reported.
		return true
	}
	if val.Link != nil {
		return t.best.ValLink == nil || val.Link.MRR > t.best.ValLink.MRR
	}
	return val.Acc > t.best.ValAcc
}

// clonePtr copies *p (nil for nil).
func clonePtr[E any](p *E) *E {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// cloneFigures copies f so that the best state never aliases a result the
// caller keeps.
func cloneFigures(f *metrics.LinkFigures) *metrics.LinkFigures {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

// RunOptions configures Run. Fields that only rank 0 acts on (Metrics,
// CheckpointDir) are simply left empty on the other ranks.
type RunOptions struct {
	// Epochs is the total number of epochs: Run stops when Epoch() reaches
	// it (so a resumed trainer runs only the remaining ones).
	Epochs int
	// Metrics receives one line per epoch and the final summary (nil: none).
	Metrics *metrics.Writer
	// CheckpointDir, if set, receives a checkpoint every CheckpointEvery
	// epochs (values < 1 mean only at the end) and after the last epoch.
	CheckpointDir   string
	CheckpointEvery int
	// CheckpointSteps, if positive, also writes a checkpoint after every
	// step whose global count (Step, across epochs) is a multiple of it,
	// in the middle of an epoch too. CheckpointInterval, if positive,
	// writes one after the first step that ends at least that long after
	// the previous checkpoint, by the clock of the checkpoint rank (its
	// decision travels in the step's Allreduce, so all ranks checkpoint
	// after the same step). Both are the same on every rank.
	CheckpointSteps    int64
	CheckpointInterval time.Duration
	// Checkpointing is set on EVERY rank when some rank writes
	// checkpoints: the sparse-input state is then exported (collectively)
	// at each checkpoint, and stops and CheckpointSteps/Interval write
	// checkpoints in the middle of an epoch (collectively too).
	Checkpointing bool
	// RunInfo is stored verbatim in checkpoints (for example the CLI's
	// fanouts and batch size, to check them on resume).
	RunInfo []byte
	// EvalEvery evaluates valid and test (and updates the best model) only
	// after every EvalEvery-th epoch and after the last; values < 2 mean
	// every epoch.
	EvalEvery int
	// Kernels names the numeric path of the job's products (kernels.Path,
	// or each rank's where they differ), written on every metrics line so
	// that the file says which path each epoch took ("" = not written).
	Kernels string
}

// Validate reports run options no run can take, naming the field at fault
// (config.FieldError): a negative Epochs. The checkpoint and evaluation
// schedules have no invalid values (those below their thresholds turn
// them off, as documented), and whether Epochs is below the epochs a
// resumed trainer has completed is Run's to check. Run calls it.
func (o RunOptions) Validate() error {
	if o.Epochs < 0 {
		return config.Errorf("{Epochs} %d must not be negative", o.Epochs)
	}
	return nil
}

// checkpointing reports whether some rank writes checkpoints.
func (o *RunOptions) checkpointing() bool { return o.Checkpointing || o.CheckpointDir != "" }

// Run trains until o.Epochs epochs are complete, writing metrics and
// checkpoints, and returns the final summary. Rank-local write failures
// (metrics, checkpoints) are agreed through the Reducer after every epoch so
// that all ranks return an error together.
//
// When Trainer.Stop asks for it on any rank, every rank stops after the
// same step (or at the end of the epoch, if the request came during its
// evaluation), a checkpoint is written (when checkpointing) and Run returns
// an error wrapping ErrStopped. A checkpoint written in the middle of an
// epoch records the steps done and the ranks' metric sums so far, so that
// the resumed run continues at the next step with the same results.
func (t *Trainer) Run(o RunOptions) (metrics.Summary, error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return metrics.Summary{}, fmt.Errorf("run: %w", err)
	}
	if o.Epochs < t.epoch {
		return metrics.Summary{}, fmt.Errorf("run: %d epochs requested but %d already completed (checkpoint)", o.Epochs, t.epoch)
	}
	r := &runState{o: &o, lastCk: start}
	t.run = r
	t.totalEpochs = o.Epochs
	defer func() { t.run, t.totalEpochs = nil, 0 }()
	early := t.stoppedEarly()
	for t.epoch < o.Epochs && !early {
		next := t.epoch + 1
		m, err := t.runEpoch(o.EvalEvery < 2 || next%o.EvalEvery == 0 || next == o.Epochs)
		if err != nil {
			return metrics.Summary{}, err
		}
		var localErr error
		if o.Metrics != nil {
			m.Kernels = o.Kernels
			localErr = o.Metrics.WriteEpoch(&m)
		}
		// A stop requested during the evaluation is agreed with the
		// write errors, in the same collective.
		stop, err := t.agreeStop(localErr)
		if err != nil {
			return metrics.Summary{}, fmt.Errorf("epoch %d: %w", t.epoch, err)
		}
		early = t.stoppedEarly()
		last := t.epoch == o.Epochs || early
		due := last || stop || r.pending || (o.CheckpointEvery > 0 && t.epoch%o.CheckpointEvery == 0)
		r.pending = false
		// The outcome of the save is agreed after every epoch, due or
		// not, as the ranks may not all know the checkpoint schedule
		// (only the writing rank needs CheckpointDir and CheckpointEvery).
		if err := t.saveCheckpoint(r, nil, due && o.checkpointing()); err != nil {
			return metrics.Summary{}, fmt.Errorf("epoch %d: %w", t.epoch, err)
		}
		if stop {
			return metrics.Summary{}, fmt.Errorf("after epoch %d: %w", t.epoch, ErrStopped)
		}
		// Tests stop a rank here to kill it at a known epoch.
		testhold.At("train-epoch:" + strconv.Itoa(t.epoch))
	}
	s := metrics.Summary{
		Type: "summary", Epochs: t.epoch, BestEpoch: t.best.Epoch,
		BestValAcc: t.best.ValAcc, TestAcc: t.best.TestAcc, TotalS: time.Since(start).Seconds(),
		Kernels: o.Kernels,
	}
	if early {
		s.StoppedEarly = t.epoch
	}
	s.SetLink(t.best.ValLink, t.best.TestLink)
	s.SetTargets(t.best.ValTargets, t.best.TestTargets)
	if o.Metrics != nil {
		if err := t.agree(o.Metrics.WriteSummary(&s)); err != nil {
			return s, err
		}
	} else if err := t.agree(nil); err != nil {
		return s, err
	}
	return s, nil
}

// stoppedEarly reports whether the evaluations since the best one reached
// Recipe.EarlyStop (the same on every rank: the figures are reduced).
func (t *Trainer) stoppedEarly() bool {
	return t.opts.Recipe.EarlyStop > 0 && t.sinceBest >= t.opts.Recipe.EarlyStop
}

// agreeStop is Agree that also agrees on a stop request (Trainer.Stop on
// any rank), in the same collective.
func (t *Trainer) agreeStop(localErr error) (bool, error) {
	flags := []float64{0, 0}
	if localErr != nil {
		flags[0] = 1
	}
	if t.Stop != nil && t.Stop() {
		flags[1] = 1
	}
	if err := t.red.AllreduceSum64(flags); err != nil {
		if localErr != nil {
			return false, errors.Join(localErr, err)
		}
		return false, fmt.Errorf("agree on errors: %w", err)
	}
	switch {
	case localErr != nil:
		return false, localErr
	case flags[0] != 0:
		return false, fmt.Errorf("%d other rank(s) failed (see their errors)", int64(flags[0]))
	}
	return flags[1] != 0, nil
}

// agree turns a rank-local error into an error on every rank
// (Reducer.Agree).
func (t *Trainer) agree(localErr error) error { return t.red.Agree(localErr) }

// Checkpoint captures the complete training state (copies, safe to keep).
func (t *Trainer) Checkpoint(runInfo []byte) *Checkpoint {
	return &Checkpoint{
		Model:           t.model.Config(),
		Adam:            t.opts.Adam,
		Recipe:          recipeOrNil(t.opts.Recipe),
		EvalsSinceBest:  t.sinceBest,
		Seed:            t.opts.Seed,
		Epoch:           t.epoch,
		Step:            t.step,
		AdamT:           t.opt.T,
		Params:          slices.Clone(t.model.Params()),
		M:               slices.Clone(t.opt.M),
		V:               slices.Clone(t.opt.V),
		BestEpoch:       t.best.Epoch,
		BestValAcc:      t.best.ValAcc,
		BestTest:        t.best.TestAcc,
		BestValLink:     cloneFigures(t.best.ValLink),
		BestTestLink:    cloneFigures(t.best.TestLink),
		BestValTargets:  clonePtr(t.best.ValTargets),
		BestTestTargets: clonePtr(t.best.TestTargets),
		BestParams:      slices.Clone(t.best.Params),
		RunInfo:         slices.Clone(runInfo),
	}
}

// Restore continues from a checkpoint. The model, optimizer and seed must
// match the trainer's options: a resumed run reproduces the uninterrupted
// one only under the same configuration.
func (t *Trainer) Restore(c *Checkpoint) error {
	switch cfg := t.model.Config(); {
	case c.Model.ArchName() != cfg.ArchName():
		return fmt.Errorf("restore: checkpoint holds a %s model, this run configures %s", c.Model.ArchName(), cfg.ArchName())
	case !c.Model.Equal(cfg):
		return fmt.Errorf("restore: checkpoint model %+v differs from the configured %+v", c.Model.Normalized(), cfg)
	case c.Adam != t.opts.Adam:
		return fmt.Errorf("restore: checkpoint optimizer %+v differs from the configured %+v", c.Adam, t.opts.Adam)
	case c.recipe() != t.opts.Recipe:
		return fmt.Errorf("restore: checkpoint recipe %+v differs from the configured %+v", c.recipe(), t.opts.Recipe)
	case c.Seed != t.opts.Seed:
		return fmt.Errorf("restore: checkpoint seed %d differs from the configured %d", c.Seed, t.opts.Seed)
	}
	n := len(t.model.Params())
	if len(c.Params) != n || len(c.M) != n || len(c.V) != n || (c.BestParams != nil && len(c.BestParams) != n) {
		return fmt.Errorf("restore: checkpoint holds %d/%d/%d/%d values, model has %d parameters", len(c.Params), len(c.M), len(c.V), len(c.BestParams), n)
	}
	copy(t.model.Params(), c.Params)
	copy(t.opt.M, c.M)
	copy(t.opt.V, c.V)
	t.opt.T = c.AdamT
	if t.sgd != nil {
		t.sgd.T = c.AdamT
	}
	t.sinceBest = c.EvalsSinceBest
	t.epoch, t.step = c.Epoch, c.Step
	t.best = Best{Epoch: c.BestEpoch, ValAcc: c.BestValAcc, TestAcc: c.BestTest,
		ValLink: cloneFigures(c.BestValLink), TestLink: cloneFigures(c.BestTestLink),
		ValTargets: clonePtr(c.BestValTargets), TestTargets: clonePtr(c.BestTestTargets)}
	if c.BestParams != nil {
		t.best.Params = slices.Clone(c.BestParams)
	}
	t.resume = nil
	if c.EpochStep > 0 {
		t.resume = &epochProgress{steps: c.EpochStep, sums: t.ownSums(c.EpochSums)}
	}
	switch {
	case (c.Sparse != nil) != (t.Sparse != nil):
		return fmt.Errorf("restore: checkpoint has %d bytes of learnable-input state, this run %s", len(c.Sparse), map[bool]string{true: "has learnable inputs", false: "has none"}[t.Sparse != nil])
	case t.Sparse != nil:
		if err := t.Sparse.Import(c.Sparse); err != nil {
			return fmt.Errorf("restore: learnable inputs: %w", err)
		}
	}
	return nil
}
