package dpartition

import (
	"cmp"
	"slices"
	"sort"

	"mpignn/collectives"
	"mpignn/internal/hashkey"
)

// mlGraph is one rank's share of one level of the multilevel hierarchy: a
// symmetric graph with edge weights and ncon vertex weights (constraints)
// per vertex, distributed by vtxdist as lpGraph. Before newGhostExchange
// adj holds global ids, after it slots (local vertices, then ghosts).
type mlGraph struct {
	vtxdist   []int64
	xadj, adj []int64
	ewgt      []int64 // per adjacency entry
	ncon      int
	cw        []int64 // constraint weights, vertex-major (n x ncon)
	vwgt      []int64 // combined weight that bounds clusters
	key       []uint64
}

func (g *mlGraph) n() int64 { return int64(len(g.key)) }

// mlLevel is a level of the hierarchy with its ghost exchange and, for
// every level but the coarsest, the map to the next coarser one.
type mlLevel struct {
	g      *mlGraph
	gx     *ghostExchange
	ghosts int
	N      int64          // vertices on all ranks
	cid    []int64        // coarse id of each local vertex
	up     *ghostExchange // fetches values of the distinct cids, sorted
}

const (
	// mlContraction (KaMinPar's C): coarsen until at most C x parts
	// vertices remain, and bound clusters by eps x total / min(parts,
	// n / C), so that a level cannot shrink below that.
	mlContraction = 2000
	// mlClusterEpsMille is that eps, in thousandths.
	mlClusterEpsMille = 50
	// mlClusterRounds of clustering per level, each moving a hashed half.
	mlClusterRounds = 5
	// mlMaxLevels bounds the hierarchy.
	mlMaxLevels = 24
	// mlTag separates the multilevel scheme's hashes from lp's.
	mlTag = 0x6d756c74696c // "multil"
)

