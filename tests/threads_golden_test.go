package tests

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThreadsGoldenTrain runs the golden Cora training on 2 ranks with one
// compute thread per rank and with three: every phase splits its loops over
// the rank's threads, and none may let the thread count reach the result,
// so both must print the golden table's weights digest and losses.
func TestThreadsGoldenTrain(t *testing.T) {
	const p = 2
	parts := cora.get(t)
	bin, _ := h.Mpignn()
	needGoldenISA(t, bin)
	if parts[p] == "" {
		t.Skipf("no %d-rank Cora partition under this MPIGNN_TEST_RANKS", p)
	}
	rows := map[int]string{}
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			metrics := filepath.Join(t.TempDir(), "m.jsonl")
			args := append([]string{bin, "train", "--parts", parts[p], "--batch", strconv.Itoa(goldenGlobalBatch / p),
				"--threads", strconv.Itoa(threads), "--metrics", metrics}, pinned(goldenTrainArgs)...)
			res := h.MPI(Job{Ranks: p, Args: args, Timeout: 2 * time.Minute})
			rows[threads] = goldenRow(t, p, res, metrics)
		})
	}
	require.Len(t, rows, 2, "a run did not finish")
	assert.Equal(t, rows[1], rows[3], "--threads 1 and --threads 3 must train identically")
	assert.Equal(t, goldenFileRow(t, p), rows[1], "the golden table's %d-rank row", p)
}
