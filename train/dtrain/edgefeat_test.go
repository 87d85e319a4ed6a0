package dtrain

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/optim"
)

// edgeRow is the feature row the tests give edge u -> v (original ids): a
// function of the edge, so a layer can check the row of every edge it
// receives on any rank count (synthDataset has no repeated edges).
func edgeRow(u, v int64) []float32 {
	return []float32{float32(u) / 100, float32(v)/100 + 0.5, float32((u*7+v)%11) / 11}
}

// withEdgeRows gives d the edgeRow of each of its edges, in edge order.
func withEdgeRows(d *graph.Dataset) *graph.Dataset {
	d.EdgeFeat = &graph.Features{Dim: 3}
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			d.EdgeFeat.Data = append(d.EdgeFeat.Data, edgeRow(u, v)...)
		}
	}
	return d
}

// writeEdgeParts is writeParts with edge features stored (or not: the
// same graph's partition without them).
func writeEdgeParts(t *testing.T, c *collectives.Comm, d *graph.Dataset, edgeFeat bool) string {
	t.Helper()
	dir := filepath.Join(sharedDir(t, c), fmt.Sprintf("parts-ef-%t", edgeFeat))
	var err error
	if c.Rank() == 0 {
		_, err = partition.WriteDataset(dir, d, c.Size(), partition.Options{Method: partition.MethodRandom, Seed: 3, Split: "public", EdgeFeat: edgeFeat})
	}
	require.NoError(t, collectives.Agree(c, err))
	return dir
}

// edgeLog is what the edgeMean layers saw: the edges they read and those
// whose row was not the edge's own.
type edgeLog struct {
	edges, wrong int64
	first        string
}

// edgeMean is a test-only layer that reads edge features:
// out_i = mean_{j->i} h_j·W + mean_{j->i} e_ji·V + b (its own row and no
// edge term without in-neighbours). Its Forward checks every edge's row
// against edgeRow, so a model of it proves what reaches the layers.
type edgeMean[T train.Float] struct {
	in, out, ed         int
	log                 *edgeLog
	w, v, b, gw, gv, gb []T
	agg, eagg, o, dh    []T
}

func (m *edgeMean[T]) Specs() []train.ParamSpec {
	return []train.ParamSpec{{Name: "w", Rows: m.in, Cols: m.out}, {Name: "v", Rows: m.ed, Cols: m.out},
		{Name: "b", Rows: 1, Cols: m.out, Zero: true}}
}

func (m *edgeMean[T]) Bind(p, g [][]T) {
	m.w, m.v, m.b, m.gw, m.gv, m.gb = p[0], p[1], p[2], g[0], g[1], g[2]
}

func (m *edgeMean[T]) check(b *sample.Block) {
	for i := range b.NumDst {
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			u, v := b.Orig[b.Indices[e]], b.Orig[i]
			m.log.edges++
			if got := b.EdgeFeat[int(e)*m.ed : int(e+1)*m.ed]; !slices.Equal(got, edgeRow(u, v)) {
				if m.log.wrong == 0 {
					m.log.first = fmt.Sprintf("edge %d -> %d carries %v, want %v", u, v, got, edgeRow(u, v))
				}
				m.log.wrong++
			}
		}
	}
}

