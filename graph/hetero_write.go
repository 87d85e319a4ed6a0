package graph

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// WriteHetero writes d in OGB's heterogeneous raw layout under dir (the
// files ReadOGBHetero reads, see there), atomically like WriteOGB: into a
// temporary sibling directory renamed to dir at the end. dir must not exist
// or be an empty directory.
//
// A relation dst___rev_<rel>___src whose forward relation src___<rel>___dst
// is in d is taken to be the reverse added on load and is not written (its
// edge count must match the forward one), so that
// ReadOGBHetero(dir, HeteroReadOptions{}) returns d for a d as stored (the
// generator's), and ReadOGBHetero with Reverse returns the d it read before.
// Edges are written in relation-row order (by destination, then source);
// labels -1 as "-1".
func WriteHetero(dir string, d *HeteroDataset) error {
	s := d.Schema
	if s == nil || d.In == nil {
		return fmt.Errorf("write %s: dataset has no schema or no adjacency", dir)
	}
	R := int64(s.NumRels())
	if d.In.NumRows() != s.NumNodes()*R {
		return fmt.Errorf("write %s: adjacency has %d rows, want nodes x relations = %d", dir, d.In.NumRows(), s.NumNodes()*R)
	}
	if (d.InTime != nil && int64(len(d.InTime)) != d.In.NumEdges()) || (d.NodeTime != nil && int64(len(d.NodeTime)) != s.NumNodes()) {
		return fmt.Errorf("write %s: %d edge times for %d edges, %d node times for %d nodes", dir, len(d.InTime), d.In.NumEdges(), len(d.NodeTime), s.NumNodes())
	}
	for ty, f := range d.Feat {
		t := s.TypeIndex(ty)
		if t < 0 || f == nil || f.Dim <= 0 || f.NumRows() != s.Count(t) {
			return fmt.Errorf("write %s: features of %q need one row of positive dimension per node of a known type", dir, ty)
		}
	}
	for ty, l := range d.Labels {
		t := s.TypeIndex(ty)
		if t < 0 || int64(len(l)) != s.Count(t) {
			return fmt.Errorf("write %s: labels of %q need one per node of a known type", dir, ty)
		}
	}
	edgeCount := func(r int) int64 {
		dt := s.DstType(r)
		var m int64
		for v := s.NodeOrig[dt]; v < s.NodeOrig[dt+1]; v++ {
			m += d.In.Degree(v*R + int64(r))
		}
		return m
	}
	var written []int
	for r, rel := range s.Relations {
		if fwd, ok := strings.CutPrefix(rel.Name, ReversePrefix); ok {
			if f := s.RelIndex(Relation{Src: rel.Dst, Name: fwd, Dst: rel.Src}.String()); f >= 0 {
				if edgeCount(f) != edgeCount(r) {
					return fmt.Errorf("write %s: %s has %d edges but its forward relation %s has %d; it is not the reverse added on load",
						dir, rel, edgeCount(r), s.Relations[f], edgeCount(f))
				}
				continue
			}
		}
		written = append(written, r)
	}
	workers := runtime.GOMAXPROCS(0)
	return writeDirAtomic(dir, func(tmp string) error {
		raw := filepath.Join(tmp, "raw")
		if err := os.MkdirAll(raw, 0o755); err != nil {
			return err
		}
		counts := make([]string, s.NumTypes())
		hasFeat := make([]string, s.NumTypes())
		hasLabel := make([]string, s.NumTypes())
		for t, ty := range s.NodeTypes {
			counts[t] = strconv.FormatInt(s.Count(t), 10)
			hasFeat[t] = pyBool(d.Feat[ty] != nil)
			hasLabel[t] = pyBool(d.Labels[ty] != nil)
		}
		header := strings.Join(s.NodeTypes, ",") + "\n"
		var triplets strings.Builder
		for _, r := range written {
			rel := s.Relations[r]
			fmt.Fprintf(&triplets, "%s,%s,%s\n", rel.Src, rel.Name, rel.Dst)
		}
		for _, f := range []struct{ name, text string }{
			{"num-node-dict.csv.gz", header + strings.Join(counts, ",") + "\n"},
			{"triplet-type-list.csv.gz", triplets.String()},
			{"nodetype-has-feat.csv.gz", header + strings.Join(hasFeat, ",") + "\n"},
			{"nodetype-has-label.csv.gz", header + strings.Join(hasLabel, ",") + "\n"},
		} {
			if err := writeSmallGzip(filepath.Join(raw, f.name), f.text); err != nil {
				return err
			}
		}
		for _, r := range written {
			if err := writeRelation(filepath.Join(raw, "relations", s.Relations[r].String()), d, r, edgeCount(r), workers); err != nil {
				return err
			}
		}
		if d.NodeTime != nil {
			if err := writeHeteroNodeTimes(raw, d, workers); err != nil {
				return err
			}
		}
		for ty, f := range d.Feat {
			fd := filepath.Join(raw, "node-feat", ty)
			if err := os.MkdirAll(fd, 0o755); err != nil {
				return err
			}
			if err := writeFeatures(filepath.Join(fd, "node-feat.csv.gz"), f, workers); err != nil {
				return err
			}
		}
		for ty, l := range d.Labels {
			ld := filepath.Join(raw, "node-label", ty)
			if err := os.MkdirAll(ld, 0o755); err != nil {
				return err
			}
			if err := writeLabels(filepath.Join(ld, "node-label.csv.gz"), l, workers); err != nil {
				return err
			}
		}
		for name, byType := range d.Splits {
			sd := filepath.Join(tmp, "split", name)
			has := make([]string, s.NumTypes())
			for t, ty := range s.NodeTypes {
				has[t] = pyBool(byType[ty] != nil)
			}
			for ty, sp := range byType {
				t := s.TypeIndex(ty)
				if t < 0 {
					return fmt.Errorf("split %q: unknown node type %q", name, ty)
				}
				td := filepath.Join(sd, ty)
				if err := os.MkdirAll(td, 0o755); err != nil {
					return err
				}
				for _, p := range []struct {
					file string
					ids  []int64
				}{{"train.csv.gz", sp.Train}, {"valid.csv.gz", sp.Valid}, {"test.csv.gz", sp.Test}} {
					if err := writeIDs(filepath.Join(td, p.file), p.ids, s.Count(t), workers); err != nil {
						return fmt.Errorf("split %q: %w", name, err)
					}
				}
			}
			if err := writeSmallGzip(filepath.Join(sd, "nodetype-has-split.csv.gz"), header+strings.Join(has, ",")+"\n"); err != nil {
				return err
			}
		}
		return nil
	})
}

