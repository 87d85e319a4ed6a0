package partition

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"mpignn/graph"
)

// featFile names the feature file of node type typ in a heterogeneous part.
func featFile(typ string) string { return "feat-" + typ + ".bin" }

// heteroSource is the heterogeneous side of a writer source: the schema,
// the per-type features and the META fields that do not depend on the
// assignment.
type heteroSource struct {
	schema    *graph.Schema
	feat      map[string]*graph.Features
	featTypes []string // types with features, sorted
	labelType string
	reverse   bool
	efNames   []string // edge-feature columns (Options.EdgeFeat), nil without
}

// meta returns the HeteroMeta of a partition by assign, with RelEdges and
// RelCut zeroed for the writer to count.
func (h *heteroSource) meta(assign []int32, nparts int) *HeteroMeta {
	s := h.schema
	hm := &HeteroMeta{
		NodeTypes:     slices.Clone(s.NodeTypes),
		NodeOrig:      slices.Clone(s.NodeOrig),
		Relations:     make([]string, s.NumRels()),
		TypeOffsets:   make([][]int64, s.NumTypes()),
		FeatDims:      map[string]int{},
		LabelType:     h.labelType,
		RelEdges:      make([]int64, s.NumRels()),
		RelCut:        make([]int64, s.NumRels()),
		Reverse:       h.reverse,
		EdgeFeatNames: slices.Clone(h.efNames),
	}
	for r, rel := range s.Relations {
		hm.Relations[r] = rel.String()
	}
	for _, t := range h.featTypes {
		hm.FeatDims[t] = h.feat[t].Dim
	}
	// Relabel numbers nodes part-major in original-id order, and a type's
	// original ids are one contiguous block in type order, so inside a part
	// the nodes are grouped by type: counting is all TypeOffsets needs.
	for t := range hm.TypeOffsets {
		off := make([]int64, nparts+1)
		for v := s.NodeOrig[t]; v < s.NodeOrig[t+1]; v++ {
			off[assign[v]+1]++
		}
		for p := 0; p < nparts; p++ {
			off[p+1] += off[p]
		}
		hm.TypeOffsets[t] = off
	}
	return hm
}

// AssignHetero computes the part of every node of d (indexed by
// homogenized original id) with opt.Method. METIS sees the homogenized
// graph (all relations' edges as one undirected adjacency) and balances
// every node type separately (DistDGL's balance_ntypes), plus the training
// nodes of the labelled type when a split exists.
func AssignHetero(d *graph.HeteroDataset, nparts int, opt Options) ([]int32, error) {
	if err := checkHetero(d); err != nil {
		return nil, fmt.Errorf("partition %s: %w", heteroName(d), err)
	}
	if err := CheckParts(d.NumNodes(), nparts); err != nil {
		return nil, err
	}
	if opt.Link != nil {
		// METIS sees the training graph: held-out edges must not steer
		// the partitioning either.
		_, train, err := buildHeteroLink(d, opt)
		if err != nil {
			return nil, err
		}
		d = train
	}
	switch opt.Method {
	case "", MethodMetis:
		if opt.Time && d.InTime != nil {
			// METIS wants a simple graph: drop the repeats of a source
			// at different times.
			simple := *d
			simple.In = canonical(d.In, opt.workers())
			d = &simple
		}
		lt, split, err := ResolveHetero(d, opt)
		if err != nil {
			return nil, err
		}
		bal := opt.Balance
		if bal == nil {
			bal = []string{BalanceNode, BalanceTrain}
			switch {
			case opt.Link != nil:
				// As for homogeneous link splits: the seeds are edges, so
				// balance nodes and (training) degree.
				bal = []string{BalanceNode, BalanceDegree}
			case split == "":
				bal = []string{BalanceNode}
			}
		}
		return MetisHetero(d, nparts, MetisOptions{Seed: opt.Seed, Balance: bal, Split: split, Imbalance: opt.Imbalance, Workers: opt.Workers}, lt)
	case MethodRandom:
		return Random(d.NumNodes(), nparts, opt.Seed), nil
	}
	return nil, opt.checkMethod()
}

