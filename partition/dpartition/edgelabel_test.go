package dpartition

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// writeLineEdgeLabels writes src's raw/edge-label.csv.gz with a row per
// line of edge.csv.gz that differs between the lines of one pair (gen
// lists a pair in both directions), so that which line's label a positive
// keeps shows in the output: real (dim columns, line i's i + j/8) or one
// class ((i*7) mod 5). Every eleventh line is unlabelled.
func writeLineEdgeLabels(src string, dim int, real bool) error {
	b, err := os.ReadFile(filepath.Join(src, "raw", "num-edge-list.csv.gz"))
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(strings.NewReader(string(b)))
	if err != nil {
		return err
	}
	var lines int64
	if _, err := fmt.Fscan(zr, &lines); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(src, "raw", graph.EdgeLabelFile))
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	for i := range lines {
		var row []string
		for j := range dim {
			switch {
			case i%11 == 3:
				row = append(row, "nan")
			case real:
				row = append(row, fmt.Sprint(float32(i)+float32(j)/8))
			default:
				row = append(row, fmt.Sprint(i*7%5))
			}
		}
		fmt.Fprintln(zw, strings.Join(row, ","))
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestEdgeLabelsMatchSingleProcess: with a random link split, the
// distributed partition of a chunked dataset with edge_data "label"
// (convert of raw/edge-label.csv.gz) is byte-identical to partition.Write
// of the raw dataset read with its edge labels: every positive has the
// label of the first line listing its pair in either direction, and META
// the same edge_target_dim and edge_classes, for classes, real values,
// one real column (convert and partition --edge-labels real), classes
// read as real values (partition --edge-labels real only), integers
// converted as one real column read as classes, and with node features
// from edges beside them.
func TestEdgeLabelsMatchSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	for _, tc := range []struct {
		name        string
		dim         int
		real        bool
		convertKind string
		kind        string
		nodeFeat    string
	}{
		{"classes", 1, false, "", "", ""},
		{"real", 3, true, "", "", ""},
		{"real-one-column", 1, true, graph.LabelsReal, graph.LabelsReal, ""},
		{"classes-as-real", 1, false, "", graph.LabelsReal, ""},
		{"real-column-as-classes", 1, false, graph.LabelsReal, graph.LabelsClasses, ""},
		{"classes-nf", 1, false, "", graph.LabelsClasses, graph.FromEdgesSum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, chunked := filepath.Join(dir, "g-"+tc.name), filepath.Join(dir, "chunked-"+tc.name)
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			link := partition.LinkOptions{Split: "random:0.7,0.2,0.1", NegsPerPos: 3, Pool: 50, EdgeLabels: tc.kind}
			var err error
			if c.Rank() == 0 {
				err = func() error {
					syn, err := graph.Generate(graph.GenOptions{Nodes: 347, AvgDegree: 6, Classes: 3, FeatDim: 4, EdgeFeatDim: 2,
						NoNodeFeat: tc.nodeFeat != "", Seed: 4, Workers: 1})
					if err != nil {
						return err
					}
					if err := graph.WriteSynthetic(src, syn); err != nil {
						return err
					}
					if err := writeLineEdgeLabels(src, tc.dim, tc.real); err != nil {
						return err
					}
					if err := graph.ConvertToChunked(src, chunked, graph.ConvertOptions{ChunkNodes: 40, ChunkEdges: 230, EdgeLabels: tc.convertKind}); err != nil {
						return err
					}
					lo := link
					ro := lo.ReadOptions(graph.UndirectedOptions())
					ro.Workers, ro.EdgeLabels, ro.EdgeLabelKind, ro.NodeFeatFromEdges = 1, true, tc.kind, tc.nodeFeat
					d, err := graph.ReadOGB(src, ro)
					if err != nil {
						return err
					}
					_, err = partition.Write(single, d, partition.Random(d.NumNodes, P, 5), P, partition.Options{
						Method: partition.MethodRandom, Seed: 5, Undirected: true, Workers: 1, Link: &lo, NodeFeat: tc.nodeFeat,
					})
					return err
				}()
			}
			agree(t, c, err)
			lo := link
			_, err = Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: partition.MethodRandom, Seed: 5, Undirected: true, Link: &lo,
				NodeFeat: tc.nodeFeat, Workers: 1, RoundIDs: 29, RoundEdges: 90,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				err = sameTree(single, dist)
				if err == nil {
					err = checkLinkTargets(dist, tc.dim, tc.kind == "" && !tc.real || tc.kind == graph.LabelsClasses)
				}
			}
			agree(t, c, err)
		})
	}
}

