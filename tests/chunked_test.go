package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestChunkedPartitionCLI: `mpignn convert` then `mpirun -n P mpignn
// partition --data CHUNKED` gives, on every rank count, the same bytes as
// the single-process `partition --method random` of the OGB layout, with
// and without --halo-feats; a bad
// line in the assignment file that only the last rank reads ends the job
// within seconds with that rank's message and leaves no --out; train
// --data CHUNKED partitions with all ranks and trains.
func TestChunkedPartitionCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	data, ck := filepath.Join(dir, "g"), filepath.Join(dir, "ck")
	run("gen", "--nodes", "2500", "--avg-degree", "6", "--classes", "4", "--feat-dim", "8", "--seed", "2", "--out", data)
	run("convert", "--data", data, "--out", ck, "--chunk-nodes", "300", "--chunk-edges", "2000")
	for _, n := range h.Ranks {
		for _, extra := range [][]string{nil, {"--halo-feats"}} {
			name := strconv.Itoa(n) + strings.Join(extra, "")
			single, dist := filepath.Join(dir, "single-"+name), filepath.Join(dir, "dist-"+name)
			args := append([]string{"partition", "--parts", strconv.Itoa(n), "--method", "random", "--seed", "4"}, extra...)
			run(append(args, "--data", data, "--out", single)...)
			r := h.MPI(Job{Ranks: n, Args: append([]string{bin}, append(args, "--data", ck, "--out", dist)...), Timeout: 2 * time.Minute})
			if r.Err != nil {
				t.Fatalf("np=%d %v: %v\n%s", n, extra, r.Err, tail(r.Output, 30))
			}
			for _, f := range treeFiles(t, single) {
				a, _ := os.ReadFile(filepath.Join(single, f))
				b, err := os.ReadFile(filepath.Join(dist, f))
				if err != nil || !bytes.Equal(a, b) {
					t.Fatalf("np=%d %v: %s differs from the single-process partition (%v)", n, extra, f, err)
				}
			}
			if len(treeFiles(t, single)) != len(treeFiles(t, dist)) {
				t.Fatalf("np=%d %v: the distributed partition has other files", n, extra)
			}
		}
	}

	// Without --method a chunked dataset is partitioned by ml, in either
	// MPI's build.
	want := "on 2 ranks (ml)"
	r := h.MPI(Job{Ranks: 2, Args: []string{bin, "partition", "--data", ck, "--parts", "2", "--out", filepath.Join(dir, "default")}, Timeout: 2 * time.Minute})
	if r.Err != nil || !strings.Contains(r.Output, want) {
		t.Fatalf("default method: %v, want %q in:\n%s", r.Err, want, tail(r.Output, 20))
	}

	// Every line but the last is valid: only the last rank sees the bad id.
	assign := filepath.Join(dir, "assign")
	if err := os.MkdirAll(assign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(assign, "_N.txt"), []byte(strings.Repeat("1\n", 2499)+"9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "bad")
	r = h.MPI(Job{Ranks: 3, Args: []string{bin, "partition", "--data", ck, "--parts", "3", "--assignment", assign, "--out", out}, Timeout: time.Minute})
	if r.Err == nil || r.Elapsed > 20*time.Second {
		t.Fatalf("bad assignment: err %v after %v:\n%s", r.Err, r.Elapsed, tail(r.Output, 20))
	}
	if want := "[rank 2/3] fatal: " + filepath.Join(assign, "_N.txt") + " line 2500"; !strings.Contains(r.Output, want) {
		t.Fatalf("output lacks %q:\n%s", want, tail(r.Output, 20))
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("--out %s exists after a failed run (%v)", out, err)
	}

	r = h.MPI(Job{Ranks: 2, Args: []string{bin, "train", "--data", ck, "--method", "random", "--epochs", "1", "--fanout", "5,5", "--batch", "128", "--hidden", "16"}, Timeout: 2 * time.Minute})
	if r.Err != nil || !strings.Contains(r.Output, "partition: wrote 2 parts (random, all ranks)") || !strings.Contains(r.Output, "final:") {
		t.Fatalf("train --data CHUNKED: %v\n%s", r.Err, tail(r.Output, 30))
	}
}

// TestChunkedTimeCLI: partition --time of a chunked dataset with times
// (convert of gen --edge-time --node-time) gives, on every rank count, the
// bytes of the single-process partition --time of the OGB layout; gen
// --format chunked --edge-time --node-time writes times that partition
// --time stores and train --temporal uses.
func TestChunkedTimeCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	data, ck := filepath.Join(dir, "g"), filepath.Join(dir, "ck")
	run("gen", "--nodes", "1500", "--avg-degree", "6", "--classes", "4", "--feat-dim", "4", "--seed", "3", "--edge-time", "--node-time", "--out", data)
	run("convert", "--data", data, "--out", ck, "--chunk-nodes", "200", "--chunk-edges", "1500")
	for _, n := range h.Ranks {
		single, dist := filepath.Join(dir, "single-"+strconv.Itoa(n)), filepath.Join(dir, "dist-"+strconv.Itoa(n))
		args := []string{"partition", "--parts", strconv.Itoa(n), "--method", "random", "--seed", "4", "--time"}
		run(append(args, "--data", data, "--out", single)...)
		r := h.MPI(Job{Ranks: n, Args: append([]string{bin}, append(args, "--data", ck, "--out", dist)...), Timeout: 2 * time.Minute})
		if r.Err != nil {
			t.Fatalf("np=%d: %v\n%s", n, r.Err, tail(r.Output, 30))
		}
		files := treeFiles(t, single)
		if !slices.Contains(files, filepath.Join("part-0", "times.bin")) || !slices.Contains(files, filepath.Join("part-0", "node_time.bin")) {
			t.Fatalf("np=%d: no times in the single-process partition: %v", n, files)
		}
		for _, f := range files {
			a, _ := os.ReadFile(filepath.Join(single, f))
			b, err := os.ReadFile(filepath.Join(dist, f))
			if err != nil || !bytes.Equal(a, b) {
				t.Fatalf("np=%d: %s differs from the single-process partition (%v)", n, f, err)
			}
		}
		if len(files) != len(treeFiles(t, dist)) {
			t.Fatalf("np=%d: the distributed partition has other files", n)
		}
	}

	gck := filepath.Join(dir, "gen-ck")
	r := h.MPI(Job{Ranks: 2, Args: []string{bin, "gen", "--format", "chunked", "--nodes", "1500", "--classes", "4", "--feat-dim", "4", "--seed", "3",
		"--edge-time", "--node-time", "--chunk-nodes", "300", "--chunk-edges", "2000", "--out", gck}, Timeout: 2 * time.Minute})
	if r.Err != nil {
		t.Fatalf("gen --format chunked --edge-time --node-time: %v\n%s", r.Err, tail(r.Output, 30))
	}
	out := filepath.Join(dir, "gen-parts")
	r = h.MPI(Job{Ranks: 2, Args: []string{bin, "partition", "--data", gck, "--parts", "2", "--method", "random", "--time", "--out", out}, Timeout: 2 * time.Minute})
	if r.Err != nil {
		t.Fatalf("partition --time of gen --format chunked: %v\n%s", r.Err, tail(r.Output, 30))
	}
	if _, err := os.Stat(filepath.Join(out, "part-1", "node_time.bin")); err != nil {
		t.Fatalf("no node times stored: %v", err)
	}
	// A heterogeneous chunked graph with node times only: every edge and
	// reverse takes its source's time.
	hck, hout := filepath.Join(dir, "gen-hck"), filepath.Join(dir, "gen-hparts")
	r = h.MPI(Job{Ranks: 2, Args: []string{bin, "gen", "--format", "chunked", "--hetero", "--papers", "400", "--authors", "450", "--institutions", "10",
		"--fields", "30", "--cites", "1500", "--writes", "1500", "--affiliations", "450", "--topics", "1200", "--classes", "4", "--feat-dim", "4",
		"--node-time", "--seed", "4", "--chunk-nodes", "100", "--chunk-edges", "700", "--out", hck}, Timeout: 2 * time.Minute})
	if r.Err != nil {
		t.Fatalf("gen --format chunked --hetero --node-time: %v\n%s", r.Err, tail(r.Output, 30))
	}
	r = h.MPI(Job{Ranks: 3, Args: []string{bin, "partition", "--data", hck, "--parts", "3", "--method", "random", "--time", "--out", hout}, Timeout: 2 * time.Minute})
	if r.Err != nil || !strings.Contains(r.Output, "node times true") {
		t.Fatalf("partition --time of a heterogeneous chunked graph: %v\n%s", r.Err, tail(r.Output, 30))
	}

	// Temporal training partitions a chunked dataset with its times.
	r = h.MPI(Job{Ranks: 2, Args: []string{bin, "train", "--data", gck, "--temporal", "uniform", "--method", "random", "--epochs", "1",
		"--fanout", "5,5", "--batch", "128", "--hidden", "16"}, Timeout: 2 * time.Minute})
	if r.Err != nil || !strings.Contains(r.Output, "partition: wrote 2 parts (random, all ranks)") || !strings.Contains(r.Output, "final:") {
		t.Fatalf("train --data CHUNKED --temporal uniform: %v\n%s", r.Err, tail(r.Output, 30))
	}
}

