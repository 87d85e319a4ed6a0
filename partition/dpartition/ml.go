package dpartition

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
)

// MethodML partitions by a distributed multilevel scheme (in the style of
// ParHIP and dKaMinPar): size-constrained label-propagation clustering and
// contraction on all ranks, METIS on the coarsest graph, balanced label
// propagation on every level back up, and, where the finest level ends
// over a bound, rebalancing swaps (mlRebalance).
const MethodML = "ml"

// mlInitialUB is METIS' imbalance on the coarsest graph, under the
// refinement's bound so that refinement starts with room.
const mlInitialUB = 1.03

// multilevel partitions g (adj in global ids; it is rewritten) into K
// parts and returns the part of each of this rank's vertices. K need not
// be the number of ranks, and the result does not depend on it: every
// choice is a hash of seed and vertex keys, every sum an integer one,
// owners order what they receive by key, and the coarsest graph reaches
// METIS in key order.
//
// step, if set, is called as each stage ends ("coarsening", "METIS",
// "refinement"), logf with a line per level.
func multilevel(c *collectives.Comm, g *mlGraph, K int, seed uint64, logf func(format string, args ...any), step func(name string)) ([]int32, error) {
	if step == nil {
		step = func(string) {}
	}
	var levels []*mlLevel
	maxw, err := mlMaxWeights(c, g)
	if err != nil {
		return nil, err
	}
	limit := int64(mlContraction) * int64(K)
	for lev := 0; ; lev++ {
		N := g.vtxdist[len(g.vtxdist)-1]
		gx, ghosts, err := newGhostExchange(c, g.vtxdist, g.adj)
		if err != nil {
			return nil, err
		}
		L := &mlLevel{g: g, gx: gx, ghosts: ghosts, N: N}
		levels = append(levels, L)
		if N <= limit || lev == mlMaxLevels-1 {
			break
		}
		if len(levels) > 1 && N*20 > levels[len(levels)-2].N*19 {
			break // the last level shrank by less than 5 %
		}
		total := int64(0)
		for _, w := range g.vwgt {
			total += w
		}
		maxw := slices.Max(append([]int64{0}, g.vwgt...))
		if total, err = collectives.AllreduceScalar(c, total, collectives.Sum); err != nil {
			return nil, err
		}
		if maxw, err = collectives.AllreduceScalar(c, maxw, collectives.Max); err != nil {
			return nil, err
		}
		kk := min(int64(K), max(2, N/mlContraction))
		maxCW := max(maxw, total*mlClusterEpsMille/(1000*kk))
		lab, err := mlCluster(c, L, seed, lev, maxCW)
		if err != nil {
			return nil, err
		}
		if g, err = mlContract(c, L, lab, seed, lev, maxCW); err != nil {
			return nil, err
		}
		if logf != nil {
			// Adjacency entries, fine and coarse, for the memory model
			// (doc.go): every rank logs, so every rank sums.
			m := []int64{int64(len(L.g.adj)), int64(len(g.adj))}
			if err := collectives.Allreduce(c, m, collectives.Sum); err != nil {
				return nil, err
			}
			logf("level %d: %d vertices, %d adjacency entries, clusters up to %d of %d, %d coarse vertices, %d entries", lev, N, m[0], maxCW, total, g.vtxdist[len(g.vtxdist)-1], m[1])
		}
	}
	step("coarsening")
	part, err := mlInitial(c, levels[len(levels)-1], K, seed)
	if err != nil {
		return nil, err
	}
	step("METIS")
	for l := len(levels) - 1; ; l-- {
		if part, err = mlRefine(c, levels[l], part, K, seed, l, maxw); err != nil {
			return nil, err
		}
		if l == 0 {
			if part, err = mlRebalance(c, levels[0], part, K, logf); err != nil {
				return nil, err
			}
			step("refinement")
			return part, nil
		}
		// Project: each vertex of level l-1 takes its cluster's part.
		L := levels[l-1]
		up, err := fetch(L.up, part)
		if err != nil {
			return nil, err
		}
		fine := make([]int32, len(L.cid))
		for i, v := range L.cid {
			k, _ := slices.BinarySearch(L.up.ids, v)
			fine[i] = up[k]
		}
		part = fine
	}
}

