package partition

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"mpignn/graph"
)

// Shared partitions: a part served by several ranks (the ranks of a node,
// which hold it in one copy) is cut into shares of consecutive owned nodes,
// one per rank. A share is loaded as a Part of its own (LoadRange) whose
// Meta is a view of the partition with one part per rank (ShareView), so
// that the stores and samplers above see an ordinary partition of P parts.
// New ids, and so every sampled batch, are those of the partition.

// SharedView records, in the Meta of a share, the partition it was cut from.
type SharedView struct {
	Parts  int     // parts of the partition on disk
	First  []int   // part g is served by ranks [First[g], First[g+1])
	PartOf []int64 // the partition's own offsets (len Parts+1)
	// Infos are the statistics of the parts on disk (Meta.Parts of the
	// partition), which the view's Parts leaves out.
	Infos []PartInfo
}

// ShareBounds cuts part p into n shares of consecutive owned nodes: share j
// holds the owned positions [b[j], b[j+1]). The cuts fall at quantiles of
// the training nodes of the partition's default split (Meta.Split), so every
// rank gets an even share of each global batch; in a link partition at
// quantiles of the sources of the training positives, the seeds of a link
// step (a share holds the positives whose source it owns); without a
// split, or with fewer training nodes (positives) than shares, at
// quantiles of the nodes. A heterogeneous part is cut at quantiles of its
// nodes too: its training nodes (sources) are of one type, and cutting at
// their quantiles would leave the part's other types to its first and
// last shares. It reads only the split's training list (the training
// positives' file).
func ShareBounds(dir string, m *Meta, p, n int) ([]int64, error) {
	if p < 0 || p >= m.NumParts || n <= 0 {
		return nil, fmt.Errorf("share bounds %s: part %d of %d in %d shares", dir, p, m.NumParts, n)
	}
	owned := m.Offsets[p+1] - m.Offsets[p]
	b := make([]int64, n+1)
	b[n] = owned
	for j := 1; j < n; j++ {
		b[j] = owned * int64(j) / int64(n)
	}
	if m.Hetero != nil {
		return b, nil
	}
	if m.Link != nil {
		lb, err := linkShareBounds(dir, m, p, n)
		if err != nil || lb == nil {
			return b, err
		}
		return lb, nil
	}
	if m.Split == "" {
		return b, nil
	}
	name := partDir(p) + "/" + splitFile(m.Split, "train")
	fi, ok := m.Files[name]
	if !ok || fi.Len < int64(n) {
		return b, nil
	}
	T := fi.Len
	j := 1
	err := readArrayVisit(filepath.Join(dir, name), fi, func(start int64, xs []int64) {
		for j < n && T*int64(j)/int64(n) < start+int64(len(xs)) {
			b[j] = xs[T*int64(j)/int64(n)-start] - m.Offsets[p]
			j++
		}
	})
	if err != nil {
		return nil, err
	}
	for j := 1; j <= n; j++ {
		if b[j] < b[j-1] || b[j] > owned {
			return nil, fmt.Errorf("load %s: training nodes not ascending within part %d", filepath.Join(dir, name), p)
		}
	}
	return b, nil
}

