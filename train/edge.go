package train

import (
	"fmt"
	"math"
	"sync/atomic"

	"mpignn/internal/par"
	"mpignn/sample"
)

// The edge task's head (Config.EdgeOut > 0) is the link head with the MLP
// decoder's last layer EdgeOut wide: a pair's EdgeOut outputs are scored
// against the pair's row of Batch.Targets (one row per pair, TargetDim
// wide, NaN unlabelled), by softmax cross-entropy over EdgeOut classes
// (Targets "", one class per pair, as a float) or by squared error over
// EdgeOut real values (Targets TargetsRegression), whose pair loss is the
// sum over its labelled values divided by EdgeOut, targetHead's
// convention. An unlabelled pair adds nothing to the loss or gradient.

// checkEdgePairs validates an edge batch: two in-range seed indices per
// pair and one target row of the head's width per pair.
func checkEdgePairs(cfg Config, b *sample.Batch, seeds int) error {
	if len(b.Pairs)%2 != 0 || len(b.PairLabels) != 0 {
		return fmt.Errorf("model: an edge predictor takes pairs with target rows, got %d pair indices and %d link labels", len(b.Pairs), len(b.PairLabels))
	}
	for i, j := range b.Pairs {
		if j < 0 || int(j) >= seeds {
			return fmt.Errorf("model: pair %d endpoint %d is seed %d, outside [0,%d)", i/2, i%2, j, seeds)
		}
	}
	p, dim := len(b.Pairs)/2, cfg.EdgeOut
	if cfg.Targets == "" {
		dim = 1
	}
	if b.TargetDim != dim || len(b.Targets) != p*dim {
		return fmt.Errorf("model: %d target values of width %d for %d pairs, want width %d", len(b.Targets), b.TargetDim, p, dim)
	}
	if cfg.Targets == "" {
		for i, y := range b.Targets {
			if y == y && (y < 0 || int(y) >= cfg.EdgeOut || y != float32(int(y))) {
				return fmt.Errorf("model: pair %d class %v outside [0,%d)", i, y, cfg.EdgeOut)
			}
		}
	}
	return nil
}

// edgeLoss scores the logits h.z of the batch's pairs against their
// target rows, writes scale·d(summed loss)/d(z) into h.dz and returns the
// summed loss (pair losses summed in pair order, so the sum is the serial
// loop's bit for bit) and, for classes, the labelled pairs whose first
// largest output is their class.
func (h *linkHead[T]) edgeLoss(b *sample.Batch, scale T) (float64, int) {
	o, p := h.cfg.EdgeOut, len(b.Pairs)/2
	h.rowLoss = growF64(h.rowLoss, p)
	regression := h.cfg.Targets == TargetsRegression
	inv := 1 / float64(o)
	var correct atomic.Int64
	par.Range(p, 8*p*o, func(lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			z, g := h.z[i*o:(i+1)*o], h.dz[i*o:(i+1)*o]
			if regression {
				loss := 0.0
				for t, y := range b.Targets[i*o : (i+1)*o] {
					if y != y {
						g[t] = 0
						continue
					}
					d := float64(z[t]) - float64(y)
					loss += d * d
					g[t] = T(float64(scale) * 2 * d * inv)
				}
				h.rowLoss[i] = loss * inv
				continue
			}
			y := b.Targets[i]
			if y != y {
				clear(g)
				h.rowLoss[i] = 0
				continue
			}
			c := int(y)
			arg := argmax(z)
			if arg == c {
				n++
			}
			zmax, sum := float64(z[arg]), 0.0
			for k, v := range z {
				e := math.Exp(float64(v) - zmax)
				g[k] = T(e)
				sum += e
			}
			h.rowLoss[i] = math.Log(sum) + zmax - float64(z[c])
			s := float64(scale) / sum
			for k := range g {
				g[k] = T(float64(g[k]) * s)
			}
			g[c] -= scale
		}
		correct.Add(int64(n))
	})
	loss := 0.0
	for _, l := range h.rowLoss[:p] {
		loss += l
	}
	return loss, int(correct.Load())
}
