package dsample

import (
	"fmt"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
)

// Link prediction batches.
//
// The seeds of a link step are EDGES: the training positives of the
// partition's link split, batched globally exactly like node seeds (see
// sample.RankSteps) over their canonical edge ids, so a P-rank run with
// batch B takes the same global batches as a 1-rank run with batch P·B (and
// with GlobalBatch, the same batches on any number of ranks).
// Each rank takes the positives whose source it owns (that is where the
// partitioner stored them).
//
// Negatives corrupt the destination: negative j of positive edge c in
// epoch e is the node with original id Hash(seed, e, c, j) mod N, a pure
// function of the key, so it is the same on any number of ranks. With
// NegStrict a candidate that is the source itself or already one of its
// neighbours in the training graph is replaced by the next candidate of
// the same key (up to maxNegTries); the check reads only the source's own
// adjacency row, which its owner holds.
//
// Message passing must not see the edges the step is scoring, or the model
// learns to find the edge it is asked about (DGL's exclude='reverse_id').
// Every rank therefore gathers the step's positive pairs from all ranks
// (one Allgatherv) and the sampler drops each sampled edge whose endpoints
// form one of those pairs, in either direction. The set is global, so a
// node's sampled neighbourhood is the same whichever rank samples it.
//
// Heterogeneous partitions (Store.Graph().Schema() != nil; the link split
// is on one relation r, LinkMeta.Relation, from source type S to
// destination type D):
//   - negatives keep the source and draw the destination uniformly over
//     D: original id NodeOrig[D] + Hash(seed, e, c, j) mod Count(D) (the
//     same key as above, with Count(D) for N), mapped to new ids through
//     the IDMap, which works on homogenized original ids;
//   - NegStrict tests "is there a training edge src -r-> cand" on the
//     source's own rows, which its owner holds: the source's row of the
//     reverse relation (rev_<rel>) lists exactly the destinations of its
//     r-edges; for a same-type relation without a reverse relation, the
//     source's row of r itself (its in-neighbours; with the symmetrised
//     relations the reader makes, its neighbours). A relation between
//     different types without a reverse relation has no such local row:
//     NewLinkLoader refuses NegStrict then;
//   - sampling is typed (Request.Rel) with RelFanouts / EvalRelFanouts;
//   - the exclusion set holds the step's positive pairs of original ids,
//     and the typed sampler drops a sampled edge whose endpoints form such
//     a pair in ANY relation and either direction (the pair (u,v) of
//     user___rates___movie also leaves rev_rates; were u and v linked by
//     another relation too, that edge would be dropped as well, which only
//     removes information, never leaks it);
//   - Batch and Embed fill typed inputs (Batch.XT, XTNodes) through the
//     reader set with SetTypedInputs, as Loader does.

// Tags of the keyed draws of the link loader (kept apart from the
// sampler's and the model's).
const (
	tagNegative = 0x6e6567617469 // "negati"
)

// maxNegTries bounds the candidates drawn for one strict negative. A node
// adjacent to almost every other node could otherwise loop for long; after
// the last try its candidate is kept (documented on NegStrict).
const maxNegTries = 16

