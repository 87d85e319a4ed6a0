package sampletest

import (
	"slices"

	"mpignn/graph"
	"mpignn/sample"
)

// embedTypes are the node types of EmbedDataset, in type order (an array:
// the package keeps no mutable state).
var embedTypes = [...]string{"author", "paper", "venue"}

// EmbedFeatDim is the feature width of EmbedDataset's papers.
const EmbedFeatDim = 4

// EmbedFeat is paper i's feature k in EmbedDataset.
func EmbedFeat(i int64, k int) float32 { return float32(i)*10 + float32(k) }

// EmbedDataset builds the graph of the typed-table tests (typed feature
// gathers in sample/dsample, learnable embeddings in train/dtrain): counts[t]
// nodes of type t of author, paper, venue (author and paper at least, the
// missing ones empty) and no edges; author featureless, paper with EmbedFeat, venue
// featureless. It returns the dataset and its owner per node for P parts:
// pseudo-random per node, and, when P > 2, no venue on part 1 (a type with
// no rows on a part).
func EmbedDataset(counts []int64, P int) (*graph.HeteroDataset, []int32, error) {
	counts = append(slices.Clone(counts), make([]int64, max(0, 2-len(counts)))...)
	types := map[string]int64{}
	for u, n := range counts {
		types[embedTypes[u]] = n
	}
	s, err := graph.NewSchema(types, []graph.Relation{{Src: "author", Name: "writes", Dst: "paper"}})
	if err != nil {
		return nil, nil, err
	}
	paper := &graph.Features{Dim: EmbedFeatDim}
	for i := range counts[1] {
		for k := range EmbedFeatDim {
			paper.Data = append(paper.Data, EmbedFeat(i, k))
		}
	}
	d := &graph.HeteroDataset{Name: "embed", Schema: s, In: &graph.CSR{Indptr: make([]int64, s.NumNodes()*int64(s.NumRels())+1)},
		Feat: map[string]*graph.Features{"paper": paper}}
	assign := make([]int32, 0, s.NumNodes())
	for u := range counts {
		for i := range counts[u] {
			p := int(sample.Hash64(7, uint64(u), uint64(i)) % uint64(P))
			if u == 2 && P > 2 && p == 1 {
				p = 0
			}
			assign = append(assign, int32(p))
		}
	}
	return d, assign, nil
}