// checkLinkTargets checks that the partition in dir has edge labels at
// all: the byte comparison alone would pass if neither side had them.
func checkLinkTargets(dir string, dim int, classes bool) error {
	m, err := partition.LoadMeta(dir)
	if err != nil {
		return err
	}
	switch l := m.Link; {
	case l == nil || l.EdgeTargetDim != dim:
		return fmt.Errorf("%s: link edge_target_dim not %d", dir, dim)
	case classes != (l.EdgeClasses == 5):
		return fmt.Errorf("%s: edge_classes %d (classes %v)", dir, l.EdgeClasses, classes)
	}
	pt, err := partition.Load(dir, 0)
	if err != nil {
		return err
	}
	if e := pt.Link.Positives("test"); len(e.Targets) != e.Len()*dim || e.Len() == 0 {
		return fmt.Errorf("%s: %d test targets for %d positives", dir, len(e.Targets), e.Len())
	}
	return nil
}

// TestEdgeLabelsBad: edge labels the single-process partitioner would
// refuse, or chunks of the wrong shape, are one-line errors on every rank
// naming the dataset or the chunk.
func TestEdgeLabelsBad(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	src, chunked := filepath.Join(dir, "g"), filepath.Join(dir, "chunked")
	var labelFiles []string
	var err error
	if c.Rank() == 0 {
		err = func() error {
			syn, err := graph.Generate(graph.GenOptions{Nodes: 120, AvgDegree: 4, Classes: 3, FeatDim: 4, Seed: 4, Workers: 1})
			if err != nil {
				return err
			}
			if err := graph.WriteSynthetic(src, syn); err != nil {
				return err
			}
			if err := writeLineEdgeLabels(src, 2, true); err != nil {
				return err
			}
			return graph.ConvertToChunked(src, chunked, graph.ConvertOptions{ChunkNodes: 40, ChunkEdges: 100})
		}()
	}
	agree(t, c, err)
	ch, err := graph.OpenChunked(chunked)
	require.NoError(t, err)
	labelFiles = ch.Meta.EdgeData[graph.HomoEdgeType][graph.ChunkLabel].Data
	run := func(kind string) error {
		require.NoError(t, c.Barrier())
		out := filepath.Join(dir, fmt.Sprintf("out-%d", len(kind)))
		_, err := Run(c, Options{Data: chunked, Out: out, Parts: P, Method: partition.MethodRandom, Seed: 5, Undirected: true,
			Link: &partition.LinkOptions{Split: "random:0.8,0.1,0.1", EdgeLabels: kind}, Workers: 1, Overwrite: true})
		return err
	}
	// Real values of two columns read as classes (every rank reads such
	// chunks: there are more than 3).
	err = run(graph.LabelsClasses)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 columns, but edge classes are one integer per line")
	assert.NotContains(t, err.Error(), "\n")

	// A chunk of the wrong row count, and one of the wrong shape.
	first := filepath.Join(chunked, labelFiles[0])
	for _, bad := range []struct {
		arr  any
		want string
	}{
		{[][]float32{{1, 2}, {3, 4}}, first + ": shape [2 2], want (100,) classes or (100, K) real values"},
		{make([]int64, 100), "edge labels are classes (1-D integer chunks) in some chunks, real values (2-D float chunks) in others"},
	} {
		err = nil
		if c.Rank() == 0 {
			err = graph.WriteNpy(first, bad.arr)
		}
		agree(t, c, err)
		err = run("")
		require.Error(t, err) // on every rank: none is left waiting
		assert.NotContains(t, err.Error(), "\n")
		if c.Rank() == 0 { // which reads chunk 0
			assert.Contains(t, err.Error(), bad.want)
		}
	}
}
