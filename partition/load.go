package partition

import (
	"fmt"
	"path/filepath"

	"mpignn/graph"
)

// Part is one loaded partition: the nodes it owns (new global ids
// [Lo,Hi)), their in-edges, features, labels and split shares, and its halo.
type Part struct {
	Meta   *Meta
	ID     int
	Lo, Hi int64 // owned new global ids [Lo,Hi) == Meta.Offsets[ID], Offsets[ID+1]
	// Indptr (len owned+1) are the CSC offsets of the owned nodes' in-edges.
	Indptr []int64
	// Indices are the new global ids of the in-neighbors, each row in
	// canonical order (ascending ORIGINAL id, no duplicates).
	Indices []int64
	// IndicesOrig are the original ids aligned with Indices.
	IndicesOrig []int64
	Orig        []int64   // original id of owned node Lo+i
	Feat        []float32 // owned*FeatDim, row-major; nil when FeatCSR or Feat16 holds the rows
	// Feat16 and HaloFeat16 hold the owned (halo) feature rows of a
	// partition whose features are stored at two bytes a value
	// (Meta.FeatDType: the bits of bfloat16 or float16, Meta.FeatKind)
	// instead of Feat and HaloFeat; nil for a float32 one.
	Feat16, HaloFeat16 []uint16
	// FeatCSR and HaloFeatCSR hold the owned (halo) feature rows of a
	// sparse-feature partition (Meta.SparseFeat) instead of Feat and
	// HaloFeat; nil for a dense one.
	FeatCSR, HaloFeatCSR *CSRRows
	Labels               []int32 // owned; nil when the dataset has no labels (NumClasses 0)
	// Targets are the owned nodes' real targets, TargetDim per node (NaN:
	// unlabelled); nil unless Meta.TargetDim > 0.
	Targets []float32
	// Halo are the distinct non-owned in-neighbors (new ids, ascending),
	// HaloOrig their original ids.
	Halo, HaloOrig []int64
	HaloFeat       []float32 // halo*FeatDim; nil unless Meta.HaloFeats
	// Splits holds this part's share of every split, new global ids
	// ascending.
	Splits map[string]*graph.Split
	// Link is this part's share of the link split (nil unless Meta.Link).
	Link *LinkPart
	// TypeLo (heterogeneous partitions only, else nil) has one entry per
	// node type plus one: the owned nodes of type t are the new ids
	// [TypeLo[t], TypeLo[t+1]). TypeFeat holds the features of the owned
	// nodes of each type that has them (rows in new-id order).
	TypeLo   []int64
	TypeFeat map[string][]float32
	// Times (timed partitions only, else nil) holds the time of every
	// in-edge, aligned with Indices; rows are then strictly ascending in
	// (time, original id) instead of original id alone, so a source may
	// appear several times in a row at different times. NodeTime holds the
	// node time of each owned node (nil unless Meta.Time.NodeTime).
	Times, NodeTime []int64
	// EdgeFeat (partitions with edge features only, else nil) holds the
	// features of every in-edge, Meta.EdgeFeatDim per edge, aligned with
	// Indices.
	EdgeFeat []float32
}

// NumOwned returns Hi-Lo.
func (p *Part) NumOwned() int64 { return p.Hi - p.Lo }

// Load reads partition p of the partition directory dir. It checks the
// format version and consistency of META.json, the size and SHA-256 of
// every file of part p, and the structure of the arrays; any mismatch is one
// error naming the file.
func Load(dir string, p int) (*Part, error) {
	m, err := LoadMeta(dir)
	if err != nil {
		return nil, err
	}
	return LoadWithMeta(dir, m, p)
}

// LoadRank is Load for rank `rank` of a job of `ranks` processes: the
// directory must hold exactly one part per rank, or the error says how to
// launch or repartition.
func LoadRank(dir string, rank, ranks int) (*Part, error) {
	m, err := LoadMeta(dir)
	if err != nil {
		return nil, err
	}
	if m.NumParts != ranks && ranks == 1 {
		// The usual cause: the binary was started by itself.
		return nil, fmt.Errorf("partition %s has %d parts but this is a job of 1 rank: start it under MPI with one rank per part, ./mpirun.sh -n %d ./bin/mpignn ... (or repartition into 1 part: mpignn partition --parts 1)",
			dir, m.NumParts, m.NumParts)
	}
	if m.NumParts != ranks {
		return nil, fmt.Errorf("partition %s has %d parts but the job runs %d ranks: run with -n %d, or repartition into %d parts (mpignn partition --parts %d)",
			dir, m.NumParts, ranks, m.NumParts, ranks, ranks)
	}
	return LoadWithMeta(dir, m, rank)
}

