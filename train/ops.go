package train

import (
	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// meanAggregate writes into agg (NumDst x w) the mean of the input rows h
// (NumSrc x w) over each destination's sampled sources; a destination
// without sampled sources gets the zero vector. Each destination row is
// written by one goroutine, summing its sources in edge order, so the
// result does not depend on scheduling.
func meanAggregate[T floatT](b *sample.Block, h []T, w int, agg []T) {
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
			inv := T(1 / float64(e1-e0))
			for k := range dst {
				dst[k] *= inv
			}
		}
	})
}

// meanScatter is the adjoint of meanAggregate: it adds dagg[i]/deg(i) to
// dh[j] for every sampled edge j -> i. Sources are shared between
// destinations, so it runs over sources (t groups b's edges by source):
// each row of dh has one writer and receives its terms in the serial
// (destination, edge) order.
func meanScatter[T floatT](t *blockT, b *sample.Block, dagg []T, w int, dh []T) {
	t.build(b)
	par.Range(b.NumSrc(), len(b.Indices)*w, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			row := dh[j*w : (j+1)*w]
			for _, e := range t.edges(j) {
				i := int(t.dst[e])
				inv := T(1 / float64(b.Indptr[i+1]-b.Indptr[i]))
				kernels.Axpy(inv, dagg[i*w:(i+1)*w], row)
			}
		}
	})
}
