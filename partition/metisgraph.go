package partition

/*
#include <metis.h>
*/
import "C"

import (
	"fmt"
	"runtime"
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
	ubvec := make([]C.real_t, ncon)
	for i := range ubvec {
		ubvec[i] = C.real_t(ub)
	}
	var options [C.METIS_NOPTIONS]C.idx_t
	C.METIS_SetDefaultOptions(&options[0])
	options[C.METIS_OPTION_OBJTYPE] = C.METIS_OBJTYPE_CUT
	options[C.METIS_OPTION_NUMBERING] = 0
	options[C.METIS_OPTION_SEED] = C.idx_t((seed ^ seed>>32) & 0x7fffffff)
	nv, nc, np := C.idx_t(n), C.idx_t(ncon), C.idx_t(nparts)
	var objval C.idx_t
	part := make([]C.idx_t, n)
	ptr := func(a []C.idx_t) *C.idx_t {
		if len(a) == 0 {
			return nil
		}
		return &a[0]
	}
	ret := C.METIS_PartGraphKway(&nv, &nc, &cx[0], ptr(ca), ptr(cv), nil, ptr(ce), &np, nil, &ubvec[0], &options[0], &objval, &part[0])
	runtime.KeepAlive(cx)
	runtime.KeepAlive(ca)
	runtime.KeepAlive(ce)
	runtime.KeepAlive(cv)
	if ret != C.METIS_OK {
		return nil, fmt.Errorf("metis: METIS_PartGraphKway failed (code %d; %d vertices, %d parts, %d constraints)", int(ret), n, nparts, ncon)
	}
	out := make([]int32, n)
	for i, p := range part {
		if p < 0 || int(p) >= nparts {
			return nil, fmt.Errorf("metis: vertex %d assigned to part %d outside [0,%d)", i, int(p), nparts)
		}
		out[i] = int32(p)
	}
	return out, nil
}
