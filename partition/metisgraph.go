package partition

/*
#include <metis.h>
*/
import "C"

import (
	"fmt"
)

// MetisCSR partitions a graph given as a symmetric CSR (xadj, adj: each
// edge in both rows, no self loops) with edge weights ewgt (nil: 1) and
// ncon vertex weights per vertex (vwgt, vertex-major; nil: one unit
// weight) into nparts parts with METIS_PartGraphKway, every constraint
// within ub (1.05 = 5 %). Multilevel partitioners call it on their
// coarsest graph; unlike Metis it allows empty parts (refinement fills
// them) and is deterministic for the same input and seed.
func MetisCSR(xadj, adj, ewgt, vwgt []int64, ncon, nparts int, ub float64, seed uint64) ([]int32, error) {
	n := int64(len(xadj) - 1)
	if n < 0 || int64(len(adj)) != xadj[n] || ewgt != nil && len(ewgt) != len(adj) || vwgt != nil && int64(len(vwgt)) != n*int64(ncon) {
		return nil, fmt.Errorf("metis: inconsistent graph (%d offsets, %d neighbours, %d edge weights, %d vertex weights for %d constraints)", len(xadj), len(adj), len(ewgt), len(vwgt), ncon)
	}
	if nparts == 1 || n == 0 {
		return make([]int32, n), nil
	}
	idxMax := int64(1)<<(IdxWidth()-1) - 1
	conv := func(what string, a []int64) ([]C.idx_t, error) {
		if a == nil {
			return nil, nil
		}
		out := make([]C.idx_t, len(a))
		for i, v := range a {
			if v < 0 || v > idxMax {
				return nil, fmt.Errorf("metis: %s %d outside METIS idx_t (%d-bit, max %d)", what, v, IdxWidth(), idxMax)
			}
			out[i] = C.idx_t(v)
		}
		return out, nil
	}
	cx, err := conv("offset", xadj)
	if err != nil {
		return nil, err
	}
	ca, err := conv("neighbour", adj)
	if err != nil {
		return nil, err
	}
	ce, err := conv("edge weight", ewgt)
	if err != nil {
		return nil, err
	}
	cv, err := conv("vertex weight", vwgt)
	if err != nil {
		return nil, err
	}
	// METIS sums vertex weights per constraint in idx_t.
	for c := range ncon {
		s := int64(0)
		for v := int64(0); vwgt != nil && v < n; v++ {
			s += vwgt[v*int64(ncon)+int64(c)]
		}
		if s > idxMax {
			return nil, fmt.Errorf("metis: constraint %d weighs %d in all, more than METIS idx_t (%d-bit) holds", c, s, IdxWidth())
		}
	}
	return kway(cx, ca, cv, ce, ncon, nparts, ub, seed, fmt.Sprintf("%d vertices, %d parts, %d constraints", n, nparts, ncon))
}
