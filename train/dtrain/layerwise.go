package dtrain

import (
	"fmt"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
)

// DefaultInferChunk is the number of destination nodes per rank per step
// of layer-wise inference: large enough that sources shared by nearby
// destinations are read once per chunk (METIS keeps neighbours together),
// small enough that a chunk's input rows stay far below a layer's rows.
const DefaultInferChunk = 8192

// InferOptions configure Infer.
type InferOptions struct {
	// Chunk is the number of destinations per rank per step (0: the
	// default, DefaultInferChunk).
	Chunk int
	// Graph is another adjacency over the same nodes (for example training
	// plus valid edges); nil = the store's.
	Graph *dsample.GraphStore
	// Typed reads the input rows of a heterogeneous partition's node types
	// (features or learnable embeddings); required there.
	Typed dsample.TypedInputs
	// Stats, if set, receives the time and row counters of the run.
	Stats *InferStats
}

// Validate reports options Infer cannot run with: a negative Chunk (0 is
// the default). Infer calls it; what the partition decides (a typed
// reader for a heterogeneous one) Infer checks against it.
func (o InferOptions) Validate() error {
	if o.Chunk < 0 {
		return config.Errorf("{Chunk} %d must be positive (0 = %d)", o.Chunk, DefaultInferChunk)
	}
	return nil
}

// InferStats are the counters of one layer-wise inference on this rank.
type InferStats struct {
	Sample, Gather, Compute time.Duration
	Steps                   int   // chunk steps over all layers
	Edges                   int64 // block edges over all layers
	Rows                    int64 // input rows read over all layers (own, cached and remote)
	RemoteRows              int64 // of which read from other ranks
}

// Infer runs layer-wise inference (DistDGL's inference()): layer 0 for
// every node of the graph from ALL its in-neighbours, kept as a
// distributed array of rows, then layer 1 from those rows, and so on; it
// returns the last layer's rows of every node (logits, or a link model's
// embeddings; the caller frees them). Each rank computes its own nodes in
// chunks, reading the previous layer's rows of remote neighbours with the
// batched one-sided gets (or Alltoallv) of collectives.DistArray, so at any
// time a rank holds two layers' rows of its own nodes plus one chunk.
//
// There is no randomness and no dropout: the result is the model's exact
// full-neighbourhood output, equal to a sampled evaluation with fanout -1
// at every layer up to float summation order, and the same on any number
// of ranks. A heterogeneous model's typed input projections are computed
// first, for every node, as a layer of their own. The model runs one layer
// at a time (train.Layerwise) over the store's distributed graph. It is
// collective.
func Infer(s *dsample.Store, model *train.Model, o InferOptions) (*dsample.Embeddings, error) {
	defer s.Comm().Phase("infer")()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	m := model.Layerwise()
	if o.Chunk == 0 {
		o.Chunk = DefaultInferChunk
	}
	typed := s.Graph().Schema() != nil
	if typed != m.Typed() {
		return nil, fmt.Errorf("infer: heterogeneous partition %v but heterogeneous model %v", typed, m.Typed())
	}
	if typed && o.Typed == nil {
		return nil, fmt.Errorf("infer: heterogeneous partition but no typed input reader")
	}
	r := &inferRun{s: s, c: s.Comm(), part: s.Part(), m: m, o: o, st: o.Stats, smp: s.Sampler()}
	if r.st == nil {
		r.st = &InferStats{}
	}
	if o.Graph != nil {
		r.smp = dsample.NewSampler(o.Graph)
	}
	owned := r.part.NumOwned()
	steps, err := collectives.AllreduceScalar(r.c, (owned+int64(o.Chunk)-1)/int64(o.Chunk), collectives.Max)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	r.steps = int(steps)
	defer r.free()
	if typed {
		if err := r.projectInputs(); err != nil {
			return nil, err
		}
	}
	if m.NeedsSrcDegree() && m.FirstLayerSrcDegree() {
		if err := r.degrees(); err != nil {
			return nil, err
		}
	}
	var kept [][]float32 // with jumping knowledge: every layer's rows of this rank's nodes
	for l := 0; l < m.NumLayers(); l++ {
		if err := r.layer(l); err != nil {
			return nil, err
		}
		if m.JK() {
			kept = append(kept, slices.Clone(r.prev.Local()))
		}
	}
	if m.JK() {
		if err := r.jk(kept); err != nil {
			return nil, err
		}
	}
	out := r.prev
	r.prev = nil
	return out, nil
}

