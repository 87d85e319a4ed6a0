package dsample

import (
	"fmt"
	"time"

	"mpignn/sample"
)

// Temporal sampling on the distributed graph (see sample/temporal.go for
// what it draws).
//
// Each row (a destination, or one of its relation rows) is expanded at its
// destination's time T: its eligible edges are the prefix of the row, in
// (time, original id) order, whose times are <= T (or < T). Own rows find
// the prefix by binary search in the local time array. With transport
// alltoallv the owner does it when it answers. With transport rma a remote
// row's times are read one-sidedly in a fixed number of reads: a row of at
// most timeFences edges is read whole; a longer row is read at timeFences
// evenly spaced positions ("fences"), which narrows the prefix end to the
// gap between two fences, and then that gap (at most deg/timeFences edges)
// is read. So a layer makes at most five batched reads (degrees, fences,
// gaps, chosen edges, their times), every rank the same number whatever
// its rows, and reads 8·min(deg, 2·timeFences + deg/timeFences) bytes of
// times per remote row rather than the whole row.

// timeFences is the number of fences read per long remote row. 32 keeps the
// fence read at 256 bytes per row and the gap read at 1/32 of the row.
const timeFences = 32

// SetTemporal sets the temporal strategy of the following SampleRelAt calls
// (off: plain sampling). Temporal sampling needs a timed partition. Every
// rank must set the same configuration.
func (s *Sampler) SetTemporal(tp sample.Temporal) error {
	if tp.On() && !s.g.Timed() {
		return fmt.Errorf("temporal sampling (%s) needs edge times, but the partition has none (partition it with --time)", tp)
	}
	if _, err := sample.DecodeTemporal(tp.Code()); err != nil {
		return err
	}
	s.tp = tp
	return nil
}

// Temporal returns the temporal configuration.
func (s *Sampler) Temporal() sample.Temporal { return s.tp }

// SampleRelAt is SampleRelAtWithStats without counters.
func (s *Sampler) SampleRelAt(seedsGlobal, seedsOrig, seedsTime []int64, fanouts sample.RelFanouts, base sample.Key, replace bool) ([]sample.Block, error) {
	return s.SampleRelAtWithStats(seedsGlobal, seedsOrig, seedsTime, fanouts, base, replace, nil)
}

// SampleRelAtWithStats is SampleRelWithStats with temporal sampling: seed i
// is expanded at time seedsTime[i], and so is every node of its
// neighbourhood. It draws exactly sample.HeteroReference.SampleRelAt's
// blocks (Time and EdgeTime included) on any number of ranks and either
// transport. SetTemporal must have turned temporal sampling on. It is
// collective.
func (s *Sampler) SampleRelAtWithStats(seedsGlobal, seedsOrig, seedsTime []int64, fanouts sample.RelFanouts, base sample.Key, replace bool, st *sample.SampleStats) ([]sample.Block, error) {
	if !s.tp.On() {
		return nil, fmt.Errorf("sample on rank %d: seed times given but temporal sampling is off", s.g.c.Rank())
	}
	if err := fanouts.Check(int(s.g.R)); err != nil {
		return nil, fmt.Errorf("sample on rank %d: %w", s.g.c.Rank(), err)
	}
	if seedsTime == nil {
		seedsTime = []int64{} // nil would mean "not temporal" below
	}
	s.sm.bb.SetTyped(s.g.plan.Typed())
	if !s.g.plan.Typed() {
		// Homogeneous: node rows, as Sample draws them.
		f := make([]int, len(fanouts))
		for l := range fanouts {
			f[l] = fanouts[l][0]
		}
		return s.sampleLayers(seedsGlobal, seedsOrig, seedsTime, f, nil, base, replace, st)
	}
	return s.sampleLayers(seedsGlobal, seedsOrig, seedsTime, nil, fanouts, base, replace, st)
}

