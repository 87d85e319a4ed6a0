package sample

import "fmt"

// SparseRows is a row-major sparse matrix in CSR form: row i holds the
// values Values[Indptr[i]:Indptr[i+1]] at the columns Indices[...] (sorted,
// each in [0, Cols)). It carries the layer-0 inputs of a batch when the
// partition stores its features sparsely (Batch.XS): wide 0/1 or count
// features (Cora, CiteSeer, Facebook) are mostly zeros, and the first layer
// then costs work per stored entry instead of per column.
type SparseRows struct {
	Indptr  []int32
	Indices []int32
	Values  []float32
	Cols    int
}

// Rows returns the number of rows.
func (s *SparseRows) Rows() int {
	if len(s.Indptr) == 0 {
		return 0
	}
	return len(s.Indptr) - 1
}

// Reset empties s (zero rows) but keeps the capacity of its slices.
func (s *SparseRows) Reset(cols int) {
	s.Indptr = append(s.Indptr[:0], 0)
	s.Indices, s.Values = s.Indices[:0], s.Values[:0]
	s.Cols = cols
}

// AppendRow appends one row given as sorted columns and their values.
func (s *SparseRows) AppendRow(cols []int32, vals []float32) {
	if len(s.Indptr) == 0 {
		s.Indptr = append(s.Indptr, 0)
	}
	s.Indices = append(s.Indices, cols...)
	s.Values = append(s.Values, vals...)
	s.Indptr = append(s.Indptr, int32(len(s.Indices)))
}

// AppendDense appends the nonzero entries of the dense row x (len Cols).
func (s *SparseRows) AppendDense(x []float32) {
	if len(s.Indptr) == 0 {
		s.Indptr = append(s.Indptr, 0)
	}
	for k, v := range x {
		if v != 0 {
			s.Indices = append(s.Indices, int32(k))
			s.Values = append(s.Values, v)
		}
	}
	s.Indptr = append(s.Indptr, int32(len(s.Indices)))
}

// Dense returns the rows as a dense row-major matrix (Rows x Cols).
func (s *SparseRows) Dense() []float32 {
	x := make([]float32, s.Rows()*s.Cols)
	for i := range s.Rows() {
		for e := s.Indptr[i]; e < s.Indptr[i+1]; e++ {
			x[i*s.Cols+int(s.Indices[e])] = s.Values[e]
		}
	}
	return x
}

// Check validates the structure: Indptr starts at 0, never decreases and
// frames Indices and Values; columns are in [0, Cols) and strictly
// increasing within each row.
func (s *SparseRows) Check() error {
	if s.Cols < 0 {
		return fmt.Errorf("sparse rows: %d columns", s.Cols)
	}
	if len(s.Indptr) == 0 {
		if len(s.Indices) != 0 || len(s.Values) != 0 {
			return fmt.Errorf("sparse rows: %d entries without an indptr", len(s.Indices))
		}
		return nil
	}
	if s.Indptr[0] != 0 || int(s.Indptr[len(s.Indptr)-1]) != len(s.Indices) || len(s.Values) != len(s.Indices) {
		return fmt.Errorf("sparse rows: indptr [%d..%d] does not frame %d columns and %d values",
			s.Indptr[0], s.Indptr[len(s.Indptr)-1], len(s.Indices), len(s.Values))
	}
	for i := range s.Rows() {
		if s.Indptr[i+1] < s.Indptr[i] {
			return fmt.Errorf("sparse rows: indptr decreases at row %d", i)
		}
		prev := int32(-1)
		for e := s.Indptr[i]; e < s.Indptr[i+1]; e++ {
			c := s.Indices[e]
			if c <= prev || int(c) >= s.Cols {
				return fmt.Errorf("sparse rows: row %d entry %d: column %d not increasing or outside [0,%d)", i, e, c, s.Cols)
			}
			prev = c
		}
	}
	return nil
}
