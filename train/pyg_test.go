package train

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/nlpodyssey/safetensors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pygConfigs are the configurations the PyG layout covers: every
// homogeneous architecture, a one-layer GAT (its only layer averages the
// heads), an MLP link model (decoder tensors), GIN with a learnable and a
// fixed ε (a buffer in PyG), GINE with edge features.
var pygConfigs = []Config{
	{Arch: ArchSAGE, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5},
	{Arch: ArchGCN, InDim: 5, Hidden: 6, Classes: 3, Layers: 3, Dropout: 0.5},
	{Arch: ArchGAT, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5, Opts: GATOpts(2, 0.25)},
	{Arch: ArchGAT, InDim: 5, Classes: 4, Layers: 1, Opts: GATOpts(3, 0)},
	{Arch: ArchSAGE, InDim: 5, Hidden: 6, Classes: 4, Layers: 2, Decoder: DecoderMLP},
	// Between the layers: norms, residual projections and the jk map.
	{Arch: ArchSAGE, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Residual: true, Norm: NormLayer, JK: JKCat},
	{Arch: ArchGAT, InDim: 6, Hidden: 6, Classes: 3, Layers: 3, Residual: true, JK: JKMax, Opts: GATOpts(2, 0)},
	{Arch: ArchGCN, InDim: 5, Hidden: 6, Classes: 4, Layers: 2, Norm: NormLayer, Decoder: DecoderMLP},
	{Arch: ArchGIN, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Opts: GINOpts(true, 0.5)},
	{Arch: ArchGIN, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Opts: GINOpts(false, -0.25)},
	{Arch: ArchGINE, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, EdgeDim: 2},
	{Arch: ArchGAT, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, EdgeDim: 4, Opts: GATOpts(2, 0)},
	{Arch: ArchGATv2, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5, Opts: GATOpts(2, 0.25)},
	{Arch: ArchGATv2, InDim: 5, Classes: 4, Layers: 1, EdgeDim: 2, Opts: GATOpts(3, 0)},
	{Arch: ArchSAGE, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Opts: SAGEOpts(SAGEPool)},
	{Arch: ArchSAGE, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, Opts: SAGEOpts(SAGEMax)},
}

// distinctParams gives every parameter its own value, so a transposition
// or offset mix-up changes the result.
func distinctParams(cfg Config) []float32 {
	p := make([]float32, cfg.NumParams())
	for i := range p {
		p[i] = float32(i)*0.001 - 0.3
	}
	return p
}

// TestPyGRoundTrip: export -> safetensors bytes -> import gives the same
// flat buffer, and exporting it again the same bytes.
func TestPyGRoundTrip(t *testing.T) {
	for _, cfg := range pygConfigs {
		t.Run(cfg.ArchName()+cfg.Decoder+string(cfg.Opts), func(t *testing.T) {
			p := distinctParams(cfg)
			b, err := EncodePyG(cfg, p)
			require.NoError(t, err)
			ts, meta, err := DecodeSafetensors("x.safetensors", b)
			require.NoError(t, err)
			assert.Equal(t, cfg.ArchName(), meta[pygMetaArch])
			got, err := ImportPyG(cfg, ts)
			require.NoError(t, err)
			require.Equal(t, p, got)
			b2, err := EncodePyG(cfg, got)
			require.NoError(t, err)
			assert.Equal(t, b, b2)
		})
	}
}

