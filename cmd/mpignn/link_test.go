package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

func TestPartitionLinkFlagsBad(t *testing.T) {
	base := []string{"--data", "d", "--out", "o", "--parts", "2"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"fractions sum", []string{"--link-split", "random:0.9,0.1,0.1"}, "--link-split: link split \"random:0.9,0.1,0.1\": fractions sum to 1.1"},
		{"kind", []string{"--link-split", "edges"}, "--link-split"},
		{"negs", []string{"--link-split", "time", "--link-negs", "0"}, "--link-negs 0"},
		{"pool", []string{"--link-split", "time", "--link-pool", "-1"}, "--link-pool -1"},
		{"struct", []string{"--link-split", "time", "--struct-feats", "1"}, "--struct-feats 1"},
		{"node split", []string{"--link-split", "time", "--split", "public"}, "--split \"public\" names a node split"},
		{"negs without split", []string{"--link-negs", "5"}, "--link-negs needs --link-split"},
		{"struct without split", []string{"--struct-feats", "8"}, "--struct-feats needs --link-split"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsePartition(append(append([]string{}, base...), tc.args...))
			require.ErrorContains(t, err, tc.want)
		})
	}
	c, err := parsePartition(append(base, "--link-split", "random:0.85,0.05,0.10", "--link-negs", "50", "--link-valid-adj=false"))
	require.NoError(t, err)
	// An unset --link-pool is the library's 0 (DefaultPool, or the pool a
	// split stores), so that only a typed value contradicts stored ones.
	assert.Equal(t, &partition.LinkOptions{Split: "random:0.85,0.05,0.10", NegsPerPos: 50, NoValidAdj: true}, c.link)
}