// inferRun is the state of one Infer.
type inferRun struct {
	s     *dsample.Store
	c     *collectives.Comm
	part  *partition.Part
	m     train.Layerwise
	o     InferOptions
	st    *InferStats
	smp   *dsample.Sampler
	steps int

	prev *dsample.Embeddings    // the rows the current layer reads (nil: features)
	deg  *collectives.DistArray // in-degree of every node (int32 rows), for NeedsSrcDegree

	seeds, orig []int64
	x           []float32
	xs          *sample.SparseRows // layer 0's inputs on a sparse-feature partition
	srcDeg      []int32
}

// free releases whatever the run still holds (on the error path).
func (r *inferRun) free() {
	if r.prev != nil {
		r.prev.Free()
	}
	if r.deg != nil {
		r.deg.Free()
	}
}

// chunk sets r.seeds and r.orig to this rank's destinations of step k.
func (r *inferRun) chunk(k int) {
	p := r.part
	owned := p.NumOwned()
	lo := min(int64(k)*int64(r.o.Chunk), owned)
	hi := min(lo+int64(r.o.Chunk), owned)
	r.seeds, r.orig = r.seeds[:0], r.orig[:0]
	for j := lo; j < hi; j++ {
		r.seeds = append(r.seeds, p.Lo+j)
		r.orig = append(r.orig, p.Orig[j])
	}
}

// newRows allocates the distributed rows (width w) of this rank's nodes.
func (r *inferRun) newRows(w int) (*dsample.Embeddings, error) {
	return r.s.NewEmbeddings(w)
}

// seal agrees on localErr and exposes next's rows to the other ranks; it
// replaces r.prev by next.
func (r *inferRun) seal(what string, next *dsample.Embeddings, localErr error) error {
	if err := r.expose(next, localErr); err != nil {
		next.Free()
		return fmt.Errorf("infer %s: %w", what, err)
	}
	prev := r.prev
	r.prev = next // freed by free on the way out if what follows fails
	if prev != nil {
		if err := prev.Free(); err != nil {
			return fmt.Errorf("infer %s: %w", what, err)
		}
	}
	return nil
}

// expose agrees on localErr and then makes a's rows readable by every
// rank. It is collective.
func (r *inferRun) expose(a interface{ Seal() error }, localErr error) error {
	if err := collectives.Agree(r.c, localErr); err != nil {
		return err
	}
	return a.Seal()
}

// projectInputs computes the typed input projections of every node of a
// heterogeneous partition (the rows its layer 0 reads).
func (r *inferRun) projectInputs() error {
	schema := r.s.Graph().Schema()
	T := schema.NumTypes()
	// A typed model's layer 0 reads the projections, Hidden wide.
	hd := r.m.InDim(0)
	next, err := r.newRows(hd)
	if err != nil {
		return fmt.Errorf("infer inputs: %w", err)
	}
	rows := next.Local()
	byType := make([][]int64, T)
	var localErr error
	var g dsample.GatherStats
	for k := 0; k < r.steps; k++ {
		r.chunk(k)
		for t := range byType {
			byType[t] = byType[t][:0]
		}
		if localErr == nil {
			for i, v := range r.seeds {
				t := schema.TypeOf(r.orig[i])
				byType[t] = append(byType[t], v)
			}
		}
		start := time.Now()
		for t := range T {
			// Every type is read on every step, so that the readers'
			// collectives stay matched across ranks.
			var err error
			r.x, err = r.o.Typed(t, byType[t], r.x[:0], &g)
			r.st.Gather += time.Since(start)
			start = time.Now()
			if err == nil && localErr == nil {
				var proj []float32
				proj, err = r.m.Input(t, r.x)
				if err == nil && len(proj) != len(byType[t])*hd {
					err = fmt.Errorf("model returned %d values for %d nodes of width %d", len(proj), len(byType[t]), hd)
				}
				for i, v := range byType[t] {
					if err != nil {
						break
					}
					copy(rows[(v-r.part.Lo)*int64(hd):], proj[i*hd:(i+1)*hd])
				}
			}
			if err != nil && localErr == nil {
				localErr = fmt.Errorf("infer inputs step %d/%d: node type %s: %w", k+1, r.steps, schema.NodeTypes[t], err)
			}
			r.st.Compute += time.Since(start)
			start = time.Now()
		}
	}
	r.st.Rows += g.Rows()
	r.st.RemoteRows += g.RemoteRows
	return r.seal("inputs", next, localErr)
}

