//go:build mpich

package collectives

// #cgo pkg-config: mpich
// #cgo CFLAGS: -Wno-stringop-overflow
// #include <mpi.h>
import "C"

// With -tags mpich, gompi (whose cgo flags name OpenMPI's include and library
// directories) is left out and the same answers come from MPI directly.

func worldRankSize() (rank, size int) {
	var r, s C.int
	C.MPI_Comm_rank(C.MPI_COMM_WORLD, &r)
	C.MPI_Comm_size(C.MPI_COMM_WORLD, &s)
	return int(r), int(s)
}

func wtime() float64 { return float64(C.MPI_Wtime()) }

// rmaWaitsForTarget says that a one-sided epoch of this library waits for
// the target's progress: MPICH's MPI_Win_unlock_all does, so a stopped
// target blocks the origin inside MPI (see watch.go).
const rmaWaitsForTarget = true
