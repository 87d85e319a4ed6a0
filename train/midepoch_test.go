package train

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mpignn/train/metrics"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// midRun is the outcome of Run on one simulated rank.
type midRun struct {
	tr  *Trainer
	err error
}

// runGroup runs `size` simulated ranks through Run. build may set up each
// trainer (Stop, Restore) before it runs; rank 0 alone writes metrics and
// checkpoints, as the CLI does.
func runGroup(t *testing.T, g *synthGraph, o testOpts, size int, ro RunOptions, metricsPath string, build func(rank int, tr *Trainer)) []midRun {
	t.Helper()
	grp := newGroupReducer(size)
	runs := make([]midRun, size)
	var wg sync.WaitGroup
	for r := range size {
		tr, err := newTrainer(o, rankReducer{grp, r}, newMemSource(g, r, size, o.Seed, []int{5, 3}, 32))
		require.NoError(t, err)
		if build != nil {
			build(r, tr)
		}
		rro := ro
		rro.Checkpointing = ro.CheckpointDir != ""
		if r != 0 {
			rro.CheckpointDir = ""
		} else if metricsPath != "" {
			mw, err := metrics.Create(metricsPath, tr.Epoch())
			require.NoError(t, err)
			defer mw.Close()
			rro.Metrics = mw
		}
		runs[r].tr = tr
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, runs[r].err = tr.Run(rro)
		}()
	}
	wg.Wait()
	return runs
}

// sameFigures compares the metrics of two runs except their timings.
func sameFigures(t *testing.T, want, got string) {
	t.Helper()
	ea, sa, err := metrics.Read(want)
	require.NoError(t, err)
	eb, sb, err := metrics.Read(got)
	require.NoError(t, err)
	require.Len(t, eb, len(ea))
	for i := range ea {
		a, b := ea[i], eb[i]
		assert.Equal(t, a.Epoch, b.Epoch)
		assert.Equal(t, a.Loss, b.Loss, "epoch %d loss", a.Epoch)
		assert.Equal(t, a.TrainAcc, b.TrainAcc, "epoch %d train acc", a.Epoch)
		assert.Equal(t, a.ValAccuracy(), b.ValAccuracy(), "epoch %d val acc", a.Epoch)
		assert.Equal(t, a.TestAccuracy(), b.TestAccuracy(), "epoch %d test acc", a.Epoch)
		assert.Equal(t, a.RemoteRows, b.RemoteRows, "epoch %d remote rows", a.Epoch)
	}
	require.NotNil(t, sa)
	require.NotNil(t, sb)
	assert.Equal(t, sa.BestEpoch, sb.BestEpoch)
	assert.Equal(t, sa.BestValAcc, sb.BestValAcc)
	assert.Equal(t, sa.TestAcc, sb.TestAcc)
}