func TestPartitionLinkCLI(t *testing.T) {
	cora := coraDir(t)
	out := filepath.Join(t.TempDir(), "cora-link")
	require.NoError(t, partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--seed", "1", "--out", out,
		"--link-split", "random:0.85,0.05,0.10", "--link-negs", "10", "--link-pool", "100"}))
	var buf bytes.Buffer
	require.NoError(t, inspect(&buf, []string{out, "--verify"}))
	assert.Contains(t, buf.String(), "link split random:0.85,0.05,0.10 (seed 1, undirected pairs, time false): train 4488, valid 263, test 527 edges; 10 negatives per valid/test edge, pools of 100")
	buf.Reset()
	require.NoError(t, inspect(&buf, []string{out, "--json"}))
	var s struct {
		Link  *partition.LinkMeta `json:"link"`
		Parts []struct {
			Link *partition.LinkCounts `json:"link"`
		} `json:"parts"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &s))
	require.NotNil(t, s.Link)
	assert.Equal(t, int64(4488), s.Link.Train)
	require.Len(t, s.Parts, 2)
	assert.Equal(t, int64(100), s.Parts[0].Link.ValidPool+s.Parts[1].Link.ValidPool)
}

func TestPartitionLinkMissingSplit(t *testing.T) {
	cora := coraDir(t)
	root := t.TempDir()
	err := partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--out", filepath.Join(root, "o"), "--link-split", "time"})
	require.ErrorContains(t, err, "missing directory "+filepath.Join(cora, "split", "time"))
	ents, _ := os.ReadDir(root)
	assert.Empty(t, ents, "failed run left files behind")
}

func TestPartitionBitcoinCLI(t *testing.T) {
	data := filepath.Join(filepath.Dir(coraDir(t)), "bitcoinalpha")
	if _, err := os.Stat(data); err != nil {
		t.Skipf("bitcoinalpha not available (%v)", err)
	}
	out := filepath.Join(t.TempDir(), "btc")
	var log bytes.Buffer
	require.NoError(t, partitionCmd(&log, []string{"--data", data, "--parts", "3", "--out", out, "--link-split", "time"}))
	assert.Contains(t, log.String(), "train 19339, valid 2419, test 2428 edges")
	assert.Contains(t, log.String(), "32 structural features")
	pt, err := partition.Load(out, 2)
	require.NoError(t, err)
	assert.Nil(t, pt.Labels)
	assert.Equal(t, 32, pt.Meta.FeatDim)
}

// TestDataCacheLinkKey: train --data's partition cache keys on the link
// options, so a different link split never reuses a partition.
func TestDataCacheLinkKey(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "synth")
	s, err := graph.Generate(graph.GenOptions{Nodes: 200, AvgDegree: 6, Classes: 3, FeatDim: 4, Seed: 5})
	require.NoError(t, err)
	require.NoError(t, graph.WriteSynthetic(data, s))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	var log bytes.Buffer
	out, err := os.CreateTemp(root, "log")
	require.NoError(t, err)
	defer out.Close()
	a := &partition.LinkOptions{Split: "random:0.8,0.1,0.1", Pool: 30}
	dirA, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff, Link: a}}, out)
	require.NoError(t, err)
	again, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff, Link: a}}, out)
	require.NoError(t, err)
	assert.Equal(t, dirA, again)
	dirB, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff, Link: &partition.LinkOptions{Split: "random:0.7,0.1,0.2", Pool: 30}}}, out)
	require.NoError(t, err)
	assert.NotEqual(t, dirA, dirB)
	dirN, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff}}, out)
	require.NoError(t, err)
	assert.NotEqual(t, dirA, dirN)
	b, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	log.Write(b)
	assert.Contains(t, log.String(), "partition: reusing "+dirA)
	m, err := partition.LoadMeta(dirA)
	require.NoError(t, err)
	assert.True(t, a.Matches(m.Link, 1))
}

// TestPartitionOGBStoredNegatives: partition --link-split time reads an
// OGB .pt split (citation2's layout, written by real PyTorch) and keeps its
// 3 negatives per valid/test edge; --link-negs contradicting them is one
// line naming the flag, and writes nothing.
func TestPartitionOGBStoredNegatives(t *testing.T) {
	const py = "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import torch (scripts/deps.sh installs python3-torch): no OGB .pt split to read")
	}
	data := filepath.Join(t.TempDir(), "ogbl-tiny")
	d := &graph.Dataset{NumNodes: 6, Labels: make([]int32, 6), Feat: &graph.Features{Dim: 2, Data: []float32{1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1}}}
	require.NoError(t, graph.WriteOGB(data, d, []int64{0, 1, 2, 3, 4, 5}, []int64{1, 2, 3, 4, 5, 0}))
	sd := filepath.Join(data, "split", "time")
	require.NoError(t, os.MkdirAll(sd, 0o755))
	script := fmt.Sprintf(`import torch
L = lambda x: torch.tensor(x, dtype=torch.long)
torch.save({'source_node': L([0, 1, 2, 3, 4, 5]), 'target_node': L([1, 2, 3, 4, 5, 0])}, %[1]q + '/train.pt')
torch.save({'source_node': L([0, 2]), 'target_node': L([3, 5]), 'target_node_neg': L([[1, 2, 4], [0, 1, 3]])}, %[1]q + '/valid.pt')
torch.save({'source_node': L([1]), 'target_node': L([4]), 'target_node_neg': L([[0, 2, 5]])}, %[1]q + '/test.pt')
`, sd)
	out, err := exec.Command(py, "-c", script).CombinedOutput()
	require.NoError(t, err, "python: %s", out)

	root := t.TempDir()
	err = partitionCmd(io.Discard, []string{"--data", data, "--parts", "2", "--out", filepath.Join(root, "bad"), "--link-split", "time", "--link-negs", "100"})
	require.Error(t, err)
	msg := flagNames(err).Error()
	assert.Contains(t, msg, "--link-negs 100: link split time stores its own 3 negatives per valid/test edge (OGB's), which are used as they are; leave --link-negs unset")
	assert.NotContains(t, msg, "\n")
	ents, _ := os.ReadDir(root)
	assert.Empty(t, ents, "a refused run left files behind")

	parts := filepath.Join(root, "parts")
	var log bytes.Buffer
	require.NoError(t, partitionCmd(&log, []string{"--data", data, "--parts", "2", "--out", parts, "--link-split", "time"}))
	assert.Contains(t, log.String(), "the split's own 3 negatives per valid/test edge")
	var negs [][]int64
	for p := range 2 {
		pt, err := partition.Load(parts, p)
		require.NoError(t, err)
		for i := range pt.Link.Test.Len() {
			negs = append(negs, pt.Link.TestNegOrig[i*3:(i+1)*3])
		}
	}
	assert.Equal(t, [][]int64{{0, 2, 5}}, negs, "the test positive's negatives are OGB's")
}
