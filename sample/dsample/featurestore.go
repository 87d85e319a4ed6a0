package dsample

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"mpignn/collectives"
	"mpignn/internal/half"
	"mpignn/internal/par"
	"mpignn/partition"
)

// FeatureKey names one feature table: a node type and a feature name, as in
// DGL's ("_N", "feat"). A partition holds one table today, NodeFeat; the key
// lets heterogeneous graphs and further features (embeddings, labels as
// rows) join without changing the Gather call.
type FeatureKey struct {
	NodeType string
	Name     string
}

func (k FeatureKey) String() string { return k.NodeType + "/" + k.Name }

// The names of the partition's node features (DGL's defaults).
const (
	DefaultNodeType = "_N"
	FeatName        = "feat"
)

// NodeFeat returns the key of the partition's node feature table.
func NodeFeat() FeatureKey { return FeatureKey{NodeType: DefaultNodeType, Name: FeatName} }

// FeatureOptions configure OpenFeatureStore.
type FeatureOptions struct {
	// Transport reads remote rows; TransportAuto is resolved inside
	// OpenFeatureStore (collectively) to rma where one-sided MPI works.
	Transport collectives.Transport
	// CacheMB is the size of the hot remote-node cache of each table in
	// MiB per rank (0 = off). It holds the rows of the remote nodes with the
	// highest in-degree, which are the ones neighbor sampling reaches most.
	CacheMB float64
}

// FeatureStore holds feature rows by key, spread over the ranks: each rank
// holds the rows of the nodes it owns and reads the others' through one
// distributed array per key (one row per node, indexed by global id). Each
// table has its own caches of non-owned rows: the halo rows shipped with the
// partition and a hot cache filled at open. A FeatureStore is used by one
// goroutine; Gather is collective.
type FeatureStore struct {
	c  *collectives.Comm
	lo int64 // owned global ids are [lo, hi)
	hi int64
	n  int64

	// One table per key, in the order they were opened (the same on every
	// rank, so collectives over tables run in the same order everywhere).
	keys   []FeatureKey
	tables []*featTable

	gat gatherScratch
}

// featTable is one key's rows and caches.
type featTable struct {
	dim   int
	arr   *collectives.DistArray // dim float32 per node (nil if dim == 0)
	local []float32              // this rank's rows (the window's memory)

	// kind is the type the rows are held in. For a 2-byte type (a
	// partition written with partition.Options.FeatDType) the table, its
	// window (dim 16-bit values a row, so every remote read moves half the
	// bytes) and its caches hold the bits in local16, haloFeat16 and
	// hotFeat16 instead of local, haloFeat and hotFeat, and Gather widens
	// each row to float32 as it writes it into the caller's matrix.
	kind                           half.Kind
	local16, haloFeat16, hotFeat16 []uint16

	// Caches of non-owned nodes: halo (from the partition files) and hot
	// (filled at open). ids ascending, rows aligned.
	haloIDs  []int64
	haloFeat []float32
	hotIDs   []int64
	hotFeat  []float32
	// cacheSlot maps a global id to its cached row in O(1) instead of two
	// binary searches per row (which made a large hot cache slower than
	// reading the rows remotely): 0 = not cached, k > 0 = hot row k-1,
	// k < 0 = halo row -k-1. It is a hash table sized by the cached rows
	// (it was an array of 4 bytes per graph node on every rank: issue 40
	// §2). Nil when the caches are empty; Gather then falls back to binary
	// search.
	cacheSlot *slotMap

	// typed maps new global ids to the table's rows in a heterogeneous
	// partition, where a table holds one node type's rows indexed by
	// type-local new id (nil for the homogeneous table, whose rows are
	// global ids).
	typed *TypeRows

	// sp holds the rows of a sparse table (featsparse.go); nil when dense.
	sp *sparseTable
}

