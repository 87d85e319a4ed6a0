package partition

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// PartStats are the statistics of one part (mpignn inspect).
type PartStats struct {
	Part       int   `json:"part"`
	Lo         int64 `json:"lo"`
	Hi         int64 `json:"hi"`
	Nodes      int64 `json:"nodes"`
	Edges      int64 `json:"edges"`
	HaloNodes  int64 `json:"halo_nodes"`
	CutEdges   int64 `json:"cut_edges"`
	TrainNodes int64 `json:"train_nodes"`
	ValidNodes int64 `json:"valid_nodes"`
	TestNodes  int64 `json:"test_nodes"`
	// Link is the part's share of the link split (link partitions only).
	Link *LinkCounts `json:"link,omitempty"`
	// TypeNodes counts the owned nodes per node type (heterogeneous
	// partitions only; order of Stats.Hetero.NodeTypes).
	TypeNodes []int64 `json:"type_nodes,omitempty"`
	// FeatNNZ counts the stored feature entries of the owned rows
	// (sparse-feature partitions only).
	FeatNNZ int64 `json:"feat_nnz,omitempty"`
}

// HeteroStats are the type and relation statistics of a heterogeneous
// partition.
type HeteroStats struct {
	NodeTypes []string `json:"node_types"`
	// TypeBalance is, per node type, the largest part's count over the mean.
	TypeBalance []float64      `json:"type_balance"`
	LabelType   string         `json:"label_type,omitempty"`
	FeatDims    map[string]int `json:"feat_dims"`
	Relations   []RelStats     `json:"relations"`
}

// RelStats are the stored edges of one relation and the fraction whose
// endpoints have different owners.
type RelStats struct {
	Relation    string  `json:"relation"`
	Edges       int64   `json:"edges"`
	CutEdges    int64   `json:"cut_edges"`
	CutFraction float64 `json:"cut_fraction"`
}

// Stats summarises a partition directory from its META.json. The JSON form
// is what `mpignn inspect --json` prints.
type Stats struct {
	Dataset    string `json:"dataset"`
	Method     string `json:"method"`
	Seed       uint64 `json:"seed"`
	NumParts   int    `json:"num_parts"`
	NumNodes   int64  `json:"num_nodes"`
	NumEdges   int64  `json:"num_edges"`
	FeatDim    int    `json:"feat_dim"`
	NumClasses int    `json:"num_classes"`
	TargetDim  int    `json:"target_dim,omitempty"`
	HaloFeats  bool   `json:"halo_feats"`
	// SparseFeat: features stored as CSR rows, with FeatDensity the
	// fraction of stored entries (both omitted for dense features).
	SparseFeat  bool    `json:"sparse_feat,omitempty"`
	FeatDensity float64 `json:"feat_density,omitempty"`
	// EdgeFeatDim and NodeFeatFrom are Meta's (omitted without edge
	// features, or for node features that were read).
	EdgeFeatDim int `json:"edge_feat_dim,omitempty"`
	// FeatDType is Meta's: bf16 or fp16 (omitted for float32).
	FeatDType    string `json:"feat_dtype,omitempty"`
	NodeFeatFrom string `json:"node_feat_from,omitempty"`
	Split        string `json:"split"` // the split whose counts train/valid/test_nodes show
	// EdgeCut is the fraction of edges whose endpoints have different owners.
	EdgeCut float64 `json:"edge_cut"`
	// Balance is the largest part's nodes over the mean; TrainBalance and
	// EdgeBalance the same for training nodes and stored edges.
	Balance      float64     `json:"balance"`
	TrainBalance float64     `json:"train_balance"`
	EdgeBalance  float64     `json:"edge_balance"`
	Parts        []PartStats `json:"parts"`
	// Link is META's link section (link partitions only).
	Link *LinkMeta `json:"link,omitempty"`
	// Time is the partition's time section (nil when untimed).
	Time *TimeMeta `json:"time,omitempty"`
	// Hetero is set for heterogeneous partitions.
	Hetero *HeteroStats `json:"hetero,omitempty"`
}

