package sample

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"mpignn/internal/hashkey"
	"mpignn/internal/par"
)

// BlockBuilder deduplicates sampled edges into a Block. It is reused across
// layers and batches: its arrays and its hash table keep their capacity, so
// building blocks allocates nothing in steady state except the Block copies
// it hands out.
//
// Use: Reset with the destinations, then AddNeighbors (or AddRows) for the
// destinations in increasing index order, then Block. The builder is the
// single place that defines the node order of a block, so the distributed
// sampler and the reference sampler agree exactly when they feed the same
// neighbors in the same order: destinations 0..NumDst-1, and for each one its
// neighbors in ascending position order (the order ChoosePositions returns).
//
// A BlockBuilder is not safe for concurrent use.
type BlockBuilder struct {
	numDst  int
	row     int // the destination whose edges are being appended
	nodes   []int64
	orig    []int64
	indptr  []int32
	indices []int32
	// etype is the relation of each edge (aligned with indices) when the
	// builder is typed (SetTyped); relLast is the relation of the current
	// row's last edge, which AddNeighborsRel uses to keep a destination's
	// edges grouped by relation ascending.
	typed   bool
	etype   []int32
	relLast int32
	// temporal: every node is a (node, time) pair (see temporal.go); times
	// holds each node's time (aligned with nodes) and edgeTime each edge's.
	// A source inherits the time of the destination whose row it enters.
	temporal bool
	times    []int64
	edgeTime []int64

	// Open-addressing table (linear probing, power-of-two size) from global
	// id to local index. A slot is live when its gen equals the current one,
	// so Reset empties the table in O(1) instead of clearing it.
	slots []slot
	gen   uint32
	shift uint // 64 - log2(len(slots))

	// Dense mode (see UseDenseIDs): dense[g] packs gen<<32 | local index.
	// A direct-mapped array of 8 bytes per graph node stays in cache far
	// better than a hash table of 16-byte slots at load 1/2, and it needs
	// no probing; it is used when ids are known to lie in [0,len(dense)).
	dense []uint64

	// Bounded mode (see UseBoundedIDs): ids in the window [lo,
	// lo+len(dense)) use dense[g-lo]; the others tab, an open-addressing
	// table (linear probing, power-of-two size) of pairs {tag, entry}:
	// tag = gen24<<40 | (g+1), where gen24 is the low 24 bits of gen, so
	// a pair is live exactly when its tag carries the current generation,
	// and the claim of a pair is one CAS (the parallel AddRows needs
	// that); entry packs gen<<32 | local index as dense's do. It holds the
	// block's nodes outside the window, not one entry per graph node.
	// tabLen counts its live pairs (serial inserts). idN bounds the ids
	// of either mode: every id lies in [0,idN).
	tab      []uint64
	tabShift uint // 64 - log2(len(tab)/2)
	tabLen   int
	lo       int64
	idN      int64

	// Scratch of the parallel AddRows (addRowsDense): per edge, the
	// dense entry it found; per block of edges or rows, a count or the
	// first bad index.
	code []uint32
	blk  []int
	bad  []int
}

// SetTyped makes the following blocks typed (heterogeneous): every edge
// carries its relation, added with AddNeighborsRel, and Block.Etype is
// filled. Untyped (the default) keeps Etype nil and the homogeneous path
// exactly as it was. It holds until changed, across Resets.
func (bb *BlockBuilder) SetTyped(on bool) { bb.typed = on }

// SetTemporal makes the following blocks temporal: destinations come with
// times (ResetAt), edges with times (the Timed adders), nodes are
// deduplicated by (global id, time), and Block.Time and Block.EdgeTime are
// filled. Temporal blocks use the hash table even after UseDenseIDs, since
// one id may stand for several nodes. It holds until changed.
func (bb *BlockBuilder) SetTemporal(on bool) {
	if bb.temporal != on && len(bb.slots) > 0 {
		// The table's hash depends on the mode: start it afresh.
		bb.slots = bb.slots[:0]
	}
	bb.temporal = on
}

// useDense reports whether the direct-mapped index alone is in use.
func (bb *BlockBuilder) useDense() bool { return bb.dense != nil && bb.tab == nil && !bb.temporal }

// useTab reports whether the bounded table is in use.
func (bb *BlockBuilder) useTab() bool { return bb.tab != nil && !bb.temporal }

// useIDs reports whether ids are known to lie in [0,idN): the direct-mapped
// index or the bounded table is in use.
func (bb *BlockBuilder) useIDs() bool { return (bb.dense != nil || bb.tab != nil) && !bb.temporal }

// UseDenseIDs switches the builder to a direct-mapped index of n entries
// (8n bytes): every global id passed afterwards must lie in [0,n). It does
// not change the blocks built, only how fast. n <= 0 switches back to the
// hash table.
func (bb *BlockBuilder) UseDenseIDs(n int64) {
	bb.tab, bb.idN, bb.lo = nil, 0, 0
	if n <= 0 {
		bb.dense = nil
		return
	}
	bb.idN = n
	if int64(len(bb.dense)) != n {
		bb.dense = make([]uint64, n)
	} else {
		clear(bb.dense) // entries of an earlier dense period may carry a live gen
	}
	bb.nextGen()
}

// maxTabIDs bounds the ids of the bounded table: an id and one (its +1)
// must fit in the 40 bits of a tag below the generation.
const maxTabIDs = 1<<40 - 1

