package train

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/sample"
)

// refForward is an independent, loop-only float64 forward pass written
// straight from each architecture's definition, used to check the BLAS
// version.
func refForward(cfg Config, p []float64, blocks []sample.Block, x []float64, train bool, key MaskKey) []float64 {
	ts := map[string]Tensor{}
	for _, t := range cfg.Tensors() {
		ts[t.Name] = t
	}
	par := func(l int, name string) []float64 {
		t, ok := ts[fmt.Sprintf("l%d.%s", l, name)]
		if !ok {
			panic("no tensor " + name)
		}
		return p[t.Offset : t.Offset+t.Size()]
	}
	h := x
	if train && cfg.InputDropout > 0 {
		h = make([]float64, len(x))
		for i, v := range blocks[0].Orig {
			for k := 0; k < cfg.InDim; k++ {
				if DropoutKeep(key, InputLayer, v, k, cfg.InputDropout) {
					h[i*cfg.InDim+k] = x[i*cfg.InDim+k] / (1 - float64(cfg.InputDropout))
				}
			}
		}
	}
	var outs [][]float64
	for l := range blocks {
		b := &blocks[l]
		in, out := cfg.LayerDims(l)
		var o []float64
		switch cfg.ArchName() {
		case ArchSAGE:
			var pool [2][]float64
			if sageAggr(cfg) == SAGEPool {
				pool = [2][]float64{par(l, "w_pool"), par(l, "b_pool")}
			}
			o = refSAGE(sageAggr(cfg), b, h, in, out, par(l, "w_self"), par(l, "w_neigh"), par(l, "b"), pool)
		case ArchGCN:
			var prev *sample.Block
			if l > 0 {
				prev = &blocks[l-1]
			}
			o = refGCN(b, prev, h, in, out, par(l, "w"), par(l, "b"))
		case ArchGAT:
			var we, ae []float64
			if cfg.EdgeDim > 0 {
				we, ae = par(l, "w_edge"), par(l, "att_edge")
			}
			o = refGAT(cfg, l, b, h, par(l, "w"), par(l, "att_src"), par(l, "att_dst"), par(l, "b"), we, ae, train, key)
		case ArchGATv2:
			var we []float64
			if cfg.EdgeDim > 0 {
				we = par(l, "w_edge")
			}
			o = refGATv2(cfg, l, b, h, par(l, "w_l"), par(l, "b_l"), par(l, "w_r"), par(l, "b_r"), par(l, "att"), par(l, "b"), we, train, key)
		case ArchGIN, ArchGINE:
			o = refGIN(cfg, b, h, in, out, func(name string) []float64 { return par(l, name) })
		default:
			panic("no reference for " + cfg.ArchName())
		}
		if !cfg.convToOut(l) {
			for i := 0; i < b.NumDst; i++ {
				if cfg.Norm == NormLayer {
					refLayerNorm(o[i*out:(i+1)*out], par(l, "norm.w"), par(l, "norm.b"))
				}
				for u := 0; u < out; u++ {
					z := math.Max(o[i*out+u], 0)
					if cfg.Residual && in == out {
						z += h[i*in+u]
					} else if cfg.Residual {
						pw := par(l, "res.w")
						for k := 0; k < in; k++ {
							z += h[i*in+k] * pw[k*out+u]
						}
					}
					if train && cfg.Dropout > 0 {
						if DropoutKeep(key, l, b.Orig[i], u, cfg.Dropout) {
							z /= 1 - float64(cfg.Dropout)
						} else {
							z = 0
						}
					}
					o[i*out+u] = z
				}
			}
		}
		outs = append(outs, o)
		h = o
	}
	if cfg.JK != "" {
		h = refJK(cfg, outs, blocks[len(blocks)-1].NumDst, p, ts)
	}
	return h
}

