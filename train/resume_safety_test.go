package train

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mpignn/train/metrics"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// epochLine is a valid metrics line for epoch e.
func epochLine(e int) string {
	return fmt.Sprintf(`{"type":"epoch","epoch":%d,"loss":%d.5,"train_acc":0.5}`, e, e)
}

// TestCreateMetricsRepairsTornTail: resuming after keep epochs rewrites the
// metrics file to exactly one valid line per epoch 1..keep. A torn last line
// (kill or full disk mid-append) is dropped with a warning instead of
// blocking the resume; an invalid line followed by valid ones is refused
// naming the file and line, and the file is left as it was.
func TestCreateMetricsRepairsTornTail(t *testing.T) {
	l1, l2, l3, l4 := epochLine(1), epochLine(2), epochLine(3), epochLine(4)
	summary := `{"type":"summary","epochs":4}`
	tests := []struct {
		name     string
		body     string
		keep     int
		want     []string // lines of the rewritten file
		warnings []string // substrings, one per expected warning
		err      string   // non-empty: metrics.Create must fail with this
	}{
		{name: "exactly right", body: l1 + "\n" + l2 + "\n", keep: 2, want: []string{l1, l2}},
		{name: "torn last line", body: l1 + "\n" + l2 + "\n" + l3[:20], keep: 2, want: []string{l1, l2},
			warnings: []string{"torn tail of 1 invalid line(s) from line 3"}},
		{name: "torn line of a checkpointed epoch", body: l1 + "\n" + l2[:25], keep: 2, want: []string{l1},
			warnings: []string{"torn tail of 1 invalid line(s) from line 2", "no line for epoch(s) 2 of the 2"}},
		{name: "garbage last line", body: l1 + "\n" + l2 + "\n\x00\x00\x00\x00\n", keep: 2, want: []string{l1, l2},
			warnings: []string{"torn tail of 1 invalid line(s) from line 3"}},
		{name: "more epochs than the checkpoint", body: strings.Join([]string{l1, l2, l3, l4, summary}, "\n") + "\n", keep: 2,
			want: []string{l1, l2}},
		{name: "more epochs and a torn tail", body: strings.Join([]string{l1, l2, l3, l4[:10]}, "\n"), keep: 3,
			want: []string{l1, l2, l3}, warnings: []string{"torn tail"}},
		{name: "epoch repeated", body: strings.Join([]string{l1, l2, strings.Replace(l2, "2.5", "9.5", 1)}, "\n"), keep: 2,
			want: []string{l1, strings.Replace(l2, "2.5", "9.5", 1)}, warnings: []string{"several lines for epoch(s) 2"}},
		{name: "no file", keep: 3, want: nil, warnings: []string{"no line for epoch(s) 1-3 of the 3"}},
		{name: "garbage in the middle", body: l1 + "\n{oops\n" + l2 + "\n", keep: 2, err: "line 2"},
		{name: "wrong field type in the middle", body: `{"type":"epoch","epoch":1,"loss":"x"}` + "\n" + l2 + "\n", keep: 2, err: "line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.jsonl")
			if tc.body != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			}
			w, err := metrics.Create(path, tc.keep)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), path)
				assert.Contains(t, err.Error(), tc.err)
				got, rerr := os.ReadFile(path)
				require.NoError(t, rerr)
				assert.Equal(t, tc.body, string(got), "a refused file must be left untouched")
				return
			}
			require.NoError(t, err)
			require.Len(t, w.Warnings, len(tc.warnings), "warnings: %q", w.Warnings)
			for i, want := range tc.warnings {
				assert.Contains(t, w.Warnings[i], want)
				assert.Contains(t, w.Warnings[i], path)
			}
			// The run continues the repaired file.
			next := metrics.Epoch{Type: "epoch", Epoch: tc.keep + 1, Loss: 0.25}
			require.NoError(t, w.WriteEpoch(&next))
			require.NoError(t, w.Close())
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			require.Len(t, lines, len(tc.want)+1, "file:\n%s", data)
			assert.Equal(t, strings.Join(tc.want, "\n"), strings.Join(lines[:len(tc.want)], "\n"))
			eps, _, err := metrics.Read(path)
			require.NoError(t, err, "the rewritten file must be valid throughout")
			for i, m := range eps[:len(eps)-1] {
				assert.Less(t, m.Epoch, eps[i+1].Epoch, "one line per epoch, in order")
			}
		})
	}
}

