package train

import "time"

// Phase is one part of a training step, timed separately.
type Phase int

// The phases of a training step, in the order they run.
const (
	PhaseSample Phase = iota
	PhaseGather
	PhaseForward
	PhaseBackward
	PhaseAllreduce
	PhaseOptimizer
	// PhaseWait is the time the MPI goroutine waits for a step's compute
	// after fetching the next batches (prefetch only): the compute that
	// the fetch did not hide. It overlaps PhaseForward and PhaseBackward.
	PhaseWait
	numPhases
)

// String returns the phase name used in metrics ("sample", "gather", ...).
func (p Phase) String() string {
	switch p {
	case PhaseSample:
		return "sample"
	case PhaseGather:
		return "gather"
	case PhaseForward:
		return "forward"
	case PhaseBackward:
		return "backward"
	case PhaseAllreduce:
		return "allreduce"
	case PhaseOptimizer:
		return "optimizer"
	case PhaseWait:
		return "wait"
	}
	return "unknown"
}

// PhaseTimes accumulates wall time per phase on this rank.
type PhaseTimes [numPhases]time.Duration

// Seconds returns the time of phase p in seconds.
func (t *PhaseTimes) Seconds(p Phase) float64 { return t[p].Seconds() }

// stopwatch times consecutive phases: each lap charges the time since the
// previous lap to one phase.
type stopwatch struct {
	t    *PhaseTimes
	last time.Time
}

func startWatch(t *PhaseTimes) stopwatch { return stopwatch{t: t, last: time.Now()} }

func (w *stopwatch) lap(p Phase) {
	now := time.Now()
	w.t[p] += now.Sub(w.last)
	w.last = now
}

// skip restarts the watch without charging anyone (for time already
// attributed elsewhere, such as the source's own sample/gather timers).
func (w *stopwatch) skip() { w.last = time.Now() }
