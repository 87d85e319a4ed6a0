package sample

import (
	"time"

	"mpignn/internal/half"
)

// Batch is one rank's share of one step: the inputs a model consumes and
// what producing them cost. It is the one batch type of the project: the
// distributed loader (dsample.Loader) fills it, the trainer and predict
// consume it, and the sampler benchmark reads its statistics.
type Batch struct {
	// Blocks in forward order (see Block); the destinations of the last
	// block are this rank's seeds of the step.
	Blocks []Block
	// X holds the input features of Blocks[0].Nodes, row-major, InDim each.
	X []float32
	// XRows holds the same inputs as views instead of X, when the consumer
	// set ViewInputs and the source can (float32 features): row i is
	// XRows[i], a slice of the feature store's own rows or of XBuf (the
	// rows fetched from other ranks). They are READ-ONLY, as they alias the
	// store, and valid until the source's next call on this Batch. Sparing
	// the copy into X pays where the consumer makes a copy of its own
	// anyway (the model's input dropout).
	XRows [][]float32
	XBuf  []float32
	// XRows16 are the same views of a partition that stores its features
	// at two bytes a value (partition --feat-dtype): rows of XHalf values
	// (bf16 or fp16), which the consumer widens to float32 as it reads
	// them; XBuf16 holds the fetched ones. The same rules as XRows.
	XRows16 [][]uint16
	XBuf16  []uint16
	XHalf   half.Kind
	// ViewInputs asks the source for XRows or XRows16 instead of X (a
	// source that cannot, or does not know how, fills X). Reset keeps it.
	ViewInputs bool
	// XS holds the same inputs as sparse rows instead of X when the
	// partition stores its features sparsely (X is then empty); nil for
	// dense inputs.
	XS *SparseRows
	// XT holds the inputs of a heterogeneous model instead of X: XT[t] are
	// the input rows (features, or learnable embeddings) of the nodes of
	// type t among Blocks[0].Nodes, in their order there, and XTNodes[t]
	// their new global ids (to send embedding gradients to their owners).
	// Both are nil for a homogeneous graph.
	XT      [][]float32
	XTNodes [][]int64
	// Labels of the seeds, one per destination of the last block. A rank
	// without seeds in this step leaves Labels empty (Blocks and X are then
	// ignored).
	Labels []int32
	// Targets are the seeds' real targets instead of Labels (multi-label
	// and regression tasks): TargetDim per seed, row-major, NaN where a
	// seed has no value for a target. Empty for class labels and links.
	Targets   []float32
	TargetDim int
	// GlobalSeeds is the number of seeds of this step summed over ALL ranks
	// (G, the global batch size of the step; the last step of an epoch may
	// be short). Gradients are scaled by 1/G so that their Allreduce sum is
	// the gradient of the mean loss of the global batch. Every rank must
	// report the same value; it is required for training steps and ignored
	// for evaluation.
	GlobalSeeds int
	// Seeds and SeedsOrig are this rank's seeds of the step (partition and
	// original ids) in step order; sources that do not track them leave
	// them empty.
	Seeds, SeedsOrig []int64
	// Link prediction (the loader of --task link): the step's scored pairs
	// as local indices into the seeds (the destinations of the last block),
	// two per pair (source, destination), and one target per pair: 1 for a
	// positive edge, 0 for a negative. Labels is then empty and
	// GlobalSeeds counts PAIRS over all ranks (the loss is the mean binary
	// cross-entropy over the step's pairs). Node batches leave both empty.
	Pairs      []int32
	PairLabels []float32
	// Stats is filled by the source for the metrics.
	Stats BatchStats
}

// Reset empties b but keeps the capacity of its slices for the source.
func (b *Batch) Reset() {
	b.Blocks = b.Blocks[:0]
	b.X = b.X[:0]
	b.XRows, b.XRows16 = b.XRows[:0], b.XRows16[:0]
	if b.XS != nil {
		b.XS.Reset(b.XS.Cols)
	}
	for t := range b.XT {
		b.XT[t] = b.XT[t][:0]
	}
	for t := range b.XTNodes {
		b.XTNodes[t] = b.XTNodes[t][:0]
	}
	b.Labels = b.Labels[:0]
	b.Targets, b.TargetDim = b.Targets[:0], 0
	b.GlobalSeeds = 0
	b.Seeds, b.SeedsOrig = b.Seeds[:0], b.SeedsOrig[:0]
	b.Pairs, b.PairLabels = b.Pairs[:0], b.PairLabels[:0]
	b.Stats = BatchStats{}
}

// NodeTargets returns the number of seeds with node targets: a label or a
// row of real targets each.
func (b *Batch) NodeTargets() int {
	if b.TargetDim > 0 {
		return len(b.Targets) / b.TargetDim
	}
	return len(b.Labels)
}

// BatchStats is what a source measured while producing one batch. A
// single-process source fills only what it has (RemoteRows stays 0 there
// unless it simulates ranks).
type BatchStats struct {
	// Gather is the time spent gathering input features; the trainer
	// charges the rest of the Batch call to sampling.
	Gather time.Duration
	// Input feature rows by where they came from: owned by this rank,
	// served by the halo or hot-row cache, read from their owners.
	LocalRows, CachedRows, RemoteRows int64
	// CacheLookups counts non-owned rows looked up in the caches (the hits
	// are CachedRows); 0 without a cache.
	CacheLookups int64
	// BytesMoved counts feature and adjacency bytes read from other ranks.
	BytesMoved int64
	// Sample describes the neighbor sampling of the batch.
	Sample SampleStats
}

// SampleStats count what one distributed Sample call did on this rank.
type SampleStats struct {
	LocalNodes, RemoteNodes int64 // destinations expanded from own / remote adjacency
	LocalEdges, RemoteEdges int64 // sampled edges of those destinations
	Local, Remote           time.Duration
	Bytes                   int64 // adjacency bytes read from other ranks
	// Excluded counts chosen edges dropped because their pair was in the
	// exclusion set (see EdgeSet); Local/RemoteEdges do not include them.
	Excluded int64
}

// Edges returns all sampled edges.
func (st *SampleStats) Edges() int64 { return st.LocalEdges + st.RemoteEdges }

// Add accumulates o into st.
func (st *SampleStats) Add(o SampleStats) {
	st.LocalNodes += o.LocalNodes
	st.RemoteNodes += o.RemoteNodes
	st.LocalEdges += o.LocalEdges
	st.RemoteEdges += o.RemoteEdges
	st.Local += o.Local
	st.Remote += o.Remote
	st.Bytes += o.Bytes
	st.Excluded += o.Excluded
}
