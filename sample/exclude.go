package sample

import (
	"mpignn/internal/hashkey"
	"mpignn/internal/par"
)

// Excluding edges from message passing (link prediction).
//
// When a link predictor trains on edge (u,v), that edge (and its reverse,
// for an undirected graph) must not carry messages in the step's blocks, or
// the model learns to look the answer up instead of predicting it. DGL calls
// this exclude='reverse_id'. It is done the way DGL does it: neighbors are
// chosen exactly as without exclusion, and the chosen edges that are in the
// exclusion set are then dropped from the sampled frontier (DGL,
// src/graph/sampling/neighbor/neighbor.cc: SampleNeighbors samples the rows,
// then ExcludeCertainEdges removes the excluded edge ids from them). So the
// positions, and with them the random keys, are untouched, and the filter is
// a pure function of (destination orig id, source orig id, set): every
// sampler on any number of ranks and any transport drops the same edges.
//
// Cost: most sampled edges are not excluded, and most rows have no excluded
// edge at all. A small bitmap over the hashed endpoints of the set lets a row
// whose destination is no endpoint skip every per-edge test, and inside the
// other rows an edge whose source is no endpoint skips the pair table.

// EdgeSet is a set of unordered node pairs in ORIGINAL ids: Has(u,v) and
// Has(v,u) are the same question. It is built once per step from the seed
// edges of the global batch (identical on every rank) and only read
// afterwards, so it may be shared by goroutines. A nil *EdgeSet is the empty
// set and excludes nothing.
type EdgeSet struct {
	// Open-addressing table (linear probing, power-of-two size, load <= 1/2)
	// of canonical pairs (lo <= hi).
	slots []pairSlot
	shift uint // 64 - log2(len(slots))
	n     int  // distinct pairs

	// Endpoint filter: bit h(x) is set for every endpoint x of a pair. A
	// clear bit proves x is in no pair; a set bit may be a false positive,
	// which only costs the table lookup. About 16 bits per endpoint keep
	// false positives near 1/16 (the bitmap for a batch of 1024 edges is
	// 4 KiB, which stays in L1).
	bits     []uint64
	bitShift uint // 64 - log2(number of bits)
}

type pairSlot struct {
	lo, hi int64
	full   bool
}

// NewEdgeSet returns the set of the unordered pairs {srcOrig[i], dstOrig[i]}.
// Any int64 values are legal; repeated pairs (in either direction) are
// stored once. The two slices must have the same length; extra entries of
// the longer one are ignored.
func NewEdgeSet(srcOrig, dstOrig []int64) *EdgeSet {
	m := min(len(srcOrig), len(dstOrig))
	x := &EdgeSet{}
	size := 16
	for size < 2*m {
		size *= 2
	}
	x.slots = make([]pairSlot, size)
	x.shift = uint(64 - log2(size))
	nbits := 512
	for nbits < 32*m { // 2m endpoints at ~16 bits each
		nbits *= 2
	}
	x.bits = make([]uint64, nbits/64)
	x.bitShift = uint(64 - log2(nbits))
	for i := range m {
		lo, hi := canonPair(srcOrig[i], dstOrig[i])
		if x.insert(lo, hi) {
			x.n++
		}
		x.mark(lo)
		x.mark(hi)
	}
	return x
}

// Len returns the number of distinct unordered pairs (0 for nil).
func (x *EdgeSet) Len() int {
	if x == nil {
		return 0
	}
	return x.n
}

// Has reports whether {u,v} is in the set, in either direction.
func (x *EdgeSet) Has(u, v int64) bool {
	if x == nil || !x.maybeNode(u) || !x.maybeNode(v) {
		return false
	}
	lo, hi := canonPair(u, v)
	return x.lookup(lo, hi)
}

func canonPair(u, v int64) (lo, hi int64) {
	if u <= v {
		return u, v
	}
	return v, u
}

// nodeBit is the filter bit of node id x.
func (x *EdgeSet) nodeBit(v int64) uint64 { return (uint64(v) * hashkey.Golden) >> x.bitShift }

func (x *EdgeSet) mark(v int64) {
	b := x.nodeBit(v)
	x.bits[b>>6] |= 1 << (b & 63)
}

// maybeNode reports false only if v is an endpoint of no pair.
func (x *EdgeSet) maybeNode(v int64) bool {
	b := x.nodeBit(v)
	return x.bits[b>>6]&(1<<(b&63)) != 0
}

