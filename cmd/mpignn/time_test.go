package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// TestGenPartitionTimeCLI: gen --edge-time --node-time, partition --time,
// inspect shows the time section; gen --hetero --edge-time too.
func TestGenPartitionTimeCLI(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "syn")
	require.NoError(t, runGen([]string{"--nodes", "600", "--avg-degree", "6", "--classes", "3", "--feat-dim", "4", "--seed", "5",
		"--edge-time", "--node-time", "--out", data}))
	for _, f := range []string{"edge_time.csv.gz", "node_time.csv.gz"} {
		assert.FileExists(t, filepath.Join(data, "raw", f))
	}
	out := filepath.Join(root, "parts")
	require.NoError(t, partitionCmd(io.Discard, []string{"--data", data, "--parts", "2", "--time", "--out", out}))
	m, err := partition.LoadMeta(out)
	require.NoError(t, err)
	require.NotNil(t, m.Time)
	assert.Equal(t, graph.TimeKindEdge, m.Time.Kind)
	assert.True(t, m.Time.NodeTime)
	var buf bytes.Buffer
	require.NoError(t, inspect(&buf, []string{out, "--verify"}))
	assert.Contains(t, buf.String(), "time: edge times in [")

	// Without --time: no time section, no time files.
	plain := filepath.Join(root, "plain")
	require.NoError(t, partitionCmd(io.Discard, []string{"--data", data, "--parts", "2", "--out", plain}))
	buf.Reset()
	require.NoError(t, inspect(&buf, []string{plain}))
	assert.NotContains(t, buf.String(), "time:")
	_, err = os.Stat(filepath.Join(plain, "part-0", "times.bin"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	hd := filepath.Join(root, "mag")
	require.NoError(t, runGen([]string{"--hetero", "--papers", "300", "--authors", "400", "--institutions", "10", "--fields", "30",
		"--cites", "2000", "--writes", "2500", "--affiliations", "400", "--topics", "2000",
		"--classes", "4", "--feat-dim", "4", "--seed", "2", "--edge-time", "--out", hd}))
	hout := filepath.Join(root, "magparts")
	require.NoError(t, partitionCmd(io.Discard, []string{"--data", hd, "--parts", "2", "--time", "--out", hout}))
	hm, err := partition.LoadMeta(hout)
	require.NoError(t, err)
	require.NotNil(t, hm.Time)
	assert.False(t, hm.Time.NodeTime)
}

// TestPartitionCoraUntimed: partitioning cora as before gives a META
// without a time section and exactly the untimed file set.
func TestPartitionCoraUntimed(t *testing.T) {
	cora := coraDir(t)
	out := filepath.Join(t.TempDir(), "cora2")
	// Dense features, so the file set is the one before sparse features
	// too (auto would store Cora's as CSR; TestPartitionSparseFeatures).
	require.NoError(t, partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--seed", "3", "--sparse-features", "off", "--out", out}))
	b, err := os.ReadFile(filepath.Join(out, partition.MetaFile))
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"time"`)
	var files []string
	for p := 0; p < 2; p++ {
		ents, err := os.ReadDir(filepath.Join(out, "part-"+string(rune('0'+p))))
		require.NoError(t, err)
		for _, e := range ents {
			files = append(files, e.Name())
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	assert.Equal(t, []string{"feat.bin", "halo.bin", "halo_orig.bin", "indices.bin", "indices_orig.bin", "indptr.bin", "labels.bin",
		"orig.bin", "split-full-test.bin", "split-full-train.bin", "split-full-valid.bin", "split-public-test.bin", "split-public-train.bin", "split-public-valid.bin"}, files)
	// --time on cora, which has no times: one error naming the files.
	err = partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--time", "--out", filepath.Join(t.TempDir(), "x")})
	require.ErrorContains(t, err, "edge_time.csv.gz")
}

func TestLinkGraphFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--link-graph", "all"}, "--link-graph needs --link-split"},
		{[]string{"--link-split", "time", "--link-graph", "all"}, "--link-graph all needs --time"},
		{[]string{"--link-split", "time", "--link-graph", "some", "--time"}, `--link-graph "some"`},
	} {
		_, err := parsePartition(append(tc.args, "--data", "d", "--out", "o", "--parts", "2"))
		require.ErrorContains(t, err, tc.want)
	}
	c, err := parsePartition([]string{"--link-split", "time", "--link-graph", "all", "--time", "--data", "d", "--out", "o", "--parts", "2"})
	require.NoError(t, err)
	assert.Equal(t, partition.LinkGraphAll, c.link.Graph)
}

// TestPartitionOnRootTimed: train --data's partitioning reads and stores
// times when asked, in a cache of its own.
func TestPartitionOnRootTimed(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "synth")
	s, err := graph.Generate(graph.GenOptions{Nodes: 200, AvgDegree: 6, Classes: 3, FeatDim: 4, Seed: 5, EdgeTime: true})
	require.NoError(t, err)
	require.NoError(t, graph.WriteSynthetic(data, s))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	out, err := os.CreateTemp(root, "log")
	require.NoError(t, err)
	defer out.Close()
	plain, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff}}, out)
	require.NoError(t, err)
	timed, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff, Time: true}}, out)
	require.NoError(t, err)
	assert.NotEqual(t, plain, timed)
	again, err := partition.CachedRaw(partition.CacheOptions{Data: data, Parts: 2, Options: partition.Options{Method: partition.MethodMetis, Seed: 1, SparseFeatures: partition.SparseOff, Time: true}}, out)
	require.NoError(t, err)
	assert.Equal(t, timed, again)
	m, err := partition.LoadMeta(timed)
	require.NoError(t, err)
	require.NotNil(t, m.Time)
	m, err = partition.LoadMeta(plain)
	require.NoError(t, err)
	assert.Nil(t, m.Time)
}

// TestPartitionSparseFeatures: the partition command's --sparse-features
// decides the feature files (auto: CSR for Cora's 1.3 %-dense features),
// and a bad value is one error naming the flag.
func TestPartitionSparseFeatures(t *testing.T) {
	cora := coraDir(t)
	for _, tc := range []struct {
		mode   string
		sparse bool
	}{{"auto", true}, {"on", true}, {"off", false}} {
		t.Run(tc.mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "cora")
			require.NoError(t, partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--sparse-features", tc.mode, "--out", out}))
			m, err := partition.LoadMeta(out)
			require.NoError(t, err)
			assert.Equal(t, tc.sparse, m.SparseFeat)
			_, errDense := os.Stat(filepath.Join(out, "part-0", "feat.bin"))
			_, errCSR := os.Stat(filepath.Join(out, "part-0", "feat_values.bin"))
			assert.Equal(t, tc.sparse, errDense != nil)
			assert.Equal(t, tc.sparse, errCSR == nil)
		})
	}
	err := partitionCmd(io.Discard, []string{"--data", cora, "--parts", "2", "--sparse-features", "maybe", "--out", filepath.Join(t.TempDir(), "x")})
	require.ErrorContains(t, err, "--sparse-features")
}
