package dsample

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"mpignn/collectives"
	"mpignn/partition"
)

// StoreOptions configure OpenStore.
type StoreOptions struct {
	// Transport reads remote rows; TransportAuto is resolved inside
	// OpenStore (collectively) to rma where one-sided MPI works.
	Transport collectives.Transport
	// CacheMB is the size of the hot remote-node feature cache in MiB per
	// rank (0 = off). It holds the features of the remote nodes with the
	// highest in-degree, which are the ones neighbor sampling reaches most.
	CacheMB float64
	// ReleasePart drops the partition's Indices, IndicesOrig and Feat
	// arrays once they are copied into the store's windows (the store
	// reads only its own copies), which saves their memory when the caller
	// keeps the Part. The caller must not use those three fields afterwards.
	ReleasePart bool
	// DegreeTableMB bounds the replicated table of every node's {first edge
	// row, degree} (16 bytes per node) that lets one-sided sampling skip the
	// degree read of remote nodes: the table is built when it fits (0 means
	// 256 MiB); negative never builds it. Every rank must pass the same value.
	DegreeTableMB float64
}

// Store is one rank's view of a partitioned graph: its own partition in
// memory plus distributed arrays through which every rank reads the
// adjacency and the features of nodes owned elsewhere.
//
// Three distributed arrays are exposed (all indexed by global row):
//   - nodes: one row per node, {global row of its first in-edge, in-degree};
//   - edges: one row per stored in-edge, {new id, original id} of the source,
//     in canonical order per destination;
//   - feat: one row per node, its FeatDim float32 features.
//
// Owner lookup is a binary search over the partition offsets, so no global
// id map is needed.
//
// A Store is used by one goroutine; its methods that read remote data are
// collective (see Sample and Gather).
type Store struct {
	c    *collectives.Comm
	part *partition.Part
	t    collectives.Transport
	why  string // why auto fell back, for logs

	offsets []int64 // node offsets over ranks (== Meta.Offsets)
	dim     int

	nodes *collectives.DistArray // 2 int64 per node
	edges *collectives.DistArray // 2 int64 per edge
	feat  *collectives.DistArray // dim float32 per node (nil if dim == 0)

	// This rank's rows of nodes and edges, read directly by the local
	// sampling path; edgeBase is the global row of its first edge.
	localNodes, localEdges []int64
	localFeat              []float32
	edgeBase               int64
	// allNodes replicates the nodes array on every rank (nil if too big or
	// with transport alltoallv, whose owner-side sampling does not need it).
	allNodes []int64

	// Feature caches of non-owned nodes: halo (from the partition files)
	// and hot (filled at OpenStore). ids ascending, rows aligned.
	haloIDs  []int64
	haloFeat []float32
	hotIDs   []int64
	hotFeat  []float32
	// cacheSlot maps a global id to its cached row in O(1) instead of two
	// binary searches per row (which made a large hot cache slower than
	// reading the rows remotely): 0 = not cached, k > 0 = hot row k-1,
	// k < 0 = halo row -k-1. Nil when the caches are empty or the map would
	// exceed cacheSlotMaxBytes; Gather then falls back to binary search.
	cacheSlot []int32

	// scratch reused across calls
	sm  samplerScratch
	a2a a2aScratch
	gat gatherScratch
}

