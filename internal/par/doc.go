// Package par runs the loops of one rank on all of its threads
// (GOMAXPROCS goroutines) without letting the thread count reach the
// results.
//
// Every helper hands each index of a range to exactly one goroutine, and
// the caller writes only what that index owns (a row of a matrix, an
// element of an output array). Sums that cross indices are left to the
// caller, who reduces per-index results in index order afterwards, so a
// float result is the same bit for bit on one thread or a hundred. Ranges
// too small to pay for a goroutine run on the calling one.
//
// MPI stays on the rank's locked goroutine: these helpers only compute
// between MPI calls, never make one.
package par
