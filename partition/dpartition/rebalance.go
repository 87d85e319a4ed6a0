package dpartition

import (
	"cmp"
	"slices"

	"mpignn/collectives"
)

const (
	// mlRebalanceRounds bounds the rebalancing rounds (every round that
	// swaps lowers some part's excess, and none raises one).
	mlRebalanceRounds = 64
	// mlRebalanceCands: per round, the out-candidates kept per (constraint,
	// over part) and the in-candidates kept per (constraint, target part,
	// profile), over all ranks.
	mlRebalanceCands = 8
)

// mlTargets returns the bound each constraint must end within: 1.05 x
// the average, or the average rounded up where that is less (a part of
// unit weights cannot weigh less than that). It is never above
// mlBounds' bound, so parts within it are within refinement's too.
func mlTargets(W []int64, K, ncon int) []int64 {
	T := make([]int64, ncon)
	for k := range ncon {
		total := int64(0)
		for p := range K {
			total += W[p*ncon+k]
		}
		T[k] = max(total*(1000+mlEpsMille)/(1000*int64(K)), (total+int64(K)-1)/int64(K))
	}
	return T
}

// rbCand is a rebalancing candidate: vertex key of part part, for
// constraint k; an out-candidate goes to part to, an in-candidate comes
// from part and goes wherever its partner came from. score orders
// candidates of a group (larger first).
type rbCand struct {
	key   uint64
	part  int32
	to    int32
	k     int32
	score int64
	shed  int64
	cw    []int64
}

