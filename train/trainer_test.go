package train

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/sample"
	"mpignn/train/metrics"
	"mpignn/train/optim"
)

// stepRecorder is a Reporter that records the per-step global losses and
// the epoch metrics.
type stepRecorder struct {
	losses []float64
	epochs []metrics.Epoch
}

func (r *stepRecorder) BeginEpoch(epoch, steps int)     {}
func (r *stepRecorder) StepDone(step int, loss float64) { r.losses = append(r.losses, loss) }
func (r *stepRecorder) EndEpoch(m *metrics.Epoch)       { r.epochs = append(r.epochs, *m) }

// testOpts is a model configuration with the trainer options.
type testOpts struct {
	Options
	Model Config
}

func testOptions(dropout float32) testOpts {
	return testOpts{
		Model:   Config{InDim: 8, Hidden: 16, Classes: 4, Layers: 2, Dropout: dropout},
		Options: Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 42},
	}
}

// newTrainer builds o.Model from the registry with o.Seed and a trainer
// around it, as the CLI does.
func newTrainer(o testOpts, red Reducer, src BatchSource) (*Trainer, error) {
	m, err := NewModel(o.Model, o.Seed)
	if err != nil {
		return nil, err
	}
	return NewTrainer(o.Options, m, red, src)
}

// rankRun is the outcome of one simulated rank.
type rankRun struct {
	tr      *Trainer
	rec     *stepRecorder
	metrics []metrics.Epoch
	err     error
}

// runRanks trains `size` simulated ranks (goroutines sharing a
// groupReducer) for the given epochs with global batch globalBatch.
// prepare may adjust each rank's source or trainer before the run.
func runRanks(t *testing.T, g *synthGraph, o testOpts, size, globalBatch, epochs int, prepare func(rank int, s *memSource, tr *Trainer)) []rankRun {
	t.Helper()
	grp := newGroupReducer(size)
	runs := make([]rankRun, size)
	var wg sync.WaitGroup
	for r := range size {
		src := newMemSource(g, r, size, o.Seed, []int{5, 3}, globalBatch)
		tr, err := newTrainer(o, rankReducer{grp, r}, src)
		if err != nil {
			t.Fatal(err)
		}
		rec := &stepRecorder{}
		tr.Reporter = rec
		if prepare != nil {
			prepare(r, src, tr)
		}
		runs[r] = rankRun{tr: tr, rec: rec}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tr.Epoch() < epochs {
				m, err := tr.RunEpoch()
				if err != nil {
					runs[r].err = err
					return
				}
				runs[r].metrics = append(runs[r].metrics, m)
			}
		}()
	}
	wg.Wait()
	return runs
}

func maxRelDiff(a, b []float32) float64 {
	scale, diff := 0.0, 0.0
	for i := range a {
		scale = math.Max(scale, math.Abs(float64(a[i])))
		diff = math.Max(diff, math.Abs(float64(a[i])-float64(b[i])))
	}
	return diff / math.Max(scale, 1e-30)
}

// TestTrainingLearns: on the planted graph the model must get far above
// chance (0.25) and the training loss must fall.
//
// GIN's bar is lower: its last layer is PyG GIN's MLP([hidden, classes,
// classes]), whose inner ReLU is only 4 units wide here, and its sum
// aggregator sees sampled (5, 3) neighbourhoods in training; it reaches
// about 0.53 where the others pass 0.75 (on Cora it matches SAGE, see
// docs/models.md). GINE needs edge features, which this graph lacks.
func TestTrainingLearns(t *testing.T) {
	for _, arch := range nodeArchs() {
		t.Run(arch, func(t *testing.T) {
			o := testOptions(0.2)
			o.Model = archModel(o.Model, arch, 0.2)
			minAcc, lossDrop := 0.75, 0.5
			if arch == ArchGIN {
				minAcc, lossDrop = 0.45, 0.7
			}
			trainingLearns(t, o, minAcc, lossDrop)
		})
	}
}

// nodeArchs are the homogeneous architectures that train without edge
// features (the synthetic graphs of these tests have none).
func nodeArchs() []string {
	var names []string
	for _, a := range builtinArchs() {
		if !a.Hetero && !a.EdgeFeatures {
			names = append(names, a.Name)
		}
	}
	return names
}

