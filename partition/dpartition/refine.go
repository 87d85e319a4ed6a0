package dpartition

import (
	"math/bits"
	"slices"

	"mpignn/collectives"
	"mpignn/internal/hashkey"
)

const (
	// mlEpsMille: every constraint of a part weighs at most (1 +
	// mlEpsMille/1000) x its average (plus the level's heaviest vertex in
	// it, so that it is feasible), METIS' ufactor 50.
	mlEpsMille = 50
	// mlRefineRounds bounds the refinement rounds per level.
	mlRefineRounds = 12
	// mlBuckets: per (from, to) pair, 16 gain classes (by the gain's bit
	// length, larger first) of 4 hashed buckets each, then 8 classes of
	// forced moves (by the loss's bit length) of 8 hashed buckets each:
	// small buckets, since a bucket moves only if it fits every
	// constraint's room.
	mlBuckets = 128
)

// mlMaxWeights returns the heaviest vertex weight of each constraint.
func mlMaxWeights(c *collectives.Comm, g *mlGraph) ([]int64, error) {
	maxw := make([]int64, g.ncon)
	for i, w := range g.cw {
		maxw[i%g.ncon] = max(maxw[i%g.ncon], w)
	}
	err := collectives.Allreduce(c, maxw, collectives.Max)
	return maxw, err
}

// mlBounds returns the per-constraint bound of a part, from the finest
// level's heaviest vertices maxw on every level (coarse levels' heavier
// vertices would loosen it, and what they leave over the finest bound
// the finest level cannot always move back), and the current weights of
// the parts (K x ncon).
func mlBounds(c *collectives.Comm, g *mlGraph, lab []int32, K int, maxw []int64) (U, W []int64, err error) {
	ncon := g.ncon
	W = make([]int64, K*ncon)
	for i := range g.n() {
		for k := range ncon {
			W[int(lab[i])*ncon+k] += g.cw[i*int64(ncon)+int64(k)]
		}
	}
	if err := collectives.Allreduce(c, W, collectives.Sum); err != nil {
		return nil, nil, err
	}
	U = make([]int64, ncon)
	for k := range ncon {
		total := int64(0)
		for p := range K {
			total += W[p*ncon+k]
		}
		U[k] = max(total*(1000+mlEpsMille)/(1000*int64(K)), (total+int64(K)-1)/int64(K)+maxw[k])
	}
	return U, W, nil
}

// ghostLabels returns part (the labels of the level's own vertices)
// followed by the labels of its ghost vertices, read from their owners. It
// is collective.
func ghostLabels(L *mlLevel, part []int32) ([]int32, error) {
	n := L.g.n()
	lab := make([]int32, n+int64(L.ghosts))
	copy(lab, part)
	if err := exchangeLabels(L.gx, lab, n); err != nil {
		return nil, err
	}
	return lab, nil
}

