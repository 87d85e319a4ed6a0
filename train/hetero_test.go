package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/sample"
	"mpignn/train/optim"
)

// testHetero is a 3-type schema (a, b, c with 50, 40, 30 nodes) whose five
// relations include a self relation on a and reverse relations, so every
// type is a destination.
func testHetero(inDims []int, bases int, learnable []bool) *HeteroConfig {
	return &HeteroConfig{
		NodeTypes: []string{"a", "b", "c"},
		NodeOrig:  []int64{0, 50, 90, 120},
		Relations: []string{"a___cites___a", "a___to___b", "b___rev_to___a", "b___to___c", "c___rev_to___b"},
		InDims:    inDims, Bases: bases, Learnable: learnable,
	}
}

// synthHeteroBlocks builds a typed block chain by hand: level sizes as in
// synthBlocks, node i of level 0 has type i%3 (so every level holds every
// type) and a random original id of its type; destination i draws fanout[l]
// sources of the right type per relation ending at its type (repeats
// allowed), except that every zeroEvery-th (destination, relation) pair
// gets none, so the empty-mean path is exercised.
func synthHeteroBlocks(r *rand.Rand, h *HeteroConfig, sizes, fanout []int, zeroEvery int) []sample.Block {
	L := len(sizes) - 1
	src, dst := relTypes(h)
	nt := h.NumTypes()
	orig := make([]int64, sizes[0])
	types := make([]int, sizes[0])
	seen := map[int64]bool{}
	for i := range orig {
		t := i % nt
		types[i] = t
		for {
			o := h.NodeOrig[t] + r.Int64N(h.NodeOrig[t+1]-h.NodeOrig[t])
			if !seen[o] {
				seen[o] = true
				orig[i] = o
				break
			}
		}
	}
	blocks := make([]sample.Block, L)
	pair := 0
	for l := 0; l < L; l++ {
		ns, nd := sizes[l], sizes[l+1]
		b := sample.Block{NumDst: nd, Nodes: make([]int64, ns), Orig: slices.Clone(orig[:ns]), Indptr: make([]int32, nd+1)}
		for i := range b.Nodes {
			b.Nodes[i] = int64(i) + 100
		}
		byType := make([][]int32, nt)
		for j := 0; j < ns; j++ {
			byType[types[j]] = append(byType[types[j]], int32(j))
		}
		for i := 0; i < nd; i++ {
			for rel := range h.Relations {
				if dst[rel] != types[i] {
					continue
				}
				pair++
				if zeroEvery > 0 && pair%zeroEvery == 0 {
					continue
				}
				cand := byType[src[rel]]
				for e := 0; e < fanout[l]; e++ {
					b.Indices = append(b.Indices, cand[r.IntN(len(cand))])
					b.Etype = append(b.Etype, int32(rel))
				}
			}
			b.Indptr[i+1] = int32(len(b.Indices))
		}
		blocks[l] = b
	}
	return blocks
}

// heteroInputs returns random per-type inputs for blocks[0]'s nodes.
func heteroInputs(r *rand.Rand, h *HeteroConfig, b0 *sample.Block) [][]float32 {
	n := make([]int, h.NumTypes())
	for _, o := range b0.Orig {
		n[typeIndexOf(h, o)]++
	}
	xs := make([][]float32, h.NumTypes())
	for t := range xs {
		xs[t] = randFeatures(r, n[t]*h.InDims[t])
	}
	return xs
}

func typeIndexOf(h *HeteroConfig, o int64) int {
	for t := 0; t < h.NumTypes(); t++ {
		if o < h.NodeOrig[t+1] {
			return t
		}
	}
	return -1
}

func to64s(xs [][]float32) [][]float64 {
	out := make([][]float64, len(xs))
	for t, x := range xs {
		out[t] = to64(x)
	}
	return out
}

type hetCase struct {
	name string
	cfg  Config
	drop bool
}

