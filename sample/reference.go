package sample

import (
	"fmt"

	"mpignn/graph"
)

// Graph is the read side of an in-adjacency that the layer-wise sampler
// needs: the in-neighbors of a node, as global ids and as original ids, in
// CANONICAL order (ascending original id, no repeats).
type Graph interface {
	// NumNodes returns the exclusive upper bound of global node ids.
	NumNodes() int64
	// InNeighbors returns the in-neighbors of global node v: their global
	// ids and their original ids (aligned). The slices may alias the graph
	// and must not be modified.
	InNeighbors(v int64) (global, orig []int64)
}

// CSRGraph adapts an unpartitioned in-adjacency (for example
// graph.Dataset.In), in which global id == original id, to Graph. The
// sampler is only canonical if every neighbor list is sorted ascending
// without repeats; CheckCanonical verifies that.
type CSRGraph struct{ In *graph.CSR }

// NumNodes implements Graph.
func (g CSRGraph) NumNodes() int64 { return g.In.NumRows() }

// InNeighbors implements Graph; both results are the same slice.
func (g CSRGraph) InNeighbors(v int64) (global, orig []int64) {
	nb := g.In.Indices[g.In.Indptr[v]:g.In.Indptr[v+1]]
	return nb, nb
}

// CheckCanonical reports the first row of c whose neighbor list is not
// strictly ascending (and so not in the canonical order the sampler's
// positions refer to).
func CheckCanonical(c *graph.CSR) error {
	for v := range c.NumRows() {
		nb := c.Neighbors(v)
		for i := 1; i < len(nb); i++ {
			if nb[i] <= nb[i-1] {
				return fmt.Errorf("in-neighbors of node %d not strictly ascending at position %d (%d after %d)", v, i, nb[i], nb[i-1])
			}
		}
	}
	return nil
}

// Sampler draws the blocks of one batch: the computation graph of an
// L-layer model over the seed nodes seedsGlobal (global ids, distinct) with
// original ids seedsOrig. base supplies Seed, Epoch and Batch; the Layer
// and Node of each random choice are set per choice.
//
// Fanout order follows DGL and PyG: fanouts[0] is the hop from the seeds,
// which is the LAST block. The returned blocks are in forward order
// (blocks[0] is the input layer, blocks[L-1] has the seeds as destinations)
// and the RNG key's Layer is the forward index, so block l uses
// fanouts[L-1-l] and keys with Layer = l. A fanout of -1 takes all
// neighbors.
//
// Every implementation returns, for the same seeds (in the same order),
// key, fanouts and replace flag, the same blocks as Reference on the
// unpartitioned graph, node for node in original ids; package
// sample/sampletest checks that. Reference is the single-process one;
// sample/dsample has the distributed one, whose Sample is collective.
type Sampler interface {
	Sample(seedsGlobal, seedsOrig []int64, fanouts []int, base Key, replace bool) ([]Block, error)
}

// Reference is the single-process layer-wise Sampler over the graph G. It
// keeps its scratch buffers between calls, so sampling allocates only the
// returned blocks. A Reference is not safe for concurrent use; use one per
// goroutine.
type Reference struct {
	G Graph
	// Exclude, if not nil, drops every chosen edge whose endpoints (original
	// ids) form a pair of the set, after the choice (see EdgeSet): link
	// prediction keeps a step's seed edges out of its message passing.
	Exclude *EdgeSet

	bb BlockBuilder
	rs refScratch
}

var _ Sampler = (*Reference)(nil)

// refScratch holds the buffers of one row's choice in the reference
// samplers (node rows and relation rows alike).
type refScratch struct {
	pos  []int64
	srcG []int64
	srcO []int64
	srcT []int64 // edge times (chooseRowAt)
}

// chooseRow sets srcG/srcO to the chosen in-neighbors (nbG/nbO, new and
// original ids) of the row of destination dst (original id) keyed k, then
// drops the pairs (u, dst) of x (nil: none), after the choice.
func (s *refScratch) chooseRow(k Key, nbG, nbO []int64, fan int, replace bool, x *EdgeSet, dst int64) {
	s.pos = ChoosePositions(k, int64(len(nbG)), fan, replace, s.pos[:0])
	s.srcG, s.srcO = s.srcG[:0], s.srcO[:0]
	for _, p := range s.pos {
		s.srcG = append(s.srcG, nbG[p])
		s.srcO = append(s.srcO, nbO[p])
	}
	if x != nil {
		w := x.compactRow(dst, s.srcG, s.srcO, nil, 0, int64(len(s.srcG)), 0)
		s.srcG, s.srcO = s.srcG[:w], s.srcO[:w]
	}
}

