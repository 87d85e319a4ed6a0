package tests

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUseEdgeFeatCLI: a model that reads no edge features trains on a
// partition with them exactly as on the same graph's partition without
// them (the same final weights, bit for bit, on 1 and 2 ranks: the store
// leaves them out); `train --use-edge-feat` where they cannot be used is
// one line naming the flag.
func TestUseEdgeFeatCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	mustRun(t, bin, "gen", "--nodes", "600", "--avg-degree", "6", "--classes", "3", "--feat-dim", "8", "--edge-feat-dim", "8",
		"--seed", "2", "--out", data)
	train := func(p int, parts string, extra ...string) Run {
		args := append([]string{bin, "train", "--parts", parts, "--epochs", "2", "--fanout", "5,5", "--hidden", "16",
			"--global-batch", "64", "--seed", "3", "--quiet"}, extra...)
		return h.MPI(Job{Ranks: p, Timeout: 3 * time.Minute, Args: args})
	}
	for _, p := range []int{1, 2} {
		weights := map[bool]string{}
		for _, ef := range []bool{true, false} {
			parts := filepath.Join(work, "p"+strconv.Itoa(p)+"-"+strconv.FormatBool(ef))
			args := []string{"partition", "--data", data, "--parts", strconv.Itoa(p), "--out", parts}
			if ef {
				args = append(args, "--edge-feat")
			}
			mustRun(t, bin, args...)
			res := train(p, parts)
			require.NoError(t, res.Err, "%d ranks, edge features %t:\n%s", p, ef, tail(res.Output, 20))
			w := weightsRe.FindStringSubmatch(res.Stdout)
			require.NotNil(t, w, "no final line:\n%s", tail(res.Output, 20))
			weights[ef] = w[1]
		}
		assert.Equal(t, weights[false], weights[true], "%d ranks: sage trains the same with the edge features on disk", p)
	}
	parts := filepath.Join(work, "p1-true")
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"sage", []string{"--model", "sage"}, "--use-edge-feat: --model sage reads no edge features"},
		{"default model", nil, "--use-edge-feat: --model sage reads no edge features"},
		{"gcn", []string{"--model", "gcn"}, "--use-edge-feat: --model gcn reads no edge features"},
		{"link task", []string{"--task", "link"}, "--use-edge-feat: --task link trains on the link split's graph, which carries no edge features yet"},
	} {
		res := train(1, parts, append(tc.flags, "--use-edge-feat")...)
		require.Error(t, res.Err, tc.name)
		assert.Equal(t, 1, strings.Count(res.Output, tc.want), "%s: one line:\n%s", tc.name, res.Output)
		// The default model is known once the partition is read (hsage
		// on a heterogeneous one, which reads them), after the run has
		// echoed its settings: that echo is not a second error line.
		var errLines []string
		for _, l := range linesWith(res.Output, "--use-edge-feat") {
			if !strings.HasPrefix(l, "settings: ") {
				errLines = append(errLines, l)
			}
		}
		assert.Len(t, errLines, 1, "%s: one line:\n%s", tc.name, res.Output)
	}
	// predict of a checkpoint trained on the partition with edge features
	// works on it as on any other (the store leaves them out again).
	ck := filepath.Join(work, "ck")
	res := train(1, parts, "--checkpoint", ck)
	require.NoError(t, res.Err, tail(res.Output, 20))
	out, err := exec.Command(bin, "predict", "--parts", parts, "--checkpoint", ck, "--out", filepath.Join(work, "pred.csv")).CombinedOutput()
	require.NoError(t, err, "predict: %s", out)
}