// LoadWithMeta is Load with an already loaded and validated Meta (to read
// several parts without re-reading META.json).
func LoadWithMeta(dir string, m *Meta, p int) (*Part, error) {
	if p < 0 || p >= m.NumParts {
		return nil, fmt.Errorf("load %s: part %d does not exist (num_parts %d)", dir, p, m.NumParts)
	}
	pt := &Part{Meta: m, ID: p, Lo: m.Offsets[p], Hi: m.Offsets[p+1], Splits: map[string]*graph.Split{}}
	var errs error
	i64 := func(name string) []int64 {
		if errs != nil {
			return nil
		}
		var xs []int64
		xs, errs = readPartArray[int64](dir, m, p, name)
		return xs
	}
	f32 := func(name string) []float32 {
		if errs != nil {
			return nil
		}
		var xs []float32
		xs, errs = readPartArray[float32](dir, m, p, name)
		return xs
	}
	pt.Indptr = i64(fileIndptr)
	pt.Indices = i64(fileIndices)
	pt.IndicesOrig = i64(fileIndOrig)
	pt.Orig = i64(fileOrig)
	u16 := func(name string) []uint16 {
		if errs != nil {
			return nil
		}
		var xs []uint16
		xs, errs = readPartArray[uint16](dir, m, p, name)
		return xs
	}
	half := m.FeatKind().Half()
	switch {
	case half:
		pt.Feat16 = u16(fileFeat)
	case !m.SparseFeat:
		pt.Feat = f32(fileFeat)
	}
	if errs == nil && m.NumClasses > 0 { // an unlabelled dataset has no labels file
		pt.Labels, errs = readPartArray[int32](dir, m, p, fileLabels)
	}
	if m.TargetDim > 0 {
		pt.Targets = f32(fileTargets)
	}
	pt.Halo = i64(fileHalo)
	pt.HaloOrig = i64(fileHaloOrig)
	if m.EdgeFeatDim > 0 {
		pt.EdgeFeat = f32(fileEdgeFeat)
	}
	switch {
	case m.HaloFeats && half:
		pt.HaloFeat16 = u16(fileHaloFeat)
	case m.HaloFeats && !m.SparseFeat:
		pt.HaloFeat = f32(fileHaloFeat)
	}
	if m.SparseFeat && errs == nil {
		pt.FeatCSR, errs = pt.loadCSR(dir, [3]string{fileFeatIndptr, fileFeatIndices, fileFeatValues})
		if errs == nil && m.HaloFeats {
			pt.HaloFeatCSR, errs = pt.loadCSR(dir, [3]string{fileHaloFeatIndptr, fileHaloFeatIndices, fileHaloFeatValues})
		}
	}
	if h := m.Hetero; h != nil {
		pt.TypeLo = make([]int64, len(h.NodeTypes)+1)
		pt.TypeLo[0] = pt.Lo
		pt.TypeFeat = map[string][]float32{}
		for t, typ := range h.NodeTypes {
			pt.TypeLo[t+1] = pt.TypeLo[t] + h.TypeCount(t, p)
			if _, ok := h.FeatDims[typ]; ok {
				pt.TypeFeat[typ] = f32(featFile(typ))
			}
		}
	}
	for _, name := range m.splitNames() {
		pt.Splits[name] = &graph.Split{
			Train: i64(splitFile(name, "train")),
			Valid: i64(splitFile(name, "valid")),
			Test:  i64(splitFile(name, "test")),
		}
	}
	if errs != nil {
		return nil, errs
	}
	if err := pt.check(dir); err != nil {
		return nil, err
	}
	if err := pt.loadTime(dir); err != nil {
		return nil, err
	}
	if m.Link != nil {
		if err := pt.loadLink(dir); err != nil {
			return nil, err
		}
	}
	return pt, nil
}