// mlRefine improves the parts (lab, one per local vertex) of level L by
// balanced label propagation, lp's rounds with edge weights and a bound
// per constraint: a hashed half of the vertices each proposes the part it
// is most strongly connected to (a vertex of a part over a bound in a
// constraint it weighs in, also the lightest part it fits), the proposals'
// weights are summed per (from, to) pair, priority bucket and constraint
// over all ranks, and each pair moves whole buckets while every
// constraint's flow stays within the swap and the target's room.
func mlRefine(c *collectives.Comm, L *mlLevel, part []int32, K int, seed uint64, lev int, maxw []int64) ([]int32, error) {
	g := L.g
	n, ncon := g.n(), g.ncon
	lab, err := ghostLabels(L, part)
	if err != nil {
		return nil, err
	}
	U, W, err := mlBounds(c, g, lab, K, maxw)
	if err != nil {
		return nil, err
	}
	const B = mlBuckets
	conn := make([]int64, K)
	var touched []int32
	var candI []int64
	var candTo []int32
	var candKey []uint64 // mlHist key of each proposal; then its index in the round's histogram
	var hist mlHist
	cwOf := func(i int64) []int64 { return g.cw[i*int64(ncon) : (i+1)*int64(ncon)] }
	fits := func(p int32, i int64) bool {
		for k, w := range cwOf(i) {
			if W[int(p)*ncon+k]+w > U[k] {
				return false
			}
		}
		return true
	}
	// load orders parts by their fullest constraint, relative to its bound.
	load := func(p int32) int64 {
		m := int64(0)
		for k := range ncon {
			if U[k] > 0 {
				m = max(m, W[int(p)*ncon+k]*(1<<20)/U[k])
			}
		}
		return m
	}
	for round := range uint64(mlRefineRounds) {
		candI, candTo, candKey = candI[:0], candTo[:0], candKey[:0]
		for i := range n {
			h := hashkey.Hash64(seed, mlTag, 1<<32+uint64(lev), round, g.key[i])
			if h>>63 != 0 {
				continue
			}
			a := lab[i]
			touched = touched[:0]
			for e := g.xadj[i]; e < g.xadj[i+1]; e++ {
				p := lab[g.adj[e]]
				if conn[p] == 0 {
					touched = append(touched, p)
				}
				conn[p] += g.ewgt[e]
			}
			forced := false
			for k, w := range cwOf(i) {
				forced = forced || w > 0 && W[int(a)*ncon+k] > U[k]
			}
			best, bestC, bestH := int32(-1), int64(0), uint64(0)
			for _, p := range touched {
				if p == a || forced && !fits(p, i) {
					continue
				}
				switch {
				case best < 0 || conn[p] > bestC:
					best, bestC, bestH = p, conn[p], 0
				case conn[p] == bestC:
					if bestH == 0 {
						bestH = hashkey.Hash64(seed, mlTag, 1<<32+uint64(lev), round, g.key[i], uint64(best))
					}
					if hp := hashkey.Hash64(seed, mlTag, 1<<32+uint64(lev), round, g.key[i], uint64(p)); hp > bestH {
						best, bestH = p, hp
					}
				}
			}
			if forced && best < 0 {
				for p := range int32(K) {
					if p != a && fits(p, i) && (best < 0 || load(p) < load(best)) {
						best = p
					}
				}
			}
			gain := int64(0)
			if best >= 0 {
				gain = conn[best] - conn[a]
			}
			for _, p := range touched {
				conn[p] = 0
			}
			if best < 0 || gain <= 0 && !forced {
				continue
			}
			var b int
			if gain > 0 {
				b = (15-min(bits.Len64(uint64(gain))-1, 15))*4 + int(h>>61&3)
			} else {
				b = 64 + min(bits.Len64(uint64(-gain)), 7)*8 + int(h>>60&7)
			}
			candI, candTo = append(candI, i), append(candTo, best)
			candKey = append(candKey, mlHistKey(a, best, b, K))
		}
		if err := hist.gather(c, candKey, ncon); err != nil {
			return nil, err
		}
		for j, i := range candI {
			hist.add(int(candKey[j]), cwOf(i))
		}
		if err := collectives.Allreduce(c, hist.w, collectives.Sum); err != nil {
			return nil, err
		}
		mlTake(&hist, W, U, K)
		mlFeasible(&hist, W, U, K)
		moved := int64(0)
		for j, i := range candI {
			if hist.take[candKey[j]] {
				lab[i] = candTo[j]
				moved++
			}
		}
		if moved, err = collectives.AllreduceScalar(c, moved, collectives.Sum); err != nil {
			return nil, err
		}
		mlApply(&hist, W, K)
		over := false
		for p := range K {
			for k := range ncon {
				over = over || W[p*ncon+k] > U[k]
			}
		}
		if err := exchangeLabels(L.gx, lab, n); err != nil {
			return nil, err
		}
		if !over && moved*1000 <= L.N*lpStopMille {
			break
		}
	}
	return lab[:n], nil
}