// TestPyGNamesAndShapes pins the state dict of each architecture to PyG's
// module and parameter names and torch's (out, in) Linear layout.
func TestPyGNamesAndShapes(t *testing.T) {
	cases := []struct {
		cfg  Config
		want map[string][]int
	}{
		{pygConfigs[0], map[string][]int{
			"convs.0.lin_l.weight": {6, 5}, "convs.0.lin_l.bias": {6}, "convs.0.lin_r.weight": {6, 5},
			"convs.1.lin_l.weight": {3, 6}, "convs.1.lin_l.bias": {3}, "convs.1.lin_r.weight": {3, 6},
		}},
		{pygConfigs[1], map[string][]int{
			"convs.0.lin.weight": {6, 5}, "convs.0.bias": {6},
			"convs.1.lin.weight": {6, 6}, "convs.1.bias": {6},
			"convs.2.lin.weight": {3, 6}, "convs.2.bias": {3},
		}},
		{pygConfigs[2], map[string][]int{
			"convs.0.lin.weight": {6, 5}, "convs.0.att_src": {1, 2, 3}, "convs.0.att_dst": {1, 2, 3}, "convs.0.bias": {6},
			"convs.1.lin.weight": {6, 6}, "convs.1.att_src": {1, 2, 3}, "convs.1.att_dst": {1, 2, 3}, "convs.1.bias": {3},
		}},
		{pygConfigs[11], map[string][]int{
			"convs.0.lin.weight": {6, 5}, "convs.0.att_src": {1, 2, 3}, "convs.0.att_dst": {1, 2, 3}, "convs.0.bias": {6},
			"convs.0.lin_edge.weight": {6, 4}, "convs.0.att_edge": {1, 2, 3},
			"convs.1.lin.weight": {6, 6}, "convs.1.att_src": {1, 2, 3}, "convs.1.att_dst": {1, 2, 3}, "convs.1.bias": {3},
			"convs.1.lin_edge.weight": {6, 4}, "convs.1.att_edge": {1, 2, 3},
		}},
		{pygConfigs[12], map[string][]int{
			"convs.0.lin_l.weight": {6, 5}, "convs.0.lin_l.bias": {6}, "convs.0.lin_r.weight": {6, 5}, "convs.0.lin_r.bias": {6},
			"convs.0.att": {1, 2, 3}, "convs.0.bias": {6},
			"convs.1.lin_l.weight": {6, 6}, "convs.1.lin_l.bias": {6}, "convs.1.lin_r.weight": {6, 6}, "convs.1.lin_r.bias": {6},
			"convs.1.att": {1, 2, 3}, "convs.1.bias": {3},
		}},
		{pygConfigs[13], map[string][]int{
			"convs.0.lin_l.weight": {12, 5}, "convs.0.lin_l.bias": {12}, "convs.0.lin_r.weight": {12, 5}, "convs.0.lin_r.bias": {12},
			"convs.0.att": {1, 3, 4}, "convs.0.bias": {4}, "convs.0.lin_edge.weight": {12, 2},
		}},
		{pygConfigs[4], map[string][]int{
			"convs.0.lin_l.weight": {6, 5}, "convs.0.lin_l.bias": {6}, "convs.0.lin_r.weight": {6, 5},
			"convs.1.lin_l.weight": {4, 6}, "convs.1.lin_l.bias": {4}, "convs.1.lin_r.weight": {4, 6},
			"decoder.lins.0.weight": {4, 4}, "decoder.lins.0.bias": {4}, "decoder.lins.1.weight": {1, 4}, "decoder.lins.1.bias": {1},
		}},
		{pygConfigs[5], map[string][]int{
			"convs.0.lin_l.weight": {6, 5}, "convs.0.lin_l.bias": {6}, "convs.0.lin_r.weight": {6, 5},
			"convs.1.lin_l.weight": {6, 6}, "convs.1.lin_l.bias": {6}, "convs.1.lin_r.weight": {6, 6},
			"norms.0.weight": {6}, "norms.0.bias": {6}, "norms.1.weight": {6}, "norms.1.bias": {6},
			"res.0.weight": {6, 5}, "lin.weight": {3, 12}, "lin.bias": {3},
		}},
		{pygConfigs[6], map[string][]int{ // widths all equal: identity residuals, no res tensors
			"convs.0.lin.weight": {6, 6}, "convs.0.att_src": {1, 2, 3}, "convs.0.att_dst": {1, 2, 3}, "convs.0.bias": {6},
			"convs.1.lin.weight": {6, 6}, "convs.1.att_src": {1, 2, 3}, "convs.1.att_dst": {1, 2, 3}, "convs.1.bias": {6},
			"convs.2.lin.weight": {6, 6}, "convs.2.att_src": {1, 2, 3}, "convs.2.att_dst": {1, 2, 3}, "convs.2.bias": {6},
			"lin.weight": {3, 6}, "lin.bias": {3},
		}},
		{pygConfigs[7], map[string][]int{ // no jk: the last conv has no norm
			"convs.0.lin.weight": {6, 5}, "convs.0.bias": {6}, "convs.1.lin.weight": {4, 6}, "convs.1.bias": {4},
			"norms.0.weight": {6}, "norms.0.bias": {6},
			"decoder.lins.0.weight": {4, 4}, "decoder.lins.0.bias": {4}, "decoder.lins.1.weight": {1, 4}, "decoder.lins.1.bias": {1},
		}},
		// SAGEConv(project=True): lin = Linear(in, in) per layer.
		{pygConfigs[14], map[string][]int{
			"convs.0.lin_l.weight": {6, 5}, "convs.0.lin_l.bias": {6}, "convs.0.lin_r.weight": {6, 5},
			"convs.0.lin.weight": {5, 5}, "convs.0.lin.bias": {5},
			"convs.1.lin_l.weight": {3, 6}, "convs.1.lin_l.bias": {3}, "convs.1.lin_r.weight": {3, 6},
			"convs.1.lin.weight": {6, 6}, "convs.1.lin.bias": {6},
		}},
		// max has no parameters of its own.
		{pygConfigs[15], map[string][]int{
			"convs.0.lin_l.weight": {6, 5}, "convs.0.lin_l.bias": {6}, "convs.0.lin_r.weight": {6, 5},
			"convs.1.lin_l.weight": {3, 6}, "convs.1.lin_l.bias": {3}, "convs.1.lin_r.weight": {3, 6},
		}},
	}
	for _, tc := range cases {
		ts, err := ExportPyG(tc.cfg, distinctParams(tc.cfg))
		require.NoError(t, err)
		got := map[string][]int{}
		for _, x := range ts {
			got[x.Name] = x.Shape
			n := 1
			for _, d := range x.Shape {
				n *= d
			}
			assert.Len(t, x.Data, n, x.Name)
		}
		assert.Equal(t, tc.want, got, tc.cfg.ArchName())
	}
}

