package kernels

import "mpignn/internal/par"

// Spmm writes (acc: adds) into dst (n x out, row-major) the product of the
// first n rows of a sparse matrix in CSR form (row offsets indptr, column
// indices, entry values vals) with w (cols x out). Each output row is
// written by one goroutine, summing its entries in column order, so the
// result does not depend on the thread count.
func Spmm[T Float](indptr, indices []int32, vals []T, n int, w []T, out int, dst []T, acc bool) {
	nnz := int(indptr[n])
	par.Range(n, nnz*out+n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := dst[i*out : (i+1)*out]
			if !acc {
				clear(row)
			}
			for e := indptr[i]; e < indptr[i+1]; e++ {
				c := int(indices[e])
				Axpy(vals[e], w[c*out:(c+1)*out], row)
			}
		}
	})
}

// SpmmT adds to gw (cols x out) the product Xᵀ·d of the first n rows of
// the CSR matrix X (indptr, indices, values vals) with d (n x out).
// Goroutines split the OUTPUT COLUMNS, never the rows, so every element of
// gw sums its terms in row order whatever the thread count.
func SpmmT[T Float](indptr, indices []int32, vals []T, n int, d []T, out int, gw []T) {
	nnz := int(indptr[n])
	par.Range(out, nnz*out, func(lo, hi int) {
		for i := 0; i < n; i++ {
			di := d[i*out+lo : i*out+hi]
			for e := indptr[i]; e < indptr[i+1]; e++ {
				c := int(indices[e])
				Axpy(vals[e], di, gw[c*out+lo:c*out+hi])
			}
		}
	})
}
