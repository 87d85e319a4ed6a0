package dsample

import (
	"fmt"
	"time"

	"mpignn/collectives"
	"mpignn/internal/par"
	"mpignn/sample"
)

// Sampler is the distributed layer-wise sampler: it draws, over a
// GraphStore, exactly the blocks sample.Reference draws on the unpartitioned
// graph. It keeps its scratch buffers between calls. A Sampler is used by
// one goroutine, and its Sample is collective.
type Sampler struct {
	g   *GraphStore
	sm  samplerScratch
	a2a a2aScratch
	x   *sample.EdgeSet // edges kept out of the blocks (nil: none)
	tp  sample.Temporal // temporal sampling (SetTemporal; off by default)
}

// NewSampler returns a sampler over g.
func NewSampler(g *GraphStore) *Sampler { return &Sampler{g: g} }

// SetExclude makes the following Sample calls drop every chosen edge whose
// pair of original ids is in x, as sample.Reference with Exclude = x does;
// nil stops excluding. Every rank must pass the same set (all seed edges of
// the global batch, not only its own), because a rank also expands other
// ranks' seeds' neighborhoods.
func (s *Sampler) SetExclude(x *sample.EdgeSet) { s.x = x }

// samplerScratch holds the distributed sampler's reusable buffers.
type samplerScratch struct {
	bb       sample.BlockBuilder
	dense    bool    // bb switched to dense ids (once, on first use)
	remote   []int64 // global ids of remote destinations, in destination order
	nodeRows []int64 // fetched {edge start, degree} per remote destination
	pos      []int64 // chosen positions of all destinations, concatenated
	posOff   []int64 // len numDst+1
	rowStart []int64 // per destination: first local edge (own), or -1-(first global edge row) (remote)
	deg      []int64 // per destination: in-degree
	edgeReq  []int64 // global edge rows of remote destinations' choices
	edgeRows []int64 // fetched {new id, orig id} per requested edge
	srcG     []int64
	srcO     []int64

	// Per block of rows (rows.go): counts, then offsets, of the chosen
	// positions, of the remote edge requests and of the remote rows.
	blkPos []int64
	blkReq []int64
	blkRem []int64
	nrem   int             // the layer's remote rows (readRows)
	ex     sample.Excluder // the exclusion pass's buffers

	// Rows of a layer: per row, the destination index, the relation and
	// the destination's original id (see layerRows).
	rowDst  []int32
	rowRel  []int32
	rowOrig []int64 // relOrig, or the destinations' ids for node rows
	relOrig []int64
	// rel: the layer's rows are relation rows (a relation plan); otherwise
	// node rows, one per destination (fanouts), and rowDst/rowRel are unused.
	rel  bool
	fan1 [1]int // the fanout list of a node-row layer

	// Temporal layers (temporal.go): dstT the destinations' times (nil:
	// not temporal), rowT each row's time, elig each row's eligible
	// prefix, srcT the chosen edges' times, and the buffers of the time
	// searches and reads of remote rows.
	dstT     []int64
	rowT     []int64
	elig     []int64
	srcT     []int64
	timeReq  []int64
	timeVal  []int64
	brRow    []int32
	brLo     []int64
	edgeTime []int64

	// Edge features (edgefeat.go; only when the store has them): srcE the
	// global edge row of each chosen edge (aligned with srcG), efO and
	// efOff the rows' sources and offsets before the exclusion, to follow
	// the kept edges through it.
	srcE  []int64
	efO   []int64
	efOff []int64
	efReq []int64   // the kept edges' rows not in memory, in block order
	efBuf []float32 // their features
}

// Request is one batch to sample: its seeds, its plan (fanouts, or
// per-relation fanouts, optionally at seed times), its key and its counters.
// It is the only input of Sampler.Sample, so a new sampling axis is a new
// field, not a new method.
type Request struct {
	// Seeds are new global ids and SeedsOrig their original ids, aligned;
	// any rank may pass any nodes, including none.
	Seeds, SeedsOrig []int64
	// Fanouts are the per-layer fanouts, outermost first (-1: all). On a
	// heterogeneous graph every relation takes them (sample.UniformRelFanouts).
	Fanouts []int
	// Rel, if not nil, is the per-relation plan (Rel[L-1-l][r] for relation
	// r in block l) and replaces Fanouts; it is checked against the
	// graph's relations identically on every rank.
	Rel sample.RelFanouts
	// Times, if not nil, makes sampling temporal: seed i and its whole
	// neighbourhood are expanded at Times[i] (SetTemporal must have turned
	// temporal sampling on). A rank without seeds in a temporal batch
	// passes an empty, non-nil slice.
	Times []int64
	// Key is the base key of the batch (its Layer is set per block).
	Key     sample.Key
	Replace bool
	// Stats, if not nil, receives the call's counters (added).
	Stats *sample.SampleStats
}

