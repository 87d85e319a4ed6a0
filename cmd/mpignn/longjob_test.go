package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/train"
)

// TestResumeFlag: --resume alone keeps its meaning, and auto is accepted
// as --resume auto (two arguments, as docs/long-jobs.md writes it) and
// --resume=auto; a --resume that is the value of another flag is left
// alone.
func TestResumeFlag(t *testing.T) {
	tests := []struct {
		args         []string
		resume, auto bool
		err          string
	}{
		{[]string{"--parts", "p"}, false, false, ""},
		{[]string{"--parts", "p", "--checkpoint", "c", "--resume"}, true, false, ""},
		{[]string{"--parts", "p", "--checkpoint", "c", "--resume", "auto"}, false, true, ""},
		{[]string{"--parts", "p", "--resume", "auto", "--checkpoint", "c"}, false, true, ""},
		{[]string{"--parts", "p", "--checkpoint", "c", "-resume=auto"}, false, true, ""},
		{[]string{"--parts", "p", "--checkpoint", "c", "--resume=true"}, true, false, ""},
		{[]string{"--parts", "p", "--checkpoint", "c", "--resume=false"}, false, false, ""},
		{[]string{"--parts", "p", "--checkpoint", "c", "--resume=maybe"}, false, false, "want true, false or auto"},
		{[]string{"--parts", "p", "--metrics", "--resume", "auto"}, false, false, `unexpected argument "auto"`},
		{[]string{"--parts", "p", "--checkpoint", "c", "--resume", "--", "auto"}, true, false, `unexpected argument "auto"`},
	}
	for _, tc := range tests {
		f, err := parseTrain(tc.args)
		if tc.err != "" {
			require.Error(t, err, "%v", tc.args)
			assert.Contains(t, err.Error(), tc.err, "%v", tc.args)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.resume, f.cfg.Resume, "%v", tc.args)
		assert.Equal(t, tc.auto, f.cfg.ResumeAuto, "%v", tc.args)
	}
}

// TestCheckpointEvery: a bare count is epochs, NNNsteps steps and a Go
// duration time; anything else is refused naming the flag.
func TestCheckpointEvery(t *testing.T) {
	tests := []struct {
		arg      string
		epochs   int
		steps    int64
		interval time.Duration
		err      string
	}{
		{"1", 1, 0, 0, ""},
		{"3", 3, 0, 0, ""},
		{"500steps", 0, 500, 0, ""},
		{"500s", 0, 0, 500 * time.Second, ""},
		{"30m", 0, 0, 30 * time.Minute, ""},
		{"1h30m", 0, 0, 90 * time.Minute, ""},
		{"0", 0, 0, 0, "--checkpoint-every 0 must be positive"},
		{"0steps", 0, 0, 0, "want epochs (5), steps (500steps) or a duration"},
		{"-5m", 0, 0, 0, "must be positive"},
		{"5 steps", 0, 0, 0, "want epochs"},
		{"often", 0, 0, 0, `--checkpoint-every "often"`},
	}
	for _, tc := range tests {
		f, err := parseTrain([]string{"--parts", "p", "--checkpoint-every", tc.arg})
		if tc.err != "" {
			require.Error(t, err, tc.arg)
			assert.Contains(t, err.Error(), tc.err, tc.arg)
			continue
		}
		require.NoError(t, err, tc.arg)
		ro := f.cfg.Run
		assert.Equal(t, tc.epochs, ro.CheckpointEvery, tc.arg)
		assert.Equal(t, tc.steps, ro.CheckpointSteps, tc.arg)
		assert.Equal(t, tc.interval, ro.CheckpointInterval, tc.arg)
	}
}

