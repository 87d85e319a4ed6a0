package graph

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// EdgeFeatFile is the OGB raw file of edge features: one comma-separated
// float row per line of raw/edge.csv.gz (ogbn-proteins has 8 per edge).
const EdgeFeatFile = "edge-feat.csv.gz"

// Node features derived from edge features (ReadOptions.NodeFeatFromEdges,
// the --node-feat flag): FromEdgesMean and FromEdgesSum.
const (
	FromEdgesMean = "from-edges:mean"
	FromEdgesSum  = "from-edges:sum"
)

// CheckNodeFeatFrom refuses a NodeFeatFromEdges mode other than "",
// FromEdgesMean and FromEdgesSum.
func CheckNodeFeatFrom(mode string) error {
	switch mode {
	case "", FromEdgesMean, FromEdgesSum:
		return nil
	}
	return fmt.Errorf("node features %q: want %s or %s (node features from the in-edges' features)", mode, FromEdgesMean, FromEdgesSum)
}

// edgeEntry is one stored in-edge of a row while the row is sorted: its
// time (0 untimed), source and the index of the input edge it came from.
type edgeEntry struct{ t, src, id int64 }

// BuildInCSREdgeIDs builds the same in-adjacency as BuildInCSR (t nil) or
// BuildInCSRTimed (t the edges' times, then also returned aligned with
// Indices), and returns with it for every stored in-edge the index i of
// the input edge src[i]->dst[i] it stands for, aligned with Indices: the
// reverse edge Undirected adds has its edge's index. Of repeated edges
// (exact (source, time) repeats when timed) Dedup keeps the one of the
// lowest index, the first in file order, so the row a caller gathers for
// it (an edge feature row) does not depend on the workers.
//
// It costs three words per stored edge more than BuildInCSR, which is why
// ReadOGB uses it only when edge features are asked for.
func BuildInCSREdgeIDs(n int64, src, dst, t []int64, opt BuildOptions) (g *CSR, times, ids []int64) {
	w := opt.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	m := int64(len(src))
	w = int(max(1, min(int64(w), m/(1<<16))))
	cnt := make([][]int64, w)
	for i := range cnt {
		cnt[i] = make([]int64, n)
	}
	var ent []edgeEntry
	ptr := scatter(scatterSpec{n: n, w: w, cnt: cnt, keep: keepEdge(src, dst, opt), row: dst, col: src, undirected: opt.Undirected},
		func(total int64) { ent = make([]edgeEntry, total) },
		func(p, _, col, i int64) {
			e := edgeEntry{src: col, id: i}
			if t != nil {
				e.t = t[i]
			}
			ent[p] = e
		})
	cnt = nil
	lo := rowRanges(ptr, w)
	kept := make([]int64, n)
	parallelFor(w, func(k int) {
		for v := lo[k]; v < lo[k+1]; v++ {
			row := ent[ptr[v]:ptr[v+1]]
			// The id breaks ties, so the first of equal edges is the
			// lowest index whatever order the scatter produced.
			slices.SortFunc(row, func(a, b edgeEntry) int {
				return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.src, b.src), cmp.Compare(a.id, b.id))
			})
			if opt.Dedup {
				row = slices.CompactFunc(row, func(a, b edgeEntry) bool { return a.t == b.t && a.src == b.src })
			}
			kept[v] = int64(len(row))
		}
	})
	outPtr := make([]int64, n+1)
	for v := int64(0); v < n; v++ {
		outPtr[v+1] = outPtr[v] + kept[v]
	}
	idx := make([]int64, outPtr[n])
	ids = make([]int64, outPtr[n])
	if t != nil {
		times = make([]int64, outPtr[n])
	}
	parallelFor(w, func(k int) {
		for v := lo[k]; v < lo[k+1]; v++ {
			o := outPtr[v]
			for i, e := range ent[ptr[v] : ptr[v]+kept[v]] {
				idx[o+int64(i)], ids[o+int64(i)] = e.src, e.id
				if times != nil {
					times[o+int64(i)] = e.t
				}
			}
		}
	})
	return &CSR{Indptr: outPtr, Indices: idx}, times, ids
}

