package dsample

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
)

// GraphOptions configure OpenGraphStore.
type GraphOptions struct {
	// Transport reads remote rows; TransportAuto is resolved inside
	// OpenGraphStore (collectively) to rma where one-sided MPI works.
	Transport collectives.Transport
	// DegreeTableMB bounds a rank's part of the table of every node's
	// {first edge row, degree} (16 bytes per node and relation, held once
	// per node and shared by its ranks) that lets one-sided sampling skip
	// the degree read of remote nodes: the table is built when it fits in
	// this many MiB times the fewest ranks of a node (0 means 256 MiB);
	// negative never builds it. Every rank must pass the same value.
	DegreeTableMB float64
	// NoEdgeFeat leaves the partition's edge features out of the store:
	// the sampler then neither fetches nor attaches them (blocks have no
	// EdgeFeat), which saves a batched read per layer and the array's
	// memory for a model that reads none. Every rank must pass the same
	// value.
	NoEdgeFeat bool
}

// GraphStore is the adjacency of the whole graph, spread over the ranks:
// each rank holds the in-edges of the nodes it owns, and reads those of
// other nodes through two distributed arrays (indexed by global row):
//   - nodes: one row per node and relation (global row g*R+r for node g and
//     relation r of R; R = 1 for a homogeneous graph, whose rows are
//     nodes), {global row of its first in-edge, in-degree};
//   - edges: one row per stored in-edge, {new id, original id} of the source,
//     in canonical order per destination.
//
// Owner lookup is a binary search over the partition offsets, so no global
// id map is needed. A GraphStore is used by one goroutine; the methods that
// read remote rows are collective.
type GraphStore struct {
	c  *collectives.Comm
	t  collectives.Transport
	lo int64 // owned global ids are [lo, hi)
	hi int64
	n  int64 // nodes of the whole graph

	// R is the number of relations (1 for a homogeneous graph); schema is
	// nil for a homogeneous graph; plan says which relation rows a
	// destination has.
	R      int64
	schema *graph.Schema
	plan   *sample.RelPlan

	offsets []int64 // node offsets over ranks (== Meta.Offsets)

	nodes *collectives.DistArray // 2 int64 per node
	edges *collectives.DistArray // 2 int64 per edge
	// times (timed partitions only, else nil): 1 int64 per edge, the edge's
	// time, with the rows of edges. Kept apart from edges so that the
	// untimed layout (and its sampling) stays as it was, and so that the
	// temporal search reads 8 bytes per probed edge, not 24.
	times      *collectives.DistArray
	localTimes []int64
	// edgeFeat (partitions with edge features only, else nil): efDim
	// float32 per edge, the edge's features, with the rows of edges; the
	// sampler fetches the rows of the edges it keeps (edgefeat.go).
	edgeFeat *collectives.DistArray
	efDim    int
	// localEF are the feature rows of localEdges (this rank's, or its
	// group's on a shared partition), read without the transport.
	localEF []float32

	// The rows of nodes and edges that the local sampling path reads
	// directly: this rank's, or on a shared partition its group's (the
	// nodes [memLo, memHi)); edgeBase is the global row of the first edge.
	localNodes, localEdges []int64
	edgeBase               int64
	memLo, memHi           int64
	// allNodes is the nodes array (all relation rows) of the whole graph,
	// in degTable, memory held once per node (nil if too big or with
	// transport alltoallv, whose owner-side sampling does not need it).
	allNodes []int64
	degTable *collectives.SharedBuffer
}

// OpenGraphStore copies the in-edges of partition p into distributed arrays
// on communicator c. The partition count must equal the communicator size
// and p.ID its rank. It is collective, and fails on every rank if any rank's
// partition is unusable. The partition's Indices and IndicesOrig are only
// read; the caller may drop them afterwards.
func OpenGraphStore(c *collectives.Comm, p *partition.Part, o GraphOptions) (*GraphStore, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("open graph store: %w", err)
	}
	t, err := collectives.ResolveTransport(c, o.Transport)
	if err != nil {
		return nil, fmt.Errorf("open graph store: %w", err)
	}
	return openGraphStore(c, p, t, o.DegreeTableMB, !o.NoEdgeFeat)
}