// TestPyGSAGEAggr: each aggregator's PyG constructor arguments, pool's
// projection transposed into lin.weight, and a state dict of another
// aggregator's layout refused.
func TestPyGSAGEAggr(t *testing.T) {
	base := Config{Arch: ArchSAGE, InDim: 3, Hidden: 4, Classes: 2, Layers: 2}
	for _, tc := range []struct {
		aggr    string
		kwAggr  string
		project bool
	}{
		{SAGEMean, "mean", false},
		{SAGESum, "sum", false},
		{SAGEMax, "max", false},
		{SAGEPool, "max", true},
	} {
		t.Run(tc.aggr, func(t *testing.T) {
			cfg := base
			cfg.Opts = SAGEOpts(tc.aggr)
			s, err := PyGSpec(cfg, nil)
			require.NoError(t, err)
			assert.Equal(t, "torch_geometric.nn.models.GraphSAGE", s.Class)
			assert.Equal(t, tc.kwAggr, s.Kwargs["aggr"])
			if tc.project {
				assert.Equal(t, true, s.Kwargs["project"])
			} else {
				assert.NotContains(t, s.Kwargs, "project")
			}
		})
	}
	pool := base
	pool.Opts = SAGEOpts(SAGEPool)
	p := distinctParams(pool)
	ts, err := ExportPyG(pool, p)
	require.NoError(t, err)
	byName := map[string]NamedTensor{}
	for _, x := range ts {
		byName[x.Name] = x
	}
	w := tensorsByName(pool)["l1.w_pool"] // 4 x 4, input-major
	lin := byName["convs.1.lin.weight"]
	for r := 0; r < w.Rows; r++ {
		for c := 0; c < w.Cols; c++ {
			require.Equal(t, p[w.Offset+r*w.Cols+c], lin.Data[c*w.Rows+r], "lin.weight[%d][%d]", c, r)
		}
	}
	assert.Equal(t, p[tensorsByName(pool)["l0.b_pool"].Offset:][:3], byName["convs.0.lin.bias"].Data)
	// A mean model's state dict lacks lin; a pool model's has it extra.
	mean := base
	_, err = ImportPyG(pool, mustExport(t, mean))
	require.ErrorContains(t, err, "missing from the state dict: convs.0.lin.weight, convs.0.lin.bias, convs.1.lin.weight")
	_, err = ImportPyG(mean, ts)
	require.ErrorContains(t, err, "tensors the sage model does not")
}