// mlInitial partitions the coarsest level with METIS on rank 0: each rank
// gathers the whole coarse graph and renumbers it by key, so that every
// rank count gives METIS the same input, and rank 0 broadcasts the parts.
func mlInitial(c *collectives.Comm, L *mlLevel, K int, seed uint64) ([]int32, error) {
	g := L.g
	n, ncon := g.n(), g.ncon
	lo := g.vtxdist[c.Rank()]
	deg := make([]int64, n)
	adj := make([]int64, len(g.adj))
	for i := range n {
		deg[i] = g.xadj[i+1] - g.xadj[i]
		for e := g.xadj[i]; e < g.xadj[i+1]; e++ {
			if s := g.adj[e]; s < n {
				adj[e] = lo + s
			} else {
				adj[e] = L.gx.ids[s-n]
			}
		}
	}
	keys, _, err := collectives.Allgatherv(c, g.key)
	if err != nil {
		return nil, err
	}
	degs, _, err := collectives.Allgatherv(c, deg)
	if err != nil {
		return nil, err
	}
	adjs, _, err := collectives.Allgatherv(c, adj)
	if err != nil {
		return nil, err
	}
	ews, _, err := collectives.Allgatherv(c, g.ewgt)
	if err != nil {
		return nil, err
	}
	cws, _, err := collectives.Allgatherv(c, g.cw)
	if err != nil {
		return nil, err
	}
	// METIS gives every rank the same parts, so one rank runs it and
	// broadcasts them (by global id): K parts of up to mlContraction x K
	// vertices take METIS minutes at K = 1024, every rank's cores at once
	// when each ran it.
	N := int64(len(keys))
	var msg []byte
	var merr error
	if c.Rank() == 0 {
		msg, merr = mlMetis(keys, degs, adjs, ews, cws, ncon, K, seed)
	}
	keys, degs, adjs, ews, cws = nil, nil, nil, nil, nil // the broadcast's buffer takes their place
	msg, err = collectives.BcastBytes(c, 0, msg, merr)
	if err != nil {
		return nil, fmt.Errorf("coarsest graph (%d vertices): %w", N, err)
	}
	if int64(len(msg)) != 4*N {
		return nil, fmt.Errorf("coarsest graph: %d bytes of parts for %d vertices", len(msg), N)
	}
	part := make([]int32, n)
	for i := range n {
		part[i] = int32(binary.LittleEndian.Uint32(msg[4*(lo+i):]))
	}
	return part, nil
}

// mlMetis partitions the gathered coarsest graph (every rank's keys,
// degrees, adjacency in global ids, edge and constraint weights) with
// METIS, renumbered by key, and returns the part of each global id as 4
// little-endian bytes.
func mlMetis(keys []uint64, degs, adjs, ews, cws []int64, ncon, K int, seed uint64) ([]byte, error) {
	N := int64(len(keys))
	order := make([]int64, N) // canonical index -> global id
	for v := range N {
		order[v] = v
	}
	slices.SortFunc(order, func(a, b int64) int { return cmp.Compare(keys[a], keys[b]) })
	pos := make([]int64, N)
	for j, v := range order {
		pos[v] = int64(j)
	}
	start := make([]int64, N+1)
	for v := range N {
		start[v+1] = start[v] + degs[v]
	}
	// Constraints that weigh nothing in all are left out (METIS cannot
	// balance them).
	var keep []int
	for k := range ncon {
		for v := range N {
			if cws[v*int64(ncon)+int64(k)] != 0 {
				keep = append(keep, k)
				break
			}
		}
	}
	nk := max(len(keep), 1)
	xadj := make([]int64, 1, N+1)
	cadj := make([]int64, 0, len(adjs))
	cew := make([]int64, 0, len(adjs))
	vw := make([]int64, N*int64(nk))
	type nb struct{ v, w int64 }
	var row []nb
	for j, v := range order {
		row = row[:0]
		for e := start[v]; e < start[v+1]; e++ {
			row = append(row, nb{pos[adjs[e]], ews[e]})
		}
		slices.SortFunc(row, func(a, b nb) int { return cmp.Compare(a.v, b.v) })
		for _, x := range row {
			cadj = append(cadj, x.v)
			cew = append(cew, x.w)
		}
		xadj = append(xadj, int64(len(cadj)))
		if len(keep) == 0 {
			vw[j] = 1
		}
		for m, k := range keep {
			vw[int64(j)*int64(nk)+int64(m)] = cws[v*int64(ncon)+int64(k)]
		}
	}
	all, err := partition.MetisCSR(xadj, cadj, cew, vw, nk, K, mlInitialUB, seed)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 4*N)
	for v := range N {
		binary.LittleEndian.PutUint32(msg[4*v:], uint32(all[pos[v]]))
	}
	return msg, nil
}

