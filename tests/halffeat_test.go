package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/partition"
)

// TestHalfFeaturesCLI partitions Cora with --feat-dtype bf16 (one part,
// and two with halo features) and trains on it with the real binary: as
// on float32 partitions, --global-batch trains the same model on 1 and 2
// ranks within the global-batch tolerances, the transport, the thread
// count and the hot cache change no bit of the weights, and predict's
// layer-wise inference gives the same predictions on 1 and 2 ranks. The
// partition stores its features as bfloat16 (META, file types), and the
// flag's misuses are one line each, exit status 2, before any reading.
func TestHalfFeaturesCLI(t *testing.T) {
	data := needDataset(t, "cora", "raw", "edge.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts := map[int]string{}
	for _, p := range []int{1, 2} {
		out := filepath.Join(work, "bf16-"+strconv.Itoa(p))
		args := []string{"partition", "--data", data, "--split", "public", "--parts", strconv.Itoa(p), "--seed", "0", "--feat-dtype", "bf16", "--out", out}
		if p == 2 {
			args = append(args, "--halo-feats")
		}
		msg, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "partition:\n%s", msg)
		m, err := partition.LoadMeta(out)
		require.NoError(t, err)
		assert.Equal(t, "bf16", m.FeatDType)
		assert.False(t, m.SparseFeat, "--sparse-features auto keeps 2-byte features dense")
		for key, fi := range m.Files {
			if filepath.Base(key) == "feat.bin" || filepath.Base(key) == "halo_feat.bin" {
				assert.Equal(t, "bfloat16", fi.DType, key)
			}
		}
		parts[p] = out
	}

	args := func(p int, extra ...string) []string {
		return append([]string{"--parts", parts[p], "--global-batch", "35", "--fanout", "5,5", "--hidden", "16", "--epochs", "3",
			"--seed", "1", "--quiet"}, extra...)
	}
	one := trainGlobalBatch(t, bin, 1, args(1)...)
	var two []globalBatchRun
	for _, extra := range [][]string{
		{"--transport", "rma"},
		{"--transport", "alltoallv"},
		{"--transport", "rma", "--threads", "2"},
		{"--transport", "rma", "--cache-mb", "0.05"},
	} {
		two = append(two, trainGlobalBatch(t, bin, 2, args(2, extra...)...))
	}
	sameModel(t, "bf16", one, two[0])
	for i, run := range two[1:] {
		assert.Equal(t, two[0].params, run.params, "run %d on 2 ranks: other weights than --transport rma", i+1)
		assert.Equal(t, two[0].loss, run.loss, "run %d on 2 ranks: other losses", i+1)
	}

	// predict: layer-wise inference over the bfloat16 table, 1 and 2 ranks.
	_, ck, _ := trainGlobalBatchAt(t, bin, work, 2, nil, args(2)...)
	preds := map[int][]byte{}
	for _, p := range []int{1, 2} {
		out := filepath.Join(work, "pred-"+strconv.Itoa(p)+".csv")
		res := h.MPI(Job{Ranks: p, Args: []string{bin, "predict", "--parts", parts[p], "--checkpoint", ck, "--out", out}, Timeout: 2 * time.Minute})
		require.NoError(t, res.Err, tail(res.Output, 20))
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		preds[p] = b
	}
	assert.Equal(t, string(preds[1]), string(preds[2]), "predictions on 1 and 2 ranks")

	for _, tc := range []struct {
		name, want string
		args       []string
	}{
		{"unknown type", `mpignn partition: --feat-dtype: feature type "fp8": want fp32, bf16 or fp16` + "\n", []string{"--feat-dtype", "fp8"}},
		{"sparse", "mpignn partition: --feat-dtype bf16 with --sparse-features on: sparse rows store float32 values (use auto or off)\n",
			[]string{"--feat-dtype", "bf16", "--sparse-features", "on"}},
		{"link", "mpignn partition: --feat-dtype fp16 with a link split (--link-split): not supported yet (link partitions store float32 features)\n",
			[]string{"--feat-dtype", "fp16", "--link-split", "random:0.8,0.1,0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(work, "refused")
			cmd := exec.Command(bin, append([]string{"partition", "--data", data, "--parts", "2", "--out", out}, tc.args...)...)
			msg, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "%s", msg)
			assert.Equal(t, 2, ee.ExitCode())
			assert.Equal(t, tc.want, string(msg))
			assert.NoDirExists(t, out)
		})
	}
}