// OpenFeatureStore copies the node features of partition p (key NodeFeat)
// into a distributed array on c and fills its caches. The partition count
// must equal the communicator size and p.ID its rank. It is collective, and
// fails on every rank if any rank's partition is unusable. The partition's
// Feat is only read; the caller may drop it afterwards.
func OpenFeatureStore(c *collectives.Comm, p *partition.Part, o FeatureOptions) (*FeatureStore, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("open feature store: %w", err)
	}
	t, err := collectives.ResolveTransport(c, o.Transport)
	if err != nil {
		return nil, fmt.Errorf("open feature store: %w", err)
	}
	return openFeatureStore(c, p, t, o.CacheMB)
}

// openFeatureStore is OpenFeatureStore with a resolved transport, so that a
// Store probes one-sided MPI once for both of its stores.
func openFeatureStore(c *collectives.Comm, p *partition.Part, t collectives.Transport, cacheMB float64) (*FeatureStore, error) {
	if p != nil && p.Meta != nil && p.Meta.Hetero != nil {
		return openTypedFeatureStore(c, p, t)
	}
	why := checkPart(c, p)
	switch {
	case why != "":
	case p.Meta.SparseFeat && (p.FeatCSR == nil || int64(p.FeatCSR.Rows()) != p.NumOwned() ||
		(p.HaloFeatCSR != nil && p.HaloFeatCSR.Rows() != len(p.Halo))):
		why = fmt.Sprintf("part %d has inconsistent sparse feature arrays (already released by another store?)", p.ID)
	case p.Meta.FeatKind().Half() && (int64(len(p.Indptr)) != p.NumOwned()+1 || int64(len(p.Feat16)) != p.NumOwned()*int64(p.Meta.FeatDim) ||
		(p.HaloFeat16 != nil && len(p.HaloFeat16) != len(p.Halo)*p.Meta.FeatDim)):
		why = fmt.Sprintf("part %d has inconsistent %s feature arrays (already released by another store?)", p.ID, p.Meta.FeatKind())
	case !p.Meta.SparseFeat && !p.Meta.FeatKind().Half() && (int64(len(p.Indptr)) != p.NumOwned()+1 || int64(len(p.Feat)) != p.NumOwned()*int64(p.Meta.FeatDim) ||
		(p.HaloFeat != nil && len(p.HaloFeat) != len(p.Halo)*p.Meta.FeatDim)):
		why = fmt.Sprintf("part %d has inconsistent feature arrays (already released by another store?)", p.ID)
	}
	if err := collectives.AgreeOpen(c, "open feature store", why); err != nil {
		return nil, err
	}
	f := &FeatureStore{c: c, lo: p.Lo, hi: p.Hi, n: p.Meta.NumNodes}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	tb := &featTable{dim: p.Meta.FeatDim, kind: p.Meta.FeatKind()}
	var err error
	f.keys, f.tables = append(f.keys, NodeFeat()), append(f.tables, tb)
	switch {
	case p.Meta.SparseFeat:
		if err := f.openSparseTable(tb, p, t); err != nil {
			return nil, fmt.Errorf("open feature store: %w", err)
		}
	case tb.kind.Half() && tb.dim > 0:
		if tb.arr, err = collectives.NewDistArray(c, p.NumOwned(), 2*tb.dim, t); err != nil {
			return nil, fmt.Errorf("open feature store: %s array: %w", NodeFeat(), err)
		}
		tb.local16 = collectives.View[uint16](tb.arr.Local())
		copy(tb.local16, p.Feat16)
		if err := tb.arr.Seal(); err != nil {
			return nil, fmt.Errorf("open feature store: %w", err)
		}
	case tb.dim > 0:
		if tb.arr, err = collectives.NewDistArray(c, p.NumOwned(), 4*tb.dim, t); err != nil {
			return nil, fmt.Errorf("open feature store: %s array: %w", NodeFeat(), err)
		}
		tb.local = collectives.View[float32](tb.arr.Local())
		copy(tb.local, p.Feat)
		if err := tb.arr.Seal(); err != nil {
			return nil, fmt.Errorf("open feature store: %w", err)
		}
	}
	if p.HaloFeat != nil {
		tb.haloIDs, tb.haloFeat = p.Halo, p.HaloFeat
	}
	if p.HaloFeat16 != nil {
		tb.haloIDs, tb.haloFeat16 = p.Halo, p.HaloFeat16
	}
	if err := f.fillHotCache(tb, p, cacheMB); err != nil {
		return nil, fmt.Errorf("open feature store: %s hot cache: %w", NodeFeat(), err)
	}
	tb.buildCacheSlots()
	ok = true
	return f, nil
}

