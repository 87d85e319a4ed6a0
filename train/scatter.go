package train

import (
	"math"
	"sync/atomic"

	"mpignn/internal/par"
	"mpignn/sample"
	"mpignn/train/kernels"
)

// The backward passes scatter destination gradients to shared sources
// (dh[j] += c_e·g[i] for every edge j -> i). Run as a loop over
// destinations, two goroutines could write one source row at once; run
// over SOURCES instead, each source row has one writer. bySource groups
// the edges by source, keeping each source's edges in ascending edge
// order, which is the (destination, edge) order of the serial loop: every
// source row receives the same terms in the same order as before, so the
// result is bit-identical to the serial scatter on any thread count.

// bySource is a list of edges (edge e ends at position e of the index
// list it was built from) grouped by source: source j's edges are
// edge[off[j]:off[j+1]], ascending. Its buffers are reused across builds.
type bySource struct {
	off  []int32 // ns+1 offsets into edge
	edge []int32 // edge ids, grouped by source, ascending within a source

	// scratch of build
	tmp    []int32 // edge ids grouped by source bucket
	cur    []int32 // per source: next free slot while filling
	counts []int   // per (edge chunk, bucket): counts, then offsets
	starts []int32 // per bucket: its first slot
}

// build groups the edges whose sources are src[e] (each in [0,ns)) by
// source. It is a stable counting sort run in two passes so that every
// step is split over goroutines: edges are first distributed into buckets
// of consecutive sources (each edge chunk counting and placing its own
// edges, chunks in order), then every bucket sorts its edges by source on
// its own. Stability makes the result the same for any cut.
func (s *bySource) build(src []int32, ns int) {
	ne := len(src)
	s.off = growIdx(s.off, ns+1)
	s.edge = growIdx(s.edge, ne)
	if ns == 0 {
		s.off[0] = 0
		return
	}
	p := 1
	if ne >= par.MinWork/4 {
		p = par.Threads()
	}
	nb := min(4*p, ns) // source buckets
	bw := (ns + nb - 1) / nb
	nb = (ns + bw - 1) / bw
	chunk := (ne + p - 1) / p // edges per counting chunk
	nc := par.NumBlocks(ne, chunk)
	if nc == 0 {
		nc = 1
	}
	s.counts = growInts(s.counts, nc*nb)
	clear(s.counts)
	s.tmp = growIdx(s.tmp, ne)
	// Pass 1: per edge chunk, count the edges of each bucket.
	par.Blocks(ne, chunk, ne, func(lo, hi int) {
		c := s.counts[(lo/chunk)*nb : (lo/chunk+1)*nb]
		for _, j := range src[lo:hi] {
			c[int(j)/bw]++
		}
	})
	// Bucket-major, chunk-minor offsets: bucket b holds its edges of chunk
	// 0, then chunk 1, ..., i.e. in ascending edge order.
	s.starts = growIdx(s.starts, nb+1)
	starts := s.starts
	t := 0
	for b := 0; b < nb; b++ {
		starts[b] = int32(t)
		for c := 0; c < nc; c++ {
			v := s.counts[c*nb+b]
			s.counts[c*nb+b] = t
			t += v
		}
	}
	starts[nb] = int32(t)
	par.Blocks(ne, chunk, ne, func(lo, hi int) {
		c := s.counts[(lo/chunk)*nb : (lo/chunk+1)*nb]
		for e := lo; e < hi; e++ {
			b := int(src[e]) / bw
			s.tmp[c[b]] = int32(e)
			c[b]++
		}
	})
	// Pass 2: per bucket, a counting sort of its edges by source; the
	// bucket's sources and edge slots are its own.
	s.cur = growIdx(s.cur, ns)
	par.Blocks(nb, 1, ne+ns, func(b0, b1 int) {
		for b := b0; b < b1; b++ {
			jlo, jhi := b*bw, min((b+1)*bw, ns)
			cur := s.cur[jlo:jhi]
			clear(cur)
			es := s.tmp[starts[b]:starts[b+1]]
			for _, e := range es {
				cur[int(src[e])-jlo]++
			}
			o := starts[b]
			for k, c := range cur {
				s.off[jlo+k] = o
				cur[k] = o
				o += c
			}
			for _, e := range es {
				k := int(src[e]) - jlo
				s.edge[cur[k]] = e
				cur[k]++
			}
		}
	})
	s.off[ns] = int32(ne)
}

// edges returns source j's edge ids, ascending.
func (s *bySource) edges(j int) []int32 { return s.edge[s.off[j]:s.off[j+1]] }