// TestPrepareCheckpointDir: a fresh run refuses a directory holding a
// checkpoint unless told to overwrite it, creates a missing directory (and
// reports exactly the directories it made), and refuses a directory it
// cannot write into with a real write, naming the directory.
func TestPrepareCheckpointDir(t *testing.T) {
	t.Run("existing checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, SaveCheckpoint(dir, sampleCheckpoint(t, false)))
		_, err := PrepareCheckpointDir(dir, false, false)
		require.ErrorIs(t, err, ErrCheckpointExists)
		for _, want := range []string{dir, "--resume", "--overwrite-checkpoint"} {
			assert.Contains(t, err.Error(), want)
		}
		for _, resume := range []bool{true, false} {
			created, err := PrepareCheckpointDir(dir, resume, !resume)
			require.NoError(t, err, "resume=%v", resume)
			assert.Empty(t, created)
		}
		_, err = LoadCheckpoint(dir)
		require.NoError(t, err, "preparing must not touch the checkpoint")
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, ents, 1, "the write probe must be removed")
	})
	t.Run("creates missing dirs", func(t *testing.T) {
		base := t.TempDir()
		dir := filepath.Join(base, "a", "b")
		created, err := PrepareCheckpointDir(dir, false, false)
		require.NoError(t, err)
		assert.Equal(t, []string{dir, filepath.Join(base, "a")}, created)
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, ents, "the write probe must be removed")
		RemoveEmptyDirs(created)
		assert.NoDirExists(t, filepath.Join(base, "a"))
		assert.DirExists(t, base)
	})
	t.Run("keeps dirs with content", func(t *testing.T) {
		base := t.TempDir()
		dir := filepath.Join(base, "a", "b")
		created, err := PrepareCheckpointDir(dir, false, false)
		require.NoError(t, err)
		require.NoError(t, SaveCheckpoint(dir, sampleCheckpoint(t, false)))
		RemoveEmptyDirs(created)
		assert.FileExists(t, filepath.Join(dir, CheckpointFile))
	})
	t.Run("resume into a missing dir creates nothing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "none")
		created, err := PrepareCheckpointDir(dir, true, false)
		require.NoError(t, err)
		assert.Empty(t, created)
		assert.NoDirExists(t, dir)
	})

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	// Root ignores permission bits, so a read-only directory is only
	// unwritable for other users; for root, sysfs refuses new files.
	readOnly := "/sys"
	if os.Geteuid() != 0 {
		readOnly = t.TempDir()
		require.NoError(t, os.Chmod(readOnly, 0o555))
	}
	unwritable := []struct {
		name, dir, want string
	}{
		{"under a regular file", filepath.Join(file, "ck"), "not a directory"},
		{"deeper under a regular file", filepath.Join(file, "a", "ck"), "not a directory"},
		{"read-only directory", readOnly, "is not writable"},
	}
	for _, tc := range unwritable {
		t.Run(tc.name, func(t *testing.T) {
			if st, err := os.Stat(tc.dir); tc.dir == readOnly && (err != nil || !st.IsDir()) {
				t.Skipf("%s is not a directory here", tc.dir)
			}
			for _, resume := range []bool{false, true} {
				created, err := PrepareCheckpointDir(tc.dir, resume, false)
				if resume && tc.dir != readOnly {
					// Nothing to probe: LoadCheckpoint reports it.
					require.NoError(t, err)
					continue
				}
				require.Error(t, err, "resume=%v", resume)
				assert.Contains(t, err.Error(), "checkpoint directory "+tc.dir)
				assert.Contains(t, err.Error(), tc.want)
				assert.Empty(t, created)
			}
		})
	}
}