// refLayerNorm normalises row in place: (v - mean)/sqrt(var + 1e-5)·g + b.
func refLayerNorm(row, g, b []float64) {
	mean, sq := 0.0, 0.0
	for _, v := range row {
		mean += v
	}
	mean /= float64(len(row))
	for _, v := range row {
		sq += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(sq/float64(len(row)) + 1e-5)
	for k, v := range row {
		row[k] = (v-mean)/sd*g[k] + b[k]
	}
}

// refJK is jumping knowledge over the first s rows of every layer's
// output, then the map jk.w, jk.b.
func refJK(cfg Config, outs [][]float64, s int, p []float64, ts map[string]Tensor) []float64 {
	hd := cfg.Hidden
	w, b := ts["jk.w"], ts["jk.b"]
	res := make([]float64, s*cfg.Classes)
	for i := 0; i < s; i++ {
		var row []float64
		switch cfg.JK {
		case JKCat:
			for _, o := range outs {
				row = append(row, o[i*hd:(i+1)*hd]...)
			}
		case JKMax:
			row = slices.Clone(outs[0][i*hd : (i+1)*hd])
			for _, o := range outs[1:] {
				for k := range row {
					row[k] = math.Max(row[k], o[i*hd+k])
				}
			}
		case JKLast:
			row = outs[len(outs)-1][i*hd : (i+1)*hd]
		}
		for c := 0; c < cfg.Classes; c++ {
			z := p[b.Offset+c]
			for k, v := range row {
				z += v * p[w.Offset+k*cfg.Classes+c]
			}
			res[i*cfg.Classes+c] = z
		}
	}
	return res
}

// refSAGE: h_i·W_self + AGG_j m_j·W_neigh + b with AGG the mean, sum or
// elementwise max of m_j = h_j, or for pool the max of m_j =
// relu(h_j·W_pool + b_pool) (pool = {W_pool, b_pool}); no neighbours: 0.
func refSAGE(aggr string, b *sample.Block, h []float64, in, out int, ws, wn, bias []float64, pool [2][]float64) []float64 {
	msg := func(j, k int) float64 {
		if aggr != SAGEPool {
			return h[j*in+k]
		}
		z := pool[1][k]
		for c := 0; c < in; c++ {
			z += h[j*in+c] * pool[0][c*in+k]
		}
		return math.Max(z, 0)
	}
	o := make([]float64, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		agg := make([]float64, in)
		deg := int(b.Indptr[i+1] - b.Indptr[i])
		for k := 0; k < in; k++ {
			for e, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
				v := msg(int(j), k)
				switch {
				case aggr == SAGEMean:
					agg[k] += v / float64(deg)
				case aggr == SAGESum:
					agg[k] += v
				case e == 0:
					agg[k] = v
				default:
					agg[k] = math.Max(agg[k], v)
				}
			}
		}
		for u := 0; u < out; u++ {
			z := bias[u]
			for k := 0; k < in; k++ {
				z += h[i*in+k]*ws[k*out+u] + agg[k]*wn[k*out+u]
			}
			o[i*out+u] = z
		}
	}
	return o
}

// sampledNeighbors lists destination i's sampled sources without self-loops.
func sampledNeighbors(b *sample.Block, i int) []int {
	var js []int
	for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
		if int(j) != i {
			js = append(js, int(j))
		}
	}
	return js
}

// refGCN: b + sum_{j in N(i)+i} h_j W / sqrt(d_i d_j), degrees as documented
// on gcnLayer (sampled in-degree + 1 where the node is a destination: block
// l for destinations, block l-1 for sources; d_j = d_i on the first layer).
func refGCN(b, prev *sample.Block, h []float64, in, out int, w, bias []float64) []float64 {
	o := make([]float64, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		di := float64(1 + len(sampledNeighbors(b, i)))
		srcDeg := func(j int) float64 {
			if prev == nil {
				return di
			}
			return float64(1 + len(sampledNeighbors(prev, j)))
		}
		for u := 0; u < out; u++ {
			z := bias[u]
			for _, j := range append([]int{i}, sampledNeighbors(b, i)...) {
				c := 1 / math.Sqrt(di*srcDeg(j))
				for k := 0; k < in; k++ {
					z += c * h[j*in+k] * w[k*out+u]
				}
			}
			o[i*out+u] = z
		}
	}
	return o
}

// refEdgeFeatures returns the features of destination i's attention edges
// (the self edge, then sampledNeighbors' edges): a sampled edge's own, the
// self edge's the mean of the others' (PyG's fill_value 'mean'; zero
// without others).
func refEdgeFeatures(b *sample.Block, i int) [][]float64 {
	d := b.EdgeFeatDim
	self := make([]float64, d)
	out := [][]float64{self}
	for p := b.Indptr[i]; p < b.Indptr[i+1]; p++ {
		if int(b.Indices[p]) == i {
			continue
		}
		f := to64(b.EdgeFeat[int(p)*d : int(p+1)*d])
		out = append(out, f)
		for k, v := range f {
			self[k] += v
		}
	}
	if n := len(out) - 1; n > 0 {
		for k := range self {
			self[k] /= float64(n)
		}
	}
	return out
}

// refGAT: per head, softmax over the self edge and the sampled neighbors of
// LeakyReLU(a_src·z_j + a_dst·z_i [+ a_edge·(x_ij·W_e)]), attention dropout keyed by
// (AttnLayer(l), original destination id, k·H + head), then the weighted
// sum of z_j; heads concatenated except in the last layer (averaged).
func refGAT(cfg Config, l int, b *sample.Block, h, w, aSrc, aDst, bias, wEdge, aEdge []float64, train bool, key MaskKey) []float64 {
	in, out := cfg.LayerDims(l)
	H, last := cfg.Opts.Int(headsKey), cfg.convToOut(l) // with jk every layer concatenates
	F := out
	if !last {
		F = out / H
	}
	z := func(j, hd, f int) float64 {
		v := 0.0
		for k := 0; k < in; k++ {
			v += h[j*in+k] * w[k*H*F+hd*F+f]
		}
		return v
	}
	o := make([]float64, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		copy(o[i*out:(i+1)*out], bias)
		srcs := append([]int{i}, sampledNeighbors(b, i)...)
		var ef [][]float64
		if cfg.EdgeDim > 0 {
			ef = refEdgeFeatures(b, i)
		}
		for hd := 0; hd < H; hd++ {
			e := make([]float64, len(srcs))
			for k, j := range srcs {
				for f := 0; f < F; f++ {
					e[k] += z(j, hd, f)*aSrc[hd*F+f] + z(i, hd, f)*aDst[hd*F+f]
					if ef != nil {
						le := 0.0
						for d, v := range ef[k] {
							le += v * wEdge[d*H*F+hd*F+f]
						}
						e[k] += le * aEdge[hd*F+f]
					}
				}
				if e[k] < 0 {
					e[k] *= 0.2
				}
			}
			sum := 0.0
			for k := range e {
				sum += math.Exp(e[k])
			}
			for k, j := range srcs {
				a := math.Exp(e[k]) / sum
				if ad := cfg.Opts.Float32(attnDropKey); train && ad > 0 {
					if DropoutKeep(key, AttnLayer(l), b.Orig[i], k*H+hd, ad) {
						a /= 1 - float64(ad)
					} else {
						a = 0
					}
				}
				for f := 0; f < F; f++ {
					if last {
						o[i*out+f] += a * z(j, hd, f) / float64(H)
					} else {
						o[i*out+hd*F+f] += a * z(j, hd, f)
					}
				}
			}
		}
	}
	return o
}

