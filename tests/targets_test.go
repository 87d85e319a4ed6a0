package tests

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// summaryLine reads the summary line of a metrics file.
func summaryLine(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &m))
	require.Equal(t, "summary", m["type"], "last line of %s", path)
	out := map[string]float64{}
	for k, v := range m {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// checkPython returns Debian's python3 when it imports every module of
// modules (numpy, sklearn, ...), or skips the test naming the packages
// scripts/deps.sh installs for them.
func checkPython(t *testing.T, modules, packages string) string {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import "+modules).Run() != nil {
		t.Skipf("no /usr/bin/python3 with %s (scripts/deps.sh installs %s): the figures are not recomputed", modules, packages)
	}
	return "/usr/bin/python3"
}

// TestTargetTasks: multi-label and regression targets end to end. A
// generated data set shaped like ogbn-proteins (12 binary tasks, 8 edge
// features, no node features) and one with 3 real targets are
// partitioned and trained with --global-batch on every rank count: the
// same model within the global-batch tolerances; the run's reported test
// ROC-AUC (RMSE, MAE) equals scikit-learn's (numpy's) over predict's
// output to 1e-6; a resume continues bit for bit.
func TestTargetTasks(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	py := checkPython(t, "numpy, sklearn", "python3-numpy python3-sklearn")
	for _, tc := range []struct {
		kind, targets string
		gen, part     []string
		figures       []string
	}{
		// ogbn-proteins' shape: binary tasks, edge features, no node
		// features (the nodes' inputs are their in-edges' mean), whole
		// species held out.
		{"multilabel", "multilabel:12", []string{"--edge-feat-dim", "8", "--no-node-feat", "--species", "8"},
			[]string{"--node-feat", "from-edges:mean", "--split", "species"}, []string{"rocauc"}},
		{"regression", "regression:3", nil, nil, []string{"rmse", "mae"}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			work := t.TempDir()
			data := filepath.Join(work, "data")
			msg, err := exec.Command(bin, append([]string{"gen", "--nodes", "1500", "--avg-degree", "8", "--classes", "6", "--feat-dim", "16",
				"--targets", tc.targets, "--seed", "3", "--out", data}, tc.gen...)...).CombinedOutput()
			require.NoError(t, err, "gen: %s", msg)
			args := []string{"--task", tc.kind, "--global-batch", "150", "--fanout", "5,5", "--hidden", "16", "--epochs", "3", "--lr", "0.05",
				"--eval", "layer-wise", "--seed", "1", "--quiet"}
			var first globalBatchRun
			var lastParts, lastCk string
			var lastP int
			for _, p := range h.Ranks {
				parts := filepath.Join(work, "p"+strconv.Itoa(p))
				msg, err := exec.Command(bin, append([]string{"partition", "--data", data, "--parts", strconv.Itoa(p), "--out", parts}, tc.part...)...).CombinedOutput()
				require.NoError(t, err, "partition: %s", msg)
				run, ck, _ := trainGlobalBatchAt(t, bin, work, p, nil, append([]string{"--parts", parts}, args...)...)
				lastParts, lastCk, lastP = parts, ck, p
				if first.params == nil {
					first = run
					continue
				}
				sameModel(t, tc.kind, first, run)
			}
			sum := summaryLine(t, filepath.Join(work, "m-"+strconv.Itoa(lastP)+".jsonl"))
			pred := filepath.Join(work, "pred.npy")
			pargs := []string{bin, "predict", "--task", tc.kind, "--parts", lastParts, "--checkpoint", lastCk, "--out", pred}
			if tc.kind == "multilabel" {
				// Logits, not probabilities: a float32 sigmoid may tie
				// nearby logits, which ROC-AUC counts.
				pargs = append(pargs, "--logits")
			}
			res := h.MPI(Job{Ranks: lastP, Timeout: 4 * time.Minute, Args: pargs})
			require.NoError(t, res.Err, tail(res.Output, 20))
			split := "random"
			if slices.Contains(tc.part, "species") {
				split = "species"
			}
			out, err := exec.Command(py, filepath.Join(h.Root, "scripts", "target_check.py"), "--pred", pred, "--data", data,
				"--kind", tc.kind, "--split", split).CombinedOutput()
			require.NoError(t, err, "target_check.py: %s", out)
			var got map[string]float64
			require.NoError(t, json.Unmarshal(out, &got), "%s", out)
			for _, f := range tc.figures {
				want, ok := sum["test_"+f]
				require.True(t, ok, "summary has no test_%s: %v", f, sum)
				t.Logf("%s on %d ranks: test %s %.6f reported, %.6f recomputed", tc.kind, lastP, f, want, got[f])
				assert.InDelta(t, want, got[f], 1e-6, "test %s", f)
			}
			if tc.kind == "multilabel" {
				assert.Greater(t, sum["test_rocauc"], 0.55, "the planted tasks are learnable (chance is 0.5)")
			}
			// The other task's prediction is refused with one line.
			res = h.MPI(Job{Ranks: lastP, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--parts", lastParts, "--checkpoint", lastCk, "--out", filepath.Join(work, "x.csv")}})
			require.Error(t, res.Err)
			assert.Contains(t, res.Output, "holds a model of "+tc.kind+", not of node: predict with --task "+tc.kind)
		})
	}
}

// TestTargetResume: a regression run stopped after two epochs and resumed
// for the third trains the uninterrupted run's weights bit for bit.
func TestTargetResume(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data, parts := filepath.Join(work, "data"), filepath.Join(work, "parts")
	msg, err := exec.Command(bin, "gen", "--nodes", "800", "--avg-degree", "6", "--classes", "4", "--feat-dim", "8",
		"--targets", "regression:2", "--seed", "5", "--out", data).CombinedOutput()
	require.NoError(t, err, "gen: %s", msg)
	msg, err = exec.Command(bin, "partition", "--data", data, "--parts", "2", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition: %s", msg)
	run := func(ck string, extra ...string) string {
		args := append([]string{bin, "train", "--task", "regression", "--parts", parts, "--checkpoint", ck, "--batch", "40",
			"--fanout", "4,4", "--hidden", "8", "--seed", "2"}, extra...)
		res := h.MPI(Job{Ranks: 2, Timeout: 4 * time.Minute, Args: args})
		require.NoError(t, res.Err, tail(res.Output, 20))
		i := strings.LastIndex(res.Stdout, "final: ")
		require.GreaterOrEqual(t, i, 0, res.Stdout)
		return strings.TrimSpace(res.Stdout[i:])
	}
	whole := run(filepath.Join(work, "a"), "--epochs", "3")
	run(filepath.Join(work, "b"), "--epochs", "2")
	resumed := run(filepath.Join(work, "b"), "--epochs", "3", "--resume")
	assert.Equal(t, whole, resumed)
	assert.Contains(t, whole, "best_val_rmse=")
}

// TestTargetBadInput: each bad real-target input is one line naming the
// file (and line) or the flag.
func TestTargetBadInput(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	msg, err := exec.Command(bin, "gen", "--nodes", "200", "--avg-degree", "4", "--classes", "3", "--feat-dim", "4",
		"--targets", "multilabel:3", "--seed", "1", "--out", data).CombinedOutput()
	require.NoError(t, err, "gen: %s", msg)
	// A ragged row: line 5 loses a column.
	label := filepath.Join(data, "raw", "node-label.csv.gz")
	rows := readGzipLines(t, label)
	rows[4] = rows[4][:strings.LastIndex(rows[4], ",")]
	bad := filepath.Join(work, "bad")
	require.NoError(t, os.CopyFS(bad, os.DirFS(data)))
	writeGzipLines(t, filepath.Join(bad, "raw", "node-label.csv.gz"), rows)
	out, err := exec.Command(bin, "partition", "--data", bad, "--parts", "1", "--out", filepath.Join(work, "pb")).CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(string(out)), "\n")+1, "one line: %s", out)
	assert.Contains(t, string(out), "node-label.csv.gz line 5: 2 values, want 3 (the width of the first row)")

	out, err = exec.Command(bin, "partition", "--data", data, "--parts", "1", "--labels", "bits", "--out", filepath.Join(work, "pc")).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "--labels bits: want classes or real")

	// A class task on real targets, and a real-target task on classes.
	parts := filepath.Join(work, "p")
	msg, err = exec.Command(bin, "partition", "--data", data, "--parts", "1", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition: %s", msg)
	res := h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--parts", parts, "--epochs", "1"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "has 3 real targets per node, not classes: train it with --task multilabel or regression")
	cls := filepath.Join(work, "classes")
	msg, err = exec.Command(bin, "gen", "--nodes", "200", "--avg-degree", "4", "--classes", "3", "--feat-dim", "4", "--seed", "1", "--out", cls).CombinedOutput()
	require.NoError(t, err, "gen: %s", msg)
	msg, err = exec.Command(bin, "partition", "--data", cls, "--parts", "1", "--out", cls+"-p").CombinedOutput()
	require.NoError(t, err, "partition: %s", msg)
	res = h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--task", "regression", "--parts", cls + "-p", "--epochs", "1"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "--task regression needs real node targets")
}

