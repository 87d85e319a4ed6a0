package sample

// Block is one layer of a sampled computation graph (a message-flow graph, as
// in DGL). Its destination nodes are the first NumDst entries of Nodes; the
// remaining entries are source nodes first reached by this layer. The sampled
// edges are stored by destination, in local indices into Nodes:
// the sources of destination i are Nodes[Indices[Indptr[i]:Indptr[i+1]]].
//
// A sample for an L-layer model is []Block in forward order: blocks[0] reads
// the input features of blocks[0].Nodes, and the destinations of
// blocks[L-1] are the seeds. Layer l's outputs feed layer l+1, so
// blocks[l+1].Nodes equals blocks[l].Nodes[:blocks[l].NumDst].
type Block struct {
	NumDst int
	Nodes  []int64 // global node ids: destinations first, then new sources
	// Orig holds the original (dataset) id of each entry of Nodes. Random
	// choices (neighbor sampling, dropout masks) are keyed by original ids
	// because relabelled ids depend on the number of partitions.
	Orig    []int64
	Indptr  []int32 // len NumDst+1
	Indices []int32 // local source indices into Nodes
	// Etype is the relation of each edge (aligned with Indices) in a block
	// of a heterogeneous graph, nil for a homogeneous one. The edges of a
	// destination are grouped by relation, ascending.
	Etype []int32
	// Time is the seed time each node is expanded at (aligned with Nodes)
	// in a block of temporal sampling, nil otherwise. A node may then
	// appear once per distinct time (see temporal.go).
	Time []int64
	// EdgeTime is the time of each sampled edge (aligned with Indices) in
	// a block of temporal sampling, nil otherwise.
	EdgeTime []int64
	// EdgeFeat holds the features of each sampled edge, EdgeFeatDim per
	// edge, aligned with Indices, when the graph has edge features and the
	// sampler serves them (dsample over a partition written with edge
	// features); nil otherwise. They are the features of the edge itself,
	// so they do not depend on the number of ranks.
	EdgeFeat    []float32
	EdgeFeatDim int
}

// NumSrc returns the number of source nodes (all of Nodes: a destination is
// also a source of its own row, for the self term of GraphSAGE).
func (b *Block) NumSrc() int { return len(b.Nodes) }

// NumEdges returns the number of sampled edges.
func (b *Block) NumEdges() int { return len(b.Indices) }
