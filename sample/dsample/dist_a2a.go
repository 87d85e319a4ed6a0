package dsample

import (
	"fmt"
	"time"

	"mpignn/collectives"
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
	R := p.R
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
		if p.Owns(g) {
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
		return badReq
	}
	if ownerErr != nil {
		return ownerErr
	}
	tr += time.Since(t3)
	for q, n := range backCounts {
		if q != me {
			st.Bytes += 8 * n
		}
	}
	// Own rows choose locally; remote ones read their answers in row order
	// (answers come back in request order per owner).
	t4 := time.Now()
	ac.cursor = growInt64(ac.cursor, P)
	off = 0
	for q := range P {
		ac.cursor[q] = off
		off += backCounts[q]
	}
	ln, le, lt := p.localNodes, p.localEdges, p.localTimes
	sc.posOff = append(sc.posOff[:0], 0)
	sc.srcG, sc.srcO, sc.srcT = sc.srcG[:0], sc.srcO[:0], sc.srcT[:0]
	for j, q := range ac.ownerOf {
		if q < 0 {
			i, r := sc.row(j)
			lr := (dstG[i]-p.lo)*R + r
			first, deg := ln[2*lr]-p.edgeBase, ln[2*lr+1]
			k.Node = sc.rowOrig[j]*R + r // the original id for node rows
			if timed {
				T := sc.rowT[j]
				sc.pos = s.tp.Choose(k, T, s.tp.Eligible(lt[first:first+deg], T), fan[r], replace, sc.pos[:0])
			} else {
				sc.pos = sample.ChoosePositions(k, deg, fan[r], replace, sc.pos[:0])
			}
			for _, x := range sc.pos {
				e := 2 * (first + x)
				sc.srcG = append(sc.srcG, le[e])
				sc.srcO = append(sc.srcO, le[e+1])
				if timed {
					sc.srcT = append(sc.srcT, lt[first+x])
				}
			}
		} else {
			c := ac.cursor[q]
			if c >= int64(len(back)) {
				return fmt.Errorf("rank %d answered fewer rows than asked", q)
			}
			n := back[c]
			if n < 0 || c+1+ew*n > int64(len(back)) {
				return fmt.Errorf("rank %d sent a malformed answer", q)
			}
			for x := c + 1; x < c+1+ew*n; x += ew {
				sc.srcG = append(sc.srcG, back[x])
				sc.srcO = append(sc.srcO, back[x+1])
				if timed {
					sc.srcT = append(sc.srcT, back[x+2])
				}
			}
			ac.cursor[q] = c + 1 + ew*n
		}
		sc.posOff = append(sc.posOff, int64(len(sc.srcG)))
	}
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
	ln, le, lt := p.localNodes, p.localEdges, p.localTimes
	for j := int64(a2aHeader); j < n; j += words {
		g, o, r, fq := chunk[j], chunk[j+1], int64(0), chunk[4]
		if sc.rel {
			r, fq = chunk[j+2], chunk[j+3]
		}
		if g < p.lo || g >= p.hi {
			return fmt.Errorf("rank %d asked rank %d for node %d, which it does not own", q, p.c.Rank(), g)
		}
		if r < 0 || r >= p.R || fq == 0 || fq < -1 || fq > maxFanout {
			return fmt.Errorf("rank %d sent a request for relation %d with fanout %d", q, r, fq)
		}
		lr := (g-p.lo)*p.R + r
		first, deg := ln[2*lr]-p.edgeBase, ln[2*lr+1]
		kq.Node = o*p.R + r
		if timed {
			T := chunk[j+words-1]
			sc.pos = tq.Choose(kq, T, tq.Eligible(lt[first:first+deg], T), int(fq), rq, sc.pos[:0])
		} else {
			sc.pos = sample.ChoosePositions(kq, deg, int(fq), rq, sc.pos[:0])
		}
		ac.resp = append(ac.resp, int64(len(sc.pos)))
		for _, x := range sc.pos {
			e := 2 * (first + x)
			ac.resp = append(ac.resp, le[e], le[e+1])
			if timed {
				ac.resp = append(ac.resp, lt[first+x])
			}
		}
	}
	return nil
}
