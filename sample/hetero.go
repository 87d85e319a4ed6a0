package sample

import (
	"fmt"

	"mpignn/graph"
)

// Typed (per-relation) neighbor sampling of heterogeneous graphs.
//
// A heterogeneous in-adjacency has one ROW per (node, relation): row v*R+r
// lists the sources of the edges u -r-> v in canonical order (ascending
// original id). A typed sampler expands every destination v (of node type
// t) once per relation r whose destination type is t, in ascending r, with
// that relation's fanout and the key Node = orig(v)*R + r, so each row's
// choice is as independent of ranks and transport as a node's is in the
// homogeneous sampler. With R = 1 the row of v is v and the key is orig(v):
// the typed sampler then draws exactly the homogeneous blocks.

// RelFanouts are per-relation fanouts in PyG order: RelFanouts[h][r] is the
// fanout of relation r at hop h, where hop 0 is the hop from the seeds (the
// LAST block). -1 takes all neighbors of the relation, 0 none.
type RelFanouts [][]int

// UniformRelFanouts gives every one of R relations the same fanouts (PyG's
// num_neighbors as a plain list).
func UniformRelFanouts(fanouts []int, R int) RelFanouts {
	f := make(RelFanouts, len(fanouts))
	for h, n := range fanouts {
		f[h] = make([]int, R)
		for r := range f[h] {
			f[h][r] = n
		}
	}
	return f
}

// Layers returns the number of hops (model layers).
func (f RelFanouts) Layers() int { return len(f) }

// Check reports the first malformed entry for a graph of R relations: every
// hop needs R fanouts, each -1 or >= 0.
func (f RelFanouts) Check(R int) error {
	if len(f) == 0 {
		return fmt.Errorf("relation fanouts: no hops (one per layer)")
	}
	for h, row := range f {
		if len(row) != R {
			return fmt.Errorf("relation fanouts: hop %d has %d fanouts for %d relations", h, len(row), R)
		}
		for r, n := range row {
			if n < -1 {
				return fmt.Errorf("relation fanouts: hop %d relation %d has fanout %d, want -1 (all), 0 (none) or > 0", h, r, n)
			}
		}
	}
	return nil
}

// RelPlan tells a typed sampler which relation rows of a destination to
// expand: those whose destination type is the node's type, ascending. A nil
// schema is a homogeneous graph: one relation, row 0 of every node.
type RelPlan struct {
	schema *graph.Schema
	in     [][]int
	all    []int
}

// NewRelPlan returns the plan of a schema (nil: homogeneous).
func NewRelPlan(schema *graph.Schema) *RelPlan {
	p := &RelPlan{schema: schema, all: []int{0}}
	if schema != nil {
		p.in = schema.InRels()
	}
	return p
}

// NumRels returns R (1 without a schema).
func (p *RelPlan) NumRels() int {
	if p.schema == nil {
		return 1
	}
	return p.schema.NumRels()
}

// Typed reports whether blocks carry edge types (a schema is set).
func (p *RelPlan) Typed() bool { return p.schema != nil }

// Rels returns the relations into the node with original id orig,
// ascending (none for an id outside the schema). The slice is shared.
func (p *RelPlan) Rels(orig int64) []int {
	if p.schema == nil {
		return p.all
	}
	if orig < 0 || orig >= p.schema.NumNodes() {
		return nil
	}
	return p.in[p.schema.TypeOf(orig)]
}

// RelGraph is the read side of a heterogeneous in-adjacency by relation
// rows (see graph.HeteroDataset.In), in canonical order.
type RelGraph interface {
	// NumNodes returns the exclusive upper bound of global node ids.
	NumNodes() int64
	// Schema returns the graph's schema; nil means a homogeneous graph,
	// read as one relation.
	Schema() *graph.Schema
	// InNeighborsRel returns the in-neighbors of global node v through
	// relation r (global and original ids, aligned). The slices may alias
	// the graph and must not be modified.
	InNeighborsRel(v int64, r int) (global, orig []int64)
}