// Sample draws the blocks of one batch on the distributed graph: the same
// result, node for node in original ids, as the single-process reference
// on the unpartitioned graph with the same seeds (in the same order), key,
// plan and replace flag: sample.Reference for fanouts on a homogeneous
// graph, sample.HeteroReference (Etype included) for a heterogeneous graph
// or a per-relation plan, and HeteroReference.SampleRelAt (Time and
// EdgeTime included) with seed times.
//
// On a heterogeneous graph every destination is expanded once per relation
// into its node type (its relation rows g*R+r), in ascending r, with the
// key Node = orig*R+r; on a homogeneous one (R = 1) the blocks are the
// untyped ones whichever plan form is given.
//
// Own destinations are expanded from the local arrays. With transport rma,
// remote ones take two batched one-sided reads per layer: first their
// {edge start, degree} rows (skipped when the store holds the replicated
// degree table, see GraphOptions.DegreeTableMB), then the {new id, orig id}
// rows of the chosen positions only (temporal layers read times too, see
// temporal.go). With transport alltoallv the owners choose instead (see
// dist_a2a.go): one request/response round of two Alltoallv per layer.
// Either way every rank makes the same fixed number of transport calls per
// layer whatever its seeds: Sample is collective and every rank must call
// it with a plan of the same shape and the same form (timed or not).
//
// The returned blocks are freshly allocated.
func (s *Sampler) Sample(r Request) ([]sample.Block, error) {
	R := int(s.g.R)
	typed := s.g.plan.Typed()
	timed := r.Times != nil
	if timed && !s.tp.On() {
		return nil, fmt.Errorf("sample on rank %d: seed times given but temporal sampling is off", s.g.c.Rank())
	}
	rel := r.Rel
	if rel == nil && (typed || timed) {
		// The same fanouts for every relation.
		rel = sample.UniformRelFanouts(r.Fanouts, R)
	}
	if rel == nil {
		// Homogeneous, untimed fanouts: node rows.
		s.sm.bb.SetTyped(false)
		return s.sampleLayers(r.Seeds, r.SeedsOrig, nil, r.Fanouts, nil, r.Key, r.Replace, r.Stats)
	}
	if err := rel.Check(R); err != nil {
		return nil, fmt.Errorf("sample on rank %d: %w", s.g.c.Rank(), err)
	}
	s.sm.bb.SetTyped(typed)
	if timed && !typed {
		// Homogeneous temporal: node rows, as untimed fanouts draw them.
		f := make([]int, len(rel))
		for l := range rel {
			f[l] = rel[l][0]
		}
		return s.sampleLayers(r.Seeds, r.SeedsOrig, r.Times, f, nil, r.Key, r.Replace, r.Stats)
	}
	return s.sampleLayers(r.Seeds, r.SeedsOrig, r.Times, nil, rel, r.Key, r.Replace, r.Stats)
}