// LoadRange reads the share [lo, hi) (owned positions) of part p: its
// nodes' in-edges (with their times in a timed partition and their
// features in one with edge features), ids, features
// (CSR rows in a sparse-feature partition), labels and node times, its
// share of every split, and as halo the sources of its edges that part p
// does not own (with their feature rows when the partition stores halo
// features: the share's rows of the part's halo files). Other shares of
// the part are not halo: their ranks hold them in memory. In a link
// partition it reads the share's piece of the link split (sharelink.go),
// all but the id map, whose block LoadOrigBlock fills once the view is
// known. Every file is read whole and checked against its checksum, but
// only the share is kept. The result's Meta is m; give it a ShareView
// before opening stores.
func LoadRange(dir string, m *Meta, p int, lo, hi int64) (*Part, error) {
	if p < 0 || p >= m.NumParts || lo < 0 || lo > hi || hi > m.Offsets[p+1]-m.Offsets[p] {
		return nil, fmt.Errorf("load %s: share [%d,%d) of part %d does not exist", dir, lo, hi, p)
	}
	pLo, pHi := m.Offsets[p], m.Offsets[p+1]
	pt := &Part{Meta: m, ID: p, Lo: pLo + lo, Hi: pLo + hi, Splits: map[string]*graph.Split{}}
	file := func(name string) (string, fileInfo) {
		key := partDir(p) + "/" + name
		return filepath.Join(dir, partDir(p), name), m.Files[key]
	}
	// Rows are nodes, or (node, relation) pairs of a heterogeneous part.
	R := int64(m.NumRels())
	var err error
	if pt.Indptr, err = readRange[int64](file, fileIndptr, lo*R, hi*R+1); err != nil {
		return nil, err
	}
	e0, e1 := pt.Indptr[0], pt.Indptr[(hi-lo)*R]
	if e1 < e0 {
		path, _ := file(fileIndptr)
		return nil, fmt.Errorf("load %s: offsets decrease within rows [%d,%d]", path, lo, hi)
	}
	for i := range pt.Indptr {
		pt.Indptr[i] -= e0
	}
	if pt.Indices, err = readRange[int64](file, fileIndices, e0, e1); err != nil {
		return nil, err
	}
	if pt.IndicesOrig, err = readRange[int64](file, fileIndOrig, e0, e1); err != nil {
		return nil, err
	}
	if pt.Orig, err = readRange[int64](file, fileOrig, lo, hi); err != nil {
		return nil, err
	}
	dim := int64(m.FeatDim)
	if m.SparseFeat {
		names := [3]string{fileFeatIndptr, fileFeatIndices, fileFeatValues}
		if pt.FeatCSR, err = readCSRRows(file, names, [][2]int64{{lo, hi}}, m.FeatDim); err != nil {
			return nil, err
		}
	} else if m.FeatKind().Half() {
		if pt.Feat16, err = readRange[uint16](file, fileFeat, lo*dim, hi*dim); err != nil {
			return nil, err
		}
	} else if pt.Feat, err = readRange[float32](file, fileFeat, lo*dim, hi*dim); err != nil {
		return nil, err
	}
	if h := m.Hetero; h != nil {
		// The part's nodes are grouped by type in type order: the share
		// holds of each type the nodes of its range, and their feature rows.
		pt.TypeLo = make([]int64, len(h.NodeTypes)+1)
		pt.TypeFeat = map[string][]float32{}
		start := int64(0) // owned position of the part's first node of type t
		for t, typ := range h.NodeTypes {
			c := h.TypeCount(t, p)
			pt.TypeLo[t] = pLo + min(max(start, lo), hi)
			// The share's rows of the type's table: [x, x+n).
			x := min(max(lo-start, 0), c)
			n := max(min(start+c, hi)-max(start, lo), 0)
			if d, ok := h.FeatDims[typ]; ok {
				if pt.TypeFeat[typ], err = readRange[float32](file, featFile(typ), x*int64(d), (x+n)*int64(d)); err != nil {
					return nil, err
				}
			}
			start += c
		}
		pt.TypeLo[len(h.NodeTypes)] = pt.Hi
	}
	if m.NumClasses > 0 {
		if pt.Labels, err = readRange[int32](file, fileLabels, lo, hi); err != nil {
			return nil, err
		}
	}
	if d := int64(m.TargetDim); d > 0 {
		if pt.Targets, err = readRange[float32](file, fileTargets, lo*d, hi*d); err != nil {
			return nil, err
		}
	}
	// The halo of the share: the sources outside the part, ascending, with
	// their original ids.
	type pair struct{ id, orig int64 }
	var halo []pair
	for i, v := range pt.Indices {
		if v < pLo || v >= pHi {
			halo = append(halo, pair{v, pt.IndicesOrig[i]})
		}
	}
	slices.SortFunc(halo, func(a, b pair) int { return cmp.Compare(a.id, b.id) })
	halo = slices.CompactFunc(halo, func(a, b pair) bool { return a.id == b.id })
	pt.Halo, pt.HaloOrig = make([]int64, len(halo)), make([]int64, len(halo))
	for i, h := range halo {
		pt.Halo[i], pt.HaloOrig[i] = h.id, h.orig
	}
	if m.HaloFeats {
		// The share's halo rows are rows of the part's halo files.
		pos, err := haloPositions(file, pt.Halo)
		if err != nil {
			return nil, err
		}
		rows := make([][2]int64, len(pos))
		for i, k := range pos {
			rows[i] = [2]int64{k, k + 1}
		}
		if m.SparseFeat {
			names := [3]string{fileHaloFeatIndptr, fileHaloFeatIndices, fileHaloFeatValues}
			if pt.HaloFeatCSR, err = readCSRRows(file, names, rows, m.FeatDim); err != nil {
				return nil, err
			}
		} else {
			for i := range rows {
				rows[i][0] *= dim
				rows[i][1] *= dim
			}
			if m.FeatKind().Half() {
				pt.HaloFeat16, err = readRanges[uint16](file, fileHaloFeat, rows)
			} else {
				pt.HaloFeat, err = readRanges[float32](file, fileHaloFeat, rows)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for _, name := range m.splitNames() {
		s := &graph.Split{}
		for _, set := range []struct {
			name string
			ids  *[]int64
		}{{"train", &s.Train}, {"valid", &s.Valid}, {"test", &s.Test}} {
			path, fi := file(splitFile(name, set.name))
			*set.ids = []int64{}
			err := readArrayVisit(path, fi, func(_ int64, xs []int64) {
				for _, v := range xs {
					if v >= pt.Lo && v < pt.Hi {
						*set.ids = append(*set.ids, v)
					}
				}
			})
			if err != nil {
				return nil, err
			}
		}
		pt.Splits[name] = s
	}
	if err := pt.check(dir); err != nil {
		return nil, err
	}
	if m.Time != nil {
		if pt.Times, err = readRange[int64](file, fileTimes, e0, e1); err != nil {
			return nil, err
		}
		if m.Time.NodeTime {
			if pt.NodeTime, err = readRange[int64](file, fileNodeTime, lo, hi); err != nil {
				return nil, err
			}
		}
		if err := pt.checkTime(dir); err != nil {
			return nil, err
		}
	}
	if ed := int64(m.EdgeFeatDim); ed > 0 {
		if pt.EdgeFeat, err = readRange[float32](file, fileEdgeFeat, e0*ed, e1*ed); err != nil {
			return nil, err
		}
	}
	if m.Link != nil {
		if err := loadLinkRange(file, m, pt, lo, hi); err != nil {
			return nil, err
		}
		if err := pt.checkLink(dir); err != nil {
			return nil, err
		}
	}
	return pt, nil
}

// readRange reads elements [lo, hi) of one file of a part (see LoadRange).
func readRange[T elem](file func(string) (string, fileInfo), name string, lo, hi int64) ([]T, error) {
	return readRanges[T](file, name, [][2]int64{{lo, hi}})
}

// readRanges reads the elements of the given ranges [lo, hi) (ascending,
// not overlapping) of one file of a part, concatenated, streaming the file
// and keeping only them.
func readRanges[T elem](file func(string) (string, fileInfo), name string, ranges [][2]int64) ([]T, error) {
	path, fi := file(name)
	want := int64(0)
	for i, r := range ranges {
		if r[0] < 0 || r[0] > r[1] || r[1] > fi.Len || (i > 0 && r[0] < ranges[i-1][1]) {
			return nil, fmt.Errorf("load %s: elements [%d,%d) of %d (range %d of %d)", path, r[0], r[1], fi.Len, i, len(ranges))
		}
		want += r[1] - r[0]
	}
	out := make([]T, 0, want)
	k := 0
	err := readArrayVisit(path, fi, func(start int64, xs []T) {
		end := start + int64(len(xs))
		for k < len(ranges) && ranges[k][0] < end {
			a, b := max(ranges[k][0], start), min(ranges[k][1], end)
			if a < b {
				out = append(out, xs[a-start:b-start]...)
			}
			if ranges[k][1] > end {
				return // the range goes on in the next chunk
			}
			k++
		}
	})
	if err != nil {
		return nil, err
	}
	if int64(len(out)) != want {
		return nil, fmt.Errorf("load %s: read %d of %d elements", path, len(out), want)
	}
	return out, nil
}

// readCSRRows reads the given row ranges (ascending, not overlapping) of
// the CSR feature files names (offsets, columns, values) of a part as rows
// of their own, in order, and checks them against dim.
func readCSRRows(file func(string) (string, fileInfo), names [3]string, rows [][2]int64, dim int) (*CSRRows, error) {
	// Each row range [a, b) needs offsets [a, b+1); consecutive ranges
	// share an offset, so read each offset once and index into them.
	var offs [][2]int64
	for _, r := range rows {
		if n := len(offs); n > 0 && offs[n-1][1] > r[0] {
			offs[n-1][1] = r[1] + 1
		} else {
			offs = append(offs, [2]int64{r[0], r[1] + 1})
		}
	}
	ptr, err := readRanges[int64](file, names[0], offs)
	if err != nil {
		return nil, err
	}
	c := &CSRRows{Indptr: make([]int64, 1, len(ptr))}
	entries := make([][2]int64, 0, len(rows))
	path, _ := file(names[0])
	i, o := 0, int64(0) // offs[i] starts at ptr[o]
	for _, r := range rows {
		for r[0] >= offs[i][1] {
			o += offs[i][1] - offs[i][0]
			i++
		}
		e0, e1 := ptr[o+r[0]-offs[i][0]], ptr[o+r[1]-offs[i][0]]
		if e1 < e0 {
			return nil, fmt.Errorf("load %s: offsets decrease within rows [%d,%d]", path, r[0], r[1])
		}
		for k := r[0] + 1; k <= r[1]; k++ {
			c.Indptr = append(c.Indptr, c.Indptr[len(c.Indptr)-1]+ptr[o+k-offs[i][0]]-ptr[o+k-1-offs[i][0]])
		}
		if n := len(entries); n > 0 && entries[n-1][1] == e0 {
			entries[n-1][1] = e1
		} else if e0 < e1 {
			entries = append(entries, [2]int64{e0, e1})
		}
	}
	if c.Indices, err = readRanges[int32](file, names[1], entries); err != nil {
		return nil, err
	}
	if c.Values, err = readRanges[float32](file, names[2], entries); err != nil {
		return nil, err
	}
	if f, err := c.check(dim); err != nil {
		path, _ := file(names[f])
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return c, nil
}

// haloPositions returns the positions of the share's halo (ascending, a
// subset of the part's halo) in the part's halo list, whose feature rows
// the part's halo feature files hold in that order.
func haloPositions(file func(string) (string, fileInfo), halo []int64) ([]int64, error) {
	pos := make([]int64, 0, len(halo))
	k := 0
	path, fi := file(fileHalo)
	err := readArrayVisit(path, fi, func(start int64, xs []int64) {
		for i, v := range xs {
			for k < len(halo) && halo[k] < v {
				k++ // not in the part's halo: reported below
			}
			if k < len(halo) && halo[k] == v {
				pos = append(pos, start+int64(i))
				k++
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if len(pos) != len(halo) {
		return nil, fmt.Errorf("load %s: %d of the share's %d halo nodes are missing", path, len(halo)-len(pos), len(halo))
	}
	return pos, nil
}

// ShareView returns the Meta of a partition whose parts are served by
// groups of ranks (first: part g by ranks [first[g], first[g+1])) as one
// part per rank: offsets (len P+1) are the ranks' shares. Per-part
// statistics are left out (Parts); Shared records the partition on disk.
func (m *Meta) ShareView(first []int, offsets []int64) *Meta {
	v := *m
	v.NumParts = len(offsets) - 1
	v.Offsets = offsets
	v.Parts = nil
	v.Shared = &SharedView{Parts: m.NumParts, First: first, PartOf: m.Offsets, Infos: m.Parts}
	if h := m.Hetero; h != nil {
		v.Hetero = h.shareView(m.Offsets, first, offsets)
	}
	return &v
}

// shareView returns the heterogeneous meta of a ShareView: the type
// offsets refined to one part per rank. Rank r's share [lo, hi) of part g
// holds of type t the part's nodes of the type whose owned positions fall
// in [lo, hi) (the part groups its nodes by type, in type order), so it
// starts at type-local id TypeOffsets[t][g] plus the part's nodes of type
// t before lo.
func (h *HeteroMeta) shareView(partOf []int64, first []int, offsets []int64) *HeteroMeta {
	v := *h
	P, K := len(offsets)-1, len(partOf)-1
	v.TypeOffsets = make([][]int64, len(h.NodeTypes))
	for t := range h.NodeTypes {
		to := make([]int64, P+1)
		for g := range K {
			start := h.TypeStart(t, g, 0) // owned position of type t's first node
			c := h.TypeCount(t, g)
			for r := first[g]; r < first[g+1]; r++ {
				lo := offsets[r] - partOf[g]
				to[r] = h.TypeOffsets[t][g] + min(max(lo-start, 0), c)
			}
		}
		to[P] = h.TypeOffsets[t][K]
		v.TypeOffsets[t] = to
	}
	return &v
}
