package testhold

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mpignn/spmd/launched"
)

// Environment variables read by At.
const (
	EnvSpec = "MPIGNN_TEST_HOLD"
	EnvDir  = "MPIGNN_TEST_HOLD_DIR"
)

// pollEvery is how often a holding process looks for its release file.
const pollEvery = 5 * time.Millisecond

// Wanted reports whether spec (the value of MPIGNN_TEST_HOLD) asks to hold
// at point on rank.
func Wanted(spec, point string, rank int) bool {
	for _, s := range strings.Split(spec, ",") {
		p, r, hasRank := strings.Cut(strings.TrimSpace(s), "@")
		if p != point {
			continue
		}
		if !hasRank {
			return true
		}
		if n, err := strconv.Atoi(r); err == nil && n == rank {
			return true
		}
	}
	return false
}

// Announce is the file a process holding at point on rank writes in dir.
func Announce(dir, point string, rank int) string {
	return filepath.Join(dir, fileName(point)+"@"+strconv.Itoa(rank))
}

// Release is the file that lets a holding process go on.
func Release(dir, point string, rank int) string {
	return Announce(dir, point, rank) + ".go"
}

// fileName keeps a point usable as one file name.
func fileName(point string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == 0 {
			return '_'
		}
		return r
	}, point)
}

// At holds the process at point when MPIGNN_TEST_HOLD asks for it (see the
// package comment) and returns at once otherwise. A hold that cannot be
// announced (no MPIGNN_TEST_HOLD_DIR, an unwritable directory) is reported
// on stderr and skipped: the test waiting for it then fails by its own
// deadline, naming the point, rather than the process hanging unseen.
func At(point string) {
	spec := os.Getenv(EnvSpec)
	if spec == "" {
		return
	}
	rank := launched.Rank()
	if !Wanted(spec, point, rank) {
		return
	}
	if err := hold(os.Getenv(EnvDir), point, rank); err != nil {
		fmt.Fprintf(os.Stderr, "mpignn: test hold at %s on rank %d skipped: %v\n", point, rank, err)
	}
}

func hold(dir, point string, rank int) error {
	if dir == "" {
		return errors.New(EnvDir + " is not set")
	}
	ann, rel := Announce(dir, point, rank), Release(dir, point, rank)
	tmp := ann + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, ann); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(os.Stderr, "mpignn: test hold at %s on rank %d (pid %d)\n", point, rank, os.Getpid())
	for {
		if _, err := os.Stat(rel); err == nil {
			break
		}
		time.Sleep(pollEvery)
	}
	os.Remove(rel)
	os.Remove(ann)
	return nil
}

// Await waits until a process announces a hold at point on rank in dir and
// returns its PID. It gives up with an error after limit, or as soon as
// done (the process's exit, when not nil) is closed.
func Await(dir, point string, rank int, limit time.Duration, done <-chan struct{}) (int, error) {
	ann := Announce(dir, point, rank)
	deadline := time.After(limit)
	for {
		if b, err := os.ReadFile(ann); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				return 0, fmt.Errorf("hold file %s: %q is not a PID", ann, b)
			}
			return pid, nil
		}
		select {
		case <-done:
			return 0, fmt.Errorf("the process ended before holding at %s on rank %d", point, rank)
		case <-deadline:
			return 0, fmt.Errorf("no hold at %s on rank %d within %v", point, rank, limit)
		case <-time.After(pollEvery):
		}
	}
}

// Go releases a process holding at point on rank in dir.
func Go(dir, point string, rank int) error {
	return os.WriteFile(Release(dir, point, rank), nil, 0o644)
}
