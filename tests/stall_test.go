package tests

import (
	"context"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stallTimeout is the --timeout of the stall tests: short, so that the
// tests are quick, and long enough that no live rank of these small jobs
// waits that long for another.
const stallTimeout = 5 * time.Second

// stallLine matches the watchdog's report: the reporting rank's tag, the
// operation and the phase, and the ranks not heard from.
var stallLine = regexp.MustCompile(`^\[rank (\d+)/\d+\] fatal: .*stalled: rank \d+ waited [0-9.]+s in (MPI_\w+)[^;]* \(phase ([^)]*)\); not heard from: (ranks? [0-9, ]+) `)

// TestStalledRankEndsJob: a rank stopped with SIGSTOP at a known point of
// train or predict (held there, so the moment is certain) ends the job
// within --timeout + 10 s with one line naming the operation the others
// waited in, the phase, and the stopped rank. When rank 0 is the one
// stopped, another rank reports.
func TestStalledRankEndsJob(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	work := t.TempDir()
	ckpt := filepath.Join(work, "ckpt")
	trainArgs := func(ranks int, extra ...string) []string {
		return append([]string{bin, "train", "--parts", g.parts[ranks], "--fanout", "5,5", "--batch", "64", "--hidden", "16",
			"--quiet", "--timeout", stallTimeout.String()}, extra...)
	}
	res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: trainArgs(2, "--epochs", "1", "--checkpoint", ckpt)})
	// The next epoch's first collective: the gradients' Allreduce, or with
	// MPICH (whose one-sided reads pass a gate) the sampler's first read.
	trainWaits := []string{"MPI_Allreduce", "MPI_Get"}
	require.NoError(t, res.Err, "train for the checkpoint:\n%s", tail(res.Output, 20))

	tests := []struct {
		name   string
		ranks  int
		point  string
		stop   int
		args   []string
		phase  string   // the phase the report names (a prefix)
		waitIn []string // the operations the other ranks may wait in
	}{
		{"train", 2, "train-epoch:1", 1, trainArgs(2, "--epochs", "3"), "epoch 2 train/", trainWaits},
		{"train, rank 0 of 3 stopped", 3, "train-epoch:1", 0, trainArgs(3, "--epochs", "3"), "epoch 2 train/", trainWaits},
		{"predict", 2, "predict-infer", 1, []string{bin, "predict", "--parts", g.parts[2], "--checkpoint", ckpt,
			"--out", filepath.Join(work, "pred1.csv"), "--timeout", stallTimeout.String()}, "predict/", []string{"MPI_Allreduce"}},
		{"predict, rank 0 stopped", 2, "predict-infer", 0, []string{bin, "predict", "--parts", g.parts[2], "--checkpoint", ckpt,
			"--out", filepath.Join(work, "pred0.csv"), "--timeout", stallTimeout.String()}, "predict/", []string{"MPI_Allreduce"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hj := startHeldMPI(t, tt.point, tt.stop, tt.ranks, tt.args...)
			pid := hj.await(t)
			require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
			stopped := time.Now()
			code := hj.wait(t, 2*time.Minute) // fails the test on a hang
			took := time.Since(stopped)
			out := hj.output()
			require.NotEqual(t, 0, code, "the job succeeded with rank %d stopped:\n%s", tt.stop, tail(out, 20))
			assert.Less(t, took, stallTimeout+10*time.Second, "the job took %v to end after the stop", took)
			t.Logf("the job ended %.1f s after the SIGSTOP", took.Seconds())

			var reports []string
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "stalled:") {
					reports = append(reports, line)
				}
			}
			require.Len(t, reports, 1, "want one report line:\n%s", tail(out, 20))
			m := stallLine.FindStringSubmatch(reports[0])
			require.NotNil(t, m, "report %q", reports[0])
			reporter, _ := strconv.Atoi(m[1])
			assert.NotEqual(t, tt.stop, reporter, "the stopped rank cannot report")
			if tt.stop == 0 {
				assert.Equal(t, 1, reporter, "the lowest waiting rank reports")
			}
			assert.Contains(t, tt.waitIn, m[2])
			assert.True(t, strings.HasPrefix(m[3], tt.phase), "phase %q, want %q...", m[3], tt.phase)
			assert.Equal(t, "rank "+strconv.Itoa(tt.stop), m[4])
			assert.NotContains(t, out, "goroutine ", "a Go stack trace")
		})
	}
}

// TestSlowRankNotKilled: a live rank that is slow — 4 ranks on the 2
// cores of a machine kept busy by 2 spinning threads, and one rank held for
// seconds after its first epoch — is not taken for a stalled one at the
// default --timeout: the job completes.
func TestSlowRankNotKilled(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			for ctx.Err() == nil {
				for i := 0; i < 1_000_000; i++ {
				}
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()

	const point, slow = "train-epoch:1", 3
	hj := startHeldMPI(t, point, slow, 4, bin, "train", "--parts", g.parts[4],
		"--fanout", "5,5", "--batch", "64", "--hidden", "16", "--epochs", "3", "--quiet")
	hj.await(t)
	// The other ranks wait for the held one in their next collective.
	time.Sleep(3 * time.Second)
	hj.release(t)
	require.Equal(t, 0, hj.wait(t, 4*time.Minute), "%s", tail(hj.output(), 20))
	assert.NotContains(t, hj.output(), "stalled:")
	assert.Contains(t, hj.output(), "final: epochs=3")
}