func trainingLearns(t *testing.T, o testOpts, minAcc, lossDrop float64) {
	g := newSynthGraph(1, 600, 8, 4)
	runs := runRanks(t, g, o, 1, 64, 10, nil)
	if runs[0].err != nil {
		t.Fatal(runs[0].err)
	}
	ms := runs[0].metrics
	first, last := ms[0], ms[len(ms)-1]
	if !(last.Loss < lossDrop*first.Loss) {
		t.Errorf("loss went from %.4f to %.4f; expected a drop below %v of it", first.Loss, last.Loss, lossDrop)
	}
	best := runs[0].tr.Best()
	if best.ValAcc < minAcc {
		t.Errorf("best validation accuracy %.3f, want >= %v (chance 0.25)", best.ValAcc, minAcc)
	}
	if best.Epoch < 1 || best.Params == nil {
		t.Errorf("best state not recorded: %+v", best)
	}
	if want := int64(len(g.splits[SplitTrain])); last.Seeds != want {
		t.Errorf("epoch trained on %d seeds, want %d", last.Seeds, want)
	}
	if runs[0].tr.Step() != int64(10*last.Steps) || runs[0].tr.Optimizer().T != runs[0].tr.Step() {
		t.Errorf("step counter %d, adam t %d, want %d", runs[0].tr.Step(), runs[0].tr.Optimizer().T, 10*last.Steps)
	}
}

// TestRankCountEquivalence: 1, 2, 3 and 4 simulated ranks with the same global
// batch (per-rank share G/P) give the same loss at every step and the same
// final weights, with dropout on (masks keyed by original ids and step), and
// all ranks of one run hold identical weights.
func TestRankCountEquivalence(t *testing.T) {
	for _, arch := range nodeArchs() {
		for _, dropout := range []float32{0, 0.5} {
			t.Run(fmt.Sprintf("%s/dropout=%v", arch, dropout), func(t *testing.T) {
				o := testOptions(dropout)
				o.Model = archModel(o.Model, arch, dropout)
				rankCountEquivalence(t, o)
			})
		}
	}
}

// archModel turns a test config into one of arch: GAT gets 4 heads and
// attention dropout when dropout is on.
func archModel(cfg Config, arch string, dropout float32) Config {
	cfg.Arch = arch
	if arch == ArchGAT {
		cfg.Opts = GATOpts(4, dropout)
	}
	return cfg
}

func rankCountEquivalence(t *testing.T, o testOpts) {
	g := newSynthGraph(2, 400, 8, 4)
	var ref []rankRun
	for _, size := range []int{1, 2, 3, 4} {
		runs := runRanks(t, g, o, size, 48, 3, nil)
		for r, run := range runs {
			if run.err != nil {
				t.Fatalf("P=%d rank %d: %v", size, r, run.err)
			}
			if !slices.Equal(run.tr.Model().Params(), runs[0].tr.Model().Params()) {
				t.Fatalf("P=%d: rank %d weights differ from rank 0", size, r)
			}
			if run.metrics[2].Loss != runs[0].metrics[2].Loss || run.metrics[2].ValAccuracy() != runs[0].metrics[2].ValAccuracy() {
				t.Fatalf("P=%d: rank %d metrics differ from rank 0", size, r)
			}
		}
		if size == 1 {
			ref = runs
			continue
		}
		a, b := ref[0].rec.losses, runs[0].rec.losses
		if len(a) != len(b) {
			t.Fatalf("P=%d: %d steps, P=1 took %d", size, len(b), len(a))
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-4*math.Abs(a[i]) {
				t.Errorf("P=%d step %d: loss %.7f, P=1 %.7f", size, i+1, b[i], a[i])
			}
		}
		if d := maxRelDiff(ref[0].tr.Model().Params(), runs[0].tr.Model().Params()); d > 1e-4 {
			t.Errorf("P=%d: final weights differ from P=1 by %.3g (relative to the largest weight)", size, d)
		}
		for e := range ref[0].metrics {
			if math.Abs(ref[0].metrics[e].ValAccuracy()-runs[0].metrics[e].ValAccuracy()) > 0.01 {
				t.Errorf("P=%d epoch %d: val acc %.4f, P=1 %.4f", size, e+1, runs[0].metrics[e].ValAccuracy(), ref[0].metrics[e].ValAccuracy())
			}
		}
		if runs[0].metrics[0].RemoteRows == 0 {
			t.Errorf("P=%d: no remote rows counted", size)
		}
	}
}

