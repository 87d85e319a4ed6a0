package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Harness builds the binaries once per test process and runs MPI jobs.
type Harness struct {
	Root    string        // repository root
	Bin     string        // directory of the built binaries
	Ranks   []int         // rank counts to test
	Timeout time.Duration // limit of one mpirun

	mu     sync.Mutex
	builds map[string]error
}

// NewHarness finds the repository (the parent of this package's directory)
// and reads the environment overrides.
func NewHarness(binDir string) (*Harness, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	h := &Harness{Root: filepath.Dir(wd), Bin: binDir, Ranks: []int{1, 2, 3, 4}, Timeout: 5 * time.Minute, builds: map[string]error{}}
	if s := os.Getenv("MPIGNN_TEST_RANKS"); s != "" {
		h.Ranks = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("MPIGNN_TEST_RANKS=%q: want a comma-separated list of positive rank counts", s)
			}
			h.Ranks = append(h.Ranks, n)
		}
	}
	if s := os.Getenv("MPIGNN_TEST_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("MPIGNN_TEST_TIMEOUT=%q: want a positive Go duration such as 5m", s)
		}
		h.Timeout = d
	}
	return h, nil
}

// build runs a go build/test -c once per output name and remembers the
// result, so parallel tests share one compilation.
func (h *Harness) build(name string, args ...string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := filepath.Join(h.Bin, name)
	if err, done := h.builds[name]; done {
		return out, err
	}
	// -o must precede the package path.
	last := len(args) - 1
	cmd := exec.Command("go", append(append(args[:last:last], "-o", out), args[last])...)
	cmd.Dir = h.Root
	msg, err := cmd.CombinedOutput()
	if err != nil {
		err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	h.builds[name] = err
	return out, err
}

// TestBinary compiles the tests of package dir (relative to the root).
func (h *Harness) TestBinary(dir string) (string, error) {
	return h.build(strings.ReplaceAll(dir, "/", "_")+".test", "test", "-c", "./"+dir)
}

// Mpignn compiles the mpignn command.
func (h *Harness) Mpignn() (string, error) { return h.build("mpignn", "build", "./cmd/mpignn") }

// Run is the outcome of one MPI job.
type Run struct {
	Output   string // stdout and stderr of all ranks, interleaved
	Stdout   string // stdout alone (lines of stderr can split its lines in Output)
	Err      error  // nil on exit code 0
	Elapsed  time.Duration
	TimedOut bool
}

// Job describes one MPI job.
type Job struct {
	Ranks   int
	Dir     string   // working directory ("" = repository root)
	Env     []string // extra environment, KEY=VALUE
	MPIArgs []string // extra launcher arguments (e.g. --mca btl self,tcp)
	Args    []string // program and its arguments
	Timeout time.Duration
}

// MPI runs a job through the repository's mpirun.sh, so the tests also
// exercise the launcher users run.
func (h *Harness) MPI(j Job) Run {
	timeout := j.Timeout
	if timeout == 0 {
		timeout = h.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"-n", strconv.Itoa(j.Ranks)}, j.MPIArgs...)
	args = append(args, j.Args...)
	cmd := exec.CommandContext(ctx, filepath.Join(h.Root, "mpirun.sh"), args...)
	cmd.Dir = h.Root
	if j.Dir != "" {
		cmd.Dir = j.Dir
	}
	cmd.Env = append(os.Environ(), transportEnv(j)...)
	// mpirun starts the ranks in its own process group; kill the whole
	// group on timeout, not only mpirun.
	setProcessGroup(cmd)
	var out, stdout bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout = io.MultiWriter(&lockedWriter{&mu, &out}, &stdout)
	cmd.Stderr = &lockedWriter{&mu, &out}
	start := time.Now()
	err := cmd.Run()
	r := Run{Output: out.String(), Stdout: stdout.String(), Err: err, Elapsed: time.Since(start)}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.TimedOut = true
		r.Err = fmt.Errorf("timed out after %v (hang?)", timeout)
	}
	return r
}

// lockedWriter serialises the stdout and stderr copiers of exec.Cmd into
// one buffer.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// tail returns the last n lines of s, for failure messages.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines omitted)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// mustBuild fails the test when a build fails.
func mustBuild(t *testing.T, path string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("build %s: %v", filepath.Base(path), err)
	}
}

// transportEnv is j's environment, plus MPIGNN_NODE_RANKS=1 (every rank
// a pretend node of its own, docs/cluster.md) where j names a --transport
// and no node layout of its own: ranks of one machine read each other's
// rows from shared memory by default (collectives.Comm.ShareRanks), and a
// test that names a transport means rows to move over it, as they do
// between machines.
func transportEnv(j Job) []string {
	if !slices.Contains(j.Args, "--transport") {
		return j.Env
	}
	for _, e := range j.Env {
		if strings.HasPrefix(e, "MPIGNN_NODE_RANKS=") {
			return j.Env
		}
	}
	return append(slices.Clip(j.Env), "MPIGNN_NODE_RANKS=1")
}