// readGzipLines reads a gzipped text file's lines.
func readGzipLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// writeGzipLines writes lines as a gzipped text file.
func writeGzipLines(t *testing.T, path string, lines []string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(strings.Join(lines, "\n") + "\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// TestTargetTorchReference: the loss of a real-target or edge model's
// first step equals the loss of the same weights in plain PyTorch. `train
// --epochs 0` writes the initial weights, `export` hands them to PyTorch
// (scripts/pyg_check.py --target-loss builds the model from the export's
// constructor and computes MSELoss, BCEWithLogitsLoss or cross-entropy over
// the full graph's outputs of the training nodes, or of the training edges
// that `inspect --link-pairs train` lists), and a one-step run over the
// whole training split with every neighbour (--fanout -1,-1) and no dropout
// reports the loss of those weights as its epoch loss.
func TestTargetTorchReference(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	py := torchPython(t)
	for _, tc := range []struct {
		name, task, labels string
		part               []string
	}{
		{"regression", "regression", "--targets=regression:3", nil},
		{"multilabel", "multilabel", "--targets=multilabel:3", nil},
		{"edge-values", "edge", "--edge-labels=regression:2", []string{"--link-split", "random:0.8,0.1,0.1"}},
		{"edge-classes", "edge", "--edge-labels=classes:3", []string{"--link-split", "random:0.8,0.1,0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			data, parts := filepath.Join(work, "data"), filepath.Join(work, "parts")
			msg, err := exec.Command(bin, "gen", "--nodes", "400", "--avg-degree", "6", "--classes", "4", "--feat-dim", "8",
				tc.labels, "--seed", "7", "--out", data).CombinedOutput()
			require.NoError(t, err, "gen: %s", msg)
			msg, err = exec.Command(bin, append([]string{"partition", "--data", data, "--parts", "1", "--out", parts}, tc.part...)...).CombinedOutput()
			require.NoError(t, err, "partition: %s", msg)
			flags := []string{bin, "train", "--task", tc.task, "--parts", parts, "--fanout", "-1,-1", "--hidden", "16", "--dropout", "0",
				"--input-dropout", "0", "--seed", "1", "--global-batch", "100000", "--quiet"}
			ck, metricsFile := filepath.Join(work, "ck0"), filepath.Join(work, "m.jsonl")
			res := h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: append(flags, "--epochs", "0", "--checkpoint", ck)})
			require.NoError(t, res.Err, tail(res.Output, 20))
			res = h.MPI(Job{Ranks: 1, Timeout: 2 * time.Minute, Args: append(flags, "--epochs", "1", "--max-steps", "1", "--metrics", metricsFile)})
			require.NoError(t, res.Err, tail(res.Output, 20))
			state := filepath.Join(work, "model.safetensors")
			msg, err = exec.Command(bin, "export", "--checkpoint", ck, "--out", state).CombinedOutput()
			require.NoError(t, err, "export: %s", msg)
			args := []string{filepath.Join(h.Root, "scripts", "pyg_check.py"), "--data", data, "--state", state, "--target-loss", tc.task}
			if tc.task == "edge" {
				pairs := filepath.Join(work, "train.csv")
				msg, err = exec.Command(bin, "inspect", parts, "--link-pairs", "train", "--out", pairs).CombinedOutput()
				require.NoError(t, err, "inspect: %s", msg)
				args = append(args, "--pairs", pairs)
			}
			out, err := exec.Command(py, args...).CombinedOutput()
			require.NoError(t, err, "pyg_check.py: %s", out)
			var ref struct {
				Loss         float64
				Nodes, Edges int64
			}
			require.NoError(t, json.Unmarshal(out, &ref), "%s", out)
			b, err := os.ReadFile(metricsFile)
			require.NoError(t, err)
			var epoch struct {
				Loss  float64
				Seeds int64
			}
			require.NoError(t, json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &epoch))
			require.EqualValues(t, ref.Nodes+ref.Edges, epoch.Seeds, "one step over every training node (edge)")
			t.Logf("%s: first-step loss %.9f, PyTorch %.9f", tc.name, epoch.Loss, ref.Loss)
			assert.InDelta(t, ref.Loss, epoch.Loss, 1e-5)
		})
	}
}