// refGATv2: per head, softmax over the self edge and the sampled neighbors
// of att·LeakyReLU(W_l h_j + b_l + W_r h_i + b_r [+ W_e x_ij]), attention
// dropout keyed as GAT's, then the weighted sum of W_l h_j + b_l; heads
// concatenated except in the last layer (averaged).
func refGATv2(cfg Config, l int, b *sample.Block, h, wl, bl, wr, br, att, bias, we []float64, train bool, key MaskKey) []float64 {
	in, out := cfg.LayerDims(l)
	H, last := cfg.Opts.Int(headsKey), cfg.convToOut(l) // with jk every layer concatenates
	F := out
	if !last {
		F = out / H
	}
	lin := func(w, bb []float64, j, c int) float64 {
		v := bb[c]
		for k := 0; k < in; k++ {
			v += h[j*in+k] * w[k*H*F+c]
		}
		return v
	}
	o := make([]float64, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		copy(o[i*out:(i+1)*out], bias)
		srcs := append([]int{i}, sampledNeighbors(b, i)...)
		var ef [][]float64
		if cfg.EdgeDim > 0 {
			ef = refEdgeFeatures(b, i)
		}
		for hd := 0; hd < H; hd++ {
			e := make([]float64, len(srcs))
			for k, j := range srcs {
				for f := 0; f < F; f++ {
					c := hd*F + f
					m := lin(wl, bl, j, c) + lin(wr, br, i, c)
					if ef != nil {
						for d, v := range ef[k] {
							m += v * we[d*H*F+c]
						}
					}
					if m < 0 {
						m *= 0.2
					}
					e[k] += m * att[c]
				}
			}
			mx := slices.Max(e)
			sum := 0.0
			for k := range e {
				sum += math.Exp(e[k] - mx)
			}
			for k, j := range srcs {
				a := math.Exp(e[k]-mx) / sum
				if ad := cfg.Opts.Float32(attnDropKey); train && ad > 0 {
					if DropoutKeep(key, AttnLayer(l), b.Orig[i], k*H+hd, ad) {
						a /= 1 - float64(ad)
					} else {
						a = 0
					}
				}
				for f := 0; f < F; f++ {
					v := a * lin(wl, bl, j, hd*F+f)
					if last {
						o[i*out+f] += v / float64(H)
					} else {
						o[i*out+hd*F+f] += v
					}
				}
			}
		}
	}
	return o
}

