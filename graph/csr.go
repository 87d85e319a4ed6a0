package graph

import "fmt"

// CSR is a compressed sparse adjacency: the neighbors of row v are
// Indices[Indptr[v]:Indptr[v+1]]. The same type serves as an out-adjacency
// (CSR, row = source) and as an in-adjacency (CSC, row = destination, the
// form the sampler reads). Node ids and offsets are int64 so that graphs with
// more than 2^31 edges fit.
type CSR struct {
	Indptr  []int64 // len NumRows()+1, non-decreasing, Indptr[0] == 0
	Indices []int64 // len NumEdges()
}

// NumRows returns the number of rows (nodes) of the adjacency.
func (g *CSR) NumRows() int64 { return int64(len(g.Indptr)) - 1 }

// NumEdges returns the number of stored edges.
func (g *CSR) NumEdges() int64 { return int64(len(g.Indices)) }

// Degree returns the number of neighbors stored for row v.
func (g *CSR) Degree(v int64) int64 { return g.Indptr[v+1] - g.Indptr[v] }

// Neighbors returns the neighbors of row v; the slice aliases g.Indices.
func (g *CSR) Neighbors(v int64) []int64 { return g.Indices[g.Indptr[v]:g.Indptr[v+1]] }

// Validate checks the structural invariants, with numCols the exclusive upper
// bound of neighbor ids.
func (g *CSR) Validate(numCols int64) error {
	if len(g.Indptr) == 0 {
		return fmt.Errorf("csr: empty indptr")
	}
	if g.Indptr[0] != 0 {
		return fmt.Errorf("csr: indptr[0] = %d, want 0", g.Indptr[0])
	}
	for i := 1; i < len(g.Indptr); i++ {
		if g.Indptr[i] < g.Indptr[i-1] {
			return fmt.Errorf("csr: indptr decreases at row %d", i-1)
		}
	}
	if last := g.Indptr[len(g.Indptr)-1]; last != int64(len(g.Indices)) {
		return fmt.Errorf("csr: indptr ends at %d but there are %d indices", last, len(g.Indices))
	}
	for i, u := range g.Indices {
		if u < 0 || u >= numCols {
			return fmt.Errorf("csr: index %d at position %d outside [0,%d)", u, i, numCols)
		}
	}
	return nil
}
