package train

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// PyG export: the parameters of a model as a PyTorch Geometric state dict.
// For the homogeneous models the names, shapes and layouts are those of
// torch_geometric.nn.models.GraphSAGE / GCN / GAT (BasicGNN with
// out_channels set and jk=None, PyG 2.5 and later), so that
// model.load_state_dict(state, strict=True) takes them:
//
//	sage  convs.l.lin_l.weight (out, in) = W_neighᵀ, convs.l.lin_l.bias (out) = b,
//	      convs.l.lin_r.weight (out, in) = W_selfᵀ         (SAGEConv, aggr mean,
//	      sum or max; aggr pool is aggr="max", project=True with
//	      convs.l.lin.weight (in, in) = W_poolᵀ, convs.l.lin.bias (in) = b_pool)
//	gcn   convs.l.lin.weight (out, in) = Wᵀ, convs.l.bias (out) = b   (GCNConv)
//	gat   convs.l.lin.weight (H·F, in) = Wᵀ, convs.l.att_src / att_dst (1, H, F),
//	      convs.l.bias (H·F hidden, F last)                  (GATConv)
//	      with edge_dim D also convs.l.lin_edge.weight (H·F, D) = W_edgeᵀ,
//	      convs.l.att_edge (1, H, F)
//
// Between the layers (between.go; BasicGNN's norm and jk): norms.l.weight
// and .bias (Hidden; LayerNorm mode "node"), lin.weight (out, Hidden·L for
// jk cat, else Hidden) and lin.bias (out), and for --residual res.l.weight
// (Hidden, in) where the widths differ (scripts/pyg_check.py's
// ResidualBasicGNN; PyG has no residual BasicGNN).
//
// torch.nn.Linear keeps its weight output-major, mpignn input-major, hence
// the transposes. A link model's MLP decoder (OGB's LinkPredictor) follows
// under the prefix "decoder.": decoder.lins.0.weight (C, C), .bias (C),
// decoder.lins.1.weight (1, C), .bias (1).
//
// Heterogeneous models, for which PyG has no model class, are a module of
// per-type input projections (lins.<type>: Linear(in_t, hidden)) and
// convolutions that PyG has: HeteroConv of one SAGEConv per edge type
// (convs.l.convs.<src___rel___dst>.lin_l/lin_r, hsage) or RGCNConv
// (convs.l.weight, comp, root, bias; rgcn), or, for a homogeneous
// architecture on a heterogeneous graph (HGB style), its own convs.l over
// the homogenized graph (PyGHGBClass). Learnable embedding tables are
// torch.nn.Embedding weights (PyGEmbeddingName), passed beside the model's
// flat buffer.
//
// Every element of the flat buffer has exactly one place in the state dict
// and back, so export -> import -> export is the identity on the bytes.

// PyGVersion names the PyTorch Geometric release whose parameter names the
// export matches. Up to PyG 2.4 GATConv called its one projection
// lin_src (with lin_dst the same module); ImportPyG accepts that spelling.
const PyGVersion = "2.6"

// PyGDecoderPrefix starts the names of the link decoder's tensors.
const PyGDecoderPrefix = "decoder."

// NamedTensor is one float32 tensor of a state dict, row-major.
type NamedTensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// pygEntry maps mpignn tensors to one PyG tensor of the given shape: one
// tensor (input-major Rows x Cols), transposed when PyG keeps it
// output-major, or several stacked along a new first axis (RGCNConv's
// per-relation or per-basis weights, which PyG keeps input-major).
//
// An entry without mpignn tensors is a fixed one: a buffer of the PyG
// module that mpignn holds as configuration, not as a parameter (GINConv's
// eps without train_eps). Export writes its value; import requires that
// value, as the model would otherwise compute something else than the
// state dict's module, and setting names the configuration that holds it.
type pygEntry struct {
	mp        []string
	pyg       string
	shape     []int
	transpose bool
	value     []float32
	setting   string
}

// zeroEntry is a PyG tensor with no mpignn counterpart that must hold
// zeros for the PyG module to compute mpignn's function (GeneralConv's
// lin_msg and lin_edge biases, inside the neighbour mean, which HeteroSAGE
// does not have): exported as zeros, refused on import unless zero.
func zeroEntry(pyg string, shape []int) pygEntry {
	return pygEntry{pyg: pyg, shape: shape, value: make([]float32, shapeSize(shape))}
}

// one maps a single mpignn tensor.
func one(mp, pyg string, shape []int, transpose bool) pygEntry {
	return pygEntry{mp: []string{mp}, pyg: pyg, shape: shape, transpose: transpose}
}

