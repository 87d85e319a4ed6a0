// Package collectives wraps the MPI operations mpignn needs over a
// communicator: Allreduce, Bcast, Barrier, Allgather(v), Alltoall(v)
// (AlltoallvSegments: one slice per rank each way), and one-sided windows
// with batched remote reads.
//
// BcastBytes broadcasts root's bytes or root's error (every rank then
// returns the same JobFailure): the way one rank reads a file, or decides
// something, for all of them.
//
// Everything that crosses ranks is expressed through it, with errors returned
// instead of MPI's default abort. Messages larger than MPI's int count are
// split into pieces, never truncated.
//
// DistArray is the "fetch rows of a distributed array by global row index"
// abstraction the sampler and feature store use. It has two transports that
// return identical bytes: one-sided MPI_Get on windows from MPI_Win_allocate
// (TransportRMA), and an Alltoallv request/response exchange
// (TransportAlltoallv) for networks where OpenMPI's one-sided component does
// not work.
//
// Comm.Watch adds a stall watchdog (the commands' --timeout): every
// collective waits at a polled gate first, so that a rank that waits too
// long for the others can name them and end the job (see watch.go).
//
// ParMetisKway partitions a distributed graph with PT-Scotch on the world
// communicator (parmetis.go; OpenMPI builds only, as Debian builds
// PT-Scotch against OpenMPI; MPICH builds return "not available").
package collectives
