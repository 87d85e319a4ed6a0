package dpartition

import (
	"cmp"
	"fmt"
	"slices"

	"mpignn/collectives"
	"mpignn/graph"
)

// lookup asks the block owners of ids (homogenized original ids, any
// order, repeats allowed) for val(type, index in the owner's block) and
// returns the answers in the order of ids.
func (x *run) lookup(ids []int64, val func(t int, i int64) int64) ([]int64, error) {
	P := x.P
	dest := make([]int32, len(ids))
	cnt := make([]int64, P)
	for j, v := range ids {
		r, _, _ := x.owner(v)
		dest[j] = int32(r)
		cnt[r]++
	}
	start := make([]int64, P)
	for p := 1; p < P; p++ {
		start[p] = start[p-1] + cnt[p-1]
	}
	send := make([]int64, len(ids))
	pos := slices.Clone(start)
	for j, v := range ids {
		send[pos[dest[j]]] = v
		pos[dest[j]]++
	}
	req, rc, err := collectives.Alltoallv(x.c, send, cnt)
	if err != nil {
		return nil, err
	}
	ans := make([]int64, len(req))
	for j, v := range req {
		r, t, local := x.owner(v)
		if r != x.rank {
			return nil, fmt.Errorf("internal error: asked for node %d, owned by rank %d", v, r)
		}
		lo, _ := x.block(t)
		ans[j] = val(t, local-lo)
	}
	back, _, err := collectives.Alltoallv(x.c, ans, rc)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ids))
	copy(pos, start)
	for j := range ids {
		out[j] = back[pos[dest[j]]]
		pos[dest[j]]++
	}
	return out, nil
}