// mustNet builds the float64 core over params.
func mustNet(t *testing.T, cfg Config, params []float64) *net[float64] {
	t.Helper()
	n, err := newNet(cfg, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testCase(t *testing.T, cfg Config, seed uint64) (*Model, []sample.Block, []float32, []int32) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	sizes := []int{40, 20, 9, 4}[4-cfg.Layers-1:]
	fanout := []int{4, 3, 2}
	blocks := synthBlocks(r, sizes, fanout, 5)
	x := randFeatures(r, sizes[0]*cfg.InDim)
	y := randLabels(r, sizes[len(sizes)-1], cfg.Classes)
	if cfg.EdgeDim > 0 {
		withEdgeFeatures(r, blocks, cfg.EdgeDim)
	}
	m, err := NewModel(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	// Non-zero biases so the bias path is checked in the forward pass too.
	// GIN sums its neighbours unnormalised, so its rows grow about
	// (fanout+2)-fold per layer: at Glorot scale three layers saturate the
	// link tests' sigmoid (zero or NaN gradients), and with these few seeds
	// every unit of a narrow ReLU (its MLP's, the link decoder's) can be
	// dead, leaving the gradient check nothing to check. So a GIN fixture
	// has its weights halved and the biases before a ReLU lean positive.
	gin := cfg.Arch == ArchGIN || cfg.Arch == ArchGINE
	for _, ts := range cfg.Tensors() {
		if gin && !ts.Zero && ts.Layer >= 0 && ts.Layer < cfg.Layers {
			for i := 0; i < ts.Size(); i++ {
				m.Params()[ts.Offset+i] *= 0.5
			}
		}
		if ts.Zero {
			shift := float64(ts.Init) // a LayerNorm scale stays near 1, a learnable ε near its start
			if gin && (strings.HasSuffix(ts.Name, "b1") || ts.Layer < cfg.Layers-1 && strings.HasSuffix(ts.Name, ".b2")) {
				shift = 0.5
			}
			for i := 0; i < ts.Size(); i++ {
				m.Params()[ts.Offset+i] = float32(shift + r.NormFloat64()*0.1)
			}
		}
	}
	return m, blocks, x, y
}

type gradCase struct {
	name string
	cfg  Config
	drop bool
}

// gradCases are the model-test configurations, each for every
// architecture (GAT with 2 heads, with dropout also attention dropout;
// GIN and GINE with a learnable ε, with dropout a fixed one; GINE with 3
// edge features per edge).
var gradCases = forEachArch([]gradCase{
	{"1layer", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 1}, false},
	{"2layer", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2}, false},
	{"3layer", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3}, false},
	{"3layer-dropout", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3, Dropout: 0.3}, true},
	{"2layer-input-dropout", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.3, InputDropout: 0.4}, true},
	// Between the layers (between.go): a residual projection on layer 0
	// (5 -> 4) and the identity above, LayerNorm, each jumping knowledge
	// mode, with and without dropout.
	{"2layer-residual", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2, Residual: true}, false},
	{"3layer-residual-norm-dropout", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3, Residual: true, Norm: NormLayer, Dropout: 0.3, InputDropout: 0.2}, true},
	{"2layer-norm", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Norm: NormLayer}, false},
	{"3layer-jk-cat-dropout", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 3, JK: JKCat, Dropout: 0.3}, true},
	{"3layer-jk-max", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3, JK: JKMax}, false},
	{"2layer-jk-last-norm", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2, JK: JKLast, Norm: NormLayer}, false},
	{"3layer-all-dropout", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3, Residual: true, Norm: NormLayer, JK: JKCat, Dropout: 0.3}, true},
	// Edge features: only the architectures that read them.
	{"2layer-edge", Config{InDim: 5, Hidden: 4, Classes: 3, Layers: 2, EdgeDim: 3}, false},
	{"3layer-edge-dropout", Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3, Dropout: 0.3, EdgeDim: 2}, true},
})

// forEachArch repeats base for every registered architecture (a case with
// edge features for those that read them).
func forEachArch(base []gradCase) []gradCase {
	var out []gradCase
	for _, arch := range Archs() {
		a, _ := lookupArch(arch)
		for _, tc := range base {
			if tc.cfg.EdgeDim > 0 && !a.EdgeFeatures {
				continue
			}
			tc.cfg.Arch = arch
			switch arch {
			case ArchGAT, ArchGATv2:
				ad := float32(0)
				if tc.drop {
					ad = 0.35
				}
				tc.cfg.Opts = GATOpts(2, ad)
			case ArchGINE:
				tc.cfg.EdgeDim = 3
				fallthrough
			case ArchGIN:
				tc.cfg.Opts = GINOpts(!tc.drop, 0.25)
			}
			name := tc.name
			tc.name = arch + "/" + name
			out = append(out, tc)
			if arch == ArchSAGE {
				// Every aggregator besides the default mean.
				for _, aggr := range []string{SAGEMax, SAGESum, SAGEPool} {
					tc.cfg.Opts = SAGEOpts(aggr)
					tc.name = arch + "-" + aggr + "/" + name
					out = append(out, tc)
				}
			}
		}
	}
	return out
}

func TestForwardMatchesReference(t *testing.T) {
	for _, tc := range gradCases {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, x, _ := testCase(t, tc.cfg, 7)
			key := MaskKey{Seed: 3, Step: 11}
			n64 := mustNet(t, tc.cfg, to64(m.Params()))
			n64.forwardDense(blocks, to64(x), tc.drop, key)
			want := refForward(tc.cfg, to64(m.Params()), blocks, to64(x), tc.drop, key)
			got := n64.out[tc.cfg.Layers-1]
			if len(got) != len(want) {
				t.Fatalf("logits length %d, want %d", len(got), len(want))
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
					t.Fatalf("logit %d = %v, reference %v", i, got[i], want[i])
				}
			}
			if !tc.drop {
				logits, err := m.Forward(&sample.Batch{Blocks: blocks, X: x})
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Abs(float64(logits[i])-want[i]) > 1e-4*(1+math.Abs(want[i])) {
						t.Fatalf("float32 logit %d = %v, reference %v", i, logits[i], want[i])
					}
				}
			}
		})
	}
}

// TestGradCheck compares every parameter's analytic gradient (float64 path
// of the same generic code) against central finite differences.
func TestGradCheck(t *testing.T) {
	for _, tc := range gradCases {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, x32, y := testCase(t, tc.cfg, 11)
			x := to64(x32)
			key := MaskKey{Seed: 5, Step: 2}
			n := mustNet(t, tc.cfg, to64(m.Params()))
			if _, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, dense(x), 1, tc.drop, key); err != nil {
				t.Fatal(err)
			}
			n.backward(blocks, tc.drop)
			lossAt := func() float64 {
				l, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, dense(x), 0, tc.drop, key)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			checkGradients(t, n, tc.cfg.Tensors(), lossAt)
		})
	}
}

