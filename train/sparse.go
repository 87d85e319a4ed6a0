package train

import (
	"fmt"

	"mpignn/internal/par"
	"mpignn/sample"
)

// Sparse layer-0 inputs. When a batch carries its features as sparse rows
// (sample.Batch.XS), layer 0 receives them through Pass.Sparse and its h
// argument holds the VALUES of those entries (one per stored entry, after
// input dropout) instead of dense rows. Layer 0 is linear in its input
// before the nonlinearity, so every architecture projects first
// (P = X·W, work per stored entry times the output width) and then
// aggregates in output space; that equals the dense math up to float
// summation order. Its weight gradient is Xᵀ·dP, again per stored entry.

// checkSparse validates sparse inputs against block 0 and the input width.
func (n *net[T]) checkSparse(blocks []sample.Block, xs *sample.SparseRows) error {
	if n.het != nil {
		return fmt.Errorf("model: a heterogeneous model takes dense per-type inputs, not sparse rows")
	}
	if xs.Rows() != blocks[0].NumSrc() || xs.Cols != n.cfg.InDim {
		return fmt.Errorf("model: got %d sparse input rows of width %d, want %d x %d", xs.Rows(), xs.Cols, blocks[0].NumSrc(), n.cfg.InDim)
	}
	if err := xs.Check(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// sparseValues returns the values layer 0 reads for the sparse inputs xs:
// converted to T and, when training with input dropout, dropped with the
// dense path's masks (keyed by original id and column), so the same
// entries survive.
func (n *net[T]) sparseValues(xs *sample.SparseRows, orig []int64, train bool, key MaskKey) []T {
	v := grow(n.xd, len(xs.Values))
	n.xd = v
	p := n.cfg.InputDropout
	if !train || p == 0 {
		par.Range(len(v), len(v)/2, func(lo, hi int) {
			for e := lo; e < hi; e++ {
				v[e] = T(xs.Values[e])
			}
		})
		return v
	}
	scale := T(1 / (1 - float64(p)))
	t := sample.MaskThreshold(p)
	par.Range(xs.Rows(), len(xs.Values), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			rk := sample.MaskKey(key.Seed, int(key.Step), InputLayer, orig[i])
			for e := xs.Indptr[i]; e < xs.Indptr[i+1]; e++ {
				keep := 0
				if sample.MaskKeep(rk, int(xs.Indices[e]), t) {
					keep = 1
				}
				v[e] = T(xs.Values[e]) * T(keep) * scale
			}
		}
	})
	return v
}

// forwardSparse runs the layers with layer 0 reading the sparse rows xs.
func (n *net[T]) forwardSparse(blocks []sample.Block, xs *sample.SparseRows, train bool, key MaskKey) {
	vals := n.sparseValues(xs, blocks[0].Orig, train, key)
	n.xsIn, n.xin, n.key = xs, vals, key
	n.forwardLayers(blocks, vals, train, key)
}
