package tests

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSparseFeaturesCLI partitions Cora with dense and with CSR features
// (partition --sparse-features off|on) and trains every homogeneous model
// on both with the real binary (input dropout on, the default): the sparse
// first layer must give the dense losses up to float summation order,
// both transports the same weights, and 1 and 2 ranks the same losses up
// to the Allreduce order, as the dense path does.
func TestSparseFeaturesCLI(t *testing.T) {
	data := needDataset(t, "cora", "raw", "edge.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts := map[string]string{}
	for _, mode := range []string{"off", "on"} {
		for _, p := range []int{1, 2} {
			out := filepath.Join(work, fmt.Sprintf("%s-%d", mode, p))
			msg, err := exec.Command(bin, "partition", "--data", data, "--split", "public", "--parts", strconv.Itoa(p), "--seed", "0",
				"--sparse-features", mode, "--out", out).CombinedOutput()
			require.NoError(t, err, "partition:\n%s", msg)
			parts[fmt.Sprintf("%s-%d", mode, p)] = out
		}
	}
	losses := func(t *testing.T, mode string, p int, tr string, extra []string) (string, []float64) {
		metrics := filepath.Join(t.TempDir(), "m.jsonl")
		args := append([]string{bin, "train", "--parts", parts[fmt.Sprintf("%s-%d", mode, p)], "--batch", strconv.Itoa(goldenGlobalBatch / p),
			"--transport", tr, "--metrics", metrics}, goldenTrainArgs...)
		res := h.MPI(Job{Ranks: p, Args: append(args, extra...), Timeout: 2 * time.Minute})
		require.NoError(t, res.Err, tail(res.Output, 30))
		w := weightsRe.FindStringSubmatch(res.Stdout)
		require.NotNil(t, w, "no final weights line:\n%s", tail(res.Output, 10))
		v := epochValues(t, metrics, "loss", "val_loss")
		var xs []float64
		for _, k := range []string{"loss", "val_loss"} {
			for _, s := range v[k] {
				x, err := strconv.ParseFloat(s, 64)
				require.NoError(t, err)
				xs = append(xs, x)
			}
		}
		return w[1], xs
	}
	near := func(t *testing.T, want, got []float64, tol float64, what string) {
		t.Helper()
		require.Len(t, got, len(want), what)
		for i := range want {
			assert.LessOrEqual(t, math.Abs(want[i]-got[i]), tol*math.Max(1, math.Abs(want[i])), "%s: value %d: %v vs %v", what, i, want[i], got[i])
		}
	}
	for _, tc := range []struct {
		model string
		extra []string
	}{
		{"sage", nil},
		{"gcn", nil},
		{"gat", []string{"--heads", "2", "--attn-dropout", "0.2"}},
		{"gin", []string{"--train-eps", "--eps", "0.1"}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			extra := append([]string{"--model", tc.model}, tc.extra...)
			_, dense1 := losses(t, "off", 1, "rma", extra)
			_, dense2 := losses(t, "off", 2, "rma", extra)
			_, sparse1 := losses(t, "on", 1, "rma", extra)
			wr, sparse2 := losses(t, "on", 2, "rma", extra)
			wa, sparse2a := losses(t, "on", 2, "alltoallv", extra)
			assert.Equal(t, wr, wa, "sparse: the transport changed the weights")
			assert.Equal(t, sparse2, sparse2a, "sparse: the transport changed the losses")
			near(t, dense1, sparse1, 1e-4, "1 rank: sparse vs dense")
			near(t, dense2, sparse2, 1e-4, "2 ranks: sparse vs dense")
			near(t, dense1, dense2, 1e-6, "dense: 1 vs 2 ranks")
			near(t, sparse1, sparse2, 1e-6, "sparse: 1 vs 2 ranks")
		})
	}
}
