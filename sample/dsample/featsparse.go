package dsample

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"mpignn/collectives"
	"mpignn/internal/par"
	"mpignn/partition"
	"mpignn/sample"
)

// Sparse feature tables. A partition with CSR features
// (partition.Meta.SparseFeat) opens its table sparse: owned rows stay CSR,
// and the distributed array holds one FIXED-CAPACITY row per node,
//
//	int32 n | cap int32 columns | cap float32 values (first n used)
//
// with cap the largest row of the whole graph (agreed with one Allreduce),
// so the existing fixed-row Fetch works unchanged on both transports. On
// Facebook (4,714 columns, at most 31 nonzeros per row, 14 on average) a
// wire row is 252 bytes instead of 18,856 dense; variable-length rows
// would halve that again but need a two-step (index, then range) read
// for every batch. Halo and hot caches keep their rows CSR too.

// sparseTable is the CSR side of a featTable (nil for a dense table).
type sparseTable struct {
	cap   int                // entries per wire row
	local *partition.CSRRows // owned rows
	halo  *partition.CSRRows // rows of featTable.haloIDs (nil without halo features)
	hot   *partition.CSRRows // rows of featTable.hotIDs
	buf   []int32            // fetched wire rows
}

// rowWords is the width of a wire row in int32 words.
func (s *sparseTable) rowWords() int { return 1 + 2*s.cap }

// wireRow decodes wire row w (rowWords words).
func (s *sparseTable) wireRow(w []int32) ([]int32, []float32) {
	n := int(w[0])
	return w[1 : 1+n], f32s(w[1+s.cap : 1+s.cap+n])
}

// f32s views int32 words as the float32 bits they carry.
func f32s(w []int32) []float32 {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(w))), len(w))
}

// openSparseTable fills tb (dim set) as a sparse table from p's CSR rows.
// It is collective (one Allreduce, the array's creation and Seal).
func (f *FeatureStore) openSparseTable(tb *featTable, p *partition.Part, t collectives.Transport) error {
	sp := &sparseTable{local: p.FeatCSR, halo: p.HaloFeatCSR}
	tb.sp = sp
	mx := int64(0)
	for i := range sp.local.Rows() {
		mx = max(mx, sp.local.Indptr[i+1]-sp.local.Indptr[i])
	}
	mx, err := collectives.AllreduceScalar(f.c, mx, collectives.Max)
	if err != nil {
		return err
	}
	sp.cap = int(mx)
	if tb.arr, err = collectives.NewDistArray(f.c, p.NumOwned(), 4*sp.rowWords(), t); err != nil {
		return fmt.Errorf("%s array: %w", NodeFeat(), err)
	}
	words := collectives.View[int32](tb.arr.Local())
	rw := sp.rowWords()
	for i := range sp.local.Rows() {
		cols, vals := sp.local.Row(i)
		w := words[i*rw : (i+1)*rw]
		w[0] = int32(len(cols))
		copy(w[1:], cols)
		copy(f32s(w[1+sp.cap:]), vals)
	}
	if err := tb.arr.Seal(); err != nil {
		return err
	}
	if p.HaloFeatCSR != nil {
		tb.haloIDs = p.Halo
	}
	return nil
}

// setHotSparse fetches the wire rows of ids into the hot cache. It is
// collective.
func (tb *featTable) setHotSparse(ids []int64) error {
	sp := tb.sp
	rw := sp.rowWords()
	buf := make([]int32, len(ids)*rw)
	if err := tb.arr.Fetch(ids, collectives.Bytes(buf)); err != nil {
		return err
	}
	hot := &partition.CSRRows{Indptr: make([]int64, 1, len(ids)+1)}
	for k := range ids {
		cols, vals := sp.wireRow(buf[k*rw : (k+1)*rw])
		hot.Indices = append(hot.Indices, cols...)
		hot.Values = append(hot.Values, vals...)
		hot.Indptr = append(hot.Indptr, int64(len(hot.Indices)))
	}
	tb.hotIDs, sp.hot = ids, hot
	return nil
}

// cachedSparseRow returns the cached CSR row of non-owned node v (in
// range) and whether it came from the halo cache; ok is false if v is not
// cached.
func (tb *featTable) cachedSparseRow(v int64) (cols []int32, vals []float32, halo, ok bool) {
	j, halo, ok := tb.cacheIndex(v)
	if !ok {
		return nil, nil, false, false
	}
	if halo {
		cols, vals = tb.sp.halo.Row(j)
	} else {
		cols, vals = tb.sp.hot.Row(j)
	}
	return cols, vals, halo, true
}

