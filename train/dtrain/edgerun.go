package dtrain

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/internal/osx"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/metrics"
)

// TaskEdge learns a class or real values per edge (issue 41 §2): the
// labelled edges of the partition's random link split (edge labels,
// LinkMeta.EdgeTargetDim), scored from the encoder's rows of both
// endpoints by the MLP decoder with EdgeOut outputs. Valid and test edges
// are out of message passing as link positives are; there are no
// negatives.
const TaskEdge = "edge"

// edgeTask is the edge task. It trains over the link loader (positives
// only, each with its label row) and evaluates, like the link task, on
// every node's embedding, scoring the valid or test edges a rank owns.
type edgeTask struct{}

func (edgeTask) name() string { return TaskEdge }

func (edgeTask) validate(c *TrainConfig) error {
	switch {
	case c.Link != LinkOptions{}:
		return config.Errorf("{Link.NegRatio}, {Link.NegStrict}, {Link.UseValidEdges} and {Link.KeepSeedEdges} are the link task's: the edge task scores labelled edges only, with no negatives")
	case c.Model.Decoder != "" && c.Model.Decoder != train.DecoderMLP:
		return config.Errorf("{Model.Decoder} %s: the edge task's decoder is %s", c.Model.Decoder, train.DecoderMLP)
	case c.Loader.FixedSeedTime || c.Loader.Temporal.On():
		return config.Errorf("{Loader.Temporal}: the edge task samples without time (temporal edge tasks are not supported yet)")
	}
	return nil
}

func (edgeTask) labelled() bool { return false }

// resolveModel makes the encoder's last layer output embeddings of width
// --hidden, which the MLP decoder maps to the partition's classes or
// values per edge.
func (edgeTask) resolveModel(m *train.Config, meta *partition.Meta) {
	m.Classes, m.Decoder = m.Hidden, train.DecoderMLP
	if l := meta.Link; l != nil && l.EdgeClasses > 0 {
		m.EdgeOut = l.EdgeClasses
	} else if l != nil && l.EdgeTargetDim > 0 {
		m.EdgeOut, m.Targets = l.EdgeTargetDim, train.TargetsRegression
	}
}

func (edgeTask) checkTrainable(c *collectives.Comm, cfg *TrainConfig, meta *partition.Meta, lo dsample.LoaderOptions, m train.Config) error {
	switch l := meta.Link; {
	case meta.Hetero != nil:
		return config.Errorf("train {Task} edge: partition %s is heterogeneous; edge labels are read for homogeneous graphs only", cfg.PartDir)
	case l == nil || l.EdgeTargetDim == 0:
		return config.Errorf("train {Task} edge: partition %s holds no edge labels: partition a dataset with raw/%s and a {LinkSplit} (random:TRAIN,VALID,TEST or time)", cfg.PartDir, "edge-label.csv.gz")
	}
	if mt, have := cfg.Trainer.Metric, edgeMetrics(meta.Link.EdgeClasses > 0); mt != "" && !slices.Contains(have, mt) {
		return config.Errorf("{Trainer.Metric} %s does not apply to the edge labels of partition %s, which select on %s", mt, cfg.PartDir, strings.Join(have, ", "))
	}
	// The link task's checks with no negatives (k = 0).
	return checkLinkTrainable(c, cfg.PartDir, meta, lo, cfg.Store, LinkOptions{}, cfg.LinkSplit, cfg.LinkRelation, m)
}

// open opens the store and the link loader making edge batches, and the
// edge evaluator.
func (edgeTask) open(c *collectives.Comm, part *partition.Part, cfg *TrainConfig, lo dsample.LoaderOptions, m train.Config) (*taskData, error) {
	so := cfg.Store
	so.ReleasePart = true
	st, err := dsample.OpenStore(c, part, so)
	if err != nil {
		return nil, fmt.Errorf("open feature store: %w", err)
	}
	ll, err := dsample.NewLinkLoader(st, dsample.LinkLoaderOptions{
		Fanouts: lo.Fanouts, EvalFanouts: lo.EvalFanouts, Batch: lo.Batch, GlobalBatch: lo.GlobalBatch,
		Replace: lo.Replace, Seed: lo.Seed, EdgeTargets: true,
	})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("loader: %w", err)
	}
	ev := &edgeEvaluator{link: linkEvaluator{c: c, l: ll, part: part, width: m.Classes}, cfg: m}
	eval := func(mode string, typed dsample.TypedInputs) train.Evaluator {
		if mode == EvalLayerwise {
			ev.link.infer = &linkInfer{store: st, typed: typed}
		}
		return ev
	}
	return &taskData{store: st, src: ll, evaluator: eval, close: func() { ev.link.closeAll() }}, nil
}