// addRowsAt feeds the builder every row's chosen neighbors with their edge
// times, in row order.
func (s *Sampler) addRowsAt() error {
	sc := &s.sm
	typed := s.g.plan.Typed()
	for j := range len(sc.posOff) - 1 {
		i, r := sc.row(j)
		lo, hi := sc.posOff[j], sc.posOff[j+1]
		var err error
		if typed {
			err = sc.bb.AddNeighborsRelTimed(i, int32(r), sc.srcG[lo:hi], sc.srcO[lo:hi], sc.srcT[lo:hi])
		} else {
			err = sc.bb.AddNeighborsTimed(i, sc.srcG[lo:hi], sc.srcO[lo:hi], sc.srcT[lo:hi])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sampleLayerAt is sampleLayer (transport rma) for temporal rows: it finds
// every row's eligible prefix (remote rows through the fence and gap reads),
// chooses within it, and reads the chosen remote edges with their times.
func (s *Sampler) sampleLayerAt(dstG, dstO []int64, k sample.Key, fan []int, replace bool, out *sample.Block, st *sample.SampleStats) error {
	sc := &s.sm
	p := s.g
	R := p.R
	tp := s.tp
	t0 := time.Now()
	dstG, dstO, resetErr := s.startBlock(dstG, dstO)
	rows := s.layerRows(dstO, fan)
	tl0 := time.Since(t0)
	tl, tr, err := s.readRows(dstG, rows, st)
	if err != nil {
		return err
	}
	tl += tl0
	b0 := p.edges.Stats().Bytes + p.times.Stats().Bytes
	lt := p.localTimes
	// Own rows: binary search. Remote rows: whole short rows, or fences.
	t1 := time.Now()
	sc.elig = growInt64(sc.elig, rows)
	sc.timeReq = sc.timeReq[:0]
	for j := range rows {
		start, deg := sc.rowStart[j], sc.deg[j]
		if start >= 0 {
			sc.elig[j] = tp.Eligible(lt[start:start+deg], sc.rowT[j])
			continue
		}
		g0 := -1 - start
		if deg <= timeFences {
			for q := range deg {
				sc.timeReq = append(sc.timeReq, g0+q)
			}
		} else {
			for f := range int64(timeFences) {
				sc.timeReq = append(sc.timeReq, g0+f*deg/timeFences)
			}
		}
	}
	tl += time.Since(t1)
	t2 := time.Now()
	sc.timeVal = growInt64(sc.timeVal, len(sc.timeReq))
	if err := p.times.Fetch(sc.timeReq, byteView(sc.timeVal)); err != nil {
		return err
	}
	tr += time.Since(t2)
	// Fences bracket the prefix end: fence J-1 (at q(J-1)) is eligible and
	// fence J (at q(J), or the row end) is not, so the prefix ends in
	// (q(J-1), q(J)]; the edges strictly between are read next.
	t3 := time.Now()
	sc.brRow, sc.brLo = sc.brRow[:0], sc.brLo[:0]
	sc.timeReq = sc.timeReq[:0]
	off := int64(0)
	for j := range rows {
		start, deg := sc.rowStart[j], sc.deg[j]
		if start >= 0 {
			continue
		}
		T := sc.rowT[j]
		if deg <= timeFences {
			sc.elig[j] = tp.Eligible(sc.timeVal[off:off+deg], T)
			off += deg
			continue
		}
		J := tp.Eligible(sc.timeVal[off:off+timeFences], T)
		off += timeFences
		if J == 0 {
			sc.elig[j] = 0
			continue
		}
		lo, hi := (J-1)*deg/timeFences+1, deg
		if J < timeFences {
			hi = J * deg / timeFences
		}
		sc.elig[j] = lo
		if lo < hi {
			sc.brRow = append(sc.brRow, int32(j))
			sc.brLo = append(sc.brLo, lo, hi)
			g0 := -1 - start
			for q := lo; q < hi; q++ {
				sc.timeReq = append(sc.timeReq, g0+q)
			}
		}
	}
	tl += time.Since(t3)
	t4 := time.Now()
	sc.timeVal = growInt64(sc.timeVal, len(sc.timeReq))
	if err := p.times.Fetch(sc.timeReq, byteView(sc.timeVal)); err != nil {
		return err
	}
	tr += time.Since(t4)
	// Close the gaps, then choose in every row's prefix.
	t5 := time.Now()
	off = 0
	for b, j := range sc.brRow {
		lo, hi := sc.brLo[2*b], sc.brLo[2*b+1]
		sc.elig[j] = lo + tp.Eligible(sc.timeVal[off:off+hi-lo], sc.rowT[j])
		off += hi - lo
	}
	sc.pos = sc.pos[:0]
	sc.posOff = append(sc.posOff[:0], 0)
	sc.edgeReq = sc.edgeReq[:0]
	for j, o := range sc.rowOrig {
		_, r := sc.row(j)
		k.Node = o*R + r
		before := len(sc.pos)
		sc.pos = tp.Choose(k, sc.rowT[j], sc.elig[j], fan[r], replace, sc.pos)
		if start := sc.rowStart[j]; start < 0 {
			start = -1 - start
			for _, q := range sc.pos[before:] {
				sc.edgeReq = append(sc.edgeReq, start+q)
			}
		}
		sc.posOff = append(sc.posOff, int64(len(sc.pos)))
	}
	tl += time.Since(t5)
	// The chosen remote edges and their times.
	t6 := time.Now()
	sc.edgeRows = growInt64(sc.edgeRows, 2*len(sc.edgeReq))
	if err := p.edges.Fetch(sc.edgeReq, byteView(sc.edgeRows)); err != nil {
		return err
	}
	sc.edgeTime = growInt64(sc.edgeTime, len(sc.edgeReq))
	if err := p.times.Fetch(sc.edgeReq, byteView(sc.edgeTime)); err != nil {
		return err
	}
	tr += time.Since(t6)
	st.Bytes += p.edges.Stats().Bytes + p.times.Stats().Bytes - b0
	t7 := time.Now()
	le := p.localEdges
	n := len(sc.pos)
	sc.srcG, sc.srcO, sc.srcT = growInt64(sc.srcG, n), growInt64(sc.srcO, n), growInt64(sc.srcT, n)
	e := 0
	for j := range rows {
		lo, hi := sc.posOff[j], sc.posOff[j+1]
		if start := sc.rowStart[j]; start >= 0 {
			for x := lo; x < hi; x++ {
				q := start + sc.pos[x]
				sc.srcG[x], sc.srcO[x], sc.srcT[x] = le[2*q], le[2*q+1], lt[q]
			}
		} else {
			for x := lo; x < hi; x++ {
				sc.srcG[x], sc.srcO[x], sc.srcT[x] = sc.edgeRows[2*e], sc.edgeRows[2*e+1], sc.edgeTime[e]
				e++
			}
		}
	}
	if err := s.finishRows(dstG, out, st); err != nil {
		return err
	}
	tl += time.Since(t7)
	if resetErr != nil {
		return resetErr
	}
	st.Local += tl
	st.Remote += tr
	return nil
}
