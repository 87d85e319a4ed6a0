package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/internal/tempout"
)

// genChunkedArgs is a small chunked graph: 6 node chunks and 9 edge
// chunks (the last of each short), so every rank count 1..4 splits them
// differently.
func genChunkedArgs(out string) []string {
	return []string{"gen", "--format", "chunked", "--nodes", "4000", "--avg-degree", "6", "--classes", "4", "--feat-dim", "8",
		"--seed", "5", "--chunk-nodes", "700", "--chunk-edges", "2701", "--out", out}
}

// TestGenChunked: `gen --format chunked` writes the same bytes without
// mpirun and on every rank count; the result opens as a chunked dataset,
// partitions with all ranks and trains to well above chance.
func TestGenChunked(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	single := filepath.Join(dir, "single")
	res, err := exec.Command(bin, genChunkedArgs(single)...).CombinedOutput()
	require.NoError(t, err, "%s", res)
	require.Contains(t, string(res), "on 1 ranks")
	files := treeFiles(t, single)
	require.Len(t, files, 2+5*6+9, "metadata.json, README.md, 5 keys x 6 node chunks, 9 edge chunks: %v", files)
	for _, n := range h.Ranks {
		out := filepath.Join(dir, "np"+strconv.Itoa(n))
		r := h.MPI(Job{Ranks: n, Args: append([]string{bin}, genChunkedArgs(out)...), Timeout: 2 * time.Minute})
		require.NoError(t, r.Err, "np=%d:\n%s", n, tail(r.Output, 20))
		require.Contains(t, r.Output, "on "+strconv.Itoa(n)+" ranks")
		require.ElementsMatch(t, files, treeFiles(t, out), "np=%d", n)
		for _, f := range files {
			a, _ := os.ReadFile(filepath.Join(single, f))
			b, err := os.ReadFile(filepath.Join(out, f))
			require.NoError(t, err)
			require.True(t, bytes.Equal(a, b), "np=%d: %s differs from the single-process output", n, f)
		}
	}

	c, err := graph.OpenChunked(single)
	require.NoError(t, err)
	require.Equal(t, []int64{4000}, c.Counts)
	require.Equal(t, []string{graph.GenSplitName}, c.SplitNames(graph.HomoNodeType))

	parts := filepath.Join(dir, "parts")
	r := h.MPI(Job{Ranks: 3, Args: []string{bin, "partition", "--data", single, "--parts", "3", "--method", "random", "--out", parts}, Timeout: 2 * time.Minute})
	require.NoError(t, r.Err, "partition:\n%s", tail(r.Output, 20))
	res, err = exec.Command(bin, "inspect", parts, "--verify").CombinedOutput()
	require.NoError(t, err, "inspect --verify:\n%s", tail(string(res), 10))

	r = h.MPI(Job{Ranks: 2, Args: []string{bin, "train", "--data", single, "--method", "random", "--epochs", "3", "--fanout", "5,5",
		"--batch", "128", "--hidden", "16", "--seed", "1"}, Timeout: 3 * time.Minute})
	require.NoError(t, r.Err, "train --data:\n%s", tail(r.Output, 20))
	m := regexp.MustCompile(`final: .* test_acc=([0-9.]+)`).FindStringSubmatch(r.Output)
	require.NotNil(t, m, "no final line:\n%s", tail(r.Output, 20))
	acc, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.6, "4 planted classes (chance 0.25..0.4): the GNN should learn them")
}

