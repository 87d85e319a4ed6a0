package graph

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadEdgeTargets reads edge labels by line of edge.csv.gz, as listed
// (the adjacency's reverses and deduplication do not reach them), as
// classes or real values, and writes them back unchanged.
func TestReadEdgeTargets(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name, labels, kind string
		dim, classes       int
		want               []float32
	}{
		{"classes, auto", "2\n0\nnan\n1\n0\n", LabelsAuto, 1, 3, []float32{2, 0, nan, 1, 0}},
		{"one real column", "0.5\n-1.25\nNaN\n3\n1e-3\n", LabelsReal, 1, 0, []float32{0.5, -1.25, nan, 3, 1e-3}},
		{"two columns, auto", "1,0\n0,nan\n1,1\n,0\n0,0.5\n", LabelsAuto, 2, 0, []float32{1, 0, 0, nan, 1, 1, nan, 0, 0, 0.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := tinyFiles()
			files["raw/"+EdgeLabelFile] = c.labels
			dir := writeTiny(t, files)
			o := UndirectedOptions()
			o.EdgeLabels, o.EdgeLabelKind = true, c.kind
			d, err := ReadOGB(dir, o)
			require.NoError(t, err)
			et := d.EdgeTargets
			require.NotNil(t, et)
			assert.Equal(t, []int64{0, 1, 2, 3, 0}, et.Src)
			assert.Equal(t, []int64{1, 2, 3, 4, 4}, et.Dst)
			assert.Equal(t, c.dim, et.Values.Dim)
			assert.Equal(t, c.classes, et.Classes)
			assertSameFloats(t, c.want, et.Values.Data)

			// Written back by line: the same rows.
			out := filepath.Join(t.TempDir(), "w")
			require.NoError(t, WriteOGB(out, d, et.Src, et.Dst))
			back, err := ReadOGB(out, o)
			require.NoError(t, err)
			assertSameFloats(t, c.want, back.EdgeTargets.Values.Data)
		})
	}
	// Without the option the file is not read.
	files := tinyFiles()
	files["raw/"+EdgeLabelFile] = "x\n"
	d, err := ReadOGB(writeTiny(t, files), UndirectedOptions())
	require.NoError(t, err)
	assert.Nil(t, d.EdgeTargets)
}