// TestStopMidEpochResumesIdentically stops a run on request after step k
// (the first step of an epoch, one in the middle, an epoch's last), resumes
// it from the checkpoint written there and compares with an uninterrupted
// run: the same weights, optimizer state and metric lines, bit for bit, on
// 1 and 2 ranks. Only rank 1 is asked to stop, so the agreement is what
// stops rank 0.
func TestStopMidEpochResumesIdentically(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0.3)
	const epochs = 3
	steps, err := newMemSource(g, 0, 1, o.Seed, []int{5, 3}, 32).Steps(SplitTrain, 0)
	require.NoError(t, err)
	require.Greater(t, steps, 3)
	// stopAt asks to stop once the trainer has taken `after` steps: the
	// request is seen in the next step's Allreduce, or at the end of the
	// epoch when `after` is an epoch's last step. beginEpoch asks once
	// epoch e has begun (after the previous epoch's end): the first step
	// of an epoch.
	type trigger struct {
		name  string
		after int64 // -1: use beginEpoch
		epoch int
		// Where the stop lands: completed epochs, steps of the next
		// epoch done, steps in all.
		wantEpoch, wantEpochStep int
		wantStep                 int64
	}
	S := int64(steps)
	cases := []trigger{
		{"first step", 0, 0, 0, 1, 1},
		{"middle", S / 2, 0, 0, steps/2 + 1, S/2 + 1},
		{"last step", S - 1, 0, 0, steps, S},
		{"during evaluation", S, 0, 1, 0, S},
		{"first step of epoch 2", -1, 2, 1, 1, S + 1},
		{"middle of epoch 3", 2*S + 1, 0, 2, 2, 2*S + 2},
	}
	for _, size := range []int{1, 2} {
		dir := t.TempDir()
		straightM := filepath.Join(dir, "straight.jsonl")
		straight := runGroup(t, g, o, size, RunOptions{Epochs: epochs}, straightM, nil)
		require.NoError(t, straight[0].err)
		for i, tc := range cases {
			name := filepath.Join(dir, strconv.Itoa(i))
			ck, m := name+"-ck", name+".jsonl"
			asker := size - 1
			first := runGroup(t, g, o, size, RunOptions{Epochs: epochs, CheckpointDir: ck}, m, func(rank int, tr *Trainer) {
				if rank != asker {
					return
				}
				if tc.after >= 0 {
					tr.Stop = func() bool { return tr.Step() >= tc.after }
					return
				}
				begun := &beginWatch{Reporter: tr.Reporter, epoch: tc.epoch}
				tr.Reporter = begun
				tr.Stop = func() bool { return begun.seen }
			})
			for r, run := range first {
				require.ErrorIs(t, run.err, ErrStopped, "size %d %s rank %d", size, tc.name, r)
				assert.Equal(t, tc.wantStep, run.tr.Step(), "size %d %s: stopped after another step", size, tc.name)
			}
			c, err := LoadCheckpoint(ck)
			require.NoError(t, err)
			require.Equal(t, tc.wantStep, c.Step, "size %d %s", size, tc.name)
			assert.Equal(t, tc.wantEpoch, c.Epoch, "size %d %s", size, tc.name)
			assert.Equal(t, tc.wantEpochStep, c.EpochStep, "size %d %s", size, tc.name)
			if tc.wantEpochStep > 0 {
				assert.Len(t, c.EpochSums, size)
			} else {
				assert.Nil(t, c.EpochSums)
			}

			second := runGroup(t, g, o, size, RunOptions{Epochs: epochs, CheckpointDir: ck}, m, func(rank int, tr *Trainer) {
				require.NoError(t, tr.Restore(c))
			})
			for _, run := range second {
				require.NoError(t, run.err)
			}
			a, b := straight[0].tr, second[0].tr
			require.True(t, slices.Equal(a.Model().Params(), b.Model().Params()), "size %d %s: weights differ", size, tc.name)
			require.True(t, slices.Equal(a.opt.M, b.opt.M) && slices.Equal(a.opt.V, b.opt.V) && a.opt.T == b.opt.T, "size %d %s: optimizer", size, tc.name)
			require.True(t, slices.Equal(a.Best().Params, b.Best().Params), "size %d %s: best", size, tc.name)
			sameFigures(t, straightM, m)
		}
	}
}

// beginWatch notes when an epoch has begun.
type beginWatch struct {
	Reporter
	epoch int
	seen  bool
}

func (b *beginWatch) BeginEpoch(epoch, steps int) {
	b.seen = b.seen || epoch >= b.epoch
	if b.Reporter != nil {
		b.Reporter.BeginEpoch(epoch, steps)
	}
}

func (b *beginWatch) StepDone(step int, loss float64) {
	if b.Reporter != nil {
		b.Reporter.StepDone(step, loss)
	}
}

func (b *beginWatch) EndEpoch(m *metrics.Epoch) {
	if b.Reporter != nil {
		b.Reporter.EndEpoch(m)
	}
}