// TestChunkedLinkCLI: partition --link-split of a chunked dataset under
// mpirun gives, on every rank count, the bytes of the single-process
// partition of the OGB layout with the same options (random assignment):
// split, canonical ids, fixed negatives, pools, training and valid
// adjacency, with --struct-feats too; a time split, or a relation, is
// refused with its reason; train --data CHUNKED --task link partitions
// with all ranks and trains.
func TestChunkedLinkCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	data, ck := filepath.Join(dir, "g"), filepath.Join(dir, "ck")
	run("gen", "--nodes", "1800", "--avg-degree", "5", "--classes", "3", "--feat-dim", "6", "--seed", "5", "--out", data)
	run("convert", "--data", data, "--out", ck, "--chunk-nodes", "250", "--chunk-edges", "1700")
	for _, n := range h.Ranks {
		for _, extra := range [][]string{nil, {"--struct-feats", "8", "--link-negs", "5"}} {
			name := strconv.Itoa(n) + strings.Join(extra, "")
			single, dist := filepath.Join(dir, "single-"+name), filepath.Join(dir, "dist-"+name)
			args := append([]string{"partition", "--parts", strconv.Itoa(n), "--method", "random", "--seed", "4",
				"--link-split", "random:0.8,0.1,0.1", "--link-pool", "500"}, extra...)
			run(append(args, "--data", data, "--out", single)...)
			r := h.MPI(Job{Ranks: n, Args: append([]string{bin}, append(args, "--data", ck, "--out", dist)...), Timeout: 2 * time.Minute})
			if r.Err != nil {
				t.Fatalf("np=%d %v: %v\n%s", n, extra, r.Err, tail(r.Output, 30))
			}
			files := treeFiles(t, single)
			if !slices.Contains(files, filepath.Join("part-0", "link-valid-neg.bin")) {
				t.Fatalf("np=%d: no link files in the single-process partition: %v", n, files)
			}
			sameFiles(t, single, dist, "np="+name)
		}
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--link-split", "time"}, "random:TRAIN,VALID,TEST splits only"},
		{[]string{"--link-split", "random:0.8,0.1,0.1", "--relation", "a___b___c"}, "heterogeneous link splits"},
	} {
		r := h.MPI(Job{Ranks: 2, Args: append([]string{bin, "partition", "--data", ck, "--parts", "2", "--method", "random", "--out", filepath.Join(dir, "refused")}, tc.flags...), Timeout: time.Minute})
		if r.Err == nil || !strings.Contains(r.Output, tc.want) {
			t.Fatalf("%v: %v, want %q in:\n%s", tc.flags, r.Err, tc.want, tail(r.Output, 20))
		}
	}

	r := h.MPI(Job{Ranks: 2, Args: []string{bin, "train", "--data", ck, "--task", "link", "--method", "random", "--epochs", "1",
		"--fanout", "5,5", "--batch", "128", "--hidden", "16"}, Timeout: 2 * time.Minute})
	if r.Err != nil || !strings.Contains(r.Output, "partition: wrote 2 parts (random, all ranks)") || !strings.Contains(r.Output, "final:") {
		t.Fatalf("train --data CHUNKED --task link: %v\n%s", r.Err, tail(r.Output, 30))
	}
}

