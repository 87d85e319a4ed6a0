package dtrain

import (
	"fmt"
	"math"
	"slices"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train/optim"
)

// Learnable node embeddings for node types without features (DistDGL's
// DistEmbedding): one table per node type, its rows sharded by owner like
// typed features (rows = type-local new ids, see dsample.TypeRows), read
// with Fetch
// like features, and trained with sparse gradients that Push sends to the
// rows' owners, which apply a sparse optimizer to the rows touched in the
// step.
//
// Determinism. Initial values are a pure function of (seed, node type,
// type-local ORIGINAL id, column), so every rank count starts from the same
// table. A step's gradients are combined in a fixed order: each rank first
// sums its repeated rows in the order they appear; with PushAlltoallv the
// owner then adds the ranks' contributions in source-rank order (starting
// from zero), and updates the touched rows in ascending order, so a run and
// its resume agree bit for bit. With PushAccumulate MPI adds the
// contributions of different origins in arrival order, which MPI leaves
// unspecified: float sums can differ in the last bits between runs, so that
// method is for speed, not for bit-identical resume.

// embeddingOptions configure openEmbeddingTable.
type embeddingOptions struct {
	NodeType string
	Dim      int
	Seed     uint64
	// Transport reads remote rows (TransportAuto is resolved collectively).
	Transport collectives.Transport
	// Method is how Push moves gradients to the rows' owners:
	// PushAlltoallv ("" too) sends (row, gradient) pairs with Alltoallv and
	// the owner sums them in source-rank order (deterministic);
	// PushAccumulate adds them one-sidedly into a gradient window with
	// MPI_Accumulate (needs one-sided MPI; summation order unspecified).
	Method string
	// NewOptimizer returns the optimizer of this rank's rows: params is
	// the table's local memory (owned rows x Dim), updated in place.
	NewOptimizer func(params []float32, dim int) (optim.SparseOptimizer, error)
}

// embeddingTable is one node type's learnable embedding, sharded by owner.
// fetch, push, export, import and close are collective: every rank calls
// them in the same order, with its own (possibly empty) rows.
type embeddingTable struct {
	c          *collectives.Comm
	m          *dsample.TypeRows
	dim        int
	accumulate bool                   // push method PushAccumulate
	arr        *collectives.DistArray // params, Dim float32 per row
	params     []float32              // this rank's rows (the array's memory)
	grad       *collectives.DistArray // PushAccumulate: Dim+1 float32 per row, the last counts contributions
	opt        optim.SparseOptimizer
	// orig holds the type-local ORIGINAL id of each owned row.
	orig []int64

	// scratch reused across steps
	slot    []int32 // owned row -> 1 + index in touched, 0 = untouched
	touched []int64
	sums    []float32
}

// embedTag keeps the hash inputs of embedding initialisation apart from the
// sampler's.
const embedTag = 0x656d626564 // "embed"

// embeddingInit returns the initial value of column col of the row of type
// t's node with type-local original id id in a table of width dim: uniform
// on [-1/sqrt(dim), 1/sqrt(dim)) from Hash64(embedTag, seed, t, id, col) (the
// range of PyTorch's default nn.Linear initialisation for fan-in dim).
func embeddingInit(seed uint64, t int, id int64, col, dim int) float32 {
	u := sample.Float32From(sample.Hash64(embedTag, seed, uint64(t), uint64(id), uint64(col)))
	return (2*u - 1) / float32(math.Sqrt(float64(dim)))
}

