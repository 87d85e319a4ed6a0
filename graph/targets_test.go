package graph

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadTargets reads multi-column and one-column real targets, with NaN
// for unlabelled values, and writes them back unchanged.
func TestReadTargets(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		labels string
		opt    string
		dim    int
		want   []float32
	}{
		{"two tasks, auto", "1,0\n0,nan\n1,1\n,0\n0,0\n", LabelsAuto, 2, []float32{1, 0, 0, nan, 1, 1, nan, 0, 0, 0}},
		{"one real column", "0.5\n-1.25\nNaN\n3\n1e-3\n", LabelsReal, 1, []float32{0.5, -1.25, nan, 3, 1e-3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := tinyFiles()
			files["raw/node-label.csv.gz"] = c.labels
			dir := writeTiny(t, files)
			d, err := ReadOGB(dir, ReadOptions{Labels: c.opt})
			require.NoError(t, err)
			require.NotNil(t, d.Targets)
			assert.Nil(t, d.Labels)
			assert.Zero(t, d.NumClasses)
			assert.Equal(t, c.dim, d.Targets.Dim)
			assertSameFloats(t, c.want, d.Targets.Data)

			out := filepath.Join(t.TempDir(), "w")
			require.NoError(t, WriteOGBFromDataset(out, d))
			back, err := ReadOGB(out, ReadOptions{Labels: LabelsReal})
			require.NoError(t, err)
			assertSameFloats(t, c.want, back.Targets.Data)
		})
	}
}

// assertSameFloats compares two float rows bit for bit (NaN equals NaN).
func assertSameFloats(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, math.Float32bits(want[i]) == math.Float32bits(got[i]) || (want[i] != want[i] && got[i] != got[i]), true, "value %d: want %v, got %v", i, want[i], got[i])
	}
}

// TestReadTargetsBadInput: each bad label file is one error naming the
// file and, where it has one, the line.
func TestReadTargetsBadInput(t *testing.T) {
	cases := []struct {
		name, labels, opt, want string
	}{
		{"ragged row", "1,0\n0\n1,1\n0,0\n0,0\n", LabelsAuto, "node-label.csv.gz line 2: 1 values, want 2 (the width of the first row)"},
		{"wide row", "1,0\n0,1,1\n1,1\n0,0\n0,0\n", LabelsAuto, "node-label.csv.gz line 2: 3 values, want 2"},
		{"not a number", "1,0\n0,x\n1,1\n0,0\n0,0\n", LabelsAuto, "node-label.csv.gz line 2: value 2:"},
		{"infinite", "1,0\n0,inf\n1,1\n0,0\n0,0\n", LabelsAuto, "node-label.csv.gz line 2: value 2: non-finite number"},
		{"too few rows", "1,0\n0,1\n", LabelsAuto, "node-label.csv.gz: 2 label rows, want one per node (5)"},
		{"classes asked, two columns", "1,0\n0,1\n1,1\n0,0\n0,0\n", LabelsClasses, "node-label.csv.gz line 1: label:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := tinyFiles()
			files["raw/node-label.csv.gz"] = c.labels
			_, err := ReadOGB(writeTiny(t, files), ReadOptions{Labels: c.opt})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := ReadOGB(writeTiny(t, tinyFiles()), ReadOptions{Labels: "bits"})
	assert.ErrorContains(t, err, `Labels "bits"`)
}

// TestSpeciesSplit: whole species go to one set, in order, and every node
// is in exactly one set.
func TestSpeciesSplit(t *testing.T) {
	sp, species, err := SpeciesSplit(1000, 8)
	require.NoError(t, err)
	assert.Len(t, sp.Train, 500)
	assert.Len(t, sp.Valid, 125)
	assert.Len(t, sp.Test, 375)
	set := map[int64]string{}
	for name, ids := range map[string][]int64{"train": sp.Train, "valid": sp.Valid, "test": sp.Test} {
		for _, v := range ids {
			require.NotContains(t, set, v)
			set[v] = name
		}
	}
	assert.Len(t, set, 1000)
	bySpecies := map[int64]string{}
	for v, s := range species {
		if name, ok := bySpecies[s]; ok {
			assert.Equal(t, name, set[int64(v)], "species %d is split", s)
		}
		bySpecies[s] = set[int64(v)]
	}
	_, _, err = SpeciesSplit(10, 2)
	assert.ErrorContains(t, err, "want 3 <= species <= nodes")
}

// TestPlantedTargets: the targets are a function of (seed, node, target)
// and the multi-label ones follow their classes.
func TestPlantedTargets(t *testing.T) {
	labels := make([]int32, 4000)
	for i := range labels {
		labels[i] = int32(i % 4)
	}
	a, err := PlantedTargets(labels, 4, TargetsMultilabel, 8, 1)
	require.NoError(t, err)
	b, err := PlantedTargets(labels, 4, TargetsMultilabel, 8, 1)
	require.NoError(t, err)
	assert.Equal(t, a.Data, b.Data)
	var own, other, nOwn, nOther float64
	for v, c := range labels {
		for j := range 8 {
			if j%4 == int(c) {
				own += float64(a.Data[v*8+j])
				nOwn++
			} else {
				other += float64(a.Data[v*8+j])
				nOther++
			}
		}
	}
	assert.InDelta(t, 0.8, own/nOwn, 0.03)
	assert.InDelta(t, 0.1, other/nOther, 0.03)
	_, err = PlantedTargets(labels, 4, "bits", 8, 1)
	assert.ErrorContains(t, err, `kind "bits"`)
}
