package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"mpignn/sample"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkCases are link-predictor configurations for every architecture and
// both decoders, with and without dropout.
func linkCases() []gradCase {
	var out []gradCase
	for _, dec := range Decoders() {
		for _, tc := range forEachArch([]gradCase{
			{"2layer", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2}, false},
			{"2layer-dropout", Config{InDim: 5, Hidden: 6, Classes: 4, Layers: 2, Dropout: 0.3, InputDropout: 0.2}, true},
			{"3layer", Config{InDim: 5, Hidden: 6, Classes: 5, Layers: 3}, false},
			// Between the layers: the embeddings come from the JK map.
			{"3layer-residual-norm-jk-cat-dropout", Config{InDim: 5, Hidden: 6, Classes: 5, Layers: 3, Residual: true, Norm: NormLayer, JK: JKCat, Dropout: 0.3}, true},
			{"2layer-residual-norm-jk-max", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2, Residual: true, Norm: NormLayer, JK: JKMax}, false},
		}) {
			tc.cfg.Decoder = dec
			tc.name = dec + "/" + tc.name
			out = append(out, tc)
		}
	}
	return out
}

// randPairs draws n pairs over seeds (repeats and self-pairs allowed, as
// negatives may produce them) with alternating labels.
func randPairs(r *rand.Rand, n, seeds int) ([]int32, []float32) {
	pairs := make([]int32, 2*n)
	labels := make([]float32, n)
	for i := range labels {
		pairs[2*i], pairs[2*i+1] = int32(r.IntN(seeds)), int32(r.IntN(seeds))
		labels[i] = float32(i % 2)
	}
	return pairs, labels
}

// refScore scores one pair from its embeddings straight from the decoder's
// definition, in float64.
func refScore(cfg Config, p []float64, u, v []float64) float64 {
	if cfg.Decoder == DecoderDot {
		s := 0.0
		for k := range u {
			s += u[k] * v[k]
		}
		return s
	}
	ts := map[string]Tensor{}
	for _, t := range cfg.Tensors() {
		ts[t.Name] = t
	}
	par := func(name string) []float64 { t := ts[name]; return p[t.Offset : t.Offset+t.Size()] }
	w1, b1, w2, b2 := par("dec.w1"), par("dec.b1"), par("dec.w2"), par("dec.b2")
	c := cfg.Classes
	z := b2[0]
	for j := 0; j < c; j++ {
		a := b1[j]
		for k := 0; k < c; k++ {
			a += u[k] * v[k] * w1[k*c+j]
		}
		z += math.Max(a, 0) * w2[j]
	}
	return z
}

func TestLinkConfig(t *testing.T) {
	node := Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2}
	for _, tc := range []struct {
		dec    string
		err    string
		extra  int
		tensor []string
	}{
		{"", "", 0, nil},
		{DecoderDot, "", 0, nil},
		{DecoderMLP, "", 3*3 + 3 + 3 + 1, []string{"dec.w1", "dec.b1", "dec.w2", "dec.b2"}},
		{"bilinear", `Decoder "bilinear": want dot or mlp`, 0, nil},
	} {
		t.Run(tc.dec, func(t *testing.T) {
			cfg := node
			cfg.Decoder = tc.dec
			if tc.err != "" {
				require.ErrorContains(t, cfg.Validate(), tc.err)
				return
			}
			require.NoError(t, cfg.Validate())
			assert.Equal(t, node.NumParams()+tc.extra, cfg.NumParams())
			var names []string
			for _, ts := range cfg.Tensors()[len(node.Tensors()):] {
				names = append(names, ts.Name)
				assert.Equal(t, cfg.Layers, ts.Layer)
				assert.Equal(t, ts.Name == "dec.b1" || ts.Name == "dec.b2", ts.IsBias(), ts.Name)
			}
			assert.Equal(t, tc.tensor, names)
			// The decoder comes after the layers: the GNN's initial weights
			// are those of the node config.
			pn, err := InitParams(node, 9)
			require.NoError(t, err)
			pl, err := InitParams(cfg, 9)
			require.NoError(t, err)
			assert.Equal(t, pn, pl[:len(pn)])
			if tc.dec == DecoderMLP {
				assert.NotZero(t, slices.Max(pl[len(pn):]))
			}
		})
	}
}

