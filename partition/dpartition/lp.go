package dpartition

import (
	"math/bits"
	"slices"
	"sort"
	"time"

	"mpignn/collectives"
	"mpignn/internal/hashkey"
)

// MethodLP partitions by distributed size-constrained label propagation
// (in the style of Spinner, XtraPuLP and ParHIP's refinement): every rank
// holds only its share of the symmetric graph and the labels of its
// vertices' remote neighbours.
const MethodLP = "lp"

const (
	// lpRounds bounds the rounds; a round moves at most half the nodes
	// (a hashed half, so that neighbours do not swap back and forth).
	lpRounds = 30
	// lpEpsMille: a part weighs at most (1 + lpEpsMille/1000) x the
	// average vertex weight (plus one vertex, so that it is feasible).
	lpEpsMille = 30
	// lpStopMille: stop when at most this many nodes per thousand moved in
	// a round and no part is over the bound.
	lpStopMille = 1
	// lpBuckets orders a round's candidate moves of one (from, to) pair by
	// a hash of the node; moves that gain are taken before moves forced
	// out of an overweight part (which use the next lpBuckets buckets).
	lpBuckets = 64
	// lpTag separates label propagation's hashes from every other use of
	// the same seed.
	lpTag = 0x6c6162656c70 // "labelp"
)

// lpGraph is one rank's share of a symmetric graph: its vertices are the
// global range [vtxdist[rank], vtxdist[rank+1]); adj holds neighbours'
// global ids; key is the id each vertex is hashed by, which must not
// depend on the number of ranks (the homogenized node id).
type lpGraph struct {
	vtxdist   []int64
	xadj, adj []int64
	vwgt      []int64
	key       []uint64
}

// lpAssign partitions the symmetric graph by label propagation and fills
// x.assign.
func (x *run) lpAssign() error {
	l := x.pmLayout()
	t0 := time.Now()
	g, err := x.symGraph(l)
	if err != nil {
		return err
	}
	t0 = x.phase("graph", t0)
	key := make([]uint64, len(g.vwgt))
	for t := range x.s.NumTypes() {
		a, b := x.block(t)
		off := l.typeOff[x.rank][t]
		for i := range b - a {
			key[off+i] = uint64(x.s.NodeOrig[t] + a + i)
		}
	}
	part, err := labelPropagation(x.c, &lpGraph{vtxdist: l.vtxdist, xadj: g.xadj, adj: g.adj, vwgt: g.vwgt, key: key}, x.K, x.opt.Seed)
	if err != nil {
		return err
	}
	x.phase("label propagation", t0)
	x.setAssign(l, part)
	return nil
}

// ghostExchange refreshes the labels of a rank's remote neighbours (or
// fetches any list of vertices' values): the owner of each sends the
// values the others asked for once.
type ghostExchange struct {
	c      *collectives.Comm
	ids    []int64 // the global ids fetched, sorted
	req    []int64 // local indices the other ranks asked for, by asking rank
	counts []int64 // how many each rank asked for
}

// newFetch asks the owners (by vtxdist) of ids, sorted and distinct, for
// them once; fetch then returns their values in that order.
func newFetch(c *collectives.Comm, vtxdist, ids []int64) (*ghostExchange, error) {
	P, me := c.Size(), c.Rank()
	counts := make([]int64, P)
	for _, v := range ids {
		counts[sort.Search(P, func(r int) bool { return vtxdist[r+1] > v })]++
	}
	req, rc, err := collectives.Alltoallv(c, ids, counts)
	if err != nil {
		return nil, err
	}
	for i := range req {
		req[i] -= vtxdist[me]
	}
	// The owner answers in the order asked, which is ids' order (sorted,
	// so grouped by owner in rank order).
	return &ghostExchange{c: c, ids: ids, req: req, counts: rc}, nil
}

