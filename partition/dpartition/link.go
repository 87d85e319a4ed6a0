package dpartition

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
)

// linkOptions returns Options.Link (Options.Validate checked it) with its
// defaults filled, refusing a heterogeneous dataset (nil without a link
// split).
func (x *run) linkOptions() (*partition.LinkOptions, error) {
	if x.opt.Link == nil {
		return nil, nil
	}
	if !x.homo {
		return nil, errors.New("--link-split: heterogeneous link splits (--relation) of a chunked dataset are not supported (partition the OGB layout instead)")
	}
	lo := *x.opt.Link
	if lo.NegsPerPos == 0 {
		lo.NegsPerPos = partition.DefaultNegsPerPos
	}
	if lo.Pool == 0 {
		lo.Pool = partition.DefaultPool
	}
	return &lo, nil
}

// linkSplit is this rank's part of a random link split.
type linkSplit struct {
	meta partition.LinkMeta
	part *partition.LinkPart
}

// Link split classes of a pair (partition.LinkSet*), and "not known yet".
const classUnknown = 255

// link draws the random link split of partition.LinkOptions from the
// symmetric simple graph whose in-rows (ptr, srcs: original ids) this
// rank's part holds, and returns the rows of its training graph. Every
// undirected pair {v, u}, v < u, is kept by the part of v, where its
// canonical id (its rank in (v, u) order) comes from a prefix sum of the
// pair counts over the block owners; the pairs whose (partition.LinkPairKey,
// id) ranks below the split sizes, found by a distributed radix select,
// are valid and test pairs, as partition's sort of all pairs picks them.
// The part of u learns the pair's class from the part of v. A pair is an
// edge of the split exactly when it is an entry of these rows, so a
// negative's test needs its source's row: local for the fixed negatives
// (their source is the positive's, owned here), one exchange per draw for
// the pools. Nothing depends on the number of ranks. el, with edge
// labels (run.elDim per entry of srcs), gives every positive its row as
// the Targets of its set: the row moved with the entry is that of the
// first line listing the pair in either direction (moveEdges), which is
// partition's rule for a random split's undirected pairs.
func (x *run) link(nd *nodeData, ptr, srcs []int64, el []float32) (tptr, tsrc []int64, err error) {
	lo := x.linkOpt
	_, frac, _ := partition.ParseLinkSplit(lo.Split)
	n := x.s.NumNodes()
	me := x.rank
	first := x.offsets[me]
	rows := len(nd.orig)
	seed := x.opt.Seed

	// My pairs (v, u), v < u, in canonical order: rows ascending, entries
	// ascending.
	cnt := make([]int64, rows)
	for i, v := range nd.orig {
		for k := ptr[i]; k < ptr[i+1]; k++ {
			if srcs[k] > v {
				cnt[i]++
			}
		}
	}
	start, ms, err := x.pairStarts(nd.orig, cnt, 1)
	if err != nil {
		return nil, nil, err
	}
	m := ms[0]
	var pk []uint64 // key of each of my pairs
	var pid, pe []int64
	for i, v := range nd.orig {
		id := start[i]
		for k := ptr[i]; k < ptr[i+1]; k++ {
			if u := srcs[k]; u > v {
				pk, pid, pe = append(pk, partition.LinkPairKey(seed, v, u)), append(pid, id), append(pe, k)
				id++
			}
		}
	}
	nValid, nTest := partition.LinkSplitSizes(m, frac)
	t1k, t1i, err := x.selectRank(pk, pid, nValid, m)
	if err != nil {
		return nil, nil, err
	}
	t2k, t2i, err := x.selectRank(pk, pid, nValid+nTest, m)
	if err != nil {
		return nil, nil, err
	}
	var setID []int64 // per pair: its id in its class
	below := func(j int, tk uint64, ti int64) bool { return pk[j] < tk || (pk[j] == tk && pid[j] < ti) }
	cls := make([]uint8, len(srcs))
	for k := range cls {
		cls[k] = classUnknown
	}
	for j, k := range pe {
		switch {
		case below(j, t1k, t1i):
			cls[k] = partition.LinkSetValid
		case below(j, t2k, t2i):
			cls[k] = partition.LinkSetTest
		default:
			cls[k] = partition.LinkSetTrain
		}
	}

	// A pair's id is its rank among the pairs of its class.
	ccnt := make([]int64, 3*rows)
	for _, k := range pe {
		ccnt[3*x.rowOf(ptr, k)+int(cls[k])]++
	}
	cstart, _, err := x.pairStarts(nd.orig, ccnt, 3)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range pe {
		at := &cstart[3*x.rowOf(ptr, k)+int(cls[k])]
		setID = append(setID, *at)
		*at++
	}

	// New ids of every source; the part of u gets the class of (v, u).
	uniq := distinct(srcs, n)
	ids, err := x.lookupRounds(uniq, func(t int, i int64) int64 { return x.newID[t][i] })
	if err != nil {
		return nil, nil, err
	}
	newOf := func(u int64) int64 {
		i, _ := slices.BinarySearch(uniq, u)
		return ids[i]
	}
	send := make([][]int64, x.P)
	for j, k := range pe {
		g := newOf(srcs[k])
		p := x.partOf(g)
		send[p] = append(send[p], g, nd.orig[x.rowOf(ptr, k)], int64(cls[pe[j]]))
	}
	got, err := collectives.AlltoallvSegments(x.c, send)
	if err != nil {
		return nil, nil, err
	}
	for _, seg := range got {
		for a := 0; a+2 < len(seg); a += 3 {
			i := seg[a] - first
			row := srcs[ptr[i]:ptr[i+1]]
			k, ok := slices.BinarySearch(row, seg[a+1])
			if !ok {
				return nil, nil, fmt.Errorf("internal error: pair (%d,%d) is not in the row of %d", seg[a+1], nd.orig[i], nd.orig[i])
			}
			cls[ptr[i]+int64(k)] = uint8(seg[a+2])
		}
	}

	// The training rows and the valid adjacency (the pairs are disjoint,
	// so no valid entry is a training one).
	lp := &partition.LinkPart{}
	tptr, tsrc = make([]int64, rows+1), make([]int64, 0, len(srcs))
	vptr := make([]int64, rows+1)
	var vsrc []int64
	for i := range rows {
		for k := ptr[i]; k < ptr[i+1]; k++ {
			switch cls[k] {
			case partition.LinkSetTrain:
				tsrc = append(tsrc, srcs[k])
			case partition.LinkSetValid:
				vsrc = append(vsrc, srcs[k])
			case classUnknown:
				return nil, nil, fmt.Errorf("internal error: pair (%d,%d) has no class", srcs[k], nd.orig[i])
			}
		}
		tptr[i+1], vptr[i+1] = int64(len(tsrc)), int64(len(vsrc))
	}
	if !lo.NoValidAdj {
		lp.ValidIndptr, lp.ValidIndicesOrig = vptr, vsrc
		lp.ValidIndices = make([]int64, len(vsrc))
		for j, u := range vsrc {
			lp.ValidIndices[j] = newOf(u)
		}
		if lp.ValidIndicesOrig == nil {
			lp.ValidIndicesOrig = []int64{}
		}
	}

	// Positives with their fixed negatives; the negatives' new ids below.
	sets := [3]*partition.LinkEdges{&lp.Train, &lp.Valid, &lp.Test}
	negOrig := [3]*[]int64{nil, &lp.ValidNegOrig, &lp.TestNegOrig}
	K := lo.NegsPerPos
	L := int64(x.elDim)
	for _, e := range sets {
		*e = partition.LinkEdges{Src: []int64{}, Dst: []int64{}, SrcOrig: []int64{}, DstOrig: []int64{}, ID: []int64{}, Time: []int64{}}
		if L > 0 {
			e.Targets = []float32{} // an empty set still has its (empty) file
		}
	}
	for j, k := range pe {
		i := x.rowOf(ptr, k)
		v, u, s := nd.orig[i], srcs[k], cls[k]
		e := sets[s]
		e.Src, e.Dst, e.SrcOrig, e.DstOrig = append(e.Src, first+int64(i)), append(e.Dst, newOf(u)), append(e.SrcOrig, v), append(e.DstOrig, u)
		e.ID, e.Time = append(e.ID, setID[j]), append(e.Time, 0)
		if L > 0 {
			e.Targets = append(e.Targets, el[k*L:(k+1)*L]...)
		}
		if s == partition.LinkSetTrain {
			continue
		}
		row := srcs[ptr[i]:ptr[i+1]]
		negative := func(a, w int64) bool {
			_, edge := slices.BinarySearch(row, w)
			return a != w && !edge
		}
		for r := range K {
			w, err := partition.EvalNegative(seed, int(s), setID[j], r, v, 0, n, negative)
			if err != nil {
				return nil, nil, err
			}
			*negOrig[s] = append(*negOrig[s], w)
		}
	}
	pools := [2]*partition.LinkEdges{&lp.ValidPool, &lp.TestPool}
	for q := range 2 {
		if *pools[q], err = x.linkPool(nd, ptr, srcs, partition.LinkSetValid+q, lo.Pool); err != nil {
			return nil, nil, err
		}
	}
	lp.OrigLo, lp.OrigHi = partition.OrigBlock(n, x.P, me)
	block := make([]int64, lp.OrigHi-lp.OrigLo)
	for i := range block {
		block[i] = lp.OrigLo + int64(i)
	}
	// One lookup for every other new id: negatives, pool destinations and
	// the Orig2New block.
	want := slices.Concat(lp.ValidNegOrig, lp.TestNegOrig, lp.ValidPool.DstOrig, lp.TestPool.DstOrig, block)
	newIDs, err := x.lookupRounds(want, func(t int, i int64) int64 { return x.newID[t][i] })
	if err != nil {
		return nil, nil, err
	}
	at := 0
	take := func(k int) []int64 { s := newIDs[at : at+k : at+k]; at += k; return s }
	lp.ValidNeg, lp.TestNeg = take(len(lp.ValidNegOrig)), take(len(lp.TestNegOrig))
	lp.ValidPool.Dst, lp.TestPool.Dst = take(len(lp.ValidPool.DstOrig)), take(len(lp.TestPool.DstOrig))
	lp.Orig2New = take(len(block))

	counts := []int64{int64(lp.Train.Len()), int64(lp.Valid.Len()), int64(lp.Test.Len())}
	if err := collectives.Allreduce(x.c, counts, collectives.Sum); err != nil {
		return nil, nil, err
	}
	x.lk = &linkSplit{part: lp, meta: partition.LinkMeta{
		Split: lo.Split, Kind: partition.LinkSplitRandom, Seed: seed, Train: counts[0], Valid: counts[1], Test: counts[2],
		NegsPerPos: K, Pool: lo.Pool, ValidAdj: !lo.NoValidAdj, EdgeTargetDim: x.elDim, EdgeClasses: x.elClasses,
	}}

	// Structural features replace (or stand in for missing) features; the
	// training degree is the row length (both directions of a pair).
	width := lo.StructFeats
	if width == 0 && x.dims[0] == 0 {
		width = partition.DefaultStructFeats
	}
	if width > 0 {
		f := &graph.Features{Dim: width, Data: make([]float32, int64(rows)*int64(width))}
		for i, v := range nd.orig {
			deg := tptr[i+1] - tptr[i]
			partition.StructFeatRow(f.Row(int64(i)), v, deg, deg)
		}
		nd.feat[0], x.dims[0] = f, width
		x.lk.meta.StructFeats = width
	}
	return tptr, tsrc, nil
}