// LinkLoaderOptions configure NewLinkLoader.
type LinkLoaderOptions struct {
	// Fanouts and EvalFanouts as in LoaderOptions.
	Fanouts     []int
	EvalFanouts []int
	// Batch is the number of positive seed edges per rank per step; the
	// global batch is P·Batch edges.
	Batch int
	// GlobalBatch, when positive, is the number of positive edges of a
	// step over ALL ranks, whatever their count (as
	// LoaderOptions.GlobalBatch); Batch must then be 0.
	GlobalBatch int
	// EvalBatch is the number of nodes per rank per step when embedding
	// every node for evaluation (0 = 4 times the global batch over all
	// ranks, whatever their count).
	EvalBatch int
	Replace   bool
	Seed      uint64
	// NegRatio is the number of negatives per positive (>= 1; 0 with
	// EdgeTargets).
	NegRatio int
	// EdgeTargets makes edge-task batches: the positives only (NegRatio
	// 0), each pair with its row of edge labels (LinkEdges.Targets) in
	// Batch.Targets, Batch.TargetDim the partition's EdgeTargetDim. The
	// partition must hold edge labels.
	EdgeTargets bool
	// NegStrict rejects a negative destination that equals the source or
	// is adjacent to it in the training graph (candidates are redrawn up to
	// 16 times; the 16th is kept whatever it is).
	NegStrict bool
	// KeepSeedEdges leaves the step's positive edges in message passing.
	// That leaks the target into the input; it exists to measure the leak.
	KeepSeedEdges bool
	// RelFanouts and EvalRelFanouts are the per-relation fanouts of a
	// heterogeneous partition, as in LoaderOptions (nil: Fanouts and
	// EvalFanouts for every relation); ignored for a homogeneous one.
	RelFanouts, EvalRelFanouts sample.RelFanouts
	// Temporal turns temporal sampling on (the partition must have edge
	// times): the endpoints of a positive and of its negatives are expanded
	// at the positive's time, in training and in evaluation (see
	// EvalBatchAt).
	Temporal sample.Temporal
}

// LinkLoader produces link-prediction training batches (it is a
// train.BatchSource for the train split) and embeds every node for
// evaluation. It is collective in the same way as Loader.
type LinkLoader struct {
	s    *Store
	o    LinkLoaderOptions
	part *partition.Part
	meta *partition.LinkMeta
	n    int64

	// o2n maps original ids to new ids.
	o2n *IDMap

	// Heterogeneous partitions: the schema (nil: homogeneous), and the
	// range [negLo, negLo+negN) of original ids negatives are drawn from
	// (all of [0,n) for a homogeneous partition). strictRow is the
	// relation whose row of the source NegStrict searches (0 when
	// homogeneous).
	schema     *graph.Schema
	negLo      int64
	negN       int64
	strictRow  int64
	srcT, dstT int
	// typed gathers typed inputs: a Loader without splits whose
	// gatherTyped and scratch serve this loader (SetTypedInputs), so
	// both loaders fill XT/XTNodes by the same code.
	typed *Loader

	epoch int
	steps [][]int
	// evalGlobal is the number of nodes per evaluation embedding step
	// over all ranks.
	evalGlobal int

	// scratch, reused between steps
	negOrig []int64
	negNew  []int64
	index   map[int64]int32
	pairBuf []int64
	// Temporal batches: seeds are (node, time) pairs, indexed by indexT;
	// seedT holds the seeds' times.
	indexT map[[2]int64]int32
	seedT  []int64
}

// NewLinkLoader prepares link batches over the store's partition, which
// must hold a link split (partition --link-split). It is collective.
func NewLinkLoader(s *Store, o LinkLoaderOptions) (*LinkLoader, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("link loader: %w", err)
	}
	p := s.part
	var why string
	if p.Meta.Link == nil || p.Link == nil {
		why = "the partition has no link split (partition it with --link-split)"
	}
	if o.EvalFanouts == nil {
		o.EvalFanouts = o.Fanouts
	}
	P := s.c.Size()
	evalGlobal := P * o.EvalBatch
	if o.EvalBatch <= 0 {
		// 4·P·Batch as before for a per-rank batch; for a global batch
		// the same count on any number of ranks, so that evaluation
		// samples every node with the same key whatever P is.
		evalGlobal = 4 * globalSize(o.Batch, o.GlobalBatch, P)
		o.EvalBatch = rankShare(0, evalGlobal, P)
	}
	l := &LinkLoader{s: s, o: o, part: p, meta: p.Meta.Link, n: p.Meta.NumNodes, epoch: -1, index: map[int64]int32{},
		negN: p.Meta.NumNodes, typed: &Loader{s: s}, evalGlobal: evalGlobal}
	if why == "" && s.graph.Schema() != nil {
		why = l.openHetero()
	}
	if why == "" {
		if err := s.sampler.SetTemporal(o.Temporal); err != nil {
			why = err.Error()
		}
	}
	if why == "" && o.EdgeTargets && p.Meta.Link.EdgeTargetDim == 0 {
		why = "the partition's link split has no edge labels (partition a dataset with raw/edge-label.csv.gz and --link-split)"
	}
	if why == "" && p.Meta.Link.Graph == partition.LinkGraphAll && !o.Temporal.On() {
		why = "the partition keeps the held-out edges in message passing (--link-graph all), which only temporal sampling may use (it would leak the valid and test edges): train with --temporal"
	}
	l.indexT = map[[2]int64]int32{}
	if err := collectives.AgreeOpen(s.c, "link loader", why); err != nil {
		return nil, err
	}
	var err error
	if l.o2n, err = OpenIDMap(s); err != nil {
		return nil, fmt.Errorf("link loader: %w", err)
	}
	return l, nil
}