// collapse returns the homogenized in-adjacency of d: one row per node
// holding the in-neighbours of all relations (row v is the concatenation
// of relation rows v*R..v*R+R-1, so it shares d.In's indices).
func collapse(d *graph.HeteroDataset) *graph.CSR {
	n, R := d.NumNodes(), int64(d.Schema.NumRels())
	ptr := make([]int64, n+1)
	for v := int64(0); v <= n; v++ {
		ptr[v] = d.In.Indptr[v*R]
	}
	return &graph.CSR{Indptr: ptr, Indices: d.In.Indices}
}

// homogenizedSplits returns, for every split that has ids of node type lt,
// those ids as homogenized original ids. Splits of other types do not
// reach a partition: its split files hold LabelType nodes only.
func homogenizedSplits(d *graph.HeteroDataset, lt string) map[string]*graph.Split {
	out := map[string]*graph.Split{}
	t := d.Schema.TypeIndex(lt)
	if t < 0 {
		return out
	}
	base := d.Schema.NodeOrig[t]
	shift := func(ids []int64) []int64 {
		o := make([]int64, len(ids))
		for i, v := range ids {
			o[i] = v + base
		}
		return o
	}
	for name, byType := range d.Splits {
		if s := byType[lt]; s != nil {
			out[name] = &graph.Split{Train: shift(s.Train), Valid: shift(s.Valid), Test: shift(s.Test)}
		}
	}
	return out
}

// ResolveHetero picks the labelled node type (Options.LabelType, or the
// only labelled type) and the default split among the splits of that type
// (as ResolveSplit does for homogeneous graphs).
func ResolveHetero(d *graph.HeteroDataset, opt Options) (labelType, split string, err error) {
	labelled := make([]string, 0, len(d.Labels))
	for t := range d.Labels {
		labelled = append(labelled, t)
	}
	sort.Strings(labelled)
	switch {
	case opt.LabelType != "":
		if _, ok := d.Labels[opt.LabelType]; !ok {
			return "", "", fmt.Errorf("label type %q: the dataset has labels for %v", opt.LabelType, labelled)
		}
		labelType = opt.LabelType
	case len(labelled) == 1:
		labelType = labelled[0]
	case len(labelled) > 1:
		return "", "", fmt.Errorf("the dataset has labels for node types %v: choose one (Options.LabelType)", labelled)
	}
	split, err = ResolveSplit(&graph.Dataset{Splits: homogenizedSplits(d, labelType)}, opt.Split)
	if err != nil {
		return "", "", fmt.Errorf("node type %q: %w", labelType, err)
	}
	return labelType, split, nil
}

// WriteHetero relabels d by assign (homogenized original id v goes to part
// assign[v]) and writes the format-version-2 partition directory outDir
// (see HeteroMeta): new ids part-major, then by node type, then by original
// id, so the result depends only on d and assign. The files are those of
// Write, with indptr.bin over NumOwned*R+1 relation rows, feat.bin empty,
// feat-<type>.bin per type with features, labels.bin of Options.LabelType
// (or the only labelled type; -1 for the other nodes) and split files of
// that type's nodes. Writing is atomic and --overwrite works as for Write.
func WriteHetero(outDir string, d *graph.HeteroDataset, assign []int32, nparts int, opt Options) (*Meta, error) {
	if err := checkOutDir(outDir, opt.Overwrite); err != nil {
		return nil, err
	}
	src, err := heteroSourceOf(d, opt)
	if err != nil {
		return nil, err
	}
	if err := CheckParts(src.n, nparts); err != nil {
		return nil, err
	}
	if int64(len(assign)) != src.n {
		return nil, fmt.Errorf("partition: assignment has %d entries for %d nodes", len(assign), src.n)
	}
	var ld *linkData
	if opt.Link != nil {
		var train *graph.HeteroDataset
		if ld, train, err = buildHeteroLink(d, opt); err != nil {
			return nil, err
		}
		src.in = train.In
		d = train
	}
	if opt.Time {
		if src.in, src.tm, err = newTimedSource(heteroName(d), d.In, d.InTime, d.NodeTime, d.TimeKind, src.n, opt.workers()); err != nil {
			return nil, err
		}
	}
	return writeSource(outDir, src, ld, assign, nparts, opt)
}