func (x *EdgeSet) slotOf(lo, hi int64) int {
	return int(hashkey.Mix64(uint64(lo)^hashkey.Mix64(uint64(hi)+hashkey.Golden)) >> x.shift)
}

// probe returns the slot of the canonical pair and whether it holds it; if
// not, the slot is the empty one where the pair belongs. The table is sized
// at construction for every pair (load <= 1/2), so an empty slot exists.
func (x *EdgeSet) probe(lo, hi int64) (*pairSlot, bool) {
	mask := len(x.slots) - 1
	for i := x.slotOf(lo, hi); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if !s.full {
			return s, false
		}
		if s.lo == lo && s.hi == hi {
			return s, true
		}
	}
}

// insert adds the canonical pair and reports whether it was new.
func (x *EdgeSet) insert(lo, hi int64) bool {
	s, found := x.probe(lo, hi)
	if !found {
		*s = pairSlot{lo: lo, hi: hi, full: true}
	}
	return !found
}

func (x *EdgeSet) lookup(lo, hi int64) bool {
	_, found := x.probe(lo, hi)
	return found
}

// compactRow moves the neighbors srcGlobal/srcOrig[lo:hi] of destination v
// that are not excluded to start at w (w <= lo) and returns the position
// after the last one kept. With w == lo and nothing excluded it writes
// nothing.
func (x *EdgeSet) compactRow(v int64, srcGlobal, srcOrig, srcTime []int64, lo, hi, w int64) int64 {
	return x.copyRow(v, srcGlobal, srcOrig, srcTime, lo, hi, srcGlobal, srcOrig, srcTime, w, true)
}

// copyRow is compactRow writing to dstGlobal/dstOrig/dstTime from w: the
// source arrays themselves when inPlace (w <= lo), or other ones.
func (x *EdgeSet) copyRow(v int64, srcGlobal, srcOrig, srcTime []int64, lo, hi int64, dstGlobal, dstOrig, dstTime []int64, w int64, inPlace bool) int64 {
	if !x.maybeNode(v) {
		// No pair has v as an endpoint: keep the whole row.
		if !inPlace || w != lo {
			copy(dstGlobal[w:], srcGlobal[lo:hi])
			copy(dstOrig[w:], srcOrig[lo:hi])
			if srcTime != nil {
				copy(dstTime[w:], srcTime[lo:hi])
			}
		}
		return w + hi - lo
	}
	for j := lo; j < hi; j++ {
		u := srcOrig[j]
		if x.maybeNode(u) {
			a, b := canonPair(u, v)
			if x.lookup(a, b) {
				continue
			}
		}
		dstGlobal[w], dstOrig[w] = srcGlobal[j], u
		if srcTime != nil {
			dstTime[w] = srcTime[j]
		}
		w++
	}
	return w
}

// keptInRow counts the neighbors srcOrig[lo:hi] of destination v that are
// not excluded, writing nothing.
func (x *EdgeSet) keptInRow(v int64, srcOrig []int64, lo, hi int64) int64 {
	if !x.maybeNode(v) {
		return hi - lo
	}
	n := int64(0)
	for _, u := range srcOrig[lo:hi] {
		if x.maybeNode(u) {
			a, b := canonPair(u, v)
			if x.lookup(a, b) {
				continue
			}
		}
		n++
	}
	return n
}

// ExcludeRows drops, in place, every sampled edge u -> v whose pair {u,v}
// (original ids) is in x, from rows laid out as BlockBuilder.AddRows takes
// them: destination i has original id dstOrig[i] and neighbors
// srcGlobal/srcOrig[offsets[i]:offsets[i+1]]. The kept neighbors keep their
// order; offsets is rewritten; the shortened neighbor slices and the number
// of edges dropped are returned. With a nil x nothing is read or written.
//
// The distributed samplers call it on a whole layer right before AddRows;
// the result equals filtering each row before AddNeighbors, as Reference
// does.
func ExcludeRows(x *EdgeSet, dstOrig, offsets, srcGlobal, srcOrig []int64) (keptGlobal, keptOrig []int64, dropped int64) {
	keptGlobal, keptOrig, _, dropped = ExcludeRowsTimed(x, dstOrig, offsets, srcGlobal, srcOrig, nil)
	return keptGlobal, keptOrig, dropped
}

