package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func coraDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("MPIGNN_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	dir := filepath.Join(root, "cora")
	if _, err := os.Stat(filepath.Join(dir, "raw")); err != nil {
		t.Skipf("cora not available (%v); set MPIGNN_DATA", err)
	}
	return dir
}

func TestPartitionInspectCLI(t *testing.T) {
	cora := coraDir(t)
	out := filepath.Join(t.TempDir(), "cora2")
	if err := partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--seed", "3", "--out", out}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := inspect(&buf, []string{out, "--json", "--verify"}); err != nil {
		t.Fatal(err)
	}
	var s struct {
		NumParts int     `json:"num_parts"`
		EdgeCut  float64 `json:"edge_cut"`
		Balance  float64 `json:"balance"`
		Parts    []struct {
			Nodes, Edges, HaloNodes, TrainNodes *int64
		} `json:"parts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &s); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, buf.String())
	}
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	for _, k := range []string{"num_parts", "edge_cut", "balance", "parts"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("inspect --json lacks key %q", k)
		}
	}
	part0 := raw["parts"].([]any)[0].(map[string]any)
	for _, k := range []string{"nodes", "edges", "halo_nodes", "train_nodes"} {
		if _, ok := part0[k]; !ok {
			t.Errorf("inspect --json parts[0] lacks key %q", k)
		}
	}
	if s.NumParts != 2 || s.EdgeCut <= 0 || s.EdgeCut > 0.3 || s.Balance < 1 || s.Balance > 1.05 {
		t.Errorf("cora 2 parts: num_parts %d, edge_cut %.4f, balance %.4f", s.NumParts, s.EdgeCut, s.Balance)
	}
	buf.Reset()
	if err := inspect(&buf, []string{out}); err != nil || !strings.Contains(buf.String(), "edge_cut") {
		t.Errorf("inspect text: %v\n%s", err, buf.String())
	}
}

func TestPartitionCLIBadInput(t *testing.T) {
	cora := coraDir(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero parts", []string{"--data", cora, "--parts", "0"}, "--parts 0"},
		{"too many parts", []string{"--data", cora, "--parts", "2709"}, "exceeds the number of nodes 2708"},
		{"bad method", []string{"--data", cora, "--parts", "2", "--method", "kl"}, `--method "kl"`},
		{"missing split", []string{"--data", cora, "--parts", "2", "--split", "nope"}, `split "nope" not found`},
		{"missing data", []string{"--data", filepath.Join(cora, "nope"), "--parts", "2"}, "missing directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			err := partitionCmd(io.Discard, append(tc.args, "--out", filepath.Join(root, "out")))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Errorf("failed run left %s behind", ents[0].Name())
			}
		})
	}
	if err := inspect(io.Discard, []string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "META.json is missing") {
		t.Errorf("inspect of a non-partition dir: %v", err)
	}
}