// WriteHeteroDataset is AssignHetero then WriteHetero.
func WriteHeteroDataset(outDir string, d *graph.HeteroDataset, nparts int, opt Options) (*Meta, error) {
	if err := checkOutDir(outDir, opt.Overwrite); err != nil {
		return nil, err
	}
	assign, err := AssignHetero(d, nparts, opt)
	if err != nil {
		return nil, err
	}
	return WriteHetero(outDir, d, assign, nparts, opt)
}

// heteroSourceOf validates d and the options and returns the writer's
// view of d.
func heteroSourceOf(d *graph.HeteroDataset, opt Options) (*source, error) {
	if err := checkHetero(d); err != nil {
		return nil, fmt.Errorf("partition %s: %w", heteroName(d), err)
	}
	if opt.HaloFeats {
		return nil, errors.New("partition: halo features are not supported for heterogeneous graphs (features are per node type)")
	}
	lt, split, err := ResolveHetero(d, opt)
	if err != nil {
		return nil, err
	}
	s := d.Schema
	R := int64(s.NumRels())
	h := &heteroSource{schema: s, feat: d.Feat, labelType: lt, reverse: opt.Undirected}
	for t := range d.Feat {
		h.featTypes = append(h.featTypes, t)
	}
	sort.Strings(h.featTypes)
	src := &source{
		name: d.Name, n: d.NumNodes(), rels: int(R), in: canonical(d.In, opt.workers()),
		splits: homogenizedSplits(d, lt), split: split, het: h,
	}
	if lt != "" {
		t := s.TypeIndex(lt)
		lo, hi := s.NodeOrig[t], s.NodeOrig[t+1]
		labels := d.Labels[lt]
		src.numClasses = d.NumClasses[lt]
		src.label = func(v int64) int32 {
			if v < lo || v >= hi {
				return -1
			}
			return labels[v-lo]
		}
	}
	if opt.EdgeFeat {
		if opt.Link != nil || opt.Time {
			return nil, fmt.Errorf("partition %s: relation edge features with a link split or times: not supported yet", heteroName(d))
		}
		if src.in, src.ef, err = heteroEdgeFeat(d, opt.workers()); err != nil {
			return nil, fmt.Errorf("partition %s: %w", heteroName(d), err)
		}
		h.efNames = slices.Clone(d.EdgeFeatNames)
	}
	// Canonical order may have reordered rows; the type checks above hold
	// for sets, so they still hold.
	return src, nil
}

func heteroName(d *graph.HeteroDataset) string {
	if d == nil {
		return "(nil)"
	}
	return d.Name
}

