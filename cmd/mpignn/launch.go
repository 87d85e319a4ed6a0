package main

import (
	"fmt"
	"os"
	"strconv"

	"mpignn/spmd/launched"
)

// launchedSize returns the number of ranks the MPI launcher started, read
// from its environment (OpenMPI's mpirun, MPICH's Hydra), or 1 when it is
// not known (no launcher, or one that does not say, such as srun).
func launchedSize() int {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// mpiCommands names the commands that use every rank of an mpirun job, for
// the note of onRankZero.
const mpiCommands = "train, predict, embed, sample, bench, gen --format chunked, and partition of a chunked dataset"

// onRankZero reports whether this process should run a command that works
// in one process (the OGB layout's partition, convert, gen, download...).
// Started by mpirun, every rank would do the whole job and race the others
// for its output ("appeared while partitioning", "file exists"), so rank 0
// alone runs it, saying so in one line when there are other ranks, and the
// others exit at once with status 0. why says why one process does it.
func onRankZero(cmd, why string) bool {
	if launched.Rank() != 0 {
		return false
	}
	if n := launchedSize(); n > 1 {
		fmt.Fprintf(os.Stderr, "mpignn %s: %s: rank 0 of %d runs it, the others exit (under mpirun every rank runs only %s)\n", cmd, why, n, mpiCommands)
	}
	return true
}
