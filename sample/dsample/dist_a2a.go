package dsample

import (
	"fmt"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/internal/par"
	"mpignn/sample"
)

// The Alltoallv path of the distributed sampler (transport alltoallv).
//
// Without one-sided reads, fetching a remote node's degree and then its
// chosen neighbors costs two request/response exchanges per layer. Since a
// node's choice depends only on its key, the owner can make it instead: each
// rank sends its remote destinations to their owners, the owners choose the
// positions and answer with the chosen neighbors, and one request/response
// round (two Alltoallv) per layer suffices. The result is identical to the
// one-sided path's, which the tests check.
//
// Wire format (int64). A request chunk to one owner is a header
// [seed, epoch, batch, layer, fanout, replace, temporal] followed by
// {new id, orig id} per destination (an empty chunk when there is none).
// The header makes the owner use exactly the requester's key even if ranks
// passed different bases. A response chunk holds, per requested
// destination in request order, [n, {new id, orig id} × n].
//
// Temporal layers (header temporal = sample.Temporal.Code(), non-zero) add
// the row's time as the last word of every request row, and the owner
// answers [n, {new id, orig id, edge time} × n].
//
// On a graph with edge features (every rank has them, or none) every
// answered edge ends with one more word, its global edge row, whose
// features the requester fetches (edgefeat.go).

const a2aHeader = 7

// maxFanout bounds the fanout a peer's request may carry. With replacement
// the owner draws that many neighbors per destination, so an absurd value
// from a confused peer would allocate without limit; no real fanout is
// anywhere near 2^24.
const maxFanout = 1 << 24

// a2aScratch holds the Alltoallv path's reusable buffers.
type a2aScratch struct {
	counts  []int64
	send    []int64
	next    []int64
	resp    []int64
	rcounts []int64
	cursor  []int64 // per owner: read position in the responses
	ownerOf []int32 // per destination: owner rank, or -1 if own
	// Serving a chunk: per request row its first local edge and degree
	// (or eligible prefix); per block of rows the answers' length, then
	// offset, and the first bad row (-1: none).
	first, elig []int64
	blk, bad    []int64
}

// The typed exchange (a relation plan with transport alltoallv) has the same
// rounds and header, with header[4] (the fanout) 0, and one quad
// {new id, orig id, relation, fanout} per requested relation row; the
// response holds one [n, {new id, orig id} × n] per row. A homogeneous
// request (non-zero header fanout) sent to a typed server, or the reverse,
// is refused by the shape checks, not misread.
const a2aRelWords = 4