// Close frees the id map. It is collective.
func (l *LinkLoader) Close() error {
	if l == nil {
		return nil
	}
	return l.o2n.Close()
}

// GlobalBatch returns the positive edges per step over all ranks: the
// options' GlobalBatch, or P·B.
func (l *LinkLoader) GlobalBatch() int { return globalSize(l.o.Batch, l.o.GlobalBatch, l.s.c.Size()) }

// Meta returns the partition's link split description.
func (l *LinkLoader) Meta() *partition.LinkMeta { return l.meta }

// Options returns the options as resolved (EvalFanouts, EvalBatch filled:
// for a global batch, the evaluation global batch's share per rank,
// rounded up).
func (l *LinkLoader) Options() LinkLoaderOptions { return l.o }

// Store returns the store the loader samples from.
func (l *LinkLoader) Store() *Store { return l.s }

// Steps returns the number of training steps of an epoch,
// ceil(positives / G) for the global batch G. Evaluation does not go through batches (see
// Embed), so only the train split has steps.
func (l *LinkLoader) Steps(split string, epoch int) (int, error) {
	if split != SplitTrain {
		return 0, fmt.Errorf("link loader: split %q is evaluated by ranking, not in batches", split)
	}
	return sample.NumSteps(l.meta.Train, l.GlobalBatch()), nil
}

// stepEdges returns the positions (into part.Link.Train) of this rank's
// positives of one training step.
func (l *LinkLoader) stepEdges(epoch, step int) ([]int, error) {
	if l.epoch != epoch || l.steps == nil {
		steps, err := sample.RankSteps(l.o.Seed, epoch, l.meta.Train, l.GlobalBatch(), l.part.Link.Train.ID)
		if err != nil {
			return nil, fmt.Errorf("link loader: %w", err)
		}
		l.epoch, l.steps = epoch, steps
	}
	if step < 0 || step >= len(l.steps) {
		return nil, fmt.Errorf("link loader: step %d outside [0,%d)", step, len(l.steps))
	}
	return l.steps[step], nil
}

// NegativeOrig returns the original id of candidate `try` for negative j of
// the training positive with canonical id edge in epoch: a keyed uniform
// draw over [0,n). It is the rule every rank applies.
func NegativeOrig(seed uint64, epoch int, edge int64, j, try int, n int64) int64 {
	h := sample.Hash64(tagNegative, seed, uint64(epoch), uint64(edge), uint64(j), uint64(try))
	s := sample.NewStream(h)
	return int64(s.Uint64n(uint64(n)))
}