// sampleLayers is the layer loop of Sample, for node rows (rel == nil,
// with fanouts) and relation rows (with rel) alike: both draw block l from
// the destinations of block l+1 through the same sampleLayer. seedsTime
// non-nil makes the layers temporal (s.tp is on).
func (s *Sampler) sampleLayers(seedsGlobal, seedsOrig, seedsTime []int64, fanouts []int, rel sample.RelFanouts, base sample.Key, replace bool, st *sample.SampleStats) ([]sample.Block, error) {
	n := s.g.n
	timed := seedsTime != nil
	s.sm.bb.SetTemporal(timed)
	// Bad seeds are reported only after this rank has taken part in every
	// transport call (with no seeds), so that the other ranks do not hang.
	var seedErr error
	if len(seedsGlobal) != len(seedsOrig) || (timed && len(seedsTime) != len(seedsGlobal)) {
		seedErr = fmt.Errorf("sample on rank %d: %d seed ids, %d original ids and %d seed times", s.g.c.Rank(), len(seedsGlobal), len(seedsOrig), len(seedsTime))
		seedsGlobal, seedsOrig = nil, nil
	}
	for i, v := range seedsGlobal {
		if v < 0 || v >= n {
			seedErr = fmt.Errorf("sample on rank %d: seed %d is node %d, outside [0,%d)", s.g.c.Rank(), i, v, n)
			seedsGlobal, seedsOrig = nil, nil
			break
		}
	}
	if timed && seedsGlobal == nil {
		seedsTime = []int64{}
	}
	var local sample.SampleStats
	L := len(fanouts)
	if rel != nil {
		L = len(rel)
	}
	s.sm.rel = rel != nil
	blocks := make([]sample.Block, L)
	dstG, dstO, dstT := seedsGlobal, seedsOrig, seedsTime
	for l := L - 1; l >= 0; l-- {
		s.sm.dstT = dstT
		k := base
		k.Layer = l
		// Node rows are relation rows of the one relation 0 (R = 1): a
		// one-entry fanout list kept in the scratch, so no allocation.
		f := s.sm.fan1[:]
		if rel != nil {
			f = rel[L-1-l]
		} else {
			f[0] = fanouts[L-1-l]
		}
		layer := s.sampleLayer
		switch {
		case s.g.t == collectives.TransportAlltoallv:
			layer = s.sampleLayerA2A
		case timed:
			layer = s.sampleLayerAt
		}
		if err := layer(dstG, dstO, k, f, replace, &blocks[l], &local); err != nil && seedErr == nil {
			seedErr = fmt.Errorf("sample on rank %d: layer %d: %w", s.g.c.Rank(), l, err)
		}
		dstG, dstO, dstT = blocks[l].Nodes, blocks[l].Orig, blocks[l].Time
		if seedErr != nil {
			// Keep making this rank's transport calls, with nothing to
			// sample, so that the other ranks do not hang.
			dstG, dstO = nil, nil
			if timed {
				dstT = []int64{}
			}
		}
	}
	if st != nil {
		st.Add(local)
	}
	if seedErr != nil {
		return nil, seedErr
	}
	return blocks, nil
}

// layerRows lists the rows a layer expands. Node rows (Sample): one per
// destination, row j = destination j, relation 0, rowOrig aliasing dstO
// (nothing is copied). Relation rows (a relation plan): per destination, its
// relations (by node type) with a non-zero fanout, ascending. It returns
// the number of rows.
func (s *Sampler) layerRows(dstO []int64, fan []int) int {
	sc := &s.sm
	if !sc.rel {
		sc.rowOrig = dstO
		sc.rowT = sc.dstT
		return len(dstO)
	}
	sc.rowT = sc.rowT[:0]
	sc.rowDst, sc.rowRel, sc.relOrig = sc.rowDst[:0], sc.rowRel[:0], sc.relOrig[:0]
	for i, o := range dstO {
		for _, r := range s.g.plan.Rels(o) {
			if fan[r] != 0 {
				sc.rowDst = append(sc.rowDst, int32(i))
				sc.rowRel = append(sc.rowRel, int32(r))
				sc.relOrig = append(sc.relOrig, o)
				if sc.dstT != nil {
					sc.rowT = append(sc.rowT, sc.dstT[i])
				}
			}
		}
	}
	sc.rowOrig = sc.relOrig
	return len(sc.rowDst)
}

// row returns row j's destination index and relation.
func (sc *samplerScratch) row(j int) (int, int64) {
	if !sc.rel {
		return j, 0
	}
	return int(sc.rowDst[j]), int64(sc.rowRel[j])
}