// openGraphStore is OpenGraphStore with a resolved transport, so that a
// Store probes one-sided MPI once for both of its stores; edgeFeat false
// leaves the partition's edge features out (GraphOptions.NoEdgeFeat).
func openGraphStore(c *collectives.Comm, p *partition.Part, t collectives.Transport, degreeTableMB float64, edgeFeat bool) (*GraphStore, error) {
	why := checkPart(c, p)
	var schema *graph.Schema
	R := int64(1)
	if why == "" && p.Meta.Hetero != nil {
		var err error
		if schema, err = p.Meta.Hetero.Schema(); err != nil {
			why = err.Error()
		} else if schema.NumNodes() != p.Meta.NumNodes {
			why = fmt.Sprintf("hetero meta: schema has %d nodes but the partition %d", schema.NumNodes(), p.Meta.NumNodes)
		}
		R = int64(p.Meta.NumRels())
		if R == 0 && why == "" {
			why = "hetero meta: no relations"
		}
	}
	if why == "" && p.Times != nil && len(p.Times) != len(p.Indices) {
		why = fmt.Sprintf("part %d has %d edge times for %d edges", p.ID, len(p.Times), len(p.Indices))
	}
	timed := int64(0)
	if p != nil && p.Times != nil {
		timed = 1
	}
	if why == "" && (int64(len(p.Indptr)) != p.NumOwned()*R+1 || len(p.IndicesOrig) != len(p.Indices)) {
		why = fmt.Sprintf("part %d has inconsistent adjacency arrays: indptr of %d entries for %d nodes x %d relations (already released by another store?)", p.ID, len(p.Indptr), p.NumOwned(), R)
	}
	if err := collectives.AgreeOpen(c, "open graph store", why); err != nil {
		return nil, err
	}
	// Every rank must create the time array, or none: a mix would leave
	// ranks waiting in each other's window creation.
	anyTimed, err := collectives.AllreduceScalar(c, timed, collectives.Max)
	if err != nil {
		return nil, fmt.Errorf("open graph store: %w", err)
	}
	allTimed, err := collectives.AllreduceScalar(c, timed, collectives.Min)
	if err != nil {
		return nil, fmt.Errorf("open graph store: %w", err)
	}
	if anyTimed != allTimed {
		return nil, fmt.Errorf("open graph store on rank %d: some ranks' partitions have edge times and others not (timed here: %t); use copies of one partition directory", c.Rank(), timed == 1)
	}
	efDim, err := agreeEdgeFeat(c, p)
	if err != nil {
		return nil, err
	}
	if !edgeFeat {
		efDim = 0 // checked above all the same: the ranks' parts agree
	}
	m := p.Meta
	g := &GraphStore{c: c, t: t, lo: p.Lo, hi: p.Hi, n: m.NumNodes, offsets: m.Offsets, R: R, schema: schema, plan: sample.NewRelPlan(schema)}
	ok := false
	defer func() {
		if !ok {
			g.Close()
		}
	}()
	owned := p.NumOwned()
	rows := owned * R
	if g.edges, err = collectives.NewDistArray(c, int64(len(p.Indices)), 16, t); err != nil {
		return nil, fmt.Errorf("open graph store: edge array: %w", err)
	}
	ev := collectives.View[int64](g.edges.Local())
	for i, s := range p.Indices {
		ev[2*i] = s
		ev[2*i+1] = p.IndicesOrig[i]
	}
	if p.Times != nil {
		if g.times, err = collectives.NewDistArray(c, int64(len(p.Indices)), 8, t); err != nil {
			return nil, fmt.Errorf("open graph store: time array: %w", err)
		}
		g.localTimes = collectives.View[int64](g.times.Local())
		copy(g.localTimes, p.Times)
	}
	if efDim > 0 {
		if g.edgeFeat, err = collectives.NewDistArray(c, int64(len(p.Indices)), 4*efDim, t); err != nil {
			return nil, fmt.Errorf("open graph store: edge feature array: %w", err)
		}
		g.localEF = collectives.View[float32](g.edgeFeat.Local())
		copy(g.localEF, p.EdgeFeat)
		g.efDim = efDim
	}
	if g.nodes, err = collectives.NewDistArray(c, rows, 16, t); err != nil {
		return nil, fmt.Errorf("open graph store: node array: %w", err)
	}
	base := g.edges.Offsets()[c.Rank()]
	nv := collectives.View[int64](g.nodes.Local())
	for i := range rows {
		nv[2*i] = base + p.Indptr[i]
		nv[2*i+1] = p.Indptr[i+1] - p.Indptr[i]
	}
	limit := degreeTableMB
	if limit == 0 {
		limit = 256
	}
	for _, a := range []*collectives.DistArray{g.edges, g.nodes, g.times, g.edgeFeat} {
		if a == nil {
			continue
		}
		if err := a.Seal(); err != nil {
			return nil, fmt.Errorf("open graph store: %w", err)
		}
	}
	// The table is held once per node, on either layout: the limit is per
	// rank, and the ranks of a node share one copy.
	if t == collectives.TransportRMA && limit > 0 {
		ranks, err := collectives.FewestNodeRanks(c)
		if err != nil {
			return nil, fmt.Errorf("open graph store: degree table: %w", err)
		}
		if float64(16*m.NumNodes*R) <= limit*(1<<20)*float64(ranks) {
			if err := g.sharedDegreeTable(); err != nil {
				return nil, fmt.Errorf("open graph store: degree table: %w", err)
			}
		}
	}
	g.localNodes, g.localEdges, g.edgeBase = nv, ev, base
	g.memLo, g.memHi = g.lo, g.hi
	if m.Shared != nil {
		// The group's rows, sealed above: the local path samples every
		// node of the group from memory (the sampled blocks do not depend
		// on where a row is read).
		first, rows := g.nodes.GroupRows()
		g.localNodes = collectives.View[int64](rows)
		g.memLo = first / R
		g.memHi = g.memLo + int64(len(g.localNodes))/(2*R)
		first, rows = g.edges.GroupRows()
		g.localEdges, g.edgeBase = collectives.View[int64](rows), first
		if g.times != nil {
			_, rows = g.times.GroupRows()
			g.localTimes = collectives.View[int64](rows)
		}
		if g.edgeFeat != nil {
			_, rows = g.edgeFeat.GroupRows()
			g.localEF = collectives.View[float32](rows)
		}
	}
	ok = true
	return g, nil
}

