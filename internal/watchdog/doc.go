// Package watchdog notices a rank that waits too long for the others in an
// MPI operation, so that a stalled rank (stopped, swapped out, dead without
// its launcher noticing, stuck in a loop) ends the job with a message
// instead of hanging it until an outside time limit kills it.
//
// It holds the pure parts, testable without MPI:
//
//   - Watchdog: what the MPI goroutine is doing (the operation it is in
//     since when, the phase label its callers set), read by a monitor
//     goroutine that reports an operation that outlives its limit;
//   - Pause: the schedule of a polling wait, so that a rank
//     waiting for a slow peer on an oversubscribed machine yields its
//     core instead of spinning;
//   - Decide and Stall: which ranks were not heard from after a timed-out
//     wait, which of the waiting ranks reports it, and the one line it
//     prints.
//
// Package collectives uses it around every collective (see Comm.Watch). The
// package does not use MPI.
package watchdog
