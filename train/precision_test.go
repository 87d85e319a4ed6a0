package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/sample"
	"mpignn/train/kernels"
)

// TestTrainBF16 trains models of every kind of layer product (dense and
// sparse inputs, attention, edge features, typed relations, the maps
// between layers) three steps with their layer products in bf16 (the
// emulation, which runs the same path on this project's AVX2 CPUs): the
// same bits on 1 and 3 threads; losses within bf16 rounding of fp32's; and
// weights that are not fp32's bits (the products did round), yet within a
// step size of them.
func TestTrainBF16(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on large blocks")
	}
	want := []string{"sage", "sage-sparse", "sage-pool", "gcn", "gat-edge", "gin", "gine", "gatv2",
		"sage-residual-norm-jk-cat", "gcn-link-mlp", "rgcn-edge", "hsage"}
	for _, tc := range threadModelCases() {
		if !slices.Contains(want, tc.name) {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			fp32 := trainFew(t, tc)
			tc.bf16 = true
			one := atThreads(1, func() []uint64 { return trainFew(t, tc) })
			three := atThreads(3, func() []uint64 { return trainFew(t, tc) })
			require.True(t, slices.Equal(one, three), "bf16: 1 and 3 threads differ")
			for s := range 3 {
				l32, l16 := math.Float64frombits(fp32[s]), math.Float64frombits(one[s])
				require.InDelta(t, l32, l16, 2e-2*math.Abs(l32), "loss of step %d", s)
			}
			p32, p16 := fp32[3:], one[3:]
			require.False(t, slices.Equal(p32, p16), "bf16 weights are fp32's bits: nothing was rounded")
			// Adam moves a weight by at most about lr (0.01) per step.
			diff := 0.0
			for i := range p32 {
				a := float64(math.Float32frombits(uint32(p32[i])))
				b := float64(math.Float32frombits(uint32(p16[i])))
				diff = max(diff, math.Abs(a-b))
			}
			t.Logf("max |w_bf16 - w_fp32| = %.3g after 3 steps", diff)
			require.Less(t, diff, 0.06)
		})
	}
}

// TestBF16FollowsWeights: a bf16 model rounds its weights anew for every
// pass, so after its weights change (an optimizer step, a restore) its
// output is that of a model built with the new weights, sampled and
// layer-wise alike; and at fp32 it is not the bf16 output.
func TestBF16FollowsWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cfg := Config{Arch: ArchSAGE, InDim: 24, Hidden: 32, Classes: 6, Layers: 2}
	var b sample.Batch
	b.Blocks = synthBlocks(r, []int{3000, 800, 200}, []int{8, 6}, 9)
	b.X = randFeatures(r, b.Blocks[0].NumSrc()*cfg.InDim)
	forward := func(m *Model) []float32 {
		out, err := m.Forward(&b)
		require.NoError(t, err)
		return append([]float32(nil), out...)
	}
	layer0 := func(m *Model) []float32 {
		out, err := m.Layerwise().Layer(0, &b.Blocks[0], b.X, nil)
		require.NoError(t, err)
		return append([]float32(nil), out...)
	}
	newModel := func(seed uint64) *Model {
		m, err := NewModel(cfg, seed)
		require.NoError(t, err)
		p := kernels.NewBF16Emulated()
		t.Cleanup(p.Close)
		m.UseBF16(p)
		return m
	}
	changed, fresh := newModel(1), newModel(2)
	forward(changed) // rounds seed 1's weights
	layer0(changed)
	copy(changed.Params(), fresh.Params())
	require.Equal(t, forward(fresh), forward(changed), "sampled pass after the weights changed")
	require.Equal(t, layer0(fresh), layer0(changed), "layer-wise pass after the weights changed")
	fp32, err := NewModel(cfg, 2)
	require.NoError(t, err)
	require.NotEqual(t, forward(fp32), forward(fresh), "bf16 and fp32 outputs")
}
