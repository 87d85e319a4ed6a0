package collectives

// #include "shim.h"
import "C"

import (
	"fmt"
	"slices"
	"unsafe"
)

// Writing rows into their owners' memory: the two ways a rank sends sparse
// updates (embedding gradients) to the rows' owners.
//
// Accumulate is one-sided: the owners take no part until Settle, and MPI
// adds the rows into their memory. It needs TransportRMA. The order in which
// MPI adds the contributions of different origins to one row is unspecified
// (it follows arrival), so float sums can differ in the last bits from run to
// run.
//
// PushRows is two-sided (Alltoallv) and works with either transport: every
// owner receives the (row, value) pairs sent to it in source-rank order, and
// can sum them in an order that does not depend on timing.

// Accumulate adds the float32 rows of src element-wise into the global rows
// rows of the array, whichever rank owns them (this rank's included): row i
// of src (RowBytes bytes at src[i*RowBytes:]) is added to global row
// rows[i]. Rows may repeat: repeated rows are first summed here, in the
// order they appear, so that one row receives one contribution per origin
// (MPI does not allow a target datatype to name one location twice in an
// accumulate). All operations are issued in one passive-target epoch per
// batch of at most an MPI int of rows and are complete at their targets when
// Accumulate returns.
//
// It is not collective, but the owners may read the sums only after every
// rank has called Settle; before new accumulates, an owner that reset its
// rows (by writing Local) must publish them with Seal. Only for
// TransportRMA, and only for arrays whose rows are float32s.
func (a *DistArray) Accumulate(rows []int64, src []byte) error {
	if a.win == nil {
		return fmt.Errorf("accumulate on rank %d: transport %v has no window (one-sided accumulate needs rma)", a.c.rank, a.t)
	}
	rb := int64(a.rowBytes)
	if rb%4 != 0 {
		return fmt.Errorf("accumulate on rank %d: rows of %d bytes are not float32 rows", a.c.rank, rb)
	}
	if int64(len(src)) < int64(len(rows))*rb {
		return fmt.Errorf("accumulate on rank %d: src holds %d bytes, %d rows need %d", a.c.rank, len(src), len(rows), int64(len(rows))*rb)
	}
	total := a.offsets[len(a.offsets)-1]
	for i, r := range rows {
		if r < 0 || r >= total {
			return fmt.Errorf("accumulate on rank %d: row %d (entry %d) outside [0,%d)", a.c.rank, r, i, total)
		}
	}
	uniq, sums := sumDuplicates(rows, src, a.rowBytes)
	// uniq is ascending, so it is grouped by owner already; cut it into
	// calls of at most maxCount rows so that no count overflows an MPI int.
	var ranks, counts []C.int
	var tdisp, odisp []C.MPI_Aint
	flush := func() error {
		err := a.win.accRows(ranks, counts, tdisp, odisp, a.rowBytes, sums)
		ranks, counts, tdisp, odisp = ranks[:0], counts[:0], tdisp[:0], odisp[:0]
		if err != nil {
			return fmt.Errorf("accumulate on rank %d: %w", a.c.rank, err)
		}
		return nil
	}
	for i := 0; i < len(uniq); {
		p := a.Owner(uniq[i])
		lo, hi := a.offsets[p], a.offsets[p+1]
		j := i
		for j < len(uniq) && uniq[j] < hi && int64(j-i) < a.c.maxCount && int64(len(tdisp)) < a.c.maxCount {
			tdisp = append(tdisp, C.MPI_Aint((uniq[j]-lo)*rb))
			odisp = append(odisp, C.MPI_Aint(int64(j)*rb))
			j++
		}
		ranks = append(ranks, C.int(p))
		counts = append(counts, C.int(j-i))
		i = j
		if int64(len(tdisp)) >= a.c.maxCount {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// Settle makes the rows that every rank added with Accumulate visible in
// Local. It is collective.
func (a *DistArray) Settle() error {
	if a.win == nil {
		return fmt.Errorf("settle on rank %d: transport %v has no window", a.c.rank, a.t)
	}
	return a.win.Settle()
}

// sumDuplicates returns the distinct rows ascending and, for each, the sum
// of its float32 rows in src, added in the order the rows appear. When rows
// are already distinct and ascending, src itself is returned.
func sumDuplicates(rows []int64, src []byte, rowBytes int) ([]int64, []byte) {
	if slices.IsSorted(rows) && !hasAdjacentDup(rows) {
		return rows, src[:len(rows)*rowBytes]
	}
	w := rowBytes / 4
	vals := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(src))), len(rows)*w)
	uniq, out := SumRows(rows, vals, w, w)
	if len(out) == 0 {
		return uniq, nil
	}
	return uniq, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)*4)
}

