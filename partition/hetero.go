package partition

import (
	"fmt"

	"mpignn/graph"
)

// FormatVersionHetero is the format version of heterogeneous partitions
// (Meta.Hetero set). Homogeneous partitions are still written as version 1,
// byte for byte as before, and both versions load.
const FormatVersionHetero = 2

// HeteroMeta (META.json "hetero") describes a heterogeneous partition.
//
// Node ids: every node has a homogenized ORIGINAL id (graph.Schema: type t's
// node i is NodeOrig[t]+i) and a NEW global id. Part p owns the new ids
// [Offsets[p], Offsets[p+1]) of Meta, and inside that range the nodes are
// grouped by type in type order, so that the part owns a contiguous range of
// new ids PER TYPE as well. TypeOffsets gives the partition book per type:
// type t's nodes are also numbered 0..count-1 in new-id order (their
// "type-local new id"), and part p owns type-local ids
// [TypeOffsets[t][p], TypeOffsets[t][p+1]).
//
// Adjacency: a part's indptr.bin has NumOwned*R+1 entries (R relations): row
// (v-Lo)*R+r lists the in-neighbours of owned node v through relation r
// (new ids in indices.bin, homogenized original ids in indices_orig.bin),
// ascending by original id. Each relation's in-edge CSC is thus the strided
// subsequence of rows r, R+r, 2R+r, ...; a node and a relation select one
// row, which the one-sided sampler reads as {start, degree} like a node row.
//
// Features: part-p/feat-<type>.bin per type with features (owned nodes of
// the type x FeatDims[type], new-id order); feat.bin is empty (FeatDim 0).
// Labels: labels.bin over all owned nodes, -1 for nodes without a label
// (other types, or unlabelled nodes of LabelType). Splits: the split files
// hold new ids of LabelType nodes, as for homogeneous partitions.
type HeteroMeta struct {
	NodeTypes []string `json:"node_types"`
	NodeOrig  []int64  `json:"node_orig"`
	Relations []string `json:"relations"` // canonical src___rel___dst names, sorted
	// TypeOffsets[t] has NumParts+1 entries (see above).
	TypeOffsets [][]int64      `json:"type_offsets"`
	FeatDims    map[string]int `json:"feat_dims"` // node types with features only
	// LabelType is the node type that labels.bin's labels and the splits
	// belong to ("" when the dataset has none); Meta.NumClasses counts its
	// classes.
	LabelType string `json:"label_type,omitempty"`
	// RelEdges and RelCut count, per relation, the stored edges and those
	// whose endpoints have different owners.
	RelEdges []int64 `json:"rel_edges"`
	RelCut   []int64 `json:"rel_cut"`
	// Reverse records whether the reader added reverse relations.
	Reverse bool `json:"reverse"`
	// EdgeFeatNames names the columns of edge_feat.bin (Meta.EdgeFeatDim
	// of them): the relations' per-edge attributes edge_<name>.csv.gz, 0
	// on the edges of a relation without one. Omitted without edge
	// features, so older partitions read unchanged.
	EdgeFeatNames []string `json:"edge_feat_names,omitempty"`
}

// Schema returns the graph schema of the partition.
func (h *HeteroMeta) Schema() (*graph.Schema, error) {
	counts := map[string]int64{}
	if len(h.NodeOrig) != len(h.NodeTypes)+1 {
		return nil, fmt.Errorf("hetero meta: %d node types but %d original-id offsets", len(h.NodeTypes), len(h.NodeOrig))
	}
	for i, t := range h.NodeTypes {
		counts[t] = h.NodeOrig[i+1] - h.NodeOrig[i]
	}
	rels := make([]graph.Relation, len(h.Relations))
	for i, s := range h.Relations {
		r, err := graph.ParseRelation(s)
		if err != nil {
			return nil, fmt.Errorf("hetero meta: %w", err)
		}
		rels[i] = r
	}
	s, err := graph.NewSchema(counts, rels)
	if err != nil {
		return nil, fmt.Errorf("hetero meta: %w", err)
	}
	for i, t := range s.NodeTypes {
		if t != h.NodeTypes[i] || s.NodeOrig[i+1] != h.NodeOrig[i+1] {
			return nil, fmt.Errorf("hetero meta: node types not sorted by name")
		}
	}
	for i, r := range s.Relations {
		if r.String() != h.Relations[i] {
			return nil, fmt.Errorf("hetero meta: relations not sorted by name")
		}
	}
	return s, nil
}

// NumRels returns the number of relations R (1 for a homogeneous
// partition, whose rows are nodes).
func (m *Meta) NumRels() int {
	if m.Hetero == nil {
		return 1
	}
	return len(m.Hetero.Relations)
}

// TypeCount returns how many nodes of type t part p owns.
func (h *HeteroMeta) TypeCount(t, p int) int64 { return h.TypeOffsets[t][p+1] - h.TypeOffsets[t][p] }

// TypeStart returns the first new global id of type t in part p, given
// the part's first new id lo (Meta.Offsets[p]).
func (h *HeteroMeta) TypeStart(t, p int, lo int64) int64 {
	for u := 0; u < t; u++ {
		lo += h.TypeCount(u, p)
	}
	return lo
}
