package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonLines reads a file of JSON objects, one a line (metrics files, bench
// --out files).
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	return out
}

// figures reads a metrics file without its timings (the only fields that
// may differ between an interrupted and an uninterrupted run).
func figures(t *testing.T, path string) []map[string]any {
	t.Helper()
	out := jsonLines(t, path)
	for _, m := range out {
		for k := range m {
			if strings.HasSuffix(k, "_s") {
				delete(m, k)
			}
		}
	}
	return out
}

var stoppedRe = regexp.MustCompile(`stopped on request after step (\d+) `)

// TestPreemptCheckpointResume signals a running train job at a certain
// step (rank 0 holds right after the step's optimizer update until the
// signal has arrived), expects every rank to stop after the next step with
// a checkpoint and exit code 75, and resumes it with `--resume auto` and
// no model flags (they come from the checkpoint): the final weights (and
// learnable embeddings) and every metrics line equal an uninterrupted
// run's. Cases cover 1 and 2 ranks, the first and last step of an epoch,
// SIGTERM to one rank, link prediction and learnable embeddings.
func TestPreemptCheckpointResume(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	node := gen.get(t)
	het := heteroGraph.getHetero(t)
	link := linkParts(t, bin, filepath.Join(node.dir, "data"), 2)
	nodeArgs := []string{"--fanout", "5,5", "--hidden", "16", "--seed", "4", "--dropout", "0.3"}
	// steps is the number of steps of an epoch of the node runs on 2
	// ranks (3000 nodes, the generator's random split), found by the
	// first case, which stops after the first step of epoch 2.
	steps := 0
	tests := []struct {
		name   string
		ranks  int
		parts  string
		args   []string
		point  func() string // hold point on rank 0
		sig    syscall.Signal
		toRank bool // signal rank 0 itself instead of mpirun
		emb    bool
	}{
		{"first step of epoch 2", 2, node.parts[2], nodeArgs, func() string { return "train-epoch:1" }, syscall.SIGUSR1, false, false},
		{"one rank", 1, node.parts[1], nodeArgs, func() string { return "train-step:2" }, syscall.SIGUSR1, false, false},
		{"last step of epoch 1", 2, node.parts[2], nodeArgs, func() string { return "train-step:" + strconv.Itoa(steps-1) }, syscall.SIGUSR1, false, false},
		{"SIGTERM to rank 0", 2, node.parts[2], nodeArgs, func() string { return "train-step:3" }, syscall.SIGTERM, true, false},
		{"link", 2, link, []string{"--task", "link", "--fanout", "5,5", "--batch", "128", "--hidden", "16", "--seed", "4", "--neg-ratio", "2"},
			func() string { return "train-step:2" }, syscall.SIGUSR1, false, false},
		{"learnable embeddings", 2, het.parts[2], []string{"--batch", "12", "--fanout", "5,5", "--hidden", "16", "--embed-dim", "8", "--seed", "2"},
			func() string { return "train-step:5" }, syscall.SIGUSR1, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			run := func(extra ...string) []string {
				return append([]string{bin, "train", "--parts", tc.parts, "--epochs", "2", "--quiet"}, extra...)
			}
			// The uninterrupted run.
			ref := h.MPI(Job{Ranks: tc.ranks, Args: run(append(tc.args, "--metrics", filepath.Join(work, "ref.jsonl"))...), Timeout: 3 * time.Minute})
			require.NoError(t, ref.Err, tail(ref.Output, 20))

			ck, m := filepath.Join(work, "ck"), filepath.Join(work, "m.jsonl")
			point := tc.point()
			// --resume auto starts fresh: there is no checkpoint yet.
			j := startHeldMPI(t, point, 0, tc.ranks, run(append(tc.args, "--checkpoint", ck, "--metrics", m, "--resume", "auto")...)...)
			pid := j.await(t)
			target := j.cmd.Process.Pid // mpirun forwards SIGUSR1 to every rank
			if tc.toRank {
				target = pid
			}
			require.NoError(t, syscall.Kill(target, tc.sig))
			// The rank holding has certainly got the signal before it goes on.
			j.waitLine(t, "rank 0: "+map[syscall.Signal]string{syscall.SIGUSR1: "SIGUSR1", syscall.SIGTERM: "SIGTERM"}[tc.sig]+" received")
			j.release(t)
			require.Equal(t, 75, j.wait(t, 3*time.Minute), "exit code of a stop with checkpoint:\n%s", tail(j.output(), 20))
			sm := stoppedRe.FindStringSubmatch(j.output())
			require.NotNil(t, sm, tail(j.output(), 20))
			stopped, _ := strconv.Atoi(sm[1])
			held, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(point, "train-step:"), "train-epoch:"))
			switch {
			case strings.HasPrefix(point, "train-epoch:"):
				require.Positive(t, stopped)
				steps = stopped - 1 // held after epoch 1's last step
			default:
				assert.Equal(t, held+1, stopped, "all ranks stop after the step following the signal")
			}
			assert.NotContains(t, j.output(), "final:")
			assert.Contains(t, j.output(), "no checkpoint in "+ck+": starting a fresh run (--resume auto)")

			res := h.MPI(Job{Ranks: tc.ranks, Args: run("--checkpoint", ck, "--metrics", m, "--resume", "auto"), Timeout: 3 * time.Minute})
			require.NoError(t, res.Err, tail(res.Output, 20))
			assert.Contains(t, res.Output, "resume: settings from the checkpoint:")
			assert.Contains(t, res.Output, "(step "+strconv.Itoa(stopped)+")")
			if tc.name == "last step of epoch 1" {
				// Checkpointed at once, before the epoch's evaluation.
				assert.Contains(t, res.Output, "in epoch 1 after its step "+strconv.Itoa(steps)+" ")
			}
			if tc.emb {
				want, got := finalEmbRe.FindStringSubmatch(ref.Stdout), finalEmbRe.FindStringSubmatch(res.Stdout)
				require.NotNil(t, want, tail(ref.Output, 5))
				require.NotNil(t, got, tail(res.Output, 5))
				assert.Equal(t, want[1:], got[1:], "weights and embeddings")
			} else {
				want, got := finalWeights.FindStringSubmatch(ref.Stdout), finalWeights.FindStringSubmatch(res.Stdout)
				require.NotNil(t, want, tail(ref.Output, 5))
				require.NotNil(t, got, tail(res.Output, 5))
				assert.Equal(t, want[1], got[1], "final weights")
			}
			assert.Equal(t, figures(t, filepath.Join(work, "ref.jsonl")), figures(t, m), "metrics lines")
			if tc.name == "one rank" {
				// Explicit flags that contradict the checkpoint are
				// refused by name; --epochs may grow.
				bad := h.MPI(Job{Ranks: 1, Args: run("--checkpoint", ck, "--resume", "--epochs", "3", "--hidden", "32", "--fanout", "4,4"), Timeout: time.Minute})
				require.Error(t, bad.Err, tail(bad.Output, 10))
				assert.Contains(t, bad.Output, "--hidden was 16, now 32")
				assert.Contains(t, bad.Output, "--fanout was 5,5, now 4,4")
				assert.NotContains(t, bad.Output, "goroutine ")
			}
		})
	}
}

// TestSignalWithoutCheckpoint: without --checkpoint there is nothing to
// save, so SIGUSR1 is reported and training goes on to its normal end.
func TestSignalWithoutCheckpoint(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g := gen.get(t)
	args := []string{bin, "train", "--parts", g.parts[2], "--fanout", "5,5", "--hidden", "16", "--seed", "4", "--epochs", "2", "--quiet"}
	ref := h.MPI(Job{Ranks: 2, Args: args, Timeout: 3 * time.Minute})
	require.NoError(t, ref.Err, tail(ref.Output, 20))
	j := startHeldMPI(t, "train-step:3", 0, 2, args...)
	j.await(t)
	require.NoError(t, j.cmd.Process.Signal(syscall.SIGUSR1))
	j.waitLine(t, "rank 0: SIGUSR1 received; no --checkpoint to write, training goes on")
	j.release(t)
	require.Equal(t, 0, j.wait(t, 3*time.Minute), tail(j.output(), 20))
	want, got := finalWeights.FindStringSubmatch(ref.Stdout), finalWeights.FindStringSubmatch(j.output())
	require.NotNil(t, want)
	require.NotNil(t, got, tail(j.output(), 10))
	assert.Equal(t, want[1], got[1])
}