// TestCheckpointEveryStepsAndInterval: checkpoints after every N steps and
// by time change nothing in the run, land where asked, and resuming from
// one gives the uninterrupted result.
func TestCheckpointEveryStepsAndInterval(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0.3)
	dir := t.TempDir()
	straightM := filepath.Join(dir, "straight.jsonl")
	straight := runGroup(t, g, o, 2, RunOptions{Epochs: 2}, straightM, nil)
	require.NoError(t, straight[0].err)

	tests := []struct {
		name string
		ro   RunOptions
	}{
		{"steps", RunOptions{CheckpointSteps: 2}},
		// Due after every step: the ranks must still agree on each.
		{"interval", RunOptions{CheckpointInterval: time.Nanosecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ck := filepath.Join(dir, tc.name)
			ro := tc.ro
			ro.Epochs, ro.CheckpointDir = 2, ck
			// Stop after step 5 (inside the first epoch) and look at the
			// checkpoints written before.
			var saved []*Checkpoint
			runs := runGroup(t, g, o, 2, ro, "", func(rank int, tr *Trainer) {
				if rank == 0 {
					tr.Stop = func() bool {
						if c, err := LoadCheckpoint(ck); err == nil {
							saved = append(saved, c)
						}
						return tr.Step() >= 4
					}
				}
			})
			for _, r := range runs {
				require.ErrorIs(t, r.err, ErrStopped)
			}
			require.NotEmpty(t, saved)
			var at []int64
			for _, c := range saved {
				if len(at) == 0 || at[len(at)-1] != c.Step {
					at = append(at, c.Step)
				}
			}
			if tc.name == "steps" {
				assert.Equal(t, []int64{2, 4}, at, "checkpoints every 2 steps")
			} else {
				assert.Equal(t, []int64{1, 2, 3, 4}, at, "a checkpoint after every step")
			}
			// Resume from the step-4 checkpoint, not the stop's.
			c := saved[len(saved)-1]
			require.Equal(t, 4, c.EpochStep)
			m := filepath.Join(dir, tc.name+".jsonl")
			second := runGroup(t, g, o, 2, RunOptions{Epochs: 2}, m, func(rank int, tr *Trainer) {
				require.NoError(t, tr.Restore(c))
			})
			require.NoError(t, second[0].err)
			require.True(t, slices.Equal(straight[0].tr.Model().Params(), second[0].tr.Model().Params()), "weights differ")
		})
	}
}

// TestStopWithoutCheckpoint: a stop request without checkpoints still ends
// every rank after the same step, with ErrStopped.
func TestStopWithoutCheckpoint(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	o := testOptions(0)
	runs := runGroup(t, g, o, 2, RunOptions{Epochs: 2}, "", func(rank int, tr *Trainer) {
		if rank == 1 {
			tr.Stop = func() bool { return tr.Step() >= 2 }
		}
	})
	for _, r := range runs {
		require.True(t, errors.Is(r.err, ErrStopped), "%v", r.err)
		assert.Equal(t, int64(3), r.tr.Step())
	}
}

// BenchmarkStepFlags is what stopping and timed checkpoints add to every
// step: this rank's flags for the step's Allreduce (an atomic load behind
// Stop, a clock read for CheckpointInterval) and their writing and
// reading. The Allreduce carries them in three elements of its buffer.
func BenchmarkStepFlags(b *testing.B) {
	var stop atomic.Bool
	t := &Trainer{Stop: stop.Load}
	t.run = &runState{o: &RunOptions{CheckpointDir: "ck", CheckpointInterval: time.Hour}, lastCk: time.Now()}
	var sink int
	tail := make([]float32, tailLen)
	for b.Loop() {
		t.localFlags().put(tail)
		f := readFlags(tail)
		sink += f.failed + f.stops + f.due
	}
	_ = sink
}

// TestStopMidEpochWithPrefetch: batches fetched ahead of a stop are
// dropped, and a resumed epoch refills the pipeline from its next step:
// the result is the uninterrupted one, with or without prefetching.
func TestStopMidEpochWithPrefetch(t *testing.T) {
	g := newSynthGraph(4, 300, 8, 4)
	plain := testOptions(0.3)
	o := plain
	o.Prefetch = 2
	dir := t.TempDir()
	straight := runGroup(t, g, plain, 2, RunOptions{Epochs: 2}, "", nil)
	require.NoError(t, straight[0].err)
	ck := filepath.Join(dir, "ck")
	first := runGroup(t, g, o, 2, RunOptions{Epochs: 2, CheckpointDir: ck}, "", func(rank int, tr *Trainer) {
		if rank == 0 {
			tr.Stop = func() bool { return tr.Step() >= 2 }
		}
	})
	for _, r := range first {
		require.ErrorIs(t, r.err, ErrStopped)
	}
	c, err := LoadCheckpoint(ck)
	require.NoError(t, err)
	require.Equal(t, 3, c.EpochStep)
	second := runGroup(t, g, o, 2, RunOptions{Epochs: 2}, "", func(rank int, tr *Trainer) {
		require.NoError(t, tr.Restore(c))
	})
	require.NoError(t, second[0].err)
	require.True(t, slices.Equal(straight[0].tr.Model().Params(), second[0].tr.Model().Params()), "weights differ")
}
