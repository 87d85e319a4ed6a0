package dsample

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/internal/par"
	"mpignn/partition"
)

// Typed tables of heterogeneous partitions.
//
// A heterogeneous part owns a contiguous range of new ids per node type
// (partition.HeteroMeta), and type t's nodes are numbered 0..count-1 in
// new-id order over all parts (type-local new ids), part p owning
// [TypeOffsets[t][p], TypeOffsets[t][p+1]). A table of one node type is a
// DistArray over those type-local ids, so each rank holds exactly its owned
// rows of the type and no rows for other types.

// TypeRows maps the new global ids of one node type of a heterogeneous
// partition to type-local new ids: the rows of a table of that type
// sharded by owner (a typed feature table, or train/dtrain's learnable
// embeddings), this rank holding rows [FirstRow, FirstRow+Owned).
type TypeRows struct {
	t       int
	name    string
	offsets []int64 // Meta.Offsets
	starts  []int64 // first new global id of the type in each part
	typeOff []int64 // TypeOffsets[t]
	lo, hi  int64   // this rank's new global ids of the type
	localLo int64   // this rank's first type-local new id

	gat gatherScratch // Gather's buffers
}

// NewTypeRows returns the rows of node type nodeType of heterogeneous
// partition p served on c, or why p cannot be served (wrong rank or part
// count, not heterogeneous, no such type, an inconsistent type layout).
// It is not collective: callers agree on the error.
func NewTypeRows(c *collectives.Comm, p *partition.Part, nodeType string) (*TypeRows, error) {
	why := checkPart(c, p)
	var m *TypeRows
	switch {
	case why != "":
	case p.Meta.Hetero == nil:
		why = "the partition is not heterogeneous"
	default:
		m, why = newTypeRows(p, nodeType)
	}
	if why != "" {
		return nil, errors.New(why)
	}
	return m, nil
}

// NodeType returns the type's name.
func (m *TypeRows) NodeType() string { return m.name }

// Type returns the type's index in the schema.
func (m *TypeRows) Type() int { return m.t }

// Lo returns this rank's first new global id of the type (its owned nodes
// of the type are [Lo, Lo+Owned)).
func (m *TypeRows) Lo() int64 { return m.lo }

// Owned returns the number of this rank's rows.
func (m *TypeRows) Owned() int64 { return m.owned() }

// FirstRow returns this rank's first type-local new id.
func (m *TypeRows) FirstRow() int64 { return m.localLo }

// Count returns the number of nodes of the type in the graph.
func (m *TypeRows) Count() int64 { return m.typeOff[len(m.typeOff)-1] }

// Row returns the type-local new id of new global id g, or an error when g
// is not a node of this type.
func (m *TypeRows) Row(g int64) (int64, error) { return m.row(g) }

// Gather writes the rows of nodes (new global ids of the type) into dst
// (row i at dst[i*dim:], grown as needed) and returns it: own rows are
// copied from local (this rank's rows of arr, Owned x dim), the others
// read from arr, a DistArray over type-local new ids of 4*dim bytes per
// row, in one batched Fetch that this rank makes whatever its nodes (it is
// collective). A node of another type is skipped and the first one is
// returned as bad, after the fetch; err is the fetch's.
func (m *TypeRows) Gather(arr *collectives.DistArray, local []float32, dim int, nodes []int64, dst []float32) (out []float32, bad, err error) {
	out, _, bad, err = m.gat.gatherRows(m, arr, local, dim, nodes, dst)
	return out, bad, err
}

