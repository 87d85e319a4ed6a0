package graph

import (
	"bytes"
	"fmt"
	"math"

	"mpignn/internal/hashkey"
)

// Kinds of node labels ReadOptions.Labels asks for.
const (
	// LabelsAuto reads raw/node-label.csv.gz as class labels when its first
	// row has one column, and as real targets when it has several (the
	// multi-task layout of ogbn-proteins: one column per task).
	LabelsAuto = ""
	// LabelsClasses reads one integer class per node (Dataset.Labels).
	LabelsClasses = "classes"
	// LabelsReal reads one or more real targets per node (Dataset.Targets):
	// binary tasks or regression targets, NaN where a node is unlabelled.
	LabelsReal = "real"
)

// readTargets reads a node-label file of real targets: one row per node,
// every row as wide as the first. A field "nan" (any case, as pandas
// writes a missing value) or an empty field is NaN, which marks that
// node's target as unlabelled; any other field must be a finite number.
func readTargets(path string, n int64, workers int) (*Features, error) {
	return readTargetRows(path, n, "nodes", "node", workers)
}

// readTargetRows reads n rows of real targets from path (readTargets'
// format); units and unit name what a row stands for in the messages
// ("nodes", "node"; "edge lines", "line of edge.csv.gz").
func readTargetRows(path string, n int64, units, unit string, workers int) (*Features, error) {
	dim, err := featureDim(path)
	if err != nil {
		return nil, err
	}
	if n > 0 && int64(dim) > (1<<62)/n {
		return nil, fmt.Errorf("%s: %d x %d targets do not fit in memory", path, n, dim)
	}
	t := &Features{Dim: dim, Data: make([]float32, n*int64(dim))}
	lines, err := scanGzip(path, workers, func(c *textChunk) error {
		return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if idx >= n {
				return &lineError{path, idx + 1, fmt.Errorf("more label rows than the %d %s", n, units)}
			}
			if err := parseTargetLine(line, t.Row(idx)); err != nil {
				return &lineError{path, idx + 1, err}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if lines != n {
		return nil, fmt.Errorf("%s: %d label rows, want one per %s (%d)", path, lines, unit, n)
	}
	return t, nil
}

// parseTargetLine parses one row of real targets into out, which fixes
// the row's width: a ragged row is an error that says both widths.
func parseTargetLine(line []byte, out []float32) error {
	k := 0
	for field := range bytes.SplitSeq(line, []byte{','}) {
		if k == len(out) {
			return fmt.Errorf("%d values, want %d (the width of the first row)", countFields(line), len(out))
		}
		if len(field) == 0 || bytes.EqualFold(field, []byte("nan")) {
			out[k] = float32(math.NaN())
		} else {
			v, err := parseFloat32(field)
			if err != nil {
				return fmt.Errorf("value %d: %w", k+1, err)
			}
			out[k] = v
		}
		k++
	}
	if k != len(out) {
		return fmt.Errorf("%d values, want %d (the width of the first row)", k, len(out))
	}
	return nil
}

// CheckTargets validates real targets against n nodes: n rows of at least
// one column, every value finite or NaN (unlabelled).
func CheckTargets(t *Features, n int64) error {
	if t == nil {
		return nil
	}
	if t.Dim < 1 || int64(len(t.Data)) != n*int64(t.Dim) {
		return fmt.Errorf("targets hold %d values, want nodes %d x width %d (width >= 1)", len(t.Data), n, t.Dim)
	}
	for i, v := range t.Data {
		if math.IsInf(float64(v), 0) {
			return fmt.Errorf("node %d: target %d is infinite", int64(i)/int64(t.Dim), i%t.Dim)
		}
	}
	return nil
}

// PlantedTargets derives k real targets per node from planted classes
// (the generator's communities), as a learnable multi-label or regression
// data set: every value is a function of (seed, node, target), so the same
// seed gives the same targets.
//
// Multilabel (kind TargetsMultilabel): target t of a node of class c is 1
// with probability 0.8 when t ≡ c (mod classes) and 0.1 otherwise, so
// every task is a noisy union of communities, as ogbn-proteins' functions
// are shared by related proteins. Regression: target t is c/classes +
// 0.1·t plus uniform noise in [-0.1, 0.1).
func PlantedTargets(labels []int32, classes int, kind string, k int, seed uint64) (*Features, error) {
	if k < 1 || classes < 1 {
		return nil, fmt.Errorf("planted targets: %d targets of %d classes", k, classes)
	}
	t := &Features{Dim: k, Data: make([]float32, len(labels)*k)}
	for v, c := range labels {
		for j := range k {
			u := hashkey.Float64From(hashkey.Hash64(tagTargets, seed, uint64(v), uint64(j)))
			x := &t.Data[v*k+j]
			switch kind {
			case TargetsMultilabel:
				p := 0.1
				if j%classes == int(c) {
					p = 0.8
				}
				if u < p {
					*x = 1
				}
			case TargetsRegression:
				*x = float32(float64(c)/float64(classes) + 0.1*float64(j) + 0.2*u - 0.1)
			default:
				return nil, fmt.Errorf("planted targets: kind %q: want %s or %s", kind, TargetsMultilabel, TargetsRegression)
			}
		}
	}
	return t, nil
}

// Kinds of planted targets (PlantedTargets), named as the tasks that
// learn them.
const (
	TargetsMultilabel = "multilabel"
	TargetsRegression = "regression"
)

// tagTargets keys the planted targets' hashes apart from every other use.
const tagTargets = 0x7461726765747331 // "targets1"

// SpeciesSplitName is the split directory of SpeciesSplit, as ogbn-proteins
// names its split by species.
const SpeciesSplitName = "species"

// SpeciesSplit groups n nodes into s species of consecutive ids (node v is
// of species v·s/n) and holds whole species out, as ogbn-proteins' split
// does: the first 60% of the species (at least one) train, the next 20%
// (at least one when s >= 3) validate, the rest test. It returns the split
// and every node's species.
func SpeciesSplit(n int64, s int) (*Split, []int64, error) {
	if s < 3 || int64(s) > n {
		return nil, nil, fmt.Errorf("species split: %d species of %d nodes: want 3 <= species <= nodes", s, n)
	}
	trainS := max(1, s*6/10)
	validS := max(1, s*2/10)
	if trainS+validS >= s {
		trainS = s - validS - 1
	}
	sp := &Split{Train: []int64{}, Valid: []int64{}, Test: []int64{}}
	species := make([]int64, n)
	for v := range n {
		k := v * int64(s) / n
		species[v] = k
		switch {
		case k < int64(trainS):
			sp.Train = append(sp.Train, v)
		case k < int64(trainS+validS):
			sp.Valid = append(sp.Valid, v)
		default:
			sp.Test = append(sp.Test, v)
		}
	}
	return sp, species, nil
}