// chooseRowAt is chooseRow at seed time t under tp: the candidates are the
// row's eligible prefix (nbT are the row's edge times, ascending), and
// srcT gets the chosen edges' times. Exclusion drops a pair's edges at
// every time.
func (s *refScratch) chooseRowAt(k Key, tp Temporal, t int64, nbG, nbO, nbT []int64, fan int, replace bool, x *EdgeSet, dst int64) {
	s.pos = tp.Choose(k, t, tp.Eligible(nbT, t), fan, replace, s.pos[:0])
	s.srcG, s.srcO, s.srcT = s.srcG[:0], s.srcO[:0], s.srcT[:0]
	for _, p := range s.pos {
		s.srcG = append(s.srcG, nbG[p])
		s.srcO = append(s.srcO, nbO[p])
		s.srcT = append(s.srcT, nbT[p])
	}
	if x != nil {
		w := x.compactRow(dst, s.srcG, s.srcO, s.srcT, 0, int64(len(s.srcG)), 0)
		s.srcG, s.srcO, s.srcT = s.srcG[:w], s.srcO[:w], s.srcT[:w]
	}
}

// checkSeeds validates a batch's seeds on a graph of n nodes.
func checkSeeds(seedsGlobal, seedsOrig []int64, n int64) error {
	if len(seedsGlobal) != len(seedsOrig) {
		return fmt.Errorf("sample: %d seed ids but %d original ids", len(seedsGlobal), len(seedsOrig))
	}
	for i, v := range seedsGlobal {
		if v < 0 || v >= n {
			return fmt.Errorf("sample: seed %d is node %d, outside [0,%d)", i, v, n)
		}
	}
	return nil
}

// Sample implements Sampler.
func (s *Reference) Sample(seedsGlobal, seedsOrig []int64, fanouts []int, base Key, replace bool) ([]Block, error) {
	g := s.G
	if err := checkSeeds(seedsGlobal, seedsOrig, g.NumNodes()); err != nil {
		return nil, err
	}
	L := len(fanouts)
	blocks := make([]Block, L)
	dstG, dstO := seedsGlobal, seedsOrig
	for l := L - 1; l >= 0; l-- {
		if err := s.bb.Reset(dstG, dstO); err != nil {
			return nil, fmt.Errorf("sample: layer %d: %w", l, err)
		}
		k := base
		k.Layer = l
		fan := fanouts[L-1-l]
		for i, v := range dstG {
			nbG, nbO := g.InNeighbors(v)
			k.Node = dstO[i]
			s.rs.chooseRow(k, nbG, nbO, fan, replace, s.Exclude, dstO[i])
			if err := s.bb.AddNeighbors(i, s.rs.srcG, s.rs.srcO); err != nil {
				return nil, fmt.Errorf("sample: layer %d: %w", l, err)
			}
		}
		s.bb.BlockInto(&blocks[l])
		// The next (inner) layer's destinations are all nodes of this one.
		dstG, dstO = blocks[l].Nodes, blocks[l].Orig
	}
	return blocks, nil
}

// SampleBlocks is Reference.Sample with a fresh Reference on g.
func SampleBlocks(g Graph, seedsGlobal, seedsOrig []int64, fanouts []int, base Key, replace bool) ([]Block, error) {
	s := Reference{G: g}
	return s.Sample(seedsGlobal, seedsOrig, fanouts, base, replace)
}

// ReferenceBlocks samples one batch directly on an unpartitioned dataset
// (global id == original id). It is the reference that the distributed
// sampler must reproduce node for node (up to relabelled global ids). The
// dataset's in-lists must be canonical (see CheckCanonical); that is not
// re-checked here because it costs a pass over all edges.
func ReferenceBlocks(d *graph.Dataset, seeds []int64, fanouts []int, base Key, replace bool) ([]Block, error) {
	if d.In == nil {
		return nil, fmt.Errorf("sample: dataset %q has no in-adjacency", d.Name)
	}
	return SampleBlocks(CSRGraph{In: d.In}, seeds, seeds, fanouts, base, replace)
}