// pyBool spells a flag as pandas writes it.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// writeRelation writes relation r's m edges as type-local "src,dst" lines
// into rd, in relation-row order, chunked by destination nodes.
func writeRelation(rd string, d *HeteroDataset, r int, m int64, workers int) error {
	s := d.Schema
	if err := os.MkdirAll(rd, 0o755); err != nil {
		return err
	}
	if err := writeSmallGzip(filepath.Join(rd, "num-edge-list.csv.gz"), strconv.FormatInt(m, 10)+"\n"); err != nil {
		return err
	}
	R := int64(s.NumRels())
	st, dt := s.SrcType(r), s.DstType(r)
	sOff, dOff, n := s.NodeOrig[st], s.NodeOrig[dt], s.Count(dt)
	// Edges per chunk vary with degrees; 1<<16 destinations keep the text of
	// a chunk at a few MB for ogbn-mag-like degrees.
	const per = 1 << 16
	if d.InTime != nil {
		// edge_time.csv.gz, aligned with the lines written below.
		err := writeGzipChunks(filepath.Join(rd, "edge_time.csv.gz"), workers, chunksOf(n, per), func(c int, b []byte) []byte {
			for v := int64(c) * per; v < min(n, int64(c+1)*per); v++ {
				row := (dOff+v)*R + int64(r)
				for _, t := range d.InTime[d.In.Indptr[row]:d.In.Indptr[row+1]] {
					b = strconv.AppendInt(b, t, 10)
					b = append(b, '\n')
				}
			}
			return b
		})
		if err != nil {
			return err
		}
	}
	return writeGzipChunks(filepath.Join(rd, "edge.csv.gz"), workers, chunksOf(n, per), func(c int, b []byte) []byte {
		for v := int64(c) * per; v < min(n, int64(c+1)*per); v++ {
			for _, u := range d.In.Neighbors((dOff+v)*R + int64(r)) {
				b = strconv.AppendInt(b, u-sOff, 10)
				b = append(b, ',')
				b = strconv.AppendInt(b, v, 10)
				b = append(b, '\n')
			}
		}
		return b
	})
}
