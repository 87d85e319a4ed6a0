package train

import (
	"time"

	"mpignn/sample"
)

// Split names understood by BatchSource implementations and used in metrics.
const (
	SplitTrain = "train"
	SplitValid = "valid"
	SplitTest  = "test"
)

// Reducer is the only collective the training loop needs: an element-wise
// sum across all ranks, in place, with the same result on every rank. The
// lead wires it to MPI_Allreduce (collectives.Allreduce with Sum); a
// single-process run uses LocalReducer.
//
// Every rank must make the same sequence of calls with the same lengths; the
// Trainer guarantees that as long as BatchSource.Steps agrees across ranks.
type Reducer interface {
	AllreduceSum32(buf []float32) error
	AllreduceSum64(buf []float64) error
}

// LocalReducer is the Reducer of a one-rank world: the sum over one rank is
// the buffer itself.
type LocalReducer struct{}

// AllreduceSum32 implements Reducer.
func (LocalReducer) AllreduceSum32([]float32) error { return nil }

// AllreduceSum64 implements Reducer.
func (LocalReducer) AllreduceSum64([]float64) error { return nil }

// BatchSource produces the inputs of every step on this rank. It is the seam
// between the pure training loop and the distributed sampler/feature store.
//
// Steps must return the same count on every rank (for example
// sample.NumSteps over the GLOBAL number of nodes of the split), because
// every step ends in a collective. Batch may itself run collectives (feature
// fetches), so the Trainer calls it on every rank for every step, in order,
// even for a rank that holds no seeds in that step (it then returns empty
// labels).
type BatchSource interface {
	// Steps returns the number of steps of split in the given (0-based)
	// epoch.
	Steps(split string, epoch int) (int, error)
	// Batch fills b with step `step` of split in epoch `epoch`. b is
	// reused between calls; the source may keep the capacity of its slices.
	Batch(split string, epoch, step int, b *Batch) error
}

// Batch is one step's input on one rank.
type Batch struct {
	// Blocks in forward order (see sample.Block); the destinations of the
	// last block are this rank's seeds of the step.
	Blocks []sample.Block
	// X holds the input features of Blocks[0].Nodes, row-major, InDim each.
	X []float32
	// Labels of the seeds, one per destination of the last block. A rank
	// without seeds in this step leaves Labels empty (Blocks and X are then
	// ignored).
	Labels []int32
	// GlobalSeeds is the number of seeds of this step summed over ALL ranks
	// (G, the global batch size of the step; the last step of an epoch may
	// be short). Gradients are scaled by 1/G so that their Allreduce sum is
	// the gradient of the mean loss of the global batch. Every rank must
	// report the same value; it is required for training steps and ignored
	// for evaluation.
	GlobalSeeds int
	// Stats is filled by the source for the metrics.
	Stats BatchStats
}

// BatchStats is what a source measured while producing one batch.
type BatchStats struct {
	// Gather is the time spent gathering input features; the Trainer
	// charges the rest of the Batch call to sampling.
	Gather time.Duration
	// RemoteRows counts feature rows fetched from other ranks; CacheHits and
	// CacheLookups describe the feature cache, if any (0/0 without one).
	RemoteRows   int64
	CacheHits    int64
	CacheLookups int64
}

// reset empties b but keeps the capacity of its slices for the source.
func (b *Batch) reset() {
	b.Blocks = b.Blocks[:0]
	b.X = b.X[:0]
	b.Labels = b.Labels[:0]
	b.GlobalSeeds = 0
	b.Stats = BatchStats{}
}
