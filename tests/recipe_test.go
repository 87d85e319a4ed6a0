package tests

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recipeRuns are the training recipe's options, one run each (docs/training.md
// "The training recipe").
func recipeRuns() []struct {
	name string
	args []string
} {
	return []struct {
		name string
		args []string
	}{
		{"adamw", []string{"--optimizer", "adamw", "--weight-decay", "0.01"}},
		{"sgd-nesterov", []string{"--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9", "--nesterov"}},
		{"step-warmup", []string{"--lr-schedule", "step:1,0.5", "--warmup", "5"}},
		{"cosine", []string{"--lr-schedule", "cosine"}},
		{"clip", []string{"--clip-grad-norm", "0.1"}},
		{"early-stop", []string{"--early-stop", "2", "--lr", "0.05"}},
	}
}

// TestRecipeGlobalBatch: with each recipe option, `train --global-batch`
// trains the same model on 1 and 2 ranks (globalbatch_test.go's
// tolerances).
func TestRecipeGlobalBatch(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	for _, tc := range recipeRuns() {
		t.Run(tc.name, func(t *testing.T) {
			args := func(p int) []string {
				return append([]string{"--parts", g.parts[p], "--global-batch", "200", "--fanout", "5,5", "--hidden", "16",
					"--epochs", "3", "--seed", "1", "--quiet"}, tc.args...)
			}
			one := trainGlobalBatch(t, bin, 1, args(1)...)
			two := trainGlobalBatch(t, bin, 2, args(2)...)
			sameModel(t, tc.name, one, two)
		})
	}
}

// TestRecipeResume: with each recipe option, a run of 2 epochs resumed to
// 3 (early stop: 7 resumed to 12, see below) (the resume gives no recipe flag: it adopts the checkpoint's) ends
// with the final line of the uninterrupted 3-epoch run, bit for bit. The
// cosine schedule spans the run's --epochs, so its run is stopped instead
// (SIGUSR1 after epoch 2 of 3) and resumed with the same --epochs.
func TestRecipeResume(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	work := t.TempDir()
	for _, tc := range recipeRuns() {
		t.Run(tc.name, func(t *testing.T) {
			base := []string{bin, "train", "--parts", g.parts[2], "--batch", "100", "--fanout", "5,5", "--hidden", "16",
				"--seed", "4", "--dropout", "0.3", "--quiet"}
			run := func(ck string, extra ...string) string {
				res := h.MPI(Job{Ranks: 2, Timeout: 4 * time.Minute, Args: append(append(append([]string{}, base...), "--checkpoint", ck), extra...)})
				require.NoError(t, res.Err, tail(res.Output, 20))
				i := strings.LastIndex(res.Stdout, "final: ")
				require.GreaterOrEqual(t, i, 0, res.Stdout)
				return strings.TrimSpace(res.Stdout[i:])
			}
			// Early stop: the uninterrupted run stops after epoch 8 (best
			// epoch 6); the interrupted one is checkpointed after epoch 7,
			// one evaluation without improvement, and its resume must
			// continue that count.
			total, cut := "3", "2"
			if tc.name == "early-stop" {
				total, cut = "12", "7"
			}
			whole := run(filepath.Join(work, tc.name+"-a"), append([]string{"--epochs", total}, tc.args...)...)
			if tc.name == "early-stop" {
				require.Contains(t, whole, "epochs=8 best_epoch=6 ")
				require.True(t, strings.HasSuffix(whole, " stopped_early=8"), whole)
			}
			ck := filepath.Join(work, tc.name+"-b")
			if tc.name == "cosine" {
				args := append(append(append([]string{}, base...), "--checkpoint", ck, "--epochs", "3"), tc.args...)
				j := startHeldMPI(t, "train-epoch:2", 0, 2, args...)
				j.await(t)
				require.NoError(t, j.cmd.Process.Signal(syscall.SIGUSR1))
				j.waitLine(t, "rank 0: SIGUSR1 received")
				j.release(t)
				require.Equal(t, 75, j.wait(t, 3*time.Minute), "exit code of a stop with checkpoint:\n%s", tail(j.output(), 20))
			} else {
				run(ck, append([]string{"--epochs", cut}, tc.args...)...)
			}
			resumed := run(ck, "--epochs", total, "--resume")
			assert.Equal(t, whole, resumed)
			t.Logf("%s", whole)
		})
	}
	// A flag that contradicts the checkpoint's recipe is refused by name,
	// and a flag that does not apply is one line naming it.
	res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "train", "--parts", g.parts[2], "--checkpoint",
		filepath.Join(work, "sgd-nesterov-b"), "--resume", "--epochs", "3", "--optimizer", "adam"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "--optimizer was sgd, now adam")
	res = h.MPI(Job{Ranks: 1, Timeout: time.Minute, Args: []string{bin, "train", "--parts", g.parts[1], "--epochs", "1", "--momentum", "0.9"}})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "--momentum applies to --optimizer sgd only")
}