// TestFloat32MatchesFloat64 checks the production float32 path against the
// float64 path the gradient check validated.
func TestFloat32MatchesFloat64(t *testing.T) {
	for _, tc := range gradCases {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, x, y := testCase(t, tc.cfg, 13)
			key := MaskKey{Seed: 9, Step: 4}
			n := mustNet(t, tc.cfg, to64(m.Params()))
			want, wantC, err := n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, dense(to64(x)), 1, tc.drop, key)
			if err != nil {
				t.Fatal(err)
			}
			n.backward(blocks, tc.drop)
			clear(m.Grads())
			got, gotC, err := fb(m.n, &sample.Batch{Blocks: blocks, Labels: y}, dense(x), 1, tc.drop, key)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > 1e-4*(1+math.Abs(want)) || gotC != wantC {
				t.Fatalf("float32 loss %v correct %d; float64 %v correct %d", got, gotC, want, wantC)
			}
			for i, g := range m.Grads() {
				if math.Abs(float64(g)-n.grads[i]) > 1e-4*(1+math.Abs(n.grads[i])) {
					t.Fatalf("grad %d: float32 %v float64 %v", i, g, n.grads[i])
				}
			}
			// Gradients accumulate: a second identical call doubles them.
			g1 := slices.Clone(m.Grads())
			if _, _, err := fb(m.n, &sample.Batch{Blocks: blocks, Labels: y}, dense(x), 1, tc.drop, key); err != nil {
				t.Fatal(err)
			}
			for i, g := range m.Grads() {
				if math.Abs(float64(g-2*g1[i])) > 1e-5*(1+math.Abs(float64(g))) {
					t.Fatalf("grad %d after two calls %v, want %v", i, g, 2*g1[i])
				}
			}
		})
	}
}

// TestRelabelInvariance: the same sample listed in another local order (as a
// different partition count produces) gives the same per-seed logits, loss
// and gradients, dropout masks included, because masks key on original ids.
func TestRelabelInvariance(t *testing.T) {
	for _, tc := range forEachArch([]gradCase{{"3layer-dropout", Config{InDim: 6, Hidden: 8, Classes: 4, Layers: 3, Dropout: 0.5}, true}}) {
		t.Run(tc.name, func(t *testing.T) { relabelInvariance(t, tc.cfg) })
	}
}

func relabelInvariance(t *testing.T, cfg Config) {
	m, blocks, x, y := testCase(t, cfg, 17)
	r := rand.New(rand.NewPCG(99, 2))
	rb, rx, ry := relabel(r, blocks, x, cfg.InDim, y)
	key := MaskKey{Seed: 1, Step: 77}
	clear(m.Grads())
	l1, c1, err := m.Train(&sample.Batch{Blocks: blocks, X: x, Labels: y}, 1, key)
	if err != nil {
		t.Fatal(err)
	}
	g1 := slices.Clone(m.Grads())
	clear(m.Grads())
	l2, c2, err := m.Train(&sample.Batch{Blocks: rb, X: rx, Labels: ry}, 1, key)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l1-l2) > 1e-5*(1+math.Abs(l1)) || c1 != c2 {
		t.Fatalf("loss/correct %v/%d vs relabelled %v/%d", l1, c1, l2, c2)
	}
	for i := range g1 {
		if math.Abs(float64(g1[i]-m.Grads()[i])) > 1e-4*(1+math.Abs(float64(g1[i]))) {
			t.Fatalf("grad %d: %v vs relabelled %v", i, g1[i], m.Grads()[i])
		}
	}
	// A different step must change the masks (else the key is ignored).
	clear(m.Grads())
	l3, _, err := m.Train(&sample.Batch{Blocks: blocks, X: x, Labels: y}, 1, MaskKey{Seed: 1, Step: 78})
	if err != nil {
		t.Fatal(err)
	}
	if l3 == l1 {
		t.Fatalf("loss identical under a different mask step: %v", l3)
	}
}

func TestDropoutKeepRate(t *testing.T) {
	for _, p := range []float32{0, 0.1, 0.5, 0.9} {
		kept, n := 0, 0
		for id := int64(0); id < 200; id++ {
			for u := 0; u < 100; u++ {
				n++
				if DropoutKeep(MaskKey{Seed: 42, Step: 3}, 1, id, u, p) {
					kept++
				}
			}
		}
		rate := float64(kept) / float64(n)
		if math.Abs(rate-(1-float64(p))) > 0.01 {
			t.Errorf("p=%v: kept fraction %.4f, want %.4f", p, rate, 1-p)
		}
	}
	// Each key component must matter.
	base := MaskKey{Seed: 1, Step: 1}
	diff := func(f func(i int) bool) int {
		d := 0
		for i := 0; i < 1000; i++ {
			if f(i) != DropoutKeep(base, 0, int64(i), 0, 0.5) {
				d++
			}
		}
		return d
	}
	for name, f := range map[string]func(i int) bool{
		"seed":  func(i int) bool { return DropoutKeep(MaskKey{Seed: 2, Step: 1}, 0, int64(i), 0, 0.5) },
		"step":  func(i int) bool { return DropoutKeep(MaskKey{Seed: 1, Step: 2}, 0, int64(i), 0, 0.5) },
		"layer": func(i int) bool { return DropoutKeep(base, 1, int64(i), 0, 0.5) },
		"unit":  func(i int) bool { return DropoutKeep(base, 0, int64(i), 1, 0.5) },
	} {
		if d := diff(f); d < 400 || d > 600 {
			t.Errorf("changing %s flips %d of 1000 masks, want about 500", name, d)
		}
	}
}