// sampleLayerA2A builds one block using the owner-side exchange, over node
// rows or relation rows alike: remote rows are chosen by their owners, own
// rows here. It always makes exactly two Alltoallv calls.
func (s *Sampler) sampleLayerA2A(dstG, dstO []int64, k sample.Key, fan []int, replace bool, out *sample.Block, st *sample.SampleStats) error {
	sc := &s.sm
	ac := &s.a2a
	p := s.g
	P, me := p.c.Size(), p.c.Rank()
	t0 := time.Now()
	// On a bad destination list, still make both Alltoallv calls (with no
	// requests), then fail.
	dstG, dstO, resetErr := s.startBlock(dstG, dstO)
	rows := s.layerRows(dstO, fan)
	// Requests grouped by owner (counting sort keeps row order within an
	// owner): {new id, orig id} per node row, {new id, orig id, relation,
	// fanout} per relation row.
	timed := sc.dstT != nil
	words := int64(2)
	if sc.rel {
		words = a2aRelWords
	}
	ew := int64(2) // words per answered edge
	if timed {
		words++
		ew = 3
	}
	if p.edgeFeat != nil {
		ew++ // the edge's global row, for its features
	}
	ac.counts = growInt64(ac.counts, P)
	clear(ac.counts)
	if cap(ac.ownerOf) < rows {
		ac.ownerOf = make([]int32, rows)
	}
	ac.ownerOf = ac.ownerOf[:rows]
	var ownerErr error
	for j := range rows {
		i, _ := sc.row(j)
		g := dstG[i]
		if p.inMemory(g) {
			ac.ownerOf[j] = -1
			continue
		}
		q := p.Owner(g)
		if q < 0 {
			// Still take part in both exchanges (treating the row as
			// empty), then fail.
			ownerErr = fmt.Errorf("node %d has no owner", g)
			ac.ownerOf[j] = -1
			continue
		}
		ac.ownerOf[j] = int32(q)
		ac.counts[q] += words
	}
	var header [a2aHeader]int64
	header[0], header[1], header[2], header[3] = int64(k.Seed), int64(k.Epoch), int64(k.Batch), int64(k.Layer)
	if !sc.rel {
		header[4] = int64(fan[0])
	}
	if replace {
		header[5] = 1
	}
	if timed {
		header[6] = s.tp.Code()
	}
	total := int64(0)
	for q := range P {
		if ac.counts[q] > 0 {
			ac.counts[q] += a2aHeader
		}
		total += ac.counts[q]
	}
	ac.send = growInt64(ac.send, int(total))
	ac.next = growInt64(ac.next, P)
	off := int64(0)
	for q := range P {
		ac.next[q] = off
		if ac.counts[q] > 0 {
			copy(ac.send[off:], header[:])
			ac.next[q] += a2aHeader
		}
		off += ac.counts[q]
	}
	for j, q := range ac.ownerOf {
		if q >= 0 {
			x := ac.next[q]
			i, r := sc.row(j)
			ac.send[x], ac.send[x+1] = dstG[i], sc.rowOrig[j]
			if sc.rel {
				ac.send[x+2], ac.send[x+3] = r, int64(fan[r])
			}
			if timed {
				ac.send[x+words-1] = sc.rowT[j]
			}
			ac.next[q] += words
		}
	}
	tl := time.Since(t0)
	t1 := time.Now()
	req, reqCounts, err := collectives.Alltoallv(p.c, ac.send, ac.counts)
	if err != nil {
		return err
	}
	tr := time.Since(t1)
	// Serve the other ranks' requests from the local arrays.
	t2 := time.Now()
	ac.rcounts = growInt64(ac.rcounts, P)
	ac.resp = ac.resp[:0]
	start := int64(0)
	// A malformed request is answered with nothing and reported after the
	// response exchange: every rank must make both Alltoallv calls, or the
	// requesters would wait for answers forever.
	var badReq error
	for q := range P {
		n := reqCounts[q]
		before := len(ac.resp)
		if n > 0 && badReq == nil {
			badReq = s.serveA2A(q, req[start:start+n])
			if badReq != nil {
				ac.resp = ac.resp[:before]
			}
		}
		ac.rcounts[q] = int64(len(ac.resp) - before)
		start += n
	}
	tl += time.Since(t2)
	t3 := time.Now()
	back, backCounts, err := collectives.Alltoallv(p.c, ac.resp, ac.rcounts)
	if err != nil {
		return err
	}
	if badReq != nil {
		s.skipEdgeFeat()
		return badReq
	}
	if ownerErr != nil {
		s.skipEdgeFeat()
		return ownerErr
	}
	tr += time.Since(t3)
	for q, n := range backCounts {
		if q != me {
			st.Bytes += 8 * n
		}
	}
	// Own rows choose locally; remote ones read their answers in row order
	// (answers come back in request order per owner). Laid out as the
	// one-sided path lays its rows out (rows.go): counts per row, prefix
	// sums per block of rows, then every block fills its own ranges.
	t4 := time.Now()
	if err := s.layoutA2A(rows, dstG, back, backCounts, ew, fan, replace); err != nil {
		s.skipEdgeFeat()
		return err
	}
	s.fillA2A(rows, back, ew, k, fan, replace)
	// Owners answer with the full choice (they need not know the set); the
	// requester drops the excluded edges, exactly as the one-sided path and
	// the references do, and counts what enters the block.
	if err := s.finishRows(dstG, out, st); err != nil {
		return err
	}
	tl += time.Since(t4)
	st.Local += tl
	st.Remote += tr
	return resetErr
}

