package graph

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

// exitedPID returns the PID of a process that has exited and been reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// TestWriteRemovesStaleTemp: a dataset write removes the temporary a killed
// writer of the same output left (dead PID) and keeps one whose writer
// still runs.
func TestWriteRemovesStaleTemp(t *testing.T) {
	s, err := Generate(smallGen(1, 1))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "syn")
	stale := tempout.Name(out, exitedPID(t))
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "raw"), 0o755))
	live := tempout.Name(out, os.Getppid()) // the go command: alive
	require.NoError(t, os.Mkdir(live, 0o755))

	require.NoError(t, WriteSynthetic(out, s))
	assert.NoDirExists(t, stale, "stale temporary of a dead writer was kept")
	assert.DirExists(t, live, "temporary of a live writer was removed")
	assert.NoDirExists(t, tempout.Own(out), "own temporary left after success")
	d, err := ReadOGB(out, UndirectedOptions())
	require.NoError(t, err)
	assert.Equal(t, s.Data.NumNodes, d.NumNodes)
}

// TestWriteDiskFullNamesPathOnce: a write error names the file once, not
// "write X: write X: ...".
func TestWriteDiskFullNamesPathOnce(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	err := writeSmallGzip("/dev/full", "1\n")
	require.Error(t, err)
	assert.Equal(t, "write /dev/full: no space left on device", err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "/dev/full"))
}
