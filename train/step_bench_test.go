package train

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"mpignn/sample"
	"mpignn/train/kernels"
)

// peerBlocks builds a block chain with the level sizes a batch of the
// peer-comparison run has (200k nodes, average in-degree 40, fanout
// 15,10,5, batch 1024): about 196k input nodes, 52k and 6k intermediate
// destinations, 1024 seeds. scale shrinks every level (1 = full size).
func peerBlocks(r *rand.Rand, scale int) []sample.Block {
	sizes := []int{196_000 / scale, 52_000 / scale, 6_000 / scale, 1024 / scale}
	return synthBlocks(r, sizes, []int{15, 10, 5}, 0)
}

// BenchmarkTrainStep times one full forward+backward of the peer-comparison
// model (100 -> 256 -> 256 -> 47, 3 layers, dropout 0.5) on one batch.
// Per-phase time is reported so the BLAS share can be seen.
func BenchmarkTrainStep(b *testing.B) {
	kernels.SetBLASThreads(runtime.GOMAXPROCS(0))
	for _, scale := range []int{1, 4} {
		b.Run(fmt.Sprintf("%s/batch=%d", kernels.BLASName, 1024/scale), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 4))
			cfg := Config{InDim: 100, Hidden: 256, Classes: 47, Layers: 3, Dropout: 0.5}
			blocks := peerBlocks(r, scale)
			x := randFeatures(r, blocks[0].NumSrc()*cfg.InDim)
			y := randLabels(r, blocks[2].NumDst, cfg.Classes)
			m, err := NewModel(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			var times PhaseTimes
			step := int64(0)
			for b.Loop() {
				w := startWatch(&times)
				if _, _, err := m.n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, dense(x), 1/1024., true, MaskKey{Seed: 1, Step: step}); err != nil {
					b.Fatal(err)
				}
				w.lap(PhaseForward)
				m.n.backward(blocks, true)
				w.lap(PhaseBackward)
				step++
			}
			n := float64(b.N)
			b.ReportMetric(times.Seconds(PhaseForward)/n*1e3, "fwd-ms/op")
			b.ReportMetric(times.Seconds(PhaseBackward)/n*1e3, "bwd-ms/op")
			b.ReportMetric(stepFlops(cfg, blocks)*n/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// stepFlops counts the dense matrix-product flops of one training step.
func stepFlops(cfg Config, blocks []sample.Block) float64 {
	f := 0.0
	for l, bl := range blocks {
		in, out := cfg.LayerDims(l)
		one := 2 * float64(bl.NumDst) * float64(in) * float64(out)
		f += 2 * one // forward: self and neighbor products
		f += 2 * one // weight gradients
		if l > 0 {
			f += 2 * one // input gradients
		}
	}
	return f
}
