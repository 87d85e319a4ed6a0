package graph

import (
	"fmt"
	"path/filepath"
)

// heteroTimes collects what a timed heterogeneous read needs: node times by
// homogenized id and, per stored relation, its events.
type heteroTimes struct {
	node    []int64     // nil: no type has node times
	hasNode []bool      // per node type of the schema
	events  []relEvents // per stored relation, in stored order
}

// relEvents are one stored relation's edge lines with their times.
type relEvents struct {
	src, dst, t []int64 // type-local ids; t aligned with the lines
	fromNode    bool    // t are the source nodes' times (no edge_time.csv.gz)
}

// readHeteroNodeTimes reads the node times of every type that has
// raw/node_time/<type>/node_time.csv.gz or raw/node_year/<type>/node_year.csv.gz.
func readHeteroNodeTimes(raw string, s *Schema, workers int) (*heteroTimes, error) {
	ht := &heteroTimes{hasNode: make([]bool, s.NumTypes())}
	for t, typ := range s.NodeTypes {
		for _, base := range []string{"node_time", "node_year"} {
			p := filepath.Join(raw, base, typ, base+".csv.gz")
			if !fileExists(p) {
				continue
			}
			xs, err := readIntColumn(p, s.Count(t), "node of type "+typ, workers)
			if err != nil {
				return nil, err
			}
			if ht.node == nil {
				ht.node = make([]int64, s.NumNodes())
			}
			copy(ht.node[s.NodeOrig[t]:], xs)
			ht.hasNode[t] = true
			break
		}
	}
	return ht, nil
}

// readTimedRelation reads one stored relation's edge lines and their times:
// edge_time.csv.gz beside edge.csv.gz, else the source nodes' times.
func readTimedRelation(raw string, rel Relation, s *Schema, ht *heteroTimes, workers int) (relEvents, error) {
	rd := filepath.Join(raw, "relations", rel.String())
	countPath := filepath.Join(rd, "num-edge-list.csv.gz")
	m, err := readSingleNumber(countPath)
	if err != nil {
		return relEvents{}, err
	}
	if m < 0 {
		return relEvents{}, fmt.Errorf("%s line 1: edge count %d is negative", countPath, m)
	}
	edgePath := filepath.Join(rd, "edge.csv.gz")
	if err := checkPlausibleCount(edgePath, "num-edge-list.csv.gz", m, 3); err != nil {
		return relEvents{}, err
	}
	st, dt := s.TypeIndex(rel.Src), s.TypeIndex(rel.Dst)
	ev := relEvents{src: make([]int64, m), dst: make([]int64, m)}
	err = readEdgeLines(edgePath, s.Count(st), s.Count(dt), m, workers, func(idx, u, v int64) {
		ev.src[idx], ev.dst[idx] = u, v
	})
	if err != nil {
		return relEvents{}, err
	}
	timePath := filepath.Join(rd, "edge_time.csv.gz")
	if fileExists(timePath) {
		ev.t, err = readIntColumn(timePath, m, "edge of edge.csv.gz", workers)
		return ev, err
	}
	if !ht.hasNode[st] {
		return relEvents{}, fmt.Errorf("relation %s: times requested but it has no %s and its source type %q has no node times (%s or %s)",
			rel, timePath, rel.Src, filepath.Join(raw, "node_time", rel.Src, "node_time.csv.gz"), filepath.Join(raw, "node_year", rel.Src, "node_year.csv.gz"))
	}
	ev.fromNode = true
	ev.t = make([]int64, m)
	off := s.NodeOrig[st]
	for i, u := range ev.src {
		ev.t[i] = ht.node[off+u]
	}
	return ev, nil
}

// build makes the timed relation-row in-adjacency (row v*R+r) of the
// events, adding reverse relations and symmetrized self relations as
// ReadOGBHetero does for untimed reads. A reversed edge keeps the edge's
// time; with node times it takes its new source's time, as every edge of a
// node-timed relation carries its source's time.
func (ht *heteroTimes) build(s *Schema, stored []Relation, opt HeteroReadOptions, noRev map[string]bool) (*CSR, []int64, string, error) {
	R := int64(s.NumRels())
	var total int64
	for _, ev := range ht.events {
		total += 2 * int64(len(ev.src))
	}
	src, row, tm := make([]int64, 0, total), make([]int64, 0, total), make([]int64, 0, total)
	kind := TimeKindNode
	for i, rel := range stored {
		ev := ht.events[i]
		rf := int64(s.RelIndex(rel.String()))
		st, dt := s.TypeIndex(rel.Src), s.TypeIndex(rel.Dst)
		sOff, dOff := s.NodeOrig[st], s.NodeOrig[dt]
		if !ev.fromNode {
			kind = TimeKindEdge
		}
		for k := range ev.src {
			src, row, tm = append(src, sOff+ev.src[k]), append(row, (dOff+ev.dst[k])*R+rf), append(tm, ev.t[k])
		}
		rev := int64(-1)
		switch {
		case !opt.Reverse || noRev[rel.String()]:
		case rel.Src == rel.Dst:
			rev = rf // symmetrized in place
		default:
			rev = int64(s.RelIndex(rel.Reverse().String()))
		}
		if rev < 0 {
			continue
		}
		if ev.fromNode && !ht.hasNode[dt] {
			return nil, nil, "", fmt.Errorf("relation %s: its times are its source nodes' times, but its reverse's source type %q has no node times", rel, rel.Dst)
		}
		for k := range ev.src {
			t := ev.t[k]
			if ev.fromNode {
				t = ht.node[dOff+ev.dst[k]]
			}
			src, row, tm = append(src, dOff+ev.dst[k]), append(row, (sOff+ev.src[k])*R+rev), append(tm, t)
		}
	}
	g, times := BuildInCSRTimed(s.NumNodes()*R, src, row, tm, BuildOptions{Dedup: true, Workers: opt.Workers})
	return g, times, kind, nil
}