// Close frees the distributed arrays. It is collective.
func (f *FeatureStore) Close() error {
	if f == nil {
		return nil
	}
	var first error
	for i, tb := range f.tables {
		if err := freeArrays("close feature store: "+f.keys[i].String(), &tb.arr); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Keys returns the keys of the tables, in a fixed order.
func (f *FeatureStore) Keys() []FeatureKey { return slices.Clone(f.keys) }

// table returns the table of key k.
func (f *FeatureStore) table(k FeatureKey) (*featTable, error) {
	for i, key := range f.keys {
		if key == k {
			return f.tables[i], nil
		}
	}
	return nil, fmt.Errorf("feature store has no table %s (have %v)", k, f.keys)
}

// Dim returns the row width of table k.
func (f *FeatureStore) Dim(k FeatureKey) (int, error) {
	tb, err := f.table(k)
	if err != nil {
		return 0, err
	}
	return tb.dim, nil
}

// HotCacheRows returns the number of nodes in table k's hot cache (0 for an
// unknown key).
func (f *FeatureStore) HotCacheRows(k FeatureKey) int {
	if tb, err := f.table(k); err == nil {
		return len(tb.hotIDs)
	}
	return 0
}

// HaloCacheRows returns the number of halo nodes whose rows of table k are
// cached (0 for an unknown key).
func (f *FeatureStore) HaloCacheRows(k FeatureKey) int {
	if tb, err := f.table(k); err == nil {
		return len(tb.haloIDs)
	}
	return 0
}

// FetchStats sums the transport counters of all tables.
func (f *FeatureStore) FetchStats() collectives.FetchStats {
	arrs := make([]*collectives.DistArray, len(f.tables))
	for i, tb := range f.tables {
		arrs[i] = tb.arr
	}
	return sumStats(arrs...)
}

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
	// buf16 receives remote rows of a 2-byte table.
	buf16 []uint16
	src   []rowSource // where each node's row comes from
	rows  []int64     // typed gather: each node's row in the array (or a mark)
}

// rowSource is where a gathered row comes from.
type rowSource uint8

const (
	srcLocal  rowSource = iota // owned: the partition
	srcHalo                    // the halo cache
	srcHot                     // the hot cache
	srcRemote                  // its owner, by Fetch
	srcBad                     // out of range: no row
)

// Gather writes the rows of table k of the given global nodes into dst (row
// i at dst[i*dim:]), growing it as needed, and returns it. Own rows are
// copied from the partition, halo and hot rows from the caches, and the
// rest are read from their owners in one batched Fetch. Gather is
// collective: every rank calls it once per batch with the same key and its
// own (possibly empty) node list. If st is not nil the call's counters are
// added to it.
func (f *FeatureStore) Gather(k FeatureKey, nodes []int64, dst []float32, st *GatherStats) ([]float32, error) {
	defer f.c.Phase("gather")()
	t0 := time.Now()
	tb, err := f.table(k)
	if err != nil {
		// The key is the same on every rank (a programming error otherwise),
		// so every rank returns here and none waits in the fetch.
		return dst, fmt.Errorf("gather on rank %d: %w", f.c.Rank(), err)
	}
	if tb.typed != nil {
		return f.gatherTyped(k, tb, nodes, dst, st, t0)
	}
	d := tb.dim
	dst = slices.Grow(dst[:0], len(nodes)*d)[:len(nodes)*d]
	if tb.sp == nil {
		return dst, f.gatherDense(tb, nodes, dst, st, t0)
	}
	par.Range(len(dst), len(dst)/8, func(lo, hi int) { clear(dst[lo:hi]) })
	return dst, f.gatherSparse(tb, nodes, st, t0, func(row func(i int) ([]int32, []float32)) {
		par.Range(len(nodes), len(nodes)*16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				cols, vals := row(i)
				out := dst[i*d : (i+1)*d]
				for e, c := range cols {
					out[c] = vals[e]
				}
			}
		})
	})
}

