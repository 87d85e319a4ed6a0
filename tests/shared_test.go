package tests

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/train"
)

// pretendNodes is the environment that makes every n consecutive ranks of
// a job one node (see docs/cluster.md, "One partition per node").
func pretendNodes(n int) []string {
	return []string{"MPIGNN_NODE_RANKS=" + strconv.Itoa(n)}
}

// TestSharedPartitions: a partition of fewer parts than ranks is served by
// the ranks of each node together, one copy per node. On Cora, 2 parts run
// by 4 ranks as 2 pretend nodes of 2, and 1 part by 3 ranks on this
// machine, sample exactly the neighbourhoods of a part per rank, train the
// model of one part per rank with --global-batch (within the tolerances of
// TestGlobalBatchRankCounts), and a run stopped after 2 epochs resumes on
// a part per rank to the same model.
func TestSharedPartitions(t *testing.T) {
	parts := cora.get(t)
	bin, _ := h.Mpignn()
	sample := func(ranks int, dir string, env []string) string {
		res := h.MPI(Job{Ranks: ranks, Env: env, Timeout: 2 * time.Minute, Args: []string{bin, "sample", "--parts", dir,
			"--seeds", "0,17,42,999,1500,2700", "--fanout", "5,-1", "--seed", "3"}})
		require.NoError(t, res.Err, tail(res.Output, 20))
		return res.Stdout
	}
	want := sample(2, parts[2], nil)
	require.Contains(t, want, "\n", "sampled something")
	assert.Equal(t, want, sample(4, parts[2], pretendNodes(2)), "2 parts on 2 pretend nodes of 2 ranks")
	assert.Equal(t, want, sample(3, parts[1], nil), "1 part on the 3 ranks of this machine")
	assert.Equal(t, want, sample(4, parts[2], nil), "2 parts on one node of 4 ranks")

	args := func(dir string) []string {
		return []string{"--parts", dir, "--global-batch", "35", "--fanout", "5,5", "--hidden", "16", "--epochs", "3", "--seed", "1", "--quiet"}
	}
	perRank := trainGlobalBatch(t, bin, 2, args(parts[2])...)
	shared := trainGlobalBatchEnv(t, bin, 4, pretendNodes(2), args(parts[2])...)
	sameModel(t, "2 parts, 2 pretend nodes of 2 ranks", perRank, shared)
	one := trainGlobalBatchEnv(t, bin, 3, nil, args(parts[1])...)
	sameModel(t, "1 part, one node of 3 ranks", perRank, one)

	// Stop after 2 epochs on shared parts, resume on a part per rank.
	ck := filepath.Join(t.TempDir(), "ck")
	res := h.MPI(Job{Ranks: 4, Env: pretendNodes(2), Timeout: 4 * time.Minute,
		Args: append(append([]string{bin, "train", "--checkpoint", ck}, args(parts[2])...), "--epochs", "2")})
	require.NoError(t, res.Err, tail(res.Output, 30))
	res = h.MPI(Job{Ranks: 2, Timeout: 4 * time.Minute, Args: []string{bin, "train", "--parts", parts[2], "--checkpoint", ck, "--resume", "--epochs", "3", "--quiet"}})
	require.NoError(t, res.Err, tail(res.Output, 30))
	c, err := train.LoadCheckpoint(ck)
	require.NoError(t, err)
	sameModel(t, "resumed on a part per rank", perRank, globalBatchRun{ranks: 2, params: c.Params, loss: perRank.loss})
}
