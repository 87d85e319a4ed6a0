package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mpignn/train/metrics"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkParts partitions the CLI test graph with a random link split into
// parts parts (a fresh directory per call).
func linkParts(t *testing.T, bin, data string, parts int, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "link-parts")
	args := append([]string{"partition", "--data", data, "--parts", strconv.Itoa(parts), "--out", out,
		"--link-split", "random:0.8,0.1,0.1", "--link-negs", "50", "--link-pool", "2000"}, extra...)
	b, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "partition: %s", b)
	return out
}

var finalWeights = regexp.MustCompile(`weights=([0-9a-f]+)`)

// TestLinkCLI trains a link predictor with the real binary on 2 ranks over
// both transports (identical weights: the transports sample identically),
// then writes embeddings and scores pairs with the checkpoint, and refuses
// the link flags where they cannot apply.
func TestLinkCLI(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	parts := linkParts(t, bin, filepath.Join(g.dir, "data"), 2)
	work := t.TempDir()
	ckpt := filepath.Join(work, "ckpt")
	metrics := filepath.Join(work, "m.jsonl")
	args := func(transport string, more ...string) []string {
		return append([]string{bin, "train", "--task", "link", "--parts", parts, "--fanout", "5,5", "--batch", "128",
			"--hidden", "32", "--epochs", "3", "--lr", "0.01", "--seed", "4", "--neg-ratio", "2", "--neg-strict",
			"--decoder", "dot", "--dropout", "0", "--transport", transport, "--quiet"}, more...)
	}
	var digests []string
	var trained []float64 // test AUC, MRR, Hits@10 and Hits@50 of the checkpointed run
	for _, tr := range []string{"auto", "alltoallv"} {
		more := []string{}
		if tr == "auto" {
			more = []string{"--checkpoint", ckpt, "--metrics", metrics}
		}
		res := h.MPI(Job{Ranks: 2, Args: args(tr, more...), Timeout: 3 * time.Minute})
		require.NoError(t, res.Err, "train --transport %s:\n%s", tr, tail(res.Output, 30))
		m := regexp.MustCompile(`test_auc=([0-9.]+) test_mrr=([0-9.]+)`).FindStringSubmatch(res.Output)
		require.NotNil(t, m, "no test figures in the output:\n%s", tail(res.Output, 20))
		auc, _ := strconv.ParseFloat(m[1], 64)
		// The planted classes make same-class pairs likelier: the model
		// must beat chance clearly.
		assert.Greater(t, auc, 0.65, "test AUC after 3 epochs")
		digests = append(digests, finalWeights.FindStringSubmatch(res.Output)[1])
		if tr == "auto" {
			trained = finalLinkFigures(t, res.Output)
		}
	}
	assert.Equal(t, digests[0], digests[1], "rma and alltoallv trained different weights")

	lines, err := os.ReadFile(metrics)
	require.NoError(t, err)
	for _, key := range []string{`"val_auc"`, `"val_mrr"`, `"test_auc"`, `"test_mrr"`, `"test_hits@10"`, `"test_hits@100"`, `"best_val_mrr"`} {
		assert.Contains(t, string(lines), key)
	}

	npy := filepath.Join(work, "emb.npy")
	res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "embed", "--parts", parts, "--checkpoint", ckpt, "--out", npy}})
	require.NoError(t, res.Err, "embed:\n%s", tail(res.Output, 20))
	st, err := os.Stat(npy)
	require.NoError(t, err)
	assert.EqualValues(t, 128+3000*32*4, st.Size(), "3000 rows of 32 float32 after a 128-byte header")

	pairs := filepath.Join(work, "pairs.csv")
	require.NoError(t, os.WriteFile(pairs, []byte("src,dst\n0,1\n2,2999\n"), 0o644))
	scores := filepath.Join(work, "scores.csv")
	res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--task", "link", "--parts", parts,
		"--checkpoint", ckpt, "--pairs", pairs, "--out", scores}})
	require.NoError(t, res.Err, "predict:\n%s", tail(res.Output, 20))
	b, err := os.ReadFile(scores)
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, rows, 3)
	assert.Equal(t, "src,dst,score,prob", rows[0])
	assert.True(t, strings.HasPrefix(rows[1], "0,1,") && strings.HasPrefix(rows[2], "2,2999,"), "%q", rows)

	// The test split as CSV, scored by predict, gives back the figures
	// train reported: the evaluation pairs can be checked outside mpignn.
	split := filepath.Join(work, "test-pairs.csv")
	b, err = exec.Command(bin, "inspect", parts, "--link-pairs", "test", "--out", split).CombinedOutput()
	require.NoError(t, err, "inspect --link-pairs: %s", b)
	splitScores := filepath.Join(work, "test-scores.csv")
	res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--task", "link", "--parts", parts,
		"--checkpoint", ckpt, "--pairs", split, "--out", splitScores}})
	require.NoError(t, res.Err, "predict:\n%s", tail(res.Output, 20))
	assert.InDeltaSlice(t, trained, recomputeLinkFigures(t, split, splitScores), 6e-5, "test AUC, MRR, Hits@10, Hits@50")

	// A run with --use-valid-edges reports test figures over the
	// train+valid graph; predict reproduces them, saying so.
	ckValid := filepath.Join(work, "ckpt-valid")
	res = h.MPI(Job{Ranks: 2, Args: args("auto", "--use-valid-edges", "--checkpoint", ckValid), Timeout: 3 * time.Minute})
	require.NoError(t, res.Err, "train --use-valid-edges:\n%s", tail(res.Output, 30))
	withValid := finalLinkFigures(t, res.Output)
	// The weights are the same as the first run's (valid edges never
	// reach training), so different figures come from the graph alone.
	require.NotEqual(t, trained, withValid, "the valid edges must change the test figures for this check to mean anything")
	res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--task", "link", "--parts", parts,
		"--checkpoint", ckValid, "--pairs", split, "--out", splitScores}})
	require.NoError(t, res.Err, "predict:\n%s", tail(res.Output, 20))
	assert.Contains(t, res.Output, "message passing over the training and valid edges")
	assert.InDeltaSlice(t, withValid, recomputeLinkFigures(t, split, splitScores), 6e-5, "--use-valid-edges: test AUC, MRR, Hits@10, Hits@50")

	bad := []struct {
		name string
		args []string
		want string
	}{
		{"node-partition", []string{bin, "train", "--task", "link", "--parts", g.parts[2], "--epochs", "1", "--quiet"}, "no link split"},
		{"other-link-split", []string{bin, "train", "--task", "link", "--parts", parts, "--link-split", "random:0.7,0.1,0.2", "--epochs", "1", "--quiet"}, "holds link split random:0.8,0.1,0.1"},
		{"decoder-on-node-task", []string{bin, "train", "--parts", parts, "--decoder", "mlp", "--epochs", "1"}, "--decoder applies to --task link only"},
		{"bad-decoder", []string{bin, "train", "--task", "link", "--parts", parts, "--decoder", "bilinear"}, `--decoder "bilinear"`},
		{"node-checkpoint-pairs", []string{bin, "predict", "--task", "link", "--parts", parts, "--checkpoint", ckpt, "--out", scores}, "--pairs"},
		{"pairs-bad-line", []string{bin, "predict", "--task", "link", "--parts", parts, "--checkpoint", ckpt, "--pairs", metrics, "--out", filepath.Join(work, "x.csv")}, "m.jsonl:2"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			res := h.MPI(Job{Ranks: 2, Args: tc.args, Timeout: time.Minute})
			require.True(t, res.Err != nil && !res.TimedOut, "want a quick failure, got err=%v:\n%s", res.Err, tail(res.Output, 20))
			assert.Contains(t, res.Output, tc.want)
			assert.NotContains(t, res.Output, "goroutine ")
		})
	}
	assert.NoFileExists(t, filepath.Join(work, "x.csv"))
}