func (m *edgeMean[T]) Forward(_ *train.Pass, b *sample.Block, h []T) []T {
	m.check(b)
	m.agg = slices.Grow(m.agg[:0], b.NumDst*m.in)[:b.NumDst*m.in]
	m.eagg = slices.Grow(m.eagg[:0], b.NumDst*m.ed)[:b.NumDst*m.ed]
	m.o = slices.Grow(m.o[:0], b.NumDst*m.out)[:b.NumDst*m.out]
	clear(m.agg)
	clear(m.eagg)
	for i := range b.NumDst {
		a, ea := m.agg[i*m.in:(i+1)*m.in], m.eagg[i*m.ed:(i+1)*m.ed]
		lo, hi := b.Indptr[i], b.Indptr[i+1]
		if lo == hi {
			copy(a, h[i*m.in:(i+1)*m.in])
		}
		for e := lo; e < hi; e++ {
			wt := 1 / T(hi-lo)
			j := int(b.Indices[e])
			for k := range a {
				a[k] += wt * h[j*m.in+k]
			}
			for k := range ea {
				ea[k] += wt * T(b.EdgeFeat[int(e)*m.ed+k])
			}
		}
		o := m.o[i*m.out : (i+1)*m.out]
		copy(o, m.b)
		for k, x := range a {
			for u := range o {
				o[u] += x * m.w[k*m.out+u]
			}
		}
		for k, x := range ea {
			for u := range o {
				o[u] += x * m.v[k*m.out+u]
			}
		}
	}
	return m.o
}

func (m *edgeMean[T]) Backward(_ *train.Pass, b *sample.Block, _, dout []T, wantInput bool) []T {
	for i := range b.NumDst {
		d := dout[i*m.out : (i+1)*m.out]
		for u, g := range d {
			m.gb[u] += g
		}
		for k, x := range m.agg[i*m.in : (i+1)*m.in] {
			for u, g := range d {
				m.gw[k*m.out+u] += x * g
			}
		}
		for k, x := range m.eagg[i*m.ed : (i+1)*m.ed] {
			for u, g := range d {
				m.gv[k*m.out+u] += x * g
			}
		}
	}
	if !wantInput {
		return nil
	}
	m.dh = slices.Grow(m.dh[:0], b.NumSrc()*m.in)[:b.NumSrc()*m.in]
	clear(m.dh)
	for i := range b.NumDst {
		d := dout[i*m.out : (i+1)*m.out]
		lo, hi := b.Indptr[i], b.Indptr[i+1]
		for k := range m.in {
			s := T(0)
			for u, g := range d {
				s += g * m.w[k*m.out+u]
			}
			if lo == hi {
				m.dh[i*m.in+k] += s
			}
			for e := lo; e < hi; e++ {
				m.dh[int(b.Indices[e])*m.in+k] += s / T(hi-lo)
			}
		}
	}
	return m.dh
}

// edgeMeanArch is the test architecture, recording into log.
func edgeMeanArch(log *edgeLog) train.Arch {
	newLayer := func(c train.Config, l int) *edgeMean[float32] {
		in, out := c.LayerDims(l)
		return &edgeMean[float32]{in: in, out: out, ed: c.EdgeDim, log: log}
	}
	return train.Arch{
		Name:         "edgemean",
		Doc:          "test: mean over in-neighbours and their edges' features, then linear maps",
		EdgeFeatures: true,
		New32:        func(c train.Config, l int) train.Layer[float32] { return newLayer(c, l) },
		New64: func(c train.Config, l int) train.Layer[float64] {
			in, out := c.LayerDims(l)
			return &edgeMean[float64]{in: in, out: out, ed: c.EdgeDim, log: log}
		},
	}
}

