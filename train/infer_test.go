package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/sample"
)

// layerwise runs the model layer by layer over the whole graph g, as
// dtrain.Infer does on one rank: block l is every node with all its
// in-neighbours, its input rows are the previous layer's rows of its nodes.
// It returns the last layer's rows of every node, in node order.
func layerwise(t *testing.T, m *Model, g sample.Graph, x []float32, chunk int) []float32 {
	t.Helper()
	n := g.NumNodes()
	all := make([]int64, n)
	for i := range all {
		all[i] = int64(i)
	}
	prev, inW := x, m.Layerwise().InDim(0)
	var deg []int32      // in-degree without self-loops, from layer 0's blocks
	var kept [][]float32 // every layer's rows, for jumping knowledge
	for l := 0; l < m.Layerwise().NumLayers(); l++ {
		w := m.Layerwise().OutDim(l)
		next := make([]float32, int(n)*w)
		if l == 0 {
			deg = make([]int32, n)
		}
		for lo := int64(0); lo < n; lo += int64(chunk) {
			hi := min(lo+int64(chunk), n)
			blocks, err := sample.SampleBlocks(g, all[lo:hi], all[lo:hi], []int{-1}, sample.Key{}, false)
			require.NoError(t, err)
			b := &blocks[0]
			h := make([]float32, 0, b.NumSrc()*inW)
			var srcDeg []int32
			for _, v := range b.Nodes {
				h = append(h, prev[int(v)*inW:(int(v)+1)*inW]...)
				srcDeg = append(srcDeg, deg[v])
			}
			if l == 0 {
				for i := 0; i < b.NumDst; i++ {
					for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
						if int(j) != i {
							deg[b.Nodes[i]]++
						}
					}
				}
			}
			out, err := m.Layerwise().Layer(l, b, h, srcDeg)
			require.NoError(t, err)
			copy(next[lo*int64(w):hi*int64(w)], out)
		}
		prev, inW = next, w
		kept = append(kept, next)
	}
	if m.Layerwise().JK() {
		out, err := m.Layerwise().JKOutput(kept, int(n))
		require.NoError(t, err)
		require.Len(t, out, int(n)*m.Layerwise().OutWidth())
		return out
	}
	return prev
}

// randomGraph is a small random directed graph (with a few self-loops and
// isolated nodes) as a canonical in-CSR.
func randomGraph(r *rand.Rand, n int64, edges int) sample.Graph {
	src, dst := make([]int64, edges), make([]int64, edges)
	for e := range src {
		src[e], dst[e] = r.Int64N(n), r.Int64N(n-3) // the last 3 nodes have no in-edges
	}
	return sample.CSRGraph{In: graph.BuildInCSR(n, src, dst, graph.BuildOptions{})}
}

// TestInferLayerMatchesFullForward: layer-wise inference (each layer once
// for every node from all its in-neighbours) gives every node the logits
// that the ordinary forward pass gives it over its full L-hop
// neighbourhood (fanout -1 at every layer), for every homogeneous
// architecture, whatever the chunking.
func TestInferLayerMatchesFullForward(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"sage", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 2}},
		{"gcn-3", Config{Arch: ArchGCN, InDim: 6, Hidden: 8, Classes: 4, Layers: 3}},
		{"gat", Config{Arch: ArchGAT, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Opts: GATOpts(2, 0)}},
		{"sage-1", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 1}},
		{"sage-max", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Opts: SAGEOpts(SAGEMax)}},
		{"sage-sum", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Opts: SAGEOpts(SAGESum)}},
		{"sage-pool-3", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 3, Opts: SAGEOpts(SAGEPool)}},
		{"sage-residual-norm", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Residual: true, Norm: NormLayer}},
		{"sage-residual-norm-jk-cat", Config{Arch: ArchSAGE, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Residual: true, Norm: NormLayer, JK: JKCat}},
		{"gcn-3-residual-jk-max", Config{Arch: ArchGCN, InDim: 6, Hidden: 8, Classes: 4, Layers: 3, Residual: true, JK: JKMax}},
		{"gat-norm-jk-last", Config{Arch: ArchGAT, InDim: 6, Hidden: 8, Classes: 4, Layers: 2, Opts: GATOpts(2, 0), Norm: NormLayer, JK: JKLast}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 9))
			const n = 60
			g := randomGraph(r, n, 240)
			m, err := NewModel(c.cfg, 3)
			require.NoError(t, err)
			x := make([]float32, n*c.cfg.InDim)
			for i := range x {
				x[i] = r.Float32()*2 - 1
			}
			var want []float32
			for v := int64(0); v < n; v++ {
				blocks, err := sample.SampleBlocks(g, []int64{v}, []int64{v}, repeatFanout(-1, c.cfg.Layers), sample.Key{}, false)
				require.NoError(t, err)
				var xb []float32
				for _, u := range blocks[0].Nodes {
					xb = append(xb, x[int(u)*c.cfg.InDim:(int(u)+1)*c.cfg.InDim]...)
				}
				z, err := m.Forward(&sample.Batch{Blocks: blocks, X: xb})
				require.NoError(t, err)
				want = append(want, z...)
			}
			for _, chunk := range []int{1, 7, n} {
				got := layerwise(t, m, g, x, chunk)
				require.Len(t, got, len(want))
				for i := range want {
					require.InDelta(t, want[i], got[i], 1e-5*math.Max(1, math.Abs(float64(want[i]))), "chunk %d: value %d", chunk, i)
				}
			}
			loss, correct, err := m.Layerwise().Score(want[:4*c.cfg.Classes], []int32{0, 1, 2, 3})
			require.NoError(t, err)
			assert.Greater(t, loss, 0.0)
			assert.LessOrEqual(t, correct, 4)
			assert.Len(t, m.Layerwise().Predict(want, nil), n)
		})
	}
}

