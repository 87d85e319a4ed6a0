package dtrain

import (
	"fmt"
	"math"
	"slices"
	"time"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/metrics"
)

// Distributed link evaluation.
//
// Every node is embedded once per evaluation (sampled with the evaluation
// fanouts, keyed by original id, so the embeddings do not depend on the
// number of ranks), into a distributed array. Each rank then scores the
// valid/test positives it owns (their sources are its nodes), their K fixed
// negatives and its share of the negative pool, reading the destinations'
// embeddings with one batched fetch. The ranking metrics follow OGB:
// MRR over each positive's K negatives, Hits@K against the shared pool,
// AUC over all positives against all K-negatives.

// scoreChunk bounds the pairs scored per decoder call (the endpoint rows
// are copied into two chunk-sized matrices).
const scoreChunk = 8192

// linkEvaluator implements train.Evaluator over a LinkLoader.
type linkEvaluator struct {
	c      *collectives.Comm
	l      *dsample.LinkLoader
	part   *partition.Part
	width  int
	testGr *dsample.GraphStore // adjacency for the test split (train+valid edges); nil = training graph
	// infer, if set, computes the embeddings by layer-wise inference
	// instead of the loader's sampled Embed.
	infer *linkInfer

	// The embeddings of the last evaluation, reused by the next one when
	// the epoch, graph and weights are the same (valid then test).
	cache struct {
		emb    *dsample.Embeddings
		epoch  int
		graph  *dsample.GraphStore
		params []float32
	}
}

// linkInfer is what layer-wise inference of link embeddings needs.
type linkInfer struct {
	store *dsample.Store
	typed dsample.TypedInputs
}

// close frees the cached embeddings. It is collective.
func (e *linkEvaluator) close() error {
	if e.cache.emb == nil {
		return nil
	}
	err := e.cache.emb.Free()
	e.cache.emb = nil
	return err
}

// embeddings returns the embeddings of every node under the model's
// current weights for split's graph.
func (e *linkEvaluator) embeddings(split string, epoch int, m *train.Model) (*dsample.Embeddings, error) {
	var g *dsample.GraphStore
	if split == train.SplitTest {
		g = e.testGr
	}
	ch := &e.cache
	if ch.emb != nil && ch.epoch == epoch && ch.graph == g && slices.Equal(ch.params, m.Params()) {
		return ch.emb, nil
	}
	if err := e.close(); err != nil {
		return nil, err
	}
	var emb *dsample.Embeddings
	var err error
	if e.infer != nil {
		emb, err = inferRows(e.infer.store, m, e.infer.typed, g, nil)
	} else {
		emb, err = e.l.Embed(encoder{m}, e.width, epoch, g)
	}
	if err != nil {
		return nil, err
	}
	ch.emb, ch.epoch, ch.graph = emb, epoch, g
	ch.params = append(ch.params[:0], m.Params()...)
	return emb, nil
}

// linkScores are this rank's scores of one split.
type linkScores struct {
	pos, neg, pool []float32 // neg: K per positive
}

// Evaluate implements train.Evaluator. It is collective.
func (e *linkEvaluator) Evaluate(split string, epoch int, m *train.Model) (train.EvalResult, error) {
	start := time.Now()
	var res train.EvalResult
	lp := e.part.Link
	var pos, pool *partition.LinkEdges
	var neg, negOrig []int64
	switch split {
	case train.SplitValid:
		if e.l.Meta().Valid == 0 {
			// A split without validation edges (MovieLens u1): nothing to
			// score, so no epoch is selected on it (Count 0: the trainer
			// keeps the latest epoch).
			return res, nil
		}
		pos, pool, neg, negOrig = &lp.Valid, &lp.ValidPool, lp.ValidNeg, lp.ValidNegOrig
	case train.SplitTest:
		pos, pool, neg, negOrig = &lp.Test, &lp.TestPool, lp.TestNeg, lp.TestNegOrig
	default:
		return res, fmt.Errorf("evaluate %s: unknown split", split)
	}
	var sc linkScores
	var localErr error
	if e.l.Options().Temporal.On() {
		var err error
		sc, localErr, err = e.scoreAt(split, epoch, m, pos, neg, negOrig, pool)
		if err != nil {
			return res, fmt.Errorf("evaluate %s: %w", split, err)
		}
	} else {
		emb, err := e.embeddings(split, epoch, m)
		if err != nil {
			return res, fmt.Errorf("evaluate %s: %w", split, err)
		}
		sc, localErr = e.score(emb, m, pos, neg, pool)
	}
	if err := collectives.Agree(e.c, localErr); err != nil {
		return res, fmt.Errorf("evaluate %s: %w", split, err)
	}
	k := e.l.Meta().NegsPerPos
	r, err := e.metrics(sc, k)
	if err != nil {
		return res, fmt.Errorf("evaluate %s: %w", split, err)
	}
	r.Wall = time.Since(start)
	return r, nil
}

