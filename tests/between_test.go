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

// TestBetweenRankCounts: residual, LayerNorm and jumping knowledge (node
// classification and link prediction on Cora) train the same model on 1
// and 2 ranks with --global-batch (globalbatch_test.go's tolerances: only
// the Allreduce's summation order differs), and a run interrupted after 2
// epochs resumes to the uninterrupted run's final line, taking --residual,
// --norm and --jk from its checkpoint, which refuses a change by flag.
func TestBetweenRankCounts(t *testing.T) {
	parts := cora.get(t)
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	linkParts := func(p int) string {
		out := filepath.Join(t.TempDir(), "link-parts")
		msg, err := exec.Command(bin, "partition", "--data", coraDir(), "--parts", strconv.Itoa(p), "--seed", "1",
			"--link-split", "random:0.85,0.05,0.10", "--out", out).CombinedOutput()
		require.NoError(t, err, "partition: %s", msg)
		return out
	}
	for _, tc := range []struct {
		name  string
		parts func(p int) string
		args  []string
	}{
		{"sage-residual-norm-jk-cat", func(p int) string { return parts[p] },
			[]string{"--global-batch", "35", "--residual", "--norm", "layer", "--jk", "cat", "--dropout", "0.3"}},
		{"gat-link-residual-norm-jk-max", linkParts, []string{"--task", "link", "--global-batch", "500", "--model", "gat", "--heads", "2",
			"--residual", "--norm", "layer", "--jk", "max"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := func(p int) []string {
				return append([]string{"--parts", tc.parts(p), "--fanout", "5,5", "--hidden", "16", "--epochs", "3", "--seed", "1", "--quiet"}, tc.args...)
			}
			one := trainGlobalBatch(t, bin, 1, args(1)...)
			two := trainGlobalBatch(t, bin, 2, args(2)...)
			sameModel(t, tc.name, one, two)
		})
	}

	work := t.TempDir()
	base := []string{bin, "train", "--parts", parts[2], "--batch", "40", "--fanout", "5,5", "--hidden", "16", "--seed", "4", "--quiet"}
	run := func(args ...string) (string, error) {
		res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: append(append([]string{}, base...), args...)})
		if res.Err != nil {
			return res.Output, res.Err
		}
		i := strings.LastIndex(res.Stdout, "final: ")
		require.GreaterOrEqual(t, i, 0, res.Stdout)
		return strings.TrimSpace(res.Stdout[i:]), nil
	}
	between := []string{"--residual", "--norm", "layer", "--jk", "cat"}
	whole, err := run(append([]string{"--checkpoint", filepath.Join(work, "a"), "--epochs", "3"}, between...)...)
	require.NoError(t, err, whole)
	ck := filepath.Join(work, "b")
	out, err := run(append([]string{"--checkpoint", ck, "--epochs", "2"}, between...)...)
	require.NoError(t, err, out)
	resumed, err := run("--checkpoint", ck, "--epochs", "3", "--resume")
	require.NoError(t, err, resumed)
	assert.Equal(t, whole, resumed, "a resume adopts --residual --norm --jk from the checkpoint")
	out, err = run("--checkpoint", ck, "--epochs", "3", "--resume", "--jk", "max")
	require.Error(t, err)
	assert.Contains(t, out, "--jk was cat, now max")
}
