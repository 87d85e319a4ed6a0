package dsample

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample"
)

// Edge features in sampled blocks.
//
// A partition written with edge features (partition.Options.EdgeFeat)
// holds one feature row per stored in-edge, aligned with its edges. The
// graph store serves them as a third distributed array beside the edges
// (GraphStore.edgeFeat), row for row. Every chosen edge carries its global
// edge row (Sampler's srcE: own rows from their first edge, remote ones
// from the one-sided request, or on the Alltoallv path from the owner's
// answer); once the exclusion has dropped what it drops, the kept edges'
// rows are fetched in one batched read per layer, which every rank makes,
// and become the block's EdgeFeat. An edge's row is the dataset's row of
// that edge, so blocks carry the same features on any rank count.

// agreeEdgeFeat returns the edge feature width every rank's partition has
// (0: none), refusing parts that disagree or whose features do not match
// their edges: all ranks must create the array, or none. It is collective.
func agreeEdgeFeat(c *collectives.Comm, p *partition.Part) (int, error) {
	dim := int64(p.Meta.EdgeFeatDim)
	if dim > 0 && int64(len(p.EdgeFeat)) != dim*int64(len(p.Indices)) {
		dim = -1 // reported below, after the agreement
	}
	lo, err := collectives.AllreduceScalar(c, dim, collectives.Min)
	if err != nil {
		return 0, fmt.Errorf("open graph store: %w", err)
	}
	hi, err := collectives.AllreduceScalar(c, dim, collectives.Max)
	if err != nil {
		return 0, fmt.Errorf("open graph store: %w", err)
	}
	switch {
	case dim < 0:
		return 0, fmt.Errorf("open graph store on rank %d: part %d has %d edge feature values for %d edges of width %d (already released by another store?)", c.Rank(), p.ID, len(p.EdgeFeat), len(p.Indices), p.Meta.EdgeFeatDim)
	case lo != hi:
		return 0, fmt.Errorf("open graph store on rank %d: the ranks' partitions have edge features of different widths (%d to %d; here %d); use copies of one partition directory", c.Rank(), lo, hi, dim)
	}
	return int(dim), nil
}

// EdgeFeatDim returns the width of the edge features the store serves (0:
// none).
func (g *GraphStore) EdgeFeatDim() int { return g.efDim }

// saveRowsForEdgeFeat keeps the layer's sources and row offsets as they
// are before the exclusion, which compacts them (in place or into buffers
// of its own), so that keptEdgeRows can follow the kept edges.
func (s *Sampler) saveRowsForEdgeFeat() {
	sc := &s.sm
	sc.efO = append(sc.efO[:0], sc.srcO...)
	sc.efOff = append(sc.efOff[:0], sc.posOff...)
}

// keptEdgeRows compacts sc.srcE to the edges the exclusion kept. The
// exclusion drops an edge by its pair of ends, so within a row it drops
// every copy of a source or none: the kept sources are the row's sources
// with the dropped ones left out, in order, and walking both in step finds
// them (w never passes x, so the compaction is in place).
func (s *Sampler) keptEdgeRows() {
	sc := &s.sm
	rows := len(sc.efOff) - 1
	for j := range rows {
		w, end := sc.posOff[j], sc.posOff[j+1]
		for x := sc.efOff[j]; x < sc.efOff[j+1] && w < end; x++ {
			if sc.efO[x] == sc.srcO[w] {
				sc.srcE[w] = sc.srcE[x]
				w++
			}
		}
	}
	sc.srcE = sc.srcE[:len(sc.srcO)]
}

// fetchEdgeFeat reads the feature rows of the given global edge rows (the
// layer's kept edges, in block order) into a new slice: the rows in memory
// (the local sampling path's) are copied, the others fetched in one
// batched read. It is collective: every rank of a store with edge features
// calls it once per layer.
func (s *Sampler) fetchEdgeFeat(rows []int64, st *sample.SampleStats) ([]float32, error) {
	sc, g := &s.sm, s.g
	d := int64(g.efDim)
	lo, hi := g.edgeBase, g.edgeBase+int64(len(g.localEF))/d
	sc.efReq = sc.efReq[:0]
	for _, r := range rows {
		if r < lo || r >= hi {
			sc.efReq = append(sc.efReq, r)
		}
	}
	if cap(sc.efBuf) < len(sc.efReq)*int(d) {
		sc.efBuf = make([]float32, len(sc.efReq)*int(d))
	}
	buf := sc.efBuf[:len(sc.efReq)*int(d)]
	b0 := g.edgeFeat.Stats().Bytes
	if err := g.edgeFeat.Fetch(sc.efReq, collectives.Bytes(buf)); err != nil {
		return nil, fmt.Errorf("edge features: %w", err)
	}
	st.Bytes += g.edgeFeat.Stats().Bytes - b0
	out := make([]float32, int64(len(rows))*d)
	k := int64(0)
	for i, r := range rows {
		o := out[int64(i)*d : int64(i+1)*d]
		if r >= lo && r < hi {
			copy(o, g.localEF[(r-lo)*d:])
		} else {
			copy(o, buf[k*d:])
			k++
		}
	}
	return out, nil
}

// skipEdgeFeat makes a layer's edge feature fetch with nothing to read, for
// a layer that ends early on an error after its exchanges: the other ranks
// are in that fetch (it is collective on the Alltoallv transport).
func (s *Sampler) skipEdgeFeat() {
	if s.g.edgeFeat != nil {
		var st sample.SampleStats
		s.fetchEdgeFeat(nil, &st) // the layer's own error is the one reported
	}
}