// GatherViews is Gather without the copy: views[i] becomes node i's row
// itself, a slice of the partition's rows, of a cache, or of buf, into which
// the remote rows are fetched. The views are READ-ONLY (they alias the
// store) and those into buf last until buf is reused; views and buf are
// grown as needed and returned. A table whose rows are not stored as
// float32 (2-byte or sparse features, typed tables) has no float32 views:
// ok is then false and nothing was done (GatherHalfViews, or Gather). It
// is collective as Gather is, except that a table without views returns
// before any collective on every rank alike.
func (f *FeatureStore) GatherViews(k FeatureKey, nodes []int64, views [][]float32, buf []float32, st *GatherStats) (_ [][]float32, _ []float32, ok bool, err error) {
	tb, err := f.table(k)
	if err != nil || tb.typed != nil || tb.sp != nil || tb.kind.Half() {
		return views, buf, false, nil
	}
	views, buf, err = gatherViews(f, tb, tb.local, tb.haloFeat, tb.hotFeat, nodes, views, buf, st)
	return views, buf, true, err
}

// GatherHalfViews is GatherViews for a table of 2-byte values (partition
// --feat-dtype bf16 or fp16, kind): the views are the stored 2-byte rows,
// which the reader widens (half.Widen) as it reads them; ok is false for
// any other table.
func (f *FeatureStore) GatherHalfViews(k FeatureKey, nodes []int64, views [][]uint16, buf []uint16, st *GatherStats) (_ [][]uint16, _ []uint16, kind half.Kind, ok bool, err error) {
	tb, err := f.table(k)
	if err != nil || tb.typed != nil || tb.sp != nil || !tb.kind.Half() {
		return views, buf, 0, false, nil
	}
	views, buf, err = gatherViews(f, tb, tb.local16, tb.haloFeat16, tb.hotFeat16, nodes, views, buf, st)
	return views, buf, tb.kind, true, err
}

// gatherViews is GatherViews over a table whose rows are stored as E in
// local, halo and hot (its own rows and its caches).
func gatherViews[E float32 | uint16](f *FeatureStore, tb *featTable, local, halo, hot []E, nodes []int64, views [][]E, buf []E, st *GatherStats) ([][]E, []E, error) {
	defer f.c.Phase("gather")()
	t0 := time.Now()
	d := tb.dim
	views = slices.Grow(views[:0], len(nodes))[:len(nodes)]
	g, badErr := f.classify(tb, nodes, func(i int, src rowSource, j int64, inHalo bool) {
		switch {
		case src == srcLocal:
			views[i] = local[j*int64(d):][:d:d]
		case src == srcBad:
			views[i] = nil
		case inHalo:
			views[i] = halo[j*int64(d):][:d:d]
		default:
			views[i] = hot[j*int64(d):][:d:d]
		}
	})
	sc := &f.gat
	if tb.arr != nil {
		// Rows of the node's other ranks (a shared Comm) are viewed in
		// the node's memory. The others land in the caller's buffer,
		// which outlives this call, and are viewed there.
		n := 0
		for k, v := range sc.req {
			if row := tb.arr.MemoryRow(v); row != nil {
				views[sc.at[k]] = collectives.View[E](row)[:d:d]
				continue
			}
			sc.req[n], sc.at[n] = v, sc.at[k]
			n++
		}
		sc.req, sc.at = sc.req[:n], sc.at[:n]
		buf = slices.Grow(buf[:0], len(sc.req)*d)[:len(sc.req)*d]
		b0 := tb.arr.Stats().Bytes
		if err := tb.arr.Fetch(sc.req, collectives.Bytes(buf)); err != nil {
			return views, buf, fmt.Errorf("gather on rank %d: %w", f.c.Rank(), err)
		}
		g.Bytes = tb.arr.Stats().Bytes - b0
		for k, i := range sc.at {
			views[i] = buf[k*d : (k+1)*d : (k+1)*d]
		}
	}
	g.Time = time.Since(t0)
	if st != nil {
		st.Add(g)
	}
	return views, buf, badErr
}

