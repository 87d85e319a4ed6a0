package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"mpignn/collectives"
	"mpignn/internal/watchdog"
	"mpignn/spmd"
)

// timeoutValue is the value of --timeout: a Go duration, not negative.
type timeoutValue time.Duration

func (t *timeoutValue) String() string { return time.Duration(*t).String() }

func (t *timeoutValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a Go duration such as 5m or 30s, or 0 (no limit)")
	}
	if d < 0 {
		return errors.New("must not be negative (0 means no limit)")
	}
	*t = timeoutValue(d)
	return nil
}

// addTimeoutFlag declares --timeout, the stall watchdog's limit of every
// command that runs under MPI (see newComm).
func addTimeoutFlag(fs *flag.FlagSet, p *time.Duration) {
	*p = watchdog.DefaultTimeout
	fs.Var((*timeoutValue)(p), "timeout", "end the job when a rank waits longer than this `duration` for the others in one MPI operation (a stalled rank), naming the operation, the phase and the ranks not heard from; 0 = wait forever")
}

// newComm returns the world communicator, watched with timeout (see
// collectives.Comm.Watch). It is collective.
func newComm(w *spmd.World, timeout time.Duration) (*collectives.Comm, error) {
	c, err := collectives.NewComm()
	if err != nil {
		return nil, err
	}
	if err := c.Watch(w, timeout); err != nil {
		return nil, err
	}
	// MPIGNN_NODE_RANKS=n makes every n consecutive ranks a pretend node
	// for shared partitions: the way to run a job of several nodes' layout
	// on one machine (tests, trials).
	if v := os.Getenv("MPIGNN_NODE_RANKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("MPIGNN_NODE_RANKS=%q: want a positive number of ranks per pretend node", v)
		}
		if err := c.SetNodeRanks(n); err != nil {
			return nil, err
		}
	}
	return c, nil
}