// mlHist is a refinement round's histogram: the summed weight, over all
// ranks, of the proposals of every (from, to, priority bucket) that some
// rank proposed, by key (from*K+to)*B+bucket in ascending order (so by
// pair, then by priority). It holds only the keys that occur: a dense
// K x K x B table is gigabytes at K = 1024 (8 K^2 B ncon bytes), while the
// keys of a round are at most its proposals. A key no rank proposed
// weighs nothing and moves nothing, so leaving it out takes the same
// buckets as the dense table did.
type mlHist struct {
	ncon int
	keys []uint64 // sorted, distinct, the same on every rank
	w    []int64  // len(keys) x ncon
	take []bool   // len(keys)
}

// mlHistKey is the key of bucket b of pair (a, to); K < 2^28 keeps it in
// 63 bits.
func mlHistKey(a, to int32, b, K int) uint64 {
	return (uint64(a)*uint64(K)+uint64(to))*mlBuckets + uint64(b)
}

// pair splits the key of entry j into its pair (a, b) and bucket t.
func (h *mlHist) pair(j, K int) (a, b, t int) {
	key := h.keys[j]
	t = int(key % mlBuckets)
	ab := key / mlBuckets
	return int(ab / uint64(K)), int(ab % uint64(K)), t
}

// gather sets the keys to the union of every rank's proposals' keys
// (collective) and replaces each of cand by its index among them, with
// zero weights.
func (h *mlHist) gather(c *collectives.Comm, cand []uint64, ncon int) error {
	mine := slices.Clone(cand)
	slices.Sort(mine)
	mine = slices.Compact(mine)
	all, _, err := collectives.Allgatherv(c, mine)
	if err != nil {
		return err
	}
	slices.Sort(all)
	h.ncon, h.keys = ncon, slices.Compact(all)
	h.w = slices.Grow(h.w[:0], len(h.keys)*ncon)[:len(h.keys)*ncon]
	clear(h.w)
	h.take = slices.Grow(h.take[:0], len(h.keys))[:len(h.keys)]
	clear(h.take)
	for j, key := range cand {
		x, _ := slices.BinarySearch(h.keys, key)
		cand[j] = uint64(x)
	}
	return nil
}

// add adds a proposal's weights to entry j.
func (h *mlHist) add(j int, cw []int64) {
	for k, w := range cw {
		h.w[j*h.ncon+k] += w
	}
}

// pairs returns the entries' pairs in key order: the pair (a*K+b) of
// each and the first entry of each, with len(keys) appended.
func (h *mlHist) pairs() (pair []uint64, first []int) {
	for j, key := range h.keys {
		if ab := key / mlBuckets; len(pair) == 0 || pair[len(pair)-1] != ab {
			pair, first = append(pair, ab), append(first, j)
		}
	}
	return pair, append(first, len(h.keys))
}

// mlTake sets h.take for the priority buckets of each pair (a, b) that
// move: lpThresholds' allowance per constraint (the pair's smaller
// direction, plus b's room shared by excess), taking buckets in priority
// order and passing over those that do not fit every constraint's
// allowance (a bucket of nodes of a full node type must not stop the
// rest).
func mlTake(h *mlHist, W, U []int64, K int) {
	ncon := h.ncon
	pair, first := h.pairs()
	// D: each pair's flow per constraint, the sum of its buckets.
	D := make([]int64, len(pair)*ncon)
	for x := range pair {
		for j := first[x]; j < first[x+1]; j++ {
			for k := range ncon {
				D[x*ncon+k] += h.w[j*ncon+k]
			}
		}
	}
	// rev: the index of pair (b, a) for pair x = (a, b), -1 if absent.
	rev := make([]int, len(pair))
	for x, ab := range pair {
		y, ok := slices.BinarySearch(pair, ab%uint64(K)*uint64(K)+ab/uint64(K))
		if !ok {
			y = -1
		}
		rev[x] = y
	}
	flow := func(x, k int) int64 {
		if x < 0 {
			return 0
		}
		return D[x*ncon+k]
	}
	excess := func(x, k int) int64 { return max(0, flow(x, k)-flow(rev[x], k)) }
	// exSum: the excess into each part per constraint (pairs that do not
	// occur have none).
	exSum := make([]int64, K*ncon)
	for x, ab := range pair {
		b := int(ab % uint64(K))
		for k := range ncon {
			exSum[b*ncon+k] += excess(x, k)
		}
	}
	allow := make([]int64, ncon)
	sum := make([]int64, ncon)
	for x, ab := range pair {
		b := int(ab % uint64(K))
		for k := range ncon {
			fwd, back := flow(x, k), flow(rev[x], k)
			allow[k] = min(fwd, back)
			if ex := excess(x, k); ex > 0 {
				room := max(0, U[k]-W[b*ncon+k])
				hi, lo := bits.Mul64(uint64(room), uint64(ex))
				q, _ := bits.Div64(hi, lo, uint64(exSum[b*ncon+k]))
				allow[k] = min(fwd, back+int64(q))
			}
		}
		clear(sum)
		for j := first[x]; j < first[x+1]; j++ {
			ok := true
			for k := range ncon {
				ok = ok && sum[k]+h.w[j*ncon+k] <= allow[k]
			}
			h.take[j] = ok
			if ok {
				for k := range ncon {
					sum[k] += h.w[j*ncon+k]
				}
			}
		}
	}
}

