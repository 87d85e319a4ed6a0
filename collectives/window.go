package collectives

// #include "shim.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Window is memory allocated by MPI_Win_allocate on every rank and readable
// by every other rank with one-sided gets. MPI allocates it (not Go) because
// windows over Go-allocated memory were 20-50x slower to read here: MPI can
// place its own allocation in shared memory on one node.
type Window struct {
	c    *Comm
	win  C.MPI_Win
	base []byte
	live bool
}

// winAlign is the granularity of every rank's window size (see NewWindow).
const winAlign = 64

// NewWindow allocates a window of localBytes bytes on this rank (0 is
// allowed). It is collective.
func NewWindow(c *Comm, localBytes int64) (*Window, error) {
	if localBytes < 0 {
		return nil, fmt.Errorf("window: negative size %d", localBytes)
	}
	w := &Window{c: c}
	var base unsafe.Pointer
	// MPICH 4.0.2 places the ranks' segments of a shared-memory window at
	// aligned addresses but computes remote addresses from the unaligned
	// sum of the sizes, so a get from rank r>0 is shifted whenever an
	// earlier rank's size is not a multiple of the alignment. Padding every
	// size to a multiple of 64 bytes makes both agree (and keeps rows
	// cache-line aligned on every implementation).
	padded := (localBytes + winAlign - 1) / winAlign * winAlign
	if err := c.call("MPI_Win_allocate", true, func() C.int { return C.shim_win_allocate(C.int64_t(padded), &base, &w.win) }); err != nil {
		return nil, err
	}
	w.live = true
	if localBytes > 0 {
		w.base = unsafe.Slice((*byte)(base), localBytes)
	}
	return w, nil
}

// Bytes returns this rank's part of the window. Fill it, then call Expose
// before other ranks read it.
func (w *Window) Bytes() []byte { return w.base }

// Expose publishes the local stores into Bytes and waits until every rank
// has done so; after it returns, any rank may read any rank's part. It is
// collective.
func (w *Window) Expose() error {
	if err := w.c.call("MPI_Win_sync", false, func() C.int { return C.shim_win_sync(w.win) }); err != nil {
		return err
	}
	return w.c.Barrier()
}

// Free releases the window; the slice from Bytes must not be used after. It
// is collective.
func (w *Window) Free() error {
	if !w.live {
		return nil
	}
	w.live = false
	w.base = nil
	return w.c.call("MPI_Win_free", true, func() C.int { return C.shim_win_free(&w.win) })
}

// getRows reads fixed-size rows from other ranks in one passive-target
// epoch. For each i, ranks[i] is a target and counts[i] rows are read from it;
// tdisp holds the rows' byte offsets in the targets' windows (grouped by
// target in the order of ranks) and odisp the byte offsets in dst where they
// land. It is not collective. No count may exceed an MPI int; DistArray
// splits larger batches.
func (w *Window) getRows(ranks []C.int, counts []C.int, tdisp, odisp []C.MPI_Aint, rowBytes int, dst []byte) error {
	if len(ranks) == 0 {
		return nil
	}
	return w.c.call("MPI_Get(rows)", false, func() C.int {
		return C.shim_get_rows(w.win, C.int(len(ranks)), &ranks[0], &counts[0], &tdisp[0], &odisp[0], C.int(rowBytes), ptr(dst))
	})
}

// accRows adds fixed-size float32 rows of src into rows of other ranks'
// windows in one passive-target epoch; the arguments are those of getRows,
// with odisp the byte offsets of the rows in src. It is not collective.
func (w *Window) accRows(ranks []C.int, counts []C.int, tdisp, odisp []C.MPI_Aint, rowBytes int, src []byte) error {
	if len(ranks) == 0 {
		return nil
	}
	return w.c.call("MPI_Accumulate(rows)", false, func() C.int {
		return C.shim_acc_rows(w.win, C.int(len(ranks)), &ranks[0], &counts[0], &tdisp[0], &odisp[0], C.int(rowBytes), ptr(src))
	})
}

// Settle waits until every rank has returned from its accumulates into the
// window and makes their sums visible to this rank's loads from Bytes. It
// is collective.
func (w *Window) Settle() error {
	return w.c.call("MPI_Barrier+MPI_Win_sync", true, func() C.int { return C.shim_win_settle(w.win) })
}