// mlCluster clusters level L by size-constrained label propagation: a
// cluster is named by the global id of its first vertex (its
// representative, whose owner keeps the cluster's weight), every vertex
// starts alone, and a hashed half of the vertices per round joins the
// neighbouring cluster it is most strongly connected to (edge weights),
// if that beats its own and the cluster stays within maxCW; ties go by a
// hash of the cluster's key. The representatives' owners accept the
// round's joins in hash order while the cluster's weight stays within
// maxCW, so no cluster grows past it. It returns the cluster of each
// local vertex.
func mlCluster(c *collectives.Comm, L *mlLevel, seed uint64, lev int, maxCW int64) ([]int64, error) {
	g := L.g
	n := g.n()
	P, me := c.Size(), c.Rank()
	lo := g.vtxdist[me]
	owner := func(v int64) int { return sort.Search(P, func(r int) bool { return g.vtxdist[r+1] > v }) }
	lab := make([]int64, n+int64(L.ghosts))
	for i := range n {
		lab[i] = lo + i
	}
	if err := exchangeLabels(L.gx, lab, n); err != nil {
		return nil, err
	}
	// wk: per local vertex, the weight of the cluster it represents and
	// its key (the cluster's), fetched together.
	wk := make([]int64, 2*n)
	for i := range n {
		wk[2*i], wk[2*i+1] = g.vwgt[i], int64(g.key[i])
	}
	pos := make([]int32, len(lab))
	mark := make([]bool, len(lab)) // slots next to the round's vertices
	var conn []int64
	var touched []int32
	var need []int64
	moveTo := make([]int64, n)
	for round := range uint64(mlClusterRounds) {
		hashOf := func(k uint64) uint64 { return hashkey.Hash64(seed, mlTag, uint64(lev), round, k) }
		// The weights of the clusters next to the round's vertices.
		clear(mark)
		for i := range n {
			if hashOf(g.key[i])>>63 != 0 {
				continue
			}
			for _, s := range g.adj[g.xadj[i]:g.xadj[i+1]] {
				mark[s] = true
			}
		}
		need = need[:0]
		for s, m := range mark {
			if m {
				need = append(need, lab[s])
			}
		}
		slices.Sort(need)
		need = slices.Compact(need)
		fx, err := newFetch(c, g.vtxdist, need)
		if err != nil {
			return nil, err
		}
		needWK, err := fetchPairs(fx, wk)
		if err != nil {
			return nil, err
		}
		// Each slot's cluster as an index into need, so that a vertex sums
		// its connections in a dense array (no sort per vertex).
		for s := range lab {
			k, ok := slices.BinarySearch(need, lab[s])
			pos[s] = int32(k)
			if !ok {
				pos[s] = -1
			}
		}
		if cap(conn) < len(need) {
			conn = make([]int64, len(need))
		}
		conn = conn[:len(need)]
		// Each vertex of the round picks a cluster; proposals go to the
		// cluster's owner as (cluster, key, weight).
		send := make([][]int64, P)
		for i := range n {
			moveTo[i] = -1
			if hashOf(g.key[i])>>63 != 0 {
				continue
			}
			touched = touched[:0]
			for e := g.xadj[i]; e < g.xadj[i+1]; e++ {
				k := pos[g.adj[e]]
				if conn[k] == 0 {
					touched = append(touched, k)
				}
				conn[k] += g.ewgt[e]
			}
			own := int64(0)
			best, bestC, bestH := int64(-1), int64(0), uint64(0)
			for _, k := range touched {
				l, cn := need[k], conn[k]
				conn[k] = 0
				if l == lab[i] {
					own = cn
				} else if needWK[2*k]+g.vwgt[i] <= maxCW {
					lk := uint64(needWK[2*k+1])
					hl := hashkey.Hash64(seed, mlTag, uint64(lev), round, g.key[i], lk)
					if best < 0 || cn > bestC || cn == bestC && hl > bestH {
						best, bestC, bestH = l, cn, hl
					}
				}
			}
			if best < 0 || bestC <= own {
				continue
			}
			moveTo[i] = best
			r := owner(best)
			send[r] = append(send[r], best, int64(g.key[i]), g.vwgt[i])
		}
		got, err := collectives.AlltoallvSegments(c, send)
		if err != nil {
			return nil, err
		}
		// Owners accept, per cluster, in hash order of the joining keys.
		type prop struct {
			lab  int64
			h    uint64
			key  uint64
			w    int64
			r, j int // source rank and index of the proposal there
		}
		var props []prop
		for r, rec := range got {
			for j := 0; j < len(rec); j += 3 {
				k := uint64(rec[j+1])
				props = append(props, prop{rec[j], hashOf(k ^ 0x5a5a), k, rec[j+2], r, j / 3})
			}
		}
		slices.SortFunc(props, func(a, b prop) int {
			return cmp.Or(cmp.Compare(a.lab, b.lab), cmp.Compare(a.h, b.h), cmp.Compare(a.key, b.key))
		})
		reply := make([][]byte, P)
		for r, rec := range got {
			reply[r] = make([]byte, len(rec)/3)
		}
		for _, p := range props {
			if wk[2*(p.lab-lo)]+p.w <= maxCW {
				wk[2*(p.lab-lo)] += p.w
				reply[p.r][p.j] = 1
			}
		}
		ans, err := collectives.AlltoallvSegments(c, reply)
		if err != nil {
			return nil, err
		}
		// Apply the accepted joins (answers come in the order sent) and
		// tell the left clusters' owners.
		next := make([]int, P)
		leave := make([][]int64, P)
		for i := range n {
			if moveTo[i] < 0 {
				continue
			}
			r := owner(moveTo[i])
			ok := ans[r][next[r]] == 1
			next[r]++
			if !ok {
				continue
			}
			old := lab[i]
			ro := owner(old)
			leave[ro] = append(leave[ro], old, g.vwgt[i])
			lab[i] = moveTo[i]
		}
		left, err := collectives.AlltoallvSegments(c, leave)
		if err != nil {
			return nil, err
		}
		for _, rec := range left {
			for j := 0; j < len(rec); j += 2 {
				wk[2*(rec[j]-lo)] -= rec[j+1]
			}
		}
		if err := exchangeLabels(L.gx, lab, n); err != nil {
			return nil, err
		}
	}
	return lab[:n], nil
}

