package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mpignn/graph"
)

func TestGenCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "syn")
	args := []string{"--nodes", "2000", "--avg-degree", "10", "--classes", "5", "--feat-dim", "8", "--seed", "3",
		"--train", "1000", "--valid", "200", "--test", "800", "--out", out}
	if err := runGen(args); err != nil {
		t.Fatal(err)
	}
	d, err := graph.ReadOGB(out, graph.UndirectedOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := d.Splits[graph.GenSplitName]
	if d.NumNodes != 2000 || d.In.NumEdges() != 2000*10 || d.Feat.Dim != 8 || d.NumClasses != 5 ||
		s == nil || len(s.Train) != 1000 || len(s.Valid) != 200 || len(s.Test) != 800 {
		t.Fatalf("read back %d nodes, %d edges, dim %d, %d classes, split %+v", d.NumNodes, d.In.NumEdges(), d.Feat.Dim, d.NumClasses, s)
	}
	// Same flags again: refuse to overwrite, leave the data alone.
	if err := runGen(args); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("second run: err = %v, want a refusal", err)
	}
}

func TestGenCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
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
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runGen(c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed runs left %v", ents)
	}
}