// rowOf returns the row of entry k of rows ptr.
func (x *run) rowOf(ptr []int64, k int64) int {
	return sort.Search(len(ptr)-1, func(i int) bool { return ptr[i+1] > k })
}

// pairStarts returns, for each node of orig (this part's, ascending) with
// cnt[i*W+c] pairs of class c (W classes), the number of pairs of class c
// of smaller original ids (summed in original-id order by the block
// owners) at start[i*W+c], and the number of pairs of each class in m.
func (x *run) pairStarts(orig, cnt []int64, W int) (start, m []int64, err error) {
	send := make([][]int64, x.P)
	for i, v := range orig {
		r, _, _ := x.owner(v)
		send[r] = append(append(send[r], v), cnt[i*W:(i+1)*W]...)
	}
	got, err := collectives.AlltoallvSegments(x.c, send)
	if err != nil {
		return nil, nil, err
	}
	blo, bhi := x.block(0)
	local := make([]int64, (bhi-blo)*int64(W))
	for _, seg := range got {
		for a := 0; a+W < len(seg); a += W + 1 {
			copy(local[(seg[a]-blo)*int64(W):], seg[a+1:a+1+W])
		}
	}
	sum := make([]int64, W)
	for i := range local {
		local[i], sum[i%W] = sum[i%W], sum[i%W]+local[i]
	}
	totals, err := collectives.Allgather(x.c, sum)
	if err != nil {
		return nil, nil, err
	}
	off, m := make([]int64, W), make([]int64, W)
	for r := range x.P {
		for c := range W {
			if r < x.rank {
				off[c] += totals[r*W+c]
			}
			m[c] += totals[r*W+c]
		}
	}
	start = make([]int64, 0, len(orig)*W)
	for c := range W {
		// One lookup per class: lookup answers one value per id.
		sc, err := x.lookupRounds(orig, func(_ int, i int64) int64 { return off[c] + local[i*int64(W)+int64(c)] })
		if err != nil {
			return nil, nil, err
		}
		start = append(start, sc...)
	}
	// Class-major to node-major.
	out := make([]int64, len(start))
	for c := range W {
		for i := range orig {
			out[i*W+c] = start[c*len(orig)+i]
		}
	}
	return out, m, nil
}

