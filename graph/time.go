package graph

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
)

// timedEntry is one stored in-edge of a row while the row is being sorted.
type timedEntry struct{ t, src int64 }

// BuildInCSRTimed builds the timed in-adjacency of the events src[i]->dst[i]
// at time t[i] on nodes [0,n): row v lists the sources of the events into
// v sorted by (time, source) ascending, and the returned times are aligned
// with the CSR's Indices. A source may appear several times in a row at
// different times (a temporal multigraph): Dedup drops only exact
// (source, time) repeats, because two events at different times are
// different facts to a temporal sampler. Undirected adds every reverse
// event with the same time; DropSelfLoops drops v->v.
//
// A counting sort by destination (per-worker counters, as BuildInCSR)
// places every event in its row; rows are then sorted independently, in
// parallel over row ranges of about equal size. The result does not depend
// on the number of workers.
func BuildInCSRTimed(n int64, src, dst, t []int64, opt BuildOptions) (*CSR, []int64) {
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	m := int64(len(src))
	w = int(max(1, min(int64(w), m/(1<<16))))
	parallel := func(f func(k int)) { parallelFor(w, f) }
	cnt := make([][]int64, w)
	for i := range cnt {
		cnt[i] = make([]int64, n)
	}
	// Row dst[i] gets (t[i], src[i]); the reverse, row src[i], (t[i], dst[i]).
	var ent []timedEntry
	ptr := scatter(scatterSpec{n: n, w: w, cnt: cnt, keep: keepEdge(src, dst, opt), row: dst, col: src, undirected: opt.Undirected},
		func(total int64) { ent = make([]timedEntry, total) },
		func(p, _, col, i int64) { ent[p] = timedEntry{t[i], col} })
	cnt = nil

	// Sort rows (and dedup them in place, remembering each row's new
	// length) with worker k owning rows [lo[k], lo[k+1]).
	lo := rowRanges(ptr, w)
	kept := make([]int64, n)
	parallel(func(k int) {
		for v := lo[k]; v < lo[k+1]; v++ {
			row := ent[ptr[v]:ptr[v+1]]
			slices.SortFunc(row, func(a, b timedEntry) int {
				if c := cmp.Compare(a.t, b.t); c != 0 {
					return c
				}
				return cmp.Compare(a.src, b.src)
			})
			if opt.Dedup {
				row = slices.Compact(row)
			}
			kept[v] = int64(len(row))
		}
	})
	outPtr := make([]int64, n+1)
	for v := int64(0); v < n; v++ {
		outPtr[v+1] = outPtr[v] + kept[v]
	}
	idx := make([]int64, outPtr[n])
	times := make([]int64, outPtr[n])
	parallel(func(k int) {
		for v := lo[k]; v < lo[k+1]; v++ {
			o := outPtr[v]
			for i, e := range ent[ptr[v] : ptr[v]+kept[v]] {
				idx[o+int64(i)], times[o+int64(i)] = e.src, e.t
			}
		}
	})
	return &CSR{Indptr: outPtr, Indices: idx}, times
}

// rowRanges splits the rows of ptr into w ranges of about the same number
// of entries: range k is [lo[k], lo[k+1]).
func rowRanges(ptr []int64, w int) []int64 {
	n := int64(len(ptr)) - 1
	lo := make([]int64, w+1)
	lo[w] = n
	for k := 1; k < w; k++ {
		target := ptr[n] * int64(k) / int64(w)
		i, _ := slices.BinarySearch(ptr, target)
		lo[k] = min(max(int64(i), lo[k-1]), n)
	}
	return lo
}

// CheckTimedRows reports the first row of g that is not strictly ascending
// in (times, id(neighbor)), where id maps a stored neighbor to the id the
// order is defined on (original ids in partitions; nil means the stored id).
func CheckTimedRows(g *CSR, times []int64, id func(int64) int64) error {
	if int64(len(times)) != g.NumEdges() {
		return fmt.Errorf("%d times for %d edges", len(times), g.NumEdges())
	}
	if id == nil {
		id = func(x int64) int64 { return x }
	}
	for v := int64(0); v < g.NumRows(); v++ {
		for i := g.Indptr[v] + 1; i < g.Indptr[v+1]; i++ {
			a, b := times[i-1], times[i]
			if a > b || (a == b && id(g.Indices[i-1]) >= id(g.Indices[i])) {
				return fmt.Errorf("row %d is not strictly ascending in (time, id) at position %d: (%d, %d) then (%d, %d)",
					v, i-g.Indptr[v], a, id(g.Indices[i-1]), b, id(g.Indices[i]))
			}
		}
	}
	return nil
}

// EdgeTimesFromNodes gives every stored in-edge its source's node time:
// with node times only, "the neighbour's time <= the seed time" is then
// the same test as "the edge's time <= the seed time".
func EdgeTimesFromNodes(src []int64, nodeTime []int64) []int64 {
	t := make([]int64, len(src))
	for i, u := range src {
		t[i] = nodeTime[u]
	}
	return t
}

// readIntColumn reads a file of want integers, one per line; the line
// count must be exactly want (what names what the lines align with).
func readIntColumn(path string, want int64, what string, workers int) ([]int64, error) {
	out := make([]int64, want)
	lines, err := scanGzip(path, workers, func(c *textChunk) error {
		return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if idx >= want {
				return &lineError{path, idx + 1, fmt.Errorf("more lines than the %d %s", want, what)}
			}
			v, err := parseIntLine(line)
			if err != nil {
				return &lineError{path, idx + 1, fmt.Errorf("time: %w", err)}
			}
			out[idx] = v
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if lines != want {
		return nil, fmt.Errorf("%s: %d lines, want one per %s (%d)", path, lines, what, want)
	}
	return out, nil
}

// readTimes reads the edge times (aligned with the m edge lines) and the
// node times of raw/ when present; edge is nil without raw/edge_time.csv.gz
// and node nil without a node time file. Having neither is an error naming
// the files looked for, as the caller asked for times.
func readTimes(raw string, n, m int64, workers int) (edge, node []int64, err error) {
	edgePath := filepath.Join(raw, "edge_time.csv.gz")
	if fileExists(edgePath) {
		if edge, err = readIntColumn(edgePath, m, "edge of edge.csv.gz", workers); err != nil {
			return nil, nil, err
		}
	}
	nodeFiles := []string{"node_time.csv.gz", "node_year.csv.gz"} // in order of preference
	for _, f := range nodeFiles {
		p := filepath.Join(raw, f)
		if fileExists(p) {
			if node, err = readIntColumn(p, n, "node", workers); err != nil {
				return nil, nil, err
			}
			break
		}
	}
	if edge == nil && node == nil {
		return nil, nil, fmt.Errorf("times requested but none found: looked for %s, %s and %s",
			edgePath, filepath.Join(raw, nodeFiles[0]), filepath.Join(raw, nodeFiles[1]))
	}
	return edge, node, nil
}