// UseBoundedIDs tells the builder that every global id passed afterwards
// lies in [0,n), as UseDenseIDs does, but direct-maps only the window
// [lo,hi) (8 bytes per id in it: a rank's own nodes, the most frequent)
// and indexes the other ids with a table sized by the block (16 bytes
// per pair at load <= 1/2): its memory scales with the window and the
// blocks built, not with the graph, and it keeps the dense mode's tight
// AddRows passes (serial and parallel). It does not change the blocks
// built. n <= 0, n beyond 2^40-1 or a window outside [0,n) switches back
// to the general hash table.
func (bb *BlockBuilder) UseBoundedIDs(n, lo, hi int64) {
	if n <= 0 || n > maxTabIDs || lo < 0 || hi < lo || hi > n {
		bb.dense, bb.tab, bb.idN, bb.lo = nil, nil, 0, 0
		return
	}
	bb.idN, bb.lo = n, lo
	if int64(len(bb.dense)) != hi-lo || bb.dense == nil {
		bb.dense = make([]uint64, hi-lo)
	} else {
		clear(bb.dense) // entries of an earlier period may carry a live gen
	}
	if bb.tab == nil {
		bb.tab = make([]uint64, 2*16)
		bb.tabShift = 64 - 4
	}
	bb.nextGen()
}

// IndexBytes returns the bytes of the builder's id index: the dense
// index, the bounded table and the general hash table.
func (bb *BlockBuilder) IndexBytes() int64 {
	return 8*int64(len(bb.dense)) + 8*int64(len(bb.tab)) + 16*int64(len(bb.slots))
}

// tabTag returns the live tag of id g (in range).
func (bb *BlockBuilder) tabTag(g int64) uint64 { return uint64(bb.gen&tabGenMask)<<40 | uint64(g+1) }

// tabGenMask is the part of gen that a tag carries.
const tabGenMask = 1<<24 - 1

// tabHome is the home pair of id g.
func (bb *BlockBuilder) tabHome(g int64) int { return int((uint64(g) * hashkey.Golden) >> bb.tabShift) }

// ensureTab grows the bounded table, if needed, to hold n ids at load
// <= 1/2, re-inserting the nodes the block holds so far (their entries
// are their local indices).
func (bb *BlockBuilder) ensureTab(n int) {
	if bb.growTab(n) {
		w := uint64(len(bb.dense))
		for i, g := range bb.nodes {
			if uint64(g-bb.lo) >= w {
				bb.tabPut(g, int32(i))
			}
		}
	}
}

// growTab makes the bounded table, empty, large enough for n ids at load
// <= 1/2 if it is not; it reports whether it made a new one.
func (bb *BlockBuilder) growTab(n int) bool {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if 2*size <= len(bb.tab) {
		return false
	}
	bb.tab = make([]uint64, 2*size) // tags of generation 0 are never live
	bb.tabShift = uint(64 - log2(size))
	bb.tabLen = 0
	return true
}

// tabPut enters id g, known to be absent, with local index v.
func (bb *BlockBuilder) tabPut(g int64, v int32) {
	tag, live := bb.tabTag(g), uint64(bb.gen&tabGenMask)
	mask := len(bb.tab)/2 - 1
	i := bb.tabHome(g)
	for bb.tab[2*i]>>40 == live {
		i = (i + 1) & mask
	}
	bb.tab[2*i] = tag
	bb.tab[2*i+1] = uint64(bb.gen)<<32 | uint64(uint32(v))
	bb.tabLen++
}

// insertTab is insert in bounded mode; g is in range. A new node outside
// the window may grow the table first (the caller appends g to nodes once
// this returns v).
func (bb *BlockBuilder) insertTab(g int64, v int32) int32 {
	if o := uint64(g - bb.lo); o < uint64(len(bb.dense)) {
		return bb.insertDense(int64(o), v)
	}
	tag, live := bb.tabTag(g), uint64(bb.gen&tabGenMask)
	mask := len(bb.tab)/2 - 1
	i := bb.tabHome(g)
	for {
		k := bb.tab[2*i]
		if k == tag {
			return int32(uint32(bb.tab[2*i+1]))
		}
		if k>>40 != live {
			break
		}
		i = (i + 1) & mask
	}
	if 2*(bb.tabLen+1) > len(bb.tab)/2 {
		bb.ensureTab(bb.tabLen + 1)
	}
	bb.tabPut(g, v)
	return v
}

// tabClaim returns the pair of id g (in range), claiming a free one with a
// CAS if g has none: safe on many goroutines as long as the table has room
// for every id entered (the parallel passes size it first).
func (bb *BlockBuilder) tabClaim(g int64, mask int) int {
	tag, live := bb.tabTag(g), uint64(bb.gen&tabGenMask)
	i := bb.tabHome(g)
	for {
		p := &bb.tab[2*i]
		k := atomic.LoadUint64(p)
		if k == tag {
			return i
		}
		if k>>40 != live {
			if atomic.CompareAndSwapUint64(p, k, tag) {
				return i
			}
			continue // taken meanwhile: look at the same pair again
		}
		i = (i + 1) & mask
	}
}

// tabParOK reports whether the parallel passes can use the bounded table
// for n ids: its pair indices must fit the uint32 scratch.
func tabParOK(n int) bool { return int64(n) <= 1<<30 }

type slot struct {
	key int64
	val int32
	gen uint32
}

// maxLocal is the largest number of nodes or edges a block may hold: local
// indices and offsets are int32.
const maxLocal = math.MaxInt32

// Reset starts a new block whose destinations are dstGlobal (global ids,
// which must be distinct) with original ids dstOrig. The builder copies both
// slices, so they may alias a previous Block or the builder's own Nodes.
func (bb *BlockBuilder) Reset(dstGlobal, dstOrig []int64) error {
	if bb.temporal {
		return fmt.Errorf("block builder: a temporal block needs destination times (ResetAt)")
	}
	return bb.reset(dstGlobal, dstOrig, nil)
}

// ResetAt is Reset for a temporal builder: destination i is expanded at
// time dstTime[i], and the pairs (global id, time) must be distinct.
func (bb *BlockBuilder) ResetAt(dstGlobal, dstOrig, dstTime []int64) error {
	if !bb.temporal {
		return fmt.Errorf("block builder: destination times given to a builder that is not temporal (call SetTemporal)")
	}
	if len(dstTime) != len(dstGlobal) {
		return fmt.Errorf("block builder: %d destination times for %d destinations", len(dstTime), len(dstGlobal))
	}
	return bb.reset(dstGlobal, dstOrig, dstTime)
}