func hetCases() []hetCase {
	var cs []hetCase
	for _, arch := range HeteroArchs() {
		bases := []int{0}
		if arch == ArchRGCN {
			bases = []int{0, 2}
		}
		for _, nb := range bases {
			for _, tc := range []hetCase{
				{"1layer", Config{Hidden: 4, Classes: 3, Layers: 1}, false},
				{"2layer", Config{Hidden: 5, Classes: 3, Layers: 2}, false},
				{"2layer-dropout", Config{Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.3, InputDropout: 0.25}, true},
			} {
				tc.cfg.Arch = arch
				tc.cfg.Hetero = testHetero([]int{3, 4, 2}, nb, []bool{false, true, true})
				tc.name = fmt.Sprintf("%s/bases=%d/%s", arch, nb, tc.name)
				cs = append(cs, tc)
			}
			// Relation edge features (Config.EdgeDim): the edge terms
			// mean_j e_ij·W_e,r of every layer.
			for _, tc := range []hetCase{
				{"2layer-edge", Config{Hidden: 5, Classes: 3, Layers: 2, EdgeDim: 2}, false},
				{"2layer-edge-dropout", Config{Hidden: 6, Classes: 3, Layers: 2, EdgeDim: 3, Dropout: 0.3}, true},
			} {
				tc.cfg.Arch = arch
				tc.cfg.Hetero = testHetero([]int{3, 4, 2}, nb, []bool{false, true, true})
				tc.name = fmt.Sprintf("%s/bases=%d/%s", arch, nb, tc.name)
				cs = append(cs, tc)
			}
		}
	}
	return append(cs, hgbCases()...)
}

// hgbCases are every homogeneous architecture (forEachArch: with its own
// options) on the typed blocks of a heterogeneous config: the HGB-style
// mode (typed input projections, then the layers ignoring the types).
func hgbCases() []hetCase {
	var cs []hetCase
	for _, g := range forEachArch([]gradCase{
		{"hgb/1layer", Config{Hidden: 4, Classes: 3, Layers: 1}, false},
		{"hgb/2layer", Config{Hidden: 6, Classes: 3, Layers: 2}, false},
		{"hgb/2layer-dropout", Config{Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.3, InputDropout: 0.25}, true},
		{"hgb/2layer-residual-norm-jk-cat", Config{Hidden: 6, Classes: 3, Layers: 2, Residual: true, Norm: NormLayer, JK: JKCat}, false},
		{"hgb/2layer-residual-jk-max-dropout", Config{Hidden: 8, Classes: 3, Layers: 2, Dropout: 0.3, Residual: true, JK: JKMax}, true},
	}) {
		if g.cfg.EdgeDim > 0 {
			continue // the typed blocks carry no edge features (gine cannot run HGB-style)
		}
		g.cfg.Hetero = testHetero([]int{3, 4, 2}, 0, []bool{false, true, true})
		cs = append(cs, hetCase{name: g.name, cfg: g.cfg, drop: g.drop})
	}
	return cs
}

// withEdgeFeat gives every block random edge features of width d (none
// when d is 0), as a sampler over a partition with relation edge features
// attaches them.
func withEdgeFeat(r *rand.Rand, blocks []sample.Block, d int) {
	if d == 0 {
		return
	}
	for l := range blocks {
		b := &blocks[l]
		b.EdgeFeatDim = d
		b.EdgeFeat = randFeatures(r, len(b.Indices)*d)
	}
}

// hetTestCase builds a model of cfg with non-zero biases, typed blocks,
// inputs and labels (seeds of every type, so every tensor gets gradient).
func hetTestCase(t *testing.T, cfg Config, seed uint64) (*Model, []sample.Block, [][]float32, []int32) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	sizes := []int{45, 24, 9}[2-cfg.Layers:]
	blocks := synthHeteroBlocks(r, cfg.Hetero, sizes, []int{3, 2}, 4)
	withEdgeFeat(r, blocks, cfg.EdgeDim)
	xs := heteroInputs(r, cfg.Hetero, &blocks[0])
	y := randLabels(r, sizes[len(sizes)-1], cfg.Classes)
	m, err := NewModel(cfg, seed)
	require.NoError(t, err)
	for _, ts := range cfg.Tensors() {
		if ts.Zero {
			for i := 0; i < ts.Size(); i++ {
				m.Params()[ts.Offset+i] = float32(r.NormFloat64() * 0.1)
			}
		}
	}
	return m, blocks, xs, y
}