// ExcludeRowsTimed is ExcludeRows for temporal rows, whose edges also have
// times srcTime (aligned with srcOrig; nil: untimed rows), compacted alike.
// An excluded pair's edges are dropped at every time.
func ExcludeRowsTimed(x *EdgeSet, dstOrig, offsets, srcGlobal, srcOrig, srcTime []int64) (keptGlobal, keptOrig, keptTime []int64, dropped int64) {
	if x == nil || len(offsets) == 0 {
		return srcGlobal, srcOrig, srcTime, 0
	}
	w := offsets[0]
	lo := offsets[0]
	for i, v := range dstOrig {
		hi := offsets[i+1]
		offsets[i] = w
		w = x.compactRow(v, srcGlobal, srcOrig, srcTime, lo, hi, w)
		lo = hi
	}
	offsets[len(dstOrig)] = w
	if srcTime != nil {
		srcTime = srcTime[:w]
	}
	return srcGlobal[:w], srcOrig[:w], srcTime, lo - w
}

// excludeBlock is the number of rows per block of the parallel exclusion:
// its cut, not the thread count, decides which goroutine writes where, and
// the results do not depend on it at all.
const excludeBlock = 512

// Excluder is ExcludeRowsTimed on all of a rank's threads, for the
// distributed samplers' layers: it keeps its buffers between calls. The
// zero value is ready to use; an Excluder is used by one goroutine at a
// time.
type Excluder struct {
	g, o, t []int64 // the output buffers (the inputs' after a swap)
	kept    []int64 // per row: kept count, then new start
	blk     []int64 // per block of rows: kept count, then new start
}

// Exclude returns what ExcludeRowsTimed(x, dstOrig, offsets, srcGlobal,
// srcOrig, srcTime) returns, and rewrites offsets alike, but may compact
// into its own buffers instead of in place: then it returns those, and
// keeps the input slices as its buffers for the next call, so the caller
// must drop its references to the inputs and use the results. Layers too
// small to pay for threads are compacted in place.
func (xs *Excluder) Exclude(x *EdgeSet, dstOrig, offsets, srcGlobal, srcOrig, srcTime []int64) (keptGlobal, keptOrig, keptTime []int64, dropped int64) {
	rows := len(dstOrig)
	if x == nil || len(offsets) == 0 || rows == 0 {
		return srcGlobal, srcOrig, srcTime, 0
	}
	n := offsets[rows] - offsets[0]
	work := int(n) + rows
	if work < par.MinWork || par.Threads() == 1 || offsets[0] != 0 {
		return ExcludeRowsTimed(x, dstOrig, offsets, srcGlobal, srcOrig, srcTime)
	}
	nb := par.NumBlocks(rows, excludeBlock)
	xs.kept = grow(xs.kept, rows)
	xs.blk = grow(xs.blk, nb)
	// Count what each row keeps (reading only), then lay the kept edges
	// out at the prefix sums of the counts.
	par.Blocks(rows, excludeBlock, work, func(lo, hi int) {
		t := int64(0)
		for i := lo; i < hi; i++ {
			k := x.keptInRow(dstOrig[i], srcOrig, offsets[i], offsets[i+1])
			xs.kept[i] = k
			t += k
		}
		xs.blk[lo/excludeBlock] = t
	})
	total := int64(0)
	for b, c := range xs.blk {
		xs.blk[b] = total
		total += c
	}
	if total == n {
		return srcGlobal, srcOrig, srcTime, 0
	}
	xs.g, xs.o = grow(xs.g, int(total)), grow(xs.o, int(total))
	if srcTime != nil {
		xs.t = grow(xs.t, int(total))
	}
	par.Blocks(rows, excludeBlock, work, func(lo, hi int) {
		w := xs.blk[lo/excludeBlock]
		for i := lo; i < hi; i++ {
			k := xs.kept[i]
			xs.kept[i] = w
			if k > 0 {
				x.copyRow(dstOrig[i], srcGlobal, srcOrig, srcTime, offsets[i], offsets[i+1], xs.g, xs.o, xs.t, w, false)
			}
			w += k
		}
	})
	// The old offsets were read by the pass above: rewrite them after it.
	par.Range(rows, rows, func(lo, hi int) { copy(offsets[lo:hi], xs.kept[lo:hi]) })
	offsets[rows] = total
	keptGlobal, keptOrig = xs.g[:total], xs.o[:total]
	if srcTime != nil {
		keptTime = xs.t[:total]
	}
	xs.g, xs.o = srcGlobal[:0], srcOrig[:0]
	if srcTime != nil {
		xs.t = srcTime[:0]
	}
	return keptGlobal, keptOrig, keptTime, n - total
}
