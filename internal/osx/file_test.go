package osx

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/tempout"
)

// TestWriteFileAtomicStaleTemps: the next writer of a checkpoint directory
// removes the temporary a killed writer left (dead PID) and keeps one of a
// live writer; it leaves no temporary of its own.
func TestWriteFileAtomicStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.bin")
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	stale := tempout.Name(path, cmd.Process.Pid)
	require.NoError(t, os.WriteFile(stale, []byte("half a checkpoint"), 0o600))
	live := tempout.Name(path, os.Getppid())
	require.NoError(t, os.WriteFile(live, nil, 0o600))
	// A leftover with our own PID (an earlier failed write, or a reused PID).
	require.NoError(t, os.WriteFile(tempout.Own(path), []byte("old"), 0o600))

	require.NoError(t, WriteFileAtomic(path, []byte("new")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(b))
	assert.NoFileExists(t, stale)
	assert.FileExists(t, live)
	assert.NoFileExists(t, tempout.Own(path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
}

// TestWriteFileAtomicErrorNamesPath: errors name the output once, never the
// temporary.
func TestWriteFileAtomicErrorNamesPath(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path, cause string
	}{
		{"missing dir", filepath.Join(dir, "none", "pred.csv"), "no such file or directory"},
		{"target is a directory", dir, "file exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteFileAtomic(tc.path, []byte("x"))
			require.Error(t, err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "write "+tc.path+": "), msg)
			assert.Equal(t, 1, strings.Count(msg, tc.path), msg)
			assert.NotContains(t, msg, ".tmp-")
			assert.Contains(t, msg, tc.cause)
		})
	}
}
