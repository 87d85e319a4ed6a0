package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrainRefusesUnrunnable: settings that cannot run (a model that does
// not fit in memory, a global batch that overflows, absurd --threads, a
// split without training nodes) end every rank quickly with one clear
// message naming the cause, before anything large is allocated, and with
// no Go crash trace.
func TestTrainRefusesUnrunnable(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()

	// The generated dataset plus a split whose training list is empty.
	work := t.TempDir()
	data := filepath.Join(work, "data")
	require.NoError(t, exec.Command("cp", "-r", filepath.Join(g.dir, "data"), data).Run())
	src := filepath.Join(data, "split", "random")
	notrain := filepath.Join(data, "split", "notrain")
	require.NoError(t, os.MkdirAll(notrain, 0o755))
	for _, f := range []string{"train.csv.gz", "valid.csv.gz", "test.csv.gz"} {
		require.NoError(t, exec.Command("cp", filepath.Join(src, f), notrain).Run())
	}
	// An empty gzip member: a valid, empty node list.
	require.NoError(t, exec.Command("sh", "-c", "printf '' | gzip > "+filepath.Join(notrain, "train.csv.gz")).Run())
	parts := filepath.Join(work, "parts-notrain")
	out, err := exec.Command(bin, "partition", "--data", data, "--split", "notrain", "--parts", "2", "--out", parts).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "warning: split notrain has no training nodes")

	train := func(args ...string) []string {
		return append([]string{bin, "train", "--parts", g.parts[2], "--epochs", "1", "--quiet"}, args...)
	}
	// A checkpoint for the predict cases.
	ckpt := filepath.Join(work, "ckpt")
	res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--parts", g.parts[2], "--epochs", "1",
		"--hidden", "8", "--quiet", "--checkpoint", ckpt}})
	require.NoError(t, res.Err, "%s", tail(res.Output, 20))
	predict := func(args ...string) []string {
		return append([]string{bin, "predict", "--parts", g.parts[2], "--checkpoint", ckpt, "--out", filepath.Join(work, "p.csv")}, args...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"hidden 1e9", train("--hidden", "1000000000"),
			[]string{"model needs ~", "parameters ", "Adam ", "activations ", "available", "lower --hidden, --batch or --fanout"}},
		{"hidden beyond any machine", train("--hidden", "100000000000000"), []string{"more than any machine can address"}},
		{"batch overflow", train("--batch", "4611686018427387904"), []string{"--batch 4611686018427387904 x 2 ranks is more than"}},
		{"threads", train("--threads", "100000"), []string{"--threads 100000: more than"}},
		{"no training nodes", []string{bin, "train", "--parts", parts, "--epochs", "1", "--quiet"},
			[]string{"split notrain of " + parts + " has no training nodes"}},
		{"predict batch overflow", predict("--batch", "4611686018427387904"), []string{"predict: --batch 4611686018427387904 x 2 ranks is more than"}},
		{"predict threads", predict("--threads", "100000"), []string{"predict: --threads 100000: more than"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := h.MPI(Job{Ranks: 2, Args: tc.args, Timeout: time.Minute})
			require.Error(t, res.Err, "%s", tail(res.Output, 20))
			require.False(t, res.TimedOut, "hang:\n%s", tail(res.Output, 20))
			for _, w := range tc.want {
				assert.Contains(t, res.Output, w)
			}
			assert.NotContains(t, res.Output, "goroutine ")
			assert.NotContains(t, res.Output, "transport:", "refused before the feature store is opened")
		})
	}
}