func TestInitParams(t *testing.T) {
	cfg := Config{InDim: 100, Hidden: 256, Classes: 47, Layers: 3}
	a, err := InitParams(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := InitParams(cfg, 1)
	c, _ := InitParams(cfg, 2)
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different parameters")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave identical parameters")
	}
	if want := 2*100*256 + 256 + 2*256*256 + 256 + 2*256*47 + 47; len(a) != want {
		t.Fatalf("got %d parameters, want %d", len(a), want)
	}
	for _, ts := range cfg.Tensors() {
		v := a[ts.Offset : ts.Offset+ts.Size()]
		if strings.HasSuffix(ts.Name, ".b") {
			if slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
				t.Errorf("%s: bias not zero", ts.Name)
			}
			continue
		}
		limit := math.Sqrt(6 / float64(ts.Rows+ts.Cols))
		var sq float64
		for _, x := range v {
			if math.Abs(float64(x)) > limit {
				t.Fatalf("%s: %v beyond Glorot limit %v", ts.Name, x, limit)
			}
			sq += float64(x) * float64(x)
		}
		// Uniform(-a,a) has variance a^2/3.
		if vr := sq / float64(len(v)); math.Abs(vr-limit*limit/3) > 0.05*limit*limit/3 {
			t.Errorf("%s: variance %v, want about %v", ts.Name, vr, limit*limit/3)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{InDim: 0, Hidden: 4, Classes: 3, Layers: 2}, "in_dim"},
		{Config{InDim: 4, Hidden: 4, Classes: 0, Layers: 2}, "classes"},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 0}, "layers"},
		{Config{InDim: 4, Hidden: 0, Classes: 3, Layers: 2}, "hidden"},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Dropout: 1}, "Dropout 1 must be in [0,1)"},
		{Config{InDim: 4, Hidden: 0, Classes: 3, Layers: 1}, ""},
		{Config{Arch: "gin2", InDim: 4, Hidden: 4, Classes: 3, Layers: 2}, `Arch "gin2": want one of sage, gcn, gat, gatv2, gin, gine, rgcn, hsage`},
		{Config{Arch: ArchGIN, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Opts: GINOpts(true, 0.5)}, ""},
		{Config{Arch: ArchGIN, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Opts: Opts("").With(epsKey, float32(math.Inf(1)))}, "Opts.Eps +Inf must be a finite number"},
		{Config{Arch: ArchGIN, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, EdgeDim: 2}, "EdgeDim 2: gin reads no edge features (gat, gatv2, gine, rgcn, hsage do)"},
		{Config{Arch: ArchGINE, InDim: 4, Hidden: 4, Classes: 3, Layers: 2}, "Arch gine reads edge features (ReLU(h_j + Linear(e_ij))) but EdgeDim is 0"},
		{Config{Arch: ArchGINE, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, EdgeDim: 2, Opts: GINOpts(true, 0)}, ""},
		{Config{Arch: ArchSAGE, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Opts: GINOpts(true, 0)}, "Opts.TrainEps applies to Arch gin, gine only, not sage"},
		{Config{Arch: ArchSAGE, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Opts: GATOpts(2, 0)}, "Opts.Heads applies to Arch gat, gatv2 only, not sage"},
		{Config{Arch: ArchGCN, InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Opts: Opts("").With(attnDropKey, float32(0.1))}, "Opts.AttnDropout applies to Arch gat, gatv2 only, not gcn"},
		{Config{Arch: ArchGAT, InDim: 4, Hidden: 4, Classes: 3, Layers: 2}, "Opts.Heads 0 must be positive"},
		{Config{Arch: ArchGAT, InDim: 4, Hidden: 6, Classes: 3, Layers: 2, Opts: GATOpts(4, 0)}, "Hidden 6 must be a multiple of Opts.Heads 4"},
		{Config{Arch: ArchGAT, InDim: 4, Hidden: 6, Classes: 3, Layers: 1, Opts: GATOpts(4, 0)}, ""},
		{Config{Arch: ArchGAT, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: Opts("").With(headsKey, 4).With(attnDropKey, float32(1))}, "Opts.AttnDropout 1 must be in [0,1)"},
		{Config{Arch: ArchGAT, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: GATOpts(4, 0.6)}, ""},
		{Config{Arch: ArchSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: SAGEOpts(SAGEPool)}, ""},
		{Config{Arch: ArchSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: Opts("").With(aggrKey, "lstm")}, `Opts.Aggr "lstm": want one of mean, max, sum, pool`},
		{Config{Arch: ArchGCN, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: SAGEOpts(SAGEMax)}, "Opts.Aggr applies to Arch sage only, not gcn"},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Residual: true, Norm: NormLayer, JK: JKCat}, ""},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 2, Norm: "batch"}, `Norm "batch": want layer`},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 2, JK: "lstm"}, `JK "lstm": want cat, max, last`},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 1, JK: JKMax}, `JK "max" needs at least 2 layers`},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 1, Norm: NormLayer}, `Norm "layer" needs at least 2 layers`},
		{Config{InDim: 4, Hidden: 4, Classes: 3, Layers: 1, Residual: true}, "Residual needs at least 2 layers"},
		{Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 2, Residual: true, Hetero: dblpLike()}, "Residual is not available for the heterogeneous model rgcn"},
		{Config{Arch: ArchGATv2, InDim: 4, Hidden: 4, Classes: 3, Layers: 2}, "Opts.Heads 0 must be positive"},
		{Config{Arch: ArchGATv2, InDim: 4, Hidden: 6, Classes: 3, Layers: 2, Opts: GATOpts(4, 0)}, "Hidden 6 must be a multiple of Opts.Heads 4"},
		{Config{Arch: ArchGATv2, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: Opts("").With(headsKey, 4).With(attnDropKey, float32(1))}, "Opts.AttnDropout 1 must be in [0,1)"},
		{Config{Arch: ArchGATv2, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, EdgeDim: 3, Opts: GATOpts(4, 0.6)}, ""},
		{Config{Arch: ArchGCN, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, EdgeDim: 3}, "EdgeDim 3: gcn reads no edge features (gat, gatv2, gine, rgcn, hsage do)"},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want mention of %q", tc.cfg, err, tc.want)
		}
	}
}

