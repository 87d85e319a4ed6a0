package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// FormatVersion is the on-disk format written by this package; Load refuses
// any other version.
const FormatVersion = 1

// MetaFile is the name of the metadata file in a partition directory.
const MetaFile = "META.json"

// Array file names inside part-<p>/.
const (
	fileIndptr   = "indptr.bin"       // int64, owned+1: CSC row offsets
	fileIndices  = "indices.bin"      // int64, edges: new global ids of sources
	fileIndOrig  = "indices_orig.bin" // int64, edges: original ids of sources
	fileOrig     = "orig.bin"         // int64, owned: original id of each owned row
	fileFeat     = "feat.bin"         // float32, owned*feat_dim
	fileLabels   = "labels.bin"       // int32, owned
	fileTargets  = "targets.bin"      // float32, owned*target_dim (real targets instead of labels)
	fileHalo     = "halo.bin"         // int64, halo: new ids, ascending
	fileHaloOrig = "halo_orig.bin"    // int64, halo: original ids
	fileHaloFeat = "halo_feat.bin"    // float32, halo*feat_dim (only with halo feats)
)

// SplitCounts counts the nodes of one split.
type SplitCounts struct {
	Train int64 `json:"train"`
	Valid int64 `json:"valid"`
	Test  int64 `json:"test"`
}

// PartInfo describes one partition in META.json.
type PartInfo struct {
	Nodes     int64                  `json:"nodes"`      // owned nodes
	Edges     int64                  `json:"edges"`      // stored in-edges of owned nodes
	HaloNodes int64                  `json:"halo_nodes"` // distinct non-owned sources
	CutEdges  int64                  `json:"cut_edges"`  // stored in-edges whose source is not owned
	Splits    map[string]SplitCounts `json:"splits"`
	// FeatNNZ and HaloFeatNNZ count the stored feature entries of the
	// owned and halo rows of a sparse-feature partition (Meta.SparseFeat;
	// 0 and omitted otherwise).
	FeatNNZ     int64 `json:"feat_nnz,omitempty"`
	HaloFeatNNZ int64 `json:"halo_feat_nnz,omitempty"`
	// Link counts this part's share of the link split (nil unless Meta.Link).
	Link *LinkCounts `json:"link,omitempty"`
}

// FileInfo is what META.json records about one array file.
type FileInfo = fileInfo

// Meta is the content of META.json.
type Meta struct {
	FormatVersion int     `json:"format_version"`
	Dataset       string  `json:"dataset"`
	NumParts      int     `json:"num_parts"`
	Offsets       []int64 `json:"offsets"` // part p owns new ids [Offsets[p], Offsets[p+1])
	NumNodes      int64   `json:"num_nodes"`
	NumEdges      int64   `json:"num_edges"` // stored (directed) edges of the whole graph
	FeatDim       int     `json:"feat_dim"`
	NumClasses    int     `json:"num_classes"`
	// TargetDim is the width of the real node targets (targets.bin, NaN
	// unlabelled) a multi-label or regression dataset has instead of class
	// labels (NumClasses 0); omitted for class labels.
	TargetDim  int    `json:"target_dim,omitempty"`
	Method     string `json:"method"`
	Seed       uint64 `json:"seed"`
	Split      string `json:"split"`      // split that steered balance; the default for training ("" if none)
	Undirected bool   `json:"undirected"` // informational: the reader added reverse edges
	HaloFeats  bool   `json:"halo_feats"`
	// SparseFeat stores the node features as CSR rows (feat_indptr.bin,
	// feat_indices.bin, feat_values.bin, and the halo_feat_* files with
	// HaloFeats) instead of feat.bin; omitted for dense features.
	SparseFeat bool `json:"sparse_feat,omitempty"`
	// FeatDType is the type feat.bin and halo_feat.bin store the node
	// features in: "bf16" or "fp16" (Options.FeatDType; Part.Feat16),
	// omitted for float32, so partitions written before it read as
	// float32.
	FeatDType string                 `json:"feat_dtype,omitempty"`
	CutEdges  int64                  `json:"cut_edges"` // edges whose endpoints have different owners
	Splits    map[string]SplitCounts `json:"splits"`
	Parts     []PartInfo             `json:"parts"`
	Files     map[string]FileInfo    `json:"files"` // key: path relative to the directory
	// Link is the link-prediction split (nil for node-only partitions).
	Link *LinkMeta `json:"link,omitempty"`
	// Hetero describes a heterogeneous partition (format version 2; nil for
	// a homogeneous one). See HeteroMeta.
	Hetero *HeteroMeta `json:"hetero,omitempty"`
	// Time describes the times of a timed partition (Options.Time; nil
	// for an untimed one, whose META and files are as before times).
	Time *TimeMeta `json:"time,omitempty"`
	// EdgeFeatDim is the width of the edge features every part stores in
	// edge_feat.bin (Options.EdgeFeat); 0 and omitted without, so older
	// partitions read as before.
	EdgeFeatDim int `json:"edge_feat_dim,omitempty"`
	// NodeFeatFrom says how the node features were derived from the edge
	// features (graph.FromEdgesMean or FromEdgesSum; "" and omitted when
	// they were read).
	NodeFeatFrom string `json:"node_feat_from,omitempty"`
	// Shared is set (never on disk) in the Meta of a share: the view of a
	// partition whose parts several ranks serve (ShareView).
	Shared *SharedView `json:"-"`
}