// TestHeteroGradCheck: every parameter's analytic gradient (float64) and
// the input gradients of the learnable types against central differences,
// for both architectures, with and without bases and dropout.
func TestHeteroGradCheck(t *testing.T) {
	for _, tc := range hetCases() {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, xs32, y := hetTestCase(t, tc.cfg, 11)
			xs := to64s(xs32)
			key := MaskKey{Seed: 5, Step: 2}
			n := mustNet(t, tc.cfg, to64(m.Params()))
			_, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, typed(xs), 1, tc.drop, key)
			require.NoError(t, err)
			n.backward(blocks, tc.drop)
			lossAt := func() float64 {
				l, _, err := n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, typed(xs), 0, tc.drop, key)
				require.NoError(t, err)
				return l
			}
			dxs := make([][]float64, len(xs))
			for ty := range xs {
				dxs[ty] = slices.Clone(n.het.dxs[ty])
			}
			checkGradients(t, n, tc.cfg.Tensors(), lossAt)
			const eps = 1e-6
			for ty := range xs {
				if !tc.cfg.Hetero.IsLearnable(ty) {
					assert.Empty(t, dxs[ty], "type %d is not learnable", ty)
					continue
				}
				require.Len(t, dxs[ty], len(xs[ty]))
				maxG := 0.0
				for i := range xs[ty] {
					old := xs[ty][i]
					xs[ty][i] = old + eps
					lp := lossAt()
					xs[ty][i] = old - eps
					lm := lossAt()
					xs[ty][i] = old
					num := (lp - lm) / (2 * eps)
					assert.InDelta(t, num, dxs[ty][i], 1e-6+1e-5*math.Abs(num), "type %d input %d", ty, i)
					maxG = math.Max(maxG, math.Abs(dxs[ty][i]))
				}
				assert.Positive(t, maxG, "type %d input gradients all zero", ty)
			}
		})
	}
}

// TestHeteroFloat32MatchesFloat64 checks the production path (Model API)
// against the float64 path the gradient check validated, including
// InputGrad, scale and accumulation.
func TestHeteroFloat32MatchesFloat64(t *testing.T) {
	for _, tc := range hetCases() {
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, xs, y := hetTestCase(t, tc.cfg, 13)
			key := MaskKey{Seed: 9, Step: 4}
			n := mustNet(t, tc.cfg, to64(m.Params()))
			want, wantC, err := n.lossOf(&sample.Batch{Blocks: blocks, Labels: y}, typed(to64s(xs)), 0.5, tc.drop, key)
			require.NoError(t, err)
			n.backward(blocks, tc.drop)
			clear(m.Grads())
			got, gotC, err := fb(m.n, &sample.Batch{Blocks: blocks, Labels: y}, typed(xs), 0.5, tc.drop, key)
			require.NoError(t, err)
			assert.InDelta(t, want, got, 1e-4*(1+math.Abs(want)))
			assert.Equal(t, wantC, gotC)
			for i, g := range m.Grads() {
				require.InDelta(t, n.grads[i], float64(g), 1e-4*(1+math.Abs(n.grads[i])), "grad %d", i)
			}
			for ty := range xs {
				g := m.InputGrad(ty)
				if !tc.cfg.Hetero.IsLearnable(ty) {
					assert.Nil(t, g)
					continue
				}
				require.Len(t, g, len(xs[ty]))
				for i, v := range g {
					require.InDelta(t, n.het.dxs[ty][i], float64(v), 1e-5*(1+math.Abs(n.het.dxs[ty][i])), "input grad %d/%d", ty, i)
				}
			}
			// Evaluation leaves no stale input gradient behind.
			_, _, err = m.Evaluate(&sample.Batch{Blocks: blocks, XT: xs, Labels: y})
			require.NoError(t, err)
			assert.Nil(t, m.InputGrad(1))
		})
	}
}

