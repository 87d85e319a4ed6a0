package train

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"mpignn/internal/osx"
)

// MemoryEstimate is the approximate memory one rank needs for a model, in
// bytes. The figures are float64 so that absurd configurations (a hidden
// width of 10^9) give an honest huge number instead of an overflowed int.
type MemoryEstimate struct {
	Params      float64 // the live weights
	Grads       float64 // the gradient (reduction) buffer; 0 for inference
	Adam        float64 // Adam's first and second moments; 0 for inference
	Best        float64 // the best-validation copy of the weights; 0 for inference
	Activations float64 // the largest step's inputs, activations and their gradients
	// Store lists what the rank's sampling store allocates besides the
	// model (its share of the graph and features, tables replicated on
	// every rank, indexes), each part named; the caller fills it.
	Store []MemoryPart
}

// MemoryPart is one named allocation of an estimate, in bytes.
type MemoryPart struct {
	Name  string
	Bytes float64
}

// Total is the sum of all parts.
func (e MemoryEstimate) Total() float64 {
	t := e.Params + e.Grads + e.Adam + e.Best + e.Activations
	for _, p := range e.Store {
		t += p.Bytes
	}
	return t
}

// parts lists every part of the estimate, named, model parts first.
func (e MemoryEstimate) parts() []MemoryPart {
	return append([]MemoryPart{{"parameters", e.Params}, {"gradients", e.Grads}, {"Adam", e.Adam}, {"best copy", e.Best}, {"activations", e.Activations}}, e.Store...)
}

// Largest returns the biggest part (the first of equals): what to shrink
// first when a job does not fit.
func (e MemoryEstimate) Largest() MemoryPart {
	var big MemoryPart
	for _, p := range e.parts() {
		if p.Bytes > big.Bytes {
			big = p
		}
	}
	return big
}

// String lists the total and its non-zero parts, e.g.
// "~7.4 TiB (parameters 1.8 TiB, gradients 1.8 TiB, Adam 3.7 TiB, ...)".
func (e MemoryEstimate) String() string {
	var parts []string
	for _, p := range e.parts() {
		if p.Bytes > 0 {
			parts = append(parts, p.Name+" "+osx.FormatBytes(p.Bytes))
		}
	}
	return fmt.Sprintf("~%s (%s)", osx.FormatBytes(e.Total()), strings.Join(parts, ", "))
}

// numParams is NumParams in float64: it cannot overflow.
func (c Config) numParams() float64 {
	if c.Hetero != nil {
		// Per-relation weights: count the real layout (its sizes are
		// bounded by the relation and type counts a schema can have).
		return float64(c.NumParams())
	}
	n := 0.0
	for l := 0; l < c.Layers; l++ {
		in, out := c.LayerDims(l)
		n += 2*float64(in)*float64(out) + float64(out)
	}
	for _, s := range decoderSpecs(c) {
		n += float64(s.Rows) * float64(s.Cols)
	}
	for _, s := range betweenSpecs(c) { // norms, residual projections, jk map
		n += float64(s.Rows) * float64(s.Cols)
	}
	return n
}

// linkStepBytes estimates the per-step buffers of the link head for pairs
// scored pairs: the pair indices and labels, the gathered endpoint rows
// and their gradients, logits and their gradients, and for the MLP decoder
// its product, hidden and gradient rows.
func (c Config) linkStepBytes(pairs int, training bool) float64 {
	const f32, i32 = 4, 4
	p, w, o := float64(max(pairs, 0)), float64(c.Classes), float64(c.PairOut())
	b := p*(2*i32+f32) + 2*p*w*f32 + p*o*f32 // pairs, labels, u and v, logits (PairOut per pair)
	if c.Decoder == DecoderMLP {
		b += 2 * p * w * f32 // x, hidden
	}
	if training {
		b += 2*p*w*f32 + p*o*f32 // du and dv, logit gradients
		if c.Decoder == DecoderMLP {
			b += 2 * p * w * f32 // hidden and x gradients
		}
	}
	return b
}

// blockRows returns the node count at each depth of a sampled batch:
// rows[0] = seeds, rows[d] = nodes within d hops. Every hop keeps its
// destinations and adds at most fanout new nodes per destination; -1 (all
// neighbors) and everything else is bounded by the graph's node count.
func blockRows(fanouts []int, batch int, numNodes int64) []float64 {
	n := float64(max(numNodes, 1))
	rows := make([]float64, len(fanouts)+1)
	rows[0] = math.Min(float64(max(batch, 1)), n)
	for d, f := range fanouts {
		r := n
		if f >= 0 {
			r = math.Min(rows[d]*float64(f+1), n)
		}
		rows[d+1] = r
	}
	return rows
}

