package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEdgeTask: the edge task end to end, real values and classes. A
// generated graph with planted edge labels is partitioned with a random
// link split on 1 and 2 parts and trained with --global-batch on 1 and 2
// ranks: the same model within the global-batch tolerances; the reported
// test RMSE and MAE (accuracy) equal numpy's over predict's output to
// 1e-6 (scripts/edge_check.py, which reads the labels from the raw data
// itself); a resumed run ends bit for bit where the uninterrupted one
// does; predicting as another task is refused with one line.
func TestEdgeTask(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	py := checkPython(t, "numpy", "python3-numpy")
	for _, tc := range []struct {
		name, labels string
		figures      map[string]string // summary key -> edge_check.py's name
	}{
		{"regression", "regression:2", map[string]string{"test_rmse": "rmse", "test_mae": "mae"}},
		{"classes", "classes:4", map[string]string{"test_acc": "acc", "test_f1_macro": "f1_macro"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			data := filepath.Join(work, "data")
			msg, err := exec.Command(bin, "gen", "--nodes", "1200", "--avg-degree", "8", "--classes", "4", "--feat-dim", "16",
				"--edge-labels", tc.labels, "--seed", "3", "--out", data).CombinedOutput()
			require.NoError(t, err, "gen: %s", msg)
			args := []string{"--task", "edge", "--global-batch", "200", "--fanout", "5,5", "--hidden", "16", "--epochs", "3", "--lr", "0.02",
				"--seed", "1", "--quiet"}
			var first globalBatchRun
			var lastParts, lastCk string
			var lastP int
			for _, p := range []int{1, 2} {
				parts := filepath.Join(work, "p"+strconv.Itoa(p))
				msg, err := exec.Command(bin, "partition", "--data", data, "--parts", strconv.Itoa(p), "--link-split", "random:0.8,0.1,0.1",
					"--out", parts).CombinedOutput()
				require.NoError(t, err, "partition: %s", msg)
				run, ck, _ := trainGlobalBatchAt(t, bin, work, p, nil, append([]string{"--parts", parts}, args...)...)
				lastParts, lastCk, lastP = parts, ck, p
				if first.params == nil {
					first = run
					continue
				}
				sameModel(t, "edge "+tc.name, first, run)
			}
			sum := summaryLine(t, filepath.Join(work, "m-"+strconv.Itoa(lastP)+".jsonl"))
			pred := filepath.Join(work, "pred.csv")
			res := h.MPI(Job{Ranks: lastP, Timeout: 4 * time.Minute, Args: []string{bin, "predict", "--task", "edge", "--parts", lastParts,
				"--checkpoint", lastCk, "--out", pred}})
			require.NoError(t, res.Err, tail(res.Output, 20))
			out, err := exec.Command(py, filepath.Join(h.Root, "scripts", "edge_check.py"), data, pred).CombinedOutput()
			require.NoError(t, err, "edge_check.py: %s", out)
			got := map[string]float64{}
			f := strings.Fields(string(out))
			for i := 0; i+1 < len(f); i += 2 {
				got[f[i]], err = strconv.ParseFloat(f[i+1], 64)
				require.NoError(t, err, "%s", out)
			}
			for key, name := range tc.figures {
				want, ok := sum[key]
				require.True(t, ok, "summary has no %s: %v", key, sum)
				t.Logf("edge %s on %d ranks: %s %.6f reported, %.6f recomputed", tc.name, lastP, key, want, got[name])
				assert.InDelta(t, want, got[name], 1e-6, key)
			}
			if tc.name == "classes" {
				assert.Greater(t, sum["test_acc"], 0.4, "the planted classes are learnable (chance is 0.25)")
			}
			// A node prediction of the edge checkpoint is refused with one
			// line that names the right task.
			res = h.MPI(Job{Ranks: lastP, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--parts", lastParts, "--checkpoint", lastCk,
				"--out", filepath.Join(work, "x.csv")}})
			require.Error(t, res.Err)
			assert.Contains(t, res.Output, "holds an edge model (train --task edge), which does not classify nodes: predict with --task edge")
			if tc.name != "regression" {
				return
			}
			// Stopped after two epochs and resumed for the third: the
			// uninterrupted run's final line, weights digest included.
			run := func(ck string, extra ...string) string {
				res := h.MPI(Job{Ranks: 2, Timeout: 4 * time.Minute, Args: append([]string{bin, "train", "--parts", lastParts, "--checkpoint", ck},
					append(args, extra...)...)})
				require.NoError(t, res.Err, tail(res.Output, 20))
				i := strings.LastIndex(res.Stdout, "final: ")
				require.GreaterOrEqual(t, i, 0, res.Stdout)
				return strings.TrimSpace(res.Stdout[i:])
			}
			whole := run(filepath.Join(work, "a"))
			run(filepath.Join(work, "b"), "--epochs", "2")
			assert.Equal(t, whole, run(filepath.Join(work, "b"), "--resume"))
			assert.Contains(t, whole, "best_val_rmse=")
		})
	}
}

