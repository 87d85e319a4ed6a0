package dsample

import (
	"fmt"
	"slices"
	"time"
)

// GatherStats count where gathered feature rows came from on this rank.
type GatherStats struct {
	LocalRows    int64 // owned rows, copied from the partition
	CachedRows   int64 // non-owned rows served by the halo or hot cache
	RemoteRows   int64 // non-owned rows read from their owners
	CacheLookups int64 // non-owned rows looked up in the caches (hits = CachedRows)
	HaloHits     int64 // part of CachedRows served by the halo cache
	Bytes        int64 // feature bytes read from other ranks
	Time         time.Duration
}

// Add accumulates o into g.
func (g *GatherStats) Add(o GatherStats) {
	g.LocalRows += o.LocalRows
	g.CachedRows += o.CachedRows
	g.RemoteRows += o.RemoteRows
	g.CacheLookups += o.CacheLookups
	g.HaloHits += o.HaloHits
	g.Bytes += o.Bytes
	g.Time += o.Time
}

// Rows returns all gathered rows.
func (g *GatherStats) Rows() int64 { return g.LocalRows + g.CachedRows + g.RemoteRows }

type gatherScratch struct {
	req []int64 // remote node ids
	at  []int32 // output row of each request
	buf []float32
}

// Gather writes the features of the given global nodes into dst (row i at
// dst[i*FeatDim:]), growing it as needed, and returns it. Own rows are
// copied from the partition, halo and hot rows from the caches, and the
// rest are read from their owners in one batched Fetch. Gather is
// collective: every rank calls it once per batch, with its own (possibly
// empty) node list. If st is not nil the call's counters are added to it.
func (s *Store) Gather(nodes []int64, dst []float32, st *GatherStats) ([]float32, error) {
	t0 := time.Now()
	d := s.dim
	dst = slices.Grow(dst[:0], len(nodes)*d)[:len(nodes)*d]
	sc := &s.gat
	sc.req, sc.at = sc.req[:0], sc.at[:0]
	var g GatherStats
	p := s.part
	n := s.NumNodes()
	var badErr error
	for i, v := range nodes {
		row := dst[i*d : (i+1)*d]
		switch {
		case s.Owns(v):
			copy(row, s.localFeat[(v-p.Lo)*int64(d):(v-p.Lo+1)*int64(d)])
			g.LocalRows++
			continue
		case v < 0 || v >= n:
			if badErr == nil {
				badErr = fmt.Errorf("gather on rank %d: node %d (entry %d) outside [0,%d)", s.c.Rank(), v, i, n)
			}
			continue
		}
		g.CacheLookups++
		if c, halo := s.cachedRow(v); c != nil {
			copy(row, c)
			g.CachedRows++
			if halo {
				g.HaloHits++
			}
			continue
		}
		sc.req = append(sc.req, v)
		sc.at = append(sc.at, int32(i))
	}
	g.RemoteRows = int64(len(sc.req))
	if s.feat != nil {
		sc.buf = slices.Grow(sc.buf[:0], len(sc.req)*d)[:len(sc.req)*d]
		b0 := s.feat.Stats().Bytes
		if err := s.feat.Fetch(sc.req, byteView(sc.buf)); err != nil {
			return dst, fmt.Errorf("gather on rank %d: %w", s.c.Rank(), err)
		}
		g.Bytes = s.feat.Stats().Bytes - b0
		for k, i := range sc.at {
			copy(dst[int(i)*d:(int(i)+1)*d], sc.buf[k*d:(k+1)*d])
		}
	}
	g.Time = time.Since(t0)
	if st != nil {
		st.Add(g)
	}
	return dst, badErr
}

// Labels writes the labels of the given nodes, which must be owned by this
// rank (seeds always are), into dst and returns it. It is local.
func (s *Store) Labels(nodes []int64, dst []int32) ([]int32, error) {
	dst = dst[:0]
	p := s.part
	for i, v := range nodes {
		if !s.Owns(v) {
			return dst, fmt.Errorf("labels on rank %d: node %d (entry %d) is not owned here [%d,%d)", s.c.Rank(), v, i, p.Lo, p.Hi)
		}
		dst = append(dst, p.Labels[v-p.Lo])
	}
	return dst, nil
}
