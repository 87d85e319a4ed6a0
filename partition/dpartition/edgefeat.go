package dpartition

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"mpignn/collectives"
	"mpignn/graph"
)

// planEdgeFeat checks that a run storing edge features or deriving node
// features from them (Options.EdgeFeat, NodeFeat) has them, as ReadRaw
// and graph.ReadOGB check a raw dataset, and agrees on their width
// (run.efDim): every rank learns it from its first edge chunk's header or
// from the others.
func (x *run) planEdgeFeat() error {
	if !x.opt.EdgeFeat && x.opt.NodeFeat == "" {
		return nil
	}
	ch := x.ch
	switch {
	case !x.homo:
		// ReadRaw's refusal, word for word.
		return errors.New("--edge-feat and --node-feat: not supported for heterogeneous datasets yet")
	case !ch.HasEdgeData(graph.HomoEdgeType, graph.ChunkFeat):
		return fmt.Errorf("%s: edge features requested (--edge-feat or --node-feat) but the dataset has no edge_data %s/%s", x.opt.Data, graph.HomoEdgeType, graph.ChunkFeat)
	case x.opt.NodeFeat != "" && ch.HasNodeData(graph.HomoNodeType, graph.ChunkFeat):
		return fmt.Errorf("%s: node features %s, but the dataset has its own (node_data %s/%s); leave out --node-feat", x.opt.Data, x.opt.NodeFeat, graph.HomoNodeType, graph.ChunkFeat)
	}
	w := []int64{0}
	k0, k1 := graph.ChunkRange(x.ch.NumEdgeChunks(0), x.P, x.rank)
	for k := k0; k < k1; k++ {
		if x.ch.Meta.NumEdgesPerChunk[0][k] == 0 {
			continue // an empty chunk's array has no rows to say the width
		}
		d, err := ch.EdgeFeatDim(0, graph.ChunkFeat, k)
		if err != nil {
			return err
		}
		w[0] = int64(d)
		break
	}
	mine := w[0]
	if err := collectives.Allreduce(x.c, w, collectives.Max); err != nil {
		return err
	}
	switch {
	case w[0] == 0:
		return fmt.Errorf("%s: the graph has no edges, so its edge features have no width", x.opt.Data)
	case mine != 0 && mine != w[0]:
		return fmt.Errorf("%s: edge features of width %d here, %d on another rank", x.opt.Data, mine, w[0])
	}
	x.efDim = int(w[0])
	return nil
}

// readEdgeFeatChunk reads edge chunk k's feature rows, checked against
// the agreed width.
func (x *run) readEdgeFeatChunk(k int) (*graph.Features, error) {
	f, err := x.ch.ReadEdgeFeat(0, graph.ChunkFeat, k)
	if err != nil {
		return nil, err
	}
	if f.Dim != x.efDim {
		return nil, fmt.Errorf("%s: edge features of width %d, want %d (%s)", x.opt.Data, f.Dim, x.efDim, x.ch.Meta.EdgeData[graph.HomoEdgeType][graph.ChunkFeat].Data[k])
	}
	return f, nil
}

// nodeFeatFromEdges derives the node features of this rank's parts from
// the feature rows of their stored in-edges (Options.NodeFeat), as
// graph.ReadOGB does from the whole adjacency: a part's rows are its owned
// nodes' complete in-rows in the same (canonical or timed canonical)
// order, so the float64 sums, and the features, are the same. Then they
// are normalized (Options.NormalizeFeatures) as ReadOGB normalizes them,
// and the edge rows dropped unless Options.EdgeFeat stores them.
func (x *run) nodeFeatFromEdges(nds []*nodeData, rows []partRows) error {
	if x.efDim == 0 {
		return nil
	}
	for j := range rows {
		if x.opt.NodeFeat != "" {
			in := &graph.CSR{Indptr: rows[j].ptr, Indices: rows[j].srcs}
			f, err := graph.NodeFeatFromEdges(in, &graph.Features{Dim: x.efDim, Data: rows[j].ef}, x.opt.NodeFeat, x.opt.Workers)
			if err != nil {
				return fmt.Errorf("%s: %w", x.opt.Data, err)
			}
			if x.opt.NormalizeFeatures {
				f.NormalizeRows(x.opt.Workers)
			}
			nds[j].feat[0] = f
		}
		if !x.opt.EdgeFeat {
			rows[j].ef = nil
		}
	}
	if x.opt.NodeFeat != "" {
		x.dims[0] = x.efDim
	}
	return nil
}

// Words of one received edge with features in rowsFromFeat's tuples: its
// row, source, time (0 untimed), order key and the index of its feature
// row in the round's buffer of its part.
const featStride = 5

// rowsFromFeat is rowsFromPairs (timed false) or rowsFromTimed (timed)
// for edges that carry feature rows (dim wide, feats[k] the rows of round
// k): rows sorted by (time, source) with exact repeats dropped, of which
// the one of the lowest order key stays, and its feature row with it. The
// key is the edge's line in the edge files (a reverse's that of its edge,
// or past all lines where graph.ReadOGB adds the reverses as lines of
// their own), which is graph.BuildInCSREdgeIDs's rule: the first in file
// order, whatever rank or round brought it.
func rowsFromFeat(got [][]int64, feats [][]float32, rows int64, dim int, timed bool) (ptr, idx, times []int64, ef []float32) {
	ptr, total := rowOffsets(got, rows, featStride)
	type entry struct {
		t, src, key int64
		round       int32
		at          int64
	}
	ent := make([]entry, total)
	fill := slices.Clone(ptr[:rows])
	for k, tu := range got {
		for i := 0; i < len(tu); i += featStride {
			r := tu[i]
			ent[fill[r]] = entry{t: tu[i+2], src: tu[i+1], key: tu[i+3], round: int32(k), at: tu[i+4]}
			fill[r]++
		}
		got[k] = nil
	}
	w := int64(0)
	for r := range rows {
		row := ent[ptr[r]:ptr[r+1]]
		slices.SortFunc(row, func(a, b entry) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.src, b.src), cmp.Compare(a.key, b.key))
		})
		row = slices.CompactFunc(row, func(a, b entry) bool { return a.t == b.t && a.src == b.src })
		ptr[r] = w
		w += int64(copy(ent[w:], row))
	}
	ptr[rows] = w
	d := int64(dim)
	idx, ef = make([]int64, w), make([]float32, w*d)
	if timed {
		times = make([]int64, w)
	}
	for i, e := range ent[:w] {
		idx[i] = e.src
		if timed {
			times[i] = e.t
		}
		copy(ef[int64(i)*d:], feats[e.round][e.at*d:(e.at+1)*d])
	}
	return ptr, idx, times, ef
}

// edgeChunkStart returns the line, in edge type e's edge files, of the
// first edge of chunk k (k == NumEdgeChunks(e) gives the type's count).
func (x *run) edgeChunkStart(e, k int) int64 {
	var s int64
	for _, n := range x.ch.Meta.NumEdgesPerChunk[e][:k] {
		s += n
	}
	return s
}
