package train

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"mpignn/train/metrics"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrefetchBitIdentical: fetching 1 or 2 batches ahead while a step
// computes gives exactly the weights, per-step losses and epoch figures of
// no prefetch, on 1 and 3 simulated ranks, for node and link batches, with
// dropout (keyed by the step) and a short last step; with MaxSteps the
// pipeline stops at the cut. The sources reuse their batch's buffers, so a
// prefetch that aliased the batch being computed would change the result.
func TestPrefetchBitIdentical(t *testing.T) {
	g := newSynthGraph(11, 230, 8, 4)
	type outcome struct {
		params []float32
		losses []float64
		epochs []metrics.Epoch
	}
	node := func(t *testing.T, o testOpts, size int) []outcome {
		runs := runRanks(t, g, o, size, 40, 3, nil)
		out := make([]outcome, size)
		for r, run := range runs {
			require.NoError(t, run.err, "rank %d", r)
			out[r] = outcome{slices.Clone(run.tr.Model().Params()), run.rec.losses, run.metrics}
		}
		return out
	}
	link := func(t *testing.T, o testOpts, size int) []outcome {
		lo := linkOptions(DecoderDot)
		lo.Options = o.Options
		grp := newGroupReducer(size)
		out := make([]outcome, size)
		errs := make([]error, size)
		var wg sync.WaitGroup
		for r := range size {
			tr, err := newTrainer(lo, rankReducer{grp, r}, newLinkSource(g, r, size, lo.Seed, 96))
			require.NoError(t, err)
			rec := &stepRecorder{}
			tr.Reporter = rec
			wg.Add(1)
			go func() {
				defer wg.Done()
				for e := 0; e < 2 && errs[r] == nil; e++ {
					var m TrainResult
					if m, errs[r] = tr.TrainEpoch(); errs[r] == nil {
						out[r].epochs = append(out[r].epochs, newEpochMetrics(m, nil, nil))
					}
				}
				out[r].params, out[r].losses = slices.Clone(tr.Model().Params()), rec.losses
			}()
		}
		wg.Wait()
		for r := range size {
			require.NoError(t, errs[r], "rank %d", r)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		run      func(t *testing.T, o testOpts, size int) []outcome
		maxSteps int
	}{
		{"node", node, 0},
		{"node max-steps", node, 3},
		{"link", link, 0},
	} {
		for _, size := range []int{1, 3} {
			t.Run(tc.name+fmt.Sprintf("/P=%d", size), func(t *testing.T) {
				o := testOptions(0.3)
				o.MaxSteps = tc.maxSteps
				var ref []outcome
				for _, ahead := range []int{0, 1, 2} {
					o.Prefetch = ahead
					got := tc.run(t, o, size)
					for r := range got {
						for e := range got[r].epochs {
							clearTimes(&got[r].epochs[e])
						}
					}
					if ahead == 0 {
						ref = got
						require.NotEmpty(t, ref[0].losses)
						if tc.maxSteps > 0 {
							require.Len(t, ref[0].losses, tc.maxSteps*len(ref[0].epochs))
						}
						continue
					}
					for r := range got {
						assert.Equal(t, ref[r].params, got[r].params, "prefetch %d rank %d: weights", ahead, r)
						assert.Equal(t, ref[r].losses, got[r].losses, "prefetch %d rank %d: step losses", ahead, r)
						assert.Equal(t, ref[r].epochs, got[r].epochs, "prefetch %d rank %d: epoch figures", ahead, r)
					}
				}
			})
		}
	}
}

// TestPrefetchFailuresAgreed: with batches fetched ahead, a batch failure
// on one rank, a NaN loss and a bad batch still stop every rank at the
// failing step with the same errors as without prefetch (the failing
// batch was fetched during the previous step; no rank is left waiting).
func TestPrefetchFailuresAgreed(t *testing.T) {
	g := newSynthGraph(12, 200, 8, 4)
	for _, tc := range []struct {
		name    string
		prepare func(rank int, s *memSource, tr *Trainer)
		want    []string // per rank
	}{
		{"batch failure", func(rank int, s *memSource, tr *Trainer) {
			if rank == 2 {
				s.failEpoch, s.failStep = 1, 2
			}
		}, []string{"other rank(s) failed", "other rank(s) failed", "injected failure on rank 2"}},
		{"nan", func(rank int, s *memSource, tr *Trainer) {
			if rank == 0 {
				s.poisonEpoch, s.poisonStep = 1, 2
			}
		}, []string{"NaN", "NaN", "NaN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refSteps := int64(-1)
			for _, ahead := range []int{0, 1, 3} {
				o := testOptions(0)
				o.Prefetch = ahead
				runs := runRanks(t, g, o, 3, 30, 3, tc.prepare)
				for r, run := range runs {
					require.Error(t, run.err, "prefetch %d rank %d", ahead, r)
					assert.Contains(t, run.err.Error(), tc.want[r], "prefetch %d rank %d", ahead, r)
					assert.Contains(t, run.err.Error(), "epoch 2 step 3/", "prefetch %d rank %d", ahead, r)
					if refSteps < 0 {
						refSteps = run.tr.Step()
					}
					assert.Equal(t, refSteps, run.tr.Step(), "prefetch %d rank %d: optimizer steps taken", ahead, r)
				}
			}
		})
	}
}

// TestPrefetchRejectsNegative: a negative depth is refused when the
// trainer is built.
func TestPrefetchRejectsNegative(t *testing.T) {
	o := testOptions(0)
	o.Prefetch = -1
	_, err := newTrainer(o, LocalReducer{}, newMemSource(newSynthGraph(1, 50, 8, 4), 0, 1, o.Seed, []int{3}, 10))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "Prefetch -1 must be 0 (off)"), err.Error())
}