// EdgeCut is the fraction of edges whose endpoints have different owners.
func (m *Meta) EdgeCut() float64 {
	if m.NumEdges == 0 {
		return 0
	}
	return float64(m.CutEdges) / float64(m.NumEdges)
}

// Balance is the largest part's node count over the mean node count.
func (m *Meta) Balance() float64 {
	var mx int64
	for _, p := range m.Parts {
		mx = max(mx, p.Nodes)
	}
	if m.NumNodes == 0 {
		return 1
	}
	return float64(mx) * float64(m.NumParts) / float64(m.NumNodes)
}

// Owner returns the part owning new global id gid.
func (m *Meta) Owner(gid int64) int { return Owner(m.Offsets, gid) }

// Owner returns the part p with offsets[p] <= gid < offsets[p+1] by binary
// search, or -1 if gid is outside [offsets[0], offsets[len-1]). Empty parts
// never own anything.
func Owner(offsets []int64, gid int64) int {
	if len(offsets) < 2 || gid < offsets[0] || gid >= offsets[len(offsets)-1] {
		return -1
	}
	// First index with offsets[i] > gid, minus one.
	return sort.Search(len(offsets), func(i int) bool { return offsets[i] > gid }) - 1
}

func partDir(p int) string { return fmt.Sprintf("part-%d", p) }

// validSplitName restricts split names to characters safe in file names:
// a letter or digit, then letters, digits, '_', '.' or '-'.
func validSplitName(name string) bool {
	if name == "" || len(name) > 200 {
		return false
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if i > 0 && (r == '_' || r == '.' || r == '-') {
			ok = true
		}
		if !ok {
			return false
		}
	}
	return true
}

func splitFile(name, set string) string { return "split-" + name + "-" + set + ".bin" }

// fileSpec is one expected array file of a part.
type fileSpec struct {
	name  string
	dtype dtype
	len   int64
}

// partFiles lists the array files part p must have, with their lengths.
func (m *Meta) partFiles(p int) []fileSpec {
	pi := m.Parts[p]
	d := int64(m.FeatDim)
	fs := []fileSpec{
		{fileIndptr, dtInt64, pi.Nodes*int64(m.NumRels()) + 1},
		{fileIndices, dtInt64, pi.Edges},
		{fileIndOrig, dtInt64, pi.Edges},
		{fileOrig, dtInt64, pi.Nodes},
	}
	if m.SparseFeat {
		fs = append(fs, m.sparseFiles(p)...)
	} else {
		fs = append(fs, fileSpec{fileFeat, m.featArrayType(), pi.Nodes * d})
	}
	if h := m.Hetero; h != nil {
		for t, typ := range h.NodeTypes {
			if dim, ok := h.FeatDims[typ]; ok {
				fs = append(fs, fileSpec{featFile(typ), dtFloat32, h.TypeCount(t, p) * int64(dim)})
			}
		}
	}
	if m.NumClasses > 0 {
		fs = append(fs, fileSpec{fileLabels, dtInt32, pi.Nodes})
	}
	if m.TargetDim > 0 {
		fs = append(fs, fileSpec{fileTargets, dtFloat32, pi.Nodes * int64(m.TargetDim)})
	}
	fs = append(fs,
		fileSpec{fileHalo, dtInt64, pi.HaloNodes},
		fileSpec{fileHaloOrig, dtInt64, pi.HaloNodes})
	if m.HaloFeats && !m.SparseFeat {
		fs = append(fs, fileSpec{fileHaloFeat, m.featArrayType(), pi.HaloNodes * d})
	}
	for _, name := range m.splitNames() {
		c := pi.Splits[name]
		fs = append(fs,
			fileSpec{splitFile(name, "train"), dtInt64, c.Train},
			fileSpec{splitFile(name, "valid"), dtInt64, c.Valid},
			fileSpec{splitFile(name, "test"), dtInt64, c.Test})
	}
	if m.Link != nil && pi.Link != nil {
		fs = append(fs, m.linkFiles(p)...)
	}
	fs = append(fs, m.timeFiles(p)...)
	return append(fs, m.edgeFeatFiles(p)...)
}

