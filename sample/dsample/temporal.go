package dsample

import (
	"fmt"
	"time"

	"mpignn/collectives"
	"mpignn/internal/par"
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

// SetTemporal sets the temporal strategy of the following Sample calls
// with seed times (off: plain sampling). Temporal sampling needs a timed partition. Every
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
	nrem := sc.nrem
	par.Blocks(rows, rowBlock, 4*rowWork(rows), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if start, deg := sc.rowStart[j], sc.deg[j]; start >= 0 {
				sc.elig[j] = tp.Eligible(lt[start:start+deg], sc.rowT[j])
			}
		}
	})
	// The remote rows' reads (serial: their requests are in row order, and
	// a row's count depends on its degree; they are light loops).
	for j := range rows {
		if nrem == 0 {
			break
		}
		start, deg := sc.rowStart[j], sc.deg[j]
		if start >= 0 {
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
	if err := p.times.Fetch(sc.timeReq, collectives.Bytes(sc.timeVal)); err != nil {
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
	if err := p.times.Fetch(sc.timeReq, collectives.Bytes(sc.timeVal)); err != nil {
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
	s.chooseRows(rows, k, fan, replace)
	tl += time.Since(t5)
	// The chosen remote edges and their times.
	t6 := time.Now()
	sc.edgeRows = growInt64(sc.edgeRows, 2*len(sc.edgeReq))
	if err := p.edges.Fetch(sc.edgeReq, collectives.Bytes(sc.edgeRows)); err != nil {
		return err
	}
	sc.edgeTime = growInt64(sc.edgeTime, len(sc.edgeReq))
	if err := p.times.Fetch(sc.edgeReq, collectives.Bytes(sc.edgeTime)); err != nil {
		return err
	}
	tr += time.Since(t6)
	st.Bytes += p.edges.Stats().Bytes + p.times.Stats().Bytes - b0
	t7 := time.Now()
	s.collectRows(rows)
	return s.endLayer(dstG, out, st, tl, tr, t7, resetErr)
}

// seedTimes returns the times node seeds are expanded at under the
// loader's temporal options: nil when sampling is not temporal, else the
// fixed SeedTime or each (owned) seed's node time.
func (l *Loader) seedTimes(seeds []int64, dst []int64) ([]int64, error) {
	o := &l.o
	if !o.Temporal.On() {
		return nil, nil
	}
	dst = dst[:0]
	p := l.s.part
	for _, g := range seeds {
		switch {
		case o.FixedSeedTime:
			dst = append(dst, o.SeedTime)
		case p.NodeTime == nil:
			return nil, fmt.Errorf("temporal sampling of node seeds needs node times, but the partition has none (give a seed time for all seeds)")
		case g < p.Lo || g >= p.Hi:
			return nil, fmt.Errorf("seed %d is not owned by rank %d, whose node times it would need", g, l.s.c.Rank())
		default:
			dst = append(dst, p.NodeTime[g-p.Lo])
		}
	}
	if dst == nil {
		dst = []int64{}
	}
	return dst, nil
}

// resetSeeds empties out's seeds and pairs for a new link batch.
func (l *LinkLoader) resetSeeds(out *sample.Batch) {
	clear(l.index)
	clear(l.indexT)
	l.seedT = l.seedT[:0]
	out.Seeds, out.SeedsOrig = out.Seeds[:0], out.SeedsOrig[:0]
	out.Pairs, out.PairLabels = out.Pairs[:0], out.PairLabels[:0]
	out.Labels = out.Labels[:0]
	out.Targets, out.TargetDim = out.Targets[:0], 0
	if l.o.EdgeTargets {
		// Set also when this rank has no pair in the step: the batch is
		// an edge batch all the same.
		out.TargetDim = l.meta.EdgeTargetDim
	}
}

// addSeed returns the seed index of node g (original id o) in out, adding
// it if new; with temporal sampling the seed is the pair (g, t), so one
// node may be a seed at several times.
func (l *LinkLoader) addSeed(out *sample.Batch, g, o, t int64) int32 {
	if l.o.Temporal.On() {
		if j, ok := l.indexT[[2]int64{g, t}]; ok {
			return j
		}
		j := int32(len(out.Seeds))
		l.indexT[[2]int64{g, t}] = j
		out.Seeds = append(out.Seeds, g)
		out.SeedsOrig = append(out.SeedsOrig, o)
		l.seedT = append(l.seedT, t)
		return j
	}
	if j, ok := l.index[g]; ok {
		return j
	}
	j := int32(len(out.Seeds))
	l.index[g] = j
	out.Seeds = append(out.Seeds, g)
	out.SeedsOrig = append(out.SeedsOrig, o)
	return j
}

// times returns the seed times of the batch being built (nil when sampling
// is not temporal).
func (l *LinkLoader) times() []int64 {
	if !l.o.Temporal.On() {
		return nil
	}
	if l.seedT == nil {
		l.seedT = []int64{}
	}
	return l.seedT
}

// LinkPairs are node pairs to score, each at its own time: (Src[i],
// Dst[i]) in new ids with their original ids, at Time[i].
type LinkPairs struct {
	Src, SrcOrig, Dst, DstOrig, Time []int64
}

// Len returns the number of pairs.
func (pp *LinkPairs) Len() int { return len(pp.Src) }

// Add appends one pair.
func (pp *LinkPairs) Add(src, srcOrig, dst, dstOrig, t int64) {
	pp.Src, pp.SrcOrig = append(pp.Src, src), append(pp.SrcOrig, srcOrig)
	pp.Dst, pp.DstOrig = append(pp.Dst, dst), append(pp.DstOrig, dstOrig)
	pp.Time = append(pp.Time, t)
}

// evalBatchKey is the Batch of the sampling key of temporal evaluation:
// below the embedding steps' -1-step, so it repeats no other draw. It is
// the same for every pair, so a node's neighbourhood at time T is the same
// whichever pairs share its batch, on any number of ranks.
const evalBatchKey = -(1 << 40)

// PairBatchAt fills out for scoring the pairs pp[lo:hi] with temporal
// sampling: the seeds are their distinct (endpoint, time) pairs, out.Pairs
// indexes the seeds two by two in pair order, and the blocks (evaluation
// fanouts) and inputs are those of the seeds. split (0 valid, 1 test)
// keeps the two splits' draws apart. It is collective: every rank calls
// it the same number of times, with an empty range when it has no more
// pairs.
func (l *LinkLoader) PairBatchAt(pp *LinkPairs, lo, hi, split, epoch int, out *sample.Batch) error {
	if !l.o.Temporal.On() {
		return fmt.Errorf("link loader: pair batches need temporal sampling")
	}
	l.resetSeeds(out)
	for i := lo; i < hi; i++ {
		u := l.addSeed(out, pp.Src[i], pp.SrcOrig[i], pp.Time[i])
		v := l.addSeed(out, pp.Dst[i], pp.DstOrig[i], pp.Time[i])
		out.Pairs = append(out.Pairs, u, v)
	}
	out.GlobalSeeds = len(out.Seeds)
	var st sample.SampleStats
	base := sample.Key{Seed: l.o.Seed, Epoch: epoch, Batch: evalBatchKey - split}
	blocks, err := l.s.sampler.Sample(Request{Seeds: out.Seeds, SeedsOrig: out.SeedsOrig, Times: l.times(), Fanouts: l.o.EvalFanouts, Rel: l.s.relPlan(l.o.EvalRelFanouts), Key: base, Replace: l.o.Replace, Stats: &st})
	if err != nil {
		return fmt.Errorf("link loader: evaluation pairs: %w", err)
	}
	if err := l.gatherInputs(blocks, out, st); err != nil {
		return fmt.Errorf("link loader: evaluation pairs: %w", err)
	}
	return nil
}

// gatherInputs sets out's blocks, reads the input rows of blocks[0]'s
// nodes (typed on a heterogeneous partition) and sets the batch counters.
// It is collective.
func (l *LinkLoader) gatherInputs(blocks []sample.Block, out *sample.Batch, st sample.SampleStats) error {
	out.Blocks = blocks
	var g GatherStats
	var err error
	if l.schema != nil {
		err = l.typed.gatherTyped(l.schema, &blocks[0], out, &g)
	} else {
		out.X, err = l.s.feat.Gather(NodeFeat(), blocks[0].Nodes, out.X, &g)
	}
	out.Stats = batchStats(g, st)
	return err
}