// serveA2A appends to the response buffer the chosen neighbors of every
// row in rank q's request chunk, read in this rank's own mode (node or
// relation rows: every rank is in the same collective call). The chunk
// comes from a peer, so its shape, relations, fanouts and node ids are
// checked before they index anything.
func (s *Sampler) serveA2A(q int, chunk []int64) error {
	sc, ac, p := &s.sm, &s.a2a, s.g
	n := int64(len(chunk))
	if n < a2aHeader {
		return fmt.Errorf("rank %d sent a malformed request of %d words", q, n)
	}
	tq, err := sample.DecodeTemporal(chunk[6])
	if err != nil {
		return fmt.Errorf("rank %d sent a malformed request: %w", q, err)
	}
	timed := tq.On()
	if timed && p.times == nil {
		return fmt.Errorf("rank %d asked for temporal sampling, but this rank's partition has no edge times", q)
	}
	words := int64(2)
	if sc.rel {
		words = a2aRelWords
	}
	if timed {
		words++
	}
	if (n-a2aHeader)%words != 0 || sc.rel != (chunk[4] == 0) {
		return fmt.Errorf("rank %d sent a malformed request of %d words (header fanout %d; typed here: %t)", q, n, chunk[4], sc.rel)
	}
	kq := sample.Key{Seed: uint64(chunk[0]), Epoch: int(chunk[1]), Batch: int(chunk[2]), Layer: int(chunk[3])}
	if chunk[5] != 0 && chunk[5] != 1 {
		return fmt.Errorf("rank %d sent a request with replace flag %d", q, chunk[5])
	}
	rq := chunk[5] != 0
	ew := int64(2) // words per answered edge
	if timed {
		ew = 3
	}
	ef := p.edgeFeat != nil // every rank has edge features, or none
	if ef {
		ew++
	}
	// Rows are checked and counted first (in parallel), then answered at
	// the prefix sums of their answers' lengths, so the response is the
	// same bit for bit on any number of threads.
	rows := int((n - a2aHeader) / words)
	body := chunk[a2aHeader:]
	ln, lt := p.localNodes, p.localTimes
	ac.first = growInt64(ac.first, rows)
	ac.elig = growInt64(ac.elig, rows)
	ac.blk = blockCounts(ac.blk, rows)
	ac.bad = growInt64(ac.bad, len(ac.blk))
	par.Blocks(rows, rowBlock, 4*rowWork(rows), func(lo, hi int) {
		b := lo / rowBlock
		ac.bad[b] = -1
		size := int64(0)
		for j := lo; j < hi; j++ {
			g, r, fq := s.requestRow(body, j, words, chunk[4])
			if s.checkRequestRow(q, g, r, fq) != nil {
				ac.bad[b] = int64(j)
				return
			}
			lr := (g-p.memLo)*p.R + r
			first, deg := ln[2*lr]-p.edgeBase, ln[2*lr+1]
			var c int64
			if timed {
				deg = tq.Eligible(lt[first:first+deg], body[int64(j)*words+words-1])
				c = tq.NumChoices(deg, int(fq), rq)
			} else {
				c = sample.NumChoices(deg, int(fq), rq)
			}
			ac.first[j], ac.elig[j] = first, deg
			size += 1 + ew*c
		}
		ac.blk[b] = size
	})
	for _, j := range ac.bad {
		if j >= 0 {
			g, r, fq := s.requestRow(body, int(j), words, chunk[4])
			return s.checkRequestRow(q, g, r, fq)
		}
	}
	base := int64(len(ac.resp))
	total := offsets64(ac.blk)
	ac.resp = slices.Grow(ac.resp, int(total))[:base+total]
	le := p.localEdges
	par.Blocks(rows, rowBlock, rowWork(rows)+int(total), func(lo, hi int) {
		var spare []int64
		x := base + ac.blk[lo/rowBlock]
		for j := lo; j < hi; j++ {
			_, r, fq := s.requestRow(body, j, words, chunk[4])
			w := body[int64(j)*words:]
			kq := kq
			kq.Node = w[1]*p.R + r
			first, deg := ac.first[j], ac.elig[j]
			var c int64
			if timed {
				c = tq.NumChoices(deg, int(fq), rq)
			} else {
				c = sample.NumChoices(deg, int(fq), rq)
			}
			// Choose into the front of the row's answer, then spread the
			// positions into edges from the back (edge i goes to words
			// ew*i.., at or past position i, so nothing unread is
			// overwritten).
			ans := ac.resp[x+1 : x+1+ew*c]
			if timed {
				spare = tq.ChooseInto(kq, w[words-1], deg, int(fq), rq, ans[:c], spare)
			} else {
				spare = sample.ChooseInto(kq, deg, int(fq), rq, ans[:c], spare)
			}
			ac.resp[x] = c
			for i := c - 1; i >= 0; i-- {
				q := first + ans[i]
				ans[ew*i], ans[ew*i+1] = le[2*q], le[2*q+1]
				if timed {
					ans[ew*i+2] = lt[q]
				}
				if ef {
					ans[ew*i+ew-1] = p.edgeBase + q
				}
			}
			x += 1 + ew*c
		}
	})
	return nil
}