func (m *Meta) splitNames() []string {
	names := make([]string, 0, len(m.Splits))
	for n := range m.Splits {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadMeta reads and validates dir/META.json: version, offsets, per-part
// counts against the totals and a complete, consistent file table.
func LoadMeta(dir string) (*Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
				return nil, fmt.Errorf("partition directory %s does not exist", dir)
			}
			return nil, fmt.Errorf("%s is not a partition directory: %s is missing", dir, path)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	// Peek at the version first so that a future format gets a version
	// error rather than a confusing field error.
	var ver struct {
		V *int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &ver); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if ver.V == nil {
		return nil, fmt.Errorf("read %s: no format_version", path)
	}
	if *ver.V != FormatVersion && *ver.V != FormatVersionHetero {
		return nil, fmt.Errorf("read %s: format_version %d, this build reads versions %d and %d (re-run mpignn partition)", path, *ver.V, FormatVersion, FormatVersionHetero)
	}
	m := new(Meta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}

func (m *Meta) validate() error {
	p := m.NumParts
	if p < 1 {
		return fmt.Errorf("num_parts %d < 1", p)
	}
	if m.NumNodes < 0 || m.NumEdges < 0 || m.FeatDim < 0 || m.NumClasses < 0 {
		return fmt.Errorf("negative num_nodes, num_edges, feat_dim or num_classes")
	}
	// Bounds that keep every derived length (nodes*feat_dim, ...) far from
	// int64 overflow, whatever a hand-edited META.json says.
	if m.NumNodes > 1<<40 || m.NumEdges > 1<<44 || m.FeatDim > 1<<20 || p > 1<<20 {
		return fmt.Errorf("num_nodes %d, num_edges %d, feat_dim %d or num_parts %d beyond supported limits", m.NumNodes, m.NumEdges, m.FeatDim, p)
	}
	if m.TargetDim < 0 || m.TargetDim > 1<<20 {
		return fmt.Errorf("target_dim %d outside [0,%d]", m.TargetDim, 1<<20)
	}
	if m.TargetDim > 0 && (m.NumClasses > 0 || m.Hetero != nil) {
		return fmt.Errorf("target_dim %d is set with num_classes %d or a heterogeneous graph: real targets replace the class labels of a homogeneous graph", m.TargetDim, m.NumClasses)
	}
	if m.SparseFeat && (m.Hetero != nil || m.FeatDim == 0) {
		return fmt.Errorf("sparse_feat is set for a partition without homogeneous node features (feat_dim %d, hetero %v)", m.FeatDim, m.Hetero != nil)
	}
	if err := m.validateFeatDType(); err != nil {
		return err
	}
	if len(m.Offsets) != p+1 {
		return fmt.Errorf("offsets has %d entries, want num_parts+1 = %d", len(m.Offsets), p+1)
	}
	if m.Offsets[0] != 0 || m.Offsets[p] != m.NumNodes {
		return fmt.Errorf("offsets run from %d to %d, want 0 to num_nodes %d", m.Offsets[0], m.Offsets[p], m.NumNodes)
	}
	if len(m.Parts) != p {
		return fmt.Errorf("parts has %d entries, want num_parts %d", len(m.Parts), p)
	}
	var edges, cut int64
	for i, pi := range m.Parts {
		if m.Offsets[i+1] < m.Offsets[i] {
			return fmt.Errorf("offsets decrease at part %d", i)
		}
		if pi.Nodes != m.Offsets[i+1]-m.Offsets[i] {
			return fmt.Errorf("part %d: nodes %d, offsets give %d", i, pi.Nodes, m.Offsets[i+1]-m.Offsets[i])
		}
		if pi.FeatNNZ < 0 || pi.HaloFeatNNZ < 0 || pi.FeatNNZ > pi.Nodes*int64(m.FeatDim) || pi.HaloFeatNNZ > pi.HaloNodes*int64(m.FeatDim) ||
			(!m.SparseFeat && pi.FeatNNZ+pi.HaloFeatNNZ != 0) || (!m.HaloFeats && pi.HaloFeatNNZ != 0) {
			return fmt.Errorf("part %d: feat_nnz %d or halo_feat_nnz %d inconsistent with sparse_feat %v, halo_feats %v and feat_dim %d",
				i, pi.FeatNNZ, pi.HaloFeatNNZ, m.SparseFeat, m.HaloFeats, m.FeatDim)
		}
		if pi.Edges < 0 || pi.Edges > m.NumEdges || pi.HaloNodes < 0 || pi.CutEdges < 0 || pi.CutEdges > pi.Edges || pi.HaloNodes > m.NumNodes-pi.Nodes {
			return fmt.Errorf("part %d: inconsistent edges %d, cut_edges %d, halo_nodes %d", i, pi.Edges, pi.CutEdges, pi.HaloNodes)
		}
		edges += pi.Edges
		cut += pi.CutEdges
	}
	if edges != m.NumEdges {
		return fmt.Errorf("parts store %d edges, num_edges is %d", edges, m.NumEdges)
	}
	if cut != m.CutEdges {
		return fmt.Errorf("parts cut %d edges, cut_edges is %d", cut, m.CutEdges)
	}
	for name, tot := range m.Splits {
		if !validSplitName(name) {
			return fmt.Errorf("split name %q not allowed", name)
		}
		var sum SplitCounts
		for i, pi := range m.Parts {
			c, ok := pi.Splits[name]
			if !ok {
				return fmt.Errorf("part %d has no counts for split %q", i, name)
			}
			if c.Train < 0 || c.Valid < 0 || c.Test < 0 || c.Train+c.Valid+c.Test > 3*pi.Nodes {
				return fmt.Errorf("part %d split %q: bad counts %+v", i, name, c)
			}
			sum.Train += c.Train
			sum.Valid += c.Valid
			sum.Test += c.Test
		}
		if sum != tot {
			return fmt.Errorf("split %q: parts sum to %+v, total is %+v", name, sum, tot)
		}
	}
	if _, ok := m.Splits[m.Split]; m.Split != "" && !ok {
		return fmt.Errorf("default split %q is not among the splits", m.Split)
	}
	for i, pi := range m.Parts {
		if len(pi.Splits) != len(m.Splits) {
			return fmt.Errorf("part %d lists %d splits, META lists %d", i, len(pi.Splits), len(m.Splits))
		}
	}
	if err := m.validateLink(); err != nil {
		return err
	}
	if err := m.validateHetero(); err != nil {
		return err
	}
	if err := m.validateTime(); err != nil {
		return err
	}
	if err := m.validateEdgeFeat(); err != nil {
		return err
	}
	want := 0
	for i := range m.Parts {
		for _, f := range m.partFiles(i) {
			want++
			key := partDir(i) + "/" + f.name
			fi, ok := m.Files[key]
			if !ok {
				return fmt.Errorf("files has no entry for %s", key)
			}
			if fi.DType != f.dtype.String() || fi.Len != f.len {
				return fmt.Errorf("files[%s] records %s[%d], counts require %s[%d]", key, fi.DType, fi.Len, f.dtype, f.len)
			}
			if fi.Bytes < arrayHeaderSize || len(fi.SHA256) != 64 {
				return fmt.Errorf("files[%s]: bad size %d or sha256 %q", key, fi.Bytes, fi.SHA256)
			}
		}
	}
	if len(m.Files) != want {
		return fmt.Errorf("files lists %d entries, expected %d", len(m.Files), want)
	}
	return nil
}
