package collectives

// #include "shim.h"
import "C"

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"mpignn/internal/par"
)

// Transport selects how DistArray reads rows owned by other ranks.
type Transport int

const (
	// TransportAuto probes one-sided support at start-up and uses RMA where
	// every rank has it, Alltoallv otherwise.
	TransportAuto Transport = iota
	// TransportRMA reads with MPI_Get on MPI_Win_allocate windows; the owner
	// takes no part.
	TransportRMA
	// TransportAlltoallv sends the requested row ids to their owners and
	// receives the rows back, with two MPI_Alltoallv exchanges.
	TransportAlltoallv
)

// ParseTransport reads a --transport flag value.
func ParseTransport(s string) (Transport, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return TransportAuto, nil
	case "rma":
		return TransportRMA, nil
	case "alltoallv":
		return TransportAlltoallv, nil
	}
	return 0, fmt.Errorf("unknown transport %q (want auto, rma or alltoallv)", s)
}

func (t Transport) String() string {
	switch t {
	case TransportRMA:
		return "rma"
	case TransportAlltoallv:
		return "alltoallv"
	}
	return "auto"
}

// ResolveTransport turns auto into the transport every rank can use. An
// explicit rma is checked too, so that a job asking for one-sided reads on a
// network without them fails with a clear message instead of in the middle of
// training. It is collective.
func ResolveTransport(c *Comm, t Transport) (Transport, error) {
	if t == TransportAlltoallv {
		return t, nil
	}
	ok, why, err := ProbeRMA(c)
	if err != nil {
		return 0, err
	}
	if ok {
		return TransportRMA, nil
	}
	if t == TransportRMA {
		return 0, fmt.Errorf("transport rma requested but one-sided MPI does not work here: %s (use --transport alltoallv or auto)", why)
	}
	return TransportAlltoallv, nil
}

// ProbeRMA checks that one-sided reads work between all ranks: it creates a
// small distributed array with the layout the Comm's arrays will have, has
// every rank read a row of another rank (of another node on a shared
// Comm, whose world window MPI_Win_create makes), and agrees on the outcome
// with an Allreduce. It returns why RMA is unusable when it is not. It is
// collective.
func ProbeRMA(c *Comm) (ok bool, why string, err error) {
	peer := (c.rank + 1) % c.size
	if sh := c.shared; sh != nil {
		if sh.nodes == 1 {
			return true, "", nil // every row is in memory
		}
		peer = sh.first[sh.g1%(len(sh.first)-1)] // the next node's first rank
	}
	const n = 16
	local := int64(1)
	a, aerr := newDistArray(c, 1, n, TransportRMA, c.shared != nil)
	if aerr != nil {
		local, why = 0, aerr.Error()
	}
	agreed, err := AllreduceScalar(c, local, Min)
	if err != nil {
		return false, "", fmt.Errorf("rma probe: %w", err)
	}
	if agreed == 0 {
		if a != nil {
			a.Free()
		}
		if why == "" {
			why = "window creation failed on another rank"
		}
		return false, why, nil
	}
	for i := range a.Local() {
		a.Local()[i] = byte(c.rank*31 + i)
	}
	if err := a.Seal(); err != nil {
		return false, "", fmt.Errorf("rma probe: %w", err)
	}
	got := make([]byte, n)
	if gerr := a.Fetch([]int64{int64(peer)}, got); gerr != nil {
		local, why = 0, gerr.Error()
	} else {
		for i, b := range got {
			if b != byte(peer*31+i) {
				local, why = 0, fmt.Sprintf("rank %d read wrong bytes from rank %d", c.rank, peer)
				break
			}
		}
	}
	// Nobody may free the array while another rank still reads it.
	if err := c.Barrier(); err != nil {
		return false, "", fmt.Errorf("rma probe: %w", err)
	}
	if err := a.Free(); err != nil {
		return false, "", fmt.Errorf("rma probe: %w", err)
	}
	agreed, err = AllreduceScalar(c, local, Min)
	if err != nil {
		return false, "", fmt.Errorf("rma probe: %w", err)
	}
	if agreed == 0 && why == "" {
		why = "a one-sided read failed on another rank"
	}
	return agreed == 1, why, nil
}

