package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"mpignn/graph"
)

// PartFiles is one part as the writer stores it, whichever process built
// it: the single-process writer (writeSource) fills it from the whole
// graph, the distributed partitioner (partition/dpartition) from what the
// ranks sent to this part's owner. Both then write the part's files with
// the same code (write), which is what keeps their outputs byte-identical.
//
// Ids are original (homogenized) ids unless named new.
type PartFiles struct {
	P      int
	Lo, Hi int64 // the part's new ids [Lo,Hi)
	Rels   int64 // relation rows per node (1 for a homogeneous graph)
	// Orig are the owned nodes in new-id order; Indptr (len(Orig)*Rels+1)
	// and IndOrig their in-rows (row i*Rels+r: node Lo+i, relation r) in
	// canonical order; Times the edge times aligned with IndOrig (nil:
	// untimed).
	Orig, Indptr, IndOrig, Times []int64
	// EdgeFeat holds the edge features aligned with IndOrig,
	// Meta.EdgeFeatDim per edge (nil: none).
	EdgeFeat []float32
	// NewID returns the new id of a source; FirstHalo reports whether a
	// non-owned source u is met for the first time in this part.
	NewID     func(u int64) int64
	FirstHalo func(u int64) bool
	// Feat holds the homogeneous features; FeatRow(i, o) is the row of
	// Feat of owned node i (original id o), or of halo node o (i < 0).
	Feat    *graph.Features
	FeatRow func(i int, o int64) int64
	// HetFeat holds per-type features; HetRow(t, k, o) is the row of
	// HetFeat[type t] of the k-th owned node of type t (original id o).
	HetFeat map[string]*graph.Features
	HetRow  func(t int, k int64, o int64) int64
	// Label returns owned node i's label (nil: no labels.bin).
	Label func(i int, o int64) int32
	// Targets holds the real node targets (nil: no targets.bin);
	// TargetRow(i, o) is the row of owned node i (original id o), by
	// original id when nil.
	Targets   *graph.Features
	TargetRow func(i int, o int64) int64
	// Splits returns the part's share of split name, new ids ascending.
	Splits func(name string) (train, valid, test []int64)
	// NodeTime returns a node's time (nil: no node_time.bin).
	NodeTime func(o int64) int64
	// Link is the part's share of a link split (Meta.Link set), whose
	// files the distributed partitioner has it write; the single-process
	// writer builds it in link, part by part.
	Link *LinkPart
	link func(files map[string]FileInfo, aw *arrayWriter, pdir string) (*LinkCounts, error)
}

// partRows computes the new-id sources of the rows, the halo (non-owned
// sources, new ids ascending, with their original ids) and the cut, adding
// each relation's edges and cut to relEdges and relCut when given.
func (pf *PartFiles) partRows(relEdges, relCut []int64) (indices, halo, haloOrig []int64, cut int64) {
	R := pf.Rels
	indices = make([]int64, len(pf.IndOrig))
	type pair struct{ g, u int64 }
	var hp []pair
	for row := int64(0); row+1 < int64(len(pf.Indptr)); row++ {
		a, b := pf.Indptr[row], pf.Indptr[row+1]
		rcut := int64(0)
		for k := a; k < b; k++ {
			u := pf.IndOrig[k]
			g := pf.NewID(u)
			indices[k] = g
			if g < pf.Lo || g >= pf.Hi {
				rcut++
				if pf.FirstHalo(u) {
					hp = append(hp, pair{g, u})
				}
			}
		}
		cut += rcut
		if relEdges != nil {
			relEdges[row%R] += b - a
			relCut[row%R] += rcut
		}
	}
	slices.SortFunc(hp, func(x, y pair) int { return int(min(max(x.g-y.g, -1), 1)) })
	halo = make([]int64, len(hp))
	haloOrig = make([]int64, len(hp))
	for i, h := range hp {
		halo[i], haloOrig[i] = h.g, h.u
	}
	return indices, halo, haloOrig, cut
}

// rows maps original ids through FeatRow (owned when owned is set).
func (pf *PartFiles) rows(ids []int64, owned bool) []int64 {
	out := make([]int64, len(ids))
	for i, o := range ids {
		j := -1
		if owned {
			j = i
		}
		out[i] = pf.FeatRow(j, o)
	}
	return out
}

// Write writes the part's directory under tmp as write does, with its own
// array writer of the given parallelism.
func (pf *PartFiles) Write(tmp string, m *Meta, workers int, splitNames []string) (PartInfo, error) {
	aw, err := newArrayWriter(max(workers, 1))
	if err != nil {
		return PartInfo{}, err
	}
	defer aw.close()
	return pf.write(tmp, m, aw, splitNames)
}

