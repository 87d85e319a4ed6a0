package graph

import (
	"fmt"
	"math"
	"path/filepath"

	"mpignn/internal/hashkey"
)

// EdgeLabelFile is the edge-label file of the OGB raw layout: one row per
// line of raw/edge.csv.gz, either one integer class or one or more real
// values (NaN or an empty field: unlabelled), as node-label.csv.gz is.
const EdgeLabelFile = "edge-label.csv.gz"

// EdgeTargets are the labels of a dataset's edges as its edge file lists
// them (ReadOptions.EdgeLabels). They are kept by line rather than with
// the adjacency because a label belongs to the (src, dst) pair as listed:
// the adjacency may have added reverses and dropped duplicates, and the
// link split (which holds labelled edges out) works on pairs.
type EdgeTargets struct {
	// Src and Dst are line i's endpoints (original ids), as listed.
	Src, Dst []int64
	// Values holds line i's row: Dim real values, or (Classes > 0) one
	// class as a float (an integer in [0, Classes)). NaN is unlabelled.
	Values *Features
	// Classes is the class count of class labels (max label + 1); 0 for
	// real values.
	Classes int
}

// Len returns the number of labelled lines.
func (e *EdgeTargets) Len() int { return len(e.Src) }

// readEdgeTargets reads raw/EdgeLabelFile for the m lines of edge.csv.gz
// (src, dst as read, not yet built into the adjacency) as kind:
// LabelsClasses, LabelsReal, or LabelsAuto (one column: classes; several:
// real values).
func readEdgeTargets(raw string, src, dst []int64, kind string, workers int) (*EdgeTargets, error) {
	path := filepath.Join(raw, EdgeLabelFile)
	m := int64(len(src))
	if err := checkPlausibleCount(path, "num-edge-list.csv.gz", m, 1); err != nil {
		return nil, err
	}
	vals, err := readTargetRows(path, m, "edge lines", "line of edge.csv.gz", workers)
	if err != nil {
		return nil, err
	}
	et := &EdgeTargets{Src: src, Dst: dst, Values: vals}
	classes := kind == LabelsClasses || (kind == LabelsAuto && vals.Dim == 1)
	if !classes {
		return et, nil
	}
	if vals.Dim != 1 {
		return nil, fmt.Errorf("%s: %d columns, but edge classes are one integer per line (use --edge-labels real for real values)", path, vals.Dim)
	}
	for i, v := range vals.Data {
		if v != v {
			continue
		}
		if !isEdgeClass(v) {
			return nil, fmt.Errorf("%s line %d: class %v is not an integer in [0,2^24) (use --edge-labels real for a real value)", path, i+1, v)
		}
		et.Classes = max(et.Classes, int(v)+1)
	}
	if et.Classes == 0 {
		return nil, fmt.Errorf("%s: no labelled edge", path)
	}
	return et, nil
}

// Kinds of planted edge labels (PlantedEdgeTargets).
const (
	EdgeLabelsClasses    = "classes"
	EdgeLabelsRegression = "regression"
)

// tagEdgeTargets keys the planted edge labels' hashes apart from every
// other use.
const tagEdgeTargets = 0x6564676574617267 // "edgetarg"

// PlantedEdgeTargets derives labels for the edge lines (src[i], dst[i])
// from the planted classes of their endpoints, as a learnable edge-task
// data set. Every value is a function of (seed, unordered pair, column),
// so both listed directions of a pair get the same label and the same
// seed gives the same labels.
//
// Classes (kind EdgeLabelsClasses, k classes): (c_u + c_v) mod k with
// probability 0.9, else a uniform class. Regression (k values): value t is
// (c_u + c_v)/classes + 0.1·t plus uniform noise in [-0.1, 0.1). Both are
// symmetric in the endpoints, as the edge decoder is.
func PlantedEdgeTargets(src, dst []int64, labels []int32, classes int, kind string, k int, seed uint64) (*EdgeTargets, error) {
	if k < 1 || classes < 1 || len(src) != len(dst) {
		return nil, fmt.Errorf("planted edge labels: %s:%d over %d classes, %d sources for %d destinations", kind, k, classes, len(src), len(dst))
	}
	n := int64(len(labels))
	dim := k
	if kind == EdgeLabelsClasses {
		dim = 1
	} else if kind != EdgeLabelsRegression {
		return nil, fmt.Errorf("planted edge labels: kind %q: want %s or %s", kind, EdgeLabelsClasses, EdgeLabelsRegression)
	}
	et := &EdgeTargets{Src: src, Dst: dst, Values: &Features{Dim: dim, Data: make([]float32, len(src)*dim)}}
	if kind == EdgeLabelsClasses {
		et.Classes = k
	}
	for i := range src {
		u, v := src[i], dst[i]
		if u < 0 || u >= n || v < 0 || v >= n {
			return nil, fmt.Errorf("planted edge labels: edge %d (%d,%d) outside [0,%d)", i, u, v, n)
		}
		a, b := min(u, v), max(u, v)
		cu, cv := int(labels[u]), int(labels[v])
		row := et.Values.Row(int64(i))
		if kind == EdgeLabelsClasses {
			h := hashkey.Hash64(tagEdgeTargets, seed, uint64(a), uint64(b), 0)
			c := (cu + cv) % k
			if hashkey.Float64From(h) >= 0.9 {
				c = int(hashkey.Hash64(tagEdgeTargets, seed, uint64(a), uint64(b), 1) % uint64(k))
			}
			row[0] = float32(c)
			continue
		}
		for t := range k {
			u := hashkey.Float64From(hashkey.Hash64(tagEdgeTargets, seed, uint64(a), uint64(b), uint64(t)))
			row[t] = float32(float64(cu+cv)/float64(classes) + 0.1*float64(t) + 0.2*u - 0.1)
		}
	}
	return et, nil
}

// isEdgeClass reports whether v is an edge class: an integer in [0,2^24),
// which float32 holds exactly.
func isEdgeClass(v float32) bool {
	return v >= 0 && v == float32(math.Trunc(float64(v))) && v < 1<<24
}