// RowFetcher fetches rows of a distributed array by global row index. Fetch
// is collective: every rank calls it the same number of times, with its own
// (possibly empty) list of rows.
type RowFetcher interface {
	RowBytes() int
	Fetch(rows []int64, dst []byte) error
}

// FetchStats counts what Fetch moved on this rank.
type FetchStats struct {
	Calls      int64
	LocalRows  int64 // rows this rank owns, copied in memory
	RemoteRows int64 // rows read from other ranks
	Bytes      int64 // bytes read from other ranks
}

// DistArray is a two-dimensional byte array split by rows over the ranks:
// rank p owns the global rows [Offsets()[p], Offsets()[p+1]). Each rank
// fills its own rows, calls Seal, and can then read any row with Fetch.
type DistArray struct {
	c        *Comm
	t        Transport
	rowBytes int
	offsets  []int64
	win      *Window // TransportRMA
	local    []byte
	stats    FetchStats
	// On a shared Comm (ShareGroups): the group's rows, which hold local,
	// and the row offsets of the groups (len groups+1).
	seg  *sharedSegment
	gOff []int64

	// scratch reused across Fetch calls
	order  []int32
	counts []int64
}

// NewDistArray creates the array with localRows rows of rowBytes bytes on this
// rank. t must be TransportRMA or TransportAlltoallv (see ResolveTransport).
// It is collective.
func NewDistArray(c *Comm, localRows int64, rowBytes int, t Transport) (*DistArray, error) {
	return newDistArray(c, localRows, rowBytes, t, c.shared != nil)
}

// NewPrivateDistArray is NewDistArray with every rank's rows in memory of
// its own even on a shared Comm: the layout Accumulate needs, whose sums
// MPI makes atomic only within one window of one target.
func NewPrivateDistArray(c *Comm, localRows int64, rowBytes int, t Transport) (*DistArray, error) {
	return newDistArray(c, localRows, rowBytes, t, false)
}

func newDistArray(c *Comm, localRows int64, rowBytes int, t Transport, shared bool) (*DistArray, error) {
	if t != TransportRMA && t != TransportAlltoallv {
		return nil, fmt.Errorf("distarray: transport %v is not resolved", t)
	}
	// The row size travels with the row count: a rank whose rows have
	// another size (a different feature width) would otherwise read and
	// answer rows of the wrong length. Bad local sizes are reported after
	// the exchange, so no rank is left waiting in it.
	all, err := Allgather(c, []int64{localRows, int64(rowBytes)})
	if err != nil {
		return nil, fmt.Errorf("distarray: %w", err)
	}
	a := &DistArray{c: c, t: t, rowBytes: rowBytes, offsets: make([]int64, c.size+1), counts: make([]int64, c.size)}
	for p := range c.size {
		n, rb := all[2*p], all[2*p+1]
		switch {
		case rb <= 0:
			return nil, fmt.Errorf("distarray: rank %d has rows of %d bytes", p, rb)
		case rb != all[1]:
			return nil, fmt.Errorf("distarray: rank %d has rows of %d bytes but rank 0 has %d", p, rb, all[1])
		case n < 0 || n > math.MaxInt64/rb-a.offsets[p]:
			return nil, fmt.Errorf("distarray: rank %d has %d rows", p, n)
		}
		a.offsets[p+1] = a.offsets[p] + n
	}
	switch {
	case shared:
		first := c.shared.first
		a.gOff = make([]int64, len(first))
		for g, r := range first {
			a.gOff[g] = a.offsets[r]
		}
		my := c.shared.of[c.rank]
		rb := int64(rowBytes)
		sizes := make([]int64, len(first)-1)
		for g := range sizes {
			sizes[g] = (a.gOff[g+1] - a.gOff[g]) * rb
		}
		if a.seg, err = newSharedSegment(c, sizes, t == TransportRMA); err != nil {
			return nil, fmt.Errorf("distarray: %w", err)
		}
		lo, hi := a.offsets[c.rank]-a.gOff[my], a.offsets[c.rank+1]-a.gOff[my]
		a.local = a.seg.bytes[lo*rb : hi*rb : hi*rb]
	case t == TransportRMA:
		if a.win, err = NewWindow(c, localRows*int64(rowBytes)); err != nil {
			return nil, fmt.Errorf("distarray: %w", err)
		}
		a.local = a.win.Bytes()
	default:
		a.local = make([]byte, localRows*int64(rowBytes))
	}
	return a, nil
}

