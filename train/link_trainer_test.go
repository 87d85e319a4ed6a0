package train

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/sample"
	"mpignn/train/metrics"
	"mpignn/train/optim"
)

// linkSource is a link BatchSource over a synthGraph for rank `rank` of
// `size`: training edges are the graph's edges u <- v with u in the train
// split, batched globally by edge index (sample.EpochBatches), each with
// one negative (u, w) whose w is a hash of (seed, epoch, edge); a rank
// takes the edges whose source it owns, so any rank count trains on the
// same global batches.
type linkSource struct {
	g           *synthGraph
	rank, size  int
	seed        uint64
	globalBatch int
	edges       [][2]int64 // (u, v): v is an in-neighbor of u
	ids         []int64
	sampler     sample.Reference
}

func newLinkSource(g *synthGraph, rank, size int, seed uint64, globalBatch int) *linkSource {
	s := &linkSource{g: g, rank: rank, size: size, seed: seed, globalBatch: globalBatch}
	for _, u := range g.splits[SplitTrain] {
		for _, v := range g.indices[g.indptr[u]:g.indptr[u+1]] {
			s.ids = append(s.ids, int64(len(s.edges)))
			s.edges = append(s.edges, [2]int64{u, v})
		}
	}
	return s
}

func (s *linkSource) Steps(split string, epoch int) (int, error) {
	if split != SplitTrain {
		return 0, nil // evaluation goes through the Evaluator
	}
	return sample.NumSteps(int64(len(s.ids)), s.globalBatch), nil
}

func (s *linkSource) Batch(split string, epoch, step int, b *sample.Batch) error {
	batches, err := sample.EpochBatches(s.seed, epoch, s.ids, s.globalBatch)
	if err != nil {
		return err
	}
	global := batches[step]
	b.GlobalSeeds = 2 * len(global)
	var seeds []int64
	index := map[int64]int32{}
	add := func(v int64) int32 {
		if i, ok := index[v]; ok {
			return i
		}
		index[v] = int32(len(seeds))
		seeds = append(seeds, v)
		return index[v]
	}
	for _, e := range global {
		u, v := s.edges[e][0], s.edges[e][1]
		if int(u%int64(s.size)) != s.rank {
			continue
		}
		w := int64(sample.Hash64(s.seed, uint64(epoch), uint64(e)) % uint64(s.g.n))
		b.Pairs = append(b.Pairs, add(u), add(v), add(u), add(w))
		b.PairLabels = append(b.PairLabels, 1, 0)
	}
	if len(seeds) == 0 {
		return nil
	}
	s.sampler.G = s.g
	blocks, err := s.sampler.Sample(seeds, seeds, []int{4, 3}, sample.Key{Seed: s.seed, Epoch: epoch, Batch: step}, false)
	if err != nil {
		return err
	}
	b.Blocks = blocks
	for _, v := range blocks[0].Orig {
		b.X = append(b.X, s.g.feat[int(v)*s.g.dim:int(v+1)*s.g.dim]...)
	}
	return nil
}

// linkEvaluator is a single-process Evaluator: it embeds every node in one
// batch, then ranks each valid/test edge (u, v) (u in the split) against k
// fixed negatives (u, w) and computes AUC, MRR and Hits@K.
type linkEvaluator struct {
	g     *synthGraph
	k     int
	calls []string
}