// GatherRows returns the rows ids of f, in that order (row k of the result
// is row ids[k] of f): the edge features of the stored in-edges from those
// of the file's lines.
func GatherRows(f *Features, ids []int64, workers int) *Features {
	d := int64(f.Dim)
	out := &Features{Dim: f.Dim, Data: make([]float32, int64(len(ids))*d)}
	forEachChunk(workers, int64(chunksOf(int64(len(ids)), 1<<16)), func(c int64) {
		for k := c << 16; k < min(int64(len(ids)), (c+1)<<16); k++ {
			copy(out.Data[k*d:(k+1)*d], f.Row(ids[k]))
		}
	})
	return out
}

// NodeFeatFromEdges derives one feature row per node from the features of
// its stored in-edges (edgeFeat aligned with in.Indices): their mean
// (FromEdgesMean) or sum (FromEdgesSum); a node without in-edges gets
// zeros. This is the usual recipe for ogbn-proteins, which has edge
// features only: OGB's own proteins examples take the mean
// (snap-stanford/ogb examples/nodeproppred/proteins: data.x =
// data.adj_t.mean(dim=1), adj_t's rows being the edges' targets), PyG's
// DeeperGCN example the sum (pyg-team/pytorch_geometric
// examples/ogbn_proteins_deepgcn.py: scatter(data.edge_attr, col, 0,
// reduce='add'), col being the target). Sums are taken in float64 in row
// order, so the result does not depend on the workers.
func NodeFeatFromEdges(in *CSR, edgeFeat *Features, mode string, workers int) (*Features, error) {
	if err := CheckNodeFeatFrom(mode); err != nil || mode == "" {
		if err == nil {
			err = fmt.Errorf("node features from edges: no mode given")
		}
		return nil, err
	}
	if edgeFeat == nil || edgeFeat.Dim <= 0 {
		return nil, fmt.Errorf("node features %s: the graph has no edge features", mode)
	}
	if edgeFeat.NumRows() != in.NumEdges() {
		return nil, fmt.Errorf("node features %s: %d edge feature rows for %d edges", mode, edgeFeat.NumRows(), in.NumEdges())
	}
	n, d := in.NumRows(), edgeFeat.Dim
	out := &Features{Dim: d, Data: make([]float32, n*int64(d))}
	mean := strings.HasSuffix(mode, ":mean")
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const per = 1 << 14
	forEachChunk(workers, int64(chunksOf(n, per)), func(c int64) {
		acc := make([]float64, d)
		for v := c * per; v < min(n, (c+1)*per); v++ {
			a, b := in.Indptr[v], in.Indptr[v+1]
			if a == b {
				continue
			}
			clear(acc)
			for e := a; e < b; e++ {
				for j, x := range edgeFeat.Row(e) {
					acc[j] += float64(x)
				}
			}
			row := out.Row(v)
			for j, s := range acc {
				if mean {
					s /= float64(b - a)
				}
				row[j] = float32(s)
			}
		}
	})
	return out, nil
}

// readEdgeFeatures reads raw/edge-feat.csv.gz: m rows (one per line of
// edge.csv.gz) of the width of its first row.
func readEdgeFeatures(raw string, m int64, workers int) (*Features, error) {
	path := filepath.Join(raw, EdgeFeatFile)
	if !fileExists(path) {
		return nil, fmt.Errorf("edge features requested but %s is missing", path)
	}
	if m == 0 {
		return nil, fmt.Errorf("%s: the graph has no edges, so its edge features have no width", path)
	}
	dim, err := featureDim(path)
	if err != nil {
		return nil, err
	}
	if int64(dim) > (1<<62)/m {
		return nil, fmt.Errorf("%s: %d x %d edge features do not fit in memory", path, m, dim)
	}
	f := &Features{Dim: dim, Data: make([]float32, m*int64(dim))}
	lines, err := scanGzip(path, workers, func(c *textChunk) error {
		return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if idx >= m {
				return &lineError{path, idx + 1, fmt.Errorf("more edge feature rows than the %d lines of edge.csv.gz", m)}
			}
			if err := parseFeatureLine(line, f.Row(idx)); err != nil {
				return &lineError{path, idx + 1, err}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if lines != m {
		return nil, fmt.Errorf("%s: %d edge feature rows, want one per line of edge.csv.gz (%d)", path, lines, m)
	}
	return f, nil
}