// openEmbeddingTable creates the embedding of node type o.NodeType of
// heterogeneous partition p, initialised by embeddingInit. It is
// collective, and fails on every rank if any rank cannot open it.
func openEmbeddingTable(c *collectives.Comm, p *partition.Part, o embeddingOptions) (*embeddingTable, error) {
	t, err := collectives.ResolveTransport(c, o.Transport)
	if err != nil {
		return nil, fmt.Errorf("open embedding %s: %w", o.NodeType, err)
	}
	m, terr := dsample.NewTypeRows(c, p, o.NodeType)
	var why string
	switch {
	case terr != nil:
		why = terr.Error()
	case o.Dim <= 0:
		why = fmt.Sprintf("embedding width %d must be positive", o.Dim)
	case o.NewOptimizer == nil:
		why = "no sparse optimizer"
	case o.Method != "" && o.Method != PushAlltoallv && o.Method != PushAccumulate:
		why = fmt.Sprintf("unknown embedding push method %q (want %s or %s)", o.Method, PushAlltoallv, PushAccumulate)
	case o.Method == PushAccumulate && t != collectives.TransportRMA:
		why = fmt.Sprintf("push method accumulate needs one-sided MPI but the transport is %v (use alltoallv)", t)
	}
	var orig []int64
	if why == "" {
		h := p.Meta.Hetero
		orig = make([]int64, m.Owned())
		lo, hi := h.NodeOrig[m.Type()], h.NodeOrig[m.Type()+1]
		for i := range orig {
			g := m.Lo() + int64(i) - p.Lo
			if g >= int64(len(p.Orig)) || p.Orig[g] < lo || p.Orig[g] >= hi {
				why = fmt.Sprintf("part %d: owned node %d of type %q has no original id of that type", p.ID, m.Lo()+int64(i), o.NodeType)
				break
			}
			orig[i] = p.Orig[g] - lo
		}
	}
	if err := collectives.AgreeOpen(c, "open embedding "+o.NodeType, why); err != nil {
		return nil, err
	}
	e := &embeddingTable{c: c, m: m, dim: o.Dim, accumulate: o.Method == PushAccumulate, orig: orig, slot: make([]int32, m.Owned())}
	ok := false
	defer func() {
		if !ok {
			e.Close()
		}
	}()
	if e.arr, err = collectives.NewDistArray(c, m.Owned(), 4*o.Dim, t); err != nil {
		return nil, fmt.Errorf("open embedding %s: %w", o.NodeType, err)
	}
	e.params = collectives.View[float32](e.arr.Local())
	for i, id := range orig {
		row := e.params[int64(i)*int64(o.Dim) : int64(i+1)*int64(o.Dim)]
		for k := range row {
			row[k] = embeddingInit(o.Seed, m.Type(), id, k, o.Dim)
		}
	}
	e.opt, err = o.NewOptimizer(e.params, o.Dim)
	if err != nil {
		why = err.Error()
	}
	if err := collectives.AgreeOpen(c, "open embedding "+o.NodeType+" optimizer", why); err != nil {
		return nil, err
	}
	if err := e.arr.Seal(); err != nil {
		return nil, fmt.Errorf("open embedding %s: %w", o.NodeType, err)
	}
	if e.accumulate {
		if e.grad, err = collectives.NewPrivateDistArray(c, m.Owned(), 4*(o.Dim+1), collectives.TransportRMA); err != nil {
			return nil, fmt.Errorf("open embedding %s gradients: %w", o.NodeType, err)
		}
		clear(e.grad.Local()) // MPI does not promise zeroed memory
		if err := e.grad.Seal(); err != nil {
			return nil, fmt.Errorf("open embedding %s gradients: %w", o.NodeType, err)
		}
	}
	ok = true
	return e, nil
}

// Close frees the table's arrays. It is collective.
func (e *embeddingTable) Close() error {
	if e == nil {
		return nil
	}
	var first error
	for _, a := range []**collectives.DistArray{&e.arr, &e.grad} {
		if *a == nil {
			continue
		}
		if err := (*a).Free(); err != nil && first == nil {
			first = fmt.Errorf("close embedding %s: %w", e.m.NodeType(), err)
		}
		*a = nil
	}
	return first
}

// NodeType returns the node type of the table.
func (e *embeddingTable) NodeType() string { return e.m.NodeType() }

// FetchStats returns the transport counters of the table's reads.
func (e *embeddingTable) FetchStats() collectives.FetchStats { return e.arr.Stats() }

// Fetch writes the rows of the given new global ids (of the table's node
// type) into dst (row i at dst[i*Dim:]), growing it as needed, and returns
// it. Own rows are copied, the others read from their owners in one batched
// Fetch. It is collective. A node of another type is an error (after the
// collective fetch of the other rows).
func (e *embeddingTable) Fetch(gids []int64, dst []float32) ([]float32, error) {
	dst, bad, err := e.m.Gather(e.arr, e.params, e.dim, gids, dst)
	if err != nil {
		return dst, fmt.Errorf("fetch embedding %s on rank %d: %w", e.m.NodeType(), e.c.Rank(), err)
	}
	if bad != nil {
		bad = fmt.Errorf("fetch embedding %s on rank %d: %w", e.m.NodeType(), e.c.Rank(), bad)
	}
	return dst, bad
}

