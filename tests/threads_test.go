package tests

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchThreads runs `mpignn bench threads --threads 1,2 --steps 3` on
// one rank, with and without --infer: the table has a row per phase with
// the seconds and speed-up of both counts, the determinism line says the
// weights (and inference rows) are identical for both counts, and --out
// writes the same table as JSON lines.
func TestBenchThreads(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	num := `\d+\.\d{3} +\d+\.\d{2}x`
	trainRows := []string{"sample", "gather", "forward", "backward", "allreduce", "optimizer", "steps total"}
	inferRows := []string{"infer sample", "infer gather", "infer compute", "infer total"}
	for _, tc := range []struct {
		name  string
		extra []string
		rows  []string
		same  string // the determinism line
	}{
		{"train", nil, trainRows, `(?m)^weights: identical for every thread count \([0-9a-f]{16}\)$`},
		{"infer", []string{"--infer"}, append(trainRows, inferRows...),
			`(?m)^weights: identical for every thread count \([0-9a-f]{16}\); inference rows identical \(rank 0: [0-9a-f]{16}\)$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "threads.jsonl")
			args := append([]string{bin, "bench", "threads", "--parts", g.parts[1], "--threads", "1,2", "--steps", "3",
				"--fanout", "4,3", "--batch", "64", "--hidden", "16", "--out", out}, tc.extra...)
			r := h.MPI(Job{Ranks: 1, Args: args, Timeout: 2 * time.Minute})
			require.NoError(t, r.Err, tail(r.Output, 30))
			assert.Regexp(t, `(?m)^phase +1 thr s +x +2 thr s +x$`, r.Stdout)
			for _, row := range tc.rows {
				assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(row)+` +`+num+` +`+num+`$`, r.Stdout, "row %s", row)
			}
			if len(tc.rows) == len(trainRows) {
				assert.NotContains(t, r.Stdout, "infer ", "inference rows without --infer")
			}
			assert.NotContains(t, r.Stdout, "wait (prefetch)", "the prefetch row without --prefetch")
			assert.Regexp(t, `(?m)^steps total +\d+\.\d{3} +1\.00x`, r.Stdout, "the first count is the base")
			assert.Regexp(t, tc.same, r.Stdout)

			lines := jsonLines(t, out)
			require.Len(t, lines, 3, "a line per thread count, then the summary")
			for i, threads := range []float64{1, 2} {
				assert.Equal(t, "threads", lines[i]["type"])
				assert.Equal(t, threads, lines[i]["threads"])
				assert.Contains(t, lines[i], "sample_s")
				assert.Contains(t, lines[i], "sample_x")
				assert.Equal(t, lines[0]["weights"], lines[i]["weights"])
				_, hasInfer := lines[i]["infer_s"]
				assert.Equal(t, len(tc.extra) > 0, hasInfer, "infer_s only with --infer")
			}
			assert.Equal(t, map[string]any{"type": "summary", "base_threads": 1.0, "identical": true}, lines[2])
		})
	}
}