// OpenStore builds the store of partition p on communicator c. The
// partition count must equal the communicator size and p.ID its rank. It is
// collective.
func OpenStore(c *collectives.Comm, p *partition.Part, o StoreOptions) (*Store, error) {
	if p == nil || p.Meta == nil {
		return nil, fmt.Errorf("open store on rank %d: no partition", c.Rank())
	}
	m := p.Meta
	// Agree on the shape first, so that a rank with a bad partition makes
	// every rank fail instead of leaving the others in a collective.
	bad := int64(0)
	why := ""
	switch {
	case m.NumParts != c.Size():
		bad, why = 1, fmt.Sprintf("partition has %d parts but the job has %d ranks (run with -n %d)", m.NumParts, c.Size(), m.NumParts)
	case p.ID != c.Rank():
		bad, why = 1, fmt.Sprintf("rank %d got part %d", c.Rank(), p.ID)
	case o.CacheMB < 0:
		bad, why = 1, fmt.Sprintf("cache size %g MB is negative", o.CacheMB)
	case int64(len(p.Indptr)) != p.NumOwned()+1 || len(p.IndicesOrig) != len(p.Indices) ||
		int64(len(p.Feat)) != p.NumOwned()*int64(m.FeatDim) || int64(len(p.Orig)) != p.NumOwned() ||
		int64(len(p.Labels)) != p.NumOwned() || (p.HaloFeat != nil && len(p.HaloFeat) != len(p.Halo)*m.FeatDim):
		bad, why = 1, fmt.Sprintf("part %d has inconsistent array lengths (already released by another store?)", p.ID)
	}
	agreed, err := collectives.AllreduceScalar(c, bad, collectives.Max)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if agreed != 0 {
		if why == "" {
			why = "another rank could not open its partition"
		}
		return nil, fmt.Errorf("open store on rank %d: %s", c.Rank(), why)
	}
	t, err := collectives.ResolveTransport(c, o.Transport)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &Store{c: c, part: p, t: t, offsets: m.Offsets, dim: m.FeatDim}
	if o.Transport == collectives.TransportAuto && t == collectives.TransportAlltoallv {
		s.why = "one-sided MPI unavailable"
	}
	ok := false
	defer func() {
		if !ok {
			s.free()
		}
	}()
	owned := p.NumOwned()
	nEdges := int64(len(p.Indices))
	if s.edges, err = collectives.NewDistArray(c, nEdges, 16, t); err != nil {
		return nil, fmt.Errorf("open store: edge array: %w", err)
	}
	ev := int64View(s.edges.Local())
	for i, g := range p.Indices {
		ev[2*i] = g
		ev[2*i+1] = p.IndicesOrig[i]
	}
	if s.nodes, err = collectives.NewDistArray(c, owned, 16, t); err != nil {
		return nil, fmt.Errorf("open store: node array: %w", err)
	}
	base := s.edges.Offsets()[c.Rank()]
	nv := int64View(s.nodes.Local())
	for i := range owned {
		nv[2*i] = base + p.Indptr[i]
		nv[2*i+1] = p.Indptr[i+1] - p.Indptr[i]
	}
	limit := o.DegreeTableMB
	if limit == 0 {
		limit = 256
	}
	if t == collectives.TransportRMA && limit > 0 && float64(16*m.NumNodes) <= limit*(1<<20) {
		if s.allNodes, _, err = collectives.Allgatherv(c, nv); err != nil {
			return nil, fmt.Errorf("open store: degree table: %w", err)
		}
	}
	if s.dim > 0 {
		if s.feat, err = collectives.NewDistArray(c, owned, 4*s.dim, t); err != nil {
			return nil, fmt.Errorf("open store: feature array: %w", err)
		}
		s.localFeat = float32View(s.feat.Local())
		copy(s.localFeat, p.Feat)
	}
	for _, a := range []*collectives.DistArray{s.edges, s.nodes, s.feat} {
		if a == nil {
			continue
		}
		if err := a.Seal(); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	s.localNodes, s.localEdges, s.edgeBase = nv, ev, base
	if p.HaloFeat != nil {
		s.haloIDs, s.haloFeat = p.Halo, p.HaloFeat
	}
	if err := s.fillHotCache(o.CacheMB); err != nil {
		return nil, fmt.Errorf("open store: hot cache: %w", err)
	}
	s.buildCacheSlots()
	if o.ReleasePart {
		p.Indices, p.IndicesOrig, p.Feat = nil, nil, nil
	}
	ok = true
	return s, nil
}

// Close frees the distributed arrays. It is collective.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	return s.free()
}

func (s *Store) free() error {
	var first error
	for _, a := range []**collectives.DistArray{&s.feat, &s.nodes, &s.edges} {
		if *a == nil {
			continue
		}
		if err := (*a).Free(); err != nil && first == nil {
			first = fmt.Errorf("close store: %w", err)
		}
		*a = nil
	}
	return first
}

// Transport returns the resolved transport (never TransportAuto).
func (s *Store) Transport() collectives.Transport { return s.t }

// TransportReason explains a fallback from auto to alltoallv ("" otherwise).
func (s *Store) TransportReason() string { return s.why }

// Part returns the partition the store serves.
func (s *Store) Part() *partition.Part { return s.part }

// Comm returns the communicator.
func (s *Store) Comm() *collectives.Comm { return s.c }

// FeatDim returns the feature dimension.
func (s *Store) FeatDim() int { return s.dim }

// NumClasses returns the number of label classes.
func (s *Store) NumClasses() int { return s.part.Meta.NumClasses }

// NumNodes returns the number of nodes of the whole graph.
func (s *Store) NumNodes() int64 { return s.part.Meta.NumNodes }

// Owner returns the rank owning global node g (-1 if out of range).
func (s *Store) Owner(g int64) int { return partition.Owner(s.offsets, g) }

// Owns reports whether this rank owns global node g.
func (s *Store) Owns(g int64) bool { return g >= s.part.Lo && g < s.part.Hi }

// HotCacheRows returns the number of nodes in the hot remote-node cache.
func (s *Store) HotCacheRows() int { return len(s.hotIDs) }

// HaloCacheRows returns the number of halo nodes whose features are cached.
func (s *Store) HaloCacheRows() int { return len(s.haloIDs) }