// selectRank returns the element of rank r (0-based, in (key, id) order)
// among the pairs of all ranks (m in all), by a radix select of 16 bits a
// round over the key then the id; for r >= m one above every pair.
func (x *run) selectRank(keys []uint64, ids []int64, r, m int64) (uint64, int64, error) {
	if r >= m {
		return ^uint64(0), 1<<62 + 1, nil // ids are below m <= 2^62
	}
	digit := func(j, round int) int {
		if round < 4 {
			return int(keys[j]>>(48-16*round)) & 0xffff
		}
		return int(uint64(ids[j])>>(48-16*(round-4))) & 0xffff
	}
	cand := make([]int, len(keys))
	for j := range cand {
		cand[j] = j
	}
	var key uint64
	var id int64
	hist := make([]int64, 1<<16)
	for round := range 8 {
		clear(hist)
		for _, j := range cand {
			hist[digit(j, round)]++
		}
		if err := collectives.Allreduce(x.c, hist, collectives.Sum); err != nil {
			return 0, 0, err
		}
		d := 0
		for ; r >= hist[d]; d++ {
			r -= hist[d]
		}
		if round < 4 {
			key = key<<16 | uint64(d)
		} else {
			id = id<<16 | int64(d)
		}
		cand = slices.DeleteFunc(cand, func(j int) bool { return digit(j, round) != d })
	}
	return key, id, nil
}

