package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Relation edge features of a heterogeneous dataset.
//
// OGB's heterogeneous layout keeps per-edge attributes beside a relation's
// edge file, one value per edge line: raw/relations/<rel>/edge_<name>.csv.gz
// (MovieLens' edge_rating and edge_time, ogbn-mag's edge_reltype). With
// HeteroReadOptions.EdgeFeat the named attributes become the columns of one
// edge-feature row per stored in-edge (HeteroDataset.EdgeFeat): column c is
// attribute EdgeFeat[c], and a relation without that file has 0 there. So
// every relation has the same width, as a partition stores one width per
// edge, and a relation without any of the files has all-zero rows, whose
// edge term contributes nothing. A reversed edge (PyG's ToUndirected) keeps
// its edge's row, as ToUndirected copies edge_attr to the reverse edge type.

// edgeAttrPrefix starts the name of a relation's per-edge attribute file.
const edgeAttrPrefix = "edge_"

// HeteroEdgeAttrs lists the per-edge attribute names (edge_<name>.csv.gz,
// name without the prefix) found under any stored relation of the
// heterogeneous dataset dir, sorted; "time" is left out (edge times are
// HeteroReadOptions.Time's, not features).
func HeteroEdgeAttrs(dir string) ([]string, error) {
	rd := filepath.Join(dir, "raw", "relations")
	ents, err := os.ReadDir(rd)
	if err != nil {
		return nil, fmt.Errorf("edge attributes: %w", err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(rd, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("edge attributes: %w", err)
		}
		for _, f := range files {
			n, ok := strings.CutSuffix(f.Name(), ".csv.gz")
			if !ok || !strings.HasPrefix(n, edgeAttrPrefix) {
				continue
			}
			if n = strings.TrimPrefix(n, edgeAttrPrefix); n != "" && n != "time" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// checkEdgeAttrNames refuses edge attribute names that are empty,
// repeated or not usable in a file name.
func checkEdgeAttrNames(names []string) error {
	for i, n := range names {
		if n == "" || strings.ContainsAny(n, "/\\,") || n == "." || n == ".." {
			return fmt.Errorf("read options: EdgeFeat[%d] %q is not an edge attribute name (edge_<name>.csv.gz)", i, n)
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("read options: EdgeFeat names %q twice", n)
		}
	}
	return nil
}

// relEdges are one stored relation's edge lines (type-local ids) and their
// feature rows (nil when the relation has none of the attributes).
type relEdges struct {
	src, dst []int64
	feat     *Features
}

// readRelationEdges reads one stored relation's edge lines and the
// attributes names as feature columns (zero where the relation has no
// such file; feat nil when it has none of them).
func readRelationEdges(raw string, rel Relation, s *Schema, names []string, workers int) (relEdges, error) {
	rd := filepath.Join(raw, "relations", rel.String())
	countPath := filepath.Join(rd, "num-edge-list.csv.gz")
	m, err := readSingleNumber(countPath)
	if err != nil {
		return relEdges{}, err
	}
	if m < 0 {
		return relEdges{}, fmt.Errorf("%s line 1: edge count %d is negative", countPath, m)
	}
	edgePath := filepath.Join(rd, "edge.csv.gz")
	if err := checkPlausibleCount(edgePath, "num-edge-list.csv.gz", m, 3); err != nil {
		return relEdges{}, err
	}
	ev := relEdges{src: make([]int64, m), dst: make([]int64, m)}
	err = readEdgeLines(edgePath, s.Count(s.TypeIndex(rel.Src)), s.Count(s.TypeIndex(rel.Dst)), m, workers, func(idx, u, v int64) {
		ev.src[idx], ev.dst[idx] = u, v
	})
	if err != nil {
		return relEdges{}, err
	}
	d := len(names)
	for c, n := range names {
		path := filepath.Join(rd, edgeAttrPrefix+n+".csv.gz")
		if !fileExists(path) {
			continue
		}
		if m == 0 {
			return relEdges{}, fmt.Errorf("%s: relation %s has no edges", path, rel)
		}
		col, err := readFeatures(path, m, workers)
		if err != nil {
			return relEdges{}, err
		}
		if col.Dim != 1 {
			return relEdges{}, fmt.Errorf("%s: %d values per line, want one per edge line", path, col.Dim)
		}
		if ev.feat == nil {
			ev.feat = &Features{Dim: d, Data: make([]float32, m*int64(d))}
		}
		for i, v := range col.Data {
			ev.feat.Data[int64(i)*int64(d)+int64(c)] = v
		}
	}
	return ev, nil
}

// buildEdgeFeat builds the relation-row in-adjacency (row v*R+r) of the
// stored relations' edges, with reverse relations and symmetrized self
// relations as ReadOGBHetero adds them, and the edge-feature row of every
// stored in-edge: rows sorted by source without repeats, of repeated edges
// the first line's row kept (BuildInCSREdgeIDs' rule), so the result does
// not depend on the workers and its adjacency is the one buildRelIn makes.
func buildEdgeFeat(s *Schema, stored []Relation, evs []relEdges, names []string, opt HeteroReadOptions, noRev map[string]bool) (*CSR, *Features, error) {
	R := int64(s.NumRels())
	d := len(names)
	var total, lines int64
	have := false
	for _, ev := range evs {
		total += 2 * int64(len(ev.src))
		lines += int64(len(ev.src))
		have = have || ev.feat != nil
	}
	if !have {
		return nil, nil, fmt.Errorf("edge features %s: no relation has any of the files %s", strings.Join(names, ","), edgeAttrPrefix+"<name>.csv.gz")
	}
	feat := &Features{Dim: d, Data: make([]float32, lines*int64(d))}
	src, row, id := make([]int64, 0, total), make([]int64, 0, total), make([]int64, 0, total)
	base := int64(0)
	for i, rel := range stored {
		ev := evs[i]
		if ev.feat != nil {
			copy(feat.Data[base*int64(d):], ev.feat.Data)
		}
		rf := int64(s.RelIndex(rel.String()))
		sOff, dOff := s.NodeOrig[s.TypeIndex(rel.Src)], s.NodeOrig[s.TypeIndex(rel.Dst)]
		rev := int64(-1)
		switch {
		case !opt.Reverse || noRev[rel.String()]:
		case rel.Src == rel.Dst:
			rev = rf
		default:
			rev = int64(s.RelIndex(rel.Reverse().String()))
		}
		// Each line's edge, then its reverse: list positions follow the
		// lines, so the lowest position Dedup keeps is the lowest line
		// (a symmetrized self relation meets u->v as a line and as the
		// reverse of a line v->u).
		for k := range ev.src {
			src, row, id = append(src, sOff+ev.src[k]), append(row, (dOff+ev.dst[k])*R+rf), append(id, base+int64(k))
			if rev >= 0 {
				src, row, id = append(src, dOff+ev.dst[k]), append(row, (sOff+ev.src[k])*R+rev), append(id, base+int64(k))
			}
		}
		base += int64(len(ev.src))
	}
	g, _, pos := BuildInCSREdgeIDs(s.NumNodes()*R, src, row, nil, BuildOptions{Dedup: true, Workers: opt.Workers})
	// pos indexes the (src, row) lists: map it to the lines' ids.
	for k, p := range pos {
		pos[k] = id[p]
	}
	return g, GatherRows(feat, pos, opt.Workers), nil
}