func (e *linkEvaluator) Evaluate(split string, epoch int, m *Model) (EvalResult, error) {
	e.calls = append(e.calls, fmt.Sprintf("%s@%d", split, epoch))
	all := make([]int64, e.g.n)
	for i := range all {
		all[i] = int64(i)
	}
	blocks, err := sample.SampleBlocks(e.g, all, all, []int{4, 3}, sample.Key{Seed: 77}, false)
	if err != nil {
		return EvalResult{}, err
	}
	var x []float32
	for _, v := range blocks[0].Orig {
		x = append(x, e.g.feat[int(v)*e.g.dim:int(v+1)*e.g.dim]...)
	}
	h, err := m.Forward(&sample.Batch{Blocks: blocks, X: x})
	if err != nil {
		return EvalResult{}, err
	}
	c := m.Config().Classes
	row := make(map[int64][]float32, len(all))
	for i, v := range blocks[len(blocks)-1].Orig[:blocks[len(blocks)-1].NumDst] {
		row[v] = h[i*c : (i+1)*c]
	}
	var hu, hv []float32
	var npos int
	for _, u := range e.g.splits[split] {
		for _, v := range e.g.indices[e.g.indptr[u]:e.g.indptr[u+1]] {
			hu, hv = append(hu, row[u]...), append(hv, row[v]...)
			npos++
		}
	}
	for i := 0; i < npos; i++ {
		u := hu[i*c : (i+1)*c]
		for j := 0; j < e.k; j++ {
			w := int64(sample.Hash64(99, uint64(i), uint64(j)) % uint64(e.g.n))
			hu, hv = append(hu, u...), append(hv, row[w]...)
		}
	}
	scores := make([]float32, len(hu)/c)
	if err := m.ScorePairs(hu, hv, scores); err != nil {
		return EvalResult{}, err
	}
	pos, neg := scores[:npos], scores[npos:]
	r, err := metrics.MRR(pos, neg, e.k)
	if err != nil {
		return EvalResult{}, err
	}
	return EvalResult{Count: int64(len(scores)), Link: &metrics.LinkFigures{AUC: metrics.AUC(pos, neg), MRR: r.MRR, Hits: r.Hits}}, nil
}

func linkOptions(decoder string) testOpts {
	return testOpts{
		Model:   Config{InDim: 8, Hidden: 16, Classes: 16, Layers: 2, Dropout: 0.2, Decoder: decoder},
		Options: Options{Adam: optim.DefaultAdam(0.01, 0), Seed: 42},
	}
}

// TestLinkTrainingLearns: one process, LocalReducer: the link loss falls and
// the ranking figures beat chance on the planted graph (edges mostly join
// nodes of one class, which the features reveal).
func TestLinkTrainingLearns(t *testing.T) {
	g := newSynthGraph(1, 300, 8, 4)
	for _, dec := range Decoders() {
		t.Run(dec, func(t *testing.T) {
			o := linkOptions(dec)
			tr, err := newTrainer(o, LocalReducer{}, newLinkSource(g, 0, 1, o.Seed, 128))
			require.NoError(t, err)
			ev := &linkEvaluator{g: g, k: 20}
			tr.Evaluator = ev
			var ms []metrics.Epoch
			// 8 epochs: at 6 the dot decoder's train accuracy sat at
			// 0.59-0.60 for one mask stream or another (issue 43 changed
			// the dropout masks), right on the bar below.
			for tr.Epoch() < 8 {
				m, err := tr.RunEpoch()
				require.NoError(t, err)
				ms = append(ms, m)
			}
			first, last := ms[0], ms[len(ms)-1]
			assert.Less(t, last.Loss, 0.9*first.Loss, "loss %v -> %v", first.Loss, last.Loss)
			assert.Greater(t, last.TrainAcc, 0.6)
			require.NotNil(t, last.ValMRR)
			require.NotNil(t, last.TestAUC)
			assert.Greater(t, *last.TestAUC, 0.6, "test AUC")
			assert.Greater(t, *last.ValMRR, 2.0/21, "validation metrics.MRR above a random ranking's ~H(21)/21")
			assert.Equal(t, []string{"valid@1", "test@1"}, ev.calls[:2], "evaluated after each epoch in the completed-epoch numbering")
			best := tr.Best()
			require.NotNil(t, best.ValLink)
			for _, m := range ms {
				assert.LessOrEqual(t, *m.ValMRR, best.ValLink.MRR)
			}
			assert.Equal(t, *ms[best.Epoch-1].TestMRR, best.TestLink.MRR)
			assert.Equal(t, int64(2*len(newLinkSource(g, 0, 1, 0, 1).ids)), last.Seeds, "seeds count pairs")
		})
	}
}

