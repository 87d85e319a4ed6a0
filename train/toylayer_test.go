package train_test

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/sample"
	"mpignn/train"
	"mpignn/train/optim"
)

// A new model added from outside package train, in this one file: a toy
// layer, handed to NewModel as an architecture value (no table is
// modified), trained for two steps by the ordinary Trainer.

// meanLinear is the toy layer: out_i = mean_{j -> i} h_j · W + b, the mean
// over destination i's in-neighbours in the block (its own row when it has
// none).
type meanLinear[T train.Float] struct {
	in, out      int
	w, b, gw, gb []T
	agg, o, dh   []T // mean rows (kept for Backward), output rows, input gradient
}

func newMeanLinear[T train.Float](c train.Config, l int) train.Layer[T] {
	in, out := c.LayerDims(l)
	return &meanLinear[T]{in: in, out: out}
}

func (m *meanLinear[T]) Specs() []train.ParamSpec {
	return []train.ParamSpec{{Name: "w", Rows: m.in, Cols: m.out}, {Name: "b", Rows: 1, Cols: m.out, Zero: true}}
}

func (m *meanLinear[T]) Bind(p, g [][]T) { m.w, m.b, m.gw, m.gb = p[0], p[1], g[0], g[1] }

// sources returns the rows destination i averages and the weight of each.
func sources(b *sample.Block, i int) ([]int32, float64) {
	if nb := b.Indices[b.Indptr[i]:b.Indptr[i+1]]; len(nb) > 0 {
		return nb, 1 / float64(len(nb))
	}
	return []int32{int32(i)}, 1
}

func (m *meanLinear[T]) Forward(_ *train.Pass, b *sample.Block, h []T) []T {
	m.agg = slices.Grow(m.agg[:0], b.NumDst*m.in)[:b.NumDst*m.in]
	m.o = slices.Grow(m.o[:0], b.NumDst*m.out)[:b.NumDst*m.out]
	for i := range b.NumDst {
		a := m.agg[i*m.in : (i+1)*m.in]
		clear(a)
		src, wt := sources(b, i)
		for _, j := range src {
			for k := range a {
				a[k] += T(wt) * h[int(j)*m.in+k]
			}
		}
		o := m.o[i*m.out : (i+1)*m.out]
		copy(o, m.b)
		for k, x := range a {
			for u := range o {
				o[u] += x * m.w[k*m.out+u]
			}
		}
	}
	return m.o
}

