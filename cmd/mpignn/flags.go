package main

import (
	"flag"
	"fmt"
	"math"
	"runtime"
)

// parseFlags parses args into fs and then refuses a non-finite value (NaN,
// ±Inf: strconv accepts them) in any of its float flags, so that every
// float flag of every command is checked once, here, and a NaN never
// reaches a comparison that it would silently pass.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return finiteFlags(fs)
}

// finiteFlags returns an error naming the first float flag of fs (in
// lexical order) whose value is not a finite number.
func finiteFlags(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if v, ok := g.Get().(float64); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("--%s %v: want a finite number", f.Name, v)
		}
	})
	return err
}

// maxThreadsPerCore bounds --threads: more compute threads than this many
// per core only adds scheduling overhead, and a typo such as 100000 would
// exhaust the runtime's thread limit (a crash, not an error).
const maxThreadsPerCore = 4

// checkThreads refuses a --threads value above maxThreadsPerCore x the
// cores of this machine (n < 1 means the default share).
func checkThreads(n int) error {
	if limit := maxThreadsPerCore * runtime.NumCPU(); n > limit {
		return fmt.Errorf("--threads %d: more than %d (%d x the %d cores of this machine)", n, limit, maxThreadsPerCore, runtime.NumCPU())
	}
	return nil
}
