package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrainCheckpointSafety runs `mpignn train` on 2 ranks the ways that
// used to lose or clutter checkpoints: a fresh run into a directory holding
// a checkpoint is refused (and --overwrite-checkpoint allows it), an
// unwritable checkpoint directory is refused before training starts, a torn
// last metrics line does not block --resume, and a failed run removes the
// empty checkpoint directory and metrics file it created.
func TestTrainCheckpointSafety(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	work := t.TempDir()
	weights := regexp.MustCompile(`weights=([0-9a-f]+)`)
	trainArgs := func(epochs string, extra ...string) []string {
		return append([]string{bin, "train", "--parts", g.parts[2], "--fanout", "5,5", "--hidden", "16",
			"--epochs", epochs, "--seed", "4", "--quiet"}, extra...)
	}
	run := func(t *testing.T, args []string) Run {
		t.Helper()
		res := h.MPI(Job{Ranks: 2, Args: args, Timeout: 2 * time.Minute})
		require.False(t, res.TimedOut, "hang:\n%s", tail(res.Output, 20))
		return res
	}
	// failsClearly checks a refused run: an error exit, one message with
	// every wanted part, no panic trace.
	failsClearly := func(t *testing.T, res Run, want ...string) {
		t.Helper()
		require.Error(t, res.Err, "want a failure:\n%s", tail(res.Output, 20))
		for _, w := range want {
			assert.Contains(t, res.Output, w)
		}
		assert.NotContains(t, res.Output, "goroutine ", "panic trace")
	}

	ck := filepath.Join(work, "ck")
	metrics := filepath.Join(work, "m.jsonl")
	res := run(t, trainArgs("2", "--checkpoint", ck, "--metrics", metrics))
	require.NoError(t, res.Err, tail(res.Output, 20))
	first := weights.FindStringSubmatch(res.Output)
	require.NotNil(t, first, res.Output)

	t.Run("fresh run into an existing checkpoint", func(t *testing.T) {
		ckBefore, err := os.ReadFile(filepath.Join(ck, "checkpoint.bin"))
		require.NoError(t, err)
		mBefore, err := os.ReadFile(metrics)
		require.NoError(t, err)
		res := run(t, trainArgs("2", "--checkpoint", ck, "--metrics", metrics))
		failsClearly(t, res, ck, "already holds a checkpoint", "--resume", "--overwrite-checkpoint")
		assert.NotContains(t, res.Output, "transport:", "refused only after loading the partition")
		ckAfter, err := os.ReadFile(filepath.Join(ck, "checkpoint.bin"))
		require.NoError(t, err)
		assert.Equal(t, ckBefore, ckAfter, "the refused run changed the checkpoint")
		mAfter, err := os.ReadFile(metrics)
		require.NoError(t, err)
		assert.Equal(t, string(mBefore), string(mAfter), "the refused run changed the metrics file")

		res = run(t, trainArgs("2", "--checkpoint", ck, "--metrics", metrics, "--overwrite-checkpoint"))
		require.NoError(t, res.Err, tail(res.Output, 20))
		again := weights.FindStringSubmatch(res.Output)
		require.NotNil(t, again, res.Output)
		assert.Equal(t, first[1], again[1], "the same fresh run must end with the same weights")

		res = run(t, trainArgs("2", "--checkpoint", ck, "--resume", "--overwrite-checkpoint"))
		failsClearly(t, res, "--resume and --overwrite-checkpoint")
	})

	t.Run("resume after a torn metrics line", func(t *testing.T) {
		// A kill in the middle of appending epoch 3: epochs 1 and 2 (the
		// checkpoint's) are whole, the last line is cut short.
		data, err := os.ReadFile(metrics)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Len(t, lines, 3, "2 epochs + summary")
		torn := strings.Replace(lines[1], `"epoch":2`, `"epoch":3`, 1)[:40]
		require.NoError(t, os.WriteFile(metrics, []byte(lines[0]+"\n"+lines[1]+"\n"+torn), 0o644))

		res := run(t, trainArgs("4", "--checkpoint", ck, "--metrics", metrics, "--resume"))
		require.NoError(t, res.Err, tail(res.Output, 20))
		assert.Contains(t, res.Output, "resumed from "+ck+" at epoch 2")
		assert.Regexp(t, `warning: metrics .*m\.jsonl: dropped a torn tail of 1 invalid line\(s\) from line 3`, res.Output)

		data, err = os.ReadFile(metrics)
		require.NoError(t, err)
		got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		require.Len(t, got, 5, "4 epochs + summary:\n%s", data)
		assert.Equal(t, lines[:2], got[:2], "the lines of the checkpointed epochs are kept as they were")
		for i, l := range got {
			var head struct {
				Type  string `json:"type"`
				Epoch int    `json:"epoch"`
			}
			require.NoError(t, json.Unmarshal([]byte(l), &head), "line %d: %s", i+1, l)
			if i < 4 {
				assert.Equal(t, "epoch", head.Type, "line %d", i+1)
				assert.Equal(t, i+1, head.Epoch, "line %d", i+1)
			} else {
				assert.Equal(t, "summary", head.Type)
			}
		}
	})

	t.Run("unwritable checkpoint directory", func(t *testing.T) {
		// Root ignores permission bits: a path under a regular file is
		// unwritable for everyone.
		file := filepath.Join(work, "file")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
		bad := filepath.Join(file, "ck")
		m := filepath.Join(work, "unwritable.jsonl")
		res := run(t, trainArgs("2", "--checkpoint", bad, "--metrics", m))
		failsClearly(t, res, "checkpoint directory "+bad, "not a directory")
		assert.NotContains(t, res.Output, "transport:", "refused only after loading the partition")
		assert.Less(t, res.Elapsed, 20*time.Second, "not refused quickly")
		assert.NoFileExists(t, m, "a refused run left a metrics file")
	})

	t.Run("failed run leaves nothing empty behind", func(t *testing.T) {
		userDir := filepath.Join(work, "user-made")
		require.NoError(t, os.Mkdir(userDir, 0o755))
		tests := []struct {
			name    string
			args    []string
			want    string
			gone    []string // created by the run, must be removed
			present []string // existed before, must stay
		}{
			{"bad partition dir",
				[]string{bin, "train", "--parts", filepath.Join(work, "no-parts"), "--epochs", "1", "--quiet",
					"--checkpoint", filepath.Join(work, "new1", "ck"), "--metrics", filepath.Join(work, "new1.jsonl")},
				filepath.Join(work, "no-parts"), []string{filepath.Join(work, "new1"), filepath.Join(work, "new1.jsonl")}, nil},
			{"metrics in a missing dir",
				trainArgs("1", "--checkpoint", filepath.Join(work, "new2"), "--metrics", filepath.Join(work, "nodir", "m.jsonl")),
				filepath.Join(work, "nodir"), []string{filepath.Join(work, "new2"), filepath.Join(work, "nodir")}, nil},
			{"user-made dir is kept",
				[]string{bin, "train", "--parts", filepath.Join(work, "no-parts"), "--epochs", "1", "--quiet", "--checkpoint", userDir},
				filepath.Join(work, "no-parts"), nil, []string{userDir}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				failsClearly(t, run(t, tc.args), tc.want)
				for _, p := range tc.gone {
					assert.NoFileExists(t, p)
					assert.NoDirExists(t, p)
				}
				for _, p := range tc.present {
					assert.DirExists(t, p)
				}
			})
		}
	})
}