// mlContract contracts level L by the clustering lab (a cluster id per
// local vertex: the global id of its representative): the owner of a
// representative owns the cluster's coarse vertex, numbered on that rank
// by the representative's key (so the coarse graph, read by keys, does
// not depend on the number of ranks), with the summed vertex weights and
// the summed weights of the edges between clusters. It sets L.cid and
// L.up and returns the coarse graph (adj in global ids).
//
// Vertices without edges, which no clustering joins, would keep the
// coarse graph from shrinking (and every rank gathers the coarsest): they
// go into 8 x isoW/maxCW buckets (small, so that they balance) by a hash
// of their key instead, buckets that
// rank 0 owns as coarse vertices of key 1<<63 | bucket, after its others.
func mlContract(c *collectives.Comm, L *mlLevel, lab []int64, seed uint64, lev int, maxCW int64) (*mlGraph, error) {
	g := L.g
	n, ncon := g.n(), g.ncon
	P, me := c.Size(), c.Rank()
	lo, hi := g.vtxdist[me], g.vtxdist[me+1]
	owner := func(vtxdist []int64, v int64) int {
		if v < 0 {
			return 0 // a bucket of vertices without edges
		}
		return sort.Search(P, func(r int) bool { return vtxdist[r+1] > v })
	}
	isoW := int64(0)
	for i := range n {
		if g.xadj[i] == g.xadj[i+1] {
			isoW += g.vwgt[i]
		}
	}
	isoW, err := collectives.AllreduceScalar(c, isoW, collectives.Sum)
	if err != nil {
		return nil, err
	}
	nb := int64(0)
	if isoW > 0 {
		nb = max(1, 8*isoW/max(maxCW, 1))
		for i := range n {
			if g.xadj[i] == g.xadj[i+1] {
				lab[i] = -1 - int64(hashkey.Hash64(seed, mlTag, uint64(lev), 2<<32, g.key[i])%uint64(nb))
			}
		}
	}
	// Vertex weights per cluster, summed here and then at the owner.
	stride := 2 + ncon
	ord := make([]int64, n)
	for i := range n {
		ord[i] = i
	}
	slices.SortFunc(ord, func(a, b int64) int { return cmp.Compare(lab[a], lab[b]) })
	send := make([][]int64, P)
	var distinct []int64
	for j := 0; j < len(ord); {
		l := lab[ord[j]]
		rec := make([]int64, stride)
		rec[0] = l
		for ; j < len(ord) && lab[ord[j]] == l; j++ {
			i := ord[j]
			rec[1] += g.vwgt[i]
			for k := range ncon {
				rec[2+k] += g.cw[i*int64(ncon)+int64(k)]
			}
		}
		r := owner(g.vtxdist, l)
		send[r] = append(send[r], rec...)
		distinct = append(distinct, l)
	}
	got, err := collectives.AlltoallvSegments(c, send)
	if err != nil {
		return nil, err
	}
	// sum[i]: the cluster represented by local vertex i; vsum[b]: bucket b.
	sum := make([]int64, (hi-lo)*int64(stride))
	used := make([]bool, hi-lo)
	vsum := make([]int64, nb*int64(stride))
	vused := make([]bool, nb)
	for _, rec := range got {
		for j := 0; j < len(rec); j += stride {
			at, i := sum, rec[j]-lo
			if rec[j] < 0 {
				at, i = vsum, -1-rec[j]
				vused[i] = true
			} else {
				used[i] = true
			}
			for k := 1; k < stride; k++ {
				at[i*int64(stride)+int64(k)] += rec[j+k]
			}
		}
	}
	var reps []int64
	for i := range hi - lo {
		if used[i] {
			reps = append(reps, i)
		}
	}
	slices.SortFunc(reps, func(a, b int64) int { return cmp.Compare(g.key[a], g.key[b]) })
	var buckets []int64
	for b, u := range vused {
		if u {
			buckets = append(buckets, int64(b))
		}
	}
	nc := int64(len(reps) + len(buckets))
	counts, err := collectives.Allgather(c, []int64{nc})
	if err != nil {
		return nil, err
	}
	cg := &mlGraph{vtxdist: make([]int64, P+1), ncon: ncon, xadj: []int64{0}}
	for r := range P {
		cg.vtxdist[r+1] = cg.vtxdist[r] + counts[r]
	}
	clo := cg.vtxdist[me]
	cidOfRep := make([]int64, hi-lo)
	cg.key = make([]uint64, nc)
	cg.vwgt = make([]int64, nc)
	cg.cw = make([]int64, nc*int64(ncon))
	for j, i := range reps {
		cidOfRep[i] = clo + int64(j)
		cg.key[j] = g.key[i]
		cg.vwgt[j] = sum[i*int64(stride)+1]
		copy(cg.cw[int64(j)*int64(ncon):], sum[i*int64(stride)+2:(i+1)*int64(stride)])
	}
	vcid := make([]int64, nb)
	for j, b := range buckets {
		j += len(reps)
		vcid[b] = clo + int64(j)
		cg.key[j] = 1<<63 | uint64(b)
		cg.vwgt[j] = vsum[b*int64(stride)+1]
		copy(cg.cw[int64(j)*int64(ncon):], vsum[b*int64(stride)+2:(b+1)*int64(stride)])
	}
	if nb > 0 {
		if err := collectives.Bcast(c, vcid, 0); err != nil {
			return nil, err
		}
	}
	// Coarse ids of this rank's clusters, then of the ghosts' clusters.
	nv, _ := slices.BinarySearch(distinct, 0) // buckets (negative) first
	fx, err := newFetch(c, g.vtxdist, distinct[nv:])
	if err != nil {
		return nil, err
	}
	dc, err := fetch(fx, cidOfRep)
	if err != nil {
		return nil, err
	}
	cid := make([]int64, n+int64(L.ghosts))
	for i := range n {
		if lab[i] < 0 {
			cid[i] = vcid[-1-lab[i]]
			continue
		}
		k, _ := slices.BinarySearch(distinct[nv:], lab[i])
		cid[i] = dc[k]
	}
	if err := exchangeLabels(L.gx, cid, n); err != nil {
		return nil, err
	}
	// Coarse edges (cu, cv, w), summed here and then at cu's owner.
	// Rows are merged a coarse vertex at a time: here the rows of the
	// fine vertices of each cluster, at the owner the runs every rank
	// sent for each coarse vertex, each sorted by neighbour (small sorts,
	// no sort of all edges).
	type nbw struct{ v, w int64 }
	mergeRow := func(row []nbw) []nbw {
		slices.SortFunc(row, func(a, b nbw) int { return cmp.Compare(a.v, b.v) })
		out := row[:0]
		for _, x := range row {
			if k := len(out) - 1; k >= 0 && out[k].v == x.v {
				out[k].w += x.w
			} else {
				out = append(out, x)
			}
		}
		return out
	}
	byCid := make([]int64, n)
	for i := range n {
		byCid[i] = i
	}
	slices.SortFunc(byCid, func(a, b int64) int { return cmp.Compare(cid[a], cid[b]) })
	// One send buffer: byCid is in coarse-id order, so the rows come
	// grouped by owner in rank order, and a row is its coarse vertex, its
	// length and its (neighbour, weight) pairs (16 bytes per coarse edge
	// instead of 24 for (cu, cv, w) triples, and no per-rank slices that
	// alltoallv would copy into one).
	var ebuf []int64
	ecounts := make([]int64, P)
	var row []nbw
	for j := 0; j < len(byCid); {
		cu := cid[byCid[j]]
		row = row[:0]
		for ; j < len(byCid) && cid[byCid[j]] == cu; j++ {
			i := byCid[j]
			for e := g.xadj[i]; e < g.xadj[i+1]; e++ {
				if cv := cid[g.adj[e]]; cv != cu {
					row = append(row, nbw{cv, g.ewgt[e]})
				}
			}
		}
		merged := mergeRow(row)
		if len(merged) == 0 {
			continue
		}
		ebuf = append(ebuf, cu, int64(len(merged)))
		for _, x := range merged {
			ebuf = append(ebuf, x.v, x.w)
		}
		ecounts[owner(cg.vtxdist, cu)] += 2 + 2*int64(len(merged))
	}
	erecv, _, err := collectives.Alltoallv(c, ebuf, ecounts)
	if err != nil {
		return nil, err
	}
	// Runs for the same coarse vertex from several ranks, placed by
	// vertex (counting sort), then merged in place; the coarse graph's
	// arrays are allocated once at their final size.
	start := make([]int64, nc+1)
	for j := 0; j < len(erecv); j += 2 + 2*int(erecv[j+1]) {
		start[erecv[j]-clo+1] += erecv[j+1]
	}
	for u := range nc {
		start[u+1] += start[u]
	}
	flat := make([]nbw, start[nc])
	at := slices.Clone(start[:nc])
	for j := 0; j < len(erecv); {
		u, k := erecv[j]-clo, int(erecv[j+1])
		for q := range k {
			flat[at[u]] = nbw{erecv[j+2+2*q], erecv[j+3+2*q]}
			at[u]++
		}
		j += 2 + 2*k
	}
	size := make([]int64, nc)
	total := int64(0)
	for u := range nc {
		size[u] = int64(len(mergeRow(flat[start[u]:start[u+1]])))
		total += size[u]
	}
	cg.adj = make([]int64, 0, total)
	cg.ewgt = make([]int64, 0, total)
	cg.xadj = slices.Grow(cg.xadj, int(nc))
	for u := range nc {
		for _, x := range flat[start[u] : start[u]+size[u]] {
			cg.adj = append(cg.adj, x.v)
			cg.ewgt = append(cg.ewgt, x.w)
		}
		cg.xadj = append(cg.xadj, int64(len(cg.adj)))
	}

	// The map down, for projecting parts.
	L.cid = cid[:n]
	ups := slices.Clone(L.cid)
	slices.Sort(ups)
	ups = slices.Compact(ups)
	if L.up, err = newFetch(c, cg.vtxdist, ups); err != nil {
		return nil, err
	}
	return cg, nil
}