// Local returns this rank's rows, to be filled before Seal.
func (a *DistArray) Local() []byte { return a.local }

// Seal makes the filled rows visible to every rank. It is collective.
func (a *DistArray) Seal() error {
	if a.seg != nil {
		return a.seg.expose()
	}
	if a.win != nil {
		return a.win.Expose()
	}
	return a.c.Barrier()
}

// RowBytes returns the size of one row.
func (a *DistArray) RowBytes() int { return a.rowBytes }

// Transport returns the transport in use.
func (a *DistArray) Transport() Transport { return a.t }

// Offsets returns the partition of global rows over ranks (len Size()+1).
func (a *DistArray) Offsets() []int64 { return a.offsets }

// Stats returns the counters of this rank's fetches so far.
func (a *DistArray) Stats() FetchStats { return a.stats }

// Owner returns the rank that owns global row r.
func (a *DistArray) Owner(r int64) int {
	return sort.Search(len(a.offsets)-1, func(p int) bool { return a.offsets[p+1] > r })
}

// Free releases the array. It is collective.
func (a *DistArray) Free() error {
	a.local = nil
	if a.seg != nil {
		seg := a.seg
		a.seg = nil
		return seg.free()
	}
	if a.win != nil {
		return a.win.Free()
	}
	return nil
}

// MemoryRows returns the global rows this rank reads from memory, with no
// MPI call: its own, or its node's on a shared Comm.
func (a *DistArray) MemoryRows() (lo, hi int64) {
	if a.seg != nil {
		sh := a.c.shared
		return a.gOff[sh.g0], a.gOff[sh.g1]
	}
	return a.offsets[a.c.rank], a.offsets[a.c.rank+1]
}

// MemoryRow returns global row r as this rank maps it when r is one of
// MemoryRows (its own, or its node's on a shared Comm), and nil otherwise:
// a view, with no copy, valid until Free. Rows of other ranks hold what
// their owners wrote before the last Seal.
func (a *DistArray) MemoryRow(r int64) []byte {
	rb := int64(a.rowBytes)
	if a.seg == nil {
		lo, hi := a.offsets[a.c.rank], a.offsets[a.c.rank+1]
		if r < lo || r >= hi {
			return nil
		}
		return a.local[(r-lo)*rb:][:rb:rb]
	}
	sh := a.c.shared
	if r < a.gOff[sh.g0] || r >= a.gOff[sh.g1] {
		return nil
	}
	h := a.groupOf(r)
	return a.seg.groups[h-sh.g0][(r-a.gOff[h])*rb:][:rb:rb]
}

// GroupRows returns the rows of this rank's group as this rank maps them
// and the global row of the first: on a shared Comm its group's segment
// (which holds Local), otherwise Local itself. Rows of other ranks of the
// group are theirs to write; read them after Seal.
func (a *DistArray) GroupRows() (first int64, rows []byte) {
	if a.seg != nil {
		return a.gOff[a.c.shared.of[a.c.rank]], a.seg.bytes
	}
	return a.offsets[a.c.rank], a.local
}

// groupOf returns the group holding global row r of a shared array.
func (a *DistArray) groupOf(r int64) int {
	return sort.Search(len(a.gOff)-1, func(g int) bool { return a.gOff[g+1] > r })
}

// base returns the global row at displacement 0 of what rank p serves:
// its first row, or its group's on a shared Comm.
func (a *DistArray) base(p int) int64 {
	if a.seg != nil {
		return a.gOff[a.c.shared.of[p]]
	}
	return a.offsets[p]
}

// served returns the rows this rank answers requests from: its own, or its
// group's on a shared Comm.
func (a *DistArray) served() []byte {
	if a.seg != nil {
		return a.seg.bytes
	}
	return a.local
}