// requestRow reads request row j of a chunk's body (rows of words words):
// its node, relation and fanout (the header's, hfan, for node rows).
func (s *Sampler) requestRow(body []int64, j int, words, hfan int64) (g, r, fq int64) {
	w := body[int64(j)*words:]
	g, fq = w[0], hfan
	if s.sm.rel {
		r, fq = w[2], w[3]
	}
	return g, r, fq
}

// checkRequestRow checks a request row of rank q before it indexes
// anything.
func (s *Sampler) checkRequestRow(q int, g, r, fq int64) error {
	p := s.g
	if !p.inMemory(g) {
		return fmt.Errorf("rank %d asked rank %d for node %d, which it does not hold", q, p.c.Rank(), g)
	}
	if r < 0 || r >= p.R || fq == 0 || fq < -1 || fq > maxFanout {
		return fmt.Errorf("rank %d sent a request for relation %d with fanout %d", q, r, fq)
	}
	return nil
}

// layoutA2A counts every row's chosen neighbors after the exchange: own
// rows from their degree (or eligible prefix, found here), remote rows from
// their answers, which it checks, in row order per owner, as it reads them
// (a light serial pass over the remote rows). It sets sc.rowStart (own
// rows: first local edge; remote rows: -1-(the answer's position in
// back)), sc.deg / sc.elig, the counts in sc.posOff[1:] and the block
// offsets sc.blkPos.
func (s *Sampler) layoutA2A(rows int, dstG, back, backCounts []int64, ew int64, fan []int, replace bool) error {
	sc, ac, p := &s.sm, &s.a2a, s.g
	R := p.R
	tp := s.tp
	timed := sc.dstT != nil
	ln, lt := p.localNodes, p.localTimes
	sc.rowStart = growInt64(sc.rowStart, rows)
	sc.deg = growInt64(sc.deg, rows)
	if timed {
		sc.elig = growInt64(sc.elig, rows)
	}
	sc.posOff = growInt64(sc.posOff, rows+1)
	sc.posOff[0] = 0
	sc.blkPos = blockCounts(sc.blkPos, rows)
	par.Blocks(rows, rowBlock, 4*rowWork(rows), func(lo, hi int) {
		n := int64(0)
		for j := lo; j < hi; j++ {
			if ac.ownerOf[j] >= 0 {
				sc.posOff[j+1] = 0
				continue
			}
			i, r := sc.row(j)
			lr := (dstG[i]-p.memLo)*R + r
			first, deg := ln[2*lr]-p.edgeBase, ln[2*lr+1]
			sc.rowStart[j], sc.deg[j] = first, deg
			var c int64
			if timed {
				e := tp.Eligible(lt[first:first+deg], sc.rowT[j])
				sc.elig[j] = e
				c = tp.NumChoices(e, fan[r], replace)
			} else {
				c = sample.NumChoices(deg, fan[r], replace)
			}
			sc.posOff[j+1] = c
			n += c
		}
		sc.blkPos[lo/rowBlock] = n
	})
	if P := p.c.Size(); P > 1 {
		ac.cursor = growInt64(ac.cursor, P)
		off := int64(0)
		for q := range P {
			ac.cursor[q] = off
			off += backCounts[q]
		}
		for j, q := range ac.ownerOf {
			if q < 0 {
				continue
			}
			c := ac.cursor[q]
			if c >= int64(len(back)) {
				return fmt.Errorf("rank %d answered fewer rows than asked", q)
			}
			n := back[c]
			if n < 0 || c+1+ew*n > int64(len(back)) {
				return fmt.Errorf("rank %d sent a malformed answer", q)
			}
			sc.rowStart[j] = -1 - c
			sc.posOff[j+1] = n
			sc.blkPos[j/rowBlock] += n
			ac.cursor[q] = c + 1 + ew*n
		}
	}
	return nil
}

