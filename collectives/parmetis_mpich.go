//go:build mpich

package collectives

import "errors"

// ParMetisAvailable reports whether this build links PT-Scotch's ParMETIS
// interface: not with MPICH, as Debian builds PT-Scotch against OpenMPI only.
const ParMetisAvailable = false

// ParMetisKway is not available in MPICH builds.
func ParMetisKway(c *Comm, vtxdist []int64, xadj, adjncy []int64, vwgt []int64, ncon, nparts int, seed int) ([]int32, error) {
	return nil, errors.New("ParMETIS (PT-Scotch) is not available in this build: Debian builds PT-Scotch against OpenMPI only (build without MPI=mpich)")
}