// mlApply adds the taken buckets' flows to the part weights W.
func mlApply(h *mlHist, W []int64, K int) {
	ncon := h.ncon
	for j := range h.keys {
		if !h.take[j] {
			continue
		}
		a, b, _ := h.pair(j, K)
		for k := range ncon {
			W[a*ncon+k] -= h.w[j*ncon+k]
			W[b*ncon+k] += h.w[j*ncon+k]
		}
	}
}

// mlFeasible drops taken buckets until no part ends over a bound it was
// within: the histogram is the exact weight of every bucket on all ranks,
// so every rank finds the same weights after the round without another
// Allreduce. While a part p ends over the bound of constraint k (and
// over what it weighed), the taken bucket into p of lowest priority that
// weighs in k is dropped (of those, the one from the lowest part; which
// can put its source over, so the check repeats; every step drops a
// bucket, so it ends).
func mlFeasible(h *mlHist, W, U []int64, K int) {
	ncon := h.ncon
	Wn := slices.Clone(W)
	mlApply(h, Wn, K)
	// into: the entries into each part, lowest priority first, then by
	// source part (the order the drops look in); intoAt[p] starts p's.
	var into []int32
	var intoAt []int
	for {
		p, k := -1, -1
		for q := 0; q < K && p < 0; q++ {
			for kk := range ncon {
				if w := Wn[q*ncon+kk]; w > max(U[kk], W[q*ncon+kk]) {
					p, k = q, kk
					break
				}
			}
		}
		if p < 0 {
			return
		}
		if into == nil {
			into, intoAt = mlInto(h, K)
		}
		dropped := false
		for _, j := range into[intoAt[p]:intoAt[p+1]] {
			if !h.take[j] || h.w[int(j)*ncon+k] == 0 {
				continue
			}
			h.take[j] = false
			a, _, _ := h.pair(int(j), K)
			for kk := range ncon {
				Wn[a*ncon+kk] += h.w[int(j)*ncon+kk]
				Wn[p*ncon+kk] -= h.w[int(j)*ncon+kk]
			}
			dropped = true
			break
		}
		if !dropped {
			return // cannot happen: p gained weight in k, so some bucket into it weighs in k
		}
	}
}

// mlInto orders h's entries by target part, then by bucket from the
// lowest priority (the last), then by source part, and returns where each
// target's entries start (K+1 offsets).
func mlInto(h *mlHist, K int) (into []int32, at []int) {
	into = make([]int32, len(h.keys))
	for j := range into {
		into[j] = int32(j)
	}
	slices.SortFunc(into, func(x, y int32) int {
		ax, bx, tx := h.pair(int(x), K)
		ay, by, ty := h.pair(int(y), K)
		if bx != by {
			return bx - by
		}
		if tx != ty {
			return ty - tx
		}
		return ax - ay
	})
	at = make([]int, K+1)
	for _, j := range into {
		_, b, _ := h.pair(int(j), K)
		at[b+1]++
	}
	for p := range K {
		at[p+1] += at[p]
	}
	return into, at
}
