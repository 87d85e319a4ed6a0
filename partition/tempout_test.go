package partition

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/tempout"
)

// TestWriteTempAndMode: the partition directory gets the mode of every
// other output directory (0755 less umask; MkdirTemp gave 0700), and a
// temporary left by a killed writer (dead PID) is removed, one of a live
// writer kept.
func TestWriteTempAndMode(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "parts")
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	stale := tempout.Name(out, cmd.Process.Pid)
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "part-0"), 0o755))
	staleOld := stale + ".old" // an --force run killed between its renames
	require.NoError(t, os.Mkdir(staleOld, 0o755))
	live := tempout.Name(out, os.Getppid())
	require.NoError(t, os.Mkdir(live, 0o755))

	_, err := WriteDataset(out, communityDataset(300, 3, 1), 2, Options{Seed: 1})
	require.NoError(t, err)

	ref := filepath.Join(dir, "ref")
	require.NoError(t, os.Mkdir(ref, 0o755))
	want, err := os.Stat(ref)
	require.NoError(t, err)
	got, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, want.Mode().Perm(), got.Mode().Perm(), "partition directory mode")
	assert.NoDirExists(t, stale)
	assert.NoDirExists(t, staleOld)
	assert.DirExists(t, live)
	assert.NoDirExists(t, tempout.Own(out))
}

// TestWriteDiskFullNamesPathOnce: "write X: no space left on device", not
// "write X: write X: ...".
func TestWriteDiskFullNamesPathOnce(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	aw, err := newArrayWriter(1)
	require.NoError(t, err)
	defer aw.close()
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"meta", func() error { return writeFileSync("/dev/full", []byte("{}\n")) }},
		{"array", func() error { _, err := writeArrayFile(aw, "/dev/full", make([]int64, 1000)); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.write()
			require.Error(t, err)
			assert.Equal(t, "write /dev/full: no space left on device", err.Error())
		})
	}
}