// stepBytes estimates the per-step buffers of the model for one sampled
// batch: input features, the sampled blocks, and per layer the aggregate
// and output rows (forward), plus, when training, the input dropout copy,
// the input gradients of the layers and the logits' gradient (backward).
func (c Config) stepBytes(fanouts []int, batch int, numNodes int64, training bool) float64 {
	const f32, i32, i64 = 4, 4, 8
	if len(fanouts) != c.Layers {
		return 0
	}
	rows := blockRows(fanouts, batch, numNodes)
	L := c.Layers
	x := rows[L] * float64(c.InDim)
	if c.Hetero != nil && len(c.Hetero.InDims) > 0 {
		// Typed inputs (at most the widest type per row) and their
		// Hidden-wide projections.
		x = rows[L] * float64(slices.Max(c.Hetero.InDims)+c.Hidden)
	}
	b := x * f32
	if training && c.InputDropout > 0 {
		b += x * f32
	}
	maxDagg := 0.0
	for l := 0; l < L; l++ {
		in, out := c.LayerDims(l)
		nd, ns := rows[L-1-l], rows[L-l]
		// The block itself: original ids of its sources, indptr and one
		// index per edge (fanout per destination; with -1 the degrees are
		// unknown here, so one per source node).
		edges := ns
		if f := fanouts[L-1-l]; f >= 0 {
			edges = nd * float64(f)
		}
		b += ns*i64 + (nd+1)*i32 + edges*i32
		b += nd*float64(in)*f32 + nd*float64(out)*f32 // agg, out
		if training {
			if l > 0 {
				b += ns * float64(in) * f32 // dh
			}
			maxDagg = math.Max(maxDagg, nd*float64(in)*f32)
		}
	}
	if training {
		b += maxDagg + rows[0]*float64(c.Classes)*f32 // dagg (one buffer), dz
	}
	return b
}

// EstimateTraining returns the memory one rank needs to train the model with
// per-rank batch size batch, training fanouts and evaluation fanouts (nil =
// fanouts) on a graph of numNodes nodes: weights, gradients, Adam state, the
// best-validation copy and the largest step's activations. It is a pure
// function of its arguments and never overflows.
func (c Config) EstimateTraining(fanouts, evalFanouts []int, batch int, numNodes int64) MemoryEstimate {
	if evalFanouts == nil {
		evalFanouts = fanouts
	}
	p := c.numParams() * 4
	return MemoryEstimate{
		Params: p, Grads: p, Adam: 2 * p, Best: p,
		Activations: math.Max(c.stepBytes(fanouts, batch, numNodes, true), c.stepBytes(evalFanouts, batch, numNodes, false)),
	}
}

// EstimateLinkTraining is EstimateTraining for a link predictor trained on
// pairs scored pairs per rank and step (positives and negatives): the
// seeds of a step are the pairs' endpoints, at most 2·pairs distinct nodes,
// and the pair buffers of the decoder come on top of the GNN's.
func (c Config) EstimateLinkTraining(fanouts, evalFanouts []int, pairs int, numNodes int64) MemoryEstimate {
	seeds := int(min(2*int64(max(pairs, 1)), max(numNodes, 1)))
	e := c.EstimateTraining(fanouts, evalFanouts, seeds, numNodes)
	e.Activations += c.linkStepBytes(pairs, true)
	return e
}

// EstimateInference is EstimateTraining for a forward-only pass (predict):
// weights and the largest step's activations.
func (c Config) EstimateInference(fanouts []int, batch int, numNodes int64) MemoryEstimate {
	return MemoryEstimate{Params: c.numParams() * 4, Activations: c.stepBytes(fanouts, batch, numNodes, false)}
}

// CheckMemory refuses an estimate that does not fit: available is the
// node's available memory in bytes (0 = unknown: only the address-space
// bound applies) shared by ranksHere ranks, and hint says which flags to
// lower. The error gives the estimate and what is available, and names
// its largest part when the estimate has store parts (the model's parts
// are named by the hint).
func CheckMemory(e MemoryEstimate, available int64, ranksHere int, hint string) error {
	need := e.Total()
	ranksHere = max(ranksHere, 1)
	switch {
	case need >= osx.MaxAddressable:
		return fmt.Errorf("model needs %s per rank, more than any machine can address; %s", e, hint)
	case available <= 0:
		return nil
	case need*float64(ranksHere) > float64(available):
		per := ""
		if ranksHere > 1 {
			per = fmt.Sprintf(" for %d ranks (%s each)", ranksHere, osx.FormatBytes(float64(available)/float64(ranksHere)))
		}
		big := ""
		if l := e.Largest(); len(e.Store) > 0 && l.Bytes > 0 {
			big = fmt.Sprintf("; the largest part is %s (%s)", l.Name, osx.FormatBytes(l.Bytes))
		}
		return fmt.Errorf("model needs %s per rank but this node has %s available%s%s; %s",
			e, osx.FormatBytes(float64(available)), per, big, hint)
	}
	return nil
}