// metrics lists the figures of both kinds of edge labels (the task does
// not know the partition's here); checkTrainable narrows them to its
// labels' kind.
func (edgeTask) metrics() []string { return append(edgeMetrics(true), edgeMetrics(false)...) }

// edgeMetrics are the selection metrics of edge classes or edge values,
// the default first.
func edgeMetrics(classes bool) []string {
	if classes {
		return []string{train.MetricAcc, train.MetricF1Macro}
	}
	return []string{train.MetricRMSE, train.MetricMAE}
}

func (edgeTask) runInfo(ri *runInfo, _ *TrainConfig, meta *partition.Meta) {
	ri.Task, ri.LinkSplit = TaskEdge, meta.Link.Split
}

func (edgeTask) checkpointSettings(_ runInfo, _ train.Config, add func(name, value string)) {
	add("Task", TaskEdge)
}

// final names the selection figure of the best epoch and its test
// figures: accuracy for classes, RMSE and MAE for real values.
func (edgeTask) final(s metrics.Summary, weights, _ string) string {
	f := func(p *float64) string {
		if p == nil {
			return "nan"
		}
		return fmt.Sprintf("%.6f", *p)
	}
	if s.ValRMSE == nil && s.TestRMSE == nil {
		return fmt.Sprintf("epochs=%d best_epoch=%d best_val_acc=%.4f test_acc=%.4f test_f1_macro=%s weights=%s",
			s.Epochs, s.BestEpoch, s.BestValAcc, s.TestAcc, f(s.TestF1Macro), weights)
	}
	return fmt.Sprintf("epochs=%d best_epoch=%d best_val_rmse=%s test_rmse=%s test_mae=%s weights=%s",
		s.Epochs, s.BestEpoch, f(s.ValRMSE), f(s.TestRMSE), f(s.TestMAE), weights)
}

func (edgeTask) validatePredict(cfg PredictConfig) error {
	switch {
	case cfg.Pairs != "":
		return config.Errorf("{Pairs} applies to {Task} link only: {Task} edge predicts the partition's valid and test edges")
	case cfg.Logits:
		return config.Errorf("{Logits} applies to the node tasks only")
	case !strings.HasSuffix(cfg.Out, ".csv"):
		return config.Errorf("{Task} edge writes src,dst,split and the predictions of every valid and test edge as CSV: {Out} %s must end in .csv", cfg.Out)
	}
	return nil
}

func (edgeTask) predict(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	return predictEdges(c, cfg)
}

// edgeEvaluator implements train.Evaluator for the edge task: every node
// is embedded (sampled or layer-wise, as the link evaluator does, whose
// embedding cache it shares), each rank scores the split's edges it owns,
// and the figures are computed over all of them gathered in edge-id
// order, so they do not depend on the rank count.
type edgeEvaluator struct {
	link linkEvaluator
	cfg  train.Config
}

// Evaluate implements train.Evaluator. It is collective.
func (e *edgeEvaluator) Evaluate(split string, epoch int, m *train.Model) (train.EvalResult, error) {
	start := time.Now()
	var res train.EvalResult
	pos := e.link.part.Link.Positives(split)
	if pos == nil {
		return res, fmt.Errorf("evaluate %s: unknown split", split)
	}
	if split == train.SplitValid && e.link.l.Meta().Valid == 0 {
		return res, nil // nothing to select on (Count 0)
	}
	emb, err := e.link.embeddings(split, epoch, m)
	if err != nil {
		return res, fmt.Errorf("evaluate %s: %w", split, err)
	}
	out, localErr := scoreEdges(emb, m, e.cfg, pos)
	if err := collectives.Agree(e.link.c, localErr); err != nil {
		return res, fmt.Errorf("evaluate %s: %w", split, err)
	}
	ids, z, y, err := gatherEdgeRows(e.link.c, pos, out, e.cfg)
	if err != nil {
		return res, fmt.Errorf("evaluate %s: %w", split, err)
	}
	r := edgeFigures(e.cfg, ids, z, y)
	r.Wall = time.Since(start)
	return r, nil
}