// HeteroCSR adapts an unpartitioned graph.HeteroDataset (global id ==
// homogenized original id) to RelGraph.
type HeteroCSR struct{ D *graph.HeteroDataset }

// NumNodes implements RelGraph.
func (g HeteroCSR) NumNodes() int64 { return g.D.NumNodes() }

// Schema implements RelGraph.
func (g HeteroCSR) Schema() *graph.Schema { return g.D.Schema }

// InNeighborsRel implements RelGraph; both results are the same slice.
func (g HeteroCSR) InNeighborsRel(v int64, r int) (global, orig []int64) {
	nb := g.D.In.Neighbors(v*int64(g.D.Schema.NumRels()) + int64(r))
	return nb, nb
}

// HomoRel reads a homogeneous Graph as a RelGraph of one relation.
type HomoRel struct{ G Graph }

// NumNodes implements RelGraph.
func (g HomoRel) NumNodes() int64 { return g.G.NumNodes() }

// Schema implements RelGraph: nil, homogeneous.
func (g HomoRel) Schema() *graph.Schema { return nil }

// InNeighborsRel implements RelGraph (r is always 0).
func (g HomoRel) InNeighborsRel(v int64, _ int) (global, orig []int64) { return g.G.InNeighbors(v) }

// RelSampler draws typed blocks with per-relation fanouts. Every
// implementation returns, for the same arguments, the blocks of
// HeteroReference on the unpartitioned graph, node for node in original
// ids and with the same Etype.
type RelSampler interface {
	SampleRel(seedsGlobal, seedsOrig []int64, fanouts RelFanouts, base Key, replace bool) ([]Block, error)
}

// HeteroReference is the single-process typed sampler over G (see the top
// of this file for what it draws). Its blocks carry Etype when G has a
// schema; over a homogeneous graph (HomoRel) they equal Reference's,
// Etype nil. Exclusion works as in Reference, per relation row. It keeps
// scratch buffers between calls and is not safe for concurrent use.
type HeteroReference struct {
	G       RelGraph
	Exclude *EdgeSet
	// Temporal, when on, is the strategy of SampleRelAt, whose G must be a
	// TimedRelGraph.
	Temporal Temporal

	bb BlockBuilder
	rs refScratch
}

var (
	_ RelSampler = (*HeteroReference)(nil)
	_ Sampler    = (*HeteroReference)(nil)
)

// Sample implements Sampler: the same fanouts for every relation.
func (s *HeteroReference) Sample(seedsGlobal, seedsOrig []int64, fanouts []int, base Key, replace bool) ([]Block, error) {
	return s.SampleRel(seedsGlobal, seedsOrig, UniformRelFanouts(fanouts, NewRelPlan(s.G.Schema()).NumRels()), base, replace)
}

// SampleRel implements RelSampler.
func (s *HeteroReference) SampleRel(seedsGlobal, seedsOrig []int64, fanouts RelFanouts, base Key, replace bool) ([]Block, error) {
	if s.Temporal.On() {
		return nil, fmt.Errorf("sample: temporal sampling needs seed times (SampleRelAt)")
	}
	return s.sampleRel(seedsGlobal, seedsOrig, nil, fanouts, base, replace)
}

// SampleRelAt is SampleRel with temporal sampling (s.Temporal must be on):
// seed i is expanded at time seedsTime[i], and every node of its
// neighbourhood at the same time. Relation rows are read from a
// TimedRelGraph; only edges admitted at the row's time are candidates.
func (s *HeteroReference) SampleRelAt(seedsGlobal, seedsOrig, seedsTime []int64, fanouts RelFanouts, base Key, replace bool) ([]Block, error) {
	if !s.Temporal.On() {
		return nil, fmt.Errorf("sample: seed times given but temporal sampling is off")
	}
	if len(seedsTime) != len(seedsGlobal) {
		return nil, fmt.Errorf("sample: %d seed times for %d seeds", len(seedsTime), len(seedsGlobal))
	}
	if _, ok := s.G.(TimedRelGraph); !ok {
		return nil, fmt.Errorf("sample: temporal sampling on a graph without edge times")
	}
	if seedsTime == nil {
		seedsTime = []int64{} // no seeds, but still temporal blocks (nil means untimed below)
	}
	return s.sampleRel(seedsGlobal, seedsOrig, seedsTime, fanouts, base, replace)
}

