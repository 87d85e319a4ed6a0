package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

func TestGenCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "syn")
	args := []string{"--nodes", "2000", "--avg-degree", "10", "--classes", "5", "--feat-dim", "8", "--seed", "3",
		"--train", "1000", "--valid", "200", "--test", "800", "--out", out}
	require.NoError(t, runGen(args))
	d, err := graph.ReadOGB(out, graph.UndirectedOptions())
	require.NoError(t, err)
	require.Equal(t, int64(2000), d.NumNodes)
	require.EqualValues(t, 2000*10, d.In.NumEdges())
	require.Equal(t, 8, d.Feat.Dim)
	require.Equal(t, 5, d.NumClasses)
	s := d.Splits[graph.GenSplitName]
	require.NotNil(t, s)
	require.Len(t, s.Train, 1000)
	require.Len(t, s.Valid, 200)
	require.Len(t, s.Test, 800)
	// Same flags again: refuse to overwrite, leave the data alone.
	require.ErrorContains(t, runGen(args), "not empty", "second run")
}

func TestGenCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"--nodes", "100"}, "--out"},
		{"counts and fractions", []string{"--train", "10", "--train-frac", "0.5", "--out", filepath.Join(dir, "a")}, "not both"},
		{"split too big", []string{"--nodes", "100", "--avg-degree", "4", "--classes", "2", "--train", "90", "--valid", "20", "--out", filepath.Join(dir, "b")}, "more than the 100 nodes"},
		{"bad flag", []string{"--nodez", "5"}, "nodez"},
		{"stray argument", []string{"--out", filepath.Join(dir, "c"), "extra"}, "unexpected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, runGen(tc.args), tc.want)
		})
	}
	ents, _ := os.ReadDir(dir)
	require.Empty(t, ents, "failed runs left files behind")
}

func TestGenHeteroCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mag")
	args := []string{"--hetero", "--papers", "3000", "--authors", "4000", "--institutions", "40", "--fields", "300",
		"--cites", "20000", "--writes", "25000", "--affiliations", "4000", "--topics", "30000",
		"--classes", "12", "--feat-dim", "8", "--seed", "2", "--out", out}
	require.NoError(t, runGen(args))
	require.FileExists(t, filepath.Join(out, "README.md"))
	d, err := graph.ReadOGBHetero(out, graph.DefaultHeteroReadOptions())
	require.NoError(t, err)
	s := d.Schema
	require.Equal(t, []string{"author", "field_of_study", "institution", "paper"}, s.NodeTypes)
	require.Equal(t, []int64{0, 4000, 4300, 4340, 7340}, s.NodeOrig)
	require.Equal(t, 7, s.NumRels(), "4 stored relations and 3 reverses")
	require.Equal(t, 8, d.Feat["paper"].Dim)
	require.Equal(t, 12, d.NumClasses["paper"])
	sp := d.Splits[graph.GenSplitName]["paper"]
	require.Equal(t, 3000, len(sp.Train)+len(sp.Valid)+len(sp.Test))
	stored, err := graph.ReadOGBHetero(out, graph.HeteroReadOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 20000+25000+4000+30000, stored.In.NumEdges())
	require.ErrorContains(t, runGen(args), "not empty", "second run")

	// --scale alone: a 1/1000 ogbn-mag.
	out2 := filepath.Join(t.TempDir(), "mag2")
	require.NoError(t, runGen([]string{"--hetero", "--scale", "0.002", "--classes", "20", "--out", out2}))
	d2, err := graph.ReadOGBHetero(out2, graph.HeteroReadOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(1473), d2.Schema.Count(3), "papers: 0.002 x 736,389")
	require.Equal(t, 128, d2.Feat["paper"].Dim, "ogbn-mag's feature dimension by default")
}

func TestGenHeteroCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"homogeneous flag", []string{"--hetero", "--nodes", "100", "--out", filepath.Join(dir, "a")}, "--nodes is for homogeneous graphs"},
		{"hetero flag without hetero", []string{"--papers", "100", "--out", filepath.Join(dir, "b")}, "--papers needs --hetero"},
		{"bad scale", []string{"--hetero", "--scale", "-1", "--out", filepath.Join(dir, "c")}, "--scale -1 must be positive"},
		{"negative count", []string{"--hetero", "--scale", "0.01", "--cites", "-5", "--out", filepath.Join(dir, "d")}, "counts must be positive"},
		{"too few papers", []string{"--hetero", "--scale", "0.01", "--papers", "100", "--out", filepath.Join(dir, "e")}, "too few for 349 classes"},
		{"too dense", []string{"--hetero", "--scale", "0.01", "--institutions", "2", "--out", filepath.Join(dir, "f")}, "affiliated_with edges"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, runGen(tc.args), tc.want)
		})
	}
	ents, _ := os.ReadDir(dir)
	require.Empty(t, ents, "failed runs left files behind")
}

// TestGenFlagDefaults: gen's flags start from the generator's defaults
// (graph.DefaultGenOptions, one source), leaving the split fractions zero
// so that counts and fractions can be told apart.
func TestGenFlagDefaults(t *testing.T) {
	g, err := parseGen([]string{"--out", "x"})
	require.NoError(t, err)
	want := graph.DefaultGenOptions()
	want.TrainFrac, want.ValidFrac = 0, 0
	require.Equal(t, want, g.o)
	require.NoError(t, g.check())
	g, err = parseGen([]string{"--out", "x", "--hetero", "--scale", "0.001", "--classes", "4"})
	require.NoError(t, err)
	require.NoError(t, g.check())
	require.Equal(t, 4, g.h.Classes, "a shared flag counts when given")
	require.Zero(t, g.h.FeatDim, "and is the heterogeneous default (graph.DefaultHeteroGenOptions) when not")
}