// refHetero is an independent loop-only float64 forward (no dropout) from
// the definitions of the typed projection, HeteroSAGE and R-GCN.
func refHetero(cfg Config, p []float64, blocks []sample.Block, xs [][]float64) []float64 {
	ts := map[string]Tensor{}
	for _, t := range cfg.Tensors() {
		ts[t.Name] = t
	}
	par := func(name string) []float64 {
		t, ok := ts[name]
		if !ok {
			panic("no tensor " + name)
		}
		return p[t.Offset : t.Offset+t.Size()]
	}
	hc := cfg.Hetero
	src, dst := relTypes(hc)
	H := cfg.Hidden
	matvec := func(x []float64, w []float64, out int, acc []float64, coef float64) {
		for k, xv := range x {
			for u := 0; u < out; u++ {
				acc[u] += coef * xv * w[k*out+u]
			}
		}
	}
	b0 := &blocks[0]
	h := make([]float64, b0.NumSrc()*H)
	seen := make([]int, hc.NumTypes())
	for i, o := range b0.Orig {
		t := typeIndexOf(hc, o)
		d := hc.InDims[t]
		row := h[i*H : (i+1)*H]
		copy(row, par(fmt.Sprintf("in.%s.b", hc.NodeTypes[t])))
		matvec(xs[t][seen[t]*d:(seen[t]+1)*d], par(fmt.Sprintf("in.%s.w", hc.NodeTypes[t])), H, row, 1)
		seen[t]++
	}
	if a, err := lookupArch(cfg.Arch); err == nil && !a.Hetero {
		// HGB style: the homogeneous layers over the projected rows.
		return refForward(cfg, p, blocks, h, false, MaskKey{})
	}
	for l := range blocks {
		b := &blocks[l]
		in, out := cfg.LayerDims(l)
		o := make([]float64, b.NumDst*out)
		wrel := func(r int) []float64 {
			if cfg.ArchName() == ArchRGCN && hc.Bases > 0 {
				w := make([]float64, in*out)
				coef := par(fmt.Sprintf("l%d.coef", l))
				for k := 0; k < hc.Bases; k++ {
					v := par(fmt.Sprintf("l%d.basis%d", l, k))
					for e := range w {
						w[e] += coef[r*hc.Bases+k] * v[e]
					}
				}
				return w
			}
			if cfg.ArchName() == ArchRGCN {
				return par(fmt.Sprintf("l%d.%s.w", l, hc.Relations[r]))
			}
			return par(fmt.Sprintf("l%d.%s.w_neigh", l, hc.Relations[r]))
		}
		for i := 0; i < b.NumDst; i++ {
			ti := typeIndexOf(hc, b.Orig[i])
			row := o[i*out : (i+1)*out]
			hi := h[i*in : (i+1)*in]
			if cfg.ArchName() == ArchRGCN {
				copy(row, par(fmt.Sprintf("l%d.b", l)))
				matvec(hi, par(fmt.Sprintf("l%d.w_self", l)), out, row, 1)
			}
			for r := range hc.Relations {
				if dst[r] != ti {
					continue
				}
				var nb, es []int
				for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
					if int(b.Etype[e]) == r {
						nb, es = append(nb, int(b.Indices[e])), append(es, int(e))
						if typeIndexOf(hc, b.Orig[b.Indices[e]]) != src[r] {
							panic("source type")
						}
					}
				}
				for _, j := range nb {
					matvec(h[j*in:(j+1)*in], wrel(r), out, row, 1/float64(len(nb)))
				}
				if d := cfg.EdgeDim; d > 0 {
					for _, e := range es {
						matvec(to64(b.EdgeFeat[e*d:(e+1)*d]), par(fmt.Sprintf("l%d.%s.w_edge", l, hc.Relations[r])), out, row, 1/float64(len(es)))
					}
				}
				if cfg.ArchName() == ArchHSAGE {
					for u, v := range par(fmt.Sprintf("l%d.%s.b", l, hc.Relations[r])) {
						row[u] += v
					}
					matvec(hi, par(fmt.Sprintf("l%d.%s.w_root", l, hc.Relations[r])), out, row, 1)
				}
			}
		}
		if l < len(blocks)-1 {
			for k := range o {
				o[k] = math.Max(o[k], 0)
			}
		}
		h = o
	}
	return h
}