// TestGlobalBatchScaling: the per-rank gradients are sums over the rank's
// seeds divided by the GLOBAL batch size, so one step of a 2-rank run moves
// the weights exactly as the 1-rank run with the whole batch (checked on the
// first step, before any divergence could accumulate) — and NOT as a run
// that averaged per rank.
func TestGlobalBatchScaling(t *testing.T) {
	g := newSynthGraph(3, 200, 8, 4)
	o := testOptions(0)
	o.Adam.WeightDecay = 0
	// Plain SGD view: with Adam's first step the update is lr·sign(g), so
	// compare the reduced gradients instead, captured before the step.
	grads := func(size int) []float32 {
		grp := newGroupReducer(size)
		out := make([][]float32, size)
		var wg sync.WaitGroup
		for r := range size {
			src := newMemSource(g, r, size, o.Seed, []int{5, 3}, 40)
			tr, err := newTrainer(o, capture{rankReducer{grp, r}, &out[r]}, src)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var sums [6]float64
				var times PhaseTimes
				if _, err := tr.trainStep(0, 0, 1, &times, sums[:]); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		return out[0]
	}
	one, two := grads(1), grads(2)
	n := len(one) - tailLen
	if d := maxRelDiff(one[:n], two[:n]); d > 1e-5 {
		t.Fatalf("2-rank reduced gradient differs from 1-rank by %.3g", d)
	}
	if one[n+tailSeeds] != 40 || two[n+tailSeeds] != 40 {
		t.Fatalf("seed counts %v and %v, want 40", one[n+tailSeeds], two[n+tailSeeds])
	}
}

// capture records the first reduced float32 buffer.
type capture struct {
	Reducer
	dst *[]float32
}

func (c capture) AllreduceSum32(buf []float32) error {
	err := c.Reducer.AllreduceSum32(buf)
	if *c.dst == nil {
		*c.dst = slices.Clone(buf)
	}
	return err
}

// TestResumeEqualsUninterrupted: stopping after epoch k, saving, loading
// into a fresh trainer and continuing gives bit-identical weights, Adam
// TestEvalEvery: evaluating every third epoch (and the last) leaves the
// training trajectory unchanged, leaves the other epochs without
// validation/test results, and picks the best model among the evaluated
// epochs with the same results as evaluating every epoch.
func TestEvalEvery(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0.3)
	run := func(every int) (*Trainer, []metrics.Epoch, metrics.Summary) {
		tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
		if err != nil {
			t.Fatal(err)
		}
		rec := &stepRecorder{}
		tr.Reporter = rec
		sum, err := tr.Run(RunOptions{Epochs: 7, EvalEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		return tr, rec.epochs, sum
	}
	all, allM, _ := run(1)
	some, someM, sum := run(3)
	if !slices.Equal(all.Model().Params(), some.Model().Params()) {
		t.Fatal("skipping evaluation changed the final weights")
	}
	if len(allM) != 7 || len(someM) != 7 {
		t.Fatalf("%d and %d epoch metrics, want 7", len(allM), len(someM))
	}
	best := 0
	for i := range someM {
		e := i + 1
		want := e%3 == 0 || e == 7
		if someM[i].Loss != allM[i].Loss || someM[i].Evaluated() != want || !allM[i].Evaluated() {
			t.Errorf("epoch %d: loss %v vs %v, evaluated %v (want %v)", e, someM[i].Loss, allM[i].Loss, someM[i].Evaluated(), want)
		}
		if want {
			if someM[i].ValAccuracy() != allM[i].ValAccuracy() || someM[i].TestAccuracy() != allM[i].TestAccuracy() {
				t.Errorf("epoch %d: val/test %v/%v, every-epoch run %v/%v", e, someM[i].ValAccuracy(), someM[i].TestAccuracy(), allM[i].ValAccuracy(), allM[i].TestAccuracy())
			}
			if best == 0 || allM[i].ValAccuracy() > allM[best-1].ValAccuracy() {
				best = e
			}
		}
	}
	if sum.BestEpoch != best || sum.BestValAcc != allM[best-1].ValAccuracy() || sum.TestAcc != allM[best-1].TestAccuracy() {
		t.Errorf("summary %+v, want best epoch %d of the evaluated ones", sum, best)
	}
}

// state, best model and metrics to the uninterrupted run.
func TestResumeEqualsUninterrupted(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0.3)
	newT := func() *Trainer {
		tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	dir := t.TempDir()
	straightM := filepath.Join(dir, "straight.jsonl")
	mw, err := metrics.Create(straightM, 0)
	if err != nil {
		t.Fatal(err)
	}
	straight := newT()
	sumA, err := straight.Run(RunOptions{Epochs: 5, Metrics: mw})
	if err != nil {
		t.Fatal(err)
	}
	mw.Close()

	ckDir := filepath.Join(dir, "ck")
	resumedM := filepath.Join(dir, "resumed.jsonl")
	mw, err = metrics.Create(resumedM, 0)
	if err != nil {
		t.Fatal(err)
	}
	first := newT()
	if _, err := first.Run(RunOptions{Epochs: 2, Metrics: mw, CheckpointDir: ckDir, CheckpointEvery: 1, RunInfo: []byte(`{"fanout":[5,3]}`)}); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash after epoch 3 was logged but before it was
	// checkpointed: the resumed run must drop that line.
	if _, err := first.RunEpoch(); err != nil {
		t.Fatal(err)
	}
	m3, _ := first.RunEpoch()
	mw.WriteEpoch(&m3)
	mw.Close()

	ck, err := LoadCheckpoint(ckDir)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Epoch != 2 || string(ck.RunInfo) != `{"fanout":[5,3]}` {
		t.Fatalf("checkpoint epoch %d run info %q", ck.Epoch, ck.RunInfo)
	}
	second := newT()
	if err := second.Restore(ck); err != nil {
		t.Fatal(err)
	}
	mw, err = metrics.Create(resumedM, ck.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	sumB, err := second.Run(RunOptions{Epochs: 5, Metrics: mw})
	if err != nil {
		t.Fatal(err)
	}
	mw.Close()

	if !slices.Equal(straight.Model().Params(), second.Model().Params()) {
		t.Fatalf("resumed weights differ (max rel %.3g)", maxRelDiff(straight.Model().Params(), second.Model().Params()))
	}
	if !slices.Equal(straight.opt.M, second.opt.M) || !slices.Equal(straight.opt.V, second.opt.V) || straight.opt.T != second.opt.T || straight.Step() != second.Step() {
		t.Fatal("resumed optimizer state differs")
	}
	if !slices.Equal(straight.Best().Params, second.Best().Params) || sumA.BestEpoch != sumB.BestEpoch || sumA.BestValAcc != sumB.BestValAcc || sumA.TestAcc != sumB.TestAcc {
		t.Fatalf("best state differs: %+v vs %+v", sumA, sumB)
	}
	ea, sa, err := metrics.Read(straightM)
	if err != nil {
		t.Fatal(err)
	}
	eb, sb, err := metrics.Read(resumedM)
	if err != nil {
		t.Fatal(err)
	}
	if len(ea) != 5 || len(eb) != 5 || sa == nil || sb == nil {
		t.Fatalf("metrics: %d and %d epoch lines, summaries %v %v", len(ea), len(eb), sa, sb)
	}
	for i := range ea {
		if ea[i].Epoch != i+1 || eb[i].Epoch != i+1 || ea[i].Loss != eb[i].Loss || ea[i].ValAccuracy() != eb[i].ValAccuracy() || ea[i].TestAccuracy() != eb[i].TestAccuracy() {
			t.Errorf("metrics line %d: %+v vs %+v", i+1, ea[i], eb[i])
		}
	}
	if sa.BestValAcc != sb.BestValAcc || sa.TestAcc != sb.TestAcc || sb.Epochs != 5 {
		t.Errorf("summaries %+v vs %+v", sa, sb)
	}
}

func TestRestoreMismatch(t *testing.T) {
	g := newSynthGraph(5, 100, 8, 4)
	o := testOptions(0)
	tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(c *Checkpoint)
		want string
	}{
		{"hidden", func(c *Checkpoint) { c.Model.Hidden = 32 }, "model"},
		{"lr", func(c *Checkpoint) { c.Adam.LR = 0.5 }, "optimizer"},
		{"seed", func(c *Checkpoint) { c.Seed = 7 }, "seed"},
		{"short", func(c *Checkpoint) { c.M = c.M[1:] }, "values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tr.Checkpoint(nil)
			tc.edit(c)
			if err := tr.Restore(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want mention of %q", err, tc.want)
			}
		})
	}
}

// TestNaNLossStops: a NaN in the inputs of epoch 2 step 3 stops training on
// every rank with an error naming that epoch and step.
func TestNaNLossStops(t *testing.T) {
	g := newSynthGraph(6, 200, 8, 4)
	runs := runRanks(t, g, testOptions(0), 2, 32, 3, func(rank int, s *memSource, tr *Trainer) {
		if rank == 1 {
			s.poisonEpoch, s.poisonStep = 1, 2
		}
	})
	for r, run := range runs {
		if run.err == nil || !strings.Contains(run.err.Error(), "epoch 2 step 3/") || !strings.Contains(run.err.Error(), "NaN") {
			t.Errorf("rank %d: error %v, want NaN at epoch 2 step 3", r, run.err)
		}
	}
}

// TestRankFailureAgreed: a batch failure on one rank makes every rank stop
// at the same step (no rank is left waiting in a collective).
func TestRankFailureAgreed(t *testing.T) {
	g := newSynthGraph(7, 200, 8, 4)
	runs := runRanks(t, g, testOptions(0), 3, 30, 2, func(rank int, s *memSource, tr *Trainer) {
		if rank == 2 {
			s.failEpoch, s.failStep = 0, 1
		}
	})
	for r, run := range runs {
		want := "other rank(s) failed"
		if r == 2 {
			want = "injected failure on rank 2"
		}
		if run.err == nil || !strings.Contains(run.err.Error(), want) || !strings.Contains(run.err.Error(), "epoch 1 step 2/") {
			t.Errorf("rank %d: error %v, want %q at epoch 1 step 2", r, run.err, want)
		}
	}
}

func TestRunLocalWriteFailureAgreed(t *testing.T) {
	g := newSynthGraph(8, 120, 8, 4)
	o := testOptions(0)
	grp := newGroupReducer(2)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		tr, err := newTrainer(o, rankReducer{grp, r}, newMemSource(g, r, 2, o.Seed, []int{5, 3}, 32))
		if err != nil {
			t.Fatal(err)
		}
		opts := RunOptions{Epochs: 2}
		if r == 0 {
			// A checkpoint "directory" below a regular file cannot be made.
			opts.CheckpointDir, opts.CheckpointEvery = filepath.Join(blocker, "ck"), 1
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = tr.Run(opts)
		}()
	}
	wg.Wait()
	if errs[0] == nil || !strings.Contains(errs[0].Error(), "save checkpoint") {
		t.Errorf("rank 0: %v, want the checkpoint error", errs[0])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "epoch 1: 1 other rank(s) failed") {
		t.Errorf("rank 1: %v, want agreement on the failure", errs[1])
	}
}