// blockDegrees writes the in-degree (self-loops not counted) of every
// destination of b, this rank's seeds, into degLocal.
func (r *inferRun) blockDegrees(b *sample.Block, degLocal []int32) {
	for i, v := range r.seeds {
		d := int32(0)
		for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			if int(j) != i {
				d++
			}
		}
		degLocal[v-r.part.Lo] = d
	}
}

// degrees fills r.deg with every node's in-degree before layer 0, for a
// model whose first layer needs its sources' degrees (FirstLayerSrcDegree):
// one pass over the same full-neighbourhood blocks the layers read, so the
// degrees are those of the graph inference runs on. It is collective.
func (r *inferRun) degrees() error {
	var err error
	if r.deg, err = collectives.NewDistArray(r.c, r.part.NumOwned(), 4, r.s.Transport()); err != nil {
		return fmt.Errorf("infer degrees: %w", err)
	}
	degLocal := collectives.View[int32](r.deg.Local())
	var localErr error
	for k := 0; k < r.steps; k++ {
		r.chunk(k)
		if localErr != nil {
			r.seeds, r.orig = r.seeds[:0], r.orig[:0]
		}
		start := time.Now()
		blocks, err := r.smp.Sample(dsample.Request{Seeds: r.seeds, SeedsOrig: r.orig, Fanouts: []int{-1}, Key: sample.Key{Batch: -1 - k}})
		r.st.Sample += time.Since(start)
		if err != nil {
			return fmt.Errorf("infer degrees step %d/%d: %w", k+1, r.steps, err)
		}
		if len(blocks) != 1 {
			if localErr == nil {
				localErr = fmt.Errorf("infer degrees step %d/%d: sampler returned %d blocks for one layer", k+1, r.steps, len(blocks))
			}
			continue
		}
		if localErr == nil {
			r.blockDegrees(&blocks[0], degLocal)
		}
	}
	if err := r.expose(r.deg, localErr); err != nil {
		return fmt.Errorf("infer degrees: %w", err)
	}
	return nil
}

