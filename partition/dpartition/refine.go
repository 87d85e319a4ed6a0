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
	lab := make([]int32, n+int64(L.ghosts))
	copy(lab, part)
	if err := exchangeLabels(L.gx, lab, n); err != nil {
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
	var candB []uint8
	hist := make([]int64, K*K*B*ncon)
	take := make([]bool, K*K*B)
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
		clear(hist)
		candI, candTo, candB = candI[:0], candTo[:0], candB[:0]
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
			at := ((int(a)*K+int(best))*B + b) * ncon
			for k, w := range cwOf(i) {
				hist[at+k] += w
			}
			candI, candTo, candB = append(candI, i), append(candTo, best), append(candB, uint8(b))
		}
		if err := collectives.Allreduce(c, hist, collectives.Sum); err != nil {
			return nil, err
		}
		mlTake(hist, W, U, K, ncon, take)
		mlFeasible(hist, W, U, K, ncon, take)
		moved := int64(0)
		for j, i := range candI {
			if take[(int(lab[i])*K+int(candTo[j]))*B+int(candB[j])] {
				lab[i] = candTo[j]
				moved++
			}
		}
		if moved, err = collectives.AllreduceScalar(c, moved, collectives.Sum); err != nil {
			return nil, err
		}
		mlApply(hist, W, K, ncon, take)
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

// mlTake sets take[(a*K+b)*B+t] for the priority buckets t of pair (a, b)
// that move: lpThresholds' allowance per constraint (the pair's smaller
// direction, plus b's room shared by excess), taking buckets in priority
// order and passing over those that do not fit every constraint's
// allowance (a bucket of nodes of a full node type must not stop the
// rest).
func mlTake(hist, W, U []int64, K, ncon int, take []bool) {
	const B = mlBuckets
	D := make([]int64, K*K*ncon)
	for pr := range K * K {
		for t := range B {
			for k := range ncon {
				D[pr*ncon+k] += hist[(pr*B+t)*ncon+k]
			}
		}
	}
	excess := func(a, b, k int) int64 { return max(0, D[(a*K+b)*ncon+k]-D[(b*K+a)*ncon+k]) }
	allow := make([]int64, ncon)
	sum := make([]int64, ncon)
	exSum := make([]int64, ncon)
	for b := range K {
		for k := range ncon {
			exSum[k] = 0
			for a := range K {
				exSum[k] += excess(a, b, k)
			}
		}
		for a := range K {
			for k := range ncon {
				ab, ba := D[(a*K+b)*ncon+k], D[(b*K+a)*ncon+k]
				allow[k] = min(ab, ba)
				if ex := excess(a, b, k); ex > 0 {
					room := max(0, U[k]-W[b*ncon+k])
					hi, lo := bits.Mul64(uint64(room), uint64(ex))
					q, _ := bits.Div64(hi, lo, uint64(exSum[k]))
					allow[k] = min(ab, ba+int64(q))
				}
			}
			clear(sum)
			for t := range B {
				at := ((a*K+b)*B + t) * ncon
				ok := true
				for k := range ncon {
					ok = ok && sum[k]+hist[at+k] <= allow[k]
				}
				take[(a*K+b)*B+t] = ok
				if ok {
					for k := range ncon {
						sum[k] += hist[at+k]
					}
				}
			}
		}
	}
}

// mlApply adds the taken buckets' flows to the part weights W.
func mlApply(hist, W []int64, K, ncon int, take []bool) {
	const B = mlBuckets
	for a := range K {
		for b := range K {
			for t := range B {
				if !take[(a*K+b)*B+t] {
					continue
				}
				at := ((a*K+b)*B + t) * ncon
				for k := range ncon {
					W[a*ncon+k] -= hist[at+k]
					W[b*ncon+k] += hist[at+k]
				}
			}
		}
	}
}

// mlFeasible drops taken buckets until no part ends over a bound it was
// within: the histogram is the exact weight of every bucket on all ranks,
// so every rank finds the same weights after the round without another
// Allreduce. While a part p ends over the bound of constraint k (and
// over what it weighed), the taken bucket into p of lowest priority that
// weighs in k is dropped (which can put its source over, so the check
// repeats; every step drops a bucket, so it ends).
func mlFeasible(hist, W, U []int64, K, ncon int, take []bool) {
	const B = mlBuckets
	Wn := slices.Clone(W)
	mlApply(hist, Wn, K, ncon, take)
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
		dropped := false
		for t := B - 1; t >= 0 && !dropped; t-- {
			for a := range K {
				at := ((a*K+p)*B + t) * ncon
				if a == p || !take[(a*K+p)*B+t] || hist[at+k] == 0 {
					continue
				}
				take[(a*K+p)*B+t] = false
				for kk := range ncon {
					Wn[a*ncon+kk] += hist[at+kk]
					Wn[p*ncon+kk] -= hist[at+kk]
				}
				dropped = true
				break
			}
		}
		if !dropped {
			return // cannot happen: p gained weight in k, so some bucket into it weighs in k
		}
	}
}