// Batch fills out with this rank's share of training step `step` of
// `epoch`: the positives it owns, NegRatio negatives each, the sampled
// blocks over all their endpoints (with the step's positives excluded from
// message passing) and the input features. It is COLLECTIVE: every rank
// calls it for every step, also without positives in the step.
func (l *LinkLoader) Batch(split string, epoch, step int, out *sample.Batch) error {
	if split != SplitTrain {
		return fmt.Errorf("link loader: split %q is evaluated by ranking, not in batches", split)
	}
	defer l.s.c.Phase("sample")()
	// A local failure (bad step) must not skip the collectives below.
	locals, localErr := l.stepEdges(epoch, step)
	tr := &l.part.Link.Train
	k := l.o.NegRatio
	// Negatives, in original ids, then mapped to new ids (one fetch).
	l.negOrig = l.negOrig[:0]
	for _, i := range locals {
		for j := range k {
			l.negOrig = append(l.negOrig, l.drawNegative(epoch, tr.ID[i], tr.Src[i], tr.SrcOrig[i], j))
		}
	}
	l.negNew = growInt64(l.negNew, len(l.negOrig))
	if err := l.o2n.a.Fetch(l.negOrig, collectives.Bytes(l.negNew)); err != nil {
		return fmt.Errorf("link loader: step %d: negative ids: %w", step, err)
	}
	// The step's positives over all ranks, excluded from sampling.
	var exclude *sample.EdgeSet
	if !l.o.KeepSeedEdges {
		l.pairBuf = l.pairBuf[:0]
		for _, i := range locals {
			l.pairBuf = append(l.pairBuf, tr.SrcOrig[i], tr.DstOrig[i])
		}
		all, _, err := collectives.Allgatherv(l.s.c, l.pairBuf)
		if err != nil {
			return fmt.Errorf("link loader: step %d: seed edges: %w", step, err)
		}
		src, dst := make([]int64, len(all)/2), make([]int64, len(all)/2)
		for e := range src {
			src[e], dst[e] = all[2*e], all[2*e+1]
		}
		exclude = sample.NewEdgeSet(src, dst)
	}
	// Seeds: the distinct endpoints, in order of first appearance over
	// (source, destination, negatives) of each positive; with temporal
	// sampling the distinct (endpoint, positive's time) pairs.
	l.resetSeeds(out)
	for e, i := range locals {
		t := tr.Time[i]
		u := l.addSeed(out, tr.Src[i], tr.SrcOrig[i], t)
		v := l.addSeed(out, tr.Dst[i], tr.DstOrig[i], t)
		out.Pairs = append(out.Pairs, u, v)
		if l.o.EdgeTargets {
			d := l.meta.EdgeTargetDim
			out.Targets = append(out.Targets, tr.Targets[i*d:(i+1)*d]...)
			continue
		}
		out.PairLabels = append(out.PairLabels, 1)
		for j := range k {
			w := l.addSeed(out, l.negNew[e*k+j], l.negOrig[e*k+j], t)
			out.Pairs = append(out.Pairs, u, w)
			out.PairLabels = append(out.PairLabels, 0)
		}
	}
	G := int64(l.GlobalBatch())
	out.GlobalSeeds = int(min(G, l.meta.Train-int64(step)*G) * int64(1+k))
	var st sample.SampleStats
	base := sample.Key{Seed: l.o.Seed, Epoch: epoch, Batch: step}
	l.s.sampler.SetExclude(exclude)
	blocks, err := l.s.sampler.Sample(Request{Seeds: out.Seeds, SeedsOrig: out.SeedsOrig, Times: l.times(), Fanouts: l.o.Fanouts, Rel: l.s.relPlan(l.o.RelFanouts), Key: base, Replace: l.o.Replace, Stats: &st})
	l.s.sampler.SetExclude(nil)
	if err != nil {
		return fmt.Errorf("link loader: epoch %d step %d: %w", epoch, step, err)
	}
	if err := l.gatherInputs(blocks, out, st); err != nil {
		return fmt.Errorf("link loader: epoch %d step %d: %w", epoch, step, err)
	}
	return localErr
}