// fixed is the entry of a one-value PyG buffer that mpignn's
// configuration (setting, for messages) holds as v.
func fixed(pyg string, v float32, setting string) pygEntry {
	return pygEntry{pyg: pyg, shape: []int{1}, value: []float32{v}, setting: setting}
}

// pygLayout lists the PyG tensor of every tensor of cfg's flat buffer.
func pygLayout(cfg Config) ([]pygEntry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, _ := lookupArch(cfg.Arch)
	if a.pyg == nil || a.pygSpec == nil {
		return nil, fmt.Errorf("pyg export: no PyG layout for model %q", cfg.ArchName())
	}
	var es []pygEntry
	if cfg.Hetero != nil {
		// The typed input projections: lins.<type> = Linear(in_t, hidden).
		for t, name := range cfg.Hetero.NodeTypes {
			m, p := inputPrefix+name, "lins."+pygKey(name)
			es = append(es,
				one(m+".w", p+".weight", []int{cfg.Hidden, cfg.Hetero.InDims[t]}, true),
				one(m+".b", p+".bias", []int{cfg.Hidden}, false))
		}
	}
	for l := 0; l < cfg.Layers; l++ {
		p := fmt.Sprintf("convs.%d.", l)
		m := fmt.Sprintf("l%d.", l)
		es = append(es, a.pyg(cfg, l, m, p)...)
	}
	es = append(es, pygBetween(cfg)...)
	if cfg.Decoder == DecoderMLP {
		// An edge predictor's last decoder layer has PairOut outputs (1
		// for link prediction).
		c, o := cfg.Classes, cfg.PairOut()
		d := PyGDecoderPrefix
		es = append(es,
			one(decoderPrefix+"w1", d+"lins.0.weight", []int{c, c}, true),
			one(decoderPrefix+"b1", d+"lins.0.bias", []int{c}, false),
			one(decoderPrefix+"w2", d+"lins.1.weight", []int{o, c}, true),
			one(decoderPrefix+"b2", d+"lins.1.bias", []int{o}, false))
	}
	return es, nil
}

// pygBetween lists the between-layer tensors (between.go) under PyG
// 2.6's BasicGNN names: norms.l.weight/bias (torch_geometric.nn.norm.
// LayerNorm with mode "node"), lin.weight/bias (the map after
// JumpingKnowledge), and res.l.weight (Hidden, in), the bias-free
// torch.nn.Linear of a residual projection, which BasicGNN has not: it is
// the ResidualBasicGNN module of scripts/pyg_check.py.
func pygBetween(cfg Config) []pygEntry {
	var es []pygEntry
	for _, s := range betweenSpecs(cfg) {
		l := s.layer
		switch {
		case s.name == "jk.w":
			es = append(es, one(s.name, "lin.weight", []int{cfg.Classes, s.Rows}, true))
		case s.name == "jk.b":
			es = append(es, one(s.name, "lin.bias", []int{cfg.Classes}, false))
		case s.Name == "norm.w":
			es = append(es, one(s.name, fmt.Sprintf("norms.%d.weight", l), []int{s.Cols}, false))
		case s.Name == "norm.b":
			es = append(es, one(s.name, fmt.Sprintf("norms.%d.bias", l), []int{s.Cols}, false))
		case s.Name == "res.w":
			es = append(es, one(s.name, fmt.Sprintf("res.%d.weight", l), []int{s.Cols, s.Rows}, true))
		}
	}
	return es
}

// shapeSize returns the number of elements of a tensor of shape s.
func shapeSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// pygKey is the key torch_geometric.nn.ModuleDict stores a name under:
// torch's ModuleDict cannot hold dots in keys, so PyG writes them as '#'.
func pygKey(name string) string { return strings.ReplaceAll(name, ".", "#") }

// PyGEmbeddingName is the state-dict name of node type t's learnable
// embedding table, a torch.nn.Embedding (rows in type-local original id
// order) in a ModuleDict "embeddings".
func PyGEmbeddingName(nodeType string) string { return "embeddings." + pygKey(nodeType) + ".weight" }

// tensorsByName indexes cfg's flat layout by tensor name.
func tensorsByName(cfg Config) map[string]Tensor {
	m := make(map[string]Tensor)
	for _, t := range cfg.Tensors() {
		m[t.Name] = t
	}
	return m
}

// transposeInto writes the rows x cols row-major src transposed into dst
// (cols x rows).
func transposeInto(dst, src []float32, rows, cols int) {
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			dst[c*rows+r] = src[r*cols+c]
		}
	}
}

