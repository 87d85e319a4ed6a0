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
// in edge order (kernels.SumRows: from +0, one rounded addition per edge,
// then one rounded product by 1/deg), so the result does not depend on
// scheduling.
func sumAggregate[T floatT](b *sample.Block, h []T, w int, agg []T, mean bool) {
	par.Range(b.NumDst, len(b.Indices)*w, func(lo, hi int) {
		aggregateRows(b, h, w, agg, mean, lo, hi)
	})
}

// aggregateRows is sumAggregate of the destinations [lo, hi) on the
// calling goroutine.
func aggregateRows[T floatT](b *sample.Block, h []T, w int, agg []T, mean bool, lo, hi int) {
	for i := lo; i < hi; i++ {
		e0, e1 := b.Indptr[i], b.Indptr[i+1]
		scale := T(1)
		if mean && e1 > e0 {
			scale = T(1 / float64(e1-e0))
		}
		kernels.SumRows(agg[i*w:(i+1)*w], h, w, b.Indices[e0:e1], scale)
	}
}

// sumScatter is the adjoint of sumAggregate: it adds dagg[i] (divided by
// deg(i) with mean set) to dh[j] for every sampled edge j -> i. Sources
// are shared between destinations, so it runs over sources (t groups b's
// edges by source): each row of dh has one writer and receives its terms
// in the serial (destination, edge) order.
//
// Under mean, the terms are first made once per destination, dagg[i]·c_i
// rounded (c_i = 1/deg(i)), into t's scratch; the scatter then adds those
// rows. That is the same rounded product the per-edge Axpy(c_i, dagg[i])
// made before the same rounded addition, so the bits are unchanged, with
// NumDst products per column instead of one per edge. The scatter itself
// is kernels.AddRows over the destinations of each source's edges, in
// edge order (t.nbr).
func sumScatter[T floatT](t *blockT, b *sample.Block, dagg []T, w int, dh []T, mean bool) {
	terms := scatterTerms(t, b, dagg, w, mean)
	scatterSources(t, b, terms, w, dh, b.NumSrc(), nil)
}

// scatterTerms builds t's lists for b and returns the rows sumScatter
// adds: dagg itself, or under mean its rows divided by their degrees (in
// t's scratch).
func scatterTerms[T floatT](t *blockT, b *sample.Block, dagg []T, w int, mean bool) []T {
	t.build(b)
	t.buildNbr()
	terms := dagg
	if mean {
		terms = scratchOf[T](t, b.NumDst*w)
		par.Range(b.NumDst, b.NumDst*w, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				deg := b.Indptr[i+1] - b.Indptr[i]
				if deg == 0 {
					continue // no edge reads this row
				}
				c := T(1 / float64(deg))
				src, dst := dagg[i*w:(i+1)*w], terms[i*w:(i+1)*w]
				for k, v := range src {
					dst[k] = T(v * c)
				}
			}
		})
	}
	return terms
}

// scatterSources adds to each row j of dh the rows of terms of its edges'
// destinations (t's lists, built), in the serial order; rows from fresh on
// start from zero instead of dh's values (the zeroing of a separate pass,
// with the same bits: SumRows from +0 is AddRows onto +0), and then, if
// set, runs on every range of rows once they are final, while they are
// in cache (the backward through the activation below, fusedBackward).
func scatterSources[T floatT](t *blockT, b *sample.Block, terms []T, w int, dh []T, fresh int, then func(dh []T, lo, hi int)) {
	par.Range(b.NumSrc(), len(b.Indices)*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			idx := t.nbr[t.off[j]:t.off[j+1]]
			if j >= fresh {
				kernels.SumRows(dh[j*w:(j+1)*w], terms, w, idx, 1)
			} else {
				kernels.AddRows(dh[j*w:(j+1)*w], terms, w, idx)
			}
		}
		if then != nil {
			then(dh, lo, hi)
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