func repeatFanout(f, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// TestInferLayerErrors: malformed calls are refused with an error.
func TestInferLayerErrors(t *testing.T) {
	m, err := NewModel(Config{Arch: ArchGCN, InDim: 3, Hidden: 4, Classes: 2, Layers: 2}, 1)
	require.NoError(t, err)
	b := &sample.Block{NumDst: 1, Nodes: []int64{0, 1}, Orig: []int64{0, 1}, Indptr: []int32{0, 1}, Indices: []int32{1}}
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"layer", func() error { _, err := m.Layerwise().Layer(2, b, make([]float32, 6), nil); return err }, "has 2 layers"},
		{"width", func() error { _, err := m.Layerwise().Layer(0, b, make([]float32, 5), nil); return err }, "want 6"},
		{"degrees", func() error { _, err := m.Layerwise().Layer(1, b, make([]float32, 8), nil); return err }, "source degrees"},
		{"block", func() error {
			_, err := m.Layerwise().Layer(0, &sample.Block{NumDst: 1, Nodes: []int64{0}, Orig: []int64{0}, Indptr: []int32{0, 1}, Indices: []int32{3}}, make([]float32, 3), nil)
			return err
		}, "outside"},
		{"homogeneous input", func() error { _, err := m.Layerwise().Input(0, nil); return err }, "homogeneous"},
		{"labels", func() error { _, _, err := m.Layerwise().Score(make([]float32, 3), []int32{0}); return err }, "3 values"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.ErrorContains(t, c.call(), c.want)
		})
	}
}

// TestGCNNormSym: with GCNNorm "sym" the first GCN layer of layer-wise
// inference is GCNConv's out_i = b + (sum over j in N(i) and i of
// x_j/sqrt(d_i·d_j))·W with d = in-degree + 1, the sources' degrees taken
// from srcDeg; the default stays the mean (1/d_i); the training passes,
// which lack those degrees, refuse it; other models and values are refused.
func TestGCNNormSym(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, in, out = 40, 5, 3
	g := randomGraph(r, n, 160)
	x := make([]float32, n*in)
	for i := range x {
		x[i] = r.Float32()*2 - 1
	}
	all := make([]int64, n)
	for i := range all {
		all[i] = int64(i)
	}
	blocks, err := sample.SampleBlocks(g, all, all, []int{-1}, sample.Key{}, false)
	require.NoError(t, err)
	b := &blocks[0]
	h := make([]float32, 0, b.NumSrc()*in)
	for _, v := range b.Nodes {
		h = append(h, x[int(v)*in:(int(v)+1)*in]...)
	}
	deg := make([]int32, n) // by node id
	for i := 0; i < b.NumDst; i++ {
		for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			if int(j) != i {
				deg[b.Nodes[i]]++
			}
		}
	}
	srcDeg := make([]int32, b.NumSrc())
	for k, v := range b.Nodes {
		srcDeg[k] = deg[v]
	}
	for _, norm := range []string{"", GCNNormSym} {
		cfg := Config{Arch: ArchGCN, InDim: in, Classes: out, Layers: 1}
		if norm != "" {
			cfg.Opts = cfg.Opts.With(gcnNormKey, norm)
		}
		m, err := NewModel(cfg, 5)
		require.NoError(t, err)
		p := m.Params()
		for i := range p {
			p[i] = float32(math.Sin(float64(i)))
		}
		w, bias := p[:in*out], p[in*out:]
		got, err := m.Layerwise().Layer(0, b, h, srcDeg)
		require.NoError(t, err)
		for i := 0; i < b.NumDst; i++ {
			di := float64(1 + deg[b.Nodes[i]])
			agg := make([]float64, in)
			add := func(j int, c float64) {
				for k := range agg {
					agg[k] += c * float64(h[j*in+k])
				}
			}
			add(i, 1/di)
			for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
				if int(j) == i {
					continue
				}
				dj := di // mpignn's first layer: the mean
				if norm == GCNNormSym {
					dj = float64(1 + deg[b.Nodes[j]])
				}
				add(int(j), 1/math.Sqrt(di*dj))
			}
			for c := 0; c < out; c++ {
				want := float64(bias[c])
				for k := range agg {
					want += agg[k] * float64(w[k*out+c])
				}
				require.InDelta(t, want, got[i*out+c], 1e-5, "norm %q node %d class %d", norm, i, c)
			}
		}
		if norm == GCNNormSym {
			_, err = m.Forward(&sample.Batch{Blocks: blocks, X: h})
			require.ErrorContains(t, err, "gcn_norm sym needs every first-layer source's full in-degree")
		}
	}
	for _, c := range []Config{
		{Arch: ArchSAGE, InDim: in, Classes: out, Layers: 1, Opts: Opts("").With(gcnNormKey, GCNNormSym)},
		{Arch: ArchGCN, InDim: in, Classes: out, Layers: 1, Opts: Opts("").With(gcnNormKey, "both")},
	} {
		require.Error(t, c.Validate(), "%+v", c)
	}
}
