package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliGraph generates (once per test process) a small synthetic dataset and
// its METIS partitions into 1..4 parts with the real binary, as a user would.
type cliGraph struct {
	once  sync.Once
	err   error
	dir   string
	parts map[int]string
	// partArgs are extra `mpignn partition` flags (for example --time).
	partArgs []string
}

var gen cliGraph

func (g *cliGraph) get(t *testing.T) *cliGraph {
	return g.prepare(t, "cli-graph", func(run func(args ...string) error) error {
		// 3,000 nodes: big enough for several hops across partitions and
		// for the hot cache, small enough to take about a second.
		return run("gen", "--nodes", "3000", "--avg-degree", "8", "--classes", "5", "--feat-dim", "16",
			"--seed", "3", "--out", filepath.Join(g.dir, "data"))
	})
}

// prepare makes the graph once per test process: gen (given the way to run
// the real binary) into h.Bin/name/data, then METIS partitions into 1..4
// parts beside it.
func (g *cliGraph) prepare(t *testing.T, name string, gen func(run func(args ...string) error) error) *cliGraph {
	t.Helper()
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	g.once.Do(func() {
		g.dir = filepath.Join(h.Bin, name)
		run := func(args ...string) error {
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("mpignn %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			return nil
		}
		if g.err = gen(run); g.err != nil {
			return
		}
		g.parts = map[int]string{}
		for p := 1; p <= 4; p++ {
			out := filepath.Join(g.dir, fmt.Sprintf("parts-%d", p))
			// --seed 0: the partitioner's default before issue 24, which
			// the golden files were recorded with.
			args := append([]string{"partition", "--data", filepath.Join(g.dir, "data"), "--parts", strconv.Itoa(p), "--seed", "0", "--out", out}, g.partArgs...)
			if g.err = run(args...); g.err != nil {
				return
			}
			g.parts[p] = out
		}
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return g
}

// TestSampleCLIIdentical: `mpignn sample` prints byte-identical blocks for
// 1..4 ranks and both transports (and over TCP, where auto must fall back to
// Alltoallv under OpenMPI), with fanouts that include -1 (all neighbours).
func TestSampleCLIIdentical(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	type run struct {
		ranks     int
		transport string
		mpiArgs   []string
	}
	var runs []run
	for _, p := range []int{1, 2, 3, 4} {
		for _, tr := range []string{"rma", "alltoallv"} {
			runs = append(runs, run{p, tr, nil})
		}
	}
	if os.Getenv("MPIGNN_MPI") != "mpich" {
		runs = append(runs, run{3, "auto", []string{"--mca", "btl", "self,tcp", "--mca", "osc", "rdma"}})
	}
	for _, fan := range []string{"10,5", "4,-1,3"} {
		var want string
		for i, r := range runs {
			name := fmt.Sprintf("fanout=%s/np=%d/%s", fan, r.ranks, r.transport)
			if r.mpiArgs != nil {
				name += "/tcp"
			}
			t.Run(name, func(t *testing.T) {
				res := h.MPI(Job{Ranks: r.ranks, MPIArgs: r.mpiArgs, Timeout: 2 * time.Minute, Args: []string{
					bin, "sample", "--parts", g.parts[r.ranks], "--seeds", "0,17,42,999,1500,2999",
					"--fanout", fan, "--seed", "7", "--transport", r.transport}})
				if res.Err != nil {
					t.Fatalf("%v\n%s", res.Err, tail(res.Output, 30))
				}
				out := res.Stdout
				if !strings.HasPrefix(out, "# sample seeds 0,17,42,999,1500,2999 fanout "+fan) || strings.Count(out, "\nlayer ") != strings.Count(fan, ",")+1 {
					t.Fatalf("unexpected output:\n%s", tail(res.Output, 30))
				}
				if r.mpiArgs != nil && !strings.Contains(res.Output, "transport: alltoallv") {
					t.Errorf("over TCP, auto did not pick alltoallv:\n%s", tail(res.Output, 10))
				}
				if i == 0 {
					want = out
					return
				}
				if out != want {
					t.Errorf("output differs from 1 rank/rma:\n%s", firstDiff(want, out))
				}
			})
		}
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: want %q, got %q (%d vs %d lines)", i+1, x, y, len(la), len(lb))
		}
	}
	return "no difference"
}

// TestTrainCLI runs the main job end to end on 2 ranks: train with metrics
// and checkpoints, predict, and the errors a user meets first (a partition
// count that does not match the ranks, a missing checkpoint), each ending
// every rank with one clear message.
func TestTrainCLI(t *testing.T) {
	g := gen.get(t)
	bin, _ := h.Mpignn()
	work := t.TempDir()
	metrics := filepath.Join(work, "m.jsonl")
	ckpt := filepath.Join(work, "ckpt")
	train := []string{bin, "train", "--parts", g.parts[2], "--fanout", "5,5", "--batch", "64", "--hidden", "32",
		"--epochs", "4", "--lr", "0.01", "--seed", "2", "--quiet", "--metrics", metrics, "--checkpoint", ckpt, "--eval-every", "3"}
	res := h.MPI(Job{Ranks: 2, Args: train, Timeout: 3 * time.Minute})
	if res.Err != nil {
		t.Fatalf("train: %v\n%s", res.Err, tail(res.Output, 30))
	}
	m := regexp.MustCompile(`test_acc=([0-9.]+)`).FindStringSubmatch(res.Output)
	if m == nil {
		t.Fatalf("no test_acc in the output:\n%s", tail(res.Output, 20))
	}
	// 5 planted classes: chance is 0.2; the generated graph is learnable.
	if acc, _ := strconv.ParseFloat(m[1], 64); acc < 0.5 {
		t.Errorf("test accuracy %.3f after 4 epochs, want >= 0.5:\n%s", acc, tail(res.Output, 10))
	}
	lines, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(lines), "\n"); n != 5 { // 4 epochs + summary
		t.Errorf("metrics file has %d lines, want 5:\n%s", n, lines)
	}
	// --eval-every 3: epochs 3 and 4 (the last) are evaluated, 1 and 2 not.
	for i, l := range strings.Split(strings.TrimSpace(string(lines)), "\n")[:4] {
		if strings.Contains(l, `"val_acc"`) != (i >= 2) {
			t.Errorf("metrics line %d (--eval-every 3 of 4 epochs): %s", i+1, l)
		}
	}

	pred := filepath.Join(work, "pred.csv")
	res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--parts", g.parts[2], "--checkpoint", ckpt, "--out", pred}})
	if res.Err != nil {
		t.Fatalf("predict: %v\n%s", res.Err, tail(res.Output, 30))
	}
	b, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(b)), "\n")
	if rows[0] != "original_node_id,predicted_class" || len(rows) != 3001 {
		t.Errorf("predictions: header %q and %d rows, want the header and 3000 rows", rows[0], len(rows)-1)
	}

	bad := []struct {
		name string
		args []string
		want string
	}{
		{"parts-vs-ranks", []string{bin, "train", "--parts", g.parts[3], "--epochs", "1", "--quiet"}, "3 parts"},
		{"missing-checkpoint", []string{bin, "train", "--parts", g.parts[2], "--epochs", "1", "--quiet",
			"--checkpoint", filepath.Join(work, "none"), "--resume"}, filepath.Join(work, "none")},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			res := h.MPI(Job{Ranks: 2, Args: tc.args, Timeout: time.Minute})
			if res.Err == nil || res.TimedOut {
				t.Fatalf("want a quick failure, got err=%v:\n%s", res.Err, tail(res.Output, 20))
			}
			if !strings.Contains(res.Output, tc.want) || strings.Contains(res.Output, "goroutine ") {
				t.Errorf("want one clear message mentioning %q, no panic trace:\n%s", tc.want, tail(res.Output, 20))
			}
		})
	}
}