// target returns the rank that serves global row r to this rank: its owner,
// or on a shared Comm this rank for a row of its node and otherwise one
// rank of the row's group (spread over the group's ranks by this rank's
// place in its own group, so that a group's reads do not all go to one
// rank).
func (a *DistArray) target(r int64) int {
	if a.seg == nil {
		return a.Owner(r)
	}
	sh := a.c.shared
	h := a.groupOf(r)
	if h >= sh.g0 && h < sh.g1 {
		return a.c.rank
	}
	my := sh.of[a.c.rank]
	size := sh.first[h+1] - sh.first[h]
	return sh.first[h] + (a.c.rank-sh.first[my])%size
}

// Fetch copies the given global rows into dst, row i at dst[i*RowBytes():],
// whichever rank owns them. Rows may repeat and may be this rank's own. It is
// collective (see RowFetcher).
func (a *DistArray) Fetch(rows []int64, dst []byte) error {
	rb := int64(a.rowBytes)
	if int64(len(dst)) < int64(len(rows))*rb {
		return fmt.Errorf("fetch: dst holds %d bytes, %d rows need %d", len(dst), len(rows), int64(len(rows))*rb)
	}
	total := a.offsets[len(a.offsets)-1]
	// Group the requests by owner with a counting sort: order lists request
	// indices owner by owner, in request order within an owner.
	clear(a.counts)
	owners := make([]int32, len(rows))
	for i, r := range rows {
		if r < 0 || r >= total {
			return fmt.Errorf("fetch: row %d outside [0,%d) on rank %d", r, total, a.c.rank)
		}
		p := a.target(r)
		owners[i] = int32(p)
		a.counts[p]++
	}
	starts := prefix(a.counts)
	next := append([]int64(nil), starts...)
	a.order = grow(a.order, len(rows))
	for i, p := range owners {
		a.order[next[p]] = int32(i)
		next[p]++
	}
	me := a.c.rank
	// Own rows (a shared Comm's node's rows) are copied directly, in
	// parallel (each request has its own slot of dst).
	own := a.order[starts[me] : starts[me]+a.counts[me]]
	if a.seg == nil {
		lo := a.offsets[me]
		par.Range(len(own), len(own)*a.rowBytes/4, func(k0, k1 int) {
			for _, i := range own[k0:k1] {
				src := (rows[i] - lo) * rb
				copy(dst[int64(i)*rb:int64(i+1)*rb], a.local[src:src+rb])
			}
		})
	} else {
		g0 := a.c.shared.g0
		par.Range(len(own), len(own)*a.rowBytes/4, func(k0, k1 int) {
			for _, i := range own[k0:k1] {
				h := a.groupOf(rows[i])
				src := (rows[i] - a.gOff[h]) * rb
				copy(dst[int64(i)*rb:int64(i+1)*rb], a.seg.groups[h-g0][src:src+rb])
			}
		})
	}
	remote := int64(len(rows)) - a.counts[me]
	a.stats.Calls++
	a.stats.LocalRows += a.counts[me]
	a.stats.RemoteRows += remote
	a.stats.Bytes += remote * rb
	if a.t == TransportRMA {
		return a.fetchRMA(rows, dst, starts)
	}
	return a.fetchAlltoallv(rows, dst, starts)
}

func (a *DistArray) fetchRMA(rows []int64, dst []byte, starts []int64) error {
	if rmaWaitsForTarget {
		// A stalled target would block this rank inside MPI: wait at a
		// gate first, where a stall times out and is named (Fetch is
		// collective, so every rank passes the same gates).
		if err := a.c.enter("MPI_Get(rows)", true); err != nil {
			return fmt.Errorf("fetch on rank %d: %w", a.c.rank, err)
		}
		a.c.leave()
	}
	rb := int64(a.rowBytes)
	// Cut the grouped requests into calls of at most maxCount rows so that
	// no per-target count overflows an MPI int.
	var ranks, counts []C.int
	var tdisp, odisp []C.MPI_Aint
	for p := 0; p < a.c.size; p++ {
		if p == a.c.rank || a.counts[p] == 0 {
			continue
		}
		lo := a.base(p)
		reqs := a.order[starts[p] : starts[p]+a.counts[p]]
		for len(reqs) > 0 {
			k := min(int64(len(reqs)), a.c.maxCount)
			ranks = append(ranks, C.int(p))
			counts = append(counts, C.int(k))
			for _, i := range reqs[:k] {
				tdisp = append(tdisp, C.MPI_Aint((rows[i]-lo)*rb))
				odisp = append(odisp, C.MPI_Aint(int64(i)*rb))
			}
			reqs = reqs[k:]
			if int64(len(tdisp)) >= a.c.maxCount {
				if err := a.getRows(ranks, counts, tdisp, odisp, dst); err != nil {
					return fmt.Errorf("fetch on rank %d: %w", a.c.rank, err)
				}
				ranks, counts, tdisp, odisp = ranks[:0], counts[:0], tdisp[:0], odisp[:0]
			}
		}
	}
	if err := a.getRows(ranks, counts, tdisp, odisp, dst); err != nil {
		return fmt.Errorf("fetch on rank %d: %w", a.c.rank, err)
	}
	return nil
}

