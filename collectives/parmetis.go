//go:build !mpich

package collectives

// #cgo pkg-config: ompi
// #cgo LDFLAGS: -lptscotch -lptscotcherr -lscotch
// #include <stdio.h>
// #include <stdint.h>
// #include <scotch/ptscotch.h>
//
// // PT-Scotch's parallel graph partitioning on MPI_COMM_WORLD (SCOTCH_Num
// // is int in Debian's default int32 build) in a context made
// // deterministic and seeded: the ParMETIS compatibility interface
// // (ParMETIS_V3_PartKway) takes no context and gives different parts
// // from run to run with the same seed, as its threads race.
// static int shim_scotch_dgraph_part(int n, int *xadj, int nedges, int *adjncy, int *vwgt,
//                                    int nparts, double imbalance, int seed, int *part) {
//     SCOTCH_Dgraph g, bound;
//     SCOTCH_Context ctx;
//     SCOTCH_Strat strat;
//     int rc;
//     if (SCOTCH_dgraphInit(&g, MPI_COMM_WORLD) != 0) return -1;
//     rc = SCOTCH_dgraphBuild(&g, 0, n, n, xadj, xadj + 1, vwgt, NULL, nedges, nedges, adjncy, NULL, NULL);
//     if (rc != 0) { SCOTCH_dgraphExit(&g); return -2; }
//     SCOTCH_contextInit(&ctx);
//     SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
//     SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
//     SCOTCH_contextRandomSeed(&ctx, seed);
//     if (SCOTCH_contextBindDgraph(&ctx, &g, &bound) != 0) { SCOTCH_contextExit(&ctx); SCOTCH_dgraphExit(&g); return -3; }
//     SCOTCH_stratInit(&strat);
//     rc = SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATQUALITY, nparts, nparts, imbalance);
//     if (rc == 0) rc = SCOTCH_dgraphPart(&bound, nparts, &strat, part);
//     SCOTCH_stratExit(&strat);
//     SCOTCH_dgraphExit(&bound);
//     SCOTCH_contextExit(&ctx);
//     SCOTCH_dgraphExit(&g);
//     return rc == 0 ? 0 : -4;
// }
import "C"

import (
	"errors"
	"fmt"
	"math"
)

// ParMetisAvailable reports whether this build links PT-Scotch's ParMETIS
// interface (OpenMPI builds; Debian builds PT-Scotch against OpenMPI only).
const ParMetisAvailable = true

// ParMetisKway partitions the distributed graph in ParMETIS' form into
// nparts parts with PT-Scotch (its native dgraph interface, seeded and
// deterministic), balancing one vertex weight within 5 %: vtxdist (size+1 entries) gives each rank's
// range of global vertex ids, xadj/adjncy this rank's rows (symmetric, no
// self loops, global ids), vwgt ncon weights per local vertex (nil: unit
// weights; PT-Scotch balances one constraint). It returns the part of
// every local vertex; the caller counts the edge cut from the result.
func ParMetisKway(c *Comm, vtxdist []int64, xadj, adjncy []int64, vwgt []int64, ncon, nparts int, seed int) ([]int32, error) {
	if len(vtxdist) != c.size+1 {
		return nil, fmt.Errorf("parmetis: vtxdist has %d entries for %d ranks", len(vtxdist), c.size)
	}
	n := vtxdist[c.rank+1] - vtxdist[c.rank]
	if int64(len(xadj)) != n+1 || xadj[n] != int64(len(adjncy)) {
		return nil, fmt.Errorf("parmetis: %d row offsets (last %d) for %d local vertices and %d neighbours", len(xadj), xadj[len(xadj)-1], n, len(adjncy))
	}
	if vtxdist[c.size] > math.MaxInt32 || int64(len(adjncy)) > math.MaxInt32 {
		return nil, fmt.Errorf("parmetis: %d vertices or %d local neighbours exceed this build's 32-bit SCOTCH_Num", vtxdist[c.size], len(adjncy))
	}
	if n == 0 {
		return nil, errors.New("parmetis: this rank holds no vertices (PT-Scotch needs every rank to hold some)")
	}
	if ncon != 1 {
		return nil, fmt.Errorf("parmetis: %d balance constraints; PT-Scotch balances one vertex weight (combine them)", ncon)
	}
	i32 := func(xs []int64) []C.int {
		out := make([]C.int, max(len(xs), 1))
		for i, x := range xs {
			out[i] = C.int(x)
		}
		return out
	}
	cxadj, cadj := i32(xadj), i32(adjncy)
	var cw *C.int
	if vwgt != nil {
		if int64(len(vwgt)) != n*int64(ncon) {
			return nil, fmt.Errorf("parmetis: %d vertex weights for %d vertices x %d constraints", len(vwgt), n, ncon)
		}
		w := i32(vwgt)
		cw = &w[0]
	}
	part := make([]C.int, n)
	// The arrays are Go memory without Go pointers, passed for the call
	// only.
	rc := C.shim_scotch_dgraph_part(C.int(n), &cxadj[0], C.int(len(adjncy)), &cadj[0], cw, C.int(nparts), C.double(0.05), C.int(seed), &part[0])
	if rc != 0 {
		return nil, fmt.Errorf("parmetis: PT-Scotch graph partitioning failed (step %d)", -int(rc))
	}
	out := make([]int32, n)
	for i, p := range part {
		if p < 0 || int(p) >= nparts {
			return nil, fmt.Errorf("parmetis: vertex %d got part %d outside [0,%d)", i, p, nparts)
		}
		out[i] = int32(p)
	}
	return out, nil
}