// newGhostExchange lists the distinct remote neighbours in adj (global
// ids of a graph distributed by vtxdist), asks their owners for them once,
// and rewrites adj into slots of a label array: local vertex i is slot i,
// the j-th remote neighbour (by global id) slot n+j. It returns the
// exchange and the number of remote neighbours.
func newGhostExchange(c *collectives.Comm, vtxdist, adj []int64) (*ghostExchange, int, error) {
	me := c.Rank()
	lo, hi := vtxdist[me], vtxdist[me+1]
	var ghosts []int64
	for _, v := range adj {
		if v < lo || v >= hi {
			ghosts = append(ghosts, v)
		}
	}
	slices.Sort(ghosts)
	ghosts = slices.Compact(ghosts)
	e, err := newFetch(c, vtxdist, ghosts)
	if err != nil {
		return nil, 0, err
	}
	n := hi - lo
	for j, v := range adj {
		if v >= lo && v < hi {
			adj[j] = v - lo
		} else {
			k, _ := slices.BinarySearch(ghosts, v)
			adj[j] = n + int64(k)
		}
	}
	return e, len(ghosts), nil
}

// fetch returns the values in src (indexed by local vertex) of e's ids.
func fetch[T collectives.Elem](e *ghostExchange, src []T) ([]T, error) {
	send := make([]T, len(e.req))
	for j, i := range e.req {
		send[j] = src[i]
	}
	got, _, err := collectives.Alltoallv(e.c, send, e.counts)
	return got, err
}

// fetchPairs is fetch of two values per vertex (src[2i], src[2i+1]).
func fetchPairs[T collectives.Elem](e *ghostExchange, src []T) ([]T, error) {
	send := make([]T, 2*len(e.req))
	for j, i := range e.req {
		send[2*j], send[2*j+1] = src[2*i], src[2*i+1]
	}
	counts := make([]int64, len(e.counts))
	for r, n := range e.counts {
		counts[r] = 2 * n
	}
	got, _, err := collectives.Alltoallv(e.c, send, counts)
	return got, err
}

// exchangeLabels copies the current labels of e's remote neighbours into
// lab[n:].
func exchangeLabels[T collectives.Elem](e *ghostExchange, lab []T, n int64) error {
	got, err := fetch(e, lab)
	if err != nil {
		return err
	}
	copy(lab[n:], got)
	return nil
}