// ExportPyG returns the PyG state dict of a model with configuration cfg
// and flat parameters params, sorted by name.
func ExportPyG(cfg Config, params []float32) ([]NamedTensor, error) {
	es, err := pygLayout(cfg)
	if err != nil {
		return nil, err
	}
	if n := cfg.NumParams(); len(params) != n {
		return nil, fmt.Errorf("pyg export: %d parameters, the %s model has %d", len(params), cfg.ArchName(), n)
	}
	byName := tensorsByName(cfg)
	out := make([]NamedTensor, 0, len(es))
	for _, e := range es {
		data := slices.Clone(e.value)
		for _, name := range e.mp {
			t := byName[name]
			src := params[t.Offset : t.Offset+t.Size()]
			if e.transpose {
				data = make([]float32, t.Size())
				transposeInto(data, src, t.Rows, t.Cols)
			} else {
				data = append(data, src...)
			}
		}
		out = append(out, NamedTensor{Name: e.pyg, Shape: e.shape, Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ImportPyG fills a flat parameter buffer of cfg's layout from a PyG state
// dict (strict: every tensor the model needs with its exact shape, and no
// other). GATConv's pre-2.5 spelling lin_src/lin_dst is accepted in place of
// lin when both hold the same values (a homogeneous GATConv shares them).
// A state dict without the decoder's tensors is refused for an MLP link
// model; extra "decoder." tensors are refused for any other.
func ImportPyG(cfg Config, tensors []NamedTensor) ([]float32, error) {
	es, err := pygLayout(cfg)
	if err != nil {
		return nil, err
	}
	got := make(map[string]NamedTensor, len(tensors))
	for _, t := range tensors {
		got[t.Name] = t
	}
	if a, _ := lookupArch(cfg.Arch); a.pygImport != nil {
		if err := a.pygImport(cfg, got); err != nil {
			return nil, err
		}
	}
	// Names first (a state dict of another architecture or depth fails
	// here, listing what differs), then shapes.
	var missing []string
	for _, e := range es {
		if _, ok := got[e.pyg]; !ok {
			missing = append(missing, e.pyg)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("pyg import: the %s model needs tensors missing from the state dict: %s", cfg.ArchName(), strings.Join(missing, ", "))
	}
	if len(got) > len(es) {
		need := make(map[string]bool, len(es))
		for _, e := range es {
			need[e.pyg] = true
		}
		var extra []string
		for n := range got {
			if !need[n] {
				extra = append(extra, n)
			}
		}
		sort.Strings(extra)
		return nil, fmt.Errorf("pyg import: the state dict has tensors the %s model does not (another architecture, layer count or decoder?): %s", cfg.ArchName(), strings.Join(extra, ", "))
	}
	byName := tensorsByName(cfg)
	params := make([]float32, cfg.NumParams())
	for _, e := range es {
		t := got[e.pyg]
		if !slices.Equal(t.Shape, e.shape) {
			return nil, fmt.Errorf("pyg import: tensor %s has shape %v, the %s model needs %v", e.pyg, t.Shape, cfg.ArchName(), e.shape)
		}
		size := len(e.value)
		for _, name := range e.mp {
			size += byName[name].Size()
		}
		if len(t.Data) != size {
			return nil, fmt.Errorf("pyg import: tensor %s holds %d values for shape %v", e.pyg, len(t.Data), t.Shape)
		}
		if e.mp == nil {
			if !slices.Equal(t.Data, e.value) {
				if e.setting == "" {
					return nil, fmt.Errorf("pyg import: tensor %s must be zero: the %s model has no such term (a bias inside the neighbour mean)", e.pyg, cfg.ArchName())
				}
				return nil, fmt.Errorf("pyg import: tensor %s is %v, the %s model's %s holds %v", e.pyg, t.Data, cfg.ArchName(), e.setting, e.value)
			}
			continue
		}
		src := t.Data
		for _, name := range e.mp {
			mt := byName[name]
			dst := params[mt.Offset : mt.Offset+mt.Size()]
			if e.transpose {
				// PyG's (out, in) is mpignn's (in, out) transposed: the
				// PyG tensor has mt.Cols rows.
				transposeInto(dst, src, mt.Cols, mt.Rows)
			} else {
				copy(dst, src[:mt.Size()])
			}
			src = src[mt.Size():]
		}
	}
	return params, nil
}

// PyGModelSpec is the sidecar's description of how to rebuild the model in
// Python: the PyG class and its constructor arguments, and the decoder.
type PyGModelSpec struct {
	Class  string         `json:"class"`
	Kwargs map[string]any `json:"kwargs"`
	// Decoder is "" for node classification, else "dot" or "mlp"; an MLP's
	// tensors carry PyGDecoderPrefix and load into DecoderClass built with
	// DecoderKwargs.
	Decoder       string         `json:"decoder,omitempty"`
	DecoderClass  string         `json:"decoder_class,omitempty"`
	DecoderKwargs map[string]any `json:"decoder_kwargs,omitempty"`
	// Notes lists where mpignn's computation differs from the PyG class's
	// default forward pass, for this model.
	Notes []string `json:"notes,omitempty"`
}

// PyGSpec returns the PyG constructor of cfg's model; embeds are the
// embedding tables exported with a heterogeneous model (their shapes are
// constructor arguments).
func PyGSpec(cfg Config, embeds []NamedTensor) (PyGModelSpec, error) {
	if _, err := pygLayout(cfg); err != nil {
		return PyGModelSpec{}, err
	}
	if cfg.Hetero != nil {
		return pygHeteroSpec(cfg, embeds), nil
	}
	kw := map[string]any{
		"in_channels":     cfg.InDim,
		"hidden_channels": cfg.Hidden,
		"num_layers":      cfg.Layers,
		"out_channels":    cfg.Classes,
		"dropout":         cfg.Dropout,
	}
	s := PyGModelSpec{Kwargs: kw}
	a, _ := lookupArch(cfg.Arch)
	pygEdgeDim(cfg, a, &s)
	a.pygSpec(cfg, &s)
	if cfg.Norm == NormLayer {
		// PyG's LayerNorm defaults to mode "graph" (statistics over all the
		// nodes of a graph); mpignn's is per node.
		kw["norm"] = "layer_norm"
		kw["norm_kwargs"] = map[string]any{"mode": "node"}
	}
	if cfg.JK != "" {
		kw["jk"] = cfg.JK
	}
	if cfg.Residual {
		// BasicGNN has no residual connection: scripts/pyg_check.py's
		// ResidualBasicGNN builds kwargs["gnn"] (the PyG class) and adds
		// res.l (Linear(in, hidden, bias=False) where the widths differ).
		kw["gnn"] = s.Class
		s.Class = "ResidualBasicGNN"
		s.Notes = append(s.Notes, "residual: every layer but the conv to the output computes dropout(relu(norm(conv(x))) + res(x)) "+
			"(PyG's DeepGCNLayer block res order); res.l is Linear(in, hidden, bias=False) where the widths differ, else the identity")
	}
	if cfg.InputDropout != 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("mpignn drops input features with p=%v in training; PyG's BasicGNN has no input dropout (evaluation mode: no effect)", cfg.InputDropout))
	}
	switch cfg.Decoder {
	case DecoderDot:
		s.Decoder = DecoderDot
	case DecoderMLP:
		s.Decoder = DecoderMLP
		s.DecoderClass = "LinkPredictor (OGB examples/linkproppred; also in scripts/pyg_check.py): lins = [Linear(C, C), Linear(C, 1)]; " +
			"mpignn's score is lins[1](relu(lins[0](h_u * h_v))), OGB's forward returns its sigmoid (mpignn's prob)"
		s.DecoderKwargs = map[string]any{"in_channels": cfg.Classes, "hidden_channels": cfg.Classes, "out_channels": cfg.PairOut(), "num_layers": 2, "dropout": 0.0}
		if cfg.IsEdge() {
			s.DecoderClass = fmt.Sprintf("LinkPredictor with out_channels %d (an edge predictor, mpignn train --task edge): lins = [Linear(C, C), Linear(C, %d)]; "+
				"mpignn's outputs are lins[1](relu(lins[0](h_u * h_v))), without the sigmoid: class logits, or the predicted values", cfg.EdgeOut, cfg.EdgeOut)
		}
	}
	return s, nil
}

// pygEdgeDim adds the edge features a model reads to its spec: PyG 2.6's
// BasicGNN hands extra constructor kwargs to every layer (GATConv,
// GATv2Conv, GINEConv take edge_dim) and its forward takes edge_attr where
// the class supports_edge_attr. The architecture's pygSpec, called after
// it, may rename or move the kwarg.
func pygEdgeDim(cfg Config, a Arch, s *PyGModelSpec) {
	if cfg.EdgeDim == 0 || !a.EdgeFeatures {
		return
	}
	s.Kwargs["edge_dim"] = cfg.EdgeDim
	s.Notes = append(s.Notes, fmt.Sprintf("the layers read edge features: forward(x, edge_index, edge_attr=E), E one row of %d values per edge of edge_index (the dataset's raw/edge-feat.csv.gz row of that edge)", cfg.EdgeDim))
}

// pygHeteroSpec describes a heterogeneous model. PyG has no model class
// for it: the module (HeteroSAGE, RGCN) is defined in scripts/pyg_check.py
// from PyG's HeteroConv/SAGEConv and RGCNConv, with these arguments.
func pygHeteroSpec(cfg Config, embeds []NamedTensor) PyGModelSpec {
	h := cfg.Hetero
	s, _ := h.Schema()
	edgeTypes := make([][]string, len(s.Relations))
	for r, rel := range s.Relations {
		edgeTypes[r] = []string{rel.Src, rel.Name, rel.Dst}
	}
	inDims := map[string]int{}
	for t, name := range h.NodeTypes {
		inDims[name] = h.InDims[t]
	}
	emb := map[string][]int{}
	for _, e := range embeds {
		emb[strings.TrimSuffix(strings.TrimPrefix(e.Name, "embeddings."), ".weight")] = e.Shape
	}
	kw := map[string]any{
		"node_types":      h.NodeTypes,
		"edge_types":      edgeTypes,
		"in_channels":     inDims,
		"hidden_channels": cfg.Hidden,
		"out_channels":    cfg.Classes,
		"num_layers":      cfg.Layers,
		"embeddings":      emb,
		"dropout":         cfg.Dropout,
	}
	sp := PyGModelSpec{Kwargs: kw, Notes: []string{
		"per node type t: x_t = lins[t](cat(features_t, embeddings[t].weight)) (either part may be absent), no activation; " +
			"then the convolutions with ReLU between them; the node types' rows in type-local original id order",
	}}
	a, _ := lookupArch(cfg.Arch)
	if a.Hetero {
		a.pygSpec(cfg, &sp)
		return sp
	}
	// HGB style: the homogeneous model's own class and arguments build
	// its convolutions, run over the homogenized graph.
	conv := PyGModelSpec{Kwargs: map[string]any{}}
	a.pygSpec(cfg, &conv)
	sp.Class = PyGHGBClass
	kw["conv"], kw["conv_kwargs"] = conv.Class, conv.Kwargs
	sp.Notes = append(sp.Notes, "HGB style (Lv et al., KDD 2021): "+conv.Class+"'s convolutions (convs.l, built with in_channels = out of lins = hidden_channels and conv_kwargs) "+
		"run on the homogenized graph, ignoring node and edge types: nodes of every type concatenated in node_types order (PyG's HeteroData.to_homogeneous), "+
		"the edges of every edge type, both directions, with the ids offset accordingly")
	sp.Notes = append(sp.Notes, conv.Notes...)
	return sp
}

// PyGHGBClass is the sidecar class of a homogeneous architecture on a
// heterogeneous graph (Config.Hetero): PyG has none, scripts/pyg_check.py
// defines it (typed input projections, then the homogeneous model's
// convolutions over the homogenized graph).
const PyGHGBClass = "HGBHomogeneous"

// pygMetaArch and pygMetaModel are the "__metadata__" keys of an exported
// file that record mpignn's own description of the model (informational:
// ImportPyG checks names and shapes, so a file saved by PyG loads too).
const (
	pygMetaArch  = "mpignn_arch"
	pygMetaModel = "mpignn_model"
)

// EncodePyG returns the safetensors bytes of cfg's model with parameters
// params in PyG's layout (see ExportPyG), plus the extra tensors (a
// heterogeneous model's embedding tables).
func EncodePyG(cfg Config, params []float32, extra ...NamedTensor) ([]byte, error) {
	ts, err := ExportPyG(cfg, params)
	if err != nil {
		return nil, err
	}
	ts = append(ts, extra...)
	mj, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return EncodeSafetensors(ts, map[string]string{"format": "pt", pygMetaArch: cfg.ArchName(), pygMetaModel: string(mj)})
}

// LoadPyG reads a PyG-layout safetensors file (written by EncodePyG or by
// safetensors.torch.save_file(model.state_dict(), path)) into a flat
// parameter buffer of cfg's layout.
func LoadPyG(path string, cfg Config) ([]float32, error) {
	ts, _, err := ReadSafetensors(path)
	if err != nil {
		return nil, err
	}
	p, err := ImportPyG(cfg, ts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
