package dsample

import (
	"mpignn/internal/par"
	"mpignn/internal/prefetch"
	"mpignn/sample"
)

// The row loops of a layer on all of a rank's threads.
//
// A row's choice is a pure function of its key, degree (or eligible
// prefix), fanout and replace flag, and how many positions it yields is
// known before choosing (sample.NumChoices). So every layer is laid out
// first: each block of rows counts its choices (and, among them, the
// remote ones that become edge requests), the block counts are
// prefix-summed, and then every block chooses and collects straight into
// its own ranges of pos, edgeReq and srcG/srcO, in parallel. The cut into
// blocks of rowBlock rows depends on the number of rows only, and every
// array is written at offsets that depend on the rows only, so the layer
// is the same bit for bit on any number of threads, and remote requests
// stay in row order (the order the Fetch answers them in).

// rowBlock is the number of rows per block of the row loops.
const rowBlock = 512

// rowWork estimates the work of a loop over rows (for par's cut-off): a
// row costs a few loads and a hash, about as much as 8 simple operations.
func rowWork(rows int) int { return 8 * rows }

// offsets64 turns per-block counts into exclusive prefix sums in place and
// returns the total (par.Offsets for int64).
func offsets64(c []int64) int64 {
	t := int64(0)
	for i, n := range c {
		c[i] = t
		t += n
	}
	return t
}

// blockCounts returns the scratch s resized to the number of blocks of
// rows.
func blockCounts(s []int64, rows int) []int64 {
	return growInt64(s, par.NumBlocks(rows, rowBlock))
}

// chooseRows lays out and chooses every row's positions: sc.posOff (rows+1
// entries), sc.pos, and sc.edgeReq, the global edge rows of the remote
// rows' choices in row order, from sc.rowStart and sc.deg (and, for
// temporal rows, sc.elig and sc.rowT with the sampler's strategy).
func (s *Sampler) chooseRows(rows int, k sample.Key, fan []int, replace bool) {
	sc := &s.sm
	R := s.g.R
	tp := s.tp
	timed := sc.dstT != nil
	count := func(j int, r int64) int64 {
		if timed {
			return tp.NumChoices(sc.elig[j], fan[r], replace)
		}
		return sample.NumChoices(sc.deg[j], fan[r], replace)
	}
	sc.posOff = growInt64(sc.posOff, rows+1)
	sc.blkPos = blockCounts(sc.blkPos, rows)
	sc.blkReq = blockCounts(sc.blkReq, rows)
	par.Blocks(rows, rowBlock, rowWork(rows), func(lo, hi int) {
		var n, req int64
		for j := lo; j < hi; j++ {
			_, r := sc.row(j)
			c := count(j, r)
			sc.posOff[j+1] = c
			n += c
			if sc.rowStart[j] < 0 {
				req += c
			}
		}
		sc.blkPos[lo/rowBlock], sc.blkReq[lo/rowBlock] = n, req
	})
	total := offsets64(sc.blkPos)
	sc.pos = growInt64(sc.pos, int(total))
	sc.edgeReq = growInt64(sc.edgeReq, int(offsets64(sc.blkReq)))
	sc.posOff[0] = 0
	par.Blocks(rows, rowBlock, rowWork(rows)+8*int(total), func(lo, hi int) {
		var spare []int64 // only for rows that need more room than their range
		kk := k
		off, req := sc.blkPos[lo/rowBlock], sc.blkReq[lo/rowBlock]
		for j := lo; j < hi; j++ {
			_, r := sc.row(j)
			n := sc.posOff[j+1]
			dst := sc.pos[off : off+n]
			kk.Node = sc.rowOrig[j]*R + r // the original id for node rows
			if timed {
				spare = tp.ChooseInto(kk, sc.rowT[j], sc.elig[j], fan[r], replace, dst, spare)
			} else {
				spare = sample.ChooseInto(kk, sc.deg[j], fan[r], replace, dst, spare)
			}
			if start := sc.rowStart[j]; start < 0 {
				start = -1 - start // global edge row of a remote row
				for x, q := range dst {
					sc.edgeReq[req+int64(x)] = start + q
				}
				req += n
			}
			off += n
			sc.posOff[j+1] = off
		}
	})
}