func (a *DistArray) getRows(ranks []C.int, counts []C.int, tdisp, odisp []C.MPI_Aint, dst []byte) error {
	if a.seg != nil {
		return a.seg.getRows(ranks, counts, tdisp, odisp, a.rowBytes, dst)
	}
	return a.win.getRows(ranks, counts, tdisp, odisp, a.rowBytes, dst)
}

func (a *DistArray) fetchAlltoallv(rows []int64, dst []byte, starts []int64) error {
	rb := int64(a.rowBytes)
	size, me := a.c.size, a.c.rank
	// Requests: local row indices at their owners, grouped by owner. Own
	// rows were served already, so this rank sends itself nothing.
	sendCounts := append([]int64(nil), a.counts...)
	sendCounts[me] = 0
	req := make([]int64, 0, int64(len(rows))-a.counts[me])
	for p := 0; p < size; p++ {
		if p == me {
			continue
		}
		for _, i := range a.order[starts[p] : starts[p]+a.counts[p]] {
			req = append(req, rows[i]-a.base(p))
		}
	}
	got, gotCounts, err := Alltoallv(a.c, req, sendCounts)
	if err != nil {
		return fmt.Errorf("fetch requests on rank %d: %w", me, err)
	}
	// Serve: copy the requested rows of this rank, in the order asked. A
	// request outside this rank's rows is answered with zeros and reported
	// after the response exchange, which every rank must still make.
	resp := make([]byte, int64(len(got))*rb)
	mem := a.served()
	nLocal := int64(len(mem)) / rb
	par.Range(len(got), len(got)*a.rowBytes/4, func(j0, j1 int) {
		for j := j0; j < j1; j++ {
			if r := got[j]; r >= 0 && r < nLocal {
				copy(resp[int64(j)*rb:], mem[r*rb:(r+1)*rb])
			}
		}
	})
	var badReq error
	for j, r := range got {
		if r < 0 || r >= nLocal {
			badReq = fmt.Errorf("fetch on rank %d: rank %d asked for local row %d of %d", me, requester(gotCounts, int64(j)), r, nLocal)
			break
		}
	}
	respCounts := scale(gotCounts, rb)
	backCounts := scale(sendCounts, rb)
	back := make([]byte, sum(backCounts))
	if err := alltoallvInto(a.c, resp, respCounts, back, backCounts); err != nil {
		return fmt.Errorf("fetch responses on rank %d: %w", me, err)
	}
	if badReq != nil {
		return badReq
	}
	// Scatter the answers to the requests' positions, in parallel: answer
	// k is the k-th request of a.order once this rank's own are skipped.
	ownLo, ownN := starts[me], a.counts[me]
	nBack := len(a.order) - int(ownN)
	par.Range(nBack, nBack*a.rowBytes/4, func(k0, k1 int) {
		for k := int64(k0); k < int64(k1); k++ {
			o := k
			if o >= ownLo {
				o += ownN
			}
			i := int64(a.order[o])
			copy(dst[i*rb:(i+1)*rb], back[k*rb:(k+1)*rb])
		}
	})
	return nil
}

// requester returns the rank whose segment of a concatenated receive buffer
// holds element j.
func requester(counts []int64, j int64) int {
	for p, n := range counts {
		if j < n {
			return p
		}
		j -= n
	}
	return len(counts) - 1
}

func scale(xs []int64, f int64) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