func TestMalformedInputErrors(t *testing.T) {
	cfg := Config{InDim: 3, Hidden: 4, Classes: 2, Layers: 2}
	m, blocks, x, y := testCase(t, cfg, 3)
	clone := func() []sample.Block {
		out := make([]sample.Block, len(blocks))
		for i, b := range blocks {
			out[i] = sample.Block{NumDst: b.NumDst, Nodes: slices.Clone(b.Nodes), Orig: slices.Clone(b.Orig), Indptr: slices.Clone(b.Indptr), Indices: slices.Clone(b.Indices)}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		edit func(bs []sample.Block) ([]sample.Block, []float32, []int32)
		want string
	}{
		{"few blocks", func(bs []sample.Block) ([]sample.Block, []float32, []int32) { return bs[:1], x, y }, "got 1 blocks"},
		{"edge out of range", func(bs []sample.Block) ([]sample.Block, []float32, []int32) {
			bs[0].Indices[0] = int32(bs[0].NumSrc())
			return bs, x, y
		}, "outside"},
		{"chain mismatch", func(bs []sample.Block) ([]sample.Block, []float32, []int32) {
			bs[0].NumDst--
			bs[0].Indptr = bs[0].Indptr[:bs[0].NumDst+1]
			bs[0].Indices = bs[0].Indices[:bs[0].Indptr[bs[0].NumDst]]
			return bs, x, y
		}, "destinations"},
		{"short features", func(bs []sample.Block) ([]sample.Block, []float32, []int32) { return bs, x[1:], y }, "input values"},
		{"bad label", func(bs []sample.Block) ([]sample.Block, []float32, []int32) {
			yy := slices.Clone(y)
			yy[0] = 2
			return bs, x, yy
		}, "label 2"},
		{"label count", func(bs []sample.Block) ([]sample.Block, []float32, []int32) { return bs, x, y[1:] }, "labels"},
		{"orig count", func(bs []sample.Block) ([]sample.Block, []float32, []int32) {
			bs[1].Orig = bs[1].Orig[1:]
			return bs, x, y
		}, "orig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, xx, yy := tc.edit(clone())
			_, _, err := m.Train(&sample.Batch{Blocks: bs, X: xx, Labels: yy}, 1, MaskKey{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want mention of %q", err, tc.want)
			}
		})
	}
}

// TestLossScale: the scale argument multiplies the gradient (not the
// reported loss), which is how the trainer divides by the global batch.
func TestLossScale(t *testing.T) {
	cfg := Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 3, Dropout: 0.2}
	m, blocks, x, y := testCase(t, cfg, 21)
	key := MaskKey{Seed: 2, Step: 5}
	l1, c1, err := m.Train(&sample.Batch{Blocks: blocks, X: x, Labels: y}, 1, key)
	if err != nil {
		t.Fatal(err)
	}
	g1 := slices.Clone(m.Grads())
	clear(m.Grads())
	l2, c2, err := m.Train(&sample.Batch{Blocks: blocks, X: x, Labels: y}, 0.25, key)
	if err != nil {
		t.Fatal(err)
	}
	if l1 != l2 || c1 != c2 {
		t.Fatalf("scale changed the reported loss: %v/%d vs %v/%d", l1, c1, l2, c2)
	}
	nonzero := 0
	for i, g := range m.Grads() {
		if math.Abs(float64(g-0.25*g1[i])) > 1e-6*(1+math.Abs(float64(g1[i]))) {
			t.Fatalf("grad %d: %v with scale 0.25, %v with scale 1", i, g, g1[i])
		}
		if g != 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Fatal("all gradients zero")
	}
}