// drawNegative returns the original id of negative j of the positive with
// canonical id edge whose source is the owned node src: uniform over
// [negLo, negLo+negN), all nodes of a homogeneous graph.
func (l *LinkLoader) drawNegative(epoch int, edge, src, srcOrig int64, j int) int64 {
	w := l.negLo + NegativeOrig(l.o.Seed, epoch, edge, j, 0, l.negN)
	if !l.o.NegStrict {
		return w
	}
	for try := 1; try < maxNegTries && (w == srcOrig || l.adjacent(src, w)); try++ {
		w = l.negLo + NegativeOrig(l.o.Seed, epoch, edge, j, try, l.negN)
	}
	return w
}

// adjacent reports whether the node with original id w is in row
// strictRow of the owned node v in the training graph (binary search of
// the canonical row, which is sorted by original id). Homogeneous: v's
// in-neighbours, which for the symmetric message-passing graphs the
// partitioner builds by default is exactly "v and w share an edge";
// heterogeneous: see the package comment on NegStrict.
func (l *LinkLoader) adjacent(v, w int64) bool {
	g := l.s.graph
	// The local rows start at memLo: the rank's own nodes, or on shared
	// parts its node's part, of which v is one.
	r := (v-g.memLo)*g.R + l.strictRow
	first, deg := g.localNodes[2*r]-g.edgeBase, g.localNodes[2*r+1]
	if g.Timed() {
		// A timed row is in (time, id) order: scan it.
		for e := first; e < first+deg; e++ {
			if g.localEdges[2*e+1] == w {
				return true
			}
		}
		return false
	}
	lo, hi := first, first+deg
	for lo < hi {
		m := int64(uint64(lo+hi) >> 1)
		if g.localEdges[2*m+1] < w {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < first+deg && g.localEdges[2*lo+1] == w
}

// IDMap maps original node ids to new (partition) ids: each rank holds
// the new ids of a block of original ids (partition.OrigBlock, stored by
// the partitioner of a link split) in a distributed array whose row is the
// original id.
type IDMap struct {
	a *collectives.DistArray
	n int64
}

// OpenIDMap opens the id map of the store's partition, which must hold a
// link split. It is collective.
func OpenIDMap(s *Store) (*IDMap, error) {
	p := s.part
	why := ""
	var lo, hi int64
	if p.Link == nil {
		why = fmt.Sprintf("part %d has no link split (and so no id map)", p.ID)
	} else {
		lo, hi = partition.OrigBlock(p.Meta.NumNodes, p.Meta.NumParts, p.ID)
		if lp := p.Link; lp.OrigLo != lo || lp.OrigHi != hi || int64(len(lp.Orig2New)) != hi-lo {
			why = fmt.Sprintf("part %d maps original ids [%d,%d) with %d entries, want [%d,%d)", p.ID, lp.OrigLo, lp.OrigHi, len(lp.Orig2New), lo, hi)
		}
	}
	if err := collectives.AgreeOpen(s.c, "id map", why); err != nil {
		return nil, err
	}
	a, err := collectives.NewDistArray(s.c, hi-lo, 8, s.t)
	if err != nil {
		return nil, fmt.Errorf("id map: %w", err)
	}
	copy(collectives.View[int64](a.Local()), p.Link.Orig2New)
	if err := a.Seal(); err != nil {
		a.Free()
		return nil, fmt.Errorf("id map: %w", err)
	}
	return &IDMap{a: a, n: p.Meta.NumNodes}, nil
}

// Close frees the map. It is collective.
func (m *IDMap) Close() error {
	if m == nil {
		return nil
	}
	return freeArrays("close id map", &m.a)
}

// Map returns the new ids of the given original ids. A bad id is reported
// after this rank took part in the fetch. It is collective (one fetch).
func (m *IDMap) Map(orig []int64) ([]int64, error) {
	var bad error
	req := orig
	for i, o := range orig {
		if o < 0 || o >= m.n {
			bad = fmt.Errorf("node %d (entry %d) outside [0,%d)", o, i, m.n)
			req = nil // still take part in the fetch
			break
		}
	}
	out := make([]int64, len(req))
	if err := m.a.Fetch(req, collectives.Bytes(out)); err != nil {
		return nil, fmt.Errorf("id map: %w", err)
	}
	if bad != nil {
		return nil, fmt.Errorf("id map: %w", bad)
	}
	return out, nil
}

// Embedder computes output rows (width Width) for the seeds of a sampled
// batch: the model's encoder in evaluation mode.
type Embedder interface {
	Embed(blocks []sample.Block, x []float32) ([]float32, error)
}

// EmbedOptions configure Store.Embed.
type EmbedOptions struct {
	Width int // row width of the embeddings
	// Seed, Epoch and Replace key the sampling, Fanouts shape it (one per
	// layer, PyG order).
	Seed    uint64
	Epoch   int
	Fanouts []int
	Replace bool
	// Batch is the number of nodes per rank per step; GlobalBatch, when
	// positive, the number over all ranks whatever their count (Batch
	// must then be 0). Nodes are sampled with their step's key, so only
	// a global batch embeds the same on any number of ranks.
	Batch       int
	GlobalBatch int
	// Graph samples over another adjacency (for example training plus
	// valid edges); nil = the store's.
	Graph *GraphStore
}

// Embeddings are one row of float32 per node, distributed like the nodes:
// each rank holds the rows of the nodes it owns and reads any other row
// with Fetch.
type Embeddings struct {
	a     *collectives.DistArray
	width int
	lo    int64
}

// Width returns the row width.
func (e *Embeddings) Width() int { return e.width }

// Row returns the row of the owned node with new id g (aliasing the array).
func (e *Embeddings) Row(g int64) []float32 {
	w := int64(e.width)
	r := g - e.lo
	return collectives.View[float32](e.a.Local())[r*w : (r+1)*w]
}

// Local returns this rank's rows (owned nodes in new-id order), aliased.
func (e *Embeddings) Local() []float32 { return collectives.View[float32](e.a.Local()) }

// Fetch copies the rows of the given nodes (new ids, any owner, repeats
// allowed) into dst (len(nodes)·Width). It is collective.
func (e *Embeddings) Fetch(nodes []int64, dst []float32) error {
	if len(dst) < len(nodes)*e.width {
		return fmt.Errorf("embeddings: %d values for %d rows of %d", len(dst), len(nodes), e.width)
	}
	return e.a.Fetch(nodes, collectives.Bytes(dst))
}

// Free releases the rows. It is collective.
func (e *Embeddings) Free() error { return freeArrays("free embeddings", &e.a) }

// Seal makes the rows written into Local readable by every rank (rows
// from NewEmbeddings). It is collective.
func (e *Embeddings) Seal() error { return e.a.Seal() }

// Stats returns the counters of the Fetch calls on the rows so far.
func (e *Embeddings) Stats() collectives.FetchStats { return e.a.Stats() }

// NewEmbeddings allocates rows of width w for the nodes this rank owns,
// to be written through Local and then sealed (layer-wise inference in
// package train/dtrain fills them one layer at a time). It is collective.
func (s *Store) NewEmbeddings(w int) (*Embeddings, error) {
	a, err := collectives.NewDistArray(s.c, s.part.NumOwned(), 4*w, s.t)
	if err != nil {
		return nil, err
	}
	return &Embeddings{a: a, width: w, lo: s.part.Lo}, nil
}

// Embed computes the embeddings of every node for evaluation with the
// loader's seed, evaluation fanouts and evaluation batch (see Store.Embed).
// On a heterogeneous partition m must also be a TypedEmbedder, and only the
// nodes of the link relation's source and destination types are embedded
// (see embedHetero).
func (l *LinkLoader) Embed(m Embedder, width, epoch int, g *GraphStore) (*Embeddings, error) {
	if l.schema != nil {
		return l.embedHetero(m, width, epoch, g)
	}
	return l.s.Embed(m, EmbedOptions{
		Width: width, Seed: l.o.Seed, Epoch: epoch, Fanouts: l.o.EvalFanouts, Replace: l.o.Replace,
		GlobalBatch: l.evalGlobal, Graph: g,
	})
}

// Embed computes the embedding of every node (the caller frees them).
// Nodes are visited in global batches over their original ids, so each
// node is sampled with the same key on any number of ranks. It is
// collective.
func (s *Store) Embed(m Embedder, o EmbedOptions) (*Embeddings, error) {
	defer s.c.Phase("infer")()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	fan := o.Fanouts
	p := s.part
	owned := p.NumOwned()
	emb, err := collectives.NewDistArray(s.c, owned, 4*o.Width, s.t)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			emb.Free()
		}
	}()
	rows := collectives.View[float32](emb.Local())
	steps, err := sample.RankSteps(o.Seed, o.Epoch, p.Meta.NumNodes, globalSize(o.Batch, o.GlobalBatch, s.c.Size()), p.Orig)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	smp := s.sampler
	if o.Graph != nil {
		smp = NewSampler(o.Graph)
	}
	var localErr error
	var seeds, orig []int64
	var x []float32
	for step, locals := range steps {
		seeds, orig = seeds[:0], orig[:0]
		if localErr == nil {
			for _, j := range locals {
				seeds = append(seeds, p.Lo+int64(j))
				orig = append(orig, p.Orig[j])
			}
		}
		// Embedding keys use negative batch numbers: training steps are
		// non-negative, so no embedding draw repeats a training draw.
		base := sample.Key{Seed: o.Seed, Epoch: o.Epoch, Batch: -1 - step}
		blocks, err := smp.Sample(Request{Seeds: seeds, SeedsOrig: orig, Fanouts: fan, Key: base, Replace: o.Replace})
		if err != nil {
			return nil, fmt.Errorf("embed step %d/%d: %w", step+1, len(steps), err)
		}
		var nodes []int64
		if len(blocks) > 0 {
			nodes = blocks[0].Nodes
		}
		if x, err = s.feat.Gather(NodeFeat(), nodes, x, nil); err != nil {
			return nil, fmt.Errorf("embed step %d/%d: %w", step+1, len(steps), err)
		}
		if localErr != nil || len(seeds) == 0 {
			continue
		}
		h, err := m.Embed(blocks, x)
		if err == nil && len(h) != len(seeds)*o.Width {
			err = fmt.Errorf("model returned %d values for %d nodes of width %d", len(h), len(seeds), o.Width)
		}
		if err != nil {
			localErr = fmt.Errorf("embed step %d/%d: %w", step+1, len(steps), err)
			continue
		}
		for i, g := range seeds {
			r := g - p.Lo
			copy(rows[r*int64(o.Width):(r+1)*int64(o.Width)], h[i*o.Width:(i+1)*o.Width])
		}
	}
	if err := collectives.AgreeStore(s.c, "embed", localErr); err != nil {
		return nil, err
	}
	if err := emb.Seal(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	ok = true
	return &Embeddings{a: emb, width: o.Width, lo: p.Lo}, nil
}

// OpenGraph opens a second adjacency over the same nodes (for example the
// training graph plus the valid edges, for test-time inference with
// --use-valid-edges), given this rank's in-rows in canonical order. Pass it
// as EmbedOptions.Graph; the caller closes it. It is collective.
func (l *LinkLoader) OpenGraph(indptr, indices, indicesOrig []int64) (*GraphStore, error) {
	cp := *l.part
	cp.Indptr, cp.Indices, cp.IndicesOrig = indptr, indices, indicesOrig
	return openGraphStore(l.s.c, &cp, l.s.t, -1, l.s.graph.efDim > 0)
}