// collectRows fills sc.srcG/srcO (and sc.srcT for temporal rows) with
// every row's chosen neighbors, at the rows' offsets: own rows from the
// local edge arrays, remote rows from the fetched sc.edgeRows (and
// sc.edgeTime) in request order, as chooseRows laid them out.
func (s *Sampler) collectRows(rows int) {
	sc := &s.sm
	p := s.g
	timed := sc.dstT != nil
	le, lt := p.localEdges, p.localTimes
	n := len(sc.pos)
	sc.srcG, sc.srcO = growInt64(sc.srcG, n), growInt64(sc.srcO, n)
	if timed {
		sc.srcT = growInt64(sc.srcT, n)
	}
	ef := p.edgeFeat != nil
	if ef {
		sc.srcE = growInt64(sc.srcE, n)
	}
	par.Blocks(rows, rowBlock, rowWork(rows)+4*n, func(lo, hi int) {
		e := sc.blkReq[lo/rowBlock]
		for j := lo; j < hi; j++ {
			if k := j + prefetchAhead; k < hi {
				s.prefetchRow(k)
			}
			a, b := sc.posOff[j], sc.posOff[j+1]
			if start := sc.rowStart[j]; start >= 0 {
				for x := a; x < b; x++ {
					q := start + sc.pos[x]
					sc.srcG[x], sc.srcO[x] = le[2*q], le[2*q+1]
					if timed {
						sc.srcT[x] = lt[q]
					}
					if ef {
						sc.srcE[x] = p.edgeBase + q // the edge's global row
					}
				}
				continue
			}
			for x := a; x < b; x++ {
				sc.srcG[x], sc.srcO[x] = sc.edgeRows[2*e], sc.edgeRows[2*e+1]
				if timed {
					sc.srcT[x] = sc.edgeTime[e]
				}
				if ef {
					sc.srcE[x] = sc.edgeReq[e]
				}
				e++
			}
		}
	})
}

// prefetchAhead is how many rows ahead collectRows prefetches the edges it
// will read: a row's sampled edges lie at a scattered place of the
// partition's edge arrays, and its first read would otherwise wait on
// memory.
const prefetchAhead = 8

// prefetchRow prefetches the local edges (and times) between the first and
// the last sampled position of row j, if it is an owned row.
func (s *Sampler) prefetchRow(j int) {
	sc := &s.sm
	start := sc.rowStart[j]
	a, b := sc.posOff[j], sc.posOff[j+1]
	if start < 0 || a == b {
		return
	}
	q0, q1 := start+sc.pos[a], start+sc.pos[b-1]
	prefetch.Int64s(s.g.localEdges[2*q0 : 2*q1+2])
	if lt := s.g.localTimes; lt != nil {
		prefetch.Int64s(lt[q0 : q1+1])
	}
}

// countRows adds to st the counters of what enters the block: the
// destinations by owner, and the edges of their rows.
func (s *Sampler) countRows(dstG []int64, st *sample.SampleStats) {
	sc := &s.sm
	p := s.g
	sc.blkPos = blockCounts(sc.blkPos, len(dstG))
	par.Blocks(len(dstG), rowBlock, len(dstG), func(lo, hi int) {
		n := int64(0)
		for _, g := range dstG[lo:hi] {
			if p.inMemory(g) {
				n++
			}
		}
		sc.blkPos[lo/rowBlock] = n
	})
	local := int64(0)
	for _, n := range sc.blkPos {
		local += n
	}
	st.LocalNodes += local
	st.RemoteNodes += int64(len(dstG)) - local
	rows := len(sc.posOff) - 1
	sc.blkPos = blockCounts(sc.blkPos, rows)
	par.Blocks(rows, rowBlock, rows, func(lo, hi int) {
		n := int64(0)
		for j := lo; j < hi; j++ {
			if i, _ := sc.row(j); p.inMemory(dstG[i]) {
				n += sc.posOff[j+1] - sc.posOff[j]
			}
		}
		sc.blkPos[lo/rowBlock] = n
	})
	local = 0
	for _, n := range sc.blkPos {
		local += n
	}
	st.LocalEdges += local
	st.RemoteEdges += sc.posOff[rows] - local
}
