package train

import "mpignn/sample"

// Split names understood by BatchSource implementations and used in metrics.
const (
	SplitTrain = "train"
	SplitValid = "valid"
	SplitTest  = "test"
)

// Reducer is all the training loop needs from the other ranks: an
// element-wise sum across all ranks, in place, with the same result on every
// rank, and agreement on a rank-local error. The lead wires them to
// MPI_Allreduce (collectives.Allreduce with Sum) and collectives.Agree; a
// single-process run uses LocalReducer.
//
// Every rank must make the same sequence of calls with the same lengths; the
// Trainer guarantees that as long as BatchSource.Steps agrees across ranks.
type Reducer interface {
	AllreduceSum32(buf []float32) error
	AllreduceSum64(buf []float64) error
	// Agree turns a rank-local error into an error on every rank:
	// collectives.Agree over MPI (this package may not import it).
	Agree(localErr error) error
}

// LocalReducer is the Reducer of a one-rank world: the sum over one rank is
// the buffer itself.
type LocalReducer struct{}

// AllreduceSum32 implements Reducer.
func (LocalReducer) AllreduceSum32([]float32) error { return nil }

// AllreduceSum64 implements Reducer.
func (LocalReducer) AllreduceSum64([]float64) error { return nil }

// Agree implements Reducer: with one rank, the only error is the local one.
func (LocalReducer) Agree(localErr error) error { return localErr }

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
	// The trainer reads Blocks, X, Labels, GlobalSeeds and Stats.
	Batch(split string, epoch, step int, b *sample.Batch) error
}