// TestTargetsChunked: real targets travel through the chunked format:
// convert writes a multi-column label file as (nodes, K) float "label"
// chunks, and the distributed partitioner (2 ranks) stores every node's
// row with the node, NaN included, which a multilabel run then trains on.
func TestTargetsChunked(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	raw, chunked, parts := filepath.Join(work, "raw"), filepath.Join(work, "chunked"), filepath.Join(work, "parts")
	msg, err := exec.Command(bin, "gen", "--nodes", "1200", "--avg-degree", "6", "--classes", "5", "--feat-dim", "8",
		"--targets", "multilabel:5", "--seed", "9", "--out", raw).CombinedOutput()
	require.NoError(t, err, "gen: %s", msg)
	// Unlabelled values too: every 7th line loses its third value.
	label := filepath.Join(raw, "raw", "node-label.csv.gz")
	rows := readGzipLines(t, label)
	for i := 0; i < len(rows); i += 7 {
		f := strings.Split(rows[i], ",")
		f[2] = "nan"
		rows[i] = strings.Join(f, ",")
	}
	writeGzipLines(t, label, rows)
	msg, err = exec.Command(bin, "convert", "--data", raw, "--out", chunked, "--chunk-nodes", "500").CombinedOutput()
	require.NoError(t, err, "convert: %s", msg)
	res := h.MPI(Job{Ranks: 2, Timeout: 3 * time.Minute, Args: []string{bin, "partition", "--data", chunked, "--parts", "2", "--out", parts}})
	require.NoError(t, res.Err, tail(res.Output, 20))

	d, err := graph.ReadOGB(raw, graph.ReadOptions{})
	require.NoError(t, err)
	require.NotNil(t, d.Targets)
	m, err := partition.LoadMeta(parts)
	require.NoError(t, err)
	require.Equal(t, 5, m.TargetDim)
	require.Zero(t, m.NumClasses)
	seen := 0
	for p := range m.NumParts {
		pt, err := partition.Load(parts, p)
		require.NoError(t, err)
		for i, o := range pt.Orig {
			want, got := d.Targets.Row(o), pt.Targets[i*5:(i+1)*5]
			for k := range want {
				require.True(t, math.Float32bits(want[k]) == math.Float32bits(got[k]) || (want[k] != want[k] && got[k] != got[k]),
					"node %d target %d: want %v, got %v", o, k, want[k], got[k])
			}
			seen++
		}
	}
	assert.EqualValues(t, d.NumNodes, seen)
	res = h.MPI(Job{Ranks: 2, Timeout: 3 * time.Minute, Args: []string{bin, "train", "--task", "multilabel", "--parts", parts, "--epochs", "1", "--quiet"}})
	require.NoError(t, res.Err, tail(res.Output, 20))
	assert.Contains(t, res.Stdout, "best_val_rocauc=")
}