func readPartArray[T elem](dir string, m *Meta, p int, name string) ([]T, error) {
	key := partDir(p) + "/" + name
	return readArrayFile[T](filepath.Join(dir, partDir(p), name), m.Files[key])
}

// check verifies the structure that the sampler relies on; checksums
// already guard against corruption, so this catches writer bugs and
// hand-edited META.json files before they turn into out-of-range panics.
func (pt *Part) check(dir string) error {
	m := pt.Meta
	n := m.NumNodes
	file := func(name string) string { return filepath.Join(dir, partDir(pt.ID), name) }
	if pt.Indptr[0] != 0 || pt.Indptr[len(pt.Indptr)-1] != int64(len(pt.Indices)) {
		return fmt.Errorf("load %s: offsets run from %d to %d, want 0 to %d", file(fileIndptr), pt.Indptr[0], pt.Indptr[len(pt.Indptr)-1], len(pt.Indices))
	}
	for i := 1; i < len(pt.Indptr); i++ {
		if pt.Indptr[i] < pt.Indptr[i-1] {
			return fmt.Errorf("load %s: offsets decrease at row %d", file(fileIndptr), i-1)
		}
	}
	for i, g := range pt.Indices {
		if g < 0 || g >= n {
			return fmt.Errorf("load %s: entry %d: id %d outside [0,%d)", file(fileIndices), i, g, n)
		}
		if o := pt.IndicesOrig[i]; o < 0 || o >= n {
			return fmt.Errorf("load %s: entry %d: id %d outside [0,%d)", file(fileIndOrig), i, o, n)
		}
	}
	// Rows are nodes, or (node, relation) pairs in a heterogeneous part.
	// Timed rows are ordered by (time, original id): loadTime checks them.
	for v := 0; v+1 < len(pt.Indptr) && m.Time == nil; v++ {
		row := pt.IndicesOrig[pt.Indptr[v]:pt.Indptr[v+1]]
		for k := 1; k < len(row); k++ {
			if row[k] <= row[k-1] {
				return fmt.Errorf("load %s: row %d not in canonical order (ascending original id, no duplicates)", file(fileIndOrig), v)
			}
		}
	}
	for i, o := range pt.Orig {
		if o < 0 || o >= n {
			return fmt.Errorf("load %s: entry %d: id %d outside [0,%d)", file(fileOrig), i, o, n)
		}
	}
	// -1 marks a node without a label: other node types of a
	// heterogeneous partition, unlabelled nodes of the label type, and
	// the unlabelled nodes of a homogeneous chunked dataset (OGB's NaN
	// labels), which may not be in a split (checked below; the
	// heterogeneous writer does not check its splits against labels).
	for i, l := range pt.Labels {
		if l < -1 || int(l) >= m.NumClasses {
			return fmt.Errorf("load %s: entry %d: label %d outside [-1,%d)", file(fileLabels), i, l, m.NumClasses)
		}
	}
	if m.Hetero != nil {
		if err := pt.checkHetero(file); err != nil {
			return err
		}
	}
	for i, g := range pt.Halo {
		if g < 0 || g >= n || (g >= pt.Lo && g < pt.Hi) || (i > 0 && g <= pt.Halo[i-1]) {
			return fmt.Errorf("load %s: entry %d: id %d is owned, out of range or not ascending", file(fileHalo), i, g)
		}
	}
	for _, name := range m.splitNames() {
		s := pt.Splits[name]
		for _, set := range []struct {
			name string
			ids  []int64
		}{{"train", s.Train}, {"valid", s.Valid}, {"test", s.Test}} {
			for i, g := range set.ids {
				if g < pt.Lo || g >= pt.Hi || (i > 0 && g <= set.ids[i-1]) {
					return fmt.Errorf("load %s: entry %d: id %d not owned or not ascending", file(splitFile(name, set.name)), i, g)
				}
				if m.Hetero == nil && pt.Labels != nil && pt.Labels[g-pt.Lo] < 0 {
					return fmt.Errorf("load %s: entry %d: node %d has no label", file(splitFile(name, set.name)), i, g)
				}
			}
		}
	}
	return nil
}