func (m *meanLinear[T]) Backward(_ *train.Pass, b *sample.Block, _, dout []T, wantInput bool) []T {
	for i := range b.NumDst {
		d, a := dout[i*m.out:(i+1)*m.out], m.agg[i*m.in:(i+1)*m.in]
		for u, g := range d {
			m.gb[u] += g
		}
		for k, x := range a {
			for u, g := range d {
				m.gw[k*m.out+u] += x * g
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
		src, wt := sources(b, i)
		for k := range m.in {
			s := T(0)
			for u, g := range d {
				s += g * m.w[k*m.out+u]
			}
			for _, j := range src {
				m.dh[int(j)*m.in+k] += T(wt) * s
			}
		}
	}
	return m.dh
}

// meanLinearArch is the architecture value NewModel receives.
func meanLinearArch() train.Arch {
	return train.Arch{
		Name:  "meanlin",
		Doc:   "toy: mean over in-neighbours, then one linear map",
		New32: newMeanLinear[float32],
		New64: newMeanLinear[float64],
	}
}

// fixedSource serves one training batch per epoch (and nothing to
// evaluate).
type fixedSource struct{ b sample.Batch }

func (s *fixedSource) Steps(split string, _ int) (int, error) {
	if split == train.SplitTrain {
		return 1, nil
	}
	return 0, nil
}

func (s *fixedSource) Batch(_ string, _, _ int, b *sample.Batch) error {
	*b = s.b
	return nil
}

// toyBatch is two seeds (nodes 0 and 1) of a 6-node graph, sampled over
// two layers: block 0 maps the 6 nodes to the 4 that block 1 reads.
func toyBatch() sample.Batch {
	b0 := sample.Block{NumDst: 4, Nodes: []int64{0, 1, 2, 3, 4, 5}, Orig: []int64{0, 1, 2, 3, 4, 5},
		Indptr: []int32{0, 2, 4, 5, 5}, Indices: []int32{1, 4, 2, 5, 0}}
	b1 := sample.Block{NumDst: 2, Nodes: []int64{0, 1, 2, 3}, Orig: []int64{0, 1, 2, 3},
		Indptr: []int32{0, 2, 3}, Indices: []int32{2, 3, 0}}
	x := make([]float32, 6*3)
	for i := range x {
		x[i] = float32(i%7)/7 - 0.4
	}
	return sample.Batch{Blocks: []sample.Block{b0, b1}, X: x, Labels: []int32{2, 0}, GlobalSeeds: 2}
}

// refLoss is the mean softmax cross-entropy of the toy model over the toy
// batch, computed here in float64 from the parameters alone (layout: l0.w
// 3x4, l0.b 4, l1.w 4x3, l1.b 3; ReLU between the layers).
func refLoss(p []float32, b *sample.Batch) float64 {
	layer := func(blk *sample.Block, h []float64, in, out int, w, bias []float32) []float64 {
		o := make([]float64, blk.NumDst*out)
		for i := range blk.NumDst {
			src, wt := sources(blk, i)
			for u := range out {
				s := float64(bias[u])
				for k := range in {
					a := 0.0
					for _, j := range src {
						a += wt * h[int(j)*in+k]
					}
					s += a * float64(w[k*out+u])
				}
				o[i*out+u] = s
			}
		}
		return o
	}
	h := make([]float64, len(b.X))
	for i, v := range b.X {
		h[i] = float64(v)
	}
	h = layer(&b.Blocks[0], h, 3, 4, p[0:12], p[12:16])
	for i := range h {
		h[i] = math.Max(h[i], 0)
	}
	z := layer(&b.Blocks[1], h, 4, 3, p[16:28], p[28:31])
	loss := 0.0
	for i, y := range b.Labels {
		row := z[i*3 : (i+1)*3]
		zmax := slices.Max(row)
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(v - zmax)
		}
		loss += math.Log(sum) + zmax - row[y]
	}
	return loss / float64(len(b.Labels))
}

// TestToyArchTrains: a model of the toy architecture builds only with the
// architecture passed in, computes the loss its math says, and two Adam
// steps of the Trainer lower it.
func TestToyArchTrains(t *testing.T) {
	cfg := train.Config{Arch: "meanlin", InDim: 3, Hidden: 4, Classes: 3, Layers: 2}
	_, err := train.NewModel(cfg, 7)
	require.ErrorContains(t, err, `Arch "meanlin": want one of sage`, "nothing registered it globally")

	m, err := train.NewModel(cfg, 7, train.WithArchs(meanLinearArch()))
	require.NoError(t, err)
	require.Len(t, m.Params(), 3*4+4+4*3+3)
	p0 := slices.Clone(m.Params())
	require.Equal(t, make([]float32, 4), p0[12:16], "biases start at zero")

	src := &fixedSource{b: toyBatch()}
	want := refLoss(p0, &src.b)

	// The gradient Train leaves (scale 1/2: of the mean over the two
	// seeds) is the derivative of the toy math, by central differences
	// (small steps: a hidden unit of the toy batch sits 1e-3 from ReLU's
	// kink).
	loss, correct, err := m.Train(&src.b, 0.5, train.MaskKey{})
	require.NoError(t, err)
	require.InDelta(t, 2*want, loss, 1e-5, "Train returns the summed loss")
	require.GreaterOrEqual(t, correct, 0)
	for i := range p0 {
		pp, pm := slices.Clone(p0), slices.Clone(p0)
		pp[i] += 1e-5
		pm[i] -= 1e-5
		num := (refLoss(pp, &src.b) - refLoss(pm, &src.b)) / (float64(pp[i]) - float64(pm[i]))
		require.InDelta(t, num, m.Grads()[i], 1e-4, "gradient of parameter %d", i)
	}
	clear(m.Grads())
	tr, err := train.NewTrainer(train.Options{Adam: optim.DefaultAdam(0.05, 0), Seed: 7}, m, train.LocalReducer{}, src)
	require.NoError(t, err)

	r1, err := tr.TrainEpoch()
	require.NoError(t, err)
	require.InDelta(t, want, r1.Loss, 1e-5, "step 1 loss is the toy math at the initial weights")
	require.Equal(t, int64(2), r1.Seeds)
	p1 := slices.Clone(m.Params())
	require.NotEqual(t, p0, p1)
	for i := range p1 {
		// Adam's first step moves every parameter with a nonzero
		// gradient by about the learning rate.
		if d := math.Abs(float64(p1[i] - p0[i])); d != 0 {
			require.InDelta(t, 0.05, d, 1e-3, "parameter %d", i)
		}
	}

	r2, err := tr.TrainEpoch()
	require.NoError(t, err)
	require.InDelta(t, refLoss(p1, &src.b), r2.Loss, 1e-5, "step 2 loss is the toy math at the updated weights")
	require.Less(t, r2.Loss, r1.Loss, "two steps lower the loss")
	t.Logf("loss %.6f -> %.6f", r1.Loss, r2.Loss)
	require.Equal(t, int64(2), tr.Step())
}
