package tests

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrefetchCLI trains on 2 ranks with the real binary: fetching batches
// ahead (--prefetch 1, the default, and 2) ends with the weights of no
// prefetch (--prefetch 0) under both transports, across an epoch boundary,
// and a run checkpointed with one --prefetch resumes under another (the
// depth is not part of the checkpoint's run info) to the same weights.
func TestPrefetchCLI(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	weights := regexp.MustCompile(`weights=([0-9a-f]+)`)
	work := t.TempDir()
	train := func(t *testing.T, transport string, prefetch, epochs int, extra ...string) string {
		args := append([]string{bin, "train", "--parts", g.parts[2], "--fanout", "5,5", "--batch", "64",
			"--hidden", "16", "--dropout", "0.3", "--epochs", fmt.Sprint(epochs), "--seed", "5", "--quiet",
			"--transport", transport, "--prefetch", fmt.Sprint(prefetch)}, extra...)
		res := h.MPI(Job{Ranks: 2, Args: args, Timeout: 2 * time.Minute})
		require.NoError(t, res.Err, "train %s --prefetch %d:\n%s", transport, prefetch, tail(res.Output, 20))
		m := weights.FindStringSubmatch(res.Output)
		require.NotNil(t, m, "no weights digest:\n%s", tail(res.Output, 10))
		return m[1]
	}
	want := train(t, "rma", 0, 2)
	for _, tc := range []struct {
		transport string
		prefetch  int
	}{{"rma", 2}, {"alltoallv", 1}, {"alltoallv", 0}} {
		t.Run(fmt.Sprintf("%s/prefetch=%d", tc.transport, tc.prefetch), func(t *testing.T) {
			assert.Equal(t, want, train(t, tc.transport, tc.prefetch, 2), "the weights depend on --prefetch")
		})
	}
	t.Run("resume", func(t *testing.T) {
		ck := filepath.Join(work, "ck")
		train(t, "rma", 1, 1, "--checkpoint", ck)
		assert.Equal(t, want, train(t, "rma", 0, 2, "--checkpoint", ck, "--resume"), "resumed under another --prefetch")
	})
}
