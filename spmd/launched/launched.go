package launched

import (
	"os"
	"strconv"
)

// rankVars are the variables OpenMPI, MPICH (Hydra), PMIx and srun set to
// the world rank, in the order they are read: under OpenMPI's mpirun inside
// a Slurm allocation both OMPI_COMM_WORLD_RANK and SLURM_PROCID are set,
// and only the first is this process's rank.
var rankVars = [...]string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}

// Rank returns the world rank the launcher gave this process, or 0 when it
// was not started by a launcher.
func Rank() int {
	for _, k := range rankVars {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v >= 0 {
			return v
		}
	}
	return 0
}