// gatherSparse reads the rows of table tb of the given nodes and hands
// fill a function that returns node i's row (nil for a bad node), safe to
// call from any goroutine. Own rows come from the partition's CSR, halo
// and hot rows from the caches, the rest from their owners in one batched
// Fetch (on the calling goroutine). It is collective.
func (f *FeatureStore) gatherSparse(tb *featTable, nodes []int64, st *GatherStats, t0 time.Time, fill func(row func(i int) ([]int32, []float32))) error {
	sp := tb.sp
	sc := &f.gat
	sc.req = sc.req[:0]
	var g GatherStats
	var badErr error
	// Classify the nodes in parallel, then count them and list the remote
	// requests in node order (slot: the request index of a remote node).
	sc.src = slices.Grow(sc.src[:0], len(nodes))[:len(nodes)]
	sc.rows = slices.Grow(sc.rows[:0], len(nodes))[:len(nodes)]
	par.Range(len(nodes), 16*len(nodes), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := nodes[i]
			switch {
			case v >= f.lo && v < f.hi:
				sc.src[i] = srcLocal
			case v < 0 || v >= f.n:
				sc.src[i] = srcBad
			default:
				sc.src[i] = srcRemote
				if _, halo, ok := tb.cacheIndex(v); ok {
					sc.src[i] = srcHot
					if halo {
						sc.src[i] = srcHalo
					}
				}
			}
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
			sc.rows[i] = int64(len(sc.req))
			sc.req = append(sc.req, nodes[i])
		}
	}
	g.RemoteRows = int64(len(sc.req))
	rw := sp.rowWords()
	sp.buf = slices.Grow(sp.buf[:0], len(sc.req)*rw)[:len(sc.req)*rw]
	b0 := tb.arr.Stats().Bytes
	if err := tb.arr.Fetch(sc.req, collectives.Bytes(sp.buf)); err != nil {
		return fmt.Errorf("gather on rank %d: %w", f.c.Rank(), err)
	}
	g.Bytes = tb.arr.Stats().Bytes - b0
	fill(func(i int) ([]int32, []float32) {
		v := nodes[i]
		switch sc.src[i] {
		case srcLocal:
			return sp.local.Row(int(v - f.lo))
		case srcBad:
			return nil, nil
		case srcHalo, srcHot:
			cols, vals, _, _ := tb.cachedSparseRow(v)
			return cols, vals
		}
		k := int(sc.rows[i])
		return sp.wireRow(sp.buf[k*rw : (k+1)*rw])
	})
	g.Time = time.Since(t0)
	if st != nil {
		st.Add(g)
	}
	return badErr
}

// fillSparse sets dst (reset) to the n rows row(0..n-1): row lengths are
// taken in parallel, offsets summed in order, and rows copied in parallel
// into their own ranges.
func fillSparse(dst *sample.SparseRows, n int, row func(i int) ([]int32, []float32)) {
	dst.Indptr = slices.Grow(dst.Indptr[:0], n+1)[:n+1]
	dst.Indptr[0] = 0
	par.Range(n, 16*n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cols, _ := row(i)
			dst.Indptr[i+1] = int32(len(cols))
		}
	})
	for i := 0; i < n; i++ {
		dst.Indptr[i+1] += dst.Indptr[i]
	}
	nnz := int(dst.Indptr[n])
	dst.Indices = slices.Grow(dst.Indices[:0], nnz)[:nnz]
	dst.Values = slices.Grow(dst.Values[:0], nnz)[:nnz]
	par.Range(n, nnz+16*n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cols, vals := row(i)
			e := dst.Indptr[i]
			copy(dst.Indices[e:], cols)
			copy(dst.Values[e:], vals)
		}
	})
}

// Sparse reports whether table k holds its rows sparsely (the partition
// stores CSR features); GatherSparse then avoids densifying them.
func (f *FeatureStore) Sparse(k FeatureKey) bool {
	tb, err := f.table(k)
	return err == nil && tb.sp != nil
}

// GatherSparse is Gather into sparse rows: dst is reset and gets one row
// per node, in node order, with the table's width as Cols. A dense table
// is converted row by row (its zeros dropped). It is collective.
func (f *FeatureStore) GatherSparse(k FeatureKey, nodes []int64, dst *sample.SparseRows, st *GatherStats) error {
	defer f.c.Phase("gather")()
	t0 := time.Now()
	tb, err := f.table(k)
	if err != nil {
		return fmt.Errorf("gather on rank %d: %w", f.c.Rank(), err)
	}
	dst.Reset(tb.dim)
	if tb.sp == nil || tb.typed != nil {
		x, err := f.Gather(k, nodes, nil, st)
		for i := range nodes {
			dst.AppendDense(x[i*tb.dim : (i+1)*tb.dim])
		}
		return err
	}
	return f.gatherSparse(tb, nodes, st, t0, func(row func(i int) ([]int32, []float32)) {
		fillSparse(dst, len(nodes), row)
	})
}
