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
