// Package spmd is the MPI runtime of mpignn: it starts and stops MPI, tells
// the world rank and size, logs with a rank tag, and ends the whole job when
// any rank hits a fatal error.
//
// Together with package collectives it is the only code that calls MPI.
//
// # Goroutine rule
//
// MPI is initialised with MPI_THREAD_SERIALIZED: MPI may be called from any
// goroutine, but never from two at once. mpignn keeps every MPI call on the
// goroutine that called Init (the training loop), and uses worker goroutines
// only for computation between calls. Concurrent MPI calls crash OpenMPI when
// the library was started with a lower thread level, so Init checks the level
// the library actually granted and refuses to run below SERIALIZED.
package spmd
