package tempout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const marker = ".tmp-"

// Name returns the temporary name of output out for process pid: the
// sibling .BASE.tmp-PID of out.
func Name(out string, pid int) string {
	out = filepath.Clean(out)
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+marker+strconv.Itoa(pid))
}

// Own returns the temporary name of out for this process.
func Own(out string) string { return Name(out, os.Getpid()) }

// ownerPID returns the PID in entry name if it is a temporary of an output
// called base: ".BASE.tmp-PID" with nothing after PID or a suffix starting
// with '.' or '-'.
func ownerPID(name, base string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "."+base+marker)
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 || (end < len(rest) && rest[end] != '.' && rest[end] != '-') {
		return 0, false
	}
	pid, err := strconv.ParseUint(rest[:end], 10, 64)
	if err != nil {
		// More digits than any PID: cannot name a running process.
		return math.MaxInt, true
	}
	if pid > math.MaxInt {
		return math.MaxInt, true
	}
	return int(pid), true
}

// Alive reports whether a process with this PID runs on this host (an
// exited one that is not yet reaped, a zombie, does not). A
// process of another user (EPERM) counts as alive; so does anything that is
// not clearly gone, because removing a live writer's file is worse than
// keeping a stale one.
func Alive(pid int) bool {
	if pid <= 0 {
		return true // 0 and negative values address process groups, not a writer
	}
	if pid > math.MaxInt32 {
		return false // beyond pid_t: no process can have it
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return !zombie(pid)
}

// zombie reports whether pid has exited but is not yet reaped (state Z, or
// X while it is being reaped, in /proc/PID/stat): it can write nothing
// more, yet kill(pid, 0) still finds it. MPICH's Hydra returns once it has
// killed the ranks of a failed job, and a killed rank whose launcher proxy
// exited first waits as a zombie until init reaps it, which some
// containers' init does late or never; its temporary is stale all along.
// Without /proc (not Linux) nothing counts as a zombie.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so
	// the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// RemoveStale removes the temporaries of out (files or directories beside
// it named by Name, with any suffix) whose writer is no longer alive, and
// returns the paths it removed. Temporaries of live processes, this one
// included, are kept. A missing parent directory is not an error.
func RemoveStale(out string) ([]string, error) {
	out = filepath.Clean(out)
	dir, base := filepath.Dir(out), filepath.Base(out)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for stale temporaries of %s: %w", out, err)
	}
	var removed []string
	for _, e := range ents {
		pid, ok := ownerPID(e.Name(), base)
		if !ok || Alive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return removed, fmt.Errorf("remove stale temporary %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// Cleanup removes the temporaries registered with Add when the process gets
// SIGINT or SIGTERM, then exits with 128 + the signal number (130, 143).
// Create one per command with NewCleanup and call Listen; it holds no
// global state besides the signal subscription Listen makes.
type Cleanup struct {
	name   string    // prefix of the one line printed on a signal
	errw   io.Writer // where that line goes
	exit   func(code int)
	sleep  func(time.Duration)
	linger time.Duration // see Linger

	mu    sync.Mutex
	paths []string
	fired bool
	code  int
	done  chan struct{} // closed once the handler has removed every path
}

// NewCleanup returns an empty registry; name (e.g. "mpignn gen") starts the
// message printed on a signal.
func NewCleanup(name string) *Cleanup {
	return &Cleanup{name: name, errw: os.Stderr, exit: os.Exit, sleep: time.Sleep, done: make(chan struct{})}
}

// Linger makes the process wait up to d after it has removed its paths on
// a signal, before it exits. An MPI rank that does not write the output
// (every rank but 0 in mpignn's commands) lingers so that its exit cannot
// cut short the removal on the rank that does: MPICH's Hydra SIGKILLs
// every other rank as soon as one exits without MPI_Finalize, and
// OpenMPI's mpirun ends the job too. Rank 0's exit normally ends the
// lingering ranks long before d; d only bounds the wait under a launcher
// that does not (srun without --kill-on-bad-exit).
func (c *Cleanup) Linger(d time.Duration) {
	c.mu.Lock()
	c.linger = d
	c.mu.Unlock()
}

// Add registers path for removal on a signal. Register a temporary before
// creating it: a path registered first is removed however far its writer
// got. If the signal has already arrived, Add removes path itself (its
// writer may have created it in the meantime) and does not return: the
// process is exiting.
func (c *Cleanup) Add(path string) {
	c.mu.Lock()
	if !c.fired {
		c.paths = append(c.paths, path)
		c.mu.Unlock()
		return
	}
	code, linger := c.code, c.linger
	c.mu.Unlock()
	os.RemoveAll(path)
	<-c.done
	c.sleep(linger)
	c.exit(code)
}

// Listen starts handling SIGINT and SIGTERM; stop ends it (the signals get
// their default action again).
func (c *Cleanup) Listen() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			c.fire(sig.(syscall.Signal))
		case <-quit:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(quit)
		})
	}
}

// fire removes every registered path and exits with 128+sig. Paths are
// removed twice: a writer may still be creating files inside a directory
// while it is removed, which makes the first RemoveAll fail with "directory
// not empty". Anything a writer recreates in the instant before exit carries
// this process's PID and is removed by the next RemoveStale.
func (c *Cleanup) fire(sig syscall.Signal) {
	c.mu.Lock()
	if c.fired {
		c.mu.Unlock()
		return
	}
	c.fired = true
	c.code = 128 + int(sig)
	paths := c.paths
	code, linger := c.code, c.linger
	c.mu.Unlock()
	var failed []string
	for _, p := range paths {
		if os.RemoveAll(p) != nil && os.RemoveAll(p) != nil {
			failed = append(failed, p)
		}
	}
	close(c.done)
	if len(failed) > 0 {
		fmt.Fprintf(c.errw, "%s: interrupted by %s; could not remove %s\n", c.name, sigName(sig), strings.Join(failed, ", "))
	} else {
		fmt.Fprintf(c.errw, "%s: interrupted by %s; no temporary output left\n", c.name, sigName(sig))
	}
	c.sleep(linger)
	c.exit(code)
}

// sigName gives the names users know from kill and scancel.
func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