// TestGenChunkedHetero: the ogbn-mag-shaped graph, too, is the same on
// every rank count and without mpirun, and partitions and trains.
func TestGenChunkedHetero(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"gen", "--format", "chunked", "--hetero", "--scale", "0.005", "--classes", "8", "--feat-dim", "16", "--seed", "3",
			"--chunk-nodes", "1500", "--chunk-edges", "9000", "--out", out}
	}
	single := filepath.Join(dir, "single")
	res, err := exec.Command(bin, args(single)...).CombinedOutput()
	require.NoError(t, err, "%s", res)
	files := treeFiles(t, single)
	for _, n := range h.Ranks {
		out := filepath.Join(dir, "np"+strconv.Itoa(n))
		r := h.MPI(Job{Ranks: n, Args: append([]string{bin}, args(out)...), Timeout: 2 * time.Minute})
		require.NoError(t, r.Err, "np=%d:\n%s", n, tail(r.Output, 20))
		require.ElementsMatch(t, files, treeFiles(t, out), "np=%d", n)
		for _, f := range files {
			a, _ := os.ReadFile(filepath.Join(single, f))
			b, err := os.ReadFile(filepath.Join(out, f))
			require.NoError(t, err)
			require.True(t, bytes.Equal(a, b), "np=%d: %s differs from the single-process output", n, f)
		}
	}
	c, err := graph.OpenChunked(single)
	require.NoError(t, err)
	require.Len(t, c.Meta.EdgeType, 4)

	r := h.MPI(Job{Ranks: 2, Args: []string{bin, "train", "--data", single, "--method", "random", "--epochs", "3", "--fanout", "5,5",
		"--batch", "128", "--hidden", "16", "--seed", "1"}, Timeout: 3 * time.Minute})
	require.NoError(t, r.Err, "train --data:\n%s", tail(r.Output, 20))
	m := regexp.MustCompile(`final: .* test_acc=([0-9.]+)`).FindStringSubmatch(r.Output)
	require.NotNil(t, m, "no final line:\n%s", tail(r.Output, 20))
	acc, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.Greater(t, acc, 0.3, "8 planted communities: the GNN should learn them")
}

// TestGenChunkedBadFlags: each mistake is one line from one rank, exit
// status non-zero, no output directory.
func TestGenChunkedBadFlags(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	out := filepath.Join(dir, "g")
	nonEmpty := filepath.Join(dir, "full")
	require.NoError(t, os.MkdirAll(nonEmpty, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644))
	aFile := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(aFile, []byte("keep"), 0o644))
	base := []string{"gen", "--nodes", "1000", "--classes", "4", "--feat-dim", "4"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"format", []string{"--format", "parquet", "--out", out}, `--format "parquet": want ogb or chunked`},
		{"chunk flag without chunked", []string{"--chunk-nodes", "10", "--out", out}, "--chunk-nodes needs --format chunked"},
		{"chunk size", []string{"--format", "chunked", "--chunk-edges", "0", "--out", out}, "--chunk-nodes 1048576 and --chunk-edges 0 must be positive"},
		{"hetero nodes", []string{"--format", "chunked", "--hetero", "--out", out}, "--nodes is for homogeneous graphs"},
		{"too few nodes", []string{"--format", "chunked", "--nodes", "5", "--out", out}, "5 nodes are too few for 4 classes"},
		{"out not empty", []string{"--format", "chunked", "--out", nonEmpty}, nonEmpty + " exists and is not empty"},
		{"no out", []string{"--format", "chunked"}, "--out DIR is required"},
		{"out is a file", []string{"--format", "chunked", "--out", aFile}, "write " + aFile + ": open " + aFile + ": not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.MPI(Job{Ranks: 2, Args: append(append([]string{bin}, base...), tc.args...), Timeout: time.Minute})
			require.Error(t, r.Err, "%s", r.Output)
			assert.Equal(t, 1, strings.Count(r.Output, tc.want), "want the message once:\n%s", r.Output)
			assert.NotContains(t, r.Output, "goroutine ")
			assert.NoDirExists(t, out)
		})
	}
	b, err := os.ReadFile(aFile)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
}

// TestGenChunkedFailure: a rank that cannot write its chunk ends the whole
// job within seconds with its cause, and no --out is left; SIGINT to mpirun
// while rank 0 holds its temporary removes it.
func TestGenChunkedFailure(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	out := filepath.Join(dir, "g")
	args := append([]string{bin}, genChunkedArgs(out)...)

	t.Run("rank fails", func(t *testing.T) {
		// Rank 2 of 3 holds before writing; a directory where its first
		// edge chunk goes makes that write fail on rank 2 alone.
		p := startHeldMPI(t, "gen-chunks", 2, 3, args...)
		p.await(t)
		tmps := temps(t, out)
		require.Len(t, tmps, 1)
		// 6 node chunks then 9 edge chunks dealt round-robin: rank 2 gets
		// jobs 2, 5 (node chunks) and 8, 11, 14 (edge chunks 2, 5, 8).
		lo := 2
		bad := filepath.Join(dir, tmps[0], graph.EdgeChunkFile(graph.HomoEdgeType, lo))
		require.NoError(t, os.Mkdir(bad, 0o755))
		t0 := time.Now()
		p.release(t)
		code := p.wait(t, time.Minute)
		msg := p.output()
		assert.NotEqual(t, 0, code, "%s", tail(msg, 20))
		assert.Less(t, time.Since(t0), 20*time.Second, "the job took long to end")
		assert.Contains(t, msg, "[rank 2/3] fatal: rank 2: edge chunk "+strconv.Itoa(lo)+": write chunk: open "+bad+": is a directory")
		assert.NoDirExists(t, out)
	})
	t.Run("sigint", func(t *testing.T) {
		p := startHeldMPI(t, "temp:"+filepath.Base(out), 0, 2, args...)
		pid := p.await(t)
		require.DirExists(t, tempout.Name(out, pid))
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
		code := p.wait(t, 30*time.Second)
		msg := p.output()
		assert.NotEqual(t, 0, code, "%s", tail(msg, 10))
		// mpirun forwards the SIGINT to the ranks as SIGTERM.
		assert.Contains(t, msg, "mpignn gen: interrupted by SIG")
		assert.Empty(t, temps(t, out))
		assert.NoDirExists(t, out)
	})
	// A rerun completes (and removes what the failed run's killed ranks
	// may have left).
	r := h.MPI(Job{Ranks: 2, Args: args, Timeout: 2 * time.Minute})
	require.NoError(t, r.Err, "%s", tail(r.Output, 20))
	assert.Empty(t, temps(t, out))
	assert.FileExists(t, filepath.Join(out, graph.ChunkedMetaFile))
}