// mlRebalance repairs what refinement leaves over mlTargets' bound (the
// finest level's degree constraint at large K, where METIS partitions the
// finest graph itself and misses it, and refinement cannot move a vertex
// into a part at its node bound). It runs only when some part is over, so
// a partition already within every bound is returned unchanged.
//
// A round swaps, for a constraint k that some part p is over, a vertex v
// of p heavy in k with a vertex u of a part q that has room in k, of the
// same weight as v in every other constraint (the same node type and
// training flag), lighter in k: only constraint k moves, by k(v) - k(u),
// from p to q, so parts at their node or training bound can take part.
// Each over part nominates its vertices of least cut loss per unit of k
// shed, and those that shed the most (up to its excess), each to the
// part it is most connected to that has the room; each target part its
// lightest vertices of the profiles asked for. Both lists are gathered (a
// few per part, never whole-graph or K x K arrays), ordered by integer
// scores and keys, and matched identically on every rank, so the result
// does not depend on the rank count. A round costs two passes over the
// rank's edges and three Allgathervs; on a 200k-node graph two or three
// rounds sufficed at K = 256 and 1024.
func mlRebalance(c *collectives.Comm, L *mlLevel, part []int32, K int, logf func(format string, args ...any)) ([]int32, error) {
	g := L.g
	n, ncon := g.n(), g.ncon
	lab, err := ghostLabels(L, part)
	if err != nil {
		return nil, err
	}
	cwOf := func(i int64) []int64 { return g.cw[i*int64(ncon) : (i+1)*int64(ncon)] }
	conn := make([]int64, K)
	var touched []int32
	// connect fills conn with vertex i's edge weight to each part (reset
	// by clearConn).
	connect := func(i int64) {
		for e := g.xadj[i]; e < g.xadj[i+1]; e++ {
			p := lab[g.adj[e]]
			if conn[p] == 0 {
				touched = append(touched, p)
			}
			conn[p] += g.ewgt[e]
		}
	}
	clearConn := func() {
		for _, p := range touched {
			conn[p] = 0
		}
		touched = touched[:0]
	}
	// light: the lightest vertex of each constraint.
	light := make([]int64, ncon)
	for k := range ncon {
		light[k] = 1<<63 - 1
	}
	for i := range n {
		for k, w := range cwOf(i) {
			light[k] = min(light[k], w)
		}
	}
	if err := collectives.Allreduce(c, light, collectives.Min); err != nil {
		return nil, err
	}
	for round := 0; round < mlRebalanceRounds; round++ {
		W := make([]int64, K*ncon)
		for i := range n {
			for k, w := range cwOf(i) {
				W[int(lab[i])*ncon+k] += w
			}
		}
		if err := collectives.Allreduce(c, W, collectives.Sum); err != nil {
			return nil, err
		}
		T := mlTargets(W, K, ncon)
		// over[k]: constraint k has a part over its bound; best[k]: the
		// part with the most room in k (the lowest of equals).
		over := make([]bool, ncon)
		best := make([]int32, ncon)
		anyOver := false
		for k := range ncon {
			for p := range K {
				if W[p*ncon+k] > T[k] {
					over[k], anyOver = true, true
				}
				if W[p*ncon+k] < W[int(best[k])*ncon+k] {
					best[k] = int32(p)
				}
			}
		}
		if !anyOver {
			break
		}
		room := func(p int32, k int) int64 { return T[k] - W[int(p)*ncon+k] }

		// Out-candidates: vertices of over parts heavier in k than the
		// lightest vertex, and no heavier than the most room any part has
		// in k. Each goes to the part it is most connected to that has the
		// room for it. shed is what a swap with a lightest vertex would
		// move, as far as the part needs it; score the cut change per unit
		// of that (larger, better, first).
		var outs []rbCand
		for i := range n {
			a := lab[i]
			cw := cwOf(i)
			for k := range ncon {
				w := cw[k]
				if !over[k] || W[int(a)*ncon+k] <= T[k] || w <= light[k] || w > room(best[k], k) {
					continue
				}
				connect(i)
				to := int32(-1)
				for _, p := range touched {
					if p != a && room(p, k) >= w && (to < 0 || conn[p] > conn[to] || conn[p] == conn[to] && p < to) {
						to = p
					}
				}
				if to < 0 {
					to = best[k]
				}
				shed := min(w-light[k], W[int(a)*ncon+k]-T[k])
				score := (conn[to] - conn[a]) * (1 << 20) / shed
				clearConn()
				outs = append(outs, rbCand{key: g.key[i], part: a, to: to, k: int32(k), score: score, shed: shed, cw: cw})
			}
		}
		// Each over part keeps its best by score and its best by shed (then
		// score): the first alone can be vertices too light to swap with
		// anything of the target, and then no round would progress.
		outGroup := func(x, y rbCand) int { return cmp.Or(cmp.Compare(x.k, y.k), cmp.Compare(x.part, y.part)) }
		byScore, err := rbSelect(c, slices.Clone(outs), ncon, func(x, y rbCand) int {
			return cmp.Or(outGroup(x, y), cmp.Compare(y.score, x.score), cmp.Compare(y.shed, x.shed), cmp.Compare(x.key, y.key))
		}, outGroup)
		if err != nil {
			return nil, err
		}
		byShed, err := rbSelect(c, outs, ncon, func(x, y rbCand) int {
			return cmp.Or(outGroup(x, y), cmp.Compare(y.shed, x.shed), cmp.Compare(y.score, x.score), cmp.Compare(x.key, y.key))
		}, outGroup)
		if err != nil {
			return nil, err
		}
		outs = append(byScore, byShed...)
		// Match order, the same on every rank: by score, then shed; a
		// vertex in both lists is matched once.
		slices.SortFunc(outs, func(x, y rbCand) int {
			return cmp.Or(cmp.Compare(y.score, x.score), cmp.Compare(y.shed, x.shed), cmp.Compare(x.key, y.key), cmp.Compare(x.k, y.k))
		})
		outs = slices.CompactFunc(outs, func(x, y rbCand) bool { return x.key == y.key && x.k == y.k })

		// In-candidates: the lightest vertices, in k, of each (k, target,
		// profile) some out-candidate asks for.
		want := map[string]bool{}
		target := make([]bool, K*ncon)
		for _, v := range outs {
			want[rbProfile(v.k, v.to, v.cw)] = true
			target[int(v.to)*ncon+int(v.k)] = true
		}
		var ins []rbCand
		for i := range n {
			a := lab[i]
			cw := cwOf(i)
			for k := range ncon {
				if !target[int(a)*ncon+k] || !want[rbProfile(int32(k), a, cw)] {
					continue
				}
				connect(i)
				loss := conn[a]
				clearConn()
				ins = append(ins, rbCand{key: g.key[i], part: a, to: -1, k: int32(k), score: -loss, cw: cw})
			}
		}
		inGroup := func(x, y rbCand) int {
			return cmp.Or(cmp.Compare(x.k, y.k), cmp.Compare(x.part, y.part), rbCompareProfile(x.cw, y.cw, int(x.k)))
		}
		ins, err = rbSelect(c, ins, ncon, func(x, y rbCand) int {
			return cmp.Or(inGroup(x, y), cmp.Compare(x.cw[x.k], y.cw[y.k]), cmp.Compare(y.score, x.score), cmp.Compare(x.key, y.key))
		}, inGroup)
		if err != nil {
			return nil, err
		}
		groups := map[string][]int{} // profile key -> indices into ins, in order
		for j, u := range ins {
			s := rbProfile(u.k, u.part, u.cw)
			groups[s] = append(groups[s], j)
		}

		// Match, the same on every rank, in outs' order.
		used := map[uint64]bool{}
		moves := map[uint64]int32{}
		swaps := 0
		for _, v := range outs {
			k := int(v.k)
			if used[v.key] || W[int(v.part)*ncon+k] <= T[k] {
				continue
			}
			for _, j := range groups[rbProfile(v.k, v.to, v.cw)] {
				u := ins[j]
				d := v.cw[k] - u.cw[k]
				if used[u.key] || d <= 0 || room(v.to, k) < d {
					continue
				}
				used[v.key], used[u.key] = true, true
				moves[v.key], moves[u.key] = v.to, v.part
				W[int(v.part)*ncon+k] -= d
				W[int(v.to)*ncon+k] += d
				swaps++
				break
			}
		}
		if logf != nil {
			// What remains over after the round's swaps, per constraint.
			parts, excess := 0, make([]int64, ncon)
			for p := range K {
				o := false
				for k := range ncon {
					if x := W[p*ncon+k] - T[k]; x > 0 {
						excess[k] += x
						o = true
					}
				}
				if o {
					parts++
				}
			}
			logf("rebalance round %d: %d out- and %d in-candidates, %d swaps; %d parts over after it, by %v", round, len(outs), len(ins), swaps, parts, excess)
		}
		if swaps == 0 {
			break
		}
		for i := range n {
			if p, ok := moves[g.key[i]]; ok {
				lab[i] = p
			}
		}
		if err := exchangeLabels(L.gx, lab, n); err != nil {
			return nil, err
		}
	}
	return lab[:n], nil
}