// TestLinkGradCheck compares the analytic gradient of the summed link loss
// (every parameter, decoder included) with central differences on the
// float64 core.
func TestLinkGradCheck(t *testing.T) {
	for _, tc := range linkCases() {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, x32, _ := testCase(t, tc.cfg, 21)
			r := rand.New(rand.NewPCG(5, 5))
			pairs, labels := randPairs(r, 7, blocks[len(blocks)-1].NumDst)
			x := to64(x32)
			key := MaskKey{Seed: 5, Step: 2}
			n := mustNet(t, tc.cfg, to64(m.Params()))
			_, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: labels}, dense(x), 1, tc.drop, key)
			require.NoError(t, err)
			n.backward(blocks, tc.drop)
			lossAt := func() float64 {
				l, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: labels}, dense(x), 0, tc.drop, key)
				require.NoError(t, err)
				return l
			}
			checkGradients(t, n, tc.cfg.Tensors(), lossAt)
		})
	}
}

// TestLinkFloat32 checks the production float32 path against float64, and
// Forward + ScorePairs against Evaluate and the reference decoder.
func TestLinkFloat32(t *testing.T) {
	for _, tc := range linkCases() {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, x, _ := testCase(t, tc.cfg, 23)
			r := rand.New(rand.NewPCG(6, 6))
			pairs, labels := randPairs(r, 9, blocks[len(blocks)-1].NumDst)
			key := MaskKey{Seed: 9, Step: 4}
			n := mustNet(t, tc.cfg, to64(m.Params()))
			want, wantC, err := n.lossOf(&sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: labels}, dense(to64(x)), 0.5, tc.drop, key)
			require.NoError(t, err)
			n.backward(blocks, tc.drop)
			clear(m.Grads())
			got, gotC, err := fb(m.n, &sample.Batch{Blocks: blocks, Pairs: pairs, PairLabels: labels}, dense(x), 0.5, tc.drop, key)
			require.NoError(t, err)
			assert.InDelta(t, want, got, 1e-4*(1+math.Abs(want)))
			assert.Equal(t, wantC, gotC)
			for i, g := range m.Grads() {
				require.InDelta(t, n.grads[i], float64(g), 1e-4*(1+math.Abs(n.grads[i])), "grad %d", i)
			}

			// Evaluation: Forward + ScorePairs give the logits Evaluate
			// scores, and they match the reference decoder.
			h, err := m.Forward(&sample.Batch{Blocks: blocks, X: x})
			require.NoError(t, err)
			h = slices.Clone(h)
			c := tc.cfg.Classes
			np := len(labels)
			hu, hv := make([]float32, np*c), make([]float32, np*c)
			for i := 0; i < np; i++ {
				copy(hu[i*c:(i+1)*c], h[int(pairs[2*i])*c:])
				copy(hv[i*c:(i+1)*c], h[int(pairs[2*i+1])*c:])
			}
			scores := make([]float32, np)
			require.NoError(t, m.ScorePairs(hu, hv, scores))
			again := make([]float32, np)
			require.NoError(t, m.ScorePairs(hu, hv, again))
			assert.Equal(t, scores, again, "ScorePairs must be repeatable")
			p64 := to64(m.Params())
			wantLoss, wantCorrect := 0.0, 0
			for i := 0; i < np; i++ {
				z := refScore(tc.cfg, p64, to64(hu[i*c:(i+1)*c]), to64(hv[i*c:(i+1)*c]))
				assert.InDelta(t, z, float64(scores[i]), 1e-5*(1+math.Abs(z)))
				y := float64(labels[i])
				// The stable form: a sum aggregator's scores saturate the
				// sigmoid, where -log(1-sigmoid(z)) is +Inf in float64.
				wantLoss += math.Max(z, 0) - z*y + math.Log1p(math.Exp(-math.Abs(z)))
				if (z > 0) == (y == 1) {
					wantCorrect++
				}
			}
			loss, correct, err := m.Evaluate(&sample.Batch{Blocks: blocks, X: x, Pairs: pairs, PairLabels: labels})
			require.NoError(t, err)
			assert.InDelta(t, wantLoss, loss, 1e-4*(1+wantLoss))
			assert.Equal(t, wantCorrect, correct)
		})
	}
}