func TestHeteroForwardMatchesReference(t *testing.T) {
	for _, tc := range hetCases() {
		if tc.drop {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			m, blocks, xs, _ := hetTestCase(t, tc.cfg, 7)
			want := refHetero(tc.cfg, to64(m.Params()), blocks, to64s(xs))
			n := mustNet(t, tc.cfg, to64(m.Params()))
			require.NoError(t, n.checkInputs(blocks, typed(to64s(xs))))
			n.forwardHetero(blocks, to64s(xs), false, MaskKey{})
			got := n.out[tc.cfg.Layers-1]
			require.Len(t, got, len(want))
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-12*(1+math.Abs(want[i])), "logit %d", i)
			}
			logits, err := m.Forward(&sample.Batch{Blocks: blocks, XT: xs})
			require.NoError(t, err)
			for i := range want {
				require.InDelta(t, want[i], float64(logits[i]), 1e-4*(1+math.Abs(want[i])), "float32 logit %d", i)
			}
			pred, err := m.Predict(&sample.Batch{Blocks: blocks, XT: xs}, nil)
			require.NoError(t, err)
			require.Len(t, pred, blocks[len(blocks)-1].NumDst)
		})
	}
}

// TestHeteroTensorLayout: hetero tensors are named per relation, the typed
// input projections come last, and homogeneous configs have none.
func TestHeteroTensorLayout(t *testing.T) {
	cfg := Config{Arch: ArchHSAGE, Hidden: 4, Classes: 3, Layers: 2, Hetero: testHetero([]int{3, 4, 2}, 0, nil)}
	ts := cfg.Tensors()
	require.NotEmpty(t, ts)
	assert.Equal(t, "l0.a___cites___a.w_neigh", ts[0].Name)
	assert.Equal(t, 4, ts[0].Rows, "layer 0 reads the Hidden-wide projections")
	last := ts[len(ts)-6:]
	for i, name := range []string{"in.a.w", "in.a.b", "in.b.w", "in.b.b", "in.c.w", "in.c.b"} {
		assert.Equal(t, name, last[i].Name)
		assert.Equal(t, InputLayer, last[i].Layer)
	}
	assert.Equal(t, 4, last[2].Rows)
	assert.True(t, last[1].IsBias())
	rg := Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 1, Hetero: testHetero([]int{3, 4, 2}, 2, nil)}
	var names []string
	for _, t := range rg.Tensors() {
		names = append(names, t.Name)
	}
	assert.Equal(t, []string{"l0.w_self", "l0.b", "l0.basis0", "l0.basis1", "l0.coef", "in.a.w", "in.a.b", "in.b.w", "in.b.b", "in.c.w", "in.c.b"}, names)
	for _, c := range archConfigs {
		for _, ts := range c.Tensors() {
			assert.NotContains(t, ts.Name, inputPrefix, "homogeneous %s", c.Arch)
		}
	}
	assert.Equal(t, []string{ArchSAGE, ArchGCN, ArchGAT, ArchGATv2, ArchGIN, ArchGINE}, Archs())
	assert.Equal(t, []string{ArchRGCN, ArchHSAGE}, HeteroArchs())
}