func TestEvaluateAndPredict(t *testing.T) {
	cfg := Config{InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5}
	m, blocks, x, y := testCase(t, cfg, 23)
	clear(m.Grads())
	loss, correct, err := m.Evaluate(&sample.Batch{Blocks: blocks, X: x, Labels: y})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(m.Grads(), func(g float32) bool { return g != 0 }) {
		t.Fatal("Evaluate touched the gradients")
	}
	pred, err := m.Predict(&sample.Batch{Blocks: blocks, X: x}, nil)
	if err != nil {
		t.Fatal(err)
	}
	logits, _ := m.Forward(&sample.Batch{Blocks: blocks, X: x})
	want, ok := 0, 0
	ce := 0.0
	for i := range y {
		z := to64(logits[i*3 : (i+1)*3])
		best := 0
		for k := range z {
			if z[k] > z[best] {
				best = k
			}
		}
		if int(pred[i]) != best {
			t.Fatalf("seed %d: predicted %d, arg-max %d", i, pred[i], best)
		}
		if best == int(y[i]) {
			want++
		}
		if pred[i] == y[i] {
			ok++
		}
		mx := math.Max(z[0], math.Max(z[1], z[2]))
		ce += mx + math.Log(math.Exp(z[0]-mx)+math.Exp(z[1]-mx)+math.Exp(z[2]-mx)) - z[y[i]]
	}
	if correct != want || ok != want {
		t.Fatalf("Evaluate counted %d correct, predictions give %d", correct, want)
	}
	if math.Abs(ce-loss) > 1e-4*(1+ce) {
		t.Fatalf("Evaluate loss %v, recomputed %v", loss, ce)
	}
}

func TestArgmaxSkipsNaN(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		z    []float32
		want int
	}{
		{[]float32{1, 3, 3}, 1},
		{[]float32{nan, 2, 1}, 1},
		{[]float32{nan, nan}, 0},
		{[]float32{0, nan, 5}, 2},
	} {
		if got := argmax(tc.z); got != tc.want {
			t.Errorf("argmax(%v) = %d, want %d", tc.z, got, tc.want)
		}
	}
}

// checkGradients compares n's analytic gradients (from a backward already
// run) with central finite differences of lossAt, parameter by parameter,
// and fails a tensor whose gradients are all zero (the check would be
// vacuous).
func checkGradients(t *testing.T, n *net[float64], tensors []Tensor, lossAt func() float64) {
	t.Helper()
	const eps = 1e-6
	for _, ts := range tensors {
		maxG := 0.0
		for i := ts.Offset; i < ts.Offset+ts.Size(); i++ {
			old := n.params[i]
			n.params[i] = old + eps
			lp := lossAt()
			n.params[i] = old - eps
			lm := lossAt()
			n.params[i] = old
			num := (lp - lm) / (2 * eps)
			an := n.grads[i]
			if math.Abs(an-num) > 1e-6+1e-5*math.Max(math.Abs(an), math.Abs(num)) {
				t.Errorf("%s[%d]: analytic %.9g, numeric %.9g", ts.Name, i-ts.Offset, an, num)
			}
			maxG = math.Max(maxG, math.Abs(an))
		}
		if maxG == 0 {
			t.Errorf("%s: all gradients are zero; the check would be vacuous", ts.Name)
		}
	}
}

// TestEdgeFeatureWidthChecked: a model reading edge features refuses blocks
// whose features are missing or of another width, rather than indexing
// them wrongly.
func TestEdgeFeatureWidthChecked(t *testing.T) {
	cfg := Config{Arch: ArchGAT, InDim: 5, Hidden: 4, Classes: 3, Layers: 2, EdgeDim: 3, Opts: GATOpts(2, 0)}
	m, blocks, x, _ := testCase(t, cfg, 21)
	for _, tc := range []struct {
		name string
		dim  int
		want string
	}{
		{"matching", 3, ""},
		{"none", 0, "model: block 0: the block carries 0 edge features per edge (0 values for 32 edges) but the model reads 3 (edge_dim)"},
		{"narrower", 2, "model: block 0: the block carries 2 edge features per edge (64 values for 32 edges) but the model reads 3 (edge_dim)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs := slices.Clone(blocks)
			if tc.dim == 0 {
				bs[0].EdgeFeat, bs[0].EdgeFeatDim = nil, 0
			} else {
				bs[0].EdgeFeat, bs[0].EdgeFeatDim = make([]float32, len(bs[0].Indices)*tc.dim), tc.dim
			}
			_, err := m.Forward(&sample.Batch{Blocks: bs, X: x})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSAGEAggrJSON: the default mean is not written (so sage configs and
// checkpoints from before --aggr keep their bytes), another aggregator is,
// at top level, and reads back to the same Config.
func TestSAGEAggrJSON(t *testing.T) {
	for _, tc := range []struct {
		opts Opts
		want string // "" = no aggr key
	}{
		{"", ""},
		{SAGEOpts(SAGEMean), ""},
		{SAGEOpts(SAGEMax), `"aggr":"max"`},
		{SAGEOpts(SAGEPool), `"aggr":"pool"`},
	} {
		cfg := Config{Arch: ArchSAGE, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: tc.opts}
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" && strings.Contains(string(b), "aggr") || tc.want != "" && !strings.Contains(string(b), tc.want) {
			t.Errorf("%q: JSON %s, want %q", tc.opts, b, tc.want)
		}
		var back Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		// (GraphSAGE, the first architecture, is written without its name.)
		if back.Opts != cfg.Opts || back.ArchName() != ArchSAGE || back.Hidden != cfg.Hidden {
			t.Errorf("%q: read back %+v, want %+v", tc.opts, back, cfg)
		}
	}
}
