package graph

import (
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