// mustExport is ExportPyG of distinct parameters.
func mustExport(t *testing.T, cfg Config) []NamedTensor {
	t.Helper()
	ts, err := ExportPyG(cfg, distinctParams(cfg))
	require.NoError(t, err)
	return ts
}

// TestPyGTranspose: W_self[r][c] (input-major) is lin_r.weight[c][r], and
// W_neigh goes to lin_l (the aggregated neighbours), not lin_r.
func TestPyGTranspose(t *testing.T) {
	cfg := pygConfigs[0]
	p := distinctParams(cfg)
	ts, err := ExportPyG(cfg, p)
	require.NoError(t, err)
	by := map[string]NamedTensor{}
	for _, x := range ts {
		by[x.Name] = x
	}
	tn := tensorsByName(cfg)
	self, neigh := tn["l0.w_self"], tn["l0.w_neigh"]
	const r, c = 4, 2 // input 4, output 2
	assert.Equal(t, p[self.Offset+r*self.Cols+c], by["convs.0.lin_r.weight"].Data[c*5+r])
	assert.Equal(t, p[neigh.Offset+r*neigh.Cols+c], by["convs.0.lin_l.weight"].Data[c*5+r])
	assert.Equal(t, p[tn["l0.b"].Offset+c], by["convs.0.lin_l.bias"].Data[c])
}

