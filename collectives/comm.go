package collectives

// #include "shim.h"
import "C"

import (
	"errors"
	"math"
	"unsafe"

	"mpignn/spmd"
)

// Comm is the world communicator as seen by package collectives. Every
// method is collective unless its comment says otherwise: all ranks call it
// in the same order with compatible arguments.
//
// gompi v0.2.0 answers rank, size and time, which cannot fail (see
// world_openmpi.go); everything that can fail goes through our shim, because
// gompi discards MPI's return codes and panics on empty slices.
type Comm struct {
	rank, size int
	// maxCount is the largest element count passed to one MPI call. MPI
	// counts are C ints; larger messages are split. Tests lower it to
	// exercise the splitting without allocating gigabytes.
	maxCount int64
	// watch is the stall watchdog (see Watch); nil without a timeout.
	watch *watch
	// nodeRanks groups ranks into pretend nodes (SetNodeRanks; 0: real
	// nodes), and shared is the layout of shared partitions (ShareGroups;
	// nil: every rank holds its own rows).
	nodeRanks int
	shared    *groups
}

// NewComm returns the world communicator. MPI must have been started (spmd.Init).
func NewComm() (*Comm, error) {
	if C.shim_initialized() == 0 {
		return nil, errors.New("collectives: MPI is not initialised (call spmd.Init first)")
	}
	rank, size := worldRankSize()
	return &Comm{rank: rank, size: size, maxCount: math.MaxInt32}, nil
}

// Rank returns this rank's index in the world.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks.
func (c *Comm) Size() int { return c.size }

// Wtime returns MPI's wall clock in seconds (not collective).
func Wtime() float64 { return wtime() }

// mpiErr reports a shim return code (spmd owns the MPI error text).
func mpiErr(call string, rc C.int) error { return spmd.MPIError(call, int(rc)) }

// Elem is an element type that collectives can move.
type Elem interface {
	~byte | ~int32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Number is an element type that can be reduced.
type Number interface {
	~int32 | ~int64 | ~uint64 | ~float32 | ~float64
}

func dtype[T Elem]() C.int {
	var z T
	switch any(z).(type) {
	case byte:
		return C.SHIM_BYTE
	case int32:
		return C.SHIM_INT32
	case int64:
		return C.SHIM_INT64
	case uint64:
		return C.SHIM_UINT64
	case float32:
		return C.SHIM_FLOAT32
	case float64:
		return C.SHIM_FLOAT64
	}
	// Named types (~int64 etc.) map by size and kind.
	switch unsafe.Sizeof(z) {
	case 1:
		return C.SHIM_BYTE
	case 4:
		if isFloat[T]() {
			return C.SHIM_FLOAT32
		}
		return C.SHIM_INT32
	default:
		if isFloat[T]() {
			return C.SHIM_FLOAT64
		}
		return C.SHIM_INT64
	}
}

func isFloat[T Elem]() bool {
	var one T = 1
	return one/2 != 0 // truncates to zero for integers
}

// ptr returns a pointer to s's first element, or to a dummy for an empty
// slice (MPI accepts any pointer when the count is zero).
func ptr[T Elem](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return unsafe.Pointer(&zeroByte)
	}
	return unsafe.Pointer(unsafe.SliceData(s))
}

// zeroByte backs the pointer passed for empty buffers; it is never written.
var zeroByte [8]byte

// Op is a reduction operation.
type Op int

// Reductions supported by Allreduce.
const (
	Sum Op = iota
	Max
	Min
)

func (o Op) c() C.int {
	switch o {
	case Max:
		return C.SHIM_MAX
	case Min:
		return C.SHIM_MIN
	}
	return C.SHIM_SUM
}

func (o Op) String() string {
	switch o {
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return "sum"
}