// lookupRounds is lookup in rounds of at most Options.RoundIDs ids per
// rank, every rank taking part in the same number of rounds.
func (x *run) lookupRounds(ids []int64, val func(t int, i int64) int64) ([]int64, error) {
	per := int64(x.opt.RoundIDs)
	if per <= 0 {
		per = 4 << 20
	}
	rounds, err := collectives.AllreduceScalar(x.c, (int64(len(ids))+per-1)/per, collectives.Max)
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(ids))
	for k := range rounds {
		lo, hi := min(k*per, int64(len(ids))), min((k+1)*per, int64(len(ids)))
		got, err := x.lookup(ids[lo:hi], val)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// edgeBatch is a run [lo,hi) of one edge chunk, moved in one round.
type edgeBatch struct {
	chunk  int
	lo, hi int
}

// edgeBatchesOf lists rank r's batches of edge type e: its run of chunks
// cut into pieces of at most Options.RoundEdges edges (0: 1 M), which
// bounds the buffers of a round whatever the chunk size.
func (x *run) edgeBatchesOf(e, r int) []edgeBatch {
	per := x.opt.RoundEdges
	if per <= 0 {
		per = 1 << 20
	}
	k0, k1 := graph.ChunkRange(x.ch.NumEdgeChunks(e), x.P, r)
	var out []edgeBatch
	for k := k0; k < k1; k++ {
		n := int(x.ch.Meta.NumEdgesPerChunk[e][k])
		for lo := 0; lo < n; lo += per {
			out = append(out, edgeBatch{k, lo, min(lo+per, n)})
		}
	}
	return out
}

func (x *run) edgeBatches(e int) []edgeBatch { return x.edgeBatchesOf(e, x.rank) }

// relPlan is how one stored edge type fills relation rows: forward edges
// into rf; with sym their reverses into rf too (a self relation made
// undirected); with rr >= 0 their reverses into rr.
type relPlan struct {
	rf, rr int
	sym    bool
	srcOff int64
	dstOff int64
}

func (x *run) relPlans() []relPlan {
	s := x.s
	noRev := map[string]bool{}
	for _, n := range x.opt.NoReverse {
		noRev[n] = true
	}
	plans := make([]relPlan, len(x.ch.Rels))
	for e, rel := range x.ch.Rels {
		if x.homo {
			plans[e] = relPlan{rf: 0, rr: -1, sym: x.opt.Undirected}
			continue
		}
		pl := relPlan{rf: s.RelIndex(rel.String()), rr: -1,
			srcOff: s.NodeOrig[s.TypeIndex(rel.Src)], dstOff: s.NodeOrig[s.TypeIndex(rel.Dst)]}
		rev := x.opt.Reverse && !noRev[rel.String()]
		if rev && rel.Src == rel.Dst {
			pl.sym = true
		} else if rev {
			pl.rr = s.RelIndex(rel.Reverse().String())
		}
		plans[e] = pl
	}
	return plans
}

// moveEdges sends every edge of this rank's edge chunks (and the reverses
// the options add) to the owner of its destination's part, a chunk per
// round, and builds the rows of this rank's parts (x.mine order, their
// node data nds): row i*R+r lists the sources of
// owned node i's in-edges of relation r, ascending and distinct, which is
// the canonical order of the single-process writer. With Options.Time
// every edge carries its time (edge_data's, else its source's node time,
// as graph.ReadOGB gives them) and rows are in timed canonical order:
// ascending and distinct in (time, source), times aligned with srcs.
func (x *run) moveEdges(nds []*nodeData) ([]partRows, error) {
	P := x.P
	R := x.R
	timed := x.opt.Time
	W := int64(3) // values sent per edge: dst, src, relation[, time][, key]
	if timed {
		W = 4
	}
	// With edge features or labels every edge also carries its order key
	// (see rowsFromFeat) and, in a float buffer beside, its row: efDim
	// feature values, then elDim label values (split apart at the end),
	// so that a label goes with its edge exactly as a feature row does.
	D := int64(x.efDim + x.elDim)
	withFeat := D > 0
	if withFeat {
		W++
	}
	// Received edges as (row, source[, time]) tuples, one array per round
	// and part: no growing slice, so no doubling slack or copies of all
	// edges. With features: featStride tuples, and the rows in feats.
	got := make([][][]int64, len(x.mine))
	feats := make([][][]float32, len(x.mine))
	for e, pl := range x.relPlans() {
		batches := x.edgeBatches(e)
		rounds := 0
		for r := range P {
			rounds = max(rounds, len(x.edgeBatchesOf(e, r)))
		}
		per := 1
		if pl.sym || pl.rr >= 0 {
			per = 2
		}
		var u, v, et []int64       // the chunk being cut into batches (et: its edge times)
		var ef, el *graph.Features // and its edge features and labels
		// A reverse's order key is its edge's line, except where
		// graph.ReadOGB adds the reverses as lines of their own (node
		// times, undirected): then past all M lines, as there.
		revOff := int64(0)
		if timed && !x.relTime[e] && pl.sym {
			revOff = x.edgeChunkStart(e, x.ch.NumEdgeChunks(e))
		}
		chunk := -1
		for j := range rounds {
			var dst, src, rel, tm, key []int64
			var fr []float32
			if j < len(batches) {
				bt := batches[j]
				if bt.chunk != chunk {
					var err error
					if u, v, err = x.ch.ReadEdgeChunk(e, bt.chunk); err != nil {
						return nil, err
					}
					if timed && x.relTime[e] {
						if et, err = x.ch.ReadEdgeInts(e, graph.ChunkTime, bt.chunk); err != nil {
							return nil, err
						}
					}
					if x.efDim > 0 {
						if ef, err = x.readEdgeFeatChunk(bt.chunk); err != nil {
							return nil, err
						}
					}
					if x.elDim > 0 {
						if el, err = x.readEdgeLabelChunk(bt.chunk); err != nil {
							return nil, err
						}
					}
					chunk = bt.chunk
				}
				n := bt.hi - bt.lo
				dst, src, rel = make([]int64, 0, per*n), make([]int64, 0, per*n), make([]int64, 0, per*n)
				if et != nil {
					tm = make([]int64, 0, per*n)
				}
				line0 := int64(0) // the chunk's first line
				if withFeat {
					key, fr = make([]int64, 0, per*n), make([]float32, 0, int64(per*n)*D)
					line0 = x.edgeChunkStart(e, bt.chunk)
				}
				for i := bt.lo; i < bt.hi; i++ {
					a, b := u[i]+pl.srcOff, v[i]+pl.dstOff
					if x.homo && x.opt.Undirected && a == b {
						continue // undirected homogeneous graphs drop self loops
					}
					dst, src, rel = append(dst, b), append(src, a), append(rel, int64(pl.rf))
					if pl.sym {
						dst, src, rel = append(dst, a), append(src, b), append(rel, int64(pl.rf))
					}
					if pl.rr >= 0 {
						dst, src, rel = append(dst, a), append(src, b), append(rel, int64(pl.rr))
					}
					if et != nil {
						// A reverse keeps its edge's time (graph.BuildInCSRTimed).
						for range len(dst) - len(tm) {
							tm = append(tm, et[i])
						}
					}
					if withFeat {
						// The edge first, then its reverse (if added),
						// which gets the edge's row (graph.BuildInCSREdgeIDs).
						for k := 0; len(key) < len(dst); k++ {
							kk := line0 + int64(i)
							if k > 0 {
								kk += revOff
							}
							key = append(key, kk)
							if ef != nil {
								fr = append(fr, ef.Row(int64(i))...)
							}
							if el != nil {
								fr = append(fr, el.Row(int64(i))...)
							}
						}
					}
				}
				if bt.hi == int(x.ch.Meta.NumEdgesPerChunk[e][bt.chunk]) {
					u, v, et, ef, el, chunk = nil, nil, nil, nil, nil, -1
				}
			}
			if timed && !x.relTime[e] {
				// Node times: an edge's time is its source's node time, a
				// reverse's the other end's (graph.EdgeTimesFromNodes,
				// ReadOGBHetero's fromNode relations).
				var err error
				if tm, err = x.lookup(src, x.nodeTimeOf); err != nil {
					return nil, err
				}
			}
			parts, err := x.lookup(dst, func(t int, i int64) int64 { return int64(x.assign[t][i]) })
			if err != nil {
				return nil, err
			}
			// One flat send buffer of (dst, src, part x R + relation[,
			// time]) by the owner of the part.
			counts := make([]int64, P)
			for _, p := range parts {
				counts[p%int64(P)] += W
			}
			pos := make([]int64, P)
			for p := 1; p < P; p++ {
				pos[p] = pos[p-1] + counts[p-1]
			}
			send := make([]int64, W*int64(len(parts)))
			var fsend []float32
			if withFeat {
				fsend = make([]float32, int64(len(parts))*D)
			}
			for i, p := range parts {
				at := pos[p%int64(P)]
				send[at], send[at+1], send[at+2] = dst[i], src[i], p*R+rel[i]
				if timed {
					send[at+3] = tm[i]
				}
				if withFeat {
					// The row goes to the same place in fsend as the
					// edge's tuple in send, in edges rather than words.
					send[at+W-1] = key[i]
					copy(fsend[at/W*D:], fr[int64(i)*D:int64(i+1)*D])
				}
				pos[p%int64(P)] += W
			}
			dst, src, rel, tm, parts, key, fr = nil, nil, nil, nil, nil, nil, nil
			recv, _, err := collectives.Alltoallv(x.c, send, counts)
			if err != nil {
				return nil, err
			}
			send = nil
			var frecv []float32
			if withFeat {
				fcounts := make([]int64, P)
				for r, c := range counts {
					fcounts[r] = c / W * D
				}
				if frecv, _, err = collectives.Alltoallv(x.c, fsend, fcounts); err != nil {
					return nil, err
				}
				fsend = nil
			}
			fpart := make([][]float32, len(x.mine))
			pairs := make([][]int64, len(x.mine))
			for i := int64(0); i+W-1 < int64(len(recv)); i += W {
				q, rl := recv[i+2]/R, recv[i+2]%R
				j := x.slot(int(q))
				if int(q)%P != x.rank || j >= len(nds) {
					return nil, fmt.Errorf("internal error: rank %d received an edge into part %d, which it does not own", x.rank, q)
				}
				li, ok := slices.BinarySearch(nds[j].orig, recv[i])
				if !ok {
					return nil, fmt.Errorf("internal error: rank %d received an edge into node %d, which part %d does not hold", x.rank, recv[i], q)
				}
				if withFeat {
					t := int64(0)
					if timed {
						t = recv[i+3]
					}
					at := int64(len(fpart[j])) / D
					pairs[j] = append(pairs[j], int64(li)*R+rl, recv[i+1], t, recv[i+W-1], at)
					fpart[j] = append(fpart[j], frecv[i/W*D:(i/W+1)*D]...)
					continue
				}
				pairs[j] = append(pairs[j], int64(li)*R+rl, recv[i+1])
				if timed {
					pairs[j] = append(pairs[j], recv[i+3])
				}
			}
			for j := range pairs {
				got[j] = append(got[j], pairs[j])
				if withFeat {
					feats[j] = append(feats[j], fpart[j])
				}
			}
		}
	}
	out := make([]partRows, len(x.mine))
	for j, nd := range nds {
		if withFeat {
			out[j].ptr, out[j].srcs, out[j].times, out[j].ef = rowsFromFeat(got[j], feats[j], int64(len(nd.orig))*R, int(D), timed)
			x.splitEdgeRows(&out[j])
			got[j], feats[j] = nil, nil
			continue
		}
		if timed {
			out[j].ptr, out[j].srcs, out[j].times = rowsFromTimed(got[j], int64(len(nd.orig))*R)
		} else {
			out[j].ptr, out[j].srcs = rowsFromPairs(got[j], int64(len(nd.orig))*R)
		}
		got[j] = nil
	}
	return out, nil
}

// partRows are the in-rows of one part: offsets, original source ids and,
// timed, their times; with edge features their rows (run.efDim each),
// and with edge labels theirs (run.elDim each), aligned with srcs.
type partRows struct {
	ptr, srcs, times []int64
	ef, el           []float32
}

// rowsFromTimed is rowsFromPairs for rounds of (row, source, time)
// triples: each row is sorted by (time, source) and exact repeats are
// dropped (graph.BuildInCSRTimed's rows with Dedup), times aligned with
// idx.
func rowsFromTimed(got [][]int64, rows int64) (ptr, idx, times []int64) {
	ptr, total := rowOffsets(got, rows, 3)
	type entry struct{ t, src int64 }
	ent := make([]entry, total)
	fill := slices.Clone(ptr[:rows])
	for k, tr := range got {
		for i := 0; i < len(tr); i += 3 {
			r := tr[i]
			ent[fill[r]] = entry{tr[i+2], tr[i+1]}
			fill[r]++
		}
		got[k] = nil
	}
	w := int64(0)
	for r := range rows {
		row := ent[ptr[r]:ptr[r+1]]
		slices.SortFunc(row, func(a, b entry) int {
			if a.t != b.t {
				return cmp.Compare(a.t, b.t)
			}
			return cmp.Compare(a.src, b.src)
		})
		row = slices.Compact(row)
		ptr[r] = w
		w += int64(copy(ent[w:], row))
	}
	ptr[rows] = w
	idx, times = make([]int64, w), make([]int64, w)
	for i, e := range ent[:w] {
		idx[i], times[i] = e.src, e.t
	}
	return ptr, idx, times
}

// rowsFromPairs places rounds of (row, value) pairs into CSR rows (ptr of
// rows+1 offsets, idx of values) by counting sort, freeing each round as
// soon as its pairs are placed, then sorts each row and drops repeats in
// place (the edge move and the symmetric graph both want sets).
func rowsFromPairs(got [][]int64, rows int64) (ptr, idx []int64) {
	ptr, total := rowOffsets(got, rows, 2)
	idx = make([]int64, total)
	fill := slices.Clone(ptr[:rows])
	for k, pairs := range got {
		for i := 0; i < len(pairs); i += 2 {
			r := pairs[i]
			idx[fill[r]] = pairs[i+1]
			fill[r]++
		}
		got[k] = nil
	}
	w := int64(0)
	for r := range rows {
		row := idx[ptr[r]:ptr[r+1]]
		slices.Sort(row)
		row = slices.Compact(row)
		ptr[r] = w
		w += int64(copy(idx[w:], row))
	}
	ptr[rows] = w
	return ptr, slices.Clip(idx[:w])
}

// rowOffsets returns the rows+1 offsets of the rows that the tuples of got
// fill (stride words each, the first the row) and their total count: the
// counting pass rowsFromPairs and rowsFromTimed share.
func rowOffsets(got [][]int64, rows int64, stride int) (ptr []int64, total int64) {
	ptr = make([]int64, rows+1)
	for _, tu := range got {
		for i := 0; i < len(tu); i += stride {
			ptr[tu[i]+1]++
		}
		total += int64(len(tu) / stride)
	}
	for r := range rows {
		ptr[r+1] += ptr[r]
	}
	return ptr, total
}