// blockT is a block's edges grouped by source (bySource over its Indices)
// with the destination of every edge: what a backward scatter over
// sources needs. Layers keep one and reuse its buffers.
type blockT struct {
	bySource
	dst []int32 // destination of each edge, by edge id
	nbr []int32 // buildNbr: destination of each edge, in bySource order

	// scratch rows of sumScatter's mean terms, by element type
	sc32 []float32
	sc64 []float64
}

// buildNbr fills t.nbr after build: source j's destinations, one per
// edge, are nbr[off[j]:off[j+1]] in ascending edge order, the index list
// kernels.AddRows takes.
func (t *blockT) buildNbr() {
	ne := len(t.edge)
	t.nbr = growIdx(t.nbr, ne)
	ns := len(t.off) - 1
	par.Range(ns, ne, func(lo, hi int) {
		for k := t.off[lo]; k < t.off[hi]; k++ {
			t.nbr[k] = t.dst[t.edge[k]]
		}
	})
}

// scratchOf returns t's scratch of n elements of type T, reused across
// calls.
func scratchOf[T floatT](t *blockT, n int) []T {
	var z T
	if _, ok := any(z).(float32); ok {
		t.sc32 = grow(t.sc32, n)
		return any(t.sc32).([]T)
	}
	t.sc64 = grow(t.sc64, n)
	return any(t.sc64).([]T)
}

// build indexes b's edges.
func (t *blockT) build(b *sample.Block) {
	t.buildLists(b.Indptr, b.Indices, b.NumDst, b.NumSrc())
}

// buildLists indexes the CSR lists (indptr, indices) of nd destinations
// over ns sources.
func (t *blockT) buildLists(indptr, indices []int32, nd, ns int) {
	t.dst = growIdx(t.dst, len(indices))
	edgeDst(indptr, nd, t.dst)
	t.bySource.build(indices, ns)
}

// edgeDst writes into dst the destination of every edge of the CSR lists
// indptr (nd destinations), in parallel over destinations.
func edgeDst(indptr []int32, nd int, dst []int32) {
	par.Range(nd, int(indptr[nd]), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for e := indptr[i]; e < indptr[i+1]; e++ {
				dst[e] = int32(i)
			}
		}
	})
}

// growIdx is grow for index buffers.
func growIdx(buf []int32, n int) []int32 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]int32, n, n+n/8)
}

// growInts is grow for int buffers.
func growInts(buf []int, n int) []int {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]int, n, n+n/8)
}

// growF64 is grow for float64 buffers.
func growF64(buf []float64, n int) []float64 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float64, n, n+n/8)
}

// colSum adds to acc (w wide) the sum of the n rows of x (w wide), each
// column summed in row order exactly as a serial row loop does. Goroutines
// split the columns; each reads its band of every row contiguously and
// keeps its running sums in registers over a tile of rows
// (kernels.AddColumns), so neighbouring goroutines do not fight over acc's
// cache lines and no loop strides down a column.
func colSum[T floatT](x []T, n, w int, acc []T) {
	par.Range(w, n*w, func(lo, hi int) {
		kernels.AddColumns(acc[lo:hi], x, n, w, lo, hi)
	})
}

// fillRows copies row into each of the n rows of x (len(row) wide): the
// bias every output row starts from.
func fillRows[T floatT](x []T, n int, row []T) {
	w := len(row)
	par.Range(n, n*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(x[i*w:(i+1)*w], row)
		}
	})
}

// clearPar zeroes x, split over goroutines.
func clearPar[T floatT](x []T) {
	par.Range(len(x), len(x)/8, func(lo, hi int) { clear(x[lo:hi]) })
}

// copyPar copies src into dst (same length), split over goroutines.
func copyPar[T floatT](dst, src []T) {
	par.Range(len(src), len(src)/8, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
}

// firstNonFinite returns the index of the first NaN or infinite element of
// x, or -1. Chunks are scanned in parallel and the smallest index found
// wins, which is the serial scan's answer.
func firstNonFinite(x []float32) int {
	var first atomic.Int64
	first.Store(math.MaxInt64)
	par.Range(len(x), len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if g := float64(x[i]); math.IsNaN(g) || math.IsInf(g, 0) {
				for {
					cur := first.Load()
					if int64(i) >= cur || first.CompareAndSwap(cur, int64(i)) {
						return
					}
				}
			}
		}
	})
	if f := first.Load(); f != math.MaxInt64 {
		return int(f)
	}
	return -1
}
