package graph

// Split holds the node ids of one named split (for example "public").
type Split struct {
	Train, Valid, Test []int64
}

// Features is a dense row-major float32 matrix with one row per node.
type Features struct {
	Dim  int
	Data []float32 // len rows*Dim
}

// Row returns row v; the slice aliases f.Data.
func (f *Features) Row(v int64) []float32 {
	d := int64(f.Dim)
	return f.Data[v*d : (v+1)*d]
}

// NumRows returns the number of rows.
func (f *Features) NumRows() int64 {
	if f.Dim == 0 {
		return 0
	}
	return int64(len(f.Data)) / int64(f.Dim)
}

// Dataset is a graph in memory: a node-classification dataset, or (with
// Feat or Labels nil when read with the Optional options) the graph of a
// link-prediction dataset.
type Dataset struct {
	Name       string
	NumNodes   int64
	In         *CSR // in-edges: In.Neighbors(v) are the sources u of edges u->v
	Feat       *Features
	Labels     []int32 // one per node, in [0, NumClasses); nil (NumClasses 0) for an unlabelled dataset
	NumClasses int
	// Targets are real node targets instead of class labels (Labels nil,
	// NumClasses 0): Dim per node, row-major, NaN where a node has no
	// value for a target. Binary tasks (0/1, multi-label classification)
	// and regression targets are both stored so. nil for class labels.
	Targets *Features
	Splits  map[string]*Split
	// LinkSplits are the link-prediction splits read on request
	// (ReadOptions.LinkSplits), by name.
	LinkSplits map[string]*LinkSplit
	// InTime, read on request (ReadOptions.Time), holds one time per stored
	// in-edge, aligned with In.Indices; every row of In is then sorted by
	// (time, source) strictly ascending. nil when untimed.
	InTime []int64
	// NodeTime is one time per node (nil when the dataset has none).
	NodeTime []int64
	// EdgeFeat, read on request (ReadOptions.EdgeFeat), holds one feature
	// row per stored in-edge, aligned with In.Indices as InTime is: a
	// reverse edge has its edge's row, and of repeated edges the first in
	// file order is kept (BuildInCSREdgeIDs). nil without edge features.
	EdgeFeat *Features
	// EdgeTargets, read on request (ReadOptions.EdgeLabels), are the
	// labels of the edge file's lines (the edge task's targets); nil
	// without them.
	EdgeTargets *EdgeTargets
	// TimeKind says where InTime comes from: TimeKindEdge (edge_time.csv.gz)
	// or TimeKindNode (each edge has its source's node time); "" untimed.
	TimeKind string
}

// Kinds of edge times (Dataset.TimeKind, partition.TimeMeta.Kind).
const (
	TimeKindEdge = "edge"
	TimeKindNode = "node"
)