// Close frees the distributed arrays. It is collective.
func (g *GraphStore) Close() error {
	if g == nil {
		return nil
	}
	err := freeArrays("close graph store", &g.nodes, &g.edges, &g.times, &g.edgeFeat)
	if g.degTable != nil {
		if ferr := g.degTable.Free(); ferr != nil && err == nil {
			err = fmt.Errorf("close graph store: %w", ferr)
		}
		g.degTable, g.allNodes = nil, nil
	}
	return err
}

// degreeChunk bounds the rows one read of sharedDegreeTable asks for.
const degreeChunk = 1 << 20

// sharedDegreeTable fills allNodes in memory shared by the ranks of a node
// (so a rank holds 16 bytes per node and relation over its node's ranks):
// the node's first rank reads every node's row (its node's from memory, the
// others with one-sided reads, in chunks), the others take part in the same
// number of reads with nothing to read. It is collective.
func (g *GraphStore) sharedDegreeTable() error {
	rows := g.n * g.R
	tbl, err := collectives.NewSharedBuffer(g.c, 16*rows)
	if err != nil {
		return err
	}
	g.degTable = tbl
	all := collectives.View[int64](tbl.Bytes())
	var req []int64
	for lo := int64(0); lo < rows; lo += degreeChunk {
		hi := min(lo+degreeChunk, rows)
		req = req[:0]
		if tbl.Filler() {
			for r := lo; r < hi; r++ {
				req = append(req, r)
			}
		}
		if err := g.nodes.Fetch(req, collectives.Bytes(all[2*lo:2*hi])); err != nil {
			return err
		}
	}
	if err := tbl.Expose(); err != nil {
		return err
	}
	g.allNodes = all
	return nil
}

// Transport returns the resolved transport (never TransportAuto).
func (g *GraphStore) Transport() collectives.Transport { return g.t }

// Comm returns the communicator.
func (g *GraphStore) Comm() *collectives.Comm { return g.c }

// NumNodes returns the number of nodes of the whole graph.
func (g *GraphStore) NumNodes() int64 { return g.n }

// Owner returns the rank owning global node v (-1 if out of range).
func (g *GraphStore) Owner(v int64) int { return partition.Owner(g.offsets, v) }

// Owns reports whether this rank owns global node v.
func (g *GraphStore) Owns(v int64) bool { return v >= g.lo && v < g.hi }

// inMemory reports whether the local sampling path reads node v's rows:
// owned by this rank, or by its group on a shared partition.
func (g *GraphStore) inMemory(v int64) bool { return v >= g.memLo && v < g.memHi }

// NumRels returns the number of relations R (1 for a homogeneous graph).
func (g *GraphStore) NumRels() int { return int(g.R) }

