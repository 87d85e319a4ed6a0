package dpartition

import (
	"fmt"
	"strings"
	"time"

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

// symGraph is this rank's share of the symmetric graph of all relations
// (no self loops, no repeats), distributed by block in pmLayout's
// numbering: rows of the rank's vertices, neighbours as global ids, and
// one vertex weight combining nodes and degree. PT-Scotch and label
// propagation both partition it.
type symGraph struct {
	l         *pmLayout
	xadj, adj []int64
	vwgt      []int64
}

// parmetisAssign partitions the symmetric graph with PT-Scotch and fills
// x.assign. PT-Scotch balances one vertex weight, which combines nodes and
// degree (the statistics report the balance of nodes, training nodes and
// edges, and of node types).
func (x *run) parmetisAssign() error {
	l := x.pmLayout()
	for r := range x.P {
		if l.vtxdist[r+1] == l.vtxdist[r] {
			// Every rank computes the same layout and stops here: a job
			// failure the command reports once.
			err := fmt.Errorf("%s: rank %d holds no node chunk, which PT-Scotch needs: %d ranks read runs of whole chunks, and the dataset has %s; convert it again with a smaller --chunk-nodes (its default gives at least %d chunks), or use --method lp or random", x.opt.Data, r, x.P, x.chunkCounts(), graph.AutoNodeChunks/2)
			return collectives.Failed(err, 0, err.Error())
		}
	}
	t0 := time.Now()
	g, err := x.symGraph(l)
	if err != nil {
		return err
	}
	t0 = x.phase("graph", t0)
	part, err := collectives.ParMetisKway(x.c, l.vtxdist, g.xadj, g.adj, g.vwgt, 1, x.K, int(x.opt.Seed%(1<<31)))
	if err != nil {
		return fmt.Errorf("%s: %w", x.opt.Data, err)
	}
	x.phase("PT-Scotch", t0)
	x.setAssign(l, part)
	return nil
}

// setAssign cuts the parts of this rank's range (pmLayout's numbering)
// into x.assign, one slice per type.
func (x *run) setAssign(l *pmLayout, part []int32) {
	x.assign = make([][]int32, x.s.NumTypes())
	for t := range x.s.NumTypes() {
		a, b := x.block(t)
		off := l.typeOff[x.rank][t]
		x.assign[t] = part[off : off+b-a]
	}
}

// symGraph builds the symmetric graph, a chunk per round as the edge move
// does.
func (x *run) symGraph(l *pmLayout) (*symGraph, error) {
	P := x.P
	lo := l.vtxdist[x.rank]
	n := l.vtxdist[x.rank+1] - lo
	// Received (local row, neighbour) pairs, one array per round, and
	// rounds of at most RoundEdges edges, as in moveEdges.
	var got [][]int64
	for e, rel := range x.ch.Rels {
		srcOff, dstOff := int64(0), int64(0)
		if !x.homo {
			srcOff, dstOff = x.s.NodeOrig[x.s.TypeIndex(rel.Src)], x.s.NodeOrig[x.s.TypeIndex(rel.Dst)]
		}
		batches := x.edgeBatches(e)
		rounds := 0
		for r := range P {
			rounds = max(rounds, len(x.edgeBatchesOf(e, r)))
		}
		var u, v []int64
		chunk := -1
		for j := range rounds {
			counts := make([]int64, P)
			var send []int64
			if j < len(batches) {
				bt := batches[j]
				if bt.chunk != chunk {
					var err error
					if u, v, err = x.ch.ReadEdgeChunk(e, bt.chunk); err != nil {
						return nil, err
					}
					chunk = bt.chunk
				}
				n := bt.hi - bt.lo
				a, ra := make([]int64, n), make([]int32, n)
				b, rb := make([]int64, n), make([]int32, n)
				for i := range n {
					var r1, r2 int
					a[i], r1 = x.pmID(l, u[bt.lo+i]+srcOff)
					b[i], r2 = x.pmID(l, v[bt.lo+i]+dstOff)
					ra[i], rb[i] = int32(r1), int32(r2)
					if a[i] != b[i] {
						counts[r2] += 2
						counts[r1] += 2
					}
				}
				pos := make([]int64, P)
				for p := 1; p < P; p++ {
					pos[p] = pos[p-1] + counts[p-1]
				}
				send = make([]int64, pos[P-1]+counts[P-1])
				for i := range n {
					if a[i] == b[i] {
						continue
					}
					send[pos[rb[i]]], send[pos[rb[i]]+1] = b[i], a[i]
					pos[rb[i]] += 2
					send[pos[ra[i]]], send[pos[ra[i]]+1] = a[i], b[i]
					pos[ra[i]] += 2
				}
				if bt.hi == int(x.ch.Meta.NumEdgesPerChunk[e][bt.chunk]) {
					u, v, chunk = nil, nil, -1
				}
			}
			recv, _, err := collectives.Alltoallv(x.c, send, counts)
			if err != nil {
				return nil, err
			}
			for i := 0; i < len(recv); i += 2 {
				recv[i] -= lo
			}
			got = append(got, recv)
		}
	}
	xadj, adj := rowsFromPairs(got, n)
	w := xadj[n]
	// One weight for two constraints, nodes and degree (edges, the work
	// of sampling and gathering): 1 + degree x nodes/edges, so that both
	// add up to the same total.
	edges, err := collectives.AllreduceScalar(x.c, w, collectives.Sum)
	if err != nil {
		return nil, err
	}
	vwgt := make([]int64, n)
	for r := range n {
		vwgt[r] = 1
		if edges > 0 {
			vwgt[r] += ((xadj[r+1]-xadj[r])*l.vtxdist[P] + edges/2) / edges
		}
	}
	return &symGraph{l: l, xadj: xadj, adj: adj, vwgt: vwgt}, nil
}

// chunkCounts names the dataset's node chunks for a message: "1 node
// chunk", or per type "node chunks paper 3, author 1".
func (x *run) chunkCounts() string {
	if x.homo {
		k := x.ch.NumNodeChunks(x.ctype[0])
		if k == 1 {
			return "1 node chunk"
		}
		return fmt.Sprintf("%d node chunks", k)
	}
	parts := make([]string, len(x.s.NodeTypes))
	for t, typ := range x.s.NodeTypes {
		parts[t] = fmt.Sprintf("%s %d", typ, x.ch.NumNodeChunks(x.ctype[t]))
	}
	return "node chunks " + strings.Join(parts, ", ")
}