// linkPool draws the negative pool of split set: rank r draws the pairs k
// of its block of [0, pool), each draw tested by the part owning its
// source (one exchange per round of draws), and every pair goes to the
// part of its source, in pool order. Src and SrcOrig, ID and Time are
// set; Dst is left to the caller's lookup.
func (x *run) linkPool(nd *nodeData, ptr, srcs []int64, set int, pool int64) (partition.LinkEdges, error) {
	n := x.s.NumNodes()
	P, me := x.P, x.rank
	first := x.offsets[me]
	seed := x.opt.Seed
	k0, k1 := pool*int64(me)/int64(P), pool*int64(me+1)/int64(P)
	pending := make([]int64, 0, k1-k0)
	for k := k0; k < k1; k++ {
		pending = append(pending, k)
	}
	attempt := make([]int, k1-k0)
	var doneK, doneU, doneW, doneG []int64
	for {
		left, err := collectives.AllreduceScalar(x.c, int64(len(pending)), collectives.Sum)
		if err != nil {
			return partition.LinkEdges{}, err
		}
		if left == 0 {
			break
		}
		us, ws := make([]int64, len(pending)), make([]int64, len(pending))
		for j, k := range pending {
			us[j], ws[j] = partition.PoolCandidate(seed, set, k, attempt[k-k0], 0, n, 0, n)
		}
		gs, err := x.lookupRounds(us, func(t int, i int64) int64 { return x.newID[t][i] })
		if err != nil {
			return partition.LinkEdges{}, err
		}
		req := make([][]int64, P)
		for j, g := range gs {
			p := x.partOf(g)
			req[p] = append(req[p], g, ws[j])
		}
		got, err := collectives.AlltoallvSegments(x.c, req)
		if err != nil {
			return partition.LinkEdges{}, err
		}
		rep := make([][]int64, P)
		for q, seg := range got {
			for a := 0; a+1 < len(seg); a += 2 {
				i := seg[a] - first
				u, w := nd.orig[i], seg[a+1]
				_, edge := slices.BinarySearch(srcs[ptr[i]:ptr[i+1]], w)
				ok := int64(0)
				if u != w && !edge {
					ok = 1
				}
				rep[q] = append(rep[q], ok)
			}
		}
		back, err := collectives.AlltoallvSegments(x.c, rep)
		if err != nil {
			return partition.LinkEdges{}, err
		}
		// Replies come per part in request order.
		pos := make([]int, P)
		still := pending[:0]
		for j, k := range pending {
			p := x.partOf(gs[j])
			ok := back[p][pos[p]] == 1
			pos[p]++
			if ok {
				doneK, doneU, doneW, doneG = append(doneK, k), append(doneU, us[j]), append(doneW, ws[j]), append(doneG, gs[j])
				continue
			}
			if attempt[k-k0]++; attempt[k-k0] == partition.PoolDraws {
				return partition.LinkEdges{}, partition.ErrPoolDraws(set, k)
			}
			still = append(still, k)
		}
		pending = still
	}
	out := make([][]int64, P)
	for j, g := range doneG {
		p := x.partOf(g)
		out[p] = append(out[p], doneK[j], doneU[j], doneW[j], g)
	}
	got, err := collectives.AlltoallvSegments(x.c, out)
	if err != nil {
		return partition.LinkEdges{}, err
	}
	type pair struct{ k, u, w, g int64 }
	var ps []pair
	for _, seg := range got {
		for a := 0; a+3 < len(seg); a += 4 {
			ps = append(ps, pair{seg[a], seg[a+1], seg[a+2], seg[a+3]})
		}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.k, b.k) })
	e := partition.LinkEdges{Src: make([]int64, len(ps)), SrcOrig: make([]int64, len(ps)), DstOrig: make([]int64, len(ps)), ID: make([]int64, len(ps)), Time: make([]int64, len(ps))}
	for i, p := range ps {
		e.Src[i], e.SrcOrig[i], e.DstOrig[i], e.ID[i] = p.g, p.u, p.w, p.k
	}
	return e, nil
}