func (bb *BlockBuilder) reset(dstGlobal, dstOrig, dstTime []int64) error {
	if len(dstGlobal) != len(dstOrig) {
		return fmt.Errorf("block builder: %d destination ids but %d original ids", len(dstGlobal), len(dstOrig))
	}
	if len(dstGlobal) > maxLocal {
		return fmt.Errorf("block builder: %d destinations exceed the int32 local index range", len(dstGlobal))
	}
	// Copy before truncating: the inputs may alias bb.nodes / bb.orig.
	n := len(dstGlobal)
	if cap(bb.nodes) < n {
		bb.nodes = make([]int64, n, 2*n)
		bb.orig = make([]int64, n, 2*n)
	}
	bb.nodes = bb.nodes[:n]
	bb.orig = bb.orig[:n]
	copy(bb.nodes, dstGlobal)
	copy(bb.orig, dstOrig)
	bb.times = append(bb.times[:0], dstTime...)
	bb.edgeTime = bb.edgeTime[:0]
	bb.numDst = n
	bb.row = 0
	bb.indptr = append(bb.indptr[:0], 0)
	bb.indices = bb.indices[:0]
	bb.etype = bb.etype[:0]
	bb.relLast = -1

	bb.nextGen()
	bb.tabLen = 0
	switch {
	case !bb.useIDs():
		bb.ensureTable(4 * n)
	case bb.useTab() && !tabParOK(n):
		bb.growTab(n)
	case n >= par.MinWork && par.Threads() >= parDedupThreads:
		if bb.useTab() {
			bb.growTab(n)
		}
		return bb.resetDense()
	case bb.useTab():
		bb.growTab(n)
	}
	for i, g := range bb.nodes {
		if bb.useIDs() && (g < 0 || g >= bb.idN) {
			return fmt.Errorf("block builder: destination %d has id %d outside [0,%d)", i, g, bb.idN)
		}
		var j int32
		if bb.useDense() {
			j = bb.insertDense(g, int32(i))
		} else if bb.useTab() {
			j = bb.insertTab(g, int32(i))
		} else {
			j = bb.insert(g, bb.timeOf(i), int32(i))
		}
		if j != int32(i) {
			if bb.temporal {
				return fmt.Errorf("block builder: destination %d (global id %d at time %d) repeats destination %d", i, g, bb.times[i], j)
			}
			return fmt.Errorf("block builder: destination %d (global id %d) repeats destination %d", i, g, j)
		}
	}
	return nil
}

// resetDense enters the destinations into the dense index on all threads,
// with the serial loop's errors: each entry takes the smallest index of
// its id (CAS, as addRowsDense's first pass), then a destination whose
// entry holds another index repeats that one. The first bad destination in
// index order is reported, out of range or repeated, as the loop would.
//
// In bounded mode each destination first claims its id's pair of the table
// (tabClaim) and keeps the pair's index in code; the entry then plays the
// dense entry's part.
func (bb *BlockBuilder) resetDense() error {
	nd := len(bb.nodes)
	gen := uint64(bb.gen) << 32
	n := bb.idN
	nb := par.NumBlocks(nd, edgeBlock)
	bb.bad = grow(bb.bad, nb)
	tab, mask := bb.useTab(), len(bb.tab)/2-1
	if tab {
		bb.code = grow(bb.code, nd)
	}
	par.Blocks(nd, edgeBlock, nd*8, func(lo, hi int) {
		bad := -1
		for i := lo; i < hi; i++ {
			g := bb.nodes[i]
			if g < 0 || g >= n {
				if bad < 0 {
					bad = i
				}
				continue
			}
			if o := uint64(g - bb.lo); tab && o >= uint64(len(bb.dense)) {
				s := bb.tabClaim(g, mask)
				bb.code[i] = uint32(s)
				casMin(&bb.tab[2*s+1], gen, gen|uint64(i))
				continue
			}
			casMin(&bb.dense[g-bb.lo], gen, gen|uint64(i))
		}
		bb.bad[lo/edgeBlock] = bad
	})
	first := -1
	for _, i := range bb.bad[:nb] {
		if i >= 0 {
			first = i
			break
		}
	}
	par.Blocks(nd, edgeBlock, nd*4, func(lo, hi int) {
		bad := -1
		for i := lo; i < hi; i++ {
			g := bb.nodes[i]
			if g >= 0 && g < n && bb.dstEntry(i) != uint32(i) {
				bad = i
				break
			}
		}
		bb.bad[lo/edgeBlock] = bad
	})
	for _, i := range bb.bad[:nb] {
		if i >= 0 && (first < 0 || i < first) {
			return fmt.Errorf("block builder: destination %d (global id %d) repeats destination %d", i, bb.nodes[i], bb.dstEntry(i))
		}
	}
	if first >= 0 {
		return fmt.Errorf("block builder: destination %d has id %d outside [0,%d)", first, bb.nodes[first], n)
	}
	return nil
}

// dstEntry is the index held by the entry of destination i's id (in
// range) after resetDense's first pass.
func (bb *BlockBuilder) dstEntry(i int) uint32 {
	g := bb.nodes[i]
	if o := uint64(g - bb.lo); bb.useTab() && o >= uint64(len(bb.dense)) {
		return uint32(bb.tab[2*bb.code[i]+1])
	}
	return uint32(bb.dense[g-bb.lo])
}

// casMin lowers *p to v (whose high word is the generation gen) unless it
// already holds a value of generation gen at most v; a value of another
// generation counts as empty.
func casMin(p *uint64, gen, v uint64) {
	for {
		old := atomic.LoadUint64(p)
		if old&^0xffffffff == gen && old <= v {
			return
		}
		if atomic.CompareAndSwapUint64(p, old, v) {
			return
		}
	}
}