func TestImportPyGErrors(t *testing.T) {
	gat := pygConfigs[2]
	good, err := ExportPyG(gat, distinctParams(gat))
	require.NoError(t, err)
	edit := func(f func([]NamedTensor) []NamedTensor) []NamedTensor {
		cp := make([]NamedTensor, len(good))
		copy(cp, good)
		return f(cp)
	}
	rename := func(ts []NamedTensor, from, to string) []NamedTensor {
		for i := range ts {
			if ts[i].Name == from {
				ts[i].Name = to
			}
		}
		return ts
	}
	find := func(ts []NamedTensor, name string) NamedTensor {
		for _, x := range ts {
			if x.Name == name {
				return x
			}
		}
		t.Fatalf("no %s", name)
		return NamedTensor{}
	}
	cases := []struct {
		name    string
		cfg     Config
		ts      []NamedTensor
		wantErr string
	}{
		{"missing", gat, edit(func(ts []NamedTensor) []NamedTensor { return ts[1:] }), "missing from the state dict: convs.0.att_dst"},
		{"other architecture", pygConfigs[1], good, "needs tensors missing from the state dict: convs.2.lin.weight"},
		{"extra", gat, edit(func(ts []NamedTensor) []NamedTensor {
			return append(ts, NamedTensor{Name: "convs.0.res.weight", Shape: []int{1}, Data: []float32{0}})
		}), "does not (another architecture, layer count or decoder?): convs.0.res.weight"},
		{"shape", gat, edit(func(ts []NamedTensor) []NamedTensor {
			x := find(ts, "convs.1.bias")
			for i := range ts {
				if ts[i].Name == x.Name {
					ts[i].Shape = []int{1, 3}
				}
			}
			return ts
		}), "tensor convs.1.bias has shape [1 3], the gat model needs [3]"},
		{"lin_src alone (PyG <= 2.4)", gat, edit(func(ts []NamedTensor) []NamedTensor {
			return rename(ts, "convs.0.lin.weight", "convs.0.lin_src.weight")
		}), ""},
		{"lin_src and lin_dst equal", gat, edit(func(ts []NamedTensor) []NamedTensor {
			x := find(ts, "convs.1.lin.weight")
			ts = rename(ts, "convs.1.lin.weight", "convs.1.lin_src.weight")
			x.Name = "convs.1.lin_dst.weight"
			return append(ts, x)
		}), ""},
		{"lin_src and lin_dst differ", gat, edit(func(ts []NamedTensor) []NamedTensor {
			x := find(ts, "convs.1.lin.weight")
			ts = rename(ts, "convs.1.lin.weight", "convs.1.lin_src.weight")
			x.Name, x.Data = "convs.1.lin_dst.weight", make([]float32, len(x.Data))
			return append(ts, x)
		}), "lin_src.weight and convs.1.lin_dst.weight differ"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ImportPyG(tc.cfg, tc.ts)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, distinctParams(gat), p)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestDecodeSafetensorsDtypes: a state dict saved in float64, float16 or
// bfloat16 loads as float32; integer tensors and broken files are refused
// with the file's name.
func TestDecodeSafetensorsDtypes(t *testing.T) {
	vals := []float64{0.5, -2, 0.25, 1024}
	views := map[string]safetensors.TensorView{}
	add := func(name string, dt safetensors.DType, data []byte) {
		v, err := safetensors.NewTensorView(dt, []uint64{2, 2}, data)
		require.NoError(t, err)
		views[name] = v
	}
	var f64, f16, bf16 []byte
	for _, v := range vals {
		f64 = binary.LittleEndian.AppendUint64(f64, math.Float64bits(v))
		bf16 = binary.LittleEndian.AppendUint16(bf16, uint16(math.Float32bits(float32(v))>>16))
	}
	// binary16 of 0.5, -2, 0.25, 1024.
	for _, h := range []uint16{0x3800, 0xc000, 0x3400, 0x6400} {
		f16 = binary.LittleEndian.AppendUint16(f16, h)
	}
	add("a", safetensors.F64, f64)
	add("b", safetensors.F16, f16)
	add("c", safetensors.BF16, bf16)
	b, err := safetensors.Serialize(views, nil)
	require.NoError(t, err)
	ts, _, err := DecodeSafetensors("m.safetensors", b)
	require.NoError(t, err)
	require.Len(t, ts, 3)
	for _, x := range ts {
		assert.Equal(t, []int{2, 2}, x.Shape, x.Name)
		assert.Equal(t, []float32{0.5, -2, 0.25, 1024}, x.Data, x.Name)
	}

	iv, err := safetensors.NewTensorView(safetensors.I64, []uint64{1}, make([]byte, 8))
	require.NoError(t, err)
	b, err = safetensors.Serialize(map[string]safetensors.TensorView{"n": iv}, nil)
	require.NoError(t, err)
	_, _, err = DecodeSafetensors("m.safetensors", b)
	require.ErrorContains(t, err, "m.safetensors: tensor n: dtype I64 is not a floating-point type")

	_, _, err = DecodeSafetensors("m.safetensors", b[:len(b)-1])
	require.ErrorContains(t, err, "m.safetensors: not a safetensors file")
}

// TestPyGHetero pins the heterogeneous layouts: per-type input
// projections, HeteroConv's "<src___rel___dst>" keys of SAGEConv, and
// RGCNConv's stacked relation (or basis) weights, and round-trips them.
func TestPyGHetero(t *testing.T) {
	h := testHetero([]int{3, 4, 2}, 0, nil)
	hs := Config{Arch: ArchHSAGE, Hidden: 4, Classes: 3, Layers: 2, Hetero: h}
	rg := Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 1, Hetero: testHetero([]int{3, 4, 2}, 0, nil)}
	rb := Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 1, Hetero: testHetero([]int{3, 4, 2}, 2, nil)}
	R := len(h.Relations)
	for _, cfg := range []Config{hs, rg, rb} {
		p := distinctParams(cfg)
		ts, err := ExportPyG(cfg, p)
		require.NoError(t, err)
		shapes := map[string][]int{}
		for _, x := range ts {
			shapes[x.Name] = x.Shape
		}
		for ti, name := range h.NodeTypes {
			assert.Equal(t, []int{4, h.InDims[ti]}, shapes["lins."+name+".weight"])
			assert.Equal(t, []int{4}, shapes["lins."+name+".bias"])
		}
		switch {
		case cfg.ArchName() == ArchHSAGE:
			k := "convs.1.convs.<" + h.Relations[0] + ">."
			assert.Equal(t, []int{3, 4}, shapes[k+"lin_l.weight"])
			assert.Equal(t, []int{3}, shapes[k+"lin_l.bias"])
			assert.Equal(t, []int{3, 4}, shapes[k+"lin_r.weight"])
			assert.Len(t, ts, 2*len(h.NodeTypes)+2*3*R)
		case cfg.Hetero.Bases == 0:
			assert.Equal(t, []int{R, 4, 3}, shapes["convs.0.weight"])
			assert.Equal(t, []int{4, 3}, shapes["convs.0.root"])
			assert.Equal(t, []int{3}, shapes["convs.0.bias"])
			// Relation r's weight is block r, input-major as mpignn's.
			w := tensorsByName(cfg)["l0."+h.Relations[1]+".w"]
			for _, x := range ts {
				if x.Name == "convs.0.weight" {
					assert.Equal(t, p[w.Offset:w.Offset+w.Size()], x.Data[12:24])
				}
			}
		default:
			assert.Equal(t, []int{2, 4, 3}, shapes["convs.0.weight"])
			assert.Equal(t, []int{R, 2}, shapes["convs.0.comp"])
		}
		got, err := ImportPyG(cfg, ts)
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	spec, err := PyGSpec(hs, []NamedTensor{{Name: PyGEmbeddingName(h.NodeTypes[1]), Shape: []int{5, 2}}})
	require.NoError(t, err)
	assert.Equal(t, "HeteroSAGE", spec.Class)
	assert.Equal(t, map[string][]int{h.NodeTypes[1]: {5, 2}}, spec.Kwargs["embeddings"])
}

// TestPyGSpecBetween: the sidecar rebuilds residual, norm and jk with
// BasicGNN's own arguments (LayerNorm per node) and, for a residual,
// scripts/pyg_check.py's ResidualBasicGNN around the PyG class.
func TestPyGSpecBetween(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		class string
		kw    map[string]any
	}{
		{pygConfigs[5], "ResidualBasicGNN", map[string]any{"gnn": "torch_geometric.nn.models.GraphSAGE", "norm": "layer_norm",
			"norm_kwargs": map[string]any{"mode": "node"}, "jk": JKCat}},
		{Config{Arch: ArchGCN, InDim: 5, Hidden: 6, Classes: 3, Layers: 2, JK: JKMax}, "torch_geometric.nn.models.GCN", map[string]any{"jk": JKMax}},
		{pygConfigs[0], "torch_geometric.nn.models.GraphSAGE", map[string]any{}},
	} {
		s, err := PyGSpec(tc.cfg, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.class, s.Class)
		for _, k := range []string{"gnn", "norm", "norm_kwargs", "jk"} {
			assert.Equal(t, tc.kw[k], s.Kwargs[k], k)
		}
	}
}