// newTypeRows builds the map of type name for part p, or explains why the
// part's type layout is inconsistent.
func newTypeRows(p *partition.Part, name string) (*TypeRows, string) {
	h := p.Meta.Hetero
	t := slices.Index(h.NodeTypes, name)
	if t < 0 {
		return nil, fmt.Sprintf("partition has no node type %q (have %v)", name, h.NodeTypes)
	}
	P := p.Meta.NumParts
	if len(h.TypeOffsets) != len(h.NodeTypes) || len(h.TypeOffsets[t]) != P+1 || len(p.Meta.Offsets) != P+1 {
		return nil, fmt.Sprintf("hetero meta has %d type offset lists (type %q: %d entries) for %d types and %d parts",
			len(h.TypeOffsets), name, len(h.TypeOffsets[min(t, len(h.TypeOffsets)-1)]), len(h.NodeTypes), P)
	}
	for u := range h.TypeOffsets {
		if len(h.TypeOffsets[u]) != P+1 {
			return nil, fmt.Sprintf("hetero meta: type %q has %d type offsets, want %d", h.NodeTypes[u], len(h.TypeOffsets[u]), P+1)
		}
	}
	m := &TypeRows{t: t, name: name, offsets: p.Meta.Offsets, typeOff: h.TypeOffsets[t], starts: make([]int64, P)}
	for q := range P {
		m.starts[q] = h.TypeStart(t, q, p.Meta.Offsets[q])
		if n := h.TypeCount(t, q); n < 0 || m.starts[q]+n > p.Meta.Offsets[q+1] {
			return nil, fmt.Sprintf("hetero meta: part %d's %d nodes of type %q do not fit its id range", q, n, name)
		}
	}
	m.lo = m.starts[p.ID]
	m.hi = m.lo + h.TypeCount(t, p.ID)
	m.localLo = m.typeOff[p.ID]
	if len(p.TypeLo) != len(h.NodeTypes)+1 || p.TypeLo[t] != m.lo || p.TypeLo[t+1] != m.hi {
		return nil, fmt.Sprintf("part %d's TypeLo %v disagrees with the meta's type offsets (type %q owns [%d,%d))", p.ID, p.TypeLo, name, m.lo, m.hi)
	}
	return m, ""
}

// row returns the type-local new id of new global id g, or an error when g
// is not a node of this type.
func (m *TypeRows) row(g int64) (int64, error) {
	if g >= m.lo && g < m.hi {
		return m.localLo + g - m.lo, nil
	}
	total := m.offsets[len(m.offsets)-1]
	if g < 0 || g >= total {
		return 0, fmt.Errorf("node %d outside [0,%d)", g, total)
	}
	q := partition.Owner(m.offsets, g)
	if g < m.starts[q] || g >= m.starts[q]+m.typeOff[q+1]-m.typeOff[q] {
		return 0, fmt.Errorf("node %d is not of node type %q", g, m.name)
	}
	return m.typeOff[q] + g - m.starts[q], nil
}

// rows returns the local row count of the type on this rank.
func (m *TypeRows) owned() int64 { return m.hi - m.lo }

