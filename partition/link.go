package partition

// Link-prediction splits stored with a partition.
//
// A link partition holds, besides the usual node arrays, the positive edges
// of the train/valid/test splits, fixed evaluation negatives and, per part,
// the slice of a global original-id -> new-id map. The adjacency files
// (indptr/indices) hold TRAINING edges only, so held-out edges never reach
// message passing; the valid edges' in-adjacency is stored separately for
// test-time inference with --use-valid-edges (the OGB collab rule).
//
// Every positive edge belongs to the part that owns its SOURCE (that rank
// takes it as a seed). Edge ids are canonical: the position of the edge in
// its split's list sorted by (source orig id, destination orig id, time,
// input line), the same whatever the number of parts, so global batching of
// edges (sample.RankSteps over the ids) is rank-count independent.
//
// Request a link partition with Options.Link (LinkOptions: the split, K, the
// pool size, the valid adjacency and structural features; the seed is
// Options.Seed), reading the dataset with LinkOptions.ReadOptions:
//
//	lo := partition.LinkOptions{Split: "random:0.85,0.05,0.10"}
//	d, err := graph.ReadOGB(dir, lo.ReadOptions(graph.UndirectedOptions()))
//	m, err := partition.WriteDataset(out, d, parts, partition.Options{Seed: 1, Undirected: true, Link: &lo})
//	pt, err := partition.Load(out, rank) // pt.Link is this part's LinkPart
//
// Splits:
//   - random:TRAIN,VALID,TEST: the units are the dataset's distinct
//     undirected pairs (min orig, max orig; self loops and duplicates
//     dropped). floor(VALID*M) go to valid, floor(TEST*M) to test, the rest
//     to train (PyG RandomLinkSplit's counts); which ones is decided by a
//     hash of (seed, pair), not by the partitioning. Directed is false.
//   - time: the rows of split/time/{train,valid,test}.csv.gz as directed
//     events (Directed, HasTime). Message passing gets the training events
//     plus, with Options.Undirected (--undirected, the default), their
//     reverses. A valid/test event whose reverse is a training event thus
//     has that reverse in the adjacency: it is training data, not a leak.
//
// The adjacency files are deduplicated and have no self loops. Fixed
// negatives: destination j of valid/test positive i is
// Hash(seed, split, i, j) mod N (original id), uniform and unfiltered like
// OGB citation2's; pool pair k of a split has both endpoints from
// Hash(seed, split, k), unfiltered, and lives with the owner of its source.
// Nothing of the split depends on the number of parts: in original ids,
// partitions into any P hold the same edges, ids, negatives and pools.
//
// A dataset without node features gets structural features instead
// (LinkMeta.StructFeats columns: log1p of the in- and out-degree over the
// TRAINING positives, then fixed +-1/sqrt(D) codes of the original id), so
// no held-out edge leaks into the input. A dataset without labels has
// NumClasses 0, no labels.bin and Part.Labels nil.
//
// Files in part-<p>/ (all int64, listed in META.json with size and sha256
// like every other file): link-{train,valid,test}.bin and
// link-{valid,test}-pool.bin hold an edge set as 6 blocks src | dst |
// src_orig | dst_orig | id | time; link-{valid,test}-neg.bin the negatives
// as 2 blocks, new ids then original ids; link-vadj-{indptr,indices,orig}.bin
// the valid adjacency (Part.MergedValidAdjacency merges it with the training
// rows); link-orig2new.bin the Orig2New block. PartInfo.Link counts them.
//
// Heterogeneous graphs (format version 2) take a link split on one
// relation, LinkOptions.Relation and LinkMeta.Relation: see heterolink.go
// for what changes (typed negatives and pools, removal of held-out edges
// from the relation and its reverse, relation rows in the valid adjacency,
// named split directories such as MovieLens' u1 with an empty valid set).

// Link split kinds (LinkMeta.Kind).
const (
	LinkSplitRandom = "random" // --link-split random:TRAIN,VALID,TEST over the dataset's edges
	LinkSplitTime   = "time"   // split/time/{train,valid,test}.csv.gz rows src,dst,time,rating
	// LinkSplitNamed is another split directory of a heterogeneous
	// dataset's relation (split/u1 of MovieLens), read like time.
	LinkSplitNamed = "named"
)