// classify finds where each node's row of tb comes from. It calls row(i,
// src, j, halo) for every node that is owned (src srcLocal, j its local
// index), cached (srcHalo or srcHot, j its row in the halo cache (halo
// set) or the hot cache) or out of range (srcBad), in parallel, once per
// node; then a serial pass in node order counts them and lists the remote
// requests in f.gat.req (the nodes) and f.gat.at (their entries), so the
// list and the first bad entry are those of a serial loop.
func (f *FeatureStore) classify(tb *featTable, nodes []int64, row func(i int, src rowSource, j int64, halo bool)) (GatherStats, error) {
	sc := &f.gat
	sc.req, sc.at = sc.req[:0], sc.at[:0]
	var g GatherStats
	var badErr error
	sc.src = slices.Grow(sc.src[:0], len(nodes))[:len(nodes)]
	par.Range(len(nodes), len(nodes)*(tb.dim+8), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := nodes[i]
			switch {
			case v >= f.lo && v < f.hi:
				sc.src[i] = srcLocal
				row(i, srcLocal, v-f.lo, false)
				continue
			case v < 0 || v >= f.n:
				sc.src[i] = srcBad
				row(i, srcBad, 0, false)
				continue
			}
			if j, halo, ok := tb.cacheIndex(v); ok {
				sc.src[i] = srcHot
				if halo {
					sc.src[i] = srcHalo
				}
				row(i, sc.src[i], int64(j), halo)
				continue
			}
			sc.src[i] = srcRemote
		}
	})
	for i, k := range sc.src {
		switch k {
		case srcLocal:
			g.LocalRows++
			continue
		case srcBad:
			if badErr == nil {
				badErr = fmt.Errorf("gather on rank %d: node %d (entry %d) outside [0,%d)", f.c.Rank(), nodes[i], i, f.n)
			}
			continue
		}
		g.CacheLookups++
		switch k {
		case srcHalo:
			g.CachedRows++
			g.HaloHits++
		case srcHot:
			g.CachedRows++
		default:
			sc.req = append(sc.req, nodes[i])
			sc.at = append(sc.at, int32(i))
		}
	}
	g.RemoteRows = int64(len(sc.req))
	return g, badErr
}