// layer computes layer l for every node of this rank.
func (r *inferRun) layer(l int) error {
	w := r.m.OutDim(l)
	next, err := r.newRows(w)
	if err != nil {
		return fmt.Errorf("infer layer %d: %w", l, err)
	}
	rows := next.Local()
	needDeg := r.m.NeedsSrcDegree()
	// Source degrees for this layer: above the first, or on the first
	// after the degrees pass.
	useDeg := needDeg && (l > 0 || r.m.FirstLayerSrcDegree())
	var degLocal []int32
	if needDeg && l == 0 && r.deg == nil {
		if r.deg, err = collectives.NewDistArray(r.c, r.part.NumOwned(), 4, r.s.Transport()); err != nil {
			next.Free()
			return fmt.Errorf("infer layer %d: degrees: %w", l, err)
		}
		degLocal = collectives.View[int32](r.deg.Local())
	}
	var localErr error
	fail := func(k int, err error) {
		if localErr == nil {
			localErr = fmt.Errorf("infer layer %d step %d/%d: %w", l, k+1, r.steps, err)
		}
	}
	for k := 0; k < r.steps; k++ {
		r.chunk(k)
		if localErr != nil {
			r.seeds, r.orig = r.seeds[:0], r.orig[:0]
		}
		// Fanout -1: every in-neighbour; no random choice is made, so the
		// key only has to be valid.
		start := time.Now()
		blocks, err := r.smp.Sample(dsample.Request{Seeds: r.seeds, SeedsOrig: r.orig, Fanouts: []int{-1}, Key: sample.Key{Batch: -1 - k}})
		r.st.Sample += time.Since(start)
		if err != nil {
			return fmt.Errorf("infer layer %d step %d/%d: %w", l, k+1, r.steps, err)
		}
		var b *sample.Block
		var nodes []int64
		if len(blocks) == 1 {
			b = &blocks[0]
			nodes = b.Nodes
			r.st.Edges += int64(b.NumEdges())
		} else {
			fail(k, fmt.Errorf("sampler returned %d blocks for one layer", len(blocks)))
		}
		start = time.Now()
		if err := r.readInputs(nodes, useDeg); err != nil {
			fail(k, err)
		}
		r.st.Gather += time.Since(start)
		r.st.Steps++
		if localErr != nil || len(r.seeds) == 0 {
			continue
		}
		start = time.Now()
		if degLocal != nil {
			r.blockDegrees(b, degLocal)
		}
		var deg []int32
		if useDeg {
			deg = r.srcDeg
		}
		var h []float32
		if r.xs != nil && l == 0 {
			h, err = r.m.LayerSparse(b, r.xs, deg)
		} else {
			h, err = r.m.Layer(l, b, r.x, deg)
		}
		if err == nil && len(h) != len(r.seeds)*w {
			err = fmt.Errorf("model returned %d values for %d nodes of width %d", len(h), len(r.seeds), w)
		}
		if err != nil {
			fail(k, err)
			continue
		}
		lo := (r.seeds[0] - r.part.Lo) * int64(w)
		copy(rows[lo:lo+int64(len(h))], h) // a chunk's seeds are consecutive
		r.st.Compute += time.Since(start)
	}
	if degLocal != nil {
		if err := r.expose(r.deg, localErr); err != nil {
			next.Free()
			return fmt.Errorf("infer layer %d: degrees: %w", l, err)
		}
	}
	return r.seal(fmt.Sprintf("layer %d", l), next, localErr)
}

// jk replaces r.prev by the model's output rows of this rank's nodes: the
// jumping knowledge map over kept, every layer's rows of them. It is
// collective.
func (r *inferRun) jk(kept [][]float32) error {
	owned := int(r.part.NumOwned())
	next, err := r.newRows(r.m.OutWidth())
	if err != nil {
		return fmt.Errorf("infer jk: %w", err)
	}
	out, localErr := r.m.JKOutput(kept, owned)
	if localErr == nil {
		copy(next.Local(), out)
	}
	return r.seal("jk", next, localErr)
}

// readInputs reads the current layer's input rows of nodes into r.x (the
// features for layer 0 of a homogeneous model, else the previous rows)
// and, when withDeg, their in-degrees into r.srcDeg. It is collective.
func (r *inferRun) readInputs(nodes []int64, withDeg bool) error {
	var err error
	if r.prev == nil {
		var g dsample.GatherStats
		if r.s.Features().Sparse(dsample.NodeFeat()) {
			// Sparse features stay sparse: layer 0 projects the stored
			// entries, as training does.
			if r.xs == nil {
				r.xs = &sample.SparseRows{}
			}
			err = r.s.Features().GatherSparse(dsample.NodeFeat(), nodes, r.xs, &g)
		} else {
			r.x, err = r.s.Features().Gather(dsample.NodeFeat(), nodes, r.x, &g)
		}
		r.st.Rows += g.Rows()
		r.st.RemoteRows += g.RemoteRows
	} else {
		before := r.prev.Stats()
		r.x = growFloat32(r.x, len(nodes)*r.prev.Width())
		err = r.prev.Fetch(nodes, r.x)
		after := r.prev.Stats()
		r.st.Rows += int64(len(nodes))
		r.st.RemoteRows += after.RemoteRows - before.RemoteRows
	}
	if withDeg {
		r.srcDeg = growInt32(r.srcDeg, len(nodes))
		derr := r.deg.Fetch(nodes, collectives.Bytes(r.srcDeg))
		if err == nil {
			err = derr
		}
	}
	return err
}

// growFloat32 and growInt32 reslice s to n elements, reallocating with
// headroom only when short: chunks read slightly different row counts.
func growFloat32(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n, n+n/4)
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]int32, n, n+n/4)
}