// TestLinkRankCountEquivalence: 1, 2 and 3 simulated ranks with the same
// global batch give the same per-step losses and final weights.
func TestLinkRankCountEquivalence(t *testing.T) {
	g := newSynthGraph(2, 200, 8, 4)
	for _, dec := range Decoders() {
		t.Run(dec, func(t *testing.T) {
			o := linkOptions(dec)
			var refLoss []float64
			var refParams []float32
			for _, size := range []int{1, 2, 3} {
				grp := newGroupReducer(size)
				trs := make([]*Trainer, size)
				recs := make([]*stepRecorder, size)
				errs := make([]error, size)
				var wg sync.WaitGroup
				for r := range size {
					tr, err := newTrainer(o, rankReducer{grp, r}, newLinkSource(g, r, size, o.Seed, 96))
					require.NoError(t, err)
					recs[r] = &stepRecorder{}
					tr.Reporter = recs[r]
					trs[r] = tr
					wg.Add(1)
					go func() {
						defer wg.Done()
						for e := 0; e < 2 && errs[r] == nil; e++ {
							_, errs[r] = tr.TrainEpoch()
						}
					}()
				}
				wg.Wait()
				for r := range size {
					require.NoError(t, errs[r], "P=%d rank %d", size, r)
					require.Equal(t, trs[0].Model().Params(), trs[r].Model().Params(), "P=%d rank %d weights", size, r)
				}
				if size == 1 {
					refLoss, refParams = recs[0].losses, slices.Clone(trs[0].Model().Params())
					continue
				}
				require.Len(t, recs[0].losses, len(refLoss))
				for i := range refLoss {
					assert.InDelta(t, refLoss[i], recs[0].losses[i], 1e-4*refLoss[i], "P=%d step %d", size, i+1)
				}
				assert.Less(t, maxRelDiff(refParams, trs[0].Model().Params()), 1e-4, "P=%d final weights", size)
			}
		})
	}
}