// gatherDense is Gather of a dense table into dst (row i at dst[i*dim:]):
// own and cached rows are copied (widened from a 2-byte table) in
// classify's parallel pass, the remote ones after one batched Fetch.
func (f *FeatureStore) gatherDense(tb *featTable, nodes []int64, dst []float32, st *GatherStats, t0 time.Time) error {
	d := tb.dim
	sc := &f.gat
	g, badErr := f.classify(tb, nodes, func(i int, src rowSource, j int64, halo bool) {
		out := dst[i*d : (i+1)*d]
		switch src {
		case srcLocal:
			tb.localRow(out, j)
		case srcHalo, srcHot:
			tb.cachedRowInto(out, int(j), halo)
		}
	})
	switch {
	case tb.arr != nil && tb.kind.Half():
		// The rows arrive at two bytes a value and are widened straight
		// into their output rows: one pass, no float32 copy in between.
		sc.buf16 = slices.Grow(sc.buf16[:0], len(sc.req)*d)[:len(sc.req)*d]
		b0 := tb.arr.Stats().Bytes
		if err := tb.arr.Fetch(sc.req, collectives.Bytes(sc.buf16)); err != nil {
			return fmt.Errorf("gather on rank %d: %w", f.c.Rank(), err)
		}
		g.Bytes = tb.arr.Stats().Bytes - b0
		par.Range(len(sc.at), len(sc.at)*d, func(lo, hi int) {
			for k := lo; k < hi; k++ {
				i := int(sc.at[k])
				half.Widen(tb.kind, dst[i*d:(i+1)*d], sc.buf16[k*d:(k+1)*d])
			}
		})
	case tb.arr != nil:
		sc.buf = slices.Grow(sc.buf[:0], len(sc.req)*d)[:len(sc.req)*d]
		b0 := tb.arr.Stats().Bytes
		if err := tb.arr.Fetch(sc.req, collectives.Bytes(sc.buf)); err != nil {
			return fmt.Errorf("gather on rank %d: %w", f.c.Rank(), err)
		}
		g.Bytes = tb.arr.Stats().Bytes - b0
		par.Range(len(sc.at), len(sc.at)*d, func(lo, hi int) {
			for k := lo; k < hi; k++ {
				i := int(sc.at[k])
				copy(dst[i*d:(i+1)*d], sc.buf[k*d:(k+1)*d])
			}
		})
	}
	g.Time = time.Since(t0)
	if st != nil {
		st.Add(g)
	}
	return badErr
}

// fillHotCache picks the remote nodes of highest in-degree whose rows of tb
// fit in mb MiB and fetches them with one batched read. The candidates are
// the best 2k of the union of every rank's own top k (k: the rows that fit;
// the global top k of remote nodes is contained in that union), found by a
// distributed threshold search (hotThreshold) so that only those 2k ids
// travel, not k per rank: a rank's memory for them does not grow with the
// rank count. A rank then drops the rows it reads from memory or holds in
// its halo cache and keeps the best k left (2k leaves room for its own).
// It is collective: every rank calls Allgatherv and Fetch once, even with
// the cache off.
func (f *FeatureStore) fillHotCache(tb *featTable, p *partition.Part, mb float64) error {
	rowBytes := tb.kind.Bytes() * tb.dim // a 2-byte table caches twice the rows
	if tb.sp != nil {
		rowBytes = 4 * tb.sp.rowWords() // what a cached row saves on the wire
	}
	k := 0
	if tb.dim > 0 && mb > 0 {
		k = int(mb * (1 << 20) / float64(rowBytes))
	}
	// Every rank must take part even when its own k is 0, so agree on
	// whether anyone wants a cache.
	anyK, err := collectives.AllreduceScalar(f.c, int64(k), collectives.Max)
	if err != nil || anyK == 0 {
		return err
	}
	owned := p.NumOwned()
	mine := make([]hotCand, owned)
	for i := range owned {
		mine[i] = hotCand{p.Lo + i, p.Indptr[i+1] - p.Indptr[i]}
	}
	slices.SortFunc(mine, hotBetter)
	mine = mine[:min(anyK, owned)]
	n, err := hotThreshold(f.c, mine, 2*anyK, p.Meta.NumNodes)
	if err != nil {
		return err
	}
	send := make([]int64, 0, 2*n)
	for _, c := range mine[:n] {
		send = append(send, c.id, c.deg)
	}
	all, _, err := collectives.Allgatherv(f.c, send)
	if err != nil {
		return err
	}
	// Rows this rank reads from memory (its own; its node's when the
	// partition or the node's memory is shared) gain nothing from the
	// cache.
	memLo, memHi := f.lo, f.hi
	if tb.arr != nil {
		memLo, memHi = tb.arr.MemoryRows()
	}
	var cands []hotCand
	for i := 0; i+1 < len(all); i += 2 {
		id := all[i]
		if id >= memLo && id < memHi {
			continue
		}
		if _, ok := slices.BinarySearch(tb.haloIDs, id); ok {
			continue // already cached from the halo file
		}
		cands = append(cands, hotCand{id, all[i+1]})
	}
	slices.SortFunc(cands, hotBetter)
	cands = cands[:min(k, len(cands))]
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.id
	}
	slices.Sort(ids)
	if tb.sp != nil {
		return tb.setHotSparse(ids)
	}
	if tb.kind.Half() {
		feat := make([]uint16, len(ids)*tb.dim)
		if err := tb.arr.Fetch(ids, collectives.Bytes(feat)); err != nil {
			return err
		}
		tb.hotIDs, tb.hotFeat16 = ids, feat
		return nil
	}
	feat := make([]float32, len(ids)*tb.dim)
	if err := tb.arr.Fetch(ids, collectives.Bytes(feat)); err != nil {
		return err
	}
	tb.hotIDs, tb.hotFeat = ids, feat
	return nil
}