// scoreEdges scores the edges of pos (this rank's) from the embeddings:
// cfg.EdgeOut outputs per edge, row-major. It is collective (one fetch),
// and makes its fetch even when it fails locally.
func scoreEdges(emb *dsample.Embeddings, m *train.Model, cfg train.Config, pos *partition.LinkEdges) ([]float32, error) {
	w, o := emb.Width(), cfg.EdgeOut
	// The destinations' rows, each distinct node fetched once.
	index := map[int64]int32{}
	var req []int64
	for _, g := range pos.Dst {
		if _, ok := index[g]; !ok {
			index[g] = int32(len(req))
			req = append(req, g)
		}
	}
	rows := make([]float32, len(req)*w)
	if err := emb.Fetch(req, rows); err != nil {
		return nil, fmt.Errorf("fetch embeddings: %w", err)
	}
	n := pos.Len()
	out := make([]float32, n*o)
	hu := make([]float32, min(n, scoreChunk)*w)
	hv := make([]float32, len(hu))
	for lo := 0; lo < n; lo += scoreChunk {
		hi := min(lo+scoreChunk, n)
		for i := lo; i < hi; i++ {
			j := int(index[pos.Dst[i]])
			copy(hu[(i-lo)*w:], emb.Row(pos.Src[i]))
			copy(hv[(i-lo)*w:], rows[j*w:(j+1)*w])
		}
		if err := m.ScorePairs(hu[:(hi-lo)*w], hv[:(hi-lo)*w], out[lo*o:hi*o]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// gatherEdgeRows gathers every rank's edges of a split (canonical ids,
// outputs and label rows) and orders them by id. It is collective.
func gatherEdgeRows(c *collectives.Comm, pos *partition.LinkEdges, out []float32, cfg train.Config) (ids []int64, z, y []float32, err error) {
	ids, order, err := gatherOrder(c, pos.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	if z, err = gatherRows(c, order, out, cfg.EdgeOut); err != nil {
		return nil, nil, nil, err
	}
	if y, err = gatherRows(c, order, pos.Targets, edgeTargetWidth(cfg)); err != nil {
		return nil, nil, nil, err
	}
	return ids, z, y, nil
}

// gatherOrder gathers every rank's edge ids (rank order) and returns them
// sorted, with order[k] the gathered position of the k-th smallest. It is
// collective.
func gatherOrder(c *collectives.Comm, ids []int64) ([]int64, []int, error) {
	all, _, err := collectives.Allgatherv(c, ids)
	if err != nil {
		return nil, nil, err
	}
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(all[a], all[b]) })
	sorted := make([]int64, len(all))
	for k, i := range order {
		sorted[k] = all[i]
	}
	return sorted, order, nil
}

// gatherRows gathers every rank's rows of w values per edge (rank order)
// and returns them in order's order. It is collective.
func gatherRows[T float32 | int64](c *collectives.Comm, order []int, rows []T, w int) ([]T, error) {
	all, _, err := collectives.Allgatherv(c, rows)
	if err != nil {
		return nil, err
	}
	if len(all) != len(order)*w {
		return nil, fmt.Errorf("gathered %d values for %d edges of %d", len(all), len(order), w)
	}
	out := make([]T, 0, len(all))
	for _, i := range order {
		out = append(out, all[i*w:(i+1)*w]...)
	}
	return out, nil
}

// edgeTargetWidth is the width of a label row: 1 (a class) or EdgeOut.
func edgeTargetWidth(cfg train.Config) int {
	if cfg.Targets == "" {
		return 1
	}
	return cfg.EdgeOut
}

// edgeFigures computes a split's figures from its edges' outputs z and
// label rows y (in edge-id order): for classes the loss (softmax
// cross-entropy), accuracy and macro F1 over labelled edges; for real values the
// loss (the head's: squared error summed over labelled values / K, per
// edge) and RMSE and MAE over every labelled value (metrics'
// RegressionFigures).
func edgeFigures(cfg train.Config, ids []int64, z, y []float32) train.EvalResult {
	var res train.EvalResult
	o := cfg.EdgeOut
	if cfg.Targets == train.TargetsRegression {
		f := metrics.RegressionFigures(z, y, o)
		res.Targets = &f
		loss := 0.0
		for i, v := range y {
			if v == v {
				d := float64(z[i]) - float64(v)
				loss += d * d / float64(o)
			}
		}
		res.Count = int64(len(ids))
		if len(ids) > 0 {
			res.Loss = loss / float64(len(ids))
		}
		return res
	}
	loss, right, n := 0.0, 0, 0
	pred := make([]int, len(y))
	for i, v := range y {
		row := z[i*o : (i+1)*o]
		arg := 0
		for k := range row {
			if row[k] > row[arg] {
				arg = k
			}
		}
		pred[i] = arg
		if v != v {
			continue
		}
		c := int(v)
		if arg == c {
			right++
		}
		zmax, s := float64(row[arg]), 0.0
		for _, x := range row {
			s += math.Exp(float64(x) - zmax)
		}
		loss += math.Log(s) + zmax - float64(row[c])
		n++
	}
	res.Count = int64(n)
	if n > 0 {
		res.Loss, res.Acc = loss/float64(n), float64(right)/float64(n)
	}
	// F1 (macro) rides in the target figures (its other figures NaN, so
	// absent); the best epoch is still chosen on accuracy.
	f := metrics.ClassFigures(pred, y, o)
	res.Targets = &f
	return res
}

// predictEdges writes the checkpoint's prediction of every valid and test
// edge of the partition's split (the held-out ones: training edges are
// what the model was fitted to) to cfg.Out on rank 0, as CSV lines
// src,dst,split,pred... in original ids, valid then test, each in edge-id
// order: the predicted class, or the K predicted values. It returns the
// number of edges written. It is collective.
func predictEdges(c *collectives.Comm, cfg PredictConfig) (int64, error) {
	inf, err := openEmbeddingSpec(c, inferSpec{what: "predict", cfg: cfg.EmbedConfig, edge: true})
	if err != nil {
		return 0, err
	}
	defer inf.close()
	mc := inf.ck.Model
	var lerr error
	switch l := inf.part.Meta.Link; {
	case inf.part.Link == nil || l == nil || l.EdgeTargetDim == 0:
		lerr = config.Errorf("predict {Task} edge: partition %s holds no edge labels (partition a dataset with raw/edge-label.csv.gz and a {LinkSplit})", cfg.PartDir)
	case (mc.Targets == "") != (l.EdgeClasses > 0) || (l.EdgeClasses > 0 && l.EdgeClasses != mc.EdgeOut) || (l.EdgeClasses == 0 && l.EdgeTargetDim != mc.EdgeOut):
		// The labels themselves are not used, but another kind or width
		// means the partition is not the one the model was trained for.
		lerr = config.Errorf("predict {Task} edge: partition %s has edge labels of %d classes / %d values, the checkpoint's model predicts %d (%s)",
			cfg.PartDir, l.EdgeClasses, l.EdgeTargetDim, mc.EdgeOut, map[bool]string{true: "classes", false: "values"}[mc.Targets == ""])
	}
	if err := collectives.Agree(c, lerr); err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	header := "src,dst,split,class\n"
	if mc.Targets == train.TargetsRegression {
		cols := make([]string, mc.EdgeOut)
		for k := range cols {
			cols[k] = "pred" + strconv.Itoa(k)
		}
		header = "src,dst,split," + strings.Join(cols, ",") + "\n"
	}
	buf.WriteString(header)
	total := int64(0)
	for _, split := range []string{train.SplitValid, train.SplitTest} {
		pos := inf.part.Link.Positives(split)
		out, lerr := scoreEdges(inf.emb, inf.model, mc, pos)
		if err := collectives.Agree(c, lerr); err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
		ids, order, err := gatherOrder(c, pos.ID)
		if err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
		z, err := gatherRows(c, order, out, mc.EdgeOut)
		if err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
		ends := make([]int64, 0, 2*pos.Len())
		for i := range pos.Len() {
			ends = append(ends, pos.SrcOrig[i], pos.DstOrig[i])
		}
		uv, err := gatherRows(c, order, ends, 2)
		if err != nil {
			return 0, fmt.Errorf("predict: %w", err)
		}
		if c.Rank() != 0 {
			total += int64(len(ids))
			continue
		}
		o := mc.EdgeOut
		var line []byte
		for i := range ids {
			line = strconv.AppendInt(line[:0], uv[2*i], 10)
			line = append(line, ',')
			line = strconv.AppendInt(line, uv[2*i+1], 10)
			line = append(line, ',')
			line = append(line, split...)
			row := z[i*o : (i+1)*o]
			if mc.Targets == train.TargetsRegression {
				for _, v := range row {
					line = append(line, ',')
					line = strconv.AppendFloat(line, float64(v), 'g', -1, 32)
				}
			} else {
				arg := 0
				for k := range row {
					if row[k] > row[arg] {
						arg = k
					}
				}
				line = append(line, ',')
				line = strconv.AppendInt(line, int64(arg), 10)
			}
			line = append(line, '\n')
			buf.Write(line)
		}
		total += int64(len(ids))
	}
	var werr error
	if c.Rank() == 0 {
		if werr = osx.WriteFileAtomic(cfg.Out, buf.Bytes()); werr != nil {
			werr = fmt.Errorf("predict: %w", werr)
		}
	}
	if err := collectives.Agree(c, werr); err != nil {
		return 0, err
	}
	return total, nil
}