// TestEdgeBadInput: bad edge-task input is one line naming the file (and
// line) or the flags.
func TestEdgeBadInput(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	msg, err := exec.Command(bin, "gen", "--nodes", "200", "--avg-degree", "4", "--classes", "3", "--feat-dim", "4",
		"--edge-labels", "regression:2", "--seed", "1", "--out", data).CombinedOutput()
	require.NoError(t, err, "gen: %s", msg)
	// A ragged row, and a file one row short.
	label := filepath.Join(data, "raw", "edge-label.csv.gz")
	rows := readGzipLines(t, label)
	for _, c := range []struct {
		name string
		rows []string
		want string
	}{
		{"ragged", append(append(append([]string{}, rows[:4]...), rows[4][:strings.LastIndex(rows[4], ",")]), rows[5:]...),
			"edge-label.csv.gz line 5: 1 values, want 2 (the width of the first row)"},
		{"short", rows[:len(rows)-1], "edge-label.csv.gz: " + strconv.Itoa(len(rows)-1) + " label rows, want one per line of edge.csv.gz (" + strconv.Itoa(len(rows)) + ")"},
	} {
		bad := filepath.Join(work, c.name)
		require.NoError(t, os.CopyFS(bad, os.DirFS(data)))
		writeGzipLines(t, filepath.Join(bad, "raw", "edge-label.csv.gz"), c.rows)
		out, err := exec.Command(bin, "partition", "--data", bad, "--parts", "1", "--link-split", "random:0.8,0.1,0.1",
			"--out", filepath.Join(work, "p-"+c.name)).CombinedOutput()
		require.Error(t, err, c.name)
		assert.Equal(t, 1, strings.Count(strings.TrimSpace(string(out)), "\n")+1, "%s: one line: %s", c.name, out)
		assert.Contains(t, string(out), c.want, c.name)
	}
	// The link task's negative flags are refused by name.
	parts := filepath.Join(work, "p")
	msg, err = exec.Command(bin, "partition", "--data", data, "--parts", "1", "--link-split", "random:0.8,0.1,0.1", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition: %s", msg)
	res := h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--task", "edge", "--parts", parts, "--neg-ratio", "3", "--neg-strict", "--epochs", "1"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "--neg-ratio, --neg-strict: --task edge has no negatives")
	// A partition without edge labels.
	msg, err = exec.Command(bin, "gen", "--nodes", "200", "--avg-degree", "4", "--classes", "3", "--feat-dim", "4", "--seed", "1",
		"--out", filepath.Join(work, "plain")).CombinedOutput()
	require.NoError(t, err, "gen: %s", msg)
	msg, err = exec.Command(bin, "partition", "--data", filepath.Join(work, "plain"), "--parts", "1", "--link-split", "random:0.8,0.1,0.1",
		"--out", filepath.Join(work, "pp")).CombinedOutput()
	require.NoError(t, err, "partition: %s", msg)
	res = h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--task", "edge", "--parts", filepath.Join(work, "pp"), "--epochs", "1"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "holds no edge labels")
	// predict --task edge refuses a node checkpoint, naming its task.
	msg, err = exec.Command(bin, "partition", "--data", filepath.Join(work, "plain"), "--parts", "1", "--out", filepath.Join(work, "np")).CombinedOutput()
	require.NoError(t, err, "partition: %s", msg)
	ck := filepath.Join(work, "nck")
	res = h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--parts", filepath.Join(work, "np"), "--epochs", "1", "--checkpoint", ck, "--quiet"}})
	require.NoError(t, res.Err, tail(res.Output, 20))
	res = h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--task", "edge", "--parts", parts, "--checkpoint", ck, "--out", filepath.Join(work, "y.csv")}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "predict --task edge: checkpoint "+ck+" holds a node model, not an edge model: predict with --task node")
}