func TestTrainerRejectsBadBatches(t *testing.T) {
	g := newSynthGraph(9, 100, 8, 4)
	o := testOptions(0)
	src := &badSource{memSource: newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32)}
	tr, err := newTrainer(o, LocalReducer{}, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(b *sample.Batch)
		want string
	}{
		{"global seeds too small", func(b *sample.Batch) { b.GlobalSeeds = 1 }, "global seeds"},
		{"global seeds too large", func(b *sample.Batch) { b.GlobalSeeds++ }, "batch source reports"},
		{"bad label", func(b *sample.Batch) { b.Labels[0] = 9 }, "label 9"},
		{"short features", func(b *sample.Batch) { b.X = b.X[:len(b.X)-1] }, "input values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src.edit = tc.edit
			_, err := tr.TrainEpoch()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "step 1/") {
				t.Fatalf("error %v, want mention of %q at step 1", err, tc.want)
			}
		})
	}
}

type badSource struct {
	*memSource
	edit func(b *sample.Batch)
}

func (s *badSource) Batch(split string, epoch, step int, b *sample.Batch) error {
	if err := s.memSource.Batch(split, epoch, step, b); err != nil {
		return err
	}
	s.edit(b)
	return nil
}

// TestRunOptionsValidate: a negative epoch count is the one run option
// that is invalid on its own (schedules below their thresholds are off);
// Run refuses it before training, naming the field.
func TestRunOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    RunOptions
		want string
	}{
		{"valid", RunOptions{Epochs: 3, CheckpointEvery: 1, CheckpointSteps: 10, CheckpointInterval: time.Minute, EvalEvery: 2}, ""},
		{"zero epochs, schedules off", RunOptions{CheckpointEvery: -1, CheckpointSteps: -1, CheckpointInterval: -time.Second, EvalEvery: -3}, ""},
		{"negative epochs", RunOptions{Epochs: -1}, "Epochs -1 must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				require.NoError(t, tc.o.Validate())
				return
			}
			err := tc.o.Validate()
			require.EqualError(t, err, tc.want)
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "Epochs", fe.Field)
		})
	}
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0.3)
	tr, err := newTrainer(o, LocalReducer{}, newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32))
	require.NoError(t, err)
	_, err = tr.Run(RunOptions{Epochs: -2})
	require.EqualError(t, err, "run: Epochs -2 must not be negative")
	assert.Equal(t, 0, tr.Epoch())
}
