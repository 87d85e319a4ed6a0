package tests

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"mpignn/internal/testhold"
)

// Processes that tests start in the background and act on while they run:
// signal, kill or stop them, usually at a test hold (internal/testhold),
// so that the moment is certain on a fast machine and a slow one alike.

// proc is one running mpignn (or mpirun) process with its output.
type proc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex // the output is read while the process writes it
	out  bytes.Buffer
	done chan struct{}
	err  error
}

// Write collects the process's stdout and stderr.
func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// output returns what the process has printed so far.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startEnv(t, nil, name, args...)
}

// startEnv is start with extra KEY=VALUE environment (for example a hold).
func startEnv(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	// Cancelling ctx kills the process group (setProcessGroup): a failed
	// test leaves no process behind.
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{cmd: exec.CommandContext(ctx, name, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p // one writer: exec copies both from one pipe
	p.cmd.Dir = h.Root
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	setProcessGroup(p.cmd)
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// holding is a process started to stop at one test hold point (see
// internal/testhold): the test acts on it while it certainly is there.
type holding struct {
	*proc
	dir, point string
	rank       int
}

// startHeld starts `name args` asking rank (0 outside MPI) to hold at point.
func startHeld(t *testing.T, point string, rank int, name string, args ...string) *holding {
	t.Helper()
	dir := t.TempDir()
	env := []string{testhold.EnvSpec + "=" + point + "@" + strconv.Itoa(rank), testhold.EnvDir + "=" + dir}
	return &holding{proc: startEnv(t, env, name, args...), dir: dir, point: point, rank: rank}
}

// await returns the PID of the process holding at the point, failing if
// the process ends first or does not get there within two minutes (a slow
// machine only makes the wait longer, never the test's outcome different).
func (hp *holding) await(t *testing.T) int {
	t.Helper()
	pid, err := testhold.Await(hp.dir, hp.point, hp.rank, 2*time.Minute, hp.done)
	require.NoError(t, err, "%s", tail(hp.output(), 20))
	return pid
}

// release lets the held process go on.
func (hp *holding) release(t *testing.T) {
	t.Helper()
	require.NoError(t, testhold.Go(hp.dir, hp.point, hp.rank))
}

// wait returns the exit code (-1 when killed by a signal), failing on a hang.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		t.Fatalf("%s did not end within %v (hang?)\n%s", p.cmd.Args[1], limit, tail(p.output(), 20))
	}
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		t.Fatalf("wait: %v", p.err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitLine waits until the process has printed a line containing s; a
// slow machine only makes the wait longer.
func (p *proc) waitLine(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(p.output(), s) {
		select {
		case <-p.done:
			t.Fatalf("%s ended before printing %q:\n%s", p.cmd.Args[1], s, tail(p.output(), 20))
		case <-deadline:
			t.Fatalf("no %q within two minutes:\n%s", s, tail(p.output(), 20))
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// startHeldMPI starts `mpirun.sh -n ranks args...` asking rank to hold at
// point.
func startHeldMPI(t *testing.T, point string, rank, ranks int, args ...string) *holding {
	t.Helper()
	return startHeld(t, point, rank, filepath.Join(h.Root, "mpirun.sh"), append([]string{"-n", strconv.Itoa(ranks)}, args...)...)
}
