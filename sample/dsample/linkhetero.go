package dsample

import (
	"fmt"
	"slices"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample"
)

// TypedEmbedder is the Embedder of a heterogeneous model: its inputs are
// per node type, xs[t] the rows of Blocks[0]'s nodes of type t in their
// order there (Batch.XT). Package train/dtrain adapts its model to it.
type TypedEmbedder interface {
	EmbedHetero(blocks []sample.Block, xs [][]float32) ([]float32, error)
}

// SetTypedInputs sets how the link loader reads the input rows of a
// heterogeneous partition (as Loader.SetTypedInputs): Batch and Embed
// fill typed inputs through it instead of the feature store.
func (l *LinkLoader) SetTypedInputs(f TypedInputs) { l.typed.typed = f }

// openHetero resolves the heterogeneous side of NewLinkLoader: relation
// fanouts, the negatives' destination type and the row NegStrict searches.
// It returns why the options do not fit ("" when they do); every rank
// computes the same answer from the same META and options.
func (l *LinkLoader) openHetero() string {
	s := l.s.graph.Schema()
	R := s.NumRels()
	o := &l.o
	if err := resolveRelFanouts(&o.RelFanouts, &o.EvalRelFanouts, o.Fanouts, o.EvalFanouts, R); err != nil {
		return err.Error()
	}
	r, rev, err := partition.LinkRelations(s, l.meta.Relation)
	if err != nil {
		return fmt.Sprintf("partition's link split: %v", err)
	}
	l.srcT, l.dstT = s.SrcType(r), s.DstType(r)
	l.negLo, l.negN = s.NodeOrig[l.dstT], s.Count(l.dstT)
	if l.negN == 0 {
		return fmt.Sprintf("link relation %s: destination type has no nodes", l.meta.Relation)
	}
	if o.NegStrict {
		switch {
		case rev >= 0:
			l.strictRow = int64(rev)
		case l.srcT == l.dstT:
			l.strictRow = int64(r)
		default:
			return fmt.Sprintf("strict negatives on %s need its reverse relation in the partition (read the dataset with reverse relations) to test adjacency on the source's owner", l.meta.Relation)
		}
	}
	l.schema = s
	return ""
}

// embedHetero embeds, for evaluation, every node of the link relation's
// source and destination types (the only rows scoring reads; the rows of
// other types stay zero). The nodes are visited in global batches over
// their canonical index (source type's nodes by original id, then the
// destination type's, one block when both are the same type), so each
// node is sampled with the same key on any number of ranks; sampling is
// typed with EvalRelFanouts and inputs come from SetTypedInputs' reader.
// It is collective.
func (l *LinkLoader) embedHetero(m Embedder, width, epoch int, g *GraphStore) (*Embeddings, error) {
	te, ok := m.(TypedEmbedder)
	if !ok {
		return nil, fmt.Errorf("embed: heterogeneous partition but the model has no typed embedding (EmbedHetero)")
	}
	if width <= 0 {
		return nil, fmt.Errorf("embed: width %d", width)
	}
	s, p, c := l.schema, l.part, l.s.c
	types := []int{l.srcT}
	if l.dstT != l.srcT {
		types = append(types, l.dstT)
	}
	var seedsAll, origAll, index []int64
	var total int64
	for _, t := range slices.Sorted(slices.Values(types)) {
		for v := p.TypeLo[t]; v < p.TypeLo[t+1]; v++ {
			o := p.Orig[v-p.Lo]
			seedsAll = append(seedsAll, v)
			origAll = append(origAll, o)
			index = append(index, total+o-s.NodeOrig[t])
		}
		total += s.Count(t)
	}
	emb, err := collectives.NewDistArray(c, p.NumOwned(), 4*width, l.s.t)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	done := false
	defer func() {
		if !done {
			emb.Free()
		}
	}()
	rows := collectives.View[float32](emb.Local())
	// Window memory is not zeroed (it may be reused), and the rows of the
	// other node types are never written below.
	clear(rows)
	steps, err := sample.RankSteps(l.o.Seed, epoch, total, l.evalGlobal, index)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	smp := l.s.sampler
	if g != nil {
		smp = NewSampler(g)
	}
	var localErr error
	var seeds, orig []int64
	var b sample.Batch
	for step, locals := range steps {
		seeds, orig = seeds[:0], orig[:0]
		if localErr == nil {
			for _, j := range locals {
				seeds = append(seeds, seedsAll[j])
				orig = append(orig, origAll[j])
			}
		}
		// Negative batch numbers, as Store.Embed: no embedding draw
		// repeats a training draw.
		base := sample.Key{Seed: l.o.Seed, Epoch: epoch, Batch: -1 - step}
		blocks, err := smp.Sample(Request{Seeds: seeds, SeedsOrig: orig, Rel: l.o.EvalRelFanouts, Key: base, Replace: l.o.Replace})
		if err != nil {
			return nil, fmt.Errorf("embed step %d/%d: %w", step+1, len(steps), err)
		}
		var gs GatherStats
		if err := l.typed.gatherTyped(s, &blocks[0], &b, &gs); err != nil && localErr == nil {
			localErr = fmt.Errorf("embed step %d/%d: %w", step+1, len(steps), err)
		}
		if localErr != nil || len(seeds) == 0 {
			continue
		}
		h, err := te.EmbedHetero(blocks, b.XT)
		if err == nil && len(h) != len(seeds)*width {
			err = fmt.Errorf("model returned %d values for %d nodes of width %d", len(h), len(seeds), width)
		}
		if err != nil {
			localErr = fmt.Errorf("embed step %d/%d: %w", step+1, len(steps), err)
			continue
		}
		for i, v := range seeds {
			r := v - p.Lo
			copy(rows[r*int64(width):(r+1)*int64(width)], h[i*width:(i+1)*width])
		}
	}
	if err := collectives.AgreeStore(c, "embed", localErr); err != nil {
		return nil, err
	}
	if err := emb.Seal(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	done = true
	return &Embeddings{a: emb, width: width, lo: p.Lo}, nil
}
