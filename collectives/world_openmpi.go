//go:build !mpich

package collectives

// #cgo pkg-config: ompi
import "C"

import mpi "github.com/sbromberger/gompi"

// gompi v0.2.0 is built against Debian's OpenMPI paths, so the OpenMPI build
// uses it for the calls that cannot fail; world_mpich.go replaces it when
// building with -tags mpich.

func worldRankSize() (rank, size int) { return mpi.WorldRank(), mpi.WorldSize() }

func wtime() float64 { return mpi.WorldTime() }

// rmaWaitsForTarget says that a one-sided epoch of this library waits for
// the target's progress: OpenMPI's reads on one node are copies from shared
// memory, and its network components read without the target (see watch.go).
const rmaWaitsForTarget = false