// score computes this rank's scores. It is collective (one fetch), and
// makes its fetch even when it fails locally.
func (e *linkEvaluator) score(emb *dsample.Embeddings, m *train.Model, pos *partition.LinkEdges, neg []int64, pool *partition.LinkEdges) (linkScores, error) {
	k := e.l.Meta().NegsPerPos
	var sc linkScores
	var localErr error
	if len(neg) != pos.Len()*k {
		localErr = fmt.Errorf("rank %d holds %d negatives for %d positives, want %d each", e.c.Rank(), len(neg), pos.Len(), k)
	}
	// The destinations' rows, each distinct node fetched once.
	index := map[int64]int32{}
	var req []int64
	need := func(g int64) {
		if _, ok := index[g]; !ok {
			index[g] = int32(len(req))
			req = append(req, g)
		}
	}
	if localErr == nil {
		for _, g := range pos.Dst {
			need(g)
		}
		for _, g := range neg {
			need(g)
		}
		for _, g := range pool.Dst {
			need(g)
		}
	}
	w := e.width
	rows := make([]float32, len(req)*w)
	if err := emb.Fetch(req, rows); err != nil {
		return sc, fmt.Errorf("fetch embeddings: %w", err)
	}
	if localErr != nil {
		return sc, localErr
	}
	src := emb.Row
	dst := func(g int64) []float32 { j := int64(index[g]); return rows[j*int64(w) : (j+1)*int64(w)] }
	var err error
	sc.pos, err = scorePairs(m, w, pos.Len(), func(i int) ([]float32, []float32) { return src(pos.Src[i]), dst(pos.Dst[i]) })
	if err == nil {
		sc.neg, err = scorePairs(m, w, len(neg), func(i int) ([]float32, []float32) { return src(pos.Src[i/k]), dst(neg[i]) })
	}
	if err == nil {
		sc.pool, err = scorePairs(m, w, pool.Len(), func(i int) ([]float32, []float32) { return src(pool.Src[i]), dst(pool.Dst[i]) })
	}
	return sc, err
}

