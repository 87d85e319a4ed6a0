package tempout

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	pid := cmd.Process.Pid
	require.False(t, Alive(pid), "PID %d of an exited process is reported alive", pid)
	return pid
}

func TestName(t *testing.T) {
	assert.Equal(t, filepath.Join("a", "b", ".out.csv.tmp-42"), Name("a/b/out.csv", 42))
	assert.Equal(t, filepath.Join("a", ".parts.tmp-7"), Name("a/parts/", 7))
	assert.Equal(t, ".x.tmp-1", Name("x", 1))
}

func TestOwnerPID(t *testing.T) {
	cases := []struct {
		name string
		pid  int
		ok   bool
	}{
		{".out.tmp-123", 123, true},
		{".out.tmp-123.old", 123, true},
		{".out.tmp-123-2", 123, true},
		{".out.tmp-", 0, false},
		{".out.tmp-12x", 0, false},
		{".out.tmp-abc", 0, false},
		{".outx.tmp-12", 0, false},
		{"out.tmp-12", 0, false},
		{".other.tmp-12", 0, false},
		{".out.tmp-99999999999999999999999", int(^uint(0) >> 1), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pid, ok := ownerPID(c.name, "out")
			assert.Equal(t, c.ok, ok)
			if c.ok {
				assert.Equal(t, c.pid, pid)
			}
		})
	}
}

func TestAlive(t *testing.T) {
	assert.True(t, Alive(os.Getpid()))
	assert.True(t, Alive(1), "init runs as PID 1 (or another user's process: EPERM)")
	assert.True(t, Alive(0), "0 addresses a process group, never treat it as gone")
	assert.False(t, Alive(deadPID(t)))
	assert.False(t, Alive(1<<40))
}

// TestAliveZombie: a child that has exited but is not reaped yet (we hold
// off Wait until /proc shows it as a zombie, so the moment is certain) is
// not alive, and its temporary is stale.
func TestAliveZombie(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: zombies are not told apart")
	}
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	defer cmd.Wait()
	deadline := time.Now().Add(time.Minute)
	for !zombie(pid) {
		require.True(t, time.Now().Before(deadline), "PID %d never became a zombie", pid)
		time.Sleep(time.Millisecond)
	}
	assert.False(t, Alive(pid))

	out := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Mkdir(Name(out, pid), 0o755))
	removed, err := RemoveStale(out)
	require.NoError(t, err)
	assert.Equal(t, []string{Name(out, pid)}, removed)
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "data")
	dead := deadPID(t)
	staleDir := Name(out, dead)
	require.NoError(t, os.MkdirAll(filepath.Join(staleDir, "raw"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(staleDir, "raw", "x"), []byte("x"), 0o644))
	staleOld := Name(out, dead) + ".old"
	require.NoError(t, os.Mkdir(staleOld, 0o755))
	live := Own(out)
	require.NoError(t, os.Mkdir(live, 0o755))
	// Not temporaries of out: other outputs, the output itself, lookalikes.
	keep := []string{out, Name(filepath.Join(dir, "other"), dead), filepath.Join(dir, ".data.tmp-x"), filepath.Join(dir, "data.tmp-1")}
	for _, k := range keep {
		require.NoError(t, os.WriteFile(k, nil, 0o644))
	}

	removed, err := RemoveStale(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{staleDir, staleOld}, removed)
	assert.NoDirExists(t, staleDir)
	assert.NoDirExists(t, staleOld)
	assert.DirExists(t, live, "a temporary of a live process was removed")
	for _, k := range keep {
		assert.FileExists(t, k)
	}

	removed, err = RemoveStale(filepath.Join(dir, "missing", "out"))
	assert.NoError(t, err, "a missing parent has nothing stale")
	assert.Empty(t, removed)
}

func newTestCleanup() (*Cleanup, *bytes.Buffer, chan int) {
	c := NewCleanup("mpignn test")
	var msg bytes.Buffer
	codes := make(chan int, 2)
	c.errw = &msg
	c.exit = func(code int) { codes <- code }
	c.sleep = func(time.Duration) {}
	return c, &msg, codes
}

// TestCleanupLinger: a lingering process removes its paths and says so
// before it waits, and waits before it exits, on the signal and on a late
// registration alike.
func TestCleanupLinger(t *testing.T) {
	dir := t.TempDir()
	c, msg, codes := newTestCleanup()
	f := filepath.Join(dir, ".f.tmp-1")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	c.Add(f)
	c.Linger(7 * time.Second)
	var waited []time.Duration
	c.sleep = func(d time.Duration) {
		assert.NoFileExists(t, f, "removed before the wait")
		assert.Contains(t, msg.String(), "no temporary output left", "reported before the wait")
		assert.Empty(t, codes, "exited before the wait")
		waited = append(waited, d)
	}
	c.fire(syscall.SIGTERM)
	assert.Equal(t, 143, <-codes)
	late := filepath.Join(dir, ".late.tmp-1")
	c.Add(late)
	assert.Equal(t, 143, <-codes)
	assert.Equal(t, []time.Duration{7 * time.Second, 7 * time.Second}, waited)
}

func TestCleanupFire(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{{"SIGINT", syscall.SIGINT, 130}, {"SIGTERM", syscall.SIGTERM, 143}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c, msg, codes := newTestCleanup()
			f := filepath.Join(dir, ".f.tmp-1")
			d := filepath.Join(dir, ".d.tmp-1")
			require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o755))
			c.Add(f)
			c.Add(d)
			c.Add(filepath.Join(dir, "never-created"))
			c.fire(tc.sig)
			assert.Equal(t, tc.code, <-codes)
			assert.NoFileExists(t, f)
			assert.NoDirExists(t, d)
			assert.Equal(t, "mpignn test: interrupted by "+tc.name+"; no temporary output left\n", msg.String())

			// A registration after the signal removes its path itself and
			// exits with the same code rather than leaving the file.
			late := filepath.Join(dir, ".late.tmp-1")
			require.NoError(t, os.WriteFile(late, nil, 0o644))
			c.Add(late)
			assert.Equal(t, tc.code, <-codes)
			assert.NoFileExists(t, late)
		})
	}
}

// TestCleanupListen sends a real SIGTERM to this process: the handler must
// remove the registered file and exit with 143.
func TestCleanupListen(t *testing.T) {
	dir := t.TempDir()
	c, _, codes := newTestCleanup()
	f := filepath.Join(dir, ".f.tmp-1")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	c.Add(f)
	stop := c.Listen()
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	select {
	case code := <-codes:
		assert.Equal(t, 143, code)
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	assert.NoFileExists(t, f)
}