// linesWith returns the lines of out that contain s (a refusal must be
// one line, from one rank).
func linesWith(out, s string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestEdgeModelsCLI: the models that read edge features train with
// `--use-edge-feat` on a partition with them: both transports give the
// same weights (the features reach every rank's layers alike, one-sided
// or through Alltoallv), layer-wise prediction (full neighbourhoods, every
// edge's features) runs on the checkpoint, and a model that cannot run
// without them is refused in one line when the flag is missing.
func TestEdgeModelsCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	mustRun(t, bin, "gen", "--nodes", "600", "--avg-degree", "6", "--classes", "3", "--feat-dim", "8", "--edge-feat-dim", "4",
		"--seed", "2", "--out", data)
	parts := filepath.Join(work, "parts")
	mustRun(t, bin, "partition", "--data", data, "--parts", "2", "--edge-feat", "--out", parts)
	train := func(model []string, extra ...string) Run {
		args := append([]string{bin, "train", "--parts", parts, "--epochs", "2", "--fanout", "5,5", "--hidden", "16",
			"--global-batch", "64", "--seed", "3", "--quiet"}, append(model, extra...)...)
		return h.MPI(Job{Ranks: 2, Timeout: 3 * time.Minute, Args: args})
	}
	for _, model := range [][]string{
		{"--model", "gine", "--use-edge-feat"},
		{"--model", "gine", "--use-edge-feat", "--train-eps"},
	} {
		name := strings.Join(model, " ")
		weights := map[string]string{}
		for _, tr := range []string{"rma", "alltoallv"} {
			res := train(model, "--transport", tr)
			require.NoError(t, res.Err, "%s over %s:\n%s", name, tr, tail(res.Output, 20))
			w := weightsRe.FindStringSubmatch(res.Stdout)
			require.NotNil(t, w, "%s: no final line:\n%s", name, tail(res.Output, 20))
			weights[tr] = w[1]
		}
		assert.Equal(t, weights["rma"], weights["alltoallv"], "%s: both transports train the same model", name)
		ck := filepath.Join(work, "ck-"+strings.ReplaceAll(name, " ", ""))
		res := train(model, "--checkpoint", ck)
		require.NoError(t, res.Err, tail(res.Output, 20))
		res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--parts", parts, "--checkpoint", ck,
			"--logits", "--out", filepath.Join(work, "logits.npy")}})
		require.NoError(t, res.Err, "%s: layer-wise predict:\n%s", name, tail(res.Output, 20))
	}
	res := train([]string{"--model", "gine"})
	require.Error(t, res.Err)
	want := "--model gine reads edge features: give --use-edge-feat"
	assert.Len(t, linesWith(res.Output, want), 1, "one line:\n%s", res.Output)
}

// TestAttentionEdgeFeatures: gat and gatv2 read a partition's edge features
// (--use-edge-feat changes the trained weights) on 2 ranks, and the
// layer-wise evaluation, whose full-neighbourhood blocks carry every
// in-edge's row, scores the model as --eval-full does.
func TestAttentionEdgeFeatures(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	data, parts := filepath.Join(work, "data"), filepath.Join(work, "parts")
	mustRun(t, bin, "gen", "--nodes", "600", "--avg-degree", "6", "--classes", "3", "--feat-dim", "8", "--edge-feat-dim", "4",
		"--seed", "2", "--out", data)
	mustRun(t, bin, "partition", "--data", data, "--parts", "2", "--edge-feat", "--out", parts)
	for _, m := range []string{"gat", "gatv2"} {
		t.Run(m, func(t *testing.T) {
			args := []string{"--model", m, "--heads", "2", "--attn-dropout", "0.2"}
			plain, _ := trainEval(t, bin, parts, 2, args...)
			wl, lw := trainEval(t, bin, parts, 2, append(args, "--use-edge-feat")...)
			wf, full := trainEval(t, bin, parts, 2, append(args, "--use-edge-feat", "--eval-full")...)
			assert.NotEqual(t, plain, wl, "the edge features changed nothing")
			assert.Equal(t, wf, wl, "evaluation changed the training")
			requireClose(t, "layer-wise vs --eval-full with edge features", full, lw)
		})
	}
}
