package collectives

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// Barrier blocks until every rank has entered it.
func (c *Comm) Barrier() error {
	return c.call("MPI_Barrier", true, func() C.int { return C.shim_barrier() })
}

// Allreduce combines buf element-wise across ranks with op, in place. Every
// rank must pass the same length. Buffers longer than an MPI count are
// reduced in pieces.
func Allreduce[T Number](c *Comm, buf []T, op Op) error {
	n := int64(len(buf))
	for off := int64(0); off < n; off += c.maxCount {
		k := min(c.maxCount, n-off)
		// Pieces after the first follow it at once: chained (watch.go).
		err := c.call("MPI_Allreduce("+op.String()+")", off == 0, func() C.int {
			return C.shim_allreduce(ptr(buf[off:]), C.int(k), dtype[T](), op.c())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// AllreduceScalar combines one value across ranks.
func AllreduceScalar[T Number](c *Comm, v T, op Op) (T, error) {
	b := []T{v}
	err := Allreduce(c, b, op)
	return b[0], err
}

// Bcast copies root's buf into every rank's buf. Every rank must pass the
// same length.
func Bcast[T Elem](c *Comm, buf []T, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("bcast: root %d outside [0,%d)", root, c.size)
	}
	n := int64(len(buf))
	for off := int64(0); off < n; off += c.maxCount {
		k := min(c.maxCount, n-off)
		err := c.call("MPI_Bcast", off == 0, func() C.int { return C.shim_bcast(ptr(buf[off:]), C.int(k), dtype[T](), C.int(root)) })
		if err != nil {
			return err
		}
	}
	return nil
}

// Allgather returns every rank's send, concatenated in rank order. Every rank
// must send the same number of elements.
func Allgather[T Elem](c *Comm, send []T) ([]T, error) {
	n := int64(len(send))
	recv := make([]T, n*int64(c.size))
	if n*int64(c.size) > c.maxCount {
		return allgatherLarge(c, send, recv, repeat(n, c.size), gated)
	}
	err := c.call("MPI_Allgather", true, func() C.int { return C.shim_allgather(ptr(send), C.int(n), ptr(recv), dtype[T]()) })
	return recv, err
}

// Allgatherv returns every rank's send concatenated in rank order, and the
// number of elements each rank sent. Contributions may differ in length,
// including empty ones.
func Allgatherv[T Elem](c *Comm, send []T) ([]T, []int64, error) {
	counts, err := Allgather(c, []int64{int64(len(send))})
	if err != nil {
		return nil, nil, fmt.Errorf("allgatherv counts: %w", err)
	}
	total, err := checkCounts[T](counts, "allgatherv")
	if err != nil {
		return nil, nil, err
	}
	recv := make([]T, total)
	// The data follows the counts at once: chained (watch.go).
	if total > c.maxCount {
		recv, err = allgatherLarge(c, send, recv, counts, chained)
		return recv, counts, err
	}
	cc, cd := toCInts(counts)
	err = c.call("MPI_Allgatherv", chained, func() C.int {
		return C.shim_allgatherv(ptr(send), C.int(len(send)), ptr(recv), &cc[0], &cd[0], dtype[T]())
	})
	return recv, counts, err
}

// allgatherLarge sends this rank's contribution to every rank through the
// piecewise all-to-all, for totals that exceed an MPI count. gate is
// gated or chained (see watch.go).
func allgatherLarge[T Elem](c *Comm, send, recv []T, counts []int64, gate bool) ([]T, error) {
	scounts := repeat(int64(len(send)), c.size)
	sdispls := make([]int64, c.size) // every peer reads the same buffer
	rdispls := prefix(counts)
	if err := alltoallvP2P(c, send, scounts, sdispls, recv, counts, rdispls, gate); err != nil {
		return nil, fmt.Errorf("allgatherv: %w", err)
	}
	return recv, nil
}

// Alltoall sends send[p*k:(p+1)*k] to rank p, where k = len(send)/size, and
// returns what every rank sent here, in rank order.
func Alltoall[T Elem](c *Comm, send []T) ([]T, error) {
	if len(send)%c.size != 0 {
		return nil, fmt.Errorf("alltoall: %d elements do not split evenly over %d ranks", len(send), c.size)
	}
	k := len(send) / c.size
	recv := make([]T, len(send))
	if int64(k) > c.maxCount {
		rc := repeat(int64(k), c.size)
		if err := alltoallvP2P(c, send, rc, prefix(rc), recv, rc, prefix(rc), gated); err != nil {
			return nil, fmt.Errorf("alltoall: %w", err)
		}
		return recv, nil
	}
	err := c.call("MPI_Alltoall", gated, func() C.int { return C.shim_alltoall(ptr(send), C.int(k), ptr(recv), dtype[T]()) })
	return recv, err
}

// Alltoallv sends the consecutive segments of send to the ranks in order:
// sendCounts[p] elements to rank p. It returns the elements received,
// concatenated in rank order, and how many came from each rank.
func Alltoallv[T Elem](c *Comm, send []T, sendCounts []int64) ([]T, []int64, error) {
	if len(sendCounts) != c.size {
		return nil, nil, fmt.Errorf("alltoallv: %d send counts for %d ranks", len(sendCounts), c.size)
	}
	if s := sum(sendCounts); s != int64(len(send)) {
		return nil, nil, fmt.Errorf("alltoallv: send counts add to %d but the buffer has %d elements", s, len(send))
	}
	recvCounts, err := Alltoall(c, sendCounts)
	if err != nil {
		return nil, nil, fmt.Errorf("alltoallv counts: %w", err)
	}
	total, err := checkCounts[T](recvCounts, "alltoallv")
	if err != nil {
		// Still take part in the data exchange, receiving nothing, so
		// that the ranks that did not see a bad count do not wait.
		alltoallvInto(c, send, sendCounts, nil, make([]int64, c.size))
		return nil, nil, err
	}
	recv := make([]T, total)
	err = alltoallvInto(c, send, sendCounts, recv, recvCounts)
	return recv, recvCounts, err
}

// AlltoallvSegments is Alltoallv with the segments apart: send[p] goes to
// rank p, and the result's [q] is what rank q sent this rank.
func AlltoallvSegments[T Elem](c *Comm, send [][]T) ([][]T, error) {
	if len(send) != c.size {
		return nil, fmt.Errorf("alltoallv: %d segments for %d ranks", len(send), c.size)
	}
	counts := make([]int64, len(send))
	var flat []T
	for p, s := range send {
		counts[p] = int64(len(s))
		flat = append(flat, s...)
	}
	recv, rc, err := Alltoallv(c, flat, counts)
	if err != nil {
		return nil, err
	}
	out := make([][]T, len(rc))
	pos := int64(0)
	for q, n := range rc {
		out[q] = recv[pos : pos+n : pos+n]
		pos += n
	}
	return out, nil
}

// alltoallvInto is Alltoallv with both sides' counts already known and the
// receive buffer supplied; consecutive segments on both sides. Every caller
// calls it right after an exchange of counts (Alltoallv's own, or a
// request's), so it is chained (see watch.go).
func alltoallvInto[T Elem](c *Comm, send []T, sendCounts []int64, recv []T, recvCounts []int64) error {
	sd, rd := prefix(sendCounts), prefix(recvCounts)
	if int64(len(send)) > c.maxCount || int64(len(recv)) > c.maxCount {
		if err := alltoallvP2P(c, send, sendCounts, sd, recv, recvCounts, rd, chained); err != nil {
			return fmt.Errorf("alltoallv: %w", err)
		}
		return nil
	}
	sc, sdc := toCInts(sendCounts)
	rc, rdc := toCInts(recvCounts)
	return c.call("MPI_Alltoallv", chained, func() C.int {
		return C.shim_alltoallv(ptr(send), &sc[0], &sdc[0], ptr(recv), &rc[0], &rdc[0], dtype[T]())
	})
}

// alltoallvP2P moves the data with nonblocking point-to-point messages of at
// most maxCount elements each, so no count is truncated. gate is gated or
// chained (see watch.go).
func alltoallvP2P[T Elem](c *Comm, send []T, scounts, sdispls []int64, recv []T, rcounts, rdispls []int64, gate bool) error {
	return c.call("MPI_Isend/Irecv exchange", gate, func() C.int {
		return C.shim_alltoallv_p2p(ptr(send), (*C.int64_t)(unsafe.Pointer(&scounts[0])), (*C.int64_t)(unsafe.Pointer(&sdispls[0])),
			ptr(recv), (*C.int64_t)(unsafe.Pointer(&rcounts[0])), (*C.int64_t)(unsafe.Pointer(&rdispls[0])),
			dtype[T](), C.int64_t(c.maxCount), C.int(c.rank), C.int(c.size))
	})
}

// checkCounts validates element counts announced by peers before they size
// a receive buffer: each must be non-negative and their total must fit in
// memory addresses. It returns the total.
func checkCounts[T Elem](counts []int64, call string) (int64, error) {
	var z T
	limit := int64(math.MaxInt64) / int64(unsafe.Sizeof(z))
	var total int64
	for p, n := range counts {
		if n < 0 || n > limit-total {
			return 0, fmt.Errorf("%s: rank %d announced %d elements, which cannot be received (%d already)", call, p, n, total)
		}
		total += n
	}
	return total, nil
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// prefix returns the exclusive prefix sums of xs (the displacements).
func prefix(xs []int64) []int64 {
	out := make([]int64, len(xs))
	var s int64
	for i, x := range xs {
		out[i] = s
		s += x
	}
	return out
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// toCInts converts counts to C ints with their displacements; callers have
// checked that the total fits.
func toCInts(counts []int64) (cnt, displ []C.int) {
	cnt = make([]C.int, len(counts))
	displ = make([]C.int, len(counts))
	var s int64
	for i, x := range counts {
		cnt[i] = C.int(x)
		displ[i] = C.int(s)
		s += x
	}
	return cnt, displ
}
