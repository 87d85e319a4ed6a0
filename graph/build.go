package graph

import (
	"runtime"
	"slices"
	"sync"
)

// BuildOptions control BuildInCSR.
type BuildOptions struct {
	Undirected    bool // also add v->u for every u->v
	DropSelfLoops bool // drop v->v
	Dedup         bool // keep one copy of repeated edges
	Workers       int  // 0 = GOMAXPROCS
}

// BuildInCSR builds the in-adjacency (CSC) of the edges src[i]->dst[i] on
// nodes [0,n): row v lists the sources of the edges into v, sorted
// ascending. Ids must already be in range.
//
// It sorts without comparisons: a counting sort by source gives the
// out-adjacency, and walking that in ascending source order appends each
// source to its destinations' rows, which are then sorted by construction.
// Both passes run on opt.Workers goroutines, each with its own counters, so
// worker w's entries land after worker w-1's; for the second pass worker w
// owns a range of sources above worker w-1's, which keeps rows sorted. The
// result does not depend on the number of workers.
func BuildInCSR(n int64, src, dst []int64, opt BuildOptions) *CSR {
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	m := int64(len(src))
	w = int(max(1, min(int64(w), m/(1<<16)))) // small inputs: one worker
	cnt := make([][]int64, w)
	for i := range cnt {
		cnt[i] = make([]int64, n)
	}
	parallel := func(f func(k int)) { parallelFor(w, f) }

	// Pass 1: out-adjacency (row src[i] gets dst[i]).
	var outIdx []int64
	outPtr := scatter(scatterSpec{n: n, w: w, cnt: cnt, keep: keepEdge(src, dst, opt), row: src, col: dst, undirected: opt.Undirected},
		func(total int64) { outIdx = make([]int64, total) },
		func(p, row, col, _ int64) { outIdx[p] = col })

	// Pass 2: transpose, worker k owning sources [lo[k], lo[k+1]) chosen
	// so that each holds about the same number of entries.
	lo := make([]int64, w+1)
	lo[w] = n
	for k := 1; k < w; k++ {
		target := outPtr[n] * int64(k) / int64(w)
		idx, _ := slices.BinarySearch(outPtr, target)
		lo[k] = max(int64(idx), lo[k-1])
	}
	parallel(func(k int) {
		c := cnt[k]
		clear(c)
		for _, v := range outIdx[outPtr[lo[k]]:outPtr[lo[k+1]]] {
			c[v]++
		}
	})
	inPtr := countsToOffsets(cnt, n)
	inIdx := make([]int64, inPtr[n])
	parallel(func(k int) {
		pos := cnt[k]
		for u := lo[k]; u < lo[k+1]; u++ {
			for _, v := range outIdx[outPtr[u]:outPtr[u+1]] {
				inIdx[pos[v]] = u
				pos[v]++
			}
		}
	})
	g := &CSR{Indptr: inPtr, Indices: inIdx}
	if opt.Dedup {
		g.dedupSorted()
	}
	return g
}

// parallelFor runs f(0..w-1) on w goroutines and waits for them.
func parallelFor(w int, f func(k int)) {
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k)
		}()
	}
	wg.Wait()
}

// keepEdge is the edge filter of the builders: everything, or no self
// loops.
func keepEdge(src, dst []int64, opt BuildOptions) func(i int64) bool {
	return func(i int64) bool { return !opt.DropSelfLoops || src[i] != dst[i] }
}

// scatterSpec describes the counting sort both builders start with: edge
// i (kept by keep) goes to row row[i] with entry col[i], and when
// undirected its reverse to row col[i] with entry row[i]. Worker k takes
// the edges [m·k/w, m·(k+1)/w) with its own counters cnt[k] (n rows).
type scatterSpec struct {
	n          int64
	w          int
	cnt        [][]int64
	keep       func(i int64) bool
	row, col   []int64
	undirected bool
}

// scatter counts the rows, lets alloc size the output (total entries) and
// calls put(p, row, col, i) to store edge i's entry col in row at position
// p, worker k's entries of a row after worker k-1's, so every row keeps
// the input order. It returns the row offsets.
func scatter(sp scatterSpec, alloc func(total int64), put func(p, row, col, i int64)) []int64 {
	m, w := int64(len(sp.row)), sp.w
	parallelFor(w, func(k int) {
		c := sp.cnt[k]
		for i := m * int64(k) / int64(w); i < m*int64(k+1)/int64(w); i++ {
			if sp.keep(i) {
				c[sp.row[i]]++
				if sp.undirected {
					c[sp.col[i]]++
				}
			}
		}
	})
	ptr := countsToOffsets(sp.cnt, sp.n)
	alloc(ptr[sp.n])
	parallelFor(w, func(k int) {
		pos := sp.cnt[k]
		for i := m * int64(k) / int64(w); i < m*int64(k+1)/int64(w); i++ {
			if sp.keep(i) {
				r, c := sp.row[i], sp.col[i]
				put(pos[r], r, c, i)
				pos[r]++
				if sp.undirected {
					put(pos[c], c, r, i)
					pos[c]++
				}
			}
		}
	})
	return ptr
}

// countsToOffsets turns per-worker row counts into row offsets (returned)
// and, in place, into each worker's first write position in every row:
// worker k writes row v after workers 0..k-1.
func countsToOffsets(cnt [][]int64, n int64) []int64 {
	ptr := make([]int64, n+1)
	for v := int64(0); v < n; v++ {
		s := ptr[v]
		for _, c := range cnt {
			x := c[v]
			c[v] = s
			s += x
		}
		ptr[v+1] = s
	}
	return ptr
}

// dedupSorted removes repeated neighbors from rows that are sorted,
// compacting Indices in place.
func (g *CSR) dedupSorted() {
	n := g.NumRows()
	w := int64(0)
	start := int64(0)
	for v := int64(0); v < n; v++ {
		end := g.Indptr[v+1]
		rowStart := w
		for i := start; i < end; i++ {
			x := g.Indices[i]
			if w > rowStart && g.Indices[w-1] == x {
				continue
			}
			g.Indices[w] = x
			w++
		}
		start = end
		g.Indptr[v+1] = w
	}
	g.Indices = g.Indices[:w:w]
}

// NormalizeRows divides every row by its sum when that sum is positive, as
// the reference GCN/GraphSAGE pipelines do for bag-of-words features.
func (f *Features) NormalizeRows(workers int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	rows := f.NumRows()
	var wg sync.WaitGroup
	per := (rows + int64(workers) - 1) / int64(workers)
	for w := int64(0); w < int64(workers); w++ {
		lo, hi := w*per, min((w+1)*per, rows)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := lo; v < hi; v++ {
				row := f.Row(v)
				var s float64
				for _, x := range row {
					s += float64(x)
				}
				if s > 0 {
					inv := 1 / s
					for i, x := range row {
						row[i] = float32(float64(x) * inv)
					}
				}
			}
		}()
	}
	wg.Wait()
}