// mlAssign partitions the symmetric graph by the multilevel scheme and
// fills x.assign. The constraints are nodes (one per node type), training
// nodes of the split (when the dataset has it) and degree (edges).
func (x *run) mlAssign() error {
	l := x.pmLayout()
	t0 := time.Now()
	sg, err := x.symGraph(l)
	if err != nil {
		return err
	}
	n := int64(len(sg.vwgt))
	T := x.s.NumTypes()
	ncon := T + 2
	g := &mlGraph{vtxdist: l.vtxdist, xadj: sg.xadj, adj: sg.adj, ewgt: make([]int64, len(sg.adj)), ncon: ncon,
		cw: make([]int64, n*int64(ncon)), vwgt: sg.vwgt, key: make([]uint64, n)}
	for e := range g.ewgt {
		g.ewgt[e] = 1
	}
	for t := range T {
		a, b := x.block(t)
		off := l.typeOff[x.rank][t]
		for i := range b - a {
			v := off + i
			g.key[v] = uint64(x.s.NodeOrig[t] + a + i)
			g.cw[v*int64(ncon)+int64(t)] = 1
			g.cw[v*int64(ncon)+int64(T+1)] = sg.xadj[v+1] - sg.xadj[v]
		}
	}
	if err := x.trainWeights(l, g.cw, ncon, T); err != nil {
		return err
	}
	t0 = x.phase("graph", t0)
	part, err := multilevel(x.c, g, x.K, x.opt.Seed, nil, func(name string) { t0 = x.phase(name, t0) })
	if err != nil {
		return err
	}
	x.setAssign(l, part)
	return nil
}

// trainWeights sets constraint column col of cw to 1 for this rank's
// training nodes of the split the writer records (Options.Split, else
// partition.ResolveSplit's choice) of the label type.
func (x *run) trainWeights(l *pmLayout, cw []int64, ncon, col int) error {
	t := max(x.lt, 0)
	names := map[string]*graph.Split{}
	for _, n := range x.splits {
		names[n] = &graph.Split{}
	}
	name, err := partition.ResolveSplit(&graph.Dataset{Splits: names}, x.opt.Split)
	if err != nil || name == "" {
		return nil // nothing to balance (the writer reports a missing --split)
	}
	ct := x.ctype[t]
	lo, _ := x.block(t)
	off := l.typeOff[x.rank][t]
	for k := x.kLo[t]; k < x.kHi[t]; k++ {
		m, err := x.ch.ReadNodeInts(ct, graph.MaskKey(name, 0), k)
		if err != nil {
			return err
		}
		first := x.ch.NodeChunkStart(ct, k)
		for i, b := range m {
			if b != 0 {
				cw[(off+first+int64(i)-lo)*int64(ncon)+int64(col)] = 1
			}
		}
	}
	return nil
}