// recomputeLinkFigures reads inspect --link-pairs's CSV and predict's
// scores of it (same order) and returns test AUC (positives against their
// fixed negatives), MRR and Hits@10 and Hits@50 against the pool, computed
// here with the train package's metric functions.
func recomputeLinkFigures(t *testing.T, pairsFile, scoresFile string) []float64 {
	t.Helper()
	read := func(name string) [][]string {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		var rows [][]string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			rows = append(rows, strings.Split(l, ","))
		}
		return rows
	}
	pairs, scores := read(pairsFile), read(scoresFile)
	require.Len(t, scores, len(pairs))
	var pos, neg, pool []float32
	for i, p := range pairs {
		require.Equal(t, p[:2], scores[i][:2], "line %d", i+2)
		s, err := strconv.ParseFloat(scores[i][2], 32)
		require.NoError(t, err)
		switch p[2] {
		case "pos":
			pos = append(pos, float32(s))
		case "neg":
			neg = append(neg, float32(s))
		case "pool":
			pool = append(pool, float32(s))
		default:
			require.Failf(t, "bad kind", "line %d: %q", i+2, p[2])
		}
	}
	require.NotEmpty(t, pos)
	rf, err := metrics.MRR(pos, neg, len(neg)/len(pos))
	require.NoError(t, err)
	return []float64{metrics.AUC(pos, neg), rf.MRR, metrics.HitsAtK(pos, pool, 10), metrics.HitsAtK(pos, pool, 50)}
}

// finalLinkFigures returns test AUC, MRR, Hits@10 and Hits@50 of a link
// run's final line.
func finalLinkFigures(t *testing.T, output string) []float64 {
	t.Helper()
	f := regexp.MustCompile(`test_auc=([0-9.]+) test_mrr=([0-9.]+) test_hits@10=([0-9.]+) test_hits@50=([0-9.]+)`).FindStringSubmatch(output)
	require.NotNil(t, f, "no final line:\n%s", tail(output, 20))
	var out []float64
	for _, s := range f[1:] {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}
