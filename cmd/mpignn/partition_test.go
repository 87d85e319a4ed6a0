package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--seed", "3", "--out", out}))
	var buf bytes.Buffer
	require.NoError(t, inspect(&buf, []string{out, "--json", "--verify"}))
	var s struct {
		NumParts int     `json:"num_parts"`
		EdgeCut  float64 `json:"edge_cut"`
		Balance  float64 `json:"balance"`
		Parts    []struct {
			Nodes, Edges, HaloNodes, TrainNodes *int64
		} `json:"parts"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &s), "inspect --json:\n%s", buf.String())
	var raw map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &raw))
	for _, k := range []string{"num_parts", "edge_cut", "balance", "parts"} {
		assert.Contains(t, raw, k, "inspect --json lacks a key")
	}
	part0 := raw["parts"].([]any)[0].(map[string]any)
	for _, k := range []string{"nodes", "edges", "halo_nodes", "train_nodes"} {
		assert.Contains(t, part0, k, "inspect --json parts[0] lacks a key")
	}
	assert.Equal(t, 2, s.NumParts, "cora 2 parts: num_parts")
	assert.Greater(t, s.EdgeCut, 0.0, "cora 2 parts: edge_cut")
	assert.LessOrEqual(t, s.EdgeCut, 0.3, "cora 2 parts: edge_cut")
	assert.GreaterOrEqual(t, s.Balance, 1.0, "cora 2 parts: balance")
	assert.LessOrEqual(t, s.Balance, 1.05, "cora 2 parts: balance")
	buf.Reset()
	if assert.NoError(t, inspect(&buf, []string{out}), "inspect text") {
		assert.Contains(t, buf.String(), "edge_cut", "inspect text")
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
		{"no parts", []string{"--data", cora, "--out", "x"}, "--parts P is required: the number of partitions, one per rank"},
		{"too many parts", []string{"--data", cora, "--parts", "2709"}, "exceeds the number of nodes 2708"},
		{"bad method", []string{"--data", cora, "--parts", "2", "--method", "kl"}, `--method "kl"`},
		{"missing split", []string{"--data", cora, "--parts", "2", "--split", "nope"}, `split "nope" not found`},
		{"missing data", []string{"--data", filepath.Join(cora, "nope"), "--parts", "2"}, "missing directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			err := partitionCmd(io.Discard, append(tc.args, "--out", filepath.Join(root, "out")))
			require.ErrorContains(t, err, tc.want)
			ents, _ := os.ReadDir(root)
			assert.Empty(t, ents, "failed run left files behind")
		})
	}
	assert.ErrorContains(t, inspect(io.Discard, []string{t.TempDir()}), "META.json is missing", "inspect of a non-partition dir")
}