// LinkMeta is the "link" section of META.json (absent for node-only partitions).
type LinkMeta struct {
	// Split is the --link-split value as given ("random:0.85,0.05,0.10",
	// "time"); Kind is LinkSplitRandom or LinkSplitTime.
	Split string `json:"split"`
	Kind  string `json:"kind"`
	// Seed drove the random split and the evaluation negatives.
	Seed uint64 `json:"seed"`
	// Directed: positives are directed events (time split of
	// bitcoin-alpha/MovieLens); otherwise every positive is an undirected
	// pair listed once with src orig < dst orig, and message passing has both
	// directions of every training pair.
	Directed bool `json:"directed"`
	// Positive edges per split over all parts.
	Train int64 `json:"train"`
	Valid int64 `json:"valid"`
	Test  int64 `json:"test"`
	// NegsPerPos is K: fixed negative destinations per valid/test positive
	// (same source), for MRR and AUC.
	NegsPerPos int `json:"negs_per_pos"`
	// Pool is the size of the shared negative pool of random pairs per
	// split (valid and test each), for Hits@K.
	Pool int64 `json:"pool"`
	// StoredNegs: the fixed negatives are the ones the split's files store
	// (OGB's target_node_neg), not drawn, so that MRR is OGB's;
	// NegsPerPos is their width.
	StoredNegs bool `json:"stored_negs,omitempty"`
	// StoredPool: the pools are the negative pairs the split's files store
	// (OGB's edge_neg), not drawn, so that Hits@K is OGB's. Pool is then
	// the valid pool's size and TestPool the test pool's (OGB's differ for
	// ogbl-ddi).
	StoredPool bool  `json:"stored_pool,omitempty"`
	TestPool   int64 `json:"test_pool,omitempty"`
	// ValidAdj: parts store the in-adjacency of the valid edges
	// (LinkPart.Valid{Indptr,Indices,IndicesOrig}).
	ValidAdj bool `json:"valid_adj"`
	// HasTime: LinkEdges.Time holds edge times (else zeros).
	HasTime bool `json:"has_time"`
	// StructFeats is the width of the structural features the partitioner
	// made for a dataset without node features (0 if it had features).
	StructFeats int `json:"struct_feats,omitempty"`
	// Relation is the canonical name of the relation whose edges are the
	// positives in a heterogeneous partition ("" for a homogeneous one).
	Relation string `json:"relation,omitempty"`
	// Graph is LinkOptions.Graph when it is LinkGraphAll: the adjacency
	// holds the train, valid and test events ("" : training edges only).
	Graph string `json:"graph,omitempty"`
	// EdgeTargetDim is the width of the positives' edge labels
	// (LinkEdges.Targets; the edge task's targets, from
	// raw/edge-label.csv.gz), 0 without them. EdgeClasses > 0: the labels
	// are one class per edge (EdgeTargetDim 1), in [0, EdgeClasses).
	EdgeTargetDim int `json:"edge_target_dim,omitempty"`
	EdgeClasses   int `json:"edge_classes,omitempty"`
}

// PoolSize returns the size of the negative pool of split set ("valid" or
// "test"): Pool, or TestPool for a stored test pool.
func (l *LinkMeta) PoolSize(set string) int64 {
	if set == "test" && l.StoredPool {
		return l.TestPool
	}
	return l.Pool
}

// LinkEdges are positive (or pool) edges owned by one part, sorted by ID.
// All slices have the same length.
type LinkEdges struct {
	Src, Dst         []int64 // new global ids
	SrcOrig, DstOrig []int64 // original ids
	ID               []int64 // canonical edge id within the split (pool: pool index)
	Time             []int64 // edge time (0 when the split has none)
	// Targets are the positives' edge labels, Meta.Link.EdgeTargetDim per
	// edge (NaN unlabelled; a class as a float), nil without them and for
	// the pools.
	Targets []float32
}

// Len returns the number of edges.
func (e *LinkEdges) Len() int { return len(e.ID) }

// LinkPart is one part's share of a link split.
type LinkPart struct {
	Train, Valid, Test LinkEdges
	// Fixed negatives: K = Meta.Link.NegsPerPos destinations per valid/test
	// positive of this part, row-major (positive i has entries [i*K,(i+1)*K)),
	// as new ids and original ids. The source is the positive's source.
	ValidNeg, ValidNegOrig []int64
	TestNeg, TestNegOrig   []int64
	// Shared negative pools (random pairs), the pairs whose source this part owns.
	ValidPool, TestPool LinkEdges
	// In-adjacency of the valid edges into owned nodes (both directions
	// unless Directed; for a directed split also the reverses when the
	// training adjacency has them, i.e. with --undirected), canonical rows,
	// pairs already in the training adjacency left out. Nil unless
	// Meta.Link.ValidAdj. Part.MergedValidAdjacency returns training+valid.
	ValidIndptr, ValidIndices, ValidIndicesOrig []int64
	// Orig2New[i] is the new global id of the node with original id
	// OrigLo+i; [OrigLo,OrigHi) = OrigBlock(NumNodes, NumParts, ID) (for a
	// share, of its ShareView's parts: LoadOrigBlock). The blocks of all
	// parts tile [0,N): a rank translates an original id (a pair file
	// given to predict, say) by asking the part that holds its block.
	OrigLo, OrigHi int64
	Orig2New       []int64
}

// OrigBlock returns the block [lo,hi) of original ids whose new ids part p
// of `parts` stores in LinkPart.Orig2New: an even split of [0,n).
func OrigBlock(n int64, parts, p int) (lo, hi int64) {
	return n * int64(p) / int64(parts), n * int64(p+1) / int64(parts)
}