// TestPyGHGB: a homogeneous architecture on a heterogeneous graph exports
// the typed input projections (lins.<type>) and the architecture's own
// convs.l, which take the Hidden-wide projections; the sidecar names
// PyGHGBClass with the homogeneous class and its arguments; the layout
// round-trips.
func TestPyGHGB(t *testing.T) {
	h := testHetero([]int{3, 4, 2}, 0, nil)
	for _, g := range forEachArch([]gradCase{{"hgb", Config{Hidden: 4, Classes: 3, Layers: 2}, false}}) {
		if g.cfg.EdgeDim > 0 {
			continue // no edge features on typed blocks (gine)
		}
		t.Run(g.name, func(t *testing.T) {
			cfg := g.cfg
			cfg.Hetero = h
			homo := g.cfg
			homo.InDim = cfg.Hidden // the same convs on a homogeneous graph of Hidden-wide features
			p := distinctParams(cfg)
			ts, err := ExportPyG(cfg, p)
			require.NoError(t, err)
			hts, err := ExportPyG(homo, distinctParams(homo))
			require.NoError(t, err)
			shapes := map[string][]int{}
			for _, x := range ts {
				shapes[x.Name] = x.Shape
			}
			for ti, name := range h.NodeTypes {
				assert.Equal(t, []int{4, h.InDims[ti]}, shapes["lins."+name+".weight"])
				assert.Equal(t, []int{4}, shapes["lins."+name+".bias"])
			}
			require.Len(t, ts, 2*len(h.NodeTypes)+len(hts))
			for _, x := range hts {
				assert.Equal(t, x.Shape, shapes[x.Name], "%s as on a homogeneous graph", x.Name)
			}
			got, err := ImportPyG(cfg, ts)
			require.NoError(t, err)
			assert.Equal(t, p, got)

			spec, err := PyGSpec(cfg, nil)
			require.NoError(t, err)
			hspec, err := PyGSpec(homo, nil)
			require.NoError(t, err)
			assert.Equal(t, PyGHGBClass, spec.Class)
			assert.Equal(t, hspec.Class, spec.Kwargs["conv"])
			ck, ok := spec.Kwargs["conv_kwargs"].(map[string]any)
			require.True(t, ok)
			for k, v := range ck {
				assert.Equal(t, hspec.Kwargs[k], v, "conv_kwargs %s as the homogeneous model's", k)
			}
			assert.Equal(t, h.NodeTypes, spec.Kwargs["node_types"])
			assert.Equal(t, 4, spec.Kwargs["hidden_channels"])
		})
	}
}