func TestBCEWithLogitsStable(t *testing.T) {
	z := []float64{-800, -30, -1, 0, 2, 40, 900}
	for _, y := range []float32{0, 1} {
		labels := make([]float32, len(z))
		for i := range labels {
			labels[i] = y
		}
		dz := make([]float64, len(z))
		for i, zi := range z {
			loss, correct := bceWithLogits([]float64{zi}, labels[i:i+1], 1, dz[i:i+1], make([]float64, 1))
			// Reference: softplus(z) - z·y, with softplus computed safely.
			want := math.Max(zi, 0) + math.Log1p(math.Exp(-math.Abs(zi))) - zi*float64(y)
			assert.False(t, math.IsInf(loss, 0) || math.IsNaN(loss), "z=%v", zi)
			assert.InDelta(t, want, loss, 1e-12*(1+want))
			assert.InDelta(t, sigmoid(zi)-float64(y), dz[i], 1e-15)
			assert.Equal(t, (zi > 0) == (y == 1), correct == 1, "z=%v y=%v", zi, y)
		}
	}
	assert.InDelta(t, math.Ln2, func() float64 {
		l, _ := bceWithLogits([]float64{0}, []float32{1}, 1, make([]float64, 1), make([]float64, 1))
		return l
	}(), 1e-15)
}

func TestLinkBadInput(t *testing.T) {
	cfg := Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2, Decoder: DecoderMLP}
	m, blocks, x, y := testCase(t, cfg, 3)
	seeds := blocks[len(blocks)-1].NumDst
	for _, tc := range []struct {
		name   string
		pairs  []int32
		labels []float32
		want   string
	}{
		{"index out of range", []int32{0, int32(seeds)}, []float32{1}, "outside [0,"},
		{"negative index", []int32{-1, 0}, []float32{0}, "outside [0,"},
		{"odd pairs", []int32{0, 1, 2}, []float32{1}, "two per pair"},
		{"soft label", []int32{0, 1}, []float32{0.5}, "neither 0 nor 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := fb(m.n, &sample.Batch{Blocks: blocks, Pairs: tc.pairs, PairLabels: tc.labels}, dense(x), 1, false, MaskKey{})
			require.ErrorContains(t, err, tc.want)
			_, _, err = m.Evaluate(&sample.Batch{Blocks: blocks, X: x, Pairs: tc.pairs, PairLabels: tc.labels})
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, _, err := fb(m.n, &sample.Batch{Blocks: blocks, Labels: y}, dense(x), 1, false, MaskKey{})
	require.ErrorContains(t, err, "trained on pairs")
	require.ErrorContains(t, m.ScorePairs(make([]float32, 5), make([]float32, 6), make([]float32, 2)), "embedding values")

	node, err := NewModel(Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2}, 1)
	require.NoError(t, err)
	_, _, err = fb(node.n, &sample.Batch{Blocks: blocks, Pairs: []int32{0, 1}, PairLabels: []float32{1}}, dense(x), 1, false, MaskKey{})
	require.ErrorContains(t, err, "needs a link predictor")
	require.ErrorContains(t, node.ScorePairs(nil, nil, nil), "no decoder")
}

func TestEstimateLinkTraining(t *testing.T) {
	node := Config{InDim: 16, Hidden: 32, Classes: 32, Layers: 2}
	dot, mlp := node, node
	dot.Decoder, mlp.Decoder = DecoderDot, DecoderMLP
	fan := []int{5, 5}
	en := node.EstimateTraining(fan, nil, 200, 10000)
	ed := dot.EstimateLinkTraining(fan, nil, 100, 10000)
	em := mlp.EstimateLinkTraining(fan, nil, 100, 10000)
	assert.Equal(t, en.Params, ed.Params, "the dot decoder has no parameters")
	assert.Equal(t, en.Params+4*float64(32*32+32+32+1), em.Params)
	assert.Greater(t, ed.Activations, en.Activations, "pair buffers come on top")
	assert.Greater(t, em.Activations, ed.Activations, "the MLP keeps hidden rows")
}