// TestEdgeFeatReachLayers: with UseEdgeFeat, the model gets the
// partition's edge feature width and every block its layers see carries
// each edge's own row — in training, in sampled and layer-wise evaluation,
// and in layer-wise inference over every edge of the graph — on any rank
// count. Without it the store leaves the features out and the blocks are
// otherwise the same.
func TestEdgeFeatReachLayers(t *testing.T) {
	c := comm(t)
	if 12%c.Size() != 0 {
		t.Skipf("global batch 12 does not split over %d ranks", c.Size())
	}
	d := withEdgeRows(synthDataset(12, 200, 6, 3))
	dir := writeEdgeParts(t, c, d, true)

	open := func(use bool) (*dsample.Store, *dsample.Loader, train.Config) {
		cfg := testTrainConfig(c, dir, 0)
		cfg.UseEdgeFeat = use
		part, err := openPart(c, dir)
		require.NoError(t, err)
		m := train.Config{Arch: "edgemean", InDim: 6, Hidden: 8, Classes: 3, Layers: 2}
		require.NoError(t, resolveEdgeFeat(&cfg, part.Meta, &m))
		require.Equal(t, !use, cfg.Store.NoEdgeFeat)
		lo := cfg.Loader
		lo.Seed, lo.Split, lo.EvalFanouts = 11, "public", lo.Fanouts
		st, l, err := openLoader(c, part, cfg.Store, lo)
		require.NoError(t, err)
		return st, l, m
	}

	st, loader, m := open(true)
	defer st.Close()
	require.Equal(t, 3, m.EdgeDim, "the partition's width")
	require.Equal(t, 3, st.Graph().EdgeFeatDim())
	log := &edgeLog{}
	model, err := train.NewModel(m, 11, train.WithArchs(edgeMeanArch(log)))
	require.NoError(t, err)
	tr, err := train.NewTrainer(train.Options{Adam: optim.DefaultAdam(0.01, 0), Seed: 11}, model, Reducer{C: c}, loader)
	require.NoError(t, err)

	total := func(v int64) int64 {
		s, err := collectives.AllreduceScalar(c, v, collectives.Sum)
		require.NoError(t, err)
		return s
	}
	checked := func(what string) int64 {
		edges, wrong := total(log.edges), total(log.wrong)
		assert.Zero(t, wrong, "%s: rank %d: %s", what, c.Rank(), log.first)
		*log = edgeLog{}
		return edges
	}
	_, err = tr.RunEpoch() // training and sampled evaluation
	require.NoError(t, err)
	assert.Positive(t, checked("training, sampled evaluation"))

	tr.Evaluator = &layerwiseEvaluator{c: c, store: st, split: "public"}
	_, err = tr.RunEpoch()
	require.NoError(t, err)
	assert.Positive(t, checked("training, layer-wise evaluation"))

	rows, err := Infer(st, model, InferOptions{Chunk: 17})
	require.NoError(t, err)
	require.NoError(t, rows.Free())
	assert.Equal(t, 2*int64(len(d.In.Indices)), checked("layer-wise inference"), "every edge, once per layer")

	// Without UseEdgeFeat: the same batches, without edge features.
	st2, loader2, m2 := open(false)
	defer st2.Close()
	require.Zero(t, m2.EdgeDim)
	require.Zero(t, st2.Graph().EdgeFeatDim(), "left out of the store")
	for step := range 2 {
		var with, without sample.Batch
		require.NoError(t, loader.Batch(train.SplitTrain, 5, step, &with))
		require.NoError(t, loader2.Batch(train.SplitTrain, 5, step, &without))
		require.Len(t, without.Blocks, len(with.Blocks))
		for l := range with.Blocks {
			a, b := with.Blocks[l], without.Blocks[l]
			assert.Equal(t, 3, a.EdgeFeatDim)
			assert.Zero(t, b.EdgeFeatDim, "layer %d", l)
			assert.Nil(t, b.EdgeFeat, "layer %d", l)
			a.EdgeFeat, a.EdgeFeatDim = nil, 0
			assert.Equal(t, a, b, "step %d layer %d: the blocks are the same but for the features", step, l)
		}
	}
	// A model that reads them refuses blocks without them.
	_, err = model.Layerwise().Layer(0, &sample.Block{NumDst: 1, Nodes: []int64{0}, Orig: []int64{0}, Indptr: []int32{0, 0}}, make([]float32, 6), nil)
	require.ErrorContains(t, err, "the block carries 0 edge features per edge (0 values for 0 edges) but the model reads 3 (edge_dim)")
}