// Push sends the step's gradients of the given new global ids (grads row i
// for gids[i], len(gids)*Dim values; ids may repeat) to their owners, which
// sum each row's gradients and apply the optimizer to the touched rows, in
// ascending row order. It is one training step of the table and is
// collective: every rank calls it once per step, with its own (possibly
// empty) rows. If any rank passes a bad id, every rank returns an error and
// no row changes.
func (e *embeddingTable) Push(gids []int64, grads []float32) error {
	d := int64(e.dim)
	m := e.m
	name := m.NodeType()
	var why string
	if int64(len(grads)) != int64(len(gids))*d {
		why = fmt.Sprintf("%d gradient values for %d rows of %d", len(grads), len(gids), d)
	}
	rows := make([]int64, len(gids))
	for i, v := range gids {
		if why != "" {
			break
		}
		r, err := m.Row(v)
		if err != nil {
			why = fmt.Sprintf("entry %d: %v", i, err)
		}
		rows[i] = r
	}
	if err := collectives.AgreeOpen(e.c, "push embedding "+name, why); err != nil {
		return err
	}
	w := int(d)
	if e.accumulate {
		w++ // the contribution counter, which marks touched rows
	}
	uniq, vals := collectives.SumRows(rows, grads, e.dim, w)
	var err error
	if e.accumulate {
		err = e.stepAccumulate(uniq, vals)
	} else {
		err = e.stepAlltoallv(uniq, vals)
	}
	if err != nil {
		return fmt.Errorf("push embedding %s on rank %d: %w", name, e.c.Rank(), err)
	}
	// Publish the updated rows to one-sided readers (a barrier otherwise).
	return e.arr.Seal()
}

// stepAlltoallv sends the rows to their owners and applies the sums.
func (e *embeddingTable) stepAlltoallv(uniq []int64, vals []float32) error {
	got, gotVals, err := e.arr.PushRows(uniq, collectives.Bytes(vals))
	if err != nil {
		return err
	}
	d := e.dim
	g := collectives.View[float32](gotVals)
	e.touched, e.sums = e.touched[:0], e.sums[:0]
	// got is in source-rank order: each row's sum starts from zero and
	// adds the ranks' contributions in rank order.
	for j, r := range got {
		lr := r - e.m.FirstRow()
		k := e.slot[lr]
		if k == 0 {
			e.touched = append(e.touched, lr)
			e.sums = append(e.sums, make([]float32, d)...)
			k = int32(len(e.touched))
			e.slot[lr] = k
		}
		acc := e.sums[int(k-1)*d : int(k)*d]
		for c, x := range g[j*d : (j+1)*d] {
			acc[c] += x
		}
	}
	// Ascending rows for the optimizer, with their sums.
	idx := make([]int32, len(e.touched))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return int(e.touched[a] - e.touched[b]) })
	rows := make([]int64, len(idx))
	grads := make([]float32, len(idx)*d)
	for i, k := range idx {
		rows[i] = e.touched[k]
		copy(grads[i*d:(i+1)*d], e.sums[int(k)*d:int(k+1)*d])
		e.slot[rows[i]] = 0
	}
	if e.arr.Transport() == collectives.TransportRMA {
		// A zero-size exchange need not synchronise: wait until every rank
		// is past its last one-sided read of the rows about to change.
		if err := e.c.Barrier(); err != nil {
			return err
		}
	}
	return e.opt.Step(rows, grads)
}

// stepAccumulate adds the rows into the owners' gradient windows and
// applies the sums of the rows whose counter is set.
func (e *embeddingTable) stepAccumulate(uniq []int64, vals []float32) error {
	if err := e.grad.Accumulate(uniq, collectives.Bytes(vals)); err != nil {
		return err
	}
	// Settle is a barrier: after it, every rank is also past its reads of
	// the parameters.
	if err := e.grad.Settle(); err != nil {
		return err
	}
	d := e.dim
	w := d + 1
	acc := collectives.View[float32](e.grad.Local())
	var rows []int64
	var grads []float32
	for r := range e.m.Owned() {
		row := acc[r*int64(w) : (r+1)*int64(w)]
		if row[d] == 0 {
			continue
		}
		rows = append(rows, r)
		grads = append(grads, row[:d]...)
		clear(row)
	}
	serr := e.opt.Step(rows, grads)
	// Publish the cleared rows before anyone accumulates again; every rank
	// takes part even if its step failed.
	if err := e.grad.Seal(); err != nil {
		return err
	}
	return serr
}
