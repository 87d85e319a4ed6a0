package partition

import (
	"errors"
	"fmt"
	"slices"

	"mpignn/config"
	"mpignn/graph"
)

// fileEdgeFeat is the edge-feature array file inside part-<p>/ (only in a
// partition with Meta.EdgeFeatDim > 0): float32[edges*edge_feat_dim], row k
// the features of the part's stored in-edge k, aligned with indices.bin
// as times.bin is.
const fileEdgeFeat = "edge_feat.bin"

// validateEdgeFeat checks the options' edge-feature choices: a known
// NodeFeat mode, and no edge features with a link split, whose training
// graph (drawn from the deduplicated pairs) does not carry them yet.
func (o Options) validateEdgeFeat() error {
	if err := graph.CheckNodeFeatFrom(o.NodeFeat); err != nil {
		return config.Errorf("{NodeFeat}: %v", err)
	}
	if o.EdgeFeat && o.Link != nil {
		return config.Errorf("{EdgeFeat} with a link split ({Link}): not supported yet (the link split's training graph does not carry edge features)")
	}
	return nil
}

// canonicalEdgeFeat is canonical for an adjacency with edge features
// aligned with its Indices: it returns in and ef themselves when every row
// is strictly ascending, else a sorted copy of each with, of repeated
// sources, the first one's row kept (the reader's rule).
func canonicalEdgeFeat(in *graph.CSR, ef *graph.Features, workers int) (*graph.CSR, *graph.Features) {
	n := in.NumRows()
	if strictRows(in, workers) {
		return in, ef
	}
	d := int64(ef.Dim)
	out := &graph.CSR{Indptr: make([]int64, n+1), Indices: make([]int64, 0, len(in.Indices))}
	feat := &graph.Features{Dim: ef.Dim, Data: make([]float32, 0, len(ef.Data))}
	for v := int64(0); v < n; v++ {
		a := in.Indptr[v]
		pos := make([]int64, in.Degree(v))
		for i := range pos {
			pos[i] = a + int64(i)
		}
		// Stable: of equal sources the first stored stays first.
		slices.SortStableFunc(pos, func(x, y int64) int { return cmpInt64(in.Indices[x], in.Indices[y]) })
		for i, e := range pos {
			if i > 0 && in.Indices[e] == in.Indices[pos[i-1]] {
				continue
			}
			out.Indices = append(out.Indices, in.Indices[e])
			feat.Data = append(feat.Data, ef.Data[e*d:(e+1)*d]...)
		}
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out, feat
}

func cmpInt64(a, b int64) int { return int(min(max(a-b, -1), 1)) }

// edgeFeatSource checks the dataset's edge features for a partition that
// stores them (Options.EdgeFeat) and returns them aligned with the
// adjacency the writer uses: in (canonical) or, timed, the dataset's
// timed rows, which must then already be in timed canonical order (as
// graph.ReadOGB gives them), since reordering them here would lose the
// alignment.
func edgeFeatSource(d *graph.Dataset, timed bool, workers int) (*graph.CSR, *graph.Features, error) {
	ef := d.EdgeFeat
	switch {
	case ef == nil:
		return nil, nil, errors.New("edge features requested (--edge-feat) but the dataset has none (read it with edge features: raw/edge-feat.csv.gz)")
	case ef.Dim <= 0 || ef.NumRows() != d.In.NumEdges() || int64(len(ef.Data)) != d.In.NumEdges()*int64(ef.Dim):
		return nil, nil, fmt.Errorf("%d edge feature values of width %d for %d edges", len(ef.Data), ef.Dim, d.In.NumEdges())
	}
	if timed {
		if err := graph.CheckTimedRows(d.In, d.InTime, nil); err != nil {
			return nil, nil, fmt.Errorf("edge features with times need rows in timed canonical order, as graph.ReadOGB gives them: %w", err)
		}
		return d.In, ef, nil
	}
	in, f := canonicalEdgeFeat(d.In, ef, workers)
	return in, f, nil
}

// heteroEdgeFeat returns d's relation edge features aligned with the
// canonical adjacency the writer uses (Options.EdgeFeat on a
// heterogeneous dataset, read with graph.HeteroReadOptions.EdgeFeat).
func heteroEdgeFeat(d *graph.HeteroDataset, workers int) (*graph.CSR, *graph.Features, error) {
	ef := d.EdgeFeat
	switch {
	case ef == nil:
		return nil, nil, errors.New("edge features requested (--edge-feat) but the dataset has none (read it with relation edge features: raw/relations/<rel>/edge_<name>.csv.gz)")
	case ef.Dim <= 0 || int64(len(ef.Data)) != d.In.NumEdges()*int64(ef.Dim) || len(d.EdgeFeatNames) != ef.Dim:
		return nil, nil, fmt.Errorf("%d edge feature values of width %d (%d names) for %d edges", len(ef.Data), ef.Dim, len(d.EdgeFeatNames), d.In.NumEdges())
	case d.InTime != nil:
		return nil, nil, errors.New("relation edge features with times: not supported yet")
	}
	in, f := canonicalEdgeFeat(d.In, ef, workers)
	return in, f, nil
}

// gatherEdgeRows copies the rows [a,b) of ef to out[o*dim:].
func gatherEdgeRows(out []float32, o int64, ef *graph.Features, a, b int64) {
	d := int64(ef.Dim)
	copy(out[o*d:], ef.Data[a*d:b*d])
}

// edgeFeatFiles lists part p's edge-feature file.
func (m *Meta) edgeFeatFiles(p int) []fileSpec {
	if m.EdgeFeatDim == 0 {
		return nil
	}
	return []fileSpec{{fileEdgeFeat, dtFloat32, m.Parts[p].Edges * int64(m.EdgeFeatDim)}}
}

// validateEdgeFeat checks META's edge-feature entries: a width within
// bounds, homogeneous partitions only, and a known derivation of the node
// features; the file table check then makes edge_feat.bin present exactly
// when the width says so.
func (m *Meta) validateEdgeFeat() error {
	if m.EdgeFeatDim < 0 || m.EdgeFeatDim > 1<<20 {
		return fmt.Errorf("edge_feat_dim %d outside [0,%d]", m.EdgeFeatDim, 1<<20)
	}
	if m.EdgeFeatDim > 0 && m.Link != nil {
		return fmt.Errorf("edge_feat_dim %d in a link partition", m.EdgeFeatDim)
	}
	if h := m.Hetero; h != nil && len(h.EdgeFeatNames) != m.EdgeFeatDim {
		return fmt.Errorf("hetero: %d edge_feat_names for edge_feat_dim %d (one name per column)", len(h.EdgeFeatNames), m.EdgeFeatDim)
	}
	if err := graph.CheckNodeFeatFrom(m.NodeFeatFrom); err != nil {
		return fmt.Errorf("node_feat_from: %w", err)
	}
	if m.NodeFeatFrom != "" && m.FeatDim == 0 {
		return fmt.Errorf("node_feat_from %q without node features", m.NodeFeatFrom)
	}
	return nil
}