// labelPropagation partitions g into K parts and returns the part of each
// of this rank's vertices. The result depends on g and seed only, not on
// the number of ranks: the start is a hash of (seed, cluster label; the
// clusters by lpClusters), every choice a
// hash of (seed, round, key[, part]), and all sums are of integers.
//
// A round: each node of a hashed half picks the part most of its
// neighbours are in (ties by hash), a node in a part over the bound U also
// a lighter part when nothing gains; the candidates' weights are summed
// per (from, to) pair and priority bucket over all ranks; a pair's
// smaller direction moves entirely (swaps cost no balance) and the larger
// one up to the smaller plus its share of the room U - W[to], taking whole
// buckets in priority order, so that no part grows past U.
func labelPropagation(c *collectives.Comm, g *lpGraph, K int, seed uint64) ([]int32, error) {
	n := int64(len(g.vwgt))
	gx, ghosts, err := newGhostExchange(c, g.vtxdist, g.adj)
	if err != nil {
		return nil, err
	}
	cl, err := lpClusters(gx, g, n, ghosts, seed)
	if err != nil {
		return nil, err
	}
	lab := make([]int32, n+int64(ghosts))
	W := make([]int64, K+2) // part weights, node count, heaviest vertex
	for i := range n {
		lab[i] = int32(hashkey.Hash64(seed, lpTag, key0, cl[i]) % uint64(K))
		W[lab[i]] += g.vwgt[i]
	}
	W[K] = n
	maxw := int64(0)
	for _, w := range g.vwgt {
		maxw = max(maxw, w)
	}
	if err := collectives.Allreduce(c, W[:K+1], collectives.Sum); err != nil {
		return nil, err
	}
	if W[K+1], err = collectives.AllreduceScalar(c, maxw, collectives.Max); err != nil {
		return nil, err
	}
	if err := exchangeLabels(gx, lab, n); err != nil {
		return nil, err
	}
	N, total := W[K], int64(0)
	for _, w := range W[:K] {
		total += w
	}
	U := max(total*(1000+lpEpsMille)/(1000*int64(K)), (total+int64(K)-1)/int64(K)+W[K+1])
	W = W[:K]

	const B = 2 * lpBuckets
	cnt := make([]int64, K)
	var touched []int32
	var candI []int64
	var candTo []int32
	var candB []uint8
	hist := make([]int64, K*K*B)
	thr := make([]int, K*K)
	delta := make([]int64, K+1)
	for round := uint64(0); round < lpRounds; round++ {
		clear(hist)
		candI, candTo, candB = candI[:0], candTo[:0], candB[:0]
		for i := range n {
			h := hashkey.Hash64(seed, lpTag, round+1, g.key[i])
			if h>>63 != 0 {
				continue
			}
			a := lab[i]
			touched = touched[:0]
			for _, s := range g.adj[g.xadj[i]:g.xadj[i+1]] {
				p := lab[s]
				if cnt[p] == 0 {
					touched = append(touched, p)
				}
				cnt[p]++
			}
			forced := W[a] > U
			best, bestC, bestH := int32(-1), int64(0), uint64(0)
			for _, p := range touched {
				if p == a || forced && W[p] >= U {
					continue
				}
				switch {
				case best < 0 || cnt[p] > bestC:
					best, bestC, bestH = p, cnt[p], 0
				case cnt[p] == bestC:
					// Ties by hash, never by the order of the neighbours.
					if bestH == 0 {
						bestH = hashkey.Hash64(seed, lpTag, round+1, g.key[i], uint64(best))
					}
					if hp := hashkey.Hash64(seed, lpTag, round+1, g.key[i], uint64(p)); hp > bestH {
						best, bestH = p, hp
					}
				}
			}
			gain := bestC - cnt[a]
			for _, p := range touched {
				cnt[p] = 0
			}
			if forced && best < 0 {
				for p := range int32(K) {
					if p != a && (best < 0 || W[p] < W[best]) {
						best = p
					}
				}
				gain = 0
			}
			if best < 0 || gain <= 0 && !forced {
				continue
			}
			// Larger gains first (gain 1 in the second half), then forced
			// moves by their loss; a hash orders the nodes inside a class.
			var b uint8
			switch {
			case gain > 1:
				b = uint8(h >> 58 & (lpBuckets/2 - 1))
			case gain == 1:
				b = lpBuckets/2 + uint8(h>>58&(lpBuckets/2-1))
			default:
				b = lpBuckets + uint8(min(-gain, lpBuckets/4-1))*4 + uint8(h>>61&3)
			}
			hist[(int(a)*K+int(best))*B+int(b)] += g.vwgt[i]
			candI, candTo, candB = append(candI, i), append(candTo, best), append(candB, b)
		}
		if err := collectives.Allreduce(c, hist, collectives.Sum); err != nil {
			return nil, err
		}
		lpThresholds(hist, W, U, K, thr)
		var acc []int // accepted candidates
		for j, i := range candI {
			if int(candB[j]) < thr[int(lab[i])*K+int(candTo[j])] {
				acc = append(acc, j)
			}
		}
		// Whole buckets bound each pair's flow only up to a bucket, so a
		// part can still end over the bound: then every move into it is
		// undone, until no part is over max(U, its weight before the
		// round). A part is found over at most once (its inflow undone,
		// it weighs at most what it did), so this ends within K steps.
		bad := make([]bool, K)
		for {
			clear(delta)
			for _, j := range acc {
				i, b := candI[j], candTo[j]
				a := lab[i]
				delta[a] -= g.vwgt[i]
				delta[b] += g.vwgt[i]
				delta[K]++
			}
			if err := collectives.Allreduce(c, delta, collectives.Sum); err != nil {
				return nil, err
			}
			found := false
			for p := range K {
				if W[p]+delta[p] > max(U, W[p]) {
					bad[p], found = true, true
				}
			}
			if !found {
				break
			}
			acc = slices.DeleteFunc(acc, func(j int) bool { return bad[candTo[j]] })
		}
		for _, j := range acc {
			lab[candI[j]] = candTo[j]
		}
		over := false
		for p := range K {
			W[p] += delta[p]
			over = over || W[p] > U
		}
		if err := exchangeLabels(gx, lab, n); err != nil {
			return nil, err
		}
		if !over && delta[K]*1000 <= N*lpStopMille {
			break
		}
	}
	return lab[:n], nil
}

