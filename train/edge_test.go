package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"mpignn/sample"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refEdgeScores scores one pair from its embeddings straight from the
// edge decoder's definition, in float64: relu((u ⊙ v)W1 + b1)W2 + b2, O
// outputs.
func refEdgeScores(cfg Config, p []float64, u, v []float64) []float64 {
	ts := map[string]Tensor{}
	for _, t := range cfg.Tensors() {
		ts[t.Name] = t
	}
	par := func(name string) []float64 { t := ts[name]; return p[t.Offset : t.Offset+t.Size()] }
	w1, b1, w2, b2 := par("dec.w1"), par("dec.b1"), par("dec.w2"), par("dec.b2")
	c, o := cfg.Classes, cfg.EdgeOut
	z := append([]float64(nil), b2...)
	for j := 0; j < c; j++ {
		a := b1[j]
		for k := 0; k < c; k++ {
			a += u[k] * v[k] * w1[k*c+j]
		}
		for t := range o {
			z[t] += math.Max(a, 0) * w2[j*o+t]
		}
	}
	return z
}

// edgeBatch is a batch of 9 pairs over the seeds of testCase's blocks with
// a target row each (classes or real values, a few unlabelled).
func edgeBatch(t *testing.T, cfg Config, seed uint64) (*Model, *sample.Batch, []float64) {
	t.Helper()
	m, blocks, x, _ := testCase(t, cfg, seed)
	r := rand.New(rand.NewPCG(seed, 3))
	pairs, _ := randPairs(r, 9, blocks[len(blocks)-1].NumDst)
	dim := cfg.EdgeOut
	if cfg.Targets == "" {
		dim = 1
	}
	y := make([]float32, 9*dim)
	for i := range y {
		switch {
		case i%4 == 2:
			y[i] = float32(math.NaN())
		case cfg.Targets == "":
			y[i] = float32(r.IntN(cfg.EdgeOut))
		default:
			y[i] = float32(r.NormFloat64())
		}
	}
	return m, &sample.Batch{Blocks: blocks, X: x, Pairs: pairs, Targets: y, TargetDim: dim}, to64(x)
}

// TestEdgeGradCheck checks the edge head's gradients (classes and real
// targets) through every architecture against float64 finite differences,
// its loss against the formula written out, and ScorePairs against the
// reference decoder.
func TestEdgeGradCheck(t *testing.T) {
	for _, kind := range []string{"", TargetsRegression} {
		for _, tc := range forEachArch([]gradCase{
			{"2layer", Config{InDim: 5, Hidden: 4, Classes: 4, Layers: 2}, false},
			{"2layer-dropout", Config{InDim: 5, Hidden: 6, Classes: 5, Layers: 2, Dropout: 0.3}, true},
		}) {
			name := "classes/" + tc.name
			if kind != "" {
				name = kind + "/" + tc.name
			}
			t.Run(name, func(t *testing.T) {
				cfg := tc.cfg
				cfg.Decoder, cfg.EdgeOut, cfg.Targets = DecoderMLP, 3, kind
				require.NoError(t, cfg.Validate())
				m, b, x := edgeBatch(t, cfg, 21)
				key := MaskKey{Seed: 5, Step: 2}
				n := mustNet(t, cfg, to64(m.Params()))
				loss, _, err := n.lossOf(b, dense(x), 1, tc.drop, key)
				require.NoError(t, err)
				// The loss written out from the reference decoder.
				h := n.out[len(b.Blocks)-1]
				c, o := cfg.Classes, cfg.EdgeOut
				p := to64(m.Params())
				want := 0.0
				for i := range len(b.Pairs) / 2 {
					u, v := int(b.Pairs[2*i]), int(b.Pairs[2*i+1])
					z := refEdgeScores(cfg, p, h[u*c:(u+1)*c], h[v*c:(v+1)*c])
					if kind == "" {
						y := b.Targets[i]
						if y != y {
							continue
						}
						s := 0.0
						for _, zk := range z {
							s += math.Exp(zk)
						}
						want += math.Log(s) - z[int(y)]
						continue
					}
					for j := range o {
						if y := b.Targets[i*o+j]; y == y {
							want += (z[j] - float64(y)) * (z[j] - float64(y)) / float64(o)
						}
					}
				}
				assert.InDelta(t, want, loss, 1e-10)
				n.backward(b.Blocks, tc.drop)
				checkGradients(t, n, cfg.Tensors(), func() float64 {
					l, _, err := n.lossOf(b, dense(x), 0, tc.drop, key)
					require.NoError(t, err)
					return l
				})
				// ScorePairs (float32) against the reference.
				if tc.drop {
					return
				}
				emb, err := m.Forward(b)
				require.NoError(t, err)
				k := len(b.Pairs) / 2
				hu, hv := make([]float32, k*c), make([]float32, k*c)
				for i := range k {
					copy(hu[i*c:], emb[int(b.Pairs[2*i])*c:(int(b.Pairs[2*i])+1)*c])
					copy(hv[i*c:], emb[int(b.Pairs[2*i+1])*c:(int(b.Pairs[2*i+1])+1)*c])
				}
				out := make([]float32, k*o)
				require.NoError(t, m.ScorePairs(hu, hv, out))
				for i := range k {
					ref := refEdgeScores(cfg, p, to64(hu[i*c:(i+1)*c]), to64(hv[i*c:(i+1)*c]))
					for j := range o {
						assert.InDelta(t, ref[j], out[i*o+j], 1e-4)
					}
				}
			})
		}
	}
}

// TestEdgeHeadRefuses: an edge predictor refuses batches it cannot score
// and configurations that are not one.
func TestEdgeHeadRefuses(t *testing.T) {
	cfg := Config{InDim: 5, Hidden: 4, Classes: 4, Layers: 2, Decoder: DecoderMLP, EdgeOut: 3}
	m, b, _ := edgeBatch(t, cfg, 3)
	bad := *b
	bad.Targets = append([]float32{5}, b.Targets[1:]...)
	_, _, err := m.Evaluate(&bad)
	assert.ErrorContains(t, err, "pair 0 class 5 outside [0,3)")
	bad = *b
	bad.Targets, bad.TargetDim = b.Targets[:4], 1
	_, _, err = m.Evaluate(&bad)
	assert.ErrorContains(t, err, "4 target values of width 1 for 9 pairs")
	for _, c := range []Config{
		{InDim: 5, Hidden: 4, Classes: 4, Layers: 2, Decoder: DecoderDot, EdgeOut: 3},
		{InDim: 5, Hidden: 4, Classes: 4, Layers: 2, Decoder: DecoderMLP, EdgeOut: 3, Targets: TargetsMultilabel},
		{InDim: 5, Hidden: 4, Classes: 4, Layers: 2, EdgeOut: -1},
	} {
		assert.Error(t, c.Validate(), "%+v", c)
	}
}