// TestReadEdgeTargetsBadInput: each bad edge-label file is one error
// naming the file and, where it has one, the line.
func TestReadEdgeTargetsBadInput(t *testing.T) {
	cases := []struct {
		name, labels, kind, want string
	}{
		{"ragged row", "1,0\n0\n1,1\n0,0\n0,0\n", LabelsAuto, "edge-label.csv.gz line 2: 1 values, want 2 (the width of the first row)"},
		{"too few rows", "1\n0\n", LabelsAuto, "edge-label.csv.gz: 2 label rows, want one per line of edge.csv.gz (5)"},
		{"too many rows", "1\n0\n1\n0\n1\n1\n", LabelsAuto, "edge-label.csv.gz line 6: more label rows than the 5 edge lines"},
		{"fractional class", "1\n0.5\n1\n0\n1\n", LabelsAuto, "edge-label.csv.gz line 2: class 0.5 is not an integer"},
		{"negative class", "1\n-1\n1\n0\n1\n", LabelsClasses, "edge-label.csv.gz line 2: class -1 is not an integer"},
		{"classes asked, two columns", "1,0\n0,1\n1,1\n0,0\n0,0\n", LabelsClasses, "edge-label.csv.gz: 2 columns, but edge classes are one integer per line"},
		{"not a number", "1\nx\n1\n0\n1\n", LabelsReal, "edge-label.csv.gz line 2: value 1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := tinyFiles()
			files["raw/"+EdgeLabelFile] = c.labels
			o := UndirectedOptions()
			o.EdgeLabels, o.EdgeLabelKind = true, c.kind
			_, err := ReadOGB(writeTiny(t, files), o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	o := UndirectedOptions()
	o.EdgeLabels = true
	_, err := ReadOGB(writeTiny(t, tinyFiles()), o)
	assert.ErrorContains(t, err, "missing file")
	assert.ErrorContains(t, err, EdgeLabelFile)
}

// TestPlantedEdgeTargets: labels are symmetric in the endpoints, follow
// the planted rule, and repeat for the same seed.
func TestPlantedEdgeTargets(t *testing.T) {
	src, dst := []int64{0, 1, 2, 3}, []int64{1, 0, 3, 2}
	labels := []int32{0, 1, 2, 2}
	et, err := PlantedEdgeTargets(src, dst, labels, 3, EdgeLabelsRegression, 2, 7)
	require.NoError(t, err)
	assert.Equal(t, et.Values.Row(0), et.Values.Row(1))
	assert.InDelta(t, 1.0/3, et.Values.Row(0)[0], 0.1+1e-6)
	assert.InDelta(t, 4.0/3+0.1, et.Values.Row(2)[1], 0.1+1e-6)
	again, err := PlantedEdgeTargets(src, dst, labels, 3, EdgeLabelsRegression, 2, 7)
	require.NoError(t, err)
	assert.Equal(t, et.Values.Data, again.Values.Data)
	cl, err := PlantedEdgeTargets(src, dst, labels, 3, EdgeLabelsClasses, 4, 7)
	require.NoError(t, err)
	assert.Equal(t, 4, cl.Classes)
	assert.Equal(t, cl.Values.Row(2), cl.Values.Row(3))
	_, err = PlantedEdgeTargets(src, dst, labels, 3, "bits", 2, 7)
	assert.ErrorContains(t, err, `kind "bits"`)
}

// TestConvertEdgeLabels: convert writes raw/edge-label.csv.gz as edge_data
// "label" chunks laid out as the edge chunks, which ReadEdgeLabels reads
// back as the rows ReadOGB reads: one column as int64 classes (-1 for an
// unlabelled line, NaN when read), several (or EdgeLabels real) as float32
// rows.
func TestConvertEdgeLabels(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name, text, kind string
		classes          bool
		want             [][]float32
	}{
		{"classes", "1\n0\nnan\n2\n\n0\n1\n", "", true, [][]float32{{1}, {0}, {nan}, {2}, {nan}, {0}, {1}}},
		{"real", "1,0.5\n0,nan\nnan,nan\n2,1\n3,3\n0,0\n1,-1\n", "", false, [][]float32{{1, 0.5}, {0, nan}, {nan, nan}, {2, 1}, {3, 3}, {0, 0}, {1, -1}}},
		{"real one column", "0.25\n0\nnan\n2\n1\n0\n1.5\n", LabelsReal, false, [][]float32{{0.25}, {0}, {nan}, {2}, {1}, {0}, {1.5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := graphFiles()
			files["raw/edge-label.csv.gz"] = tc.text
			out := filepath.Join(t.TempDir(), "c")
			require.NoError(t, ConvertToChunked(writeTiny(t, files), out, ConvertOptions{ChunkEdges: 3, EdgeLabels: tc.kind}))
			c, err := OpenChunked(out)
			require.NoError(t, err)
			require.True(t, c.HasEdgeData(HomoEdgeType, ChunkLabel))
			line := 0
			for k := range c.NumEdgeChunks(0) {
				f, classes, err := c.ReadEdgeLabels(0, k)
				require.NoError(t, err)
				assert.Equal(t, tc.classes, classes)
				for i := range f.NumRows() {
					assert.Equal(t, fmt.Sprint(tc.want[line]), fmt.Sprint(f.Row(i)), "chunk %d row %d", k, i)
					line++
				}
			}
			assert.Equal(t, 7, line)
		})
	}
}

// TestConvertEdgeLabelsBad: a bad edge label file, and edge_data "label"
// chunks of the wrong shape or class, are one line naming the file (and
// the line).
func TestConvertEdgeLabelsBad(t *testing.T) {
	for _, tc := range []struct{ text, kind, want string }{
		{"1\n0\n1\n", "", "edge-label.csv.gz: 3 edge label rows, want one per edge line (7)"},
		{"1\n0\n1\n0\n1\n0\n1\n1\n", "", "edge-label.csv.gz line 8: more edge label rows than the 7 edge lines"},
		{"1\n0\n0.5\n0\n1\n0\n1\n", "", "edge-label.csv.gz line 3: class 0.5 is not an integer in [0,2^24) (use --edge-labels real for a real value)"},
		{"1\n0\nx\n0\n1\n0\n1\n", "", "edge-label.csv.gz line 3: "},
		{"1,2\n0,1\n1,1\n0,1\n1,1\n0,1\n1,1\n", LabelsClasses, "edge-label.csv.gz: 2 columns, but edge classes are one integer per line"},
		{"1,2\n0,1\n1\n0,1\n1,1\n0,1\n1,1\n", "", "edge-label.csv.gz line 3: "},
	} {
		files := graphFiles()
		files["raw/edge-label.csv.gz"] = tc.text
		err := ConvertToChunked(writeTiny(t, files), filepath.Join(t.TempDir(), "c"), ConvertOptions{EdgeLabels: tc.kind})
		require.Error(t, err, tc.text)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), "\n")
	}
	err := ConvertToChunked(writeTiny(t, graphFiles()), filepath.Join(t.TempDir(), "c"), ConvertOptions{EdgeLabels: "bogus"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `EdgeLabels "bogus"`)

	files := graphFiles()
	files["raw/edge-label.csv.gz"] = "1\n0\n1\n0\n1\n0\n1\n"
	out := filepath.Join(t.TempDir(), "c")
	require.NoError(t, ConvertToChunked(writeTiny(t, files), out, ConvertOptions{ChunkEdges: 4}))
	c, err := OpenChunked(out)
	require.NoError(t, err)
	chunk := filepath.Join(out, c.Meta.EdgeData[HomoEdgeType][ChunkLabel].Data[0])
	for _, bad := range []struct {
		arr  any
		want string
	}{
		{[]int64{1, 0, 1}, chunk + ": shape [3], want (4,) classes or (4, K) real values (one row per edge of the chunk)"},
		{[][]float32{{1}, {2}, {3}}, chunk + ": shape [3 1], want (4,) classes"},
		{[]int64{1, 0, -2, 1}, chunk + ": edge 2: class -2 outside [-1,2^24)"},
	} {
		require.NoError(t, WriteNpy(chunk, bad.arr))
		_, _, err := c.ReadEdgeLabels(0, 0)
		require.Error(t, err)
		assert.Contains(t, err.Error(), bad.want)
		assert.NotContains(t, err.Error(), "\n")
	}
}