// NumDst returns the number of destinations of the block being built.
func (bb *BlockBuilder) NumDst() int { return bb.numDst }

// AddNeighbors appends sampled in-neighbors (global ids and original ids) of
// destination dstIndex. Destinations must be visited in non-decreasing index
// order; skipped destinations get no edges, and calling again with the same
// index appends more edges to it. Each neighbor that is not yet in the block
// becomes a new source node, in order of first appearance.
func (bb *BlockBuilder) AddNeighbors(dstIndex int, srcGlobal, srcOrig []int64) error {
	if bb.temporal {
		return fmt.Errorf("block builder: destination %d: edges without times added to a temporal block (use AddNeighborsTimed)", dstIndex)
	}
	return bb.addNeighbors(dstIndex, srcGlobal, srcOrig)
}

func (bb *BlockBuilder) addNeighbors(dstIndex int, srcGlobal, srcOrig []int64) error {
	if len(srcGlobal) != len(srcOrig) {
		return fmt.Errorf("block builder: destination %d: %d neighbor ids but %d original ids", dstIndex, len(srcGlobal), len(srcOrig))
	}
	if bb.typed {
		return fmt.Errorf("block builder: destination %d: untyped edges added to a typed block (use AddNeighborsRel)", dstIndex)
	}
	return bb.add(dstIndex, srcGlobal, srcOrig)
}

// add is AddNeighbors without the typed check.
func (bb *BlockBuilder) add(dstIndex int, srcGlobal, srcOrig []int64) error {
	if err := bb.seek(dstIndex); err != nil {
		return err
	}
	if len(bb.indices)+len(srcGlobal) > maxLocal {
		return fmt.Errorf("block builder: more than %d edges in one block", maxLocal)
	}
	for i, g := range srcGlobal {
		if err := bb.addSource(g, srcOrig[i]); err != nil {
			return err
		}
	}
	return nil
}

// AddNeighborsRel is AddNeighbors for a typed builder (SetTyped): the
// neighbors are in-neighbors of destination dstIndex through relation rel
// (>= 0), and every edge records rel in Block.Etype. Within one destination
// relations must come in ascending order (equal is fine: more edges of the
// same relation), so that a destination's edges are grouped by relation.
func (bb *BlockBuilder) AddNeighborsRel(dstIndex int, rel int32, srcGlobal, srcOrig []int64) error {
	if bb.temporal {
		return fmt.Errorf("block builder: destination %d: edges without times added to a temporal block (use AddNeighborsRelTimed)", dstIndex)
	}
	return bb.addNeighborsRel(dstIndex, rel, srcGlobal, srcOrig)
}

func (bb *BlockBuilder) addNeighborsRel(dstIndex int, rel int32, srcGlobal, srcOrig []int64) error {
	if !bb.typed {
		return fmt.Errorf("block builder: destination %d: typed edges added to an untyped block (call SetTyped)", dstIndex)
	}
	if len(srcGlobal) != len(srcOrig) {
		return fmt.Errorf("block builder: destination %d: %d neighbor ids but %d original ids", dstIndex, len(srcGlobal), len(srcOrig))
	}
	if rel < 0 {
		return fmt.Errorf("block builder: destination %d: relation %d < 0", dstIndex, rel)
	}
	if dstIndex > bb.row {
		bb.relLast = -1 // a new destination starts its relation order afresh
	}
	if dstIndex == bb.row && rel < bb.relLast {
		return fmt.Errorf("block builder: destination %d: relation %d after relation %d (want ascending)", dstIndex, rel, bb.relLast)
	}
	if err := bb.add(dstIndex, srcGlobal, srcOrig); err != nil {
		return err
	}
	bb.relLast = rel
	for range srcGlobal {
		bb.etype = append(bb.etype, rel)
	}
	return nil
}