// SumRows returns the distinct rows ascending and, for each, the sum of
// its rows of dim values in vals (row i of rows is vals[i*dim:(i+1)*dim]),
// added in the order the rows appear, so the float32 result is the same
// whatever the order of distinct rows. Output rows are w values wide, w
// being dim or dim+1; with dim+1 the last column is 1 (the marker of a
// touched row that accumulating pushes count).
func SumRows(rows []int64, vals []float32, dim, w int) ([]int64, []float32) {
	order := make([]int32, len(rows))
	for i := range order {
		order[i] = int32(i)
	}
	// A stable sort keeps equal rows in input order, which fixes the order
	// of the additions.
	slices.SortStableFunc(order, func(x, y int32) int {
		switch {
		case rows[x] < rows[y]:
			return -1
		case rows[x] > rows[y]:
			return 1
		}
		return 0
	})
	var uniq []int64
	out := make([]float32, 0, len(rows)*w)
	for _, i := range order {
		row := vals[int(i)*dim : (int(i)+1)*dim]
		if n := len(uniq); n > 0 && uniq[n-1] == rows[i] {
			acc := out[(n-1)*w : (n-1)*w+dim]
			for k, x := range row {
				acc[k] += x
			}
			continue
		}
		uniq = append(uniq, rows[i])
		out = append(out, row...)
		if w > dim {
			out = append(out, 1)
		}
	}
	return uniq, out
}

func hasAdjacentDup(xs []int64) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] == xs[i-1] {
			return true
		}
	}
	return false
}

// PushRows sends row i of src (RowBytes bytes) with its global row id
// rows[i] to the row's owner, and returns what this rank received: the
// global row ids (all owned here) and their values, grouped by source rank
// ascending, each source's pairs in the order that source listed them. Rows
// may repeat and may be this rank's own (they travel through the same
// exchange, so the source order holds for them too). It is collective: every
// rank calls it, with its own (possibly empty) rows, over either transport.
func (a *DistArray) PushRows(rows []int64, src []byte) (recvRows []int64, recvVals []byte, err error) {
	rb := int64(a.rowBytes)
	me := a.c.rank
	total := a.offsets[len(a.offsets)-1]
	var bad error
	if int64(len(src)) < int64(len(rows))*rb {
		bad = fmt.Errorf("push on rank %d: src holds %d bytes, %d rows need %d", me, len(src), len(rows), int64(len(rows))*rb)
	}
	for i, r := range rows {
		if bad == nil && (r < 0 || r >= total) {
			bad = fmt.Errorf("push on rank %d: row %d (entry %d) outside [0,%d)", me, r, i, total)
		}
	}
	if bad != nil {
		// Take part in the exchanges with nothing to send, so that the
		// other ranks do not wait for this one.
		rows, src = nil, nil
	}
	// Group by owner with a stable counting sort.
	counts := make([]int64, a.c.size)
	owners := make([]int32, len(rows))
	for i, r := range rows {
		p := a.Owner(r)
		owners[i] = int32(p)
		counts[p]++
	}
	next := prefix(counts)
	sendRows := make([]int64, len(rows))
	sendVals := make([]byte, int64(len(rows))*rb)
	for i, p := range owners {
		k := next[p]
		next[p]++
		sendRows[k] = rows[i]
		copy(sendVals[k*rb:(k+1)*rb], src[int64(i)*rb:int64(i+1)*rb])
	}
	recvRows, recvCounts, err := Alltoallv(a.c, sendRows, counts)
	if err != nil {
		return nil, nil, fmt.Errorf("push rows on rank %d: %w", me, err)
	}
	recvVals = make([]byte, int64(len(recvRows))*rb)
	if err := alltoallvInto(a.c, sendVals, scale(counts, rb), recvVals, scale(recvCounts, rb)); err != nil {
		return nil, nil, fmt.Errorf("push values on rank %d: %w", me, err)
	}
	if bad != nil {
		return nil, nil, bad
	}
	lo, hi := a.offsets[me], a.offsets[me+1]
	for j, r := range recvRows {
		if r < lo || r >= hi {
			return nil, nil, fmt.Errorf("push on rank %d: rank %d sent row %d, not owned here", me, requester(recvCounts, int64(j)), r)
		}
	}
	return recvRows, recvVals, nil
}
