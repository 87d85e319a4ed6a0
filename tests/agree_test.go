package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRanksDisagree starts MPMD jobs (`mpirun -n 1 A : -n K B`) whose ranks
// were handed different flags, partition copies, commands or binaries, as a
// per-rank job script or a node with a stale copy would. Every such job must
// end quickly with one line naming the ranks and what differs, and none may
// reach the computation (before the start-up check they corrupted each
// other's heaps, hung, or died with MPI_ERR_TRUNCATE).
func TestRanksDisagree(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	work := t.TempDir()
	parts := g.parts[2]

	// A partition of another graph (feature width 8 instead of 16), a
	// partition of the same graph by another method, and a byte-level copy
	// whose META.json differs only in its bytes.
	cli := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	cli("gen", "--nodes", "3000", "--avg-degree", "8", "--classes", "5", "--feat-dim", "8", "--seed", "3", "--out", filepath.Join(work, "data8"))
	narrow := filepath.Join(work, "parts8")
	cli("partition", "--data", filepath.Join(work, "data8"), "--parts", "2", "--out", narrow)
	random := filepath.Join(work, "random")
	cli("partition", "--data", filepath.Join(g.dir, "data"), "--parts", "2", "--method", "random", "--out", random)
	stale := filepath.Join(work, "stale")
	out, err := exec.Command("cp", "-r", parts, stale).CombinedOutput()
	require.NoError(t, err, "%s", out)
	meta := filepath.Join(stale, "META.json")
	b, err := os.ReadFile(meta)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(meta, append(b, '\n'), 0o644))

	// A second build, unstamped and stripped: another binary, as on a node
	// with a build of its own (only the link step runs again). Without
	// -buildvcs=false a clean checkout would stamp both builds with the
	// same commit, which the ranks rightly accept as the same build.
	other := filepath.Join(h.Bin, "mpignn-other")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags=-s -w", "-o", other, "./cmd/mpignn")
	build.Dir = h.Root
	out, err = build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	train := func(b, p string, extra ...string) []string {
		return append([]string{b, "train", "--parts", p, "--epochs", "1", "--hidden", "16", "--fanout", "5,5", "--quiet"}, extra...)
	}
	sample := func(p string, extra ...string) []string {
		return append([]string{bin, "sample", "--parts", p, "--seeds", "1,2,3"}, extra...)
	}
	cases := []struct {
		name   string
		first  []string // rank 0
		rest   []string // ranks 1..others
		others int
		want   string
	}{
		{"train-flag", train(bin, parts), train(bin, parts, "--hidden", "32"), 1, "rank 1 has --hidden 32 but rank 0 has 16"},
		{"two-ranks-differ", train(bin, parts, "--seed", "4"), train(bin, parts, "--seed", "5"), 2, "ranks 1, 2 have --seed 5 but rank 0 has 4"},
		{"transport", train(bin, parts, "--transport", "rma"), train(bin, parts, "--transport", "alltoallv"), 1, "rank 1 has --transport alltoallv but rank 0 has rma"},
		{"feat-dim", train(bin, parts), train(bin, narrow), 1, "rank 1 has feat_dim 8 but rank 0 has 16 (" + filepath.Join(parts, "META.json") + ")"},
		{"other-partitioning", train(bin, parts), train(bin, random), 1, "rank 1 has method random but rank 0 has metis"},
		{"stale-copy", train(bin, parts), train(bin, stale), 1, "rank 1 has META.json sha256 "},
		{"missing-copy", train(bin, parts), train(bin, filepath.Join(work, "none")), 1, "rank 1 has META.json unreadable but rank 0 has readable"},
		{"command", train(bin, parts), sample(parts), 1, "rank 1 has command sample but rank 0 has train"},
		{"sample-seed", sample(parts, "--seed", "7"), sample(parts, "--seed", "8"), 1, "rank 1 has --seed 8 but rank 0 has 7"},
		{"predict", []string{bin, "predict", "--parts", parts, "--checkpoint", work, "--out", filepath.Join(work, "p.csv")},
			[]string{bin, "predict", "--parts", parts, "--checkpoint", work, "--out", filepath.Join(work, "p.csv"), "--batch", "7"}, 1,
			"rank 1 has --batch 7 but rank 0 has 1024"},
		{"bench-comm", []string{bin, "bench", "comm", "--dim", "8"}, []string{bin, "bench", "comm", "--dim", "16"}, 1, "rank 1 has --dim 16 but rank 0 has 8"},
		{"binary", train(bin, parts), train(other, parts), 1, "rank 1 has mpignn build "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append(append([]string{}, tc.first...), ":", "-n", string(rune('0'+tc.others))), tc.rest...)
			res := h.MPI(Job{Ranks: 1, Args: args, Timeout: time.Minute})
			require.Error(t, res.Err, "the job must fail:\n%s", tail(res.Output, 20))
			require.False(t, res.TimedOut, "hang:\n%s", tail(res.Output, 20))
			assert.Less(t, res.Elapsed, 30*time.Second, "a refused start must be quick")
			assert.Contains(t, res.Output, tc.want)
			assert.Equal(t, 1, strings.Count(res.Output, "ranks disagree at start-up"), "one line, from rank 0:\n%s", res.Output)
			for _, bad := range []string{"goroutine ", "double free", "MPI_ERR", "transport:", "final:"} {
				assert.NotContains(t, res.Output, bad, "the ranks must stop before computing")
			}
		})
	}
}
