// Package launched reads what the MPI launcher (OpenMPI's mpirun, MPICH's
// Hydra, PMIx, srun) tells a process in its environment before MPI starts:
// its world rank.
//
// It belongs to the MPI runtime (spmd) but links no MPI, and that is why
// it is a package of its own: the pure core (graph, partition, train) needs
// the rank for internal/testhold's per-rank holds, and a command needs it
// before MPI_Init (a flag mistake prints once, from rank 0), where
// spmd.World does not exist yet.
package launched