func TestHeteroConfigValidate(t *testing.T) {
	ok := func() Config {
		return Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 2, Hetero: testHetero([]int{3, 4, 2}, 0, nil)}
	}
	require.NoError(t, ok().Validate())
	for _, tc := range []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"no hetero", func(c *Config) { c.Hetero = nil; c.InDim = 3 }, "rgcn is a heterogeneous model and needs a hetero section"},
		{"bases on a homogeneous model", func(c *Config) { c.Arch = ArchGCN; c.Hetero.Bases = 2 }, "hetero.bases 2 applies to rgcn only, not gcn"},
		{"in_dim set", func(c *Config) { c.InDim = 3 }, "in_dim 3 must be 0 for a heterogeneous model"},
		{"no hidden", func(c *Config) { c.Hidden = 0; c.Layers = 1 }, "hidden 0 must be positive for a heterogeneous model"},
		{"no types", func(c *Config) { c.Hetero.NodeTypes = nil }, "hetero.node_types is empty"},
		{"unsorted types", func(c *Config) { c.Hetero.NodeTypes = []string{"b", "a", "c"} }, "must be sorted and distinct"},
		{"offsets", func(c *Config) { c.Hetero.NodeOrig = []int64{0, 50, 90} }, "hetero.node_orig needs 4 offsets"},
		{"decreasing offsets", func(c *Config) { c.Hetero.NodeOrig = []int64{0, 50, 40, 120} }, "hetero.node_orig decreases at type \"b\""},
		{"no relations", func(c *Config) { c.Hetero.Relations = nil }, "hetero.relations is empty"},
		{"bad relation", func(c *Config) { c.Hetero.Relations = []string{"a__x__b"} }, `relation "a__x__b": want src___name___dst`},
		{"unknown type", func(c *Config) { c.Hetero.Relations = []string{"a___to___z"} }, "names a node type not in hetero.node_types"},
		{"unsorted relations", func(c *Config) { c.Hetero.Relations = []string{"b___to___c", "a___to___b"} }, "hetero.relations must be sorted"},
		{"in dims", func(c *Config) { c.Hetero.InDims = []int{3, 4} }, "hetero.in_dims has 2 widths for 3 node types"},
		{"zero in dim", func(c *Config) { c.Hetero.InDims = []int{3, 0, 2} }, `hetero.in_dims[1] (type "b") is 0`},
		{"bases", func(c *Config) { c.Hetero.Bases = 6 }, "hetero.bases 6 must be in [0,5]"},
		{"bases on hsage", func(c *Config) { c.Arch = ArchHSAGE; c.Hetero.Bases = 2 }, "hetero.bases 2 applies to rgcn only"},
		{"heads", func(c *Config) { c.Opts = GATOpts(2, 0) }, "Opts.Heads applies to Arch gat, gatv2 only, not rgcn"},
		{"learnable", func(c *Config) { c.Hetero.Learnable = []bool{true} }, "hetero.learnable has 1 flags for 3 node types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok()
			tc.mod(&c)
			err := c.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Nil(t, c.Tensors())
		})
	}
}

// TestHGBRefusesEdgeDim: an architecture that reads edge features runs
// on a heterogeneous graph without them, as the typed sampler's blocks
// carry none; edge_dim is refused there and accepted on a homogeneous one.
func TestHGBRefusesEdgeDim(t *testing.T) {
	edge := gatArch()
	edge.EdgeFeatures = true
	tab := builtinArchs().with([]Arch{edge})
	c := Config{Arch: ArchGAT, Hidden: 4, Classes: 3, Layers: 2, Opts: GATOpts(2, 0), EdgeDim: 3, Hetero: testHetero([]int{3, 4, 2}, 0, nil)}
	err := c.validate(tab)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "edge_dim 3: gat on a heterogeneous graph reads no edge features")
	c.EdgeDim = 0
	require.NoError(t, c.validate(tab))
	c.Hetero, c.InDim, c.EdgeDim = nil, 5, 3
	require.NoError(t, c.validate(tab))
}