// Stats computes the statistics of the partition.
func (m *Meta) Stats() *Stats {
	s := &Stats{
		Dataset: m.Dataset, Method: m.Method, Seed: m.Seed, NumParts: m.NumParts,
		NumNodes: m.NumNodes, NumEdges: m.NumEdges, FeatDim: m.FeatDim, NumClasses: m.NumClasses, TargetDim: m.TargetDim,
		HaloFeats: m.HaloFeats, Split: m.Split, EdgeCut: m.EdgeCut(), Balance: m.Balance(), Link: m.Link, Time: m.Time,
		EdgeFeatDim: m.EdgeFeatDim, NodeFeatFrom: m.NodeFeatFrom, FeatDType: m.FeatDType,
	}
	var maxTrain, maxEdges, train int64
	for p, pi := range m.Parts {
		c := pi.Splits[m.Split]
		s.Parts = append(s.Parts, PartStats{
			Part: p, Lo: m.Offsets[p], Hi: m.Offsets[p+1], Nodes: pi.Nodes, Edges: pi.Edges,
			HaloNodes: pi.HaloNodes, CutEdges: pi.CutEdges,
			TrainNodes: c.Train, ValidNodes: c.Valid, TestNodes: c.Test, Link: pi.Link, FeatNNZ: pi.FeatNNZ,
		})
		maxTrain = max(maxTrain, c.Train)
		maxEdges = max(maxEdges, pi.Edges)
		train += c.Train
	}
	if m.SparseFeat {
		var nnz int64
		for _, pi := range m.Parts {
			nnz += pi.FeatNNZ
		}
		s.SparseFeat = true
		if m.NumNodes > 0 && m.FeatDim > 0 {
			s.FeatDensity = float64(nnz) / (float64(m.NumNodes) * float64(m.FeatDim))
		}
	}
	s.TrainBalance = ratioToMean(maxTrain, train, m.NumParts)
	s.EdgeBalance = ratioToMean(maxEdges, m.NumEdges, m.NumParts)
	if h := m.Hetero; h != nil {
		hs := &HeteroStats{NodeTypes: h.NodeTypes, LabelType: h.LabelType, FeatDims: h.FeatDims}
		for t := range h.NodeTypes {
			var mx int64
			for p := range s.Parts {
				c := h.TypeCount(t, p)
				s.Parts[p].TypeNodes = append(s.Parts[p].TypeNodes, c)
				mx = max(mx, c)
			}
			hs.TypeBalance = append(hs.TypeBalance, ratioToMean(mx, h.NodeOrig[t+1]-h.NodeOrig[t], m.NumParts))
		}
		for r, name := range h.Relations {
			rs := RelStats{Relation: name, Edges: h.RelEdges[r], CutEdges: h.RelCut[r]}
			if rs.Edges > 0 {
				rs.CutFraction = float64(rs.CutEdges) / float64(rs.Edges)
			}
			hs.Relations = append(hs.Relations, rs)
		}
		s.Hetero = hs
	}
	return s
}

// ratioToMean is largest / (total / parts), 1 when total is 0.
func ratioToMean(largest, total int64, parts int) float64 {
	if total == 0 {
		return 1
	}
	return float64(largest) * float64(parts) / float64(total)
}

// WriteText prints the statistics as a table.
func (s *Stats) WriteText(w io.Writer) error {
	feats := fmt.Sprintf("%d features", s.FeatDim)
	if s.FeatDType != "" {
		feats += " (" + s.FeatDType + ")"
	}
	if s.Hetero != nil {
		// Typed graphs have one feature width per node type (listed
		// below), none shared by all nodes.
		feats = "features per node type"
	}
	labels := fmt.Sprintf("%d classes", s.NumClasses)
	if s.TargetDim > 0 {
		labels = fmt.Sprintf("%d real targets per node", s.TargetDim)
	}
	fmt.Fprintf(w, "dataset %s: %d nodes, %d edges, %s, %s; %d parts by %s (seed %d), halo features %v\n",
		s.Dataset, s.NumNodes, s.NumEdges, feats, labels, s.NumParts, s.Method, s.Seed, s.HaloFeats)
	split := s.Split
	if split == "" {
		split = "(none)"
	}
	fmt.Fprintf(w, "split %s\n", split)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "part\tnodes\tedges\thalo_nodes\tcut_edges\ttrain_nodes\tvalid_nodes\ttest_nodes\t")
	for _, p := range s.Parts {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Part, p.Nodes, p.Edges, p.HaloNodes, p.CutEdges, p.TrainNodes, p.ValidNodes, p.TestNodes)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "edge_cut %.4f  balance %.4f (nodes)  %.4f (train)  %.4f (edges)\n", s.EdgeCut, s.Balance, s.TrainBalance, s.EdgeBalance)
	if err == nil && s.SparseFeat {
		_, err = fmt.Fprintf(w, "features: sparse CSR rows, density %.4f %%\n", 100*s.FeatDensity)
	}
	if err == nil && (s.EdgeFeatDim > 0 || s.NodeFeatFrom != "") {
		ef, from := "none", "read"
		if s.EdgeFeatDim > 0 {
			ef = fmt.Sprintf("%d per edge", s.EdgeFeatDim)
		}
		if s.NodeFeatFrom != "" {
			from = s.NodeFeatFrom
		}
		_, err = fmt.Fprintf(w, "edge features: %s; node features: %s\n", ef, from)
	}
	if err == nil && s.Time != nil {
		_, err = fmt.Fprintf(w, "time: %s times in [%d, %d], node times %v\n", s.Time.Kind, s.Time.Min, s.Time.Max, s.Time.NodeTime)
	}
	if err == nil && s.Hetero != nil {
		err = s.writeHetero(w)
	}
	if err != nil || s.Link == nil {
		return err
	}
	return s.writeLink(w)
}