// TestChunkedPartsCLI: partition --data CHUNKED --parts K under P ranks,
// K != P (3 and 4 parts from 2 ranks, 2 from 4, 3 from 1), writes the
// bytes of the single-process K-part partition of the OGB layout.
func TestChunkedPartsCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	data, ck := filepath.Join(dir, "g"), filepath.Join(dir, "ck")
	run("gen", "--nodes", "1500", "--avg-degree", "5", "--classes", "3", "--feat-dim", "4", "--seed", "6", "--out", data)
	run("convert", "--data", data, "--out", ck, "--chunk-nodes", "200", "--chunk-edges", "1500")
	for _, tc := range []struct{ ranks, parts int }{{2, 3}, {2, 4}, {4, 2}, {1, 3}} {
		name := fmt.Sprintf("np=%d parts=%d", tc.ranks, tc.parts)
		single, dist := filepath.Join(dir, fmt.Sprintf("single-%d-%d", tc.ranks, tc.parts)), filepath.Join(dir, fmt.Sprintf("dist-%d-%d", tc.ranks, tc.parts))
		args := []string{"partition", "--parts", strconv.Itoa(tc.parts), "--method", "random", "--seed", "4", "--halo-feats"}
		run(append(args, "--data", data, "--out", single)...)
		r := h.MPI(Job{Ranks: tc.ranks, Args: append([]string{bin}, append(args, "--data", ck, "--out", dist)...), Timeout: 2 * time.Minute})
		if want := fmt.Sprintf("into %d parts on %d ranks (random)", tc.parts, tc.ranks); r.Err != nil || !strings.Contains(r.Output, want) {
			t.Fatalf("%s: %v, want %q in:\n%s", name, r.Err, want, tail(r.Output, 30))
		}
		sameFiles(t, single, dist, name)
	}
}

// sameFiles fails the test unless the partition directories single and
// dist hold the same files with the same bytes.
func sameFiles(t *testing.T, single, dist, what string) {
	t.Helper()
	files := treeFiles(t, single)
	for _, f := range files {
		a, _ := os.ReadFile(filepath.Join(single, f))
		b, err := os.ReadFile(filepath.Join(dist, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: %s differs from the single-process partition (%v)", what, f, err)
		}
	}
	if len(files) != len(treeFiles(t, dist)) {
		t.Fatalf("%s: the distributed partition has other files", what)
	}
}

// treeFiles lists the files under dir, relative.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustRun runs the single-process command bin args and fails the test,
// with its output, unless it exits 0.
func mustRun(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "mpignn %s:\n%s", strings.Join(args, " "), out)
}