// checkHetero validates what AssignHetero and WriteHetero rely on: a
// consistent schema, relation rows whose sources and destinations have the
// relation's types, and features, labels and splits that fit their types.
func checkHetero(d *graph.HeteroDataset) error {
	if d == nil || d.In == nil || d.Schema == nil {
		return errors.New("heterogeneous dataset has no graph or no schema")
	}
	s := d.Schema
	if len(s.NodeOrig) != s.NumTypes()+1 || s.NodeOrig[0] != 0 {
		return fmt.Errorf("schema: %d node types but node offsets %v", s.NumTypes(), s.NodeOrig)
	}
	for t, typ := range s.NodeTypes {
		if s.NodeOrig[t+1] < s.NodeOrig[t] {
			return fmt.Errorf("schema: node type %q has a negative count", typ)
		}
		if t > 0 && s.NodeTypes[t-1] >= typ {
			return fmt.Errorf("schema: node types not sorted and distinct at %q", typ)
		}
	}
	for r, rel := range s.Relations {
		if s.SrcType(r) < 0 || s.DstType(r) < 0 {
			return fmt.Errorf("schema: relation %s names an unknown node type", rel)
		}
		if r > 0 && s.Relations[r-1].String() >= rel.String() {
			return fmt.Errorf("schema: relations not sorted and distinct at %s", rel)
		}
	}
	n, R := d.NumNodes(), int64(s.NumRels())
	if n < 1 {
		return fmt.Errorf("dataset has %d nodes", n)
	}
	if R < 1 {
		return errors.New("dataset has no relations")
	}
	if d.In.NumRows() != n*R {
		return fmt.Errorf("graph has %d relation rows, want nodes %d x relations %d", d.In.NumRows(), n, R)
	}
	if err := d.In.Validate(n); err != nil {
		return err
	}
	for v := int64(0); v < n; v++ {
		vt := s.TypeOf(v)
		for r := int64(0); r < R; r++ {
			row := d.In.Neighbors(v*R + r)
			if len(row) == 0 {
				continue
			}
			if vt != s.DstType(int(r)) {
				return fmt.Errorf("node %d of type %s has in-edges of relation %s", v, s.NodeTypes[vt], s.Relations[r])
			}
			st := s.SrcType(int(r))
			for _, u := range row {
				if u < s.NodeOrig[st] || u >= s.NodeOrig[st+1] {
					return fmt.Errorf("relation %s: source %d of node %d is not of type %s", s.Relations[r], u, v, s.NodeTypes[st])
				}
			}
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(d.Feat)) {
		t := s.TypeIndex(typ)
		f := d.Feat[typ]
		switch {
		case t < 0:
			return fmt.Errorf("features for unknown node type %q", typ)
		case !validSplitName(typ):
			return fmt.Errorf("node type %q with features: its name must be usable in a file name (letters, digits, '_', '.', '-')", typ)
		case f == nil || f.Dim < 1 || int64(len(f.Data)) != s.Count(t)*int64(f.Dim):
			return fmt.Errorf("features of node type %q: want %d nodes x a positive dimension", typ, s.Count(t))
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(d.Labels)) {
		t := s.TypeIndex(typ)
		if t < 0 {
			return fmt.Errorf("labels for unknown node type %q", typ)
		}
		ls, nc := d.Labels[typ], d.NumClasses[typ]
		if int64(len(ls)) != s.Count(t) || nc < 1 {
			return fmt.Errorf("labels of node type %q: %d labels for %d nodes, %d classes", typ, len(ls), s.Count(t), nc)
		}
		for i, l := range ls {
			if l < -1 || int(l) >= nc {
				return fmt.Errorf("node %d of type %q: label %d outside [-1,%d)", i, typ, l, nc)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.Splits)) {
		if !validSplitName(name) {
			return fmt.Errorf("split name %q: use letters, digits, '_', '.', '-'", name)
		}
		for _, typ := range slices.Sorted(maps.Keys(d.Splits[name])) {
			t := s.TypeIndex(typ)
			sp := d.Splits[name][typ]
			if t < 0 || sp == nil {
				return fmt.Errorf("split %q: unknown node type %q or nil split", name, typ)
			}
			if err := checkSplitIDs(name+"/"+typ, sp, s.Count(t)); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateHetero checks the hetero section against the version and the
// rest of META: a parsable schema covering num_nodes, per-type offsets that
// add up to every part's node count, feature dimensions, the label type and
// per-relation counts that add up to the totals.
func (m *Meta) validateHetero() error {
	h := m.Hetero
	switch {
	case m.FormatVersion == FormatVersion && h == nil:
		return nil
	case m.FormatVersion == FormatVersion:
		return fmt.Errorf("format_version %d with a hetero section (heterogeneous partitions are version %d)", FormatVersion, FormatVersionHetero)
	case h == nil:
		return fmt.Errorf("format_version %d without its hetero section", FormatVersionHetero)
	}
	if len(h.NodeOrig) == 0 || h.NodeOrig[0] != 0 {
		return errors.New("hetero: node_orig must start at 0")
	}
	s, err := h.Schema()
	if err != nil {
		return err
	}
	if s.NumNodes() != m.NumNodes {
		return fmt.Errorf("hetero: node types hold %d nodes, num_nodes is %d", s.NumNodes(), m.NumNodes)
	}
	T, R, P := s.NumTypes(), s.NumRels(), m.NumParts
	if R < 1 {
		return errors.New("hetero: no relations")
	}
	if m.FeatDim != 0 || m.HaloFeats {
		return errors.New("hetero: feat_dim must be 0 and halo_feats false (features are per node type)")
	}
	if l := m.Link; l != nil && (s.RelIndex(l.Relation) < 0 || l.StructFeats != 0) {
		return fmt.Errorf("hetero: link relation %q is not a relation of the partition, or struct_feats %d is not 0", l.Relation, l.StructFeats)
	}
	if len(h.TypeOffsets) != T {
		return fmt.Errorf("hetero: type_offsets has %d entries for %d node types", len(h.TypeOffsets), T)
	}
	for t, off := range h.TypeOffsets {
		if len(off) != P+1 || off[0] != 0 || off[P] != s.Count(t) {
			return fmt.Errorf("hetero: type_offsets of %q must have num_parts+1 = %d entries from 0 to its %d nodes", s.NodeTypes[t], P+1, s.Count(t))
		}
		for p := 0; p < P; p++ {
			if off[p+1] < off[p] {
				return fmt.Errorf("hetero: type_offsets of %q decrease at part %d", s.NodeTypes[t], p)
			}
		}
	}
	for p, pi := range m.Parts {
		var sum int64
		for t := 0; t < T; t++ {
			sum += h.TypeCount(t, p)
		}
		if sum != pi.Nodes {
			return fmt.Errorf("hetero: part %d: type_offsets give %d nodes, the part has %d", p, sum, pi.Nodes)
		}
	}
	for _, typ := range slices.Sorted(maps.Keys(h.FeatDims)) {
		if s.TypeIndex(typ) < 0 || !validSplitName(typ) {
			return fmt.Errorf("hetero: feat_dims names unknown or unusable node type %q", typ)
		}
		if d := h.FeatDims[typ]; d < 1 || d > 1<<20 {
			return fmt.Errorf("hetero: feat_dims[%s] = %d outside [1,%d]", typ, d, 1<<20)
		}
	}
	if h.LabelType == "" {
		if m.NumClasses != 0 || len(m.Splits) != 0 {
			return errors.New("hetero: num_classes or splits without a label_type")
		}
	} else {
		lt := s.TypeIndex(h.LabelType)
		if lt < 0 || m.NumClasses < 1 {
			return fmt.Errorf("hetero: label_type %q is not a node type or num_classes is %d", h.LabelType, m.NumClasses)
		}
		for _, name := range m.splitNames() {
			for p, pi := range m.Parts {
				c := pi.Splits[name]
				if c.Train+c.Valid+c.Test > 3*h.TypeCount(lt, p) {
					return fmt.Errorf("hetero: part %d split %q: counts %+v exceed its %d %s nodes", p, name, c, h.TypeCount(lt, p), h.LabelType)
				}
			}
		}
	}
	if len(h.RelEdges) != R || len(h.RelCut) != R {
		return fmt.Errorf("hetero: rel_edges and rel_cut need %d entries (one per relation)", R)
	}
	var edges, cut int64
	for r := 0; r < R; r++ {
		if h.RelEdges[r] < 0 || h.RelEdges[r] > m.NumEdges || h.RelCut[r] < 0 || h.RelCut[r] > h.RelEdges[r] {
			return fmt.Errorf("hetero: relation %s: bad rel_edges %d or rel_cut %d", h.Relations[r], h.RelEdges[r], h.RelCut[r])
		}
		edges += h.RelEdges[r]
		cut += h.RelCut[r]
	}
	if edges != m.NumEdges || cut != m.CutEdges {
		return fmt.Errorf("hetero: relations hold %d edges (%d cut), num_edges is %d (%d cut)", edges, cut, m.NumEdges, m.CutEdges)
	}
	return nil
}

// checkHetero checks the typed structure of a heterogeneous part: owned
// nodes grouped by type with original ids of that type, ascending; every
// non-empty relation row (v, r) at a node of r's destination type, its
// sources of r's source type by original AND new id; labels only on the
// label type; split ids of the label type. file names a file of the part.
func (pt *Part) checkHetero(file func(string) string) error {
	m := pt.Meta
	h := m.Hetero
	s, err := h.Schema()
	if err != nil {
		return fmt.Errorf("load %s: %w", file(fileOrig), err)
	}
	T, R := s.NumTypes(), int64(s.NumRels())
	// starts[q][t]: first new id of type t in part q, to type new ids.
	starts := make([][]int64, m.NumParts)
	for q := range starts {
		starts[q] = make([]int64, T+1)
		starts[q][0] = m.Offsets[q]
		for t := 0; t < T; t++ {
			starts[q][t+1] = starts[q][t] + h.TypeCount(t, q)
		}
	}
	typeOfNew := func(g int64) int {
		q := m.Owner(g)
		if q < 0 {
			return -1
		}
		return sort.Search(T, func(t int) bool { return starts[q][t+1] > g })
	}
	lt := s.TypeIndex(h.LabelType)
	for t := 0; t < T; t++ {
		for v := pt.TypeLo[t]; v < pt.TypeLo[t+1]; v++ {
			i := v - pt.Lo
			o := pt.Orig[i]
			if o < s.NodeOrig[t] || o >= s.NodeOrig[t+1] || (v > pt.TypeLo[t] && o <= pt.Orig[i-1]) {
				return fmt.Errorf("load %s: entry %d: original id %d is not of type %s or not ascending within the type", file(fileOrig), i, o, s.NodeTypes[t])
			}
			if pt.Labels != nil && t != lt && pt.Labels[i] != -1 {
				return fmt.Errorf("load %s: entry %d: node of type %s has label %d (only %s nodes are labelled)", file(fileLabels), i, s.NodeTypes[t], pt.Labels[i], h.LabelType)
			}
			for r := int64(0); r < R; r++ {
				row := i*R + r
				a, b := pt.Indptr[row], pt.Indptr[row+1]
				if a == b {
					continue
				}
				if s.DstType(int(r)) != t {
					return fmt.Errorf("load %s: row %d: node of type %s has in-edges of relation %s", file(fileIndptr), row, s.NodeTypes[t], s.Relations[r])
				}
				st := s.SrcType(int(r))
				for k := a; k < b; k++ {
					u := pt.IndicesOrig[k]
					if u < s.NodeOrig[st] || u >= s.NodeOrig[st+1] || typeOfNew(pt.Indices[k]) != st {
						return fmt.Errorf("load %s: entry %d: source of relation %s is not of type %s", file(fileIndices), k, s.Relations[r], s.NodeTypes[st])
					}
				}
			}
		}
	}
	if lt >= 0 {
		lo, hi := pt.TypeLo[lt], pt.TypeLo[lt+1]
		for _, name := range m.splitNames() {
			sp := pt.Splits[name]
			for _, set := range []struct {
				name string
				ids  []int64
			}{{"train", sp.Train}, {"valid", sp.Valid}, {"test", sp.Test}} {
				for i, g := range set.ids {
					if g < lo || g >= hi {
						return fmt.Errorf("load %s: entry %d: node %d is not of the label type %s", file(splitFile(name, set.name)), i, g, h.LabelType)
					}
				}
			}
		}
	}
	return nil
}
