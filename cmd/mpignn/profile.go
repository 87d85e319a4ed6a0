package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"mpignn/collectives"
)

// cpuProfileHelp is the help of train's --cpuprofile, which states the
// naming rule: one file per rank, so that ranks on one node (or on a
// shared file system) never write the same file.
const cpuProfileHelp = "write this rank's CPU profile (Go pprof) of the run, from after start-up to the end (also on an error or a stop), to `FILE`; " +
	"with more than one rank every rank writes its own, FILE.rankR (R = its rank: FILE.rank0, FILE.rank1, ...). Read it with go tool pprof -top bin/mpignn FILE"

// cpuProfilePath is the file rank writes its CPU profile to in a world of
// size ranks: file itself on one rank, file.rankR on several.
func cpuProfilePath(file string, rank, size int) string {
	if size > 1 {
		return fmt.Sprintf("%s.rank%d", file, rank)
	}
	return file
}

// startCPUProfile starts this rank's CPU profile into
// cpuProfilePath(file, ...) and returns the function that stops it and
// closes the file; it may be called more than once (a deferred call on the
// error path after an explicit one), and only the first acts. An empty
// file profiles nothing. It is collective: a rank that cannot create its
// file fails every rank, so that none goes on into training alone.
func startCPUProfile(c *collectives.Comm, file string) (stop func() error, err error) {
	noop := func() error { return nil }
	if file == "" {
		return noop, nil
	}
	path := cpuProfilePath(file, c.Rank(), c.Size())
	f, err := os.Create(path)
	started := false
	if err == nil {
		if err = pprof.StartCPUProfile(f); err == nil {
			started = true
		} else {
			f.Close()
			os.Remove(path)
		}
	}
	if err != nil {
		err = fmt.Errorf("--cpuprofile: rank %d: %w", c.Rank(), err)
	}
	if err := collectives.Agree(c, err); err != nil {
		if started {
			// Another rank failed: the run ends before it began, and
			// this rank's profile of nothing is not left behind.
			pprof.StopCPUProfile()
			f.Close()
			os.Remove(path)
		}
		return noop, err
	}
	done := false
	return func() error {
		if done {
			return nil
		}
		done = true
		pprof.StopCPUProfile() // writes the rest of the profile to f
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		return nil
	}, nil
}
