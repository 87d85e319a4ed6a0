package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/train"
)

// scaleRanks is the job of TestScale: 64 ranks, oversubscribed, as 4
// pretend nodes of 16 sharing a 4-part partition.
const scaleRanks, scaleNodes = 64, 4

// memoryRe reads the job's memory line (train prints it before final:).
var memoryRe = regexp.MustCompile(`memory: PSS per rank (\S+ \S+) mean, (\S+ \S+) largest \(rank (\d+)\); job (\S+ \S+)`)

// TestScale: a job of 64 ranks, a rank per pretend core on 4 pretend
// nodes of 16 that share a 4-part partition, trains the model of the same
// partition on 4 ranks with --global-batch (within the tolerances of
// TestGlobalBatchRankCounts); stopped on request after its first step
// (exit 75, a checkpoint: the step's stop flags summed over 64 ranks), it
// resumes on 64 ranks to the same model; and it reports every rank's
// memory (PSS) itself.
func TestScale(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	data, parts := filepath.Join(dir, "g"), filepath.Join(dir, "g-4")
	mustRun(t, bin, "gen", "--nodes", "3000", "--avg-degree", "8", "--classes", "5", "--feat-dim", "16",
		"--train", "1500", "--valid", "500", "--test", "1000", "--seed", "3", "--out", data)
	mustRun(t, bin, "partition", "--data", data, "--parts", "4", "--out", parts)
	args := []string{"--parts", parts, "--global-batch", "250", "--fanout", "5,5", "--hidden", "16", "--epochs", "3", "--seed", "1", "--quiet"}
	env := pretendNodes(scaleRanks / scaleNodes)

	ref := trainGlobalBatch(t, bin, 4, args...)
	big := trainGlobalBatchEnv(t, bin, scaleRanks, env, args...)
	sameModel(t, "64 ranks on 4 pretend nodes", ref, big)

	// Stopped after its first step (the stop file is there from the
	// start), then resumed on the same 64 ranks.
	ck, stop := filepath.Join(dir, "ck"), filepath.Join(dir, "stop")
	require.NoError(t, os.WriteFile(stop, []byte("test"), 0o644))
	r := h.MPI(Job{Ranks: scaleRanks, Env: env, Timeout: 4 * time.Minute,
		Args: append([]string{bin, "train", "--checkpoint", ck, "--stop-file", stop}, args...)})
	var ee *exec.ExitError
	require.True(t, errors.As(r.Err, &ee), "%v\n%s", r.Err, tail(r.Output, 20))
	require.Equal(t, 75, ee.ExitCode(), tail(r.Output, 20))
	assert.Contains(t, r.Stdout, "stopped on request")
	assert.Contains(t, r.Stdout, "layout: 4 parts for 64 ranks")
	r = h.MPI(Job{Ranks: scaleRanks, Env: env, Timeout: 4 * time.Minute,
		Args: append([]string{bin, "train", "--checkpoint", ck, "--resume"}, args...)})
	require.NoError(t, r.Err, tail(r.Output, 30))
	c, err := train.LoadCheckpoint(ck)
	require.NoError(t, err)
	sameModel(t, "stopped and resumed on 64 ranks", ref, globalBatchRun{ranks: scaleRanks, params: c.Params, loss: ref.loss})

	m := memoryRe.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, "the job reports its memory:\n%s", tail(r.Stdout, 10))
	t.Logf("64 ranks: PSS per rank %s mean, %s largest (rank %s); job %s", m[1], m[2], m[3], m[4])
}