// lpClusterRounds is the number of rounds of the clustering that gives
// the start: few, so that clusters stay small against a part.
const lpClusterRounds = 3

// lpClusters clusters the graph by plain label propagation, labels being
// node keys (each node starts as its own cluster, then takes the label
// most of its neighbours have, ties by hash), for lpClusterRounds rounds
// of a hashed half of the nodes. Parts then start as random unions of
// clusters (a hash of the cluster's label), which puts most of a
// community in one part: from a start of single nodes, label propagation
// with as few labels as parts freezes with communities split.
func lpClusters(gx *ghostExchange, g *lpGraph, n int64, ghosts int, seed uint64) ([]uint64, error) {
	cl := make([]uint64, n+int64(ghosts))
	copy(cl, g.key)
	if err := exchangeLabels(gx, cl, n); err != nil {
		return nil, err
	}
	var nb []uint64
	for round := uint64(0); round < lpClusterRounds; round++ {
		next := slices.Clone(cl[:n])
		for i := range n {
			h := hashkey.Hash64(seed, lpTag, 1<<32+round, g.key[i])
			if h>>63 != 0 {
				continue
			}
			nb = nb[:0]
			for _, s := range g.adj[g.xadj[i]:g.xadj[i+1]] {
				nb = append(nb, cl[s])
			}
			if len(nb) == 0 {
				continue
			}
			slices.Sort(nb)
			own := int64(0)
			best, bestC, bestH := uint64(0), int64(0), uint64(0)
			for j := 0; j < len(nb); {
				k := j
				for k < len(nb) && nb[k] == nb[j] {
					k++
				}
				c := int64(k - j)
				if nb[j] == cl[i] {
					own = c
				}
				switch hl := hashkey.Hash64(seed, lpTag, 1<<32+round, g.key[i], nb[j]); {
				case c > bestC || c == bestC && hl > bestH:
					best, bestC, bestH = nb[j], c, hl
				}
				j = k
			}
			if bestC > own {
				next[i] = best
			}
		}
		copy(cl, next)
		if err := exchangeLabels(gx, cl, n); err != nil {
			return nil, err
		}
	}
	return cl[:n], nil
}

// key0 is the round number of the initial assignment's hash (rounds hash
// 1, 2, ...).
const key0 = 0

// lpThresholds sets thr[a*K+b] to the number of priority buckets of pair
// (a, b) that move: all of the pair's smaller direction, and of the larger
// one whole buckets up to the smaller direction plus b's share of its
// room U - W[b] (shared among the pairs into b by their excess).
func lpThresholds(hist, W []int64, U int64, K int, thr []int) {
	const B = 2 * lpBuckets
	D := make([]int64, K*K)
	for pr := range K * K {
		for _, w := range hist[pr*B : (pr+1)*B] {
			D[pr] += w
		}
	}
	excess := func(a, b int) int64 { return max(0, D[a*K+b]-D[b*K+a]) }
	for b := range K {
		room := max(0, U-W[b])
		exSum := int64(0)
		for a := range K {
			exSum += excess(a, b)
		}
		for a := range K {
			allow := min(D[a*K+b], D[b*K+a])
			if ex := excess(a, b); ex > 0 {
				// room*ex/exSum <= room: no overflow in the quotient.
				hi, lo := bits.Mul64(uint64(room), uint64(ex))
				q, _ := bits.Div64(hi, lo, uint64(exSum))
				allow = min(D[a*K+b], D[b*K+a]+int64(q))
			}
			t, sum := 0, int64(0)
			for t < B && sum+hist[(a*K+b)*B+t] <= allow {
				sum += hist[(a*K+b)*B+t]
				t++
			}
			thr[a*K+b] = t
		}
	}
}