// AddRows is the bulk form of AddNeighbors: the neighbors of destination i
// are srcGlobal[offsets[i]:offsets[i+1]] (and the same range of srcOrig), for
// all destinations at once; len(offsets) must be NumDst()+1. It must be the
// only call between Reset and Block.
func (bb *BlockBuilder) AddRows(offsets []int64, srcGlobal, srcOrig []int64) error {
	if len(offsets) != bb.numDst+1 {
		return fmt.Errorf("block builder: %d row offsets for %d destinations, want %d", len(offsets), bb.numDst, bb.numDst+1)
	}
	if len(srcGlobal) != len(srcOrig) {
		return fmt.Errorf("block builder: %d neighbor ids but %d original ids", len(srcGlobal), len(srcOrig))
	}
	if bb.row != 0 || len(bb.indices) != 0 {
		return fmt.Errorf("block builder: AddRows after edges were already added")
	}
	if offsets[0] != 0 || offsets[bb.numDst] != int64(len(srcGlobal)) {
		return fmt.Errorf("block builder: row offsets span [%d,%d) but there are %d neighbors", offsets[0], offsets[bb.numDst], len(srcGlobal))
	}
	if bb.useIDs() && !bb.typed {
		if len(srcGlobal) >= par.MinWork && par.Threads() >= parDedupThreads && (bb.useDense() || tabParOK(bb.numDst+len(srcGlobal))) {
			return bb.addRowsDense(offsets, srcGlobal, srcOrig)
		}
		if bb.useTab() {
			return bb.addRowsTabSerial(offsets, srcGlobal, srcOrig)
		}
		return bb.addRowsDenseSerial(offsets, srcGlobal, srcOrig)
	}
	for i := range bb.numDst {
		lo, hi := offsets[i], offsets[i+1]
		if hi < lo {
			return fmt.Errorf("block builder: row offsets decrease at destination %d", i)
		}
		if err := bb.AddNeighbors(i, srcGlobal[lo:hi], srcOrig[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}

// Blocks of the parallel AddRows: rows per block of the offsets check, and
// edges per block of the edge passes. The cut decides only which goroutine
// does what; the block built does not depend on it.
const (
	rowBlock  = 2048
	edgeBlock = 8192
)

// parDedupThreads is the fewest threads on which the parallel
// de-duplication (addRowsDense) beats the serial one: its four passes and
// atomic first pass cost about 1.5 times the serial pass in CPU, so on two
// threads it only breaks even. Both build the same block; this only picks
// the faster.
const parDedupThreads = 4

// startRows checks a serial pass's row offsets and E edges and sizes
// indptr (filled from offsets) and indices for them.
func (bb *BlockBuilder) startRows(offsets []int64, E int) error {
	nd := bb.numDst
	if E > maxLocal {
		return fmt.Errorf("block builder: more than %d edges in one block", maxLocal)
	}
	bb.indptr = grow(bb.indptr, nd+1)
	bb.indptr[0] = 0
	for i := range nd {
		if offsets[i+1] < offsets[i] {
			return fmt.Errorf("block builder: row offsets decrease at destination %d", i)
		}
		bb.indptr[i+1] = int32(offsets[i+1])
	}
	bb.indices = grow(bb.indices, E)
	return nil
}

// addRowsDenseSerial is AddRows in dense mode (untyped, untimed) in one
// tight pass: the serial reference of addRowsDense, and the faster one on
// few threads.
func (bb *BlockBuilder) addRowsDenseSerial(offsets []int64, srcGlobal, srcOrig []int64) error {
	nd := bb.numDst
	if err := bb.startRows(offsets, len(srcGlobal)); err != nil {
		return err
	}
	gen := uint64(bb.gen) << 32
	dense := bb.dense
	n := int64(len(dense))
	nodes, orig := bb.nodes, bb.orig
	for e, g := range srcGlobal {
		if g < 0 || g >= n {
			return fmt.Errorf("block builder: source id %d outside [0,%d)", g, n)
		}
		x := dense[g]
		if x&^0xffffffff == gen {
			bb.indices[e] = int32(uint32(x))
			continue
		}
		k := len(nodes)
		if k == maxLocal {
			return fmt.Errorf("block builder: more than %d nodes in one block", maxLocal)
		}
		dense[g] = gen | uint64(k)
		nodes = append(nodes, g)
		orig = append(orig, srcOrig[e])
		bb.indices[e] = int32(k)
	}
	bb.nodes, bb.orig = nodes, orig
	bb.row = nd
	return nil
}

// addRowsTabSerial is addRowsDenseSerial in bounded mode: the same pass,
// with the table's probe in place of the direct-mapped read.
func (bb *BlockBuilder) addRowsTabSerial(offsets []int64, srcGlobal, srcOrig []int64) error {
	nd := bb.numDst
	if err := bb.startRows(offsets, len(srcGlobal)); err != nil {
		return err
	}
	n := bb.idN
	live := uint64(bb.gen&tabGenMask) << 40
	gen := uint64(bb.gen) << 32
	tab, shift := bb.tab, bb.tabShift
	mask := len(tab)/2 - 1
	dense, lo, w := bb.dense, bb.lo, uint64(len(bb.dense))
	for e, g := range srcGlobal {
		if g < 0 || g >= n {
			return fmt.Errorf("block builder: source id %d outside [0,%d)", g, n)
		}
		if o := uint64(g - lo); o < w {
			x := dense[o]
			if x&^0xffffffff == gen {
				bb.indices[e] = int32(uint32(x))
				continue
			}
			k := len(bb.nodes)
			if k == maxLocal {
				return fmt.Errorf("block builder: more than %d nodes in one block", maxLocal)
			}
			dense[o] = gen | uint64(k)
			bb.nodes = append(bb.nodes, g)
			bb.orig = append(bb.orig, srcOrig[e])
			bb.indices[e] = int32(k)
			continue
		}
		tag := live | uint64(g+1)
		i := int((uint64(g) * hashkey.Golden) >> shift)
		for {
			k := tab[2*i]
			if k == tag {
				bb.indices[e] = int32(uint32(tab[2*i+1]))
				goto next
			}
			if k&^(1<<40-1) != live {
				break
			}
			i = (i + 1) & mask
		}
		{
			k := len(bb.nodes)
			if k == maxLocal {
				return fmt.Errorf("block builder: more than %d nodes in one block", maxLocal)
			}
			if 2*(bb.tabLen+1) > len(tab)/2 {
				bb.ensureTab(bb.tabLen + 1)
				tab, shift = bb.tab, bb.tabShift
				mask = len(tab)/2 - 1
				i = int((uint64(g) * hashkey.Golden) >> shift)
				for tab[2*i]&^(1<<40-1) == live {
					i = (i + 1) & mask
				}
			}
			tab[2*i] = tag
			tab[2*i+1] = gen | uint64(k)
			bb.tabLen++
			bb.nodes = append(bb.nodes, g)
			bb.orig = append(bb.orig, srcOrig[e])
			bb.indices[e] = int32(k)
		}
	next:
	}
	bb.row = nd
	return nil
}

// addRowsDense is AddRows in dense mode (untyped, untimed) on all threads,
// building exactly the block the serial path builds. A node's local index
// is its order of first appearance: destinations first, then the edges in
// order. Every edge e first takes, atomically, the minimum of numDst+e over
// the edges with its id in the id's dense entry (a destination's entry
// holds its index, below every edge's code, so it always wins). Then edge e
// is its id's first appearance exactly when the entry holds numDst+e; the
// first appearances, counted per block and prefix-summed, get the next
// local indices in edge order, and every other edge copies the index of
// its id's first appearance.
//
// The dense entries of the new sources are left holding edge codes, not
// local indices: the builder is closed (no more edges until the next
// Reset, which starts a new generation), as AddRows promises.
func (bb *BlockBuilder) addRowsDense(offsets []int64, srcGlobal, srcOrig []int64) error {
	nd, E := bb.numDst, len(srcGlobal)
	if E > maxLocal {
		return fmt.Errorf("block builder: more than %d edges in one block", maxLocal)
	}
	// Rows: offsets must not decrease; they become indptr.
	bb.indptr = grow(bb.indptr, nd+1)
	nbr := par.NumBlocks(nd, rowBlock)
	bb.bad = grow(bb.bad, max(nbr, par.NumBlocks(E, edgeBlock)))
	par.Blocks(nd, rowBlock, nd*4, func(lo, hi int) {
		bad := -1
		for i := lo; i < hi; i++ {
			if offsets[i+1] < offsets[i] && bad < 0 {
				bad = i
			}
			bb.indptr[i+1] = int32(offsets[i+1])
		}
		bb.bad[lo/rowBlock] = bad
	})
	bb.indptr[0] = 0
	for _, i := range bb.bad[:nbr] {
		if i >= 0 {
			return fmt.Errorf("block builder: row offsets decrease at destination %d", i)
		}
	}
	// Pass 1: the minimum code per id. In bounded mode each edge first
	// claims its id's pair (the table is sized for every id first, so no
	// claim fails) and keeps the pair's index in code.
	nb := par.NumBlocks(E, edgeBlock)
	gen := uint64(bb.gen) << 32
	n := bb.idN
	bb.code = grow(bb.code, E)
	tab := bb.useTab()
	if tab {
		bb.ensureTab(nd + E)
	}
	mask := len(bb.tab)/2 - 1
	lo, w := bb.lo, uint64(len(bb.dense))
	par.Blocks(E, edgeBlock, E*8, func(b0, b1 int) {
		bad := -1
		for e := b0; e < b1; e++ {
			g := srcGlobal[e]
			if g < 0 || g >= n {
				if bad < 0 {
					bad = e
				}
				continue
			}
			if o := uint64(g - lo); tab && o >= w {
				s := bb.tabClaim(g, mask)
				bb.code[e] = uint32(s)
				casMin(&bb.tab[2*s+1], gen, gen|uint64(uint32(nd+e)))
				continue
			}
			casMin(&bb.dense[g-lo], gen, gen|uint64(uint32(nd+e)))
		}
		bb.bad[b0/edgeBlock] = bad
	})
	for _, e := range bb.bad[:nb] {
		if e >= 0 {
			return fmt.Errorf("block builder: source id %d outside [0,%d)", srcGlobal[e], n)
		}
	}
	// Pass 2: each edge's winning code, and the first appearances per
	// block.
	bb.blk = grow(bb.blk, nb)
	par.Blocks(E, edgeBlock, E*4, func(b0, b1 int) {
		c := 0
		for e := b0; e < b1; e++ {
			var v uint32
			if o := uint64(srcGlobal[e] - lo); tab && o >= w {
				v = uint32(bb.tab[2*bb.code[e]+1])
			} else {
				v = uint32(bb.dense[o])
			}
			bb.code[e] = v
			if v == uint32(nd+e) {
				c++
			}
		}
		bb.blk[b0/edgeBlock] = c
	})
	fresh := par.Offsets(bb.blk)
	if int64(nd)+int64(fresh) > maxLocal {
		return fmt.Errorf("block builder: more than %d nodes in one block", maxLocal)
	}
	// The destinations stay in front.
	bb.nodes = slices.Grow(bb.nodes[:nd], fresh)[:nd+fresh]
	bb.orig = slices.Grow(bb.orig[:nd], fresh)[:nd+fresh]
	bb.indices = grow(bb.indices, E)
	// Pass 3: the first appearances take the next local indices in order.
	par.Blocks(E, edgeBlock, E*2, func(lo, hi int) {
		k := nd + bb.blk[lo/edgeBlock]
		for e := lo; e < hi; e++ {
			if bb.code[e] == uint32(nd+e) {
				bb.nodes[k], bb.orig[k] = srcGlobal[e], srcOrig[e]
				bb.indices[e] = int32(k)
				k++
			}
		}
	})
	// Pass 4: every other edge takes its destination's index or that of
	// its id's first appearance (set by pass 3, never written here).
	par.Blocks(E, edgeBlock, E*2, func(lo, hi int) {
		for e := lo; e < hi; e++ {
			v := bb.code[e]
			switch {
			case v < uint32(nd):
				bb.indices[e] = int32(v)
			case v != uint32(nd+e):
				bb.indices[e] = bb.indices[v-uint32(nd)]
			}
		}
	})
	bb.row = nd
	return nil
}

// grow returns s with length n, keeping its contents up to n when its
// array is large enough and reallocating (contents lost) otherwise.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}

// seek closes rows up to dstIndex so that edges now go to dstIndex.
func (bb *BlockBuilder) seek(dstIndex int) error {
	if dstIndex < bb.row || dstIndex >= bb.numDst {
		return fmt.Errorf("block builder: destination %d out of order (current %d, %d destinations)", dstIndex, bb.row, bb.numDst)
	}
	for bb.row < dstIndex {
		bb.indptr = append(bb.indptr, int32(len(bb.indices)))
		bb.row++
	}
	return nil
}

// addSource appends one edge of the current row.
func (bb *BlockBuilder) addSource(g, o int64) error {
	n := len(bb.nodes)
	var j int32
	var t int64
	if bb.useIDs() {
		if g < 0 || g >= bb.idN {
			return fmt.Errorf("block builder: source id %d outside [0,%d)", g, bb.idN)
		}
		if bb.useDense() {
			j = bb.insertDense(g, int32(n))
		} else {
			j = bb.insertTab(g, int32(n))
		}
	} else {
		t = bb.timeOf(bb.row)
		j = bb.insert(g, t, int32(n))
	}
	if j == int32(n) {
		if n == maxLocal {
			return fmt.Errorf("block builder: more than %d nodes in one block", maxLocal)
		}
		bb.nodes = append(bb.nodes, g)
		bb.orig = append(bb.orig, o)
		if bb.temporal {
			bb.times = append(bb.times, t)
		}
	}
	bb.indices = append(bb.indices, j)
	return nil
}

// timeOf returns node i's time (0 when the builder is not temporal).
func (bb *BlockBuilder) timeOf(i int) int64 {
	if !bb.temporal {
		return 0
	}
	return bb.times[i]
}

// AddNeighborsTimed is AddNeighbors for a temporal, untyped builder: the
// neighbors' edges have times srcTime (aligned).
func (bb *BlockBuilder) AddNeighborsTimed(dstIndex int, srcGlobal, srcOrig, srcTime []int64) error {
	if err := bb.checkTimed(dstIndex, len(srcGlobal), len(srcTime)); err != nil {
		return err
	}
	if err := bb.addNeighbors(dstIndex, srcGlobal, srcOrig); err != nil {
		return err
	}
	bb.edgeTime = append(bb.edgeTime, srcTime...)
	return nil
}

// AddNeighborsRelTimed is AddNeighborsRel for a temporal builder.
func (bb *BlockBuilder) AddNeighborsRelTimed(dstIndex int, rel int32, srcGlobal, srcOrig, srcTime []int64) error {
	if err := bb.checkTimed(dstIndex, len(srcGlobal), len(srcTime)); err != nil {
		return err
	}
	if err := bb.addNeighborsRel(dstIndex, rel, srcGlobal, srcOrig); err != nil {
		return err
	}
	bb.edgeTime = append(bb.edgeTime, srcTime...)
	return nil
}

func (bb *BlockBuilder) checkTimed(dstIndex, n, nt int) error {
	if !bb.temporal {
		return fmt.Errorf("block builder: destination %d: timed edges added to a builder that is not temporal", dstIndex)
	}
	if n != nt {
		return fmt.Errorf("block builder: destination %d: %d neighbors but %d edge times", dstIndex, n, nt)
	}
	return nil
}

// finish closes all remaining rows.
func (bb *BlockBuilder) finish() {
	for len(bb.indptr) < bb.numDst+1 {
		bb.indptr = append(bb.indptr, int32(len(bb.indices)))
	}
	bb.row = bb.numDst
}

// Nodes returns the global and original ids of the block being built
// (destinations first, then sources by first appearance). The slices alias
// the builder and are valid until the next Reset.
func (bb *BlockBuilder) Nodes() (global, orig []int64) { return bb.nodes, bb.orig }

// Block closes the block and returns a copy that the caller owns. No more
// edges may be added until the next Reset.
func (bb *BlockBuilder) Block() Block {
	var b Block
	bb.BlockInto(&b)
	return b
}

// BlockInto is Block writing into b, reusing the capacity of b's slices (so a
// caller that recycles Blocks builds them without allocating).
func (bb *BlockBuilder) BlockInto(b *Block) {
	bb.finish()
	b.NumDst = bb.numDst
	b.Nodes = copyOut(b.Nodes, bb.nodes)
	b.Orig = copyOut(b.Orig, bb.orig)
	b.Indptr = copyOut(b.Indptr, bb.indptr)
	b.Indices = copyOut(b.Indices, bb.indices)
	if bb.typed {
		// Never nil for a typed block, even without edges, so that a typed
		// block is recognisable as such.
		b.Etype = append(b.Etype[:0], bb.etype...)
		if b.Etype == nil {
			b.Etype = []int32{}
		}
	} else {
		b.Etype = nil
	}
	if bb.temporal {
		b.Time = append(b.Time[:0], bb.times...)
		b.EdgeTime = append(b.EdgeTime[:0], bb.edgeTime...)
		if b.Time == nil {
			b.Time = []int64{}
		}
		if b.EdgeTime == nil {
			b.EdgeTime = []int64{}
		}
	} else {
		b.Time, b.EdgeTime = nil, nil
	}
}

// copyOut is append(dst[:0], src...), copying a large array on all
// threads: a block's arrays are handed out on every layer.
func copyOut[T any](dst, src []T) []T {
	if len(src) < par.MinWork {
		return append(dst[:0], src...)
	}
	if cap(dst) < len(src) {
		dst = make([]T, len(src)) // exact: blocks handed out keep no slack
	}
	dst = dst[:len(src)]
	par.Range(len(src), len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	return dst
}

// nextGen invalidates every slot of the table.
func (bb *BlockBuilder) nextGen() {
	bb.gen++
	if bb.gen == 0 {
		// Generation counter wrapped: stale slots could look live again.
		clear(bb.slots)
		clear(bb.dense)
		clear(bb.tab)
		bb.gen = 1
	}
	if bb.gen&tabGenMask == 0 {
		// The tags' 24 bits wrapped: old tags could look live again, and
		// tags of generation 0 (a fresh table) must never be live.
		clear(bb.tab)
		bb.gen++
	}
}

// insertDense is insert in dense mode; g is in range.
func (bb *BlockBuilder) insertDense(g int64, v int32) int32 {
	x := bb.dense[g]
	if uint32(x>>32) == bb.gen {
		return int32(uint32(x))
	}
	bb.dense[g] = uint64(bb.gen)<<32 | uint64(uint32(v))
	return v
}

// ensureTable grows the table, if needed, to hold n keys at load <= 1/2.
func (bb *BlockBuilder) ensureTable(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size <= len(bb.slots) {
		return
	}
	// Fresh slots hold generation 0, never a live one; the generation
	// itself is kept, since the dense index (used between temporal
	// periods) may hold entries of every generation up to the current one.
	bb.slots = make([]slot, size)
	bb.shift = uint(64 - log2(size))
	// Re-insert what the block holds so far.
	for i, g := range bb.nodes {
		bb.insert(g, bb.timeOf(i), int32(i))
	}
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// slotOf is the home slot of (g, t); t is 0 and ignored unless temporal.
func (bb *BlockBuilder) slotOf(g, t int64) int {
	h := uint64(g)
	if bb.temporal {
		h ^= hashkey.Mix64(uint64(t))
	}
	return int((h * hashkey.Golden) >> bb.shift)
}

// insert returns the local index of global id g (at time t when temporal),
// adding it with index v if absent (so the result equals v exactly when g
// was new). A temporal slot matches when its key is g and its node's time
// is t (read from times, which holds every node already inserted).
func (bb *BlockBuilder) insert(g, t int64, v int32) int32 {
	mask := len(bb.slots) - 1
	i := bb.slotOf(g, t)
	for {
		s := &bb.slots[i]
		if s.gen != bb.gen {
			if int(v) >= len(bb.nodes) && 2*(len(bb.nodes)+1) > len(bb.slots) {
				// A new node would push the load past 1/2: grow first. The
				// caller appends g to nodes after this returns v, so it is
				// inserted here explicitly after the rehash.
				bb.ensureTable(len(bb.nodes) + 1)
				return bb.insertFresh(g, t, v)
			}
			*s = slot{key: g, val: v, gen: bb.gen}
			return v
		}
		if s.key == g && (!bb.temporal || bb.times[s.val] == t) {
			return s.val
		}
		i = (i + 1) & mask
	}
}

// insertFresh inserts g, known to be absent, with value v.
func (bb *BlockBuilder) insertFresh(g, t int64, v int32) int32 {
	mask := len(bb.slots) - 1
	i := bb.slotOf(g, t)
	for bb.slots[i].gen == bb.gen {
		i = (i + 1) & mask
	}
	bb.slots[i] = slot{key: g, val: v, gen: bb.gen}
	return v
}

// Validate checks the structural invariants of a block: Nodes and Orig have
// the same length, destinations are a prefix, Indptr is a valid offset array
// over Indices, and every local index is in range. It does not check that the
// edges exist in a graph (the tests do that against the source graph).
func (b *Block) Validate() error {
	n := len(b.Nodes)
	if len(b.Orig) != n {
		return fmt.Errorf("block: %d nodes but %d original ids", n, len(b.Orig))
	}
	if b.NumDst < 0 || b.NumDst > n {
		return fmt.Errorf("block: %d destinations but %d nodes", b.NumDst, n)
	}
	if len(b.Indptr) != b.NumDst+1 {
		return fmt.Errorf("block: indptr has %d entries for %d destinations", len(b.Indptr), b.NumDst)
	}
	if b.Indptr[0] != 0 {
		return fmt.Errorf("block: indptr[0] = %d, want 0", b.Indptr[0])
	}
	for i := 1; i < len(b.Indptr); i++ {
		if b.Indptr[i] < b.Indptr[i-1] {
			return fmt.Errorf("block: indptr decreases at destination %d", i-1)
		}
	}
	if last := int(b.Indptr[b.NumDst]); last != len(b.Indices) {
		return fmt.Errorf("block: indptr ends at %d but there are %d edges", last, len(b.Indices))
	}
	for e, j := range b.Indices {
		if j < 0 || int(j) >= n {
			return fmt.Errorf("block: edge %d has source index %d outside [0,%d)", e, j, n)
		}
	}
	if (b.Time == nil) != (b.EdgeTime == nil) || (b.Time != nil && (len(b.Time) != n || len(b.EdgeTime) != len(b.Indices))) {
		return fmt.Errorf("block: %d node times and %d edge times for %d nodes and %d edges", len(b.Time), len(b.EdgeTime), n, len(b.Indices))
	}
	if b.EdgeFeatDim < 0 || len(b.EdgeFeat) != b.EdgeFeatDim*len(b.Indices) || (b.EdgeFeatDim == 0) != (b.EdgeFeat == nil) {
		return fmt.Errorf("block: %d edge feature values of width %d for %d edges", len(b.EdgeFeat), b.EdgeFeatDim, len(b.Indices))
	}
	return b.validateEtype(-1)
}

// ValidateRel is Validate for a block of a heterogeneous graph with numRels
// relations: Etype must be set and every relation in [0,numRels).
func (b *Block) ValidateRel(numRels int) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if b.Etype == nil {
		return fmt.Errorf("block: no edge types in a block of a heterogeneous graph")
	}
	return b.validateEtype(numRels)
}

// validateEtype checks Etype, if set: one relation per edge, non-negative
// (and below numRels when numRels >= 0), grouped ascending per destination.
func (b *Block) validateEtype(numRels int) error {
	if b.Etype == nil {
		return nil
	}
	if len(b.Etype) != len(b.Indices) {
		return fmt.Errorf("block: %d edge types for %d edges", len(b.Etype), len(b.Indices))
	}
	for i := range b.NumDst {
		lo, hi := b.Indptr[i], b.Indptr[i+1]
		for e := lo; e < hi; e++ {
			r := b.Etype[e]
			if r < 0 || (numRels >= 0 && int(r) >= numRels) {
				return fmt.Errorf("block: edge %d has relation %d outside [0,%d)", e, r, numRels)
			}
			if e > lo && r < b.Etype[e-1] {
				return fmt.Errorf("block: destination %d: relation %d after relation %d (edges not grouped ascending)", i, r, b.Etype[e-1])
			}
		}
	}
	return nil
}

// ValidateBlocks checks every block and the chaining rule of a forward-order
// sample: the nodes of block l+1 are the destinations of block l.
func ValidateBlocks(blocks []Block) error {
	for l := range blocks {
		if err := blocks[l].Validate(); err != nil {
			return fmt.Errorf("layer %d: %w", l, err)
		}
		if l+1 < len(blocks) {
			d := blocks[l].NumDst
			if !slices.Equal(blocks[l+1].Nodes, blocks[l].Nodes[:d]) || !slices.Equal(blocks[l+1].Orig, blocks[l].Orig[:d]) ||
				(blocks[l].Time != nil && !slices.Equal(blocks[l+1].Time, blocks[l].Time[:d])) {
				return fmt.Errorf("layer %d: nodes differ from the destinations of layer %d", l+1, l)
			}
		}
	}
	return nil
}
