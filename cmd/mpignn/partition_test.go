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

	"mpignn/partition"
	"mpignn/partition/dpartition"
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

// TestChunkedMethod: the methods of a chunked dataset, and one error naming
// the flag and the choices for any other.
func TestChunkedMethod(t *testing.T) {
	for _, tc := range []struct {
		method, assignment string
		set                bool
		want, err          string
	}{
		{method: "lp", set: true, want: dpartition.MethodLP},
		{method: "ml", set: true, want: dpartition.MethodML},
		{method: "random", set: true, want: partition.MethodRandom},
		{method: "lpx", set: true, err: `--method "lpx": want parmetis, lp, ml, random or --assignment DIR for a chunked dataset`},
		{method: "lp", set: true, assignment: "a", err: "--assignment DIR gives the assignment; leave out --method"},
		// A method the user names is honoured or refused, never swapped
		// (issue 34): metis, typed, is refused rather than run as PT-Scotch.
		{method: "metis", set: true, err: "--method metis: METIS needs the whole graph in one process, and a chunked dataset is partitioned by all ranks; use --method parmetis (PT-Scotch, the default here), lp, ml or random, or partition the OGB layout"},
		{method: "metis", set: false, want: map[bool]string{true: dpartition.MethodParMetis, false: partition.MethodRandom}[dpartition.ParMetisAvailable]},
		{method: "parmetis", set: true, want: dpartition.MethodParMetis, err: map[bool]string{true: "", false: "--method parmetis: PT-Scotch is not available in this build"}[dpartition.ParMetisAvailable]},
	} {
		got, err := chunkedMethod(tc.method, tc.set, tc.assignment)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}