// openTypedFeatureStore opens one table per node type with features, key
// {type, "feat"}, in type order. The halo and hot caches are off for
// typed tables.
func openTypedFeatureStore(c *collectives.Comm, p *partition.Part, t collectives.Transport) (*FeatureStore, error) {
	h := p.Meta.Hetero
	why := checkPart(c, p)
	var maps []*TypeRows
	for _, name := range h.NodeTypes {
		dim := h.FeatDims[name]
		if why != "" || dim == 0 {
			continue
		}
		m, w := newTypeRows(p, name)
		switch {
		case w != "":
			why = w
		case dim < 0:
			why = fmt.Sprintf("node type %q has feature width %d", name, dim)
		case int64(len(p.TypeFeat[name])) != m.owned()*int64(dim):
			why = fmt.Sprintf("part %d has %d feature values of type %q, want %d (%d nodes x %d)", p.ID, len(p.TypeFeat[name]), name, m.owned()*int64(dim), m.owned(), dim)
		}
		maps = append(maps, m)
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
	for _, m := range maps {
		key := FeatureKey{NodeType: m.name, Name: FeatName}
		tb := &featTable{dim: h.FeatDims[m.name], typed: m}
		f.keys, f.tables = append(f.keys, key), append(f.tables, tb)
		var err error
		if tb.arr, err = collectives.NewDistArray(c, m.owned(), 4*tb.dim, t); err != nil {
			return nil, fmt.Errorf("open feature store: %s array: %w", key, err)
		}
		tb.local = collectives.View[float32](tb.arr.Local())
		copy(tb.local, p.TypeFeat[m.name])
		if err := tb.arr.Seal(); err != nil {
			return nil, fmt.Errorf("open feature store: %s: %w", key, err)
		}
	}
	ok = true
	return f, nil
}

// gatherTyped is Gather for a typed table: nodes are new global ids of the
// table's type.
func (f *FeatureStore) gatherTyped(k FeatureKey, tb *featTable, nodes []int64, dst []float32, st *GatherStats, t0 time.Time) ([]float32, error) {
	var g GatherStats
	b0 := tb.arr.Stats().Bytes
	dst, local, badErr, err := f.gat.gatherRows(tb.typed, tb.arr, tb.local, tb.dim, nodes, dst)
	if err != nil {
		return dst, fmt.Errorf("gather %s on rank %d: %w", k, f.c.Rank(), err)
	}
	if badErr != nil {
		badErr = fmt.Errorf("gather %s on rank %d: %w", k, f.c.Rank(), badErr)
	}
	g.LocalRows = local
	g.RemoteRows = int64(len(f.gat.req))
	g.Bytes = tb.arr.Stats().Bytes - b0
	g.Time = time.Since(t0)
	if st != nil {
		st.Add(g)
	}
	return dst, badErr
}

// gatherRows writes the rows of nodes (new global ids of m's type) into dst
// (row i at dst[i*d:], grown as needed): own rows are copied from local
// (m's owned rows), the others read from arr with one batched Fetch, which
// this rank makes whatever its nodes (it is collective). A node of another
// type is skipped and the first one is returned as bad, after the fetch;
// err is the fetch's. It returns the number of own rows; sc.req holds the
// fetched ones.
func (sc *gatherScratch) gatherRows(m *TypeRows, arr *collectives.DistArray, local []float32, d int, nodes []int64, dst []float32) (out []float32, own int64, bad, err error) {
	dst = slices.Grow(dst[:0], len(nodes)*d)[:len(nodes)*d]
	sc.req, sc.at = sc.req[:0], sc.at[:0]
	// Own rows are copied and the others located in parallel; a serial
	// pass in node order then lists the requests and finds the first bad
	// entry, as a serial loop would.
	const ownRow, badRow = -1, -2
	sc.rows = slices.Grow(sc.rows[:0], len(nodes))[:len(nodes)]
	par.Range(len(nodes), len(nodes)*(d+16), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := nodes[i]
			if v >= m.lo && v < m.hi {
				r := v - m.lo
				copy(dst[i*d:(i+1)*d], local[r*int64(d):(r+1)*int64(d)])
				sc.rows[i] = ownRow
				continue
			}
			r, err := m.row(v)
			if err != nil {
				r = badRow
			}
			sc.rows[i] = r
		}
	})
	for i, r := range sc.rows {
		switch r {
		case ownRow:
			own++
		case badRow:
			// Still fetch the other rows: the fetch is collective.
			if bad == nil {
				_, err := m.row(nodes[i])
				bad = fmt.Errorf("entry %d: %w", i, err)
			}
		default:
			sc.req = append(sc.req, r)
			sc.at = append(sc.at, int32(i))
		}
	}
	sc.buf = slices.Grow(sc.buf[:0], len(sc.req)*d)[:len(sc.req)*d]
	if err := arr.Fetch(sc.req, collectives.Bytes(sc.buf)); err != nil {
		return dst, own, bad, err
	}
	par.Range(len(sc.at), len(sc.at)*d, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			i := int(sc.at[j])
			copy(dst[i*d:(i+1)*d], sc.buf[j*d:(j+1)*d])
		}
	})
	return dst, own, bad, nil
}