// TestUseEdgeFeatRefused: UseEdgeFeat where it cannot apply is one error
// naming the field, before (Validate) or as the partition is read.
func TestUseEdgeFeatRefused(t *testing.T) {
	withEF := &partition.Meta{EdgeFeatDim: 8}
	for _, tc := range []struct {
		name string
		edit func(*TrainConfig)
		meta *partition.Meta // nil: refused by Validate
		want string
	}{
		{"model reads none", func(c *TrainConfig) { c.Model.Arch = train.ArchSAGE }, nil,
			"UseEdgeFeat: Model.Arch sage reads no edge features"},
		{"default model", func(c *TrainConfig) {}, nil, ""}, // the partition decides: sage or hsage
		{"default model, homogeneous partition", func(c *TrainConfig) {}, withEF, "UseEdgeFeat: Model.Arch sage reads no edge features"},
		{"link task", func(c *TrainConfig) { c.Task, c.Link.NegRatio = TaskLink, 1 }, nil,
			"UseEdgeFeat: Task link trains on the link split's graph, which carries no edge features yet"},
		{"edge task", func(c *TrainConfig) { c.Task = TaskEdge }, nil, "UseEdgeFeat: Task edge"},
		{"hetero", func(c *TrainConfig) { c.Hetero.EmbedDim, c.Model.Arch = 4, train.ArchRGCN }, nil, ""},
		{"hetero partition", func(c *TrainConfig) { c.Model.Arch = train.ArchHSAGE }, withEF, ""},
		{"derived width", func(c *TrainConfig) { c.Model.EdgeDim = 3 }, nil, "Model.EdgeDim comes from the partition with UseEdgeFeat"},
		{"store option", func(c *TrainConfig) { c.Store.NoEdgeFeat = true }, nil, "Store.NoEdgeFeat is set by Train"},
		{"partition without", func(c *TrainConfig) { c.Model.Arch = "edgemean" }, &partition.Meta{},
			"UseEdgeFeat: partition p holds no edge features: partition the dataset with EdgeFeat"},
		{"partition with", func(c *TrainConfig) { c.Model.Arch = "edgemean" }, withEF, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := TrainConfig{PartDir: "p", Loader: dsample.LoaderOptions{Fanouts: []int{2}, Batch: 4}, Model: train.Config{Hidden: 4},
				Trainer: train.Options{Adam: optim.DefaultAdam(0.01, 0)}, Run: train.RunOptions{Epochs: 1}, UseEdgeFeat: true}
			tc.edit(&cfg)
			var err error
			if tc.meta == nil {
				err = cfg.Validate()
			} else {
				m := cfg.Model
				err = resolveEdgeFeat(&cfg, tc.meta, &m)
				if err == nil {
					assert.Equal(t, 8, m.EdgeDim)
					assert.False(t, cfg.Store.NoEdgeFeat)
				}
			}
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, strings.TrimSuffix(strings.Fields(tc.want)[0], ":"), fe.Field, "the field at fault comes first")
		})
	}
}

// TestResumeEdgeFeat: a resume that turns UseEdgeFeat on or off is refused
// with one line naming it, and the checkpoint's settings give it back to a
// resumed command line.
func TestResumeEdgeFeat(t *testing.T) {
	model, adam, seed, info := fullSettings(t)
	model.EdgeDim = 8
	ck := &train.Checkpoint{Model: model, Adam: adam, Seed: seed, RunInfo: info}
	off := model
	off.EdgeDim = 0
	for _, tc := range []struct {
		name       string
		saved, now train.Config
		want       string
	}{
		{"turned off", model, off, "the edge features' width (UseEdgeFeat) was 8, now 0 (none)"},
		{"turned on", off, model, "the edge features' width (UseEdgeFeat) was 0 (none), now 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ck := &train.Checkpoint{Model: tc.saved, Adam: adam, Seed: seed, RunInfo: info}
			err := checkResume(ck, tc.now, adam, seed, info)
			require.ErrorContains(t, err, tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
	settings, err := CheckpointSettings(ck, 2)
	require.NoError(t, err)
	assert.Contains(t, settings, [2]string{"UseEdgeFeat", "true"})
	ck.Model = off
	settings, err = CheckpointSettings(ck, 2)
	require.NoError(t, err)
	for _, kv := range settings {
		assert.NotEqual(t, "UseEdgeFeat", kv[0], "absent for a model that reads none")
	}
}