// TestPyGHeteroEdgeFeat: with relation edge features HeteroSAGE's relation
// convs are PyG GeneralConv (lin_msg, lin_self, lin_edge; the biases inside
// the mean exported as zeros and refused on import unless zero) and R-GCN
// adds edge_weight (R, edge_dim, out); export -> import is the identity.
func TestPyGHeteroEdgeFeat(t *testing.T) {
	h := testHetero([]int{3, 4, 2}, 0, nil)
	R := len(h.Relations)
	for _, tc := range []struct {
		name  string
		cfg   Config
		names map[string][]int
		count int
	}{
		{"hsage", Config{Arch: ArchHSAGE, Hidden: 4, Classes: 3, Layers: 2, EdgeDim: 2, Hetero: h}, map[string][]int{
			"convs.1.convs.<" + h.Relations[0] + ">.lin_msg.weight":  {3, 4},
			"convs.1.convs.<" + h.Relations[0] + ">.lin_msg.bias":    {3},
			"convs.1.convs.<" + h.Relations[0] + ">.lin_self.weight": {3, 4},
			"convs.1.convs.<" + h.Relations[0] + ">.lin_self.bias":   {3},
			"convs.1.convs.<" + h.Relations[0] + ">.lin_edge.weight": {3, 2},
			"convs.1.convs.<" + h.Relations[0] + ">.lin_edge.bias":   {3},
		}, 2*len(h.NodeTypes) + 2*6*R},
		{"rgcn", Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 1, EdgeDim: 2, Hetero: h}, map[string][]int{
			"convs.0.weight": {R, 4, 3}, "convs.0.edge_weight": {R, 2, 3},
		}, 2*len(h.NodeTypes) + 4},
		{"rgcn-bases", Config{Arch: ArchRGCN, Hidden: 4, Classes: 3, Layers: 1, EdgeDim: 2, Hetero: testHetero([]int{3, 4, 2}, 2, nil)}, map[string][]int{
			"convs.0.weight": {2, 4, 3}, "convs.0.comp": {R, 2}, "convs.0.edge_weight": {R, 2, 3},
		}, 2*len(h.NodeTypes) + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := distinctParams(tc.cfg)
			ts, err := ExportPyG(tc.cfg, p)
			require.NoError(t, err)
			require.Len(t, ts, tc.count)
			byName := map[string]NamedTensor{}
			for _, x := range ts {
				byName[x.Name] = x
			}
			for name, shape := range tc.names {
				require.Contains(t, byName, name)
				assert.Equal(t, shape, byName[name].Shape, name)
				if strings.HasSuffix(name, "lin_msg.bias") || strings.HasSuffix(name, "lin_edge.bias") {
					assert.Equal(t, make([]float32, shape[0]), byName[name].Data, name)
				}
			}
			got, err := ImportPyG(tc.cfg, ts)
			require.NoError(t, err)
			assert.Equal(t, p, got)
			spec, err := PyGSpec(tc.cfg, nil)
			require.NoError(t, err)
			assert.Equal(t, 2, spec.Kwargs["edge_dim"])
			if tc.cfg.ArchName() != ArchHSAGE {
				return
			}
			// A non-zero bias inside the mean has no mpignn counterpart.
			k := "convs.0.convs.<" + h.Relations[1] + ">.lin_edge.bias"
			for i := range ts {
				if ts[i].Name == k {
					ts[i].Data = slices.Clone(ts[i].Data)
					ts[i].Data[1] = 0.5
				}
			}
			_, err = ImportPyG(tc.cfg, ts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), k+" must be zero")
		})
	}
}