// fillA2A chooses the own rows' neighbors and copies the remote rows'
// answers into sc.srcG/srcO (sc.srcT) at the offsets layoutA2A counted,
// every block of rows in parallel, and turns sc.posOff into offsets.
func (s *Sampler) fillA2A(rows int, back []int64, ew int64, k sample.Key, fan []int, replace bool) {
	sc, p := &s.sm, s.g
	R := p.R
	tp := s.tp
	timed := sc.dstT != nil
	le, lt := p.localEdges, p.localTimes
	total := offsets64(sc.blkPos)
	sc.pos = growInt64(sc.pos, int(total))
	sc.srcG, sc.srcO = growInt64(sc.srcG, int(total)), growInt64(sc.srcO, int(total))
	if timed {
		sc.srcT = growInt64(sc.srcT, int(total))
	}
	ef := p.edgeFeat != nil
	if ef {
		sc.srcE = growInt64(sc.srcE, int(total))
	}
	par.Blocks(rows, rowBlock, rowWork(rows)+8*int(total), func(lo, hi int) {
		var spare []int64
		kk := k
		off := sc.blkPos[lo/rowBlock]
		for j := lo; j < hi; j++ {
			n := sc.posOff[j+1]
			sc.posOff[j+1] = off + n
			if start := sc.rowStart[j]; start < 0 {
				c := -1 - start
				for x := range n {
					a := c + 1 + ew*x
					sc.srcG[off+x], sc.srcO[off+x] = back[a], back[a+1]
					if timed {
						sc.srcT[off+x] = back[a+2]
					}
					if ef {
						sc.srcE[off+x] = back[a+ew-1]
					}
				}
				off += n
				continue
			}
			_, r := sc.row(j)
			first := sc.rowStart[j]
			kk.Node = sc.rowOrig[j]*R + r // the original id for node rows
			dst := sc.pos[off : off+n]
			if timed {
				spare = tp.ChooseInto(kk, sc.rowT[j], sc.elig[j], fan[r], replace, dst, spare)
			} else {
				spare = sample.ChooseInto(kk, sc.deg[j], fan[r], replace, dst, spare)
			}
			for x, q := range dst {
				e := first + q
				sc.srcG[off+int64(x)], sc.srcO[off+int64(x)] = le[2*e], le[2*e+1]
				if timed {
					sc.srcT[off+int64(x)] = lt[e]
				}
				if ef {
					sc.srcE[off+int64(x)] = p.edgeBase + e
				}
			}
			off += n
		}
	})
}