// rbProfile keys a group of in-candidates: constraint k, part p and the
// weights in every constraint but k.
func rbProfile(k, p int32, cw []int64) string {
	b := make([]byte, 0, 8+8*len(cw))
	b = append(b, byte(k), byte(k>>8), byte(p), byte(p>>8), byte(p>>16), byte(p>>24))
	for j, w := range cw {
		if j == int(k) {
			continue
		}
		for s := 0; s < 64; s += 8 {
			b = append(b, byte(w>>s))
		}
	}
	return string(b)
}

// rbCompareProfile orders weight vectors by every constraint but k.
func rbCompareProfile(x, y []int64, k int) int {
	for j := range x {
		if j != k {
			if c := cmp.Compare(x[j], y[j]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// rbSelect keeps the first mlRebalanceCands candidates of each group (by
// order, which group orders first) over all ranks: each rank keeps its
// own first ones, all ranks gather them (a superset of the global first
// ones, as order is total by key) and keep the first of those.
func rbSelect(c *collectives.Comm, cands []rbCand, ncon int, order, group func(x, y rbCand) int) ([]rbCand, error) {
	first := func(cands []rbCand) []rbCand {
		slices.SortFunc(cands, order)
		out := cands[:0]
		run := 0
		for j, x := range cands {
			if j > 0 && group(cands[j-1], x) == 0 {
				run++
			} else {
				run = 0
			}
			if run < mlRebalanceCands {
				out = append(out, x)
			}
		}
		return out
	}
	mine := first(cands)
	const fixed = 5
	wd := fixed + ncon
	send := make([]int64, 0, len(mine)*wd)
	for _, x := range mine {
		send = append(send, int64(x.key), int64(x.part), int64(x.to)<<32|int64(uint32(x.k)), x.score, x.shed)
		send = append(send, x.cw...)
	}
	all, _, err := collectives.Allgatherv(c, send)
	if err != nil {
		return nil, err
	}
	got := make([]rbCand, 0, len(all)/wd)
	for j := 0; j+wd <= len(all); j += wd {
		x := all[j : j+wd : j+wd]
		got = append(got, rbCand{key: uint64(x[0]), part: int32(x[1]), to: int32(x[2] >> 32), k: int32(uint32(x[2])), score: x[3], shed: x[4], cw: x[fixed:]})
	}
	return first(got), nil
}