// Schema returns the schema of a heterogeneous graph (nil: homogeneous).
func (g *GraphStore) Schema() *graph.Schema { return g.schema }

// HasDegreeTable reports whether the {first edge, degree} table
// was built (see GraphOptions.DegreeTableMB).
func (g *GraphStore) HasDegreeTable() bool { return g.allNodes != nil }

// FetchStats sums the transport counters of the adjacency arrays.
func (g *GraphStore) FetchStats() collectives.FetchStats {
	return sumStats(g.nodes, g.edges, g.times, g.edgeFeat)
}

// Timed reports whether every edge has a time (a partition written with
// times), which temporal sampling needs.
func (g *GraphStore) Timed() bool { return g.times != nil }

// Neighbors reads the in-neighbors of any nodes, in canonical order: the
// neighbors of nodes[i] are global[off[i]:off[i+1]], with their original ids
// in orig; on a heterogeneous graph they are the node's relation rows
// concatenated, relation 0 first (without the relation of each; the typed sampler is
// checked against sample.HeteroReference instead). It is collective (two batched reads, whatever the node list) and
// meant for checks and tools: the sampler reads only the chosen neighbors.
func (g *GraphStore) Neighbors(nodes []int64) (off, global, orig []int64, err error) {
	var badErr error
	req := make([]int64, 0, len(nodes))
	for i, v := range nodes {
		if v < 0 || v >= g.n {
			if badErr == nil {
				badErr = fmt.Errorf("neighbors on rank %d: node %d (entry %d) outside [0,%d)", g.c.Rank(), v, i, g.n)
			}
			continue
		}
		req = append(req, v)
	}
	if badErr != nil {
		req = req[:0] // still take part in both reads
	}
	// A node's relation rows g*R..g*R+R-1 are consecutive.
	rowReq := req
	if g.R > 1 {
		rowReq = make([]int64, 0, int64(len(req))*g.R)
		for _, v := range req {
			for r := range g.R {
				rowReq = append(rowReq, v*g.R+r)
			}
		}
	}
	rows := make([]int64, 2*len(rowReq))
	if err := g.nodes.Fetch(rowReq, collectives.Bytes(rows)); err != nil {
		return nil, nil, nil, fmt.Errorf("neighbors on rank %d: %w", g.c.Rank(), err)
	}
	off = make([]int64, 1, len(req)+1)
	var edgeReq []int64
	for i := range req {
		for j := int64(i) * g.R; j < int64(i+1)*g.R; j++ {
			first, deg := rows[2*j], rows[2*j+1]
			for e := first; e < first+deg; e++ {
				edgeReq = append(edgeReq, e)
			}
		}
		off = append(off, int64(len(edgeReq)))
	}
	pairs := make([]int64, 2*len(edgeReq))
	if err := g.edges.Fetch(edgeReq, collectives.Bytes(pairs)); err != nil {
		return nil, nil, nil, fmt.Errorf("neighbors on rank %d: %w", g.c.Rank(), err)
	}
	if badErr != nil {
		return nil, nil, nil, badErr
	}
	global = make([]int64, len(edgeReq))
	orig = make([]int64, len(edgeReq))
	for j := range edgeReq {
		global[j], orig[j] = pairs[2*j], pairs[2*j+1]
	}
	return off, global, orig, nil
}

// checkPart returns why partition p cannot be served on c ("" if it can).
func checkPart(c *collectives.Comm, p *partition.Part) string {
	switch {
	case p == nil || p.Meta == nil:
		return fmt.Sprintf("rank %d has no partition", c.Rank())
	case p.Meta.NumParts != c.Size():
		return fmt.Sprintf("partition has %d parts but the job has %d ranks (run with -n %d)", p.Meta.NumParts, c.Size(), p.Meta.NumParts)
	case p.ID != c.Rank():
		return fmt.Sprintf("rank %d got part %d", c.Rank(), p.ID)
	}
	return ""
}

// freeArrays frees the non-nil arrays (collectively) and nils them.
func freeArrays(what string, arrays ...**collectives.DistArray) error {
	var first error
	for _, a := range arrays {
		if *a == nil {
			continue
		}
		if err := (*a).Free(); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", what, err)
		}
		*a = nil
	}
	return first
}

// sumStats adds up the transport counters of the non-nil arrays.
func sumStats(arrays ...*collectives.DistArray) collectives.FetchStats {
	var t collectives.FetchStats
	for _, a := range arrays {
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