// addRows feeds the builder the chosen neighbors of every row (sc.posOff
// over sc.srcG/srcO), in row order, which is destination order and
// relation order within a destination, as the references add them.
func (s *Sampler) addRows() error {
	sc := &s.sm
	if sc.dstT != nil {
		return s.addRowsAt()
	}
	if !sc.rel {
		return sc.bb.AddRows(sc.posOff, sc.srcG, sc.srcO)
	}
	typed := s.g.plan.Typed()
	for j, i := range sc.rowDst {
		lo, hi := sc.posOff[j], sc.posOff[j+1]
		var err error
		if typed {
			err = sc.bb.AddNeighborsRel(int(i), sc.rowRel[j], sc.srcG[lo:hi], sc.srcO[lo:hi])
		} else {
			err = sc.bb.AddNeighbors(int(i), sc.srcG[lo:hi], sc.srcO[lo:hi])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// finishRows ends a layer once every row's chosen neighbors are in
// sc.srcG/srcO: it drops the excluded edges (after the choice, as the
// references do), adds the counters of what enters the block
// (destinations by owner, and the edges of their rows) and builds the
// block.
func (s *Sampler) finishRows(dstG []int64, out *sample.Block, st *sample.SampleStats) error {
	sc := &s.sm
	var dropped int64
	var srcT []int64
	if sc.dstT != nil {
		srcT = sc.srcT
	}
	ef := s.g.edgeFeat != nil
	if ef && s.x != nil {
		s.saveRowsForEdgeFeat()
	}
	sc.srcG, sc.srcO, srcT, dropped = sc.ex.Exclude(s.x, sc.rowOrig, sc.posOff, sc.srcG, sc.srcO, srcT)
	if sc.dstT != nil {
		sc.srcT = srcT
	}
	st.Excluded += dropped
	var feat []float32
	if ef {
		if s.x != nil {
			s.keptEdgeRows()
		}
		// Before the block is built, so that this rank makes its fetch
		// whatever the builder says.
		var err error
		if feat, err = s.fetchEdgeFeat(sc.srcE[:len(sc.srcG)], st); err != nil {
			return err
		}
	}
	s.countRows(dstG, st)
	if err := s.addRows(); err != nil {
		return err
	}
	sc.bb.BlockInto(out)
	if ef {
		out.EdgeFeat, out.EdgeFeatDim = feat, s.g.efDim
	}
	return nil
}

// startBlock resets the block builder to the destinations of a layer. A
// bad destination list (repeated or out-of-range ids) must not make this
// rank skip its transport calls, or the other ranks would wait forever: the
// builder then starts empty, the layer goes on with no destinations, and
// the caller returns the error after the calls.
func (s *Sampler) startBlock(dstG, dstO []int64) ([]int64, []int64, error) {
	bb := &s.sm.bb
	if !s.sm.dense {
		// Global ids of this store lie in [0,NumNodes): the builder
		// direct-maps this rank's own ids (the most frequent, and on one
		// rank all of them, as fast as the whole-graph index was) and
		// keeps the others in a table sized by the block, so its memory
		// is 8 bytes per owned node, not per graph node (issue 40 §2).
		bb.UseBoundedIDs(s.g.n, s.g.lo, s.g.hi)
		s.sm.dense = true
	}
	var err error
	if s.sm.dstT != nil {
		err = bb.ResetAt(dstG, dstO, s.sm.dstT)
	} else {
		err = bb.Reset(dstG, dstO)
	}
	if err != nil {
		if s.sm.dstT != nil {
			s.sm.dstT = s.sm.dstT[:0]
			bb.ResetAt(nil, nil, nil)
		} else {
			bb.Reset(nil, nil)
		}
		return nil, nil, err
	}
	return dstG, dstO, nil
}

// sampleLayer builds one block with one-sided reads, over node rows (R = 1)
// or relation rows alike (row g*R+r of destination g). With the degree
// table (Store.allNodes) it makes exactly one Fetch call, otherwise
// exactly two; which one is decided identically on every rank at
// OpenStore.
func (s *Sampler) sampleLayer(dstG, dstO []int64, k sample.Key, fan []int, replace bool, out *sample.Block, st *sample.SampleStats) error {
	sc := &s.sm
	p := s.g
	t0 := time.Now()
	dstG, dstO, resetErr := s.startBlock(dstG, dstO)
	rows := s.layerRows(dstO, fan)
	tl0 := time.Since(t0)
	tl, tr, err := s.readRows(dstG, rows, st)
	if err != nil {
		return err
	}
	tl += tl0
	b0 := p.edges.Stats().Bytes
	// Choose positions for every row (rows.go: counted, laid out, then
	// chosen in parallel); remote choices become edge row requests. Own
	// rows are read from the interleaved {new id, orig id} edge array of
	// the window (one cache line per neighbor instead of two arrays), and
	// each own row's first local edge is remembered (by readRows) so the
	// collection does not revisit the offsets.
	t2 := time.Now()
	s.chooseRows(rows, k, fan, replace)
	sc.edgeRows = growInt64(sc.edgeRows, 2*len(sc.edgeReq))
	tl += time.Since(t2)
	// Phase 2: the chosen neighbors of remote rows.
	t3 := time.Now()
	if err := p.edges.Fetch(sc.edgeReq, collectives.Bytes(sc.edgeRows)); err != nil {
		return err
	}
	tr += time.Since(t3)
	st.Bytes += p.edges.Stats().Bytes - b0
	// Collect all chosen neighbors (again independent loads), then feed the
	// builder in row order, as the references do.
	t4 := time.Now()
	s.collectRows(rows)
	return s.endLayer(dstG, out, st, tl, tr, t4, resetErr)
}

// endLayer builds the block from the layer's chosen neighbors (finishRows)
// and adds the layer's times to st: tl and tr so far, and the local time
// since t. A bad destination list (resetErr) is reported now, after every
// transport call of the layer.
func (s *Sampler) endLayer(dstG []int64, out *sample.Block, st *sample.SampleStats, tl, tr time.Duration, t time.Time, resetErr error) error {
	if err := s.finishRows(dstG, out, st); err != nil {
		return err
	}
	tl += time.Since(t)
	if resetErr != nil {
		return resetErr
	}
	st.Local += tl
	st.Remote += tr
	return nil
}

// readRows sets, for each of the layer's rows, sc.rowStart (own rows: the
// first local edge; remote rows: -1-(first global edge row)) and sc.deg,
// reading remote rows' {start, degree} from the replicated table or with
// one batched read (every rank makes that call, with or without rows). It
// returns the local and remote time spent.
func (s *Sampler) readRows(dstG []int64, rows int, st *sample.SampleStats) (tl, tr time.Duration, err error) {
	sc := &s.sm
	p := s.g
	R := p.R
	t0 := time.Now()
	ln := p.localNodes
	// Read every own row's {start, degree} in a loop of independent loads
	// first (the CPU then overlaps the cache misses, which dominate local
	// sampling on graphs larger than the cache), counting the remote rows
	// per block.
	sc.rowStart = growInt64(sc.rowStart, rows)
	sc.deg = growInt64(sc.deg, rows)
	sc.blkRem = blockCounts(sc.blkRem, rows)
	par.Blocks(rows, rowBlock, rowWork(rows), func(lo, hi int) {
		n := int64(0)
		for j := lo; j < hi; j++ {
			i, r := sc.row(j)
			if g := dstG[i]; p.inMemory(g) {
				lr := (g-p.memLo)*R + r
				sc.rowStart[j], sc.deg[j] = ln[2*lr]-p.edgeBase, ln[2*lr+1]
			} else {
				n++
			}
		}
		sc.blkRem[lo/rowBlock] = n
	})
	nrem := int(offsets64(sc.blkRem))
	sc.nrem = nrem
	// The remote rows, in row order: from the replicated table, or as the
	// requests of one batched read.
	sc.nodeRows = growInt64(sc.nodeRows, 2*nrem)
	if p.allNodes == nil {
		sc.remote = growInt64(sc.remote, nrem)
	}
	if nrem > 0 {
		par.Blocks(rows, rowBlock, rowWork(rows), func(lo, hi int) {
			x := sc.blkRem[lo/rowBlock]
			for j := lo; j < hi; j++ {
				i, r := sc.row(j)
				if g := dstG[i]; !p.inMemory(g) {
					row := g*R + r
					if p.allNodes != nil {
						sc.nodeRows[2*x], sc.nodeRows[2*x+1] = p.allNodes[2*row], p.allNodes[2*row+1]
					} else {
						sc.remote[x] = row
					}
					x++
				}
			}
		})
	}
	tl = time.Since(t0)
	t1 := time.Now()
	b0 := p.nodes.Stats().Bytes
	if p.allNodes == nil {
		if err := p.nodes.Fetch(sc.remote, collectives.Bytes(sc.nodeRows)); err != nil {
			return 0, 0, err
		}
	}
	st.Bytes += p.nodes.Stats().Bytes - b0
	tr = time.Since(t1)
	t2 := time.Now()
	if nrem > 0 {
		par.Blocks(rows, rowBlock, rowWork(rows), func(lo, hi int) {
			x := sc.blkRem[lo/rowBlock]
			for j := lo; j < hi; j++ {
				if i, _ := sc.row(j); !p.inMemory(dstG[i]) {
					sc.rowStart[j], sc.deg[j] = -1-sc.nodeRows[2*x], sc.nodeRows[2*x+1]
					x++
				}
			}
		})
	}
	tl += time.Since(t2)
	return tl, tr, nil
}

func growInt64(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}
