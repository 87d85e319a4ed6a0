package dpartition

import (
	"fmt"
	"slices"

	"mpignn/collectives"
	"mpignn/graph"
)

// MethodParMetis partitions with PT-Scotch's ParMETIS interface.
const MethodParMetis = "parmetis"

// ParMetisAvailable reports whether this build has MethodParMetis.
const ParMetisAvailable = collectives.ParMetisAvailable

// pmLayout numbers the vertices for ParMETIS, which wants each rank's
// vertices to be one contiguous global range: rank-major, then by type,
// then by type-local id (a rank holds one block per type).
type pmLayout struct {
	vtxdist []int64   // per rank, first ParMETIS id
	typeOff [][]int64 // [rank][type] offset of the type's block inside the rank's range
}

func (x *run) pmLayout() *pmLayout {
	T := x.s.NumTypes()
	l := &pmLayout{vtxdist: make([]int64, x.P+1), typeOff: make([][]int64, x.P)}
	for r := range x.P {
		l.typeOff[r] = make([]int64, T)
		n := int64(0)
		for t := range T {
			l.typeOff[r][t] = n
			n += x.bstart[t][r+1] - x.bstart[t][r]
		}
		l.vtxdist[r+1] = l.vtxdist[r] + n
	}
	return l
}

// id returns the ParMETIS id of homogenized id v and its owning rank.
func (x *run) pmID(l *pmLayout, v int64) (int64, int) {
	r, t, local := x.owner(v)
	return l.vtxdist[r] + l.typeOff[r][t] + local - x.bstart[t][r], r
}

// parmetisAssign builds the symmetric graph of all relations (no self
// loops, no repeats) distributed by block, a chunk per round as the edge
// move does, calls PT-Scotch and fills x.assign. PT-Scotch balances one
// vertex weight, which combines nodes and degree (the statistics report
// the balance of nodes, training nodes and edges, and of node types).
func (x *run) parmetisAssign() error {
	l := x.pmLayout()
	P := x.P
	for r := range P {
		if l.vtxdist[r+1] == l.vtxdist[r] {
			return fmt.Errorf("%s: rank %d holds no node chunk, which PT-Scotch needs; convert with smaller --chunk-nodes (at least %d chunks per node type)", x.opt.Data, r, P)
		}
	}
	lo := l.vtxdist[x.rank]
	n := l.vtxdist[x.rank+1] - lo
	var rowOf, nbr []int64
	for e, rel := range x.ch.Rels {
		srcOff, dstOff := int64(0), int64(0)
		if !x.homo {
			srcOff, dstOff = x.s.NodeOrig[x.s.TypeIndex(rel.Src)], x.s.NodeOrig[x.s.TypeIndex(rel.Dst)]
		}
		k := x.ch.NumEdgeChunks(e)
		k0, k1 := graph.ChunkRange(k, P, x.rank)
		rounds := 0
		for r := range P {
			a, b := graph.ChunkRange(k, P, r)
			rounds = max(rounds, b-a)
		}
		for j := range rounds {
			send := make([][]int64, P)
			if k0+j < k1 {
				u, v, err := x.ch.ReadEdgeChunk(e, k0+j)
				if err != nil {
					return err
				}
				for i := range u {
					a, ra := x.pmID(l, u[i]+srcOff)
					b, rb := x.pmID(l, v[i]+dstOff)
					if a == b {
						continue
					}
					send[rb] = append(send[rb], b, a)
					send[ra] = append(send[ra], a, b)
				}
			}
			recv, err := alltoallv(x.c, send)
			if err != nil {
				return err
			}
			for _, seg := range recv {
				for i := 0; i+1 < len(seg); i += 2 {
					rowOf = append(rowOf, seg[i]-lo)
					nbr = append(nbr, seg[i+1])
				}
			}
		}
	}
	xadj := make([]int64, n+1)
	for _, r := range rowOf {
		xadj[r+1]++
	}
	for r := range n {
		xadj[r+1] += xadj[r]
	}
	adj := make([]int64, len(nbr))
	fill := slices.Clone(xadj[:n])
	for i, r := range rowOf {
		adj[fill[r]] = nbr[i]
		fill[r]++
	}
	rowOf, nbr, fill = nil, nil, nil
	w := int64(0)
	for r := range n {
		row := adj[xadj[r]:xadj[r+1]]
		slices.Sort(row)
		row = slices.Compact(row)
		xadj[r] = w
		w += int64(copy(adj[w:], row))
	}
	xadj[n] = w
	// One weight for two constraints, nodes and degree (edges, the work
	// of sampling and gathering): 1 + degree x nodes/edges, so that both
	// add up to the same total.
	edges, err := collectives.AllreduceScalar(x.c, w, collectives.Sum)
	if err != nil {
		return err
	}
	vwgt := make([]int64, n)
	for r := range n {
		vwgt[r] = 1
		if edges > 0 {
			vwgt[r] += ((xadj[r+1]-xadj[r])*l.vtxdist[P] + edges/2) / edges
		}
	}
	part, err := collectives.ParMetisKway(x.c, l.vtxdist, xadj, adj[:w], vwgt, 1, P, int(x.opt.Seed%(1<<31)))
	if err != nil {
		return fmt.Errorf("%s: %w", x.opt.Data, err)
	}
	x.assign = make([][]int32, x.s.NumTypes())
	for t := range x.s.NumTypes() {
		a, b := x.block(t)
		off := l.typeOff[x.rank][t]
		x.assign[t] = part[off : off+b-a]
	}
	return nil
}