// FetchStats sums the transport counters of the store's arrays.
func (s *Store) FetchStats() collectives.FetchStats {
	var t collectives.FetchStats
	for _, a := range []*collectives.DistArray{s.nodes, s.edges, s.feat} {
		if a == nil {
			continue
		}
		st := a.Stats()
		t.Calls += st.Calls
		t.LocalRows += st.LocalRows
		t.RemoteRows += st.RemoteRows
		t.Bytes += st.Bytes
	}
	return t
}

// fillHotCache picks the remote nodes of highest in-degree that fit in mb
// MiB and fetches their features with one batched read. Each rank offers its
// own top candidates (the global top k of remote nodes is contained in the
// union of every rank's local top k), so only k ids per rank travel.
// It is collective: every rank calls Allgatherv and Fetch once, even with
// the cache off.
func (s *Store) fillHotCache(mb float64) error {
	rowBytes := 4 * s.dim
	k := 0
	if s.dim > 0 && mb > 0 {
		k = int(mb * (1 << 20) / float64(rowBytes))
	}
	// Every rank must take part even when its own k is 0, so agree on
	// whether anyone wants a cache.
	anyK, err := collectives.AllreduceScalar(s.c, int64(k), collectives.Max)
	if err != nil || anyK == 0 {
		return err
	}
	p := s.part
	owned := p.NumOwned()
	type cand struct{ id, deg int64 }
	byDeg := func(a, b cand) int {
		if c := cmp.Compare(b.deg, a.deg); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	}
	mine := make([]cand, owned)
	for i := range owned {
		mine[i] = cand{p.Lo + i, p.Indptr[i+1] - p.Indptr[i]}
	}
	slices.SortFunc(mine, byDeg)
	mine = mine[:min(int64(k), owned)]
	send := make([]int64, 0, 2*len(mine))
	for _, c := range mine {
		send = append(send, c.id, c.deg)
	}
	all, _, err := collectives.Allgatherv(s.c, send)
	if err != nil {
		return err
	}
	var cands []cand
	for i := 0; i+1 < len(all); i += 2 {
		id := all[i]
		if s.Owns(id) {
			continue
		}
		if _, ok := slices.BinarySearch(s.haloIDs, id); ok {
			continue // already cached from the halo file
		}
		cands = append(cands, cand{id, all[i+1]})
	}
	slices.SortFunc(cands, byDeg)
	cands = cands[:min(k, len(cands))]
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	slices.Sort(ids)
	feat := make([]float32, len(ids)*s.dim)
	if err := s.feat.Fetch(ids, byteView(feat)); err != nil {
		return err
	}
	s.hotIDs, s.hotFeat = ids, feat
	return nil
}

// cacheSlotMaxBytes bounds the cache slot map (4 bytes per graph node): it
// covers graphs up to 64 M nodes; larger ones use binary search.
const cacheSlotMaxBytes = 256 << 20

func (s *Store) buildCacheSlots() {
	n := s.NumNodes()
	if len(s.haloIDs)+len(s.hotIDs) == 0 || 4*n > cacheSlotMaxBytes ||
		len(s.haloIDs) >= math.MaxInt32 || len(s.hotIDs) >= math.MaxInt32 {
		return
	}
	s.cacheSlot = make([]int32, n)
	for j, v := range s.haloIDs {
		s.cacheSlot[v] = -int32(j) - 1
	}
	for j, v := range s.hotIDs {
		s.cacheSlot[v] = int32(j) + 1
	}
}

// cachedRow returns the cached feature row of non-owned node v (in range)
// and whether it came from the halo cache; nil if v is not cached.
func (s *Store) cachedRow(v int64) (row []float32, halo bool) {
	d := s.dim
	if s.cacheSlot != nil {
		switch k := int(s.cacheSlot[v]); {
		case k > 0:
			return s.hotFeat[(k-1)*d : k*d], false
		case k < 0:
			return s.haloFeat[(-k-1)*d : -k*d], true
		}
		return nil, false
	}
	if j, ok := slices.BinarySearch(s.haloIDs, v); ok {
		return s.haloFeat[j*d : (j+1)*d], true
	}
	if j, ok := slices.BinarySearch(s.hotIDs, v); ok {
		return s.hotFeat[j*d : (j+1)*d], false
	}
	return nil, false
}

// int64View reinterprets a byte slice (8-byte aligned: MPI windows and Go
// heap allocations of 8 bytes or more are) as int64s in native byte order.
// All ranks of a job run on the same architecture, so native order is the
// wire order.
func int64View(b []byte) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

func float32View(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// byteView is the inverse view, used to pass typed buffers to Fetch.
func byteView[T int64 | float32](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(z)))
}