// scorePairs scores n pairs whose endpoint rows rowsOf returns, in chunks.
func scorePairs(m *train.Model, w, n int, rowsOf func(i int) (u, v []float32)) ([]float32, error) {
	out := make([]float32, n)
	hu := make([]float32, min(n, scoreChunk)*w)
	hv := make([]float32, len(hu))
	for lo := 0; lo < n; lo += scoreChunk {
		hi := min(lo+scoreChunk, n)
		for i := lo; i < hi; i++ {
			u, v := rowsOf(i)
			copy(hu[(i-lo)*w:], u)
			copy(hv[(i-lo)*w:], v)
		}
		if err := m.ScorePairs(hu[:(hi-lo)*w], hv[:(hi-lo)*w], out[lo:hi]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// metrics reduces the ranks' scores to the split's figures, the same on
// every rank. It is collective.
func (e *linkEvaluator) metrics(sc linkScores, k int) (train.EvalResult, error) {
	var res train.EvalResult
	// Every score is gathered (4 bytes each) and every rank computes the
	// same figures from the same arrays. The ranks' chunks keep each
	// positive's K negatives aligned with it.
	allPos, _, err := collectives.Allgatherv(e.c, sc.pos)
	if err != nil {
		return res, err
	}
	allNeg, _, err := collectives.Allgatherv(e.c, sc.neg)
	if err != nil {
		return res, err
	}
	allPool, _, err := collectives.Allgatherv(e.c, sc.pool)
	if err != nil {
		return res, err
	}
	if len(allNeg) != len(allPos)*k {
		return res, fmt.Errorf("gathered %d negative scores for %d positives, want %d each", len(allNeg), len(allPos), k)
	}
	res.Count = int64(len(allPos))
	loss := 0.0
	for _, s := range allPos {
		loss += softplus(-float64(s))
	}
	for _, s := range allNeg {
		loss += softplus(float64(s))
	}
	if n := len(allPos) + len(allNeg); n > 0 {
		res.Loss = loss / float64(n)
	}
	rank, err := metrics.MRR(allPos, allNeg, k)
	if err != nil {
		return res, err
	}
	fig := &metrics.LinkFigures{AUC: metrics.AUC(allPos, allNeg), MRR: rank.MRR}
	for i, K := range metrics.HitsKs() {
		fig.Hits[i] = metrics.HitsAtK(allPos, allPool, K)
	}
	res.Link = fig
	// Acc: the share of positives and negatives on the right side of 0.
	right := 0
	for _, s := range allPos {
		if s > 0 {
			right++
		}
	}
	for _, s := range allNeg {
		if s <= 0 {
			right++
		}
	}
	if n := len(allPos) + len(allNeg); n > 0 {
		res.Acc = float64(right) / float64(n)
	}
	return res, nil
}

// softplus is log(1+e^x), stably.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// Temporal link evaluation.
//
// With temporal sampling a node's embedding depends on the time it is
// asked at, so nodes cannot be embedded once for all pairs: every scored
// pair is embedded at its positive's time (a positive and its K negatives
// share the positive's time, as in training), its endpoints sampled with
// only the edges older than that time. The shared negative pool, which
// has no times, is scored at the split's first positive time: what is
// known when the split begins. Pairs go through in chunks of evalPairs
// per rank per step; the step count is agreed over the ranks, so every
// rank makes the same collective calls.

// evalPairs bounds the pairs scored per rank per step.
const evalPairs = 2048

// scoreAt is score for temporal sampling. It is collective. localErr is
// this rank's own failure (the caller agrees on it); err is a failure of a
// collective, already the same on every rank.
func (e *linkEvaluator) scoreAt(split string, epoch int, m *train.Model, pos *partition.LinkEdges, neg, negOrig []int64, pool *partition.LinkEdges) (sc linkScores, localErr, err error) {
	k := e.l.Meta().NegsPerPos
	if len(neg) != pos.Len()*k || len(negOrig) != len(neg) {
		localErr = fmt.Errorf("rank %d holds %d negatives for %d positives, want %d each", e.c.Rank(), len(neg), pos.Len(), k)
	}
	// The pool's time: the split's first positive time over all ranks.
	first := int64(math.MaxInt64)
	for _, t := range pos.Time {
		first = min(first, t)
	}
	if first, err = collectives.AllreduceScalar(e.c, first, collectives.Min); err != nil {
		return sc, nil, err
	}
	var pp dsample.LinkPairs
	if localErr == nil {
		for i := range pos.Len() {
			pp.Add(pos.Src[i], pos.SrcOrig[i], pos.Dst[i], pos.DstOrig[i], pos.Time[i])
		}
		for i := range len(neg) {
			p := i / k
			pp.Add(pos.Src[p], pos.SrcOrig[p], neg[i], negOrig[i], pos.Time[p])
		}
		for i := range pool.Len() {
			pp.Add(pool.Src[i], pool.SrcOrig[i], pool.Dst[i], pool.DstOrig[i], first)
		}
	}
	steps, err := collectives.AllreduceScalar(e.c, int64((pp.Len()+evalPairs-1)/evalPairs), collectives.Max)
	if err != nil {
		return sc, nil, err
	}
	which := 0
	if split == train.SplitTest {
		which = 1
	}
	scores := make([]float32, pp.Len())
	var b sample.Batch
	for step := range int(steps) {
		lo := min(step*evalPairs, pp.Len())
		hi := min(lo+evalPairs, pp.Len())
		if err := e.l.PairBatchAt(&pp, lo, hi, which, epoch, &b); err != nil {
			return sc, nil, err
		}
		if localErr != nil || lo == hi {
			continue
		}
		var h []float32
		h, localErr = m.Forward(&b)
		if localErr == nil && len(h) != len(b.Seeds)*e.width {
			localErr = fmt.Errorf("model returned %d values for %d nodes of width %d", len(h), len(b.Seeds), e.width)
		}
		if localErr != nil {
			continue
		}
		w := e.width
		row := func(j int32) []float32 { return h[int(j)*w : (int(j)+1)*w] }
		var part []float32
		part, localErr = scorePairs(m, w, hi-lo, func(i int) ([]float32, []float32) { return row(b.Pairs[2*i]), row(b.Pairs[2*i+1]) })
		copy(scores[lo:hi], part)
	}
	if localErr != nil {
		return sc, localErr, nil
	}
	np := pos.Len()
	sc.pos, sc.neg, sc.pool = scores[:np], scores[np:np+len(neg)], scores[np+len(neg):]
	return sc, nil, nil
}