// TestPartitionChunkedInterrupted: SIGTERM to the launcher of a
// distributed partition while rank 0 holds with its temporary output
// created (the other ranks write their parts into it meanwhile) ends the
// job non-zero with nothing left beside --out, under either MPI; a rerun
// completes.
func TestPartitionChunkedInterrupted(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	data := filepath.Join(dir, "g")
	r := h.MPI(Job{Ranks: 2, Args: append([]string{bin}, genChunkedArgs(data)...), Timeout: 2 * time.Minute})
	require.NoError(t, r.Err, "%s", tail(r.Output, 20))
	out := filepath.Join(dir, "parts")
	args := []string{bin, "partition", "--data", data, "--parts", "2", "--method", "random", "--seed", "4", "--out", out}

	p := startHeldMPI(t, "temp:parts", 0, 2, args...)
	pid := p.await(t)
	require.DirExists(t, tempout.Name(out, pid))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	code := p.wait(t, 30*time.Second)
	msg := p.output()
	assert.NotEqual(t, 0, code, "%s", tail(msg, 10))
	assert.Contains(t, msg, "mpignn partition: interrupted by SIGTERM")
	assert.Empty(t, temps(t, out), "%s", tail(msg, 10))
	assert.NoDirExists(t, out)

	r = h.MPI(Job{Ranks: 2, Args: args, Timeout: 2 * time.Minute})
	require.NoError(t, r.Err, "%s", tail(r.Output, 20))
	assert.Empty(t, temps(t, out))
	assert.FileExists(t, filepath.Join(out, "META.json"))
}

// TestPartitionMLInterruptedInMetis: SIGTERM or SIGINT to the launcher of
// `partition --method ml` while rank 0 partitions the coarsest graph with
// METIS (held in the test hold "metis", which METIS's process runs
// through) ends the job with the command's one line, no crash, and nothing
// left beside --out. METIS used to trap SIGTERM in the rank itself: a
// signal then ended the ranks with SIGSEGV and "panic during panic".
func TestPartitionMLInterruptedInMetis(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	data := filepath.Join(dir, "g")
	r := h.MPI(Job{Ranks: 2, Args: append([]string{bin}, genChunkedArgs(data)...), Timeout: 2 * time.Minute})
	require.NoError(t, r.Err, "%s", tail(r.Output, 20))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(dir, "parts-"+strconv.Itoa(int(sig)))
			args := []string{bin, "partition", "--data", data, "--parts", "2", "--method", "ml", "--seed", "4", "--out", out}
			p := startHeldMPI(t, "metis", 0, 2, args...)
			p.await(t)
			require.NoError(t, p.cmd.Process.Signal(sig))
			code := p.wait(t, 30*time.Second)
			msg := p.output()
			assert.NotEqual(t, 0, code, "%s", tail(msg, 10))
			// mpirun forwards SIGINT to the ranks as SIGTERM.
			assert.Contains(t, msg, "mpignn partition: interrupted by SIG")
			for _, bad := range []string{"SIGSEGV", "panic", "goroutine ", "METIS"} {
				assert.NotContains(t, msg, bad, "%s", tail(msg, 20))
			}
			assert.Empty(t, temps(t, out), "%s", tail(msg, 10))
			assert.NoDirExists(t, out)
		})
	}
}
