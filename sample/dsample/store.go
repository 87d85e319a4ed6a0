package dsample

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample"
)

// StoreOptions configure OpenStore.
type StoreOptions struct {
	// Transport reads remote rows; TransportAuto is resolved inside
	// OpenStore (collectively) to rma where one-sided MPI works.
	Transport collectives.Transport
	// CacheMB is the size of the hot remote-node feature cache in MiB per
	// rank (0 = off); see FeatureOptions.CacheMB.
	CacheMB float64
	// ReleasePart drops the partition's Indices, IndicesOrig, EdgeFeat and
	// Feat (or FeatCSR) arrays once they are copied into the stores' windows
	// (the stores read only their own copies; edge features left out by
	// NoEdgeFeat are not needed at all), which saves their memory when the
	// caller keeps the Part. The caller must not use those fields afterwards.
	ReleasePart bool
	// DegreeTableMB: see GraphOptions.DegreeTableMB.
	DegreeTableMB float64
	// NoEdgeFeat: see GraphOptions.NoEdgeFeat.
	NoEdgeFeat bool
}

// Store is one rank's view of a partitioned graph: a GraphStore (adjacency),
// a FeatureStore (feature rows by key), the distributed Sampler over the
// graph store, and the partition itself for labels and splits. It is what
// the Loader and the commands use; the parts are available on their own.
//
// A Store is used by one goroutine; its methods that read remote data are
// collective (see Sample and Gather).
type Store struct {
	c    *collectives.Comm
	part *partition.Part
	t    collectives.Transport
	why  string // why auto fell back, for logs

	graph   *GraphStore
	feat    *FeatureStore
	sampler *Sampler
}

// OpenStore opens the graph and feature stores of partition p on
// communicator c. The partition count must equal the communicator size and
// p.ID its rank. It is collective.
func OpenStore(c *collectives.Comm, p *partition.Part, o StoreOptions) (*Store, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// Agree on the shape first, so that a rank with a bad partition makes
	// every rank fail instead of leaving the others in a collective.
	if err := collectives.AgreeOpen(c, "open store", checkPart(c, p)); err != nil {
		return nil, err
	}
	t, err := collectives.ResolveTransport(c, o.Transport)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{c: c, part: p, t: t}
	if o.Transport == collectives.TransportAuto && t == collectives.TransportAlltoallv {
		s.why = "one-sided MPI unavailable"
	}
	if s.graph, err = openGraphStore(c, p, t, o.DegreeTableMB, !o.NoEdgeFeat); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if s.feat, err = openFeatureStore(c, p, t, o.CacheMB); err != nil {
		s.graph.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.sampler = NewSampler(s.graph)
	if o.ReleasePart {
		p.Indices, p.IndicesOrig, p.Feat, p.Feat16, p.FeatCSR, p.EdgeFeat = nil, nil, nil, nil, nil, nil
	}
	return s, nil
}

// Close frees the distributed arrays. It is collective.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	errF := s.feat.Close()
	errG := s.graph.Close()
	s.feat, s.graph = nil, nil
	if errF != nil {
		return fmt.Errorf("close store: %w", errF)
	}
	if errG != nil {
		return fmt.Errorf("close store: %w", errG)
	}
	return nil
}

// Graph returns the adjacency store.
func (s *Store) Graph() *GraphStore { return s.graph }

// Features returns the feature store.
func (s *Store) Features() *FeatureStore { return s.feat }

// Sampler returns the distributed sampler over the graph store.
func (s *Store) Sampler() *Sampler { return s.sampler }

// Transport returns the resolved transport (never TransportAuto).
func (s *Store) Transport() collectives.Transport { return s.t }

// TransportReason explains a fallback from auto to alltoallv ("" otherwise).
func (s *Store) TransportReason() string { return s.why }

// Part returns the partition the store serves.
func (s *Store) Part() *partition.Part { return s.part }

// Comm returns the communicator.
func (s *Store) Comm() *collectives.Comm { return s.c }

// FetchStats sums the transport counters of both stores.
func (s *Store) FetchStats() collectives.FetchStats {
	g, f := s.graph.FetchStats(), s.feat.FetchStats()
	return collectives.FetchStats{
		Calls:      g.Calls + f.Calls,
		LocalRows:  g.LocalRows + f.LocalRows,
		RemoteRows: g.RemoteRows + f.RemoteRows,
		Bytes:      g.Bytes + f.Bytes,
	}
}

// relPlan is the per-relation plan a loader passes in a Request: its
// relation fanouts on a heterogeneous graph; nil on a homogeneous one,
// where the loaders sample with their fanouts (a relation plan given
// there is not used).
func (s *Store) relPlan(rel sample.RelFanouts) sample.RelFanouts {
	if s.graph.Schema() == nil {
		return nil
	}
	return rel
}

// Targets writes the real targets of the given nodes (Part.Targets,
// TargetDim each), which must be owned by this rank, into dst and returns
// it. It is local.
func (s *Store) Targets(nodes []int64, dst []float32) ([]float32, error) {
	dst = dst[:0]
	p := s.part
	k := int64(p.Meta.TargetDim)
	for i, v := range nodes {
		if !s.graph.Owns(v) {
			return dst, fmt.Errorf("targets on rank %d: node %d (entry %d) is not owned here [%d,%d)", s.c.Rank(), v, i, p.Lo, p.Hi)
		}
		dst = append(dst, p.Targets[(v-p.Lo)*k:(v-p.Lo+1)*k]...)
	}
	return dst, nil
}

// Labels writes the labels of the given nodes, which must be owned by this
// rank (seeds always are), into dst and returns it. It is local.
func (s *Store) Labels(nodes []int64, dst []int32) ([]int32, error) {
	dst = dst[:0]
	p := s.part
	for i, v := range nodes {
		if !s.graph.Owns(v) {
			return dst, fmt.Errorf("labels on rank %d: node %d (entry %d) is not owned here [%d,%d)", s.c.Rank(), v, i, p.Lo, p.Hi)
		}
		dst = append(dst, p.Labels[v-p.Lo])
	}
	return dst, nil
}
