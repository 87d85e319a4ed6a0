package partition

import "fmt"

// Relabeling maps between original node ids and the new global ids under
// which part p owns the contiguous range [Offsets[p], Offsets[p+1]).
type Relabeling struct {
	Offsets []int64 // len P+1, Offsets[0] == 0, Offsets[P] == nodes
	NewID   []int64 // original id -> new global id
	Orig    []int64 // new global id -> original id
}

// Relabel numbers the nodes part by part; inside a part nodes keep their
// original relative order, so the new ids depend only on the assignment.
// Empty parts are allowed (their range is empty).
func Relabel(assign []int32, nparts int) (*Relabeling, error) {
	if nparts < 1 {
		return nil, fmt.Errorf("relabel: number of parts %d must be at least 1", nparts)
	}
	n := int64(len(assign))
	off := make([]int64, nparts+1)
	for v, p := range assign {
		if p < 0 || int(p) >= nparts {
			return nil, fmt.Errorf("relabel: node %d assigned to part %d outside [0,%d)", v, p, nparts)
		}
		off[p+1]++
	}
	for p := 0; p < nparts; p++ {
		off[p+1] += off[p]
	}
	pos := make([]int64, nparts)
	copy(pos, off[:nparts])
	r := &Relabeling{Offsets: off, NewID: make([]int64, n), Orig: make([]int64, n)}
	for v, p := range assign {
		id := pos[p]
		pos[p]++
		r.NewID[v] = id
		r.Orig[id] = int64(v)
	}
	return r, nil
}