// hotCand is a hot-cache candidate: a node and its in-degree.
type hotCand struct{ id, deg int64 }

// hotBetter orders candidates best first: higher degree, then lower id.
func hotBetter(a, b hotCand) int {
	if c := cmp.Compare(b.deg, a.deg); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// hotThreshold finds the best want candidates of the union of every rank's
// list (each sorted by hotBetter, ids in [0, nodes) and distinct across
// ranks) and returns how
// many of this rank's they are: a prefix of its list, since the best want
// are those at least as good as the want-th. It searches the want-th's
// degree, then its id among that degree, each by bisection with one
// Allreduce of a count per probe, so no rank sees another's list. It is
// collective.
func hotThreshold(c *collectives.Comm, mine []hotCand, want, nodes int64) (int, error) {
	total, err := collectives.AllreduceScalar(c, int64(len(mine)), collectives.Sum)
	if err != nil || total <= want {
		return len(mine), err
	}
	var top int64
	if len(mine) > 0 {
		top = mine[0].deg
	}
	if top, err = collectives.AllreduceScalar(c, top, collectives.Max); err != nil {
		return 0, err
	}
	// degAtLeast is the prefix of degree >= d; atLeastWant(n) reports
	// whether the ranks' prefixes of length n(x) hold at least want
	// candidates together (one Allreduce).
	degAtLeast := func(d int64) int { return sort.Search(len(mine), func(i int) bool { return mine[i].deg < d }) }
	atLeastWant := func(n func(int64) int) func(int64) (bool, error) {
		return func(x int64) (bool, error) {
			sum, err := collectives.AllreduceScalar(c, int64(n(x)), collectives.Sum)
			return sum >= want, err
		}
	}
	// The largest d with at least want candidates of degree >= d: d = 0
	// qualifies (total > want), top+1 does not.
	d, err := lastTrue(0, top+1, atLeastWant(degAtLeast))
	if err != nil {
		return 0, err
	}
	// Every candidate of degree > d is in; of degree d, those of the lowest
	// ids up to want in all. The last id taken is the smallest x with at
	// least want candidates better than or equal to (d, x): one past the
	// largest with fewer (id -1 has fewer, nodes-1 does not).
	above := degAtLeast(d + 1)
	upTo := func(x int64) int {
		rest := mine[above:]
		return above + sort.Search(len(rest), func(i int) bool { return rest[i].deg < d || rest[i].id > x })
	}
	enough := atLeastWant(upTo)
	fewer, err := lastTrue(-1, nodes-1, func(x int64) (bool, error) {
		ok, err := enough(x)
		return !ok, err
	})
	if err != nil {
		return 0, err
	}
	return upTo(fewer + 1), nil
}

// lastTrue bisects [lo, hi] for the largest x with f(x), given f(lo), not
// f(hi), and f true up to some point and false after it. Every rank calls
// f on the same points in the same order, so f may be collective.
func lastTrue(lo, hi int64, f func(int64) (bool, error)) (int64, error) {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := f(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

func (tb *featTable) buildCacheSlots() {
	if len(tb.haloIDs)+len(tb.hotIDs) == 0 || len(tb.haloIDs) >= math.MaxInt32 || len(tb.hotIDs) >= math.MaxInt32 {
		return
	}
	m := newSlotMap(len(tb.haloIDs) + len(tb.hotIDs))
	for j, v := range tb.haloIDs {
		m.put(v, -int32(j)-1)
	}
	for j, v := range tb.hotIDs {
		m.put(v, int32(j)+1)
	}
	tb.cacheSlot = m
}

// slotMap is an open-addressing hash table (linear probing, power-of-two
// size, load <= 1/2) from a non-negative id to a non-zero int32: 12 bytes
// a slot, two slots per cached row.
type slotMap struct {
	keys  []int64 // id+1; 0 = empty
	vals  []int32
	shift uint // 64 - log2(len(keys))
}

// fibMul is 2^64/φ: Fibonacci hashing spreads consecutive ids over the
// table (hashkey.Golden's value; that package is not a dependency here).
const fibMul = 0x9E3779B97F4A7C15

// newSlotMap returns an empty map for up to n ids.
func newSlotMap(n int) *slotMap {
	size, lg := 16, 4
	for size < 2*n {
		size *= 2
		lg++
	}
	return &slotMap{keys: make([]int64, size), vals: make([]int32, size), shift: uint(64 - lg)}
}

// put sets id's value to v (id >= 0, at most n ids in all).
func (m *slotMap) put(id int64, v int32) {
	mask := len(m.keys) - 1
	i := int((uint64(id) * fibMul) >> m.shift)
	for m.keys[i] != 0 && m.keys[i] != id+1 {
		i = (i + 1) & mask
	}
	m.keys[i], m.vals[i] = id+1, v
}

// get returns id's value, 0 if it has none.
func (m *slotMap) get(id int64) int32 {
	mask := len(m.keys) - 1
	i := int((uint64(id) * fibMul) >> m.shift)
	for {
		switch m.keys[i] {
		case id + 1:
			return m.vals[i]
		case 0:
			return 0
		}
		i = (i + 1) & mask
	}
}

// bytes returns the map's memory.
func (m *slotMap) bytes() int64 { return 12 * int64(len(m.keys)) }

// localRow writes owned row i (local index) into row, widening a 2-byte
// table's values.
func (tb *featTable) localRow(row []float32, i int64) {
	d := int64(tb.dim)
	if tb.kind.Half() {
		half.Widen(tb.kind, row, tb.local16[i*d:(i+1)*d])
		return
	}
	copy(row, tb.local[i*d:(i+1)*d])
}

// cachedRowInto writes row j of the halo (halo set) or hot cache into row,
// widening a 2-byte table's values.
func (tb *featTable) cachedRowInto(row []float32, j int, halo bool) {
	d := tb.dim
	switch {
	case tb.kind.Half() && halo:
		half.Widen(tb.kind, row, tb.haloFeat16[j*d:(j+1)*d])
	case tb.kind.Half():
		half.Widen(tb.kind, row, tb.hotFeat16[j*d:(j+1)*d])
	case halo:
		copy(row, tb.haloFeat[j*d:(j+1)*d])
	default:
		copy(row, tb.hotFeat[j*d:(j+1)*d])
	}
}

// cacheIndex locates non-owned node v (in range) in the caches: its row
// index in the halo (halo set) or hot cache; ok is false if not cached.
func (tb *featTable) cacheIndex(v int64) (j int, halo, ok bool) {
	if tb.cacheSlot != nil {
		switch k := int(tb.cacheSlot.get(v)); {
		case k > 0:
			return k - 1, false, true
		case k < 0:
			return -k - 1, true, true
		}
		return 0, false, false
	}
	if j, ok := slices.BinarySearch(tb.haloIDs, v); ok {
		return j, true, true
	}
	if j, ok := slices.BinarySearch(tb.hotIDs, v); ok {
		return j, false, true
	}
	return 0, false, false
}