// write writes the part's directory under tmp, recording its files in
// m.Files and its relation counts in m.Hetero, and returns its PartInfo.
// m must hold everything but the parts (offsets, type offsets, the sparse
// and halo-feature choices).
func (pf *PartFiles) write(tmp string, m *Meta, aw *arrayWriter, splitNames []string) (PartInfo, error) {
	p := pf.P
	nodes := pf.Hi - pf.Lo
	var relEdges, relCut []int64
	if m.Hetero != nil {
		relEdges, relCut = m.Hetero.RelEdges, m.Hetero.RelCut
	}
	indices, halo, haloOrig, cut := pf.partRows(relEdges, relCut)
	edges := int64(len(indices))
	pi := PartInfo{Nodes: nodes, Edges: edges, HaloNodes: int64(len(halo)), CutEdges: cut, Splits: map[string]SplitCounts{}}
	pdir := filepath.Join(tmp, partDir(p))
	if err := os.Mkdir(pdir, 0o755); err != nil {
		return pi, fmt.Errorf("output %s: %w", pdir, err)
	}
	put := func(name string, xs []int64) error { return putArray(m.Files, aw, pdir, p, name, xs) }
	if err := put(fileIndptr, pf.Indptr); err != nil {
		return pi, err
	}
	if err := put(fileIndices, indices); err != nil {
		return pi, err
	}
	if err := put(fileIndOrig, pf.IndOrig); err != nil {
		return pi, err
	}
	indices = nil
	if err := put(fileOrig, pf.Orig); err != nil {
		return pi, err
	}
	if m.SparseFeat {
		c := csrRows(pf.Feat, pf.rows(pf.Orig, true))
		pi.FeatNNZ = c.NNZ()
		if err := putCSR(m.Files, aw, pdir, p, [3]string{fileFeatIndptr, fileFeatIndices, fileFeatValues}, c); err != nil {
			return pi, err
		}
	} else if err := putFeat(m.Files, aw, pdir, p, fileFeat, m, gatherRows(pf.Feat, pf.rows(pf.Orig, true))); err != nil {
		return pi, err
	}
	if m.Hetero != nil {
		if err := pf.writeHetFeat(m, aw, pdir); err != nil {
			return pi, err
		}
	}
	if pf.Label != nil {
		labels := make([]int32, nodes)
		for i, o := range pf.Orig {
			labels[i] = pf.Label(i, o)
		}
		if err := putArray(m.Files, aw, pdir, p, fileLabels, labels); err != nil {
			return pi, err
		}
	}
	if pf.Targets != nil {
		rows := pf.Orig
		if pf.TargetRow != nil {
			rows = make([]int64, len(pf.Orig))
			for i, o := range pf.Orig {
				rows[i] = pf.TargetRow(i, o)
			}
		}
		if err := putArray(m.Files, aw, pdir, p, fileTargets, gatherRows(pf.Targets, rows)); err != nil {
			return pi, err
		}
	}
	if err := put(fileHalo, halo); err != nil {
		return pi, err
	}
	if err := put(fileHaloOrig, haloOrig); err != nil {
		return pi, err
	}
	switch {
	case m.HaloFeats && m.SparseFeat:
		c := csrRows(pf.Feat, pf.rows(haloOrig, false))
		pi.HaloFeatNNZ = c.NNZ()
		if err := putCSR(m.Files, aw, pdir, p, [3]string{fileHaloFeatIndptr, fileHaloFeatIndices, fileHaloFeatValues}, c); err != nil {
			return pi, err
		}
	case m.HaloFeats:
		if err := putFeat(m.Files, aw, pdir, p, fileHaloFeat, m, gatherRows(pf.Feat, pf.rows(haloOrig, false))); err != nil {
			return pi, err
		}
	}
	for _, name := range splitNames {
		tr, va, te := pf.Splits(name)
		pi.Splits[name] = SplitCounts{Train: int64(len(tr)), Valid: int64(len(va)), Test: int64(len(te))}
		for _, f := range []struct {
			set string
			ids []int64
		}{{"train", tr}, {"valid", va}, {"test", te}} {
			if err := put(splitFile(name, f.set), f.ids); err != nil {
				return pi, err
			}
		}
	}
	switch {
	case pf.link != nil:
		lc, err := pf.link(m.Files, aw, pdir)
		if err != nil {
			return pi, err
		}
		pi.Link = lc
	case pf.Link != nil && m.Link != nil:
		lc, err := pf.Link.write(m.Files, aw, pdir, p, m.Link.ValidAdj)
		if err != nil {
			return pi, err
		}
		pi.Link = lc
	}
	if pf.Times != nil {
		if err := put(fileTimes, pf.Times); err != nil {
			return pi, err
		}
		if pf.NodeTime != nil {
			nt := make([]int64, nodes)
			for i, o := range pf.Orig {
				nt[i] = pf.NodeTime(o)
			}
			if err := put(fileNodeTime, nt); err != nil {
				return pi, err
			}
		}
	}
	if pf.EdgeFeat != nil {
		if err := putArray(m.Files, aw, pdir, p, fileEdgeFeat, pf.EdgeFeat); err != nil {
			return pi, err
		}
	}
	return pi, nil
}

// writeHetFeat writes the part's feat-<type>.bin files; Orig is grouped
// by type in type order.
func (pf *PartFiles) writeHetFeat(m *Meta, aw *arrayWriter, pdir string) error {
	h := m.Hetero
	start := int64(0)
	for t, typ := range h.NodeTypes {
		cnt := h.TypeCount(t, pf.P)
		if f := pf.HetFeat[typ]; f != nil {
			local := make([]int64, cnt)
			for k, o := range pf.Orig[start : start+cnt] {
				local[k] = pf.HetRow(t, int64(k), o)
			}
			if err := putArray(m.Files, aw, pdir, pf.P, featFile(typ), gatherRows(f, local)); err != nil {
				return err
			}
		}
		start += cnt
	}
	return nil
}
