package partition

import (
	"fmt"
	"path/filepath"
	"slices"

	"mpignn/graph"
)

// Time array files inside part-<p>/ (only in timed partitions).
const (
	fileTimes    = "times.bin"     // int64, edges: time of each stored in-edge, aligned with indices.bin
	fileNodeTime = "node_time.bin" // int64, owned: node time of each owned node (Time.NodeTime only)
)

// TimeMeta describes the times of a timed partition (Options.Time).
type TimeMeta struct {
	// Kind says what the edge times of times.bin are: graph.TimeKindEdge
	// (the dataset's edge times) or graph.TimeKindNode (each edge carries
	// its source's node time).
	Kind string `json:"kind"`
	// NodeTime: every part has node_time.bin.
	NodeTime bool `json:"node_time"`
	// Min and Max bound every stored time, edge and node (both 0 when
	// there is none).
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// timedSource is what a timed writer needs besides the adjacency: times
// aligned with the source's In.Indices and node times by original id.
type timedSource struct {
	in       []int64 // aligned with source.in.Indices
	node     []int64 // nil: no node times
	kind     string
	min, max int64
}

// newTimedSource checks the times of a dataset against its adjacency and
// returns the timed adjacency in canonical timed order (rows strictly
// ascending in (time, original id)) with the writer's view of the times.
// what names the dataset in errors.
func newTimedSource(what string, in *graph.CSR, inTime, nodeTime []int64, kind string, n int64, workers int) (*graph.CSR, *timedSource, error) {
	if inTime == nil {
		return nil, nil, fmt.Errorf("partition %s: times requested (--time) but the dataset has no edge or node times", what)
	}
	if int64(len(inTime)) != in.NumEdges() {
		return nil, nil, fmt.Errorf("partition %s: %d edge times for %d edges", what, len(inTime), in.NumEdges())
	}
	if nodeTime != nil && int64(len(nodeTime)) != n {
		return nil, nil, fmt.Errorf("partition %s: %d node times for %d nodes", what, len(nodeTime), n)
	}
	if kind != graph.TimeKindEdge && kind != graph.TimeKindNode {
		return nil, nil, fmt.Errorf("partition %s: time kind %q, want %q or %q", what, kind, graph.TimeKindEdge, graph.TimeKindNode)
	}
	if graph.CheckTimedRows(in, inTime, nil) != nil {
		in, inTime = canonicalTimed(in, inTime, workers)
	}
	ts := &timedSource{in: inTime, node: nodeTime, kind: kind}
	all := [][]int64{inTime, nodeTime}
	first := true
	for _, xs := range all {
		if len(xs) == 0 {
			continue
		}
		lo, hi := slices.Min(xs), slices.Max(xs)
		if first || lo < ts.min {
			ts.min = lo
		}
		if first || hi > ts.max {
			ts.max = hi
		}
		first = false
	}
	return in, ts, nil
}

// canonicalTimed sorts every row by (time, id) and drops exact repeats.
func canonicalTimed(in *graph.CSR, inTime []int64, workers int) (*graph.CSR, []int64) {
	n := in.NumRows()
	dst := make([]int64, in.NumEdges())
	for v := int64(0); v < n; v++ {
		for i := in.Indptr[v]; i < in.Indptr[v+1]; i++ {
			dst[i] = v
		}
	}
	return graph.BuildInCSRTimed(n, in.Indices, dst, inTime, graph.BuildOptions{Dedup: true, Workers: workers})
}

// meta returns the META entry of the times.
func (ts *timedSource) meta() *TimeMeta {
	return &TimeMeta{Kind: ts.kind, NodeTime: ts.node != nil, Min: ts.min, Max: ts.max}
}

// validateTime checks META's time entry; the file table check (partFiles)
// then makes times.bin and node_time.bin present exactly when it says so.
func (m *Meta) validateTime() error {
	t := m.Time
	if t == nil {
		return nil
	}
	if t.Kind != graph.TimeKindEdge && t.Kind != graph.TimeKindNode {
		return fmt.Errorf("time kind %q, want %q or %q", t.Kind, graph.TimeKindEdge, graph.TimeKindNode)
	}
	if t.Kind == graph.TimeKindNode && !t.NodeTime {
		return fmt.Errorf("time kind %q without node times", t.Kind)
	}
	if t.Min > t.Max {
		return fmt.Errorf("time range min %d > max %d", t.Min, t.Max)
	}
	return nil
}

// timeFiles lists part p's time files.
func (m *Meta) timeFiles(p int) []fileSpec {
	if m.Time == nil {
		return nil
	}
	fs := []fileSpec{{fileTimes, dtInt64, m.Parts[p].Edges}}
	if m.Time.NodeTime {
		fs = append(fs, fileSpec{fileNodeTime, dtInt64, m.Parts[p].Nodes})
	}
	return fs
}

// loadTime reads part p's time files and checks them (checkTime).
func (pt *Part) loadTime(dir string) error {
	m := pt.Meta
	if m.Time == nil {
		return nil
	}
	var err error
	if pt.Times, err = readPartArray[int64](dir, m, pt.ID, fileTimes); err != nil {
		return err
	}
	if m.Time.NodeTime {
		if pt.NodeTime, err = readPartArray[int64](dir, m, pt.ID, fileNodeTime); err != nil {
			return err
		}
	}
	return pt.checkTime(dir)
}

// checkTime checks the times of a part (or of a share of part p, whose
// files it names): times inside META's range, and every row strictly
// ascending in (time, original id), the order temporal sampling's binary
// search relies on.
func (pt *Part) checkTime(dir string) error {
	m := pt.Meta
	file := func(name string) string { return filepath.Join(dir, partDir(pt.ID), name) }
	if int64(len(pt.Times)) != int64(len(pt.Indices)) || (m.Time.NodeTime && int64(len(pt.NodeTime)) != pt.NumOwned()) {
		return fmt.Errorf("load %s: %d edge times for %d edges, %d node times for %d nodes", file(fileTimes), len(pt.Times), len(pt.Indices), len(pt.NodeTime), pt.NumOwned())
	}
	for _, xs := range []struct {
		name string
		ts   []int64
	}{{fileTimes, pt.Times}, {fileNodeTime, pt.NodeTime}} {
		for i, x := range xs.ts {
			if x < m.Time.Min || x > m.Time.Max {
				return fmt.Errorf("load %s: entry %d: time %d outside META's range [%d,%d]", file(xs.name), i, x, m.Time.Min, m.Time.Max)
			}
		}
	}
	rows := &graph.CSR{Indptr: pt.Indptr, Indices: pt.IndicesOrig}
	if err := graph.CheckTimedRows(rows, pt.Times, nil); err != nil {
		return fmt.Errorf("load %s: not in timed canonical order (ascending (time, original id), no repeats): %w", file(fileTimes), err)
	}
	return nil
}
