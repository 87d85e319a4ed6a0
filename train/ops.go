package train

import (
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// sumAggregate writes into agg (NumDst x w) the sum, or with mean set the
// mean, of the input rows h (NumSrc x w) over each destination's sampled
// sources; a destination without sampled sources gets the zero vector.
// Each destination row is written by one goroutine, summing its sources
// in edge order, so the result does not depend on scheduling.
func sumAggregate[T floatT](b *sample.Block, h []T, w int, agg []T, mean bool) {
	par.Range(b.NumDst, len(b.Indices)*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst := agg[i*w : (i+1)*w]
			clear(dst)
			e0, e1 := b.Indptr[i], b.Indptr[i+1]
			if e0 == e1 {
				continue
			}
			for _, j := range b.Indices[e0:e1] {
				kernels.Axpy(1, h[int(j)*w:(int(j)+1)*w], dst)
			}
			if !mean {
				continue
			}
			inv := T(1 / float64(e1-e0))
			for k := range dst {
				dst[k] *= inv
			}
		}
	})
}

// sumScatter is the adjoint of sumAggregate: it adds dagg[i] (divided by
// deg(i) with mean set) to dh[j] for every sampled edge j -> i. Sources
// are shared between destinations, so it runs over sources (t groups b's
// edges by source): each row of dh has one writer and receives its terms
// in the serial (destination, edge) order.
func sumScatter[T floatT](t *blockT, b *sample.Block, dagg []T, w int, dh []T, mean bool) {
	t.build(b)
	par.Range(b.NumSrc(), len(b.Indices)*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := dh[j*w : (j+1)*w]
			for _, e := range t.edges(j) {
				i := int(t.dst[e])
				c := T(1)
				if mean {
					c = T(1 / float64(b.Indptr[i+1]-b.Indptr[i]))
				}
				kernels.Axpy(c, dagg[i*w:(i+1)*w], row)
			}
		}
	})
}

// meanScatter is sumScatter of the mean.
func meanScatter[T floatT](t *blockT, b *sample.Block, dagg []T, w int, dh []T) {
	sumScatter(t, b, dagg, w, dh, true)
}

// maxAggregate writes into agg (NumDst x w) the elementwise maximum of the
// input rows h (NumSrc x w) over each destination's sampled sources, and
// into arg (NumDst x w) the edge that holds each maximum: the first one in
// edge order among equal values (a later edge must be strictly greater to
// take over). A destination without sampled sources gets zeros and arg -1.
// One goroutine writes each destination's rows.
func maxAggregate[T floatT](b *sample.Block, h []T, w int, agg []T, arg []int32) {
	par.Range(b.NumDst, len(b.Indices)*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst, at := agg[i*w:(i+1)*w], arg[i*w:(i+1)*w]
			e0, e1 := b.Indptr[i], b.Indptr[i+1]
			if e0 == e1 {
				clear(dst)
				for k := range at {
					at[k] = -1
				}
				continue
			}
			j := int(b.Indices[e0])
			copy(dst, h[j*w:(j+1)*w])
			for k := range at {
				at[k] = e0
			}
			for e := e0 + 1; e < e1; e++ {
				j := int(b.Indices[e])
				for k, v := range h[j*w : (j+1)*w] {
					if v > dst[k] {
						dst[k], at[k] = v, e
					}
				}
			}
		}
	})
}

// maxScatter writes into d (NumSrc x w) the adjoint of maxAggregate
// applied to dagg: column k of source j receives dagg[i][k] from every
// destination i whose maximum in column k is held by an edge j -> i. It
// runs over sources (one writer per row), adding in edge order.
func maxScatter[T floatT](t *blockT, b *sample.Block, dagg []T, arg []int32, w int, d []T) {
	clearPar(d)
	maxScatterAdd(t, b, dagg, arg, w, d)
}

// maxScatterAdd is maxScatter adding to d instead of overwriting it.
func maxScatterAdd[T floatT](t *blockT, b *sample.Block, dagg []T, arg []int32, w int, d []T) {
	t.build(b)
	par.Range(b.NumSrc(), len(b.Indices)*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := d[j*w : (j+1)*w]
			for _, e := range t.edges(j) {
				i := int(t.dst[e])
				at, g := arg[i*w:(i+1)*w], dagg[i*w:(i+1)*w]
				for k := range row {
					if at[k] == e {
						row[k] += g[k]
					}
				}
			}
		}
	})
}

// reluPar applies the ReLU to x in place, split over goroutines.
func reluPar[T floatT](x []T) {
	par.Range(len(x), len(x)/8, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if x[k] < 0 {
				x[k] = 0
			}
		}
	})
}

// reluMask zeroes the entries of d where the ReLU output y is not
// positive (the ReLU's adjoint).
func reluMask[T floatT](d, y []T) {
	par.Range(len(d), len(d)/8, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			if y[k] <= 0 {
				d[k] = 0
			}
		}
	})
}

// densify writes the sparse rows x (values vals, w columns) as dense rows
// into buf (grown to x.Rows() x w) and returns it; repeated columns of a
// row add up, as the sparse products count them.
func densify[T floatT](x *sample.SparseRows, vals []T, w int, buf []T) []T {
	n := x.Rows()
	buf = grow(buf, n*w)
	par.Range(n, len(vals)+n*w/8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := buf[i*w : (i+1)*w]
			clear(row)
			for e := x.Indptr[i]; e < x.Indptr[i+1]; e++ {
				row[x.Indices[e]] += vals[e]
			}
		}
	})
	return buf
}
