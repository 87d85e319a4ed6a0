package spmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// World is this process's view of the MPI job: its rank, the number of ranks,
// and a rank-tagged logger. There is one per process, made by Init.
type World struct {
	rank, size int
	version    string
	ownsMPI    bool // false when MPI was already started by someone else

	mu  sync.Mutex // serialises log lines from several goroutines
	out io.Writer

	atFinalize []func() error // see AtFinalize
}

// Init starts MPI (or joins an MPI that is already running), checks that the
// library grants at least MPI_THREAD_SERIALIZED, and makes MPI return errors
// instead of aborting. Without mpirun the process runs as a one-rank world
// (MPI singleton).
//
// Init locks the calling goroutine to its OS thread so that the thread that
// initialised MPI is the one that finalises it.
func Init() (*World, error) {
	runtime.LockOSThread()
	provided, already, err := mpiInit()
	if err != nil {
		return nil, fmt.Errorf("start MPI: %w", err)
	}
	if provided < threadSerialized() {
		return nil, fmt.Errorf("start MPI: the library grants thread level %d, below MPI_THREAD_SERIALIZED (%d)", provided, threadSerialized())
	}
	rank, size, err := mpiRankSize()
	if err != nil {
		return nil, fmt.Errorf("start MPI: %w", err)
	}
	return &World{rank: rank, size: size, version: libraryVersion(), ownsMPI: !already, out: os.Stderr}, nil
}

// Rank returns this process's rank in MPI_COMM_WORLD.
func (w *World) Rank() int { return w.rank }

// Size returns the number of ranks in MPI_COMM_WORLD.
func (w *World) Size() int { return w.size }

// IsRoot reports whether this is rank 0, the rank that prints and writes.
func (w *World) IsRoot() bool { return w.rank == 0 }

// Library returns the MPI library's version line, e.g. "Open MPI v4.1.4".
func (w *World) Library() string { return w.version }

// Tag returns the log prefix of this rank, "[rank 2/4]". Ranks are shown
// 0-based against the world size.
func (w *World) Tag() string { return fmt.Sprintf("[rank %d/%d]", w.rank, w.size) }

// SetOutput redirects the log (stderr by default).
func (w *World) SetOutput(out io.Writer) {
	w.mu.Lock()
	w.out = out
	w.mu.Unlock()
}

// Logf writes one rank-tagged line to the log.
func (w *World) Logf(format string, args ...any) {
	line := w.Tag() + " " + fmt.Sprintf(format, args...)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line += "\n"
	}
	w.mu.Lock()
	io.WriteString(w.out, line)
	w.mu.Unlock()
}

// Barrier blocks until every rank has reached it.
func (w *World) Barrier() error { return mpiBarrier() }

// AgreeExit returns the largest of every rank's code: the job's exit code,
// agreed so that every rank reports the same pass or fail. It is collective.
func (w *World) AgreeExit(code int) (int, error) { return mpiAllreduceMaxInt(code) }

// AtFinalize registers f to run at the start of Finalize, before MPI stops:
// a last collective step such as the stall watchdog's final gate, which
// keeps a rank from waiting forever in MPI_Finalize for a stalled peer.
func (w *World) AtFinalize(f func() error) { w.atFinalize = append(w.atFinalize, f) }

// Finalize runs the functions registered with AtFinalize, then stops MPI if
// Init started it. It is collective. An error of a registered function ends
// the whole job through Fatal: the ranks are no longer in step, so some of
// them could not finalize.
func (w *World) Finalize() error {
	for _, f := range w.atFinalize {
		if err := f(); err != nil {
			w.Fatal(err)
		}
	}
	if !w.ownsMPI {
		return nil
	}
	return mpiFinalize()
}

// Fatal prints err with this rank's tag and ends the whole job with
// MPI_Abort, so the other ranks do not hang in their next collective. It
// does not return.
func (w *World) Fatal(err error) {
	if err == nil {
		err = errors.New("fatal error")
	}
	w.Logf("fatal: %v", err)
	noteExit(1)
	if f, ok := w.out.(*os.File); ok {
		f.Sync()
	}
	// Give the launcher a moment to forward the message before the abort
	// tears the job down; OpenMPI can drop the last line of a killed rank.
	time.Sleep(100 * time.Millisecond)
	mpiAbort(1)
	// MPI_Abort does not return in practice; make sure we never continue.
	os.Exit(1)
}

// agreed is implemented by errors that every rank is known to hold
// identically (the ranks computed them from the same collective exchange),
// such as a start-up mismatch between ranks.
type agreed interface{ Agreed() bool }

// Run is the standard main for an MPI command: it starts MPI, runs body, and
// on error ends the whole job through Fatal. On success it finalises MPI.
//
// An error that every rank holds (see agreed) needs no abort: rank 0 prints
// it once, every rank finalises MPI and exits with status 1, so the user
// sees one line instead of one per rank and the launcher's abort banner.
func Run(body func(w *World) error) {
	w, err := Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpignn: %v\n", err)
		os.Exit(1)
	}
	if err := body(w); err != nil {
		var a agreed
		if !errors.As(err, &a) || !a.Agreed() {
			w.Fatal(err)
		}
		if w.IsRoot() {
			w.Logf("fatal: %v", err)
		}
		w.Finalize()
		Exit(1)
	}
	if err := w.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "%s finalize: %v\n", w.Tag(), err)
		Exit(1)
	}
}

// ExitFileEnv names the file in which a rank notes the exit code it ends
// with (Exit). mpirun.sh sets it when it launches with MPICH's Hydra, whose
// mpiexec may report 0 for a rank once it has forwarded a signal to them
// (its proxies then count any exit as part of their own cleanup), so that
// a job stopped by SIGUSR1 (75) or failing after one exited 0. mpirun.sh
// exits with the largest code noted when mpiexec says 0. It creates the
// file; a rank that cannot open it (on another host without a shared
// working directory) notes nothing.
const ExitFileEnv = "MPIGNN_EXIT_FILE"

// Exit ends the process with code, first noting a non-zero code for the
// launcher (see ExitFileEnv). Every exit of a rank after MPI started goes
// through it (or through Fatal, which notes 1).
func Exit(code int) {
	noteExit(code)
	os.Exit(code)
}

// noteExit appends code as one line to the file named by ExitFileEnv, if
// it is set and exists. One short O_APPEND write per rank: the ranks'
// lines never mix.
func noteExit(code int) {
	path := os.Getenv(ExitFileEnv)
	if code == 0 || path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return // not ours to create: see ExitFileEnv
	}
	f.WriteString(strconv.Itoa(code) + "\n")
	f.Close()
}