// writeHetero prints the nodes per type and part, then every relation's
// edges and cut.
func (s *Stats) writeHetero(w io.Writer) error {
	h := s.Hetero
	lt := h.LabelType
	if lt == "" {
		lt = "(none)"
	}
	var feats []string
	for _, t := range h.NodeTypes {
		if d, ok := h.FeatDims[t]; ok {
			feats = append(feats, fmt.Sprintf("%s %d", t, d))
		}
	}
	fd := strings.Join(feats, ", ")
	if fd == "" {
		fd = "(none)"
	}
	fmt.Fprintf(w, "heterogeneous: %d node types, %d relations; label type %s; feature dims %s\n", len(h.NodeTypes), len(h.Relations), lt, fd)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "part\t")
	for _, t := range h.NodeTypes {
		fmt.Fprintf(tw, "%s\t", t)
	}
	fmt.Fprintln(tw)
	for _, p := range s.Parts {
		fmt.Fprintf(tw, "%d\t", p.Part)
		for _, c := range p.TypeNodes {
			fmt.Fprintf(tw, "%d\t", c)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "balance\t")
	for _, b := range h.TypeBalance {
		fmt.Fprintf(tw, "%.4f\t", b)
	}
	fmt.Fprintln(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "relation\tedges\tcut_edges\tcut_fraction\t")
	for _, r := range h.Relations {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t\n", r.Relation, r.Edges, r.CutEdges, r.CutFraction)
	}
	return tw.Flush()
}

// writeLink prints the link section: totals, then the per-part shares.
func (s *Stats) writeLink(w io.Writer) error {
	l := s.Link
	dir := "undirected pairs"
	if l.Directed {
		dir = "directed events"
	}
	feats := ""
	if l.StructFeats > 0 {
		feats = fmt.Sprintf(", %d structural features", l.StructFeats)
	}
	switch {
	case l.EdgeClasses > 0:
		feats += fmt.Sprintf(", edge labels: %d classes", l.EdgeClasses)
	case l.EdgeTargetDim > 0:
		feats += fmt.Sprintf(", edge labels: %d real values", l.EdgeTargetDim)
	}
	negs, pools := fmt.Sprintf("%d negatives per valid/test edge", l.NegsPerPos), fmt.Sprintf("pools of %d", l.Pool)
	if l.StoredNegs {
		negs = fmt.Sprintf("the split's own %d negatives per valid/test edge", l.NegsPerPos)
	}
	if l.StoredPool {
		pools = fmt.Sprintf("the split's own shared negatives as pools (%d valid, %d test pairs)", l.Pool, l.TestPool)
	}
	fmt.Fprintf(w, "link split %s (seed %d, %s, time %v): train %d, valid %d, test %d edges; %s, %s; valid adjacency %v%s\n",
		l.Split, l.Seed, dir, l.HasTime, l.Train, l.Valid, l.Test, negs, pools, l.ValidAdj, feats)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "part\ttrain_edges\tvalid_edges\ttest_edges\tvalid_pool\ttest_pool\tvalid_adj_edges\t")
	for _, p := range s.Parts {
		c := p.Link
		if c == nil {
			c = &LinkCounts{}
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Part, c.Train, c.Valid, c.Test, c.ValidPool, c.TestPool, c.ValidAdjEdges)
	}
	return tw.Flush()
}