// TestAdoptResumeFlags: the checkpoint's settings fill the flags not given;
// given flags are kept (and compared later); task- and model-specific
// flags follow the task and model in effect.
func TestAdoptResumeFlags(t *testing.T) {
	ck := [][2]string{{"hidden", "256"}, {"lr", "0.005"}, {"model", "gat"}, {"heads", "4"}, {"task", "node"},
		{"split", "public"}, {"fanout", "10,5"}, {"eval", "sampled"}}
	f, err := parseTrainResumed([]string{"--parts", "p", "--resume", "--checkpoint", "c", "--epochs", "9"}, ck)
	require.NoError(t, err)
	c := f.cfg
	assert.Equal(t, 256, c.Model.Hidden)
	assert.Equal(t, "gat", c.Model.Arch)
	assert.Equal(t, 4, c.Model.Opts.Int("heads"))
	assert.Equal(t, []int{10, 5}, c.Loader.Fanouts)
	assert.Equal(t, "public", c.Loader.Split)
	assert.Equal(t, 9, c.Run.Epochs, "--epochs is the run's own")
	assert.InDelta(t, 0.005, c.Trainer.Adam.LR, 1e-9)

	// An explicit --model sage: --heads is not taken (it would be refused
	// as a GAT-only flag); the comparison names --model instead.
	f, err = parseTrainResumed([]string{"--parts", "p", "--model", "sage", "--hidden", "64"}, ck)
	require.NoError(t, err)
	assert.Equal(t, "sage", f.cfg.Model.Arch)
	assert.Equal(t, 64, f.cfg.Model.Hidden, "an explicit flag is kept")
	assert.Empty(t, f.cfg.Model.Opts)

	// A checkpoint of a model that reads edge features gives back
	// --use-edge-feat, but not to an explicit model that reads none (the
	// comparison names --model).
	for _, arch := range train.EdgeArchs() {
		f, err = parseTrainResumed([]string{"--parts", "p"}, [][2]string{{"model", arch}, {"use-edge-feat", "true"}})
		require.NoError(t, err)
		assert.True(t, f.cfg.UseEdgeFeat, arch)
	}
	f, err = parseTrainResumed([]string{"--parts", "p", "--model", "sage"}, [][2]string{{"model", "gat"}, {"use-edge-feat", "true"}})
	require.NoError(t, err)
	assert.False(t, f.cfg.UseEdgeFeat, "not taken for sage")

	// Residual, norm and jk come back from the checkpoint; one given
	// explicitly stands (the comparison then names it).
	between := [][2]string{{"model", "gcn"}, {"residual", "true"}, {"norm", "layer"}, {"jk", "cat"}}
	f, err = parseTrainResumed([]string{"--parts", "p"}, between)
	require.NoError(t, err)
	assert.True(t, f.cfg.Model.Residual)
	assert.Equal(t, "layer", f.cfg.Model.Norm)
	assert.Equal(t, "cat", f.cfg.Model.JK)
	f, err = parseTrainResumed([]string{"--parts", "p", "--jk", "max"}, between)
	require.NoError(t, err)
	assert.Equal(t, "max", f.cfg.Model.JK)

	// A link checkpoint's flags are not taken for an explicit node task.
	link := [][2]string{{"task", "link"}, {"neg-ratio", "3"}, {"decoder", "mlp"}}
	f, err = parseTrainResumed([]string{"--parts", "p", "--task", "node"}, link)
	require.NoError(t, err)
	assert.Empty(t, f.cfg.Task)
	f, err = parseTrainResumed([]string{"--parts", "p"}, link)
	require.NoError(t, err)
	assert.Equal(t, "link", f.cfg.Task)
	assert.Equal(t, 3, f.cfg.Link.NegRatio)
	assert.Equal(t, "mlp", f.cfg.Model.Decoder)

	// The checkpoint's global batch, taken as --batch (a rank count that
	// divides it) or --global-batch; either given explicitly stands, and
	// the other spelling is not taken beside it.
	for _, tc := range []struct {
		name          string
		args          []string
		ck            [2]string
		batch, global int
	}{
		{"per rank", []string{"--parts", "p"}, [2]string{"batch", "32"}, 32, 0},
		{"global", []string{"--parts", "p"}, [2]string{"global-batch", "64"}, 0, 64},
		{"global link", []string{"--parts", "p", "--task", "link"}, [2]string{"global-batch", "600"}, 0, 600},
		{"explicit batch", []string{"--parts", "p", "--batch", "16"}, [2]string{"global-batch", "64"}, 16, 0},
		{"explicit global", []string{"--parts", "p", "--global-batch", "48"}, [2]string{"batch", "32"}, 0, 48},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseTrainResumed(tc.args, [][2]string{tc.ck})
			require.NoError(t, err)
			assert.Equal(t, tc.batch, f.cfg.Loader.Batch)
			assert.Equal(t, tc.global, f.cfg.Loader.GlobalBatch)
		})
	}
}

// TestStopFile: rank 0 stops once --stop-file exists (a request made before
// it looked counts too); other ranks leave the file to rank 0, whose
// request reaches them through the step's Allreduce.
func TestStopFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "STOP")
	r0 := listenStopSignals(true, 0, file)
	defer r0.Close()
	r1 := listenStopSignals(true, 1, file)
	defer r1.Close()
	time.Sleep(3 * stopFilePoll) // several polls that find nothing
	assert.False(t, r0.Requested())
	require.NoError(t, os.WriteFile(file, []byte("SIGUSR1 to the batch script\n"), 0o644))
	deadline := time.Now().Add(30 * time.Second)
	for !r0.Requested() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.True(t, r0.Requested(), "rank 0 did not see the stop file")
	assert.False(t, r1.Requested(), "rank 1 reads no stop file")

	_, err := parseTrain([]string{"--parts", "p", "--stop-file", file})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--stop-file needs --checkpoint")
}