func (s *HeteroReference) sampleRel(seedsGlobal, seedsOrig, seedsTime []int64, fanouts RelFanouts, base Key, replace bool) ([]Block, error) {
	if len(seedsGlobal) != len(seedsOrig) {
		return nil, fmt.Errorf("sample: %d seed ids but %d original ids", len(seedsGlobal), len(seedsOrig))
	}
	plan := NewRelPlan(s.G.Schema())
	R := plan.NumRels()
	if err := fanouts.Check(R); err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	if err := checkSeeds(seedsGlobal, seedsOrig, s.G.NumNodes()); err != nil {
		return nil, err
	}
	s.bb.SetTyped(plan.Typed())
	tg, timed := s.G.(TimedRelGraph)
	timed = timed && seedsTime != nil
	s.bb.SetTemporal(timed)
	L := len(fanouts)
	blocks := make([]Block, L)
	dstG, dstO, dstT := seedsGlobal, seedsOrig, seedsTime
	for l := L - 1; l >= 0; l-- {
		var err error
		if timed {
			err = s.bb.ResetAt(dstG, dstO, dstT)
		} else {
			err = s.bb.Reset(dstG, dstO)
		}
		if err != nil {
			return nil, fmt.Errorf("sample: layer %d: %w", l, err)
		}
		k := base
		k.Layer = l
		fan := fanouts[L-1-l]
		for i, v := range dstG {
			for _, r := range plan.Rels(dstO[i]) {
				if fan[r] == 0 {
					continue
				}
				nbG, nbO := s.G.InNeighborsRel(v, r)
				k.Node = dstO[i]*int64(R) + int64(r)
				var err error
				switch {
				case timed:
					s.rs.chooseRowAt(k, s.Temporal, dstT[i], nbG, nbO, tg.InTimesRel(v, r), fan[r], replace, s.Exclude, dstO[i])
					if plan.Typed() {
						err = s.bb.AddNeighborsRelTimed(i, int32(r), s.rs.srcG, s.rs.srcO, s.rs.srcT)
					} else {
						err = s.bb.AddNeighborsTimed(i, s.rs.srcG, s.rs.srcO, s.rs.srcT)
					}
				case plan.Typed():
					s.rs.chooseRow(k, nbG, nbO, fan[r], replace, s.Exclude, dstO[i])
					err = s.bb.AddNeighborsRel(i, int32(r), s.rs.srcG, s.rs.srcO)
				default:
					s.rs.chooseRow(k, nbG, nbO, fan[r], replace, s.Exclude, dstO[i])
					err = s.bb.AddNeighbors(i, s.rs.srcG, s.rs.srcO)
				}
				if err != nil {
					return nil, fmt.Errorf("sample: layer %d: %w", l, err)
				}
			}
		}
		s.bb.BlockInto(&blocks[l])
		dstG, dstO, dstT = blocks[l].Nodes, blocks[l].Orig, blocks[l].Time
	}
	return blocks, nil
}

// HeteroReferenceBlocks samples one batch directly on an unpartitioned
// heterogeneous dataset (global id == original id): the reference of the
// distributed typed sampler.
func HeteroReferenceBlocks(d *graph.HeteroDataset, seeds []int64, fanouts RelFanouts, base Key, replace bool) ([]Block, error) {
	if d.In == nil || d.Schema == nil {
		return nil, fmt.Errorf("sample: heterogeneous dataset %q has no in-adjacency or schema", d.Name)
	}
	if want := d.NumNodes() * int64(d.Schema.NumRels()); d.In.NumRows() != want {
		return nil, fmt.Errorf("sample: heterogeneous dataset %q has %d relation rows, want %d", d.Name, d.In.NumRows(), want)
	}
	s := HeteroReference{G: HeteroCSR{D: d}}
	return s.SampleRel(seeds, seeds, fanouts, base, replace)
}