// TestLinkResumeAndMetrics: a link run with an Evaluator writes the link
// fields to the metrics file (node fields stay), its checkpoint round-trips
// the decoder and the best link figures, and a resumed run ends bit-identical
// to the uninterrupted one, summary included.
func TestLinkResumeAndMetrics(t *testing.T) {
	g := newSynthGraph(4, 200, 8, 4)
	o := linkOptions(DecoderMLP)
	newT := func() *Trainer {
		tr, err := newTrainer(o, LocalReducer{}, newLinkSource(g, 0, 1, o.Seed, 128))
		require.NoError(t, err)
		tr.Evaluator = &linkEvaluator{g: g, k: 10}
		return tr
	}
	dir := t.TempDir()
	straightM := filepath.Join(dir, "straight.jsonl")
	mw, err := metrics.Create(straightM, 0)
	require.NoError(t, err)
	straight := newT()
	sumA, err := straight.Run(RunOptions{Epochs: 4, Metrics: mw})
	require.NoError(t, err)
	require.NoError(t, mw.Close())

	ckDir := filepath.Join(dir, "ck")
	resumedM := filepath.Join(dir, "resumed.jsonl")
	mw, err = metrics.Create(resumedM, 0)
	require.NoError(t, err)
	_, err = newT().Run(RunOptions{Epochs: 2, Metrics: mw, CheckpointDir: ckDir})
	require.NoError(t, err)
	// A torn line after the checkpoint must be repaired on resume.
	f, err := os.OpenFile(resumedM, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"epoch","epoch":3,"loss":0.5,"val_mrr":0.`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, mw.Close())

	ck, err := LoadCheckpoint(ckDir)
	require.NoError(t, err)
	assert.Equal(t, DecoderMLP, ck.Model.Decoder)
	require.NotNil(t, ck.BestValLink)
	require.NotNil(t, ck.BestTestLink)
	second := newT()
	require.NoError(t, second.Restore(ck))
	mw, err = metrics.Create(resumedM, ck.Epoch)
	require.NoError(t, err)
	assert.Len(t, mw.Warnings, 1, "the torn tail is reported")
	sumB, err := second.Run(RunOptions{Epochs: 4, Metrics: mw})
	require.NoError(t, err)
	require.NoError(t, mw.Close())

	assert.Equal(t, straight.Model().Params(), second.Model().Params())
	assert.Equal(t, straight.Best(), second.Best())
	sumA.TotalS, sumB.TotalS = 0, 0
	assert.Equal(t, sumA, sumB)
	require.NotNil(t, sumA.BestValMRR)
	require.NotNil(t, sumA.TestHits10)
	assert.Equal(t, straight.Best().ValLink.MRR, *sumA.BestValMRR)
	assert.Equal(t, straight.Best().TestLink.Hits[2], *sumA.TestHits10)

	ea, sa, err := metrics.Read(straightM)
	require.NoError(t, err)
	eb, sb, err := metrics.Read(resumedM)
	require.NoError(t, err)
	require.Len(t, ea, 4)
	require.Len(t, eb, 4)
	for i := range ea {
		clearTimes(&ea[i])
		clearTimes(&eb[i])
		assert.Equal(t, ea[i], eb[i], "epoch %d", i+1)
		assert.True(t, ea[i].Evaluated())
		require.NotNil(t, ea[i].TestLink())
	}
	sa.TotalS, sb.TotalS = 0, 0
	assert.Equal(t, sa, sb)
	raw, err := os.ReadFile(straightM)
	require.NoError(t, err)
	for _, field := range []string{`"val_auc":`, `"val_mrr":`, `"test_auc":`, `"test_mrr":`, `"test_hits@1":`, `"test_hits@3":`, `"test_hits@10":`, `"test_hits@50":`, `"test_hits@100":`, `"best_val_mrr":`} {
		assert.Contains(t, string(raw), field)
	}
}

// clearTimes zeroes the wall-time fields of a metrics line (they differ
// between runs).
func clearTimes(m *metrics.Epoch) {
	m.EpochS, m.EvalS, m.SampleS, m.GatherS, m.ForwardS, m.BackwardS, m.AllreduceS, m.OptimizerS, m.WaitS, m.StepsPerS = 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
}

// TestNodeMetricsLineUnchanged: a node epoch line carries none of the link
// fields.
func TestNodeMetricsLineUnchanged(t *testing.T) {
	acc, loss := 0.5, 1.0
	m := newEpochMetrics(TrainResult{Epoch: 1}, &EvalResult{Loss: loss, Acc: acc}, &EvalResult{Loss: loss, Acc: acc})
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := metrics.Create(path, 0)
	require.NoError(t, err)
	require.NoError(t, w.WriteEpoch(&m))
	require.NoError(t, w.WriteSummary(&metrics.Summary{Type: "summary"}))
	require.NoError(t, w.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, bad := range []string{"auc", "mrr", "hits"} {
		assert.False(t, strings.Contains(string(raw), bad), "node metrics mention %q: %s", bad, raw)
	}
}

// TestLinkBatchErrors: a link batch on a node model, or a batch with both
// labels and pairs, stops every rank at that step.
func TestLinkBatchErrors(t *testing.T) {
	g := newSynthGraph(5, 100, 8, 4)
	o := linkOptions(DecoderDot)
	o.Model.Decoder = ""
	tr, err := newTrainer(o, LocalReducer{}, newLinkSource(g, 0, 1, o.Seed, 64))
	require.NoError(t, err)
	_, err = tr.TrainEpoch()
	require.ErrorContains(t, err, "needs a link predictor")

	both := &mixedSource{newLinkSource(g, 0, 1, o.Seed, 64)}
	o.Model.Decoder = DecoderDot
	tr, err = newTrainer(o, LocalReducer{}, both)
	require.NoError(t, err)
	_, err = tr.TrainEpoch()
	require.ErrorContains(t, err, "both")
}

// mixedSource adds node labels to link batches.
type mixedSource struct{ *linkSource }

func (s *mixedSource) Batch(split string, epoch, step int, b *sample.Batch) error {
	if err := s.linkSource.Batch(split, epoch, step, b); err != nil {
		return err
	}
	b.Labels = append(b.Labels, 0)
	return nil
}
