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
	parallel := func(f func(k int)) {
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
	keep := func(i int64) bool { return !opt.DropSelfLoops || src[i] != dst[i] }

	// Pass 1: out-adjacency, worker k scattering edges [m·k/w, m·(k+1)/w).
	parallel(func(k int) {
		c := cnt[k]
		for i := m * int64(k) / int64(w); i < m*int64(k+1)/int64(w); i++ {
			if keep(i) {
				c[src[i]]++
				if opt.Undirected {
					c[dst[i]]++
				}
			}
		}
	})
	outPtr := countsToOffsets(cnt, n)
	outIdx := make([]int64, outPtr[n])
	parallel(func(k int) {
		pos := cnt[k]
		for i := m * int64(k) / int64(w); i < m*int64(k+1)/int64(w); i++ {
			if keep(i) {
				u, v := src[i], dst[i]
				outIdx[pos[u]] = v
				pos[u]++
				if opt.Undirected {
					outIdx[pos[v]] = u
					pos[v]++
				}
			}
		}
	})

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