// TestHeteroBatchErrors: malformed typed batches give one clear error, and
// the homogeneous and heterogeneous entry points refuse each other's models.
func TestHeteroBatchErrors(t *testing.T) {
	cfg := Config{Arch: ArchHSAGE, Hidden: 5, Classes: 3, Layers: 2, Hetero: testHetero([]int{3, 4, 2}, 0, nil)}
	m, blocks, xs, y := hetTestCase(t, cfg, 3)
	clone := func() []sample.Block {
		out := make([]sample.Block, len(blocks))
		for l, b := range blocks {
			b.Etype, b.Orig = slices.Clone(b.Etype), slices.Clone(b.Orig)
			out[l] = b
		}
		return out
	}
	for _, tc := range []struct {
		name string
		mod  func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32)
		want string
	}{
		{"untyped", func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32) {
			bs[1].Etype = nil
			return bs, xs
		}, "block 1: 0 edge types"},
		{"relation range", func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32) {
			bs[0].Etype[0] = 9
			return bs, xs
		}, "relation 9 outside [0,5)"},
		{"wrong destination type", func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32) {
			bs[0].Etype[0] = 3 // b___to___c, but destination 0 is an a node
			return bs, xs
		}, "of relation b___to___c ends at a a node"},
		{"orig outside", func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32) {
			bs[0].Orig[5] = 500
			return bs, xs
		}, "original id 500 outside the schema's [0,120)"},
		{"types", func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32) {
			return bs, xs[:2]
		}, "got 2 input matrices for 3 node types"},
		{"rows", func(bs []sample.Block, xs [][]float32) ([]sample.Block, [][]float32) {
			return bs, [][]float32{xs[0], xs[1][:4], xs[2]}
		}, `node type "b": got 4 input values`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, x := tc.mod(clone(), slices.Clone(xs))
			_, _, err := fb(m.n, &sample.Batch{Blocks: bs, Labels: y}, typed(x), 1, false, MaskKey{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// Grouping: swap two edges of different relations of one destination.
	bs := clone()
	for i := 0; i < bs[0].NumDst; i++ {
		e0, e1 := bs[0].Indptr[i], bs[0].Indptr[i+1]
		if e1 > e0 && bs[0].Etype[e0] != bs[0].Etype[e1-1] {
			bs[0].Indices = slices.Clone(bs[0].Indices)
			bs[0].Etype[e0], bs[0].Etype[e1-1] = bs[0].Etype[e1-1], bs[0].Etype[e0]
			bs[0].Indices[e0], bs[0].Indices[e1-1] = bs[0].Indices[e1-1], bs[0].Indices[e0]
			break
		}
	}
	_, _, err := fb(m.n, &sample.Batch{Blocks: bs, Labels: y}, typed(xs), 1, false, MaskKey{})
	require.ErrorContains(t, err, "not grouped by relation ascending")

	_, _, err = fb(m.n, &sample.Batch{Blocks: blocks, Labels: y}, dense(xs[0]), 1, false, MaskKey{})
	require.ErrorContains(t, err, "heterogeneous model takes one input matrix per node type")
	homo, err := NewModel(archConfigs[0], 1)
	require.NoError(t, err)
	_, err = homo.Forward(&sample.Batch{Blocks: blocks, XT: xs})
	require.ErrorContains(t, err, "sage model is homogeneous")
	assert.Nil(t, homo.InputGrad(0))
}

// TestHeteroConfigJSON: a heterogeneous config survives a checkpoint round
// trip, and Equal compares Hetero by value.
func TestHeteroConfigJSON(t *testing.T) {
	cfg := Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 2, Dropout: 0.5, Hetero: testHetero([]int{3, 4, 2}, 2, []bool{false, true, false})}
	p, err := InitParams(cfg, 3)
	require.NoError(t, err)
	n := len(p)
	data, err := EncodeCheckpoint(&Checkpoint{Model: cfg, Adam: optim.DefaultAdam(0.01, 0), Seed: 3, Params: p, M: make([]float32, n), V: make([]float32, n)})
	require.NoError(t, err)
	got, err := DecodeCheckpoint("ck", data)
	require.NoError(t, err)
	assert.Equal(t, cfg, got.Model)
	assert.True(t, cfg.Equal(got.Model))
	other := got.Model
	other.Hetero = testHetero([]int{3, 4, 2}, 1, []bool{false, true, false})
	assert.False(t, cfg.Equal(other))
	assert.True(t, archConfigs[0].Equal(Config{Arch: "", InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5}))
}

// TestNewHeteroConfig: the config built from a graph.Schema validates, maps
// back to the same schema, and sizes the memory estimate from its layout.
func TestNewHeteroConfig(t *testing.T) {
	rels := []graph.Relation{{Src: "paper", Name: "cites", Dst: "paper"}, {Src: "author", Name: "writes", Dst: "paper"}}
	rels = append(rels, rels[1].Reverse())
	s, err := graph.NewSchema(map[string]int64{"paper": 30, "author": 20}, rels)
	require.NoError(t, err)
	h := NewHeteroConfig(s, []int{8, 16}, 2, []bool{true, false})
	assert.Equal(t, []string{"author___writes___paper", "paper___cites___paper", "paper___rev_writes___author"}, h.Relations)
	assert.Equal(t, []int64{0, 20, 50}, h.NodeOrig)
	cfg := Config{Arch: ArchRGCN, Hidden: 8, Classes: 3, Layers: 2, Hetero: h}
	require.NoError(t, cfg.Validate())
	back, err := h.Schema()
	require.NoError(t, err)
	assert.Equal(t, s, back)
	e := cfg.EstimateTraining([]int{5, 5}, nil, 64, 50)
	assert.Equal(t, float64(cfg.NumParams()*4), e.Params)
	assert.Positive(t, e.Activations)
}

// TestHeteroConfigOwnValidate: HeteroConfig.Validate on its own refuses
// each structural mistake with the message Config.Validate passes on.
func TestHeteroConfigOwnValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(h *HeteroConfig)
		want string
	}{
		{"valid", func(*HeteroConfig) {}, ""},
		{"valid with bases and learnable", func(h *HeteroConfig) { h.Bases = 5; h.Learnable = []bool{true, false, false} }, ""},
		{"no types", func(h *HeteroConfig) { h.NodeTypes = nil }, "model config: hetero.node_types is empty"},
		{"empty type", func(h *HeteroConfig) { h.NodeTypes = []string{"", "b", "c"} }, "model config: hetero.node_types[0] is empty"},
		{"repeated type", func(h *HeteroConfig) { h.NodeTypes = []string{"a", "a", "c"} }, `model config: hetero.node_types must be sorted and distinct ("a" then "a")`},
		{"offsets", func(h *HeteroConfig) { h.NodeOrig = []int64{1, 50, 90, 120} }, "model config: hetero.node_orig needs 4 offsets starting at 0 (one per node type plus the end), got [1 50 90 120]"},
		{"decreasing offsets", func(h *HeteroConfig) { h.NodeOrig = []int64{0, 50, 40, 120} }, `model config: hetero.node_orig decreases at type "b" (50 then 40)`},
		{"no relations", func(h *HeteroConfig) { h.Relations = nil }, "model config: hetero.relations is empty"},
		{"unknown type", func(h *HeteroConfig) { h.Relations = []string{"a___to___z"} }, "model config: hetero.relations[0] a___to___z names a node type not in hetero.node_types"},
		{"unsorted relations", func(h *HeteroConfig) { h.Relations = []string{"b___to___c", "a___to___b"} }, `model config: hetero.relations must be sorted and distinct ("b___to___c" then "a___to___b")`},
		{"in dims", func(h *HeteroConfig) { h.InDims = []int{3, 4} }, "model config: hetero.in_dims has 2 widths for 3 node types"},
		{"negative in dim", func(h *HeteroConfig) { h.InDims = []int{3, 4, -1} }, `model config: hetero.in_dims[2] (type "c") is -1, must be positive`},
		{"negative bases", func(h *HeteroConfig) { h.Bases = -1 }, "model config: hetero.bases -1 must be in [0,5] (0 = one weight per relation)"},
		{"learnable", func(h *HeteroConfig) { h.Learnable = []bool{true} }, "model config: hetero.learnable has 1 flags for 3 node types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testHetero([]int{3, 4, 2}, 0, nil)
			tc.mod(h)
			if tc.want == "" {
				require.NoError(t, h.Validate())
				return
			}
			require.EqualError(t, h.Validate(), tc.want)
		})
	}
}
