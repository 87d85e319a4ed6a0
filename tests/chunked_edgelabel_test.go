package tests

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mpignn/partition"
)

// linkTargets reads every part of the partition dir: the set and edge
// label row of each link positive by its undirected pair {u, v} (original
// ids, smaller first), so that partitions of different assignments, which
// store a pair in either direction, can be compared.
func linkTargets(t *testing.T, dir string) (*partition.Meta, map[string]string) {
	t.Helper()
	m, err := partition.LoadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Link == nil {
		t.Fatalf("%s: no link split", dir)
	}
	k := m.Link.EdgeTargetDim
	out := map[string]string{}
	for p := range m.NumParts {
		pt, err := partition.Load(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []string{"train", "valid", "test"} {
			e := pt.Link.Positives(set)
			for i := range e.Len() {
				u, v := min(e.SrcOrig[i], e.DstOrig[i]), max(e.SrcOrig[i], e.DstOrig[i])
				key := fmt.Sprintf("%d-%d", u, v)
				if _, dup := out[key]; dup {
					t.Fatalf("%s part %d: pair %s is a positive twice", dir, p, key)
				}
				out[key] = fmt.Sprint(set, e.Targets[i*k:(i+1)*k])
			}
		}
	}
	return m, out
}

// TestChunkedEdgeLabelsCLI: convert of a dataset with edge labels (gen
// --edge-labels, classes and real values) writes edge_data "label", and
// `mpirun -n P mpignn partition --link-split random:...` of it (the
// default method, so another assignment than the single-process one)
// gives, on every rank count, every link positive pair the set and edge
// label the single-process partition gives it, with the same META link
// fields; train --task edge then trains on the chunked partition.
func TestChunkedEdgeLabelsCLI(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	run := func(args ...string) { t.Helper(); mustRun(t, bin, args...) }
	split := "random:0.8,0.1,0.1"
	for _, tc := range []struct{ name, labels, metric string }{
		{"classes", "classes:4", "test_acc"},
		{"regression", "regression:2", "test_rmse"},
	} {
		data, ck := filepath.Join(dir, "g-"+tc.name), filepath.Join(dir, "ck-"+tc.name)
		run("gen", "--nodes", "1200", "--avg-degree", "8", "--classes", "4", "--feat-dim", "8", "--edge-labels", tc.labels, "--seed", "3", "--out", data)
		run("convert", "--data", data, "--out", ck, "--chunk-nodes", "200", "--chunk-edges", "1500")
		single := filepath.Join(dir, "single-"+tc.name)
		run("partition", "--parts", "2", "--method", "random", "--seed", "4", "--link-split", split, "--data", data, "--out", single)
		sm, st := linkTargets(t, single)
		if sm.Link.EdgeTargetDim == 0 {
			t.Fatalf("%s: the single-process partition has no edge labels", tc.name)
		}
		var dist string
		for _, n := range h.Ranks {
			dist = filepath.Join(dir, "dist-"+tc.name+"-"+strconv.Itoa(n))
			r := h.MPI(Job{Ranks: n, Timeout: 2 * time.Minute, Args: []string{bin, "partition", "--parts", strconv.Itoa(n), "--seed", "4",
				"--link-split", split, "--data", ck, "--out", dist}})
			if r.Err != nil {
				t.Fatalf("%s np=%d: %v\n%s", tc.name, n, r.Err, tail(r.Output, 30))
			}
			dm, dt := linkTargets(t, dist)
			sl, dl := *sm.Link, *dm.Link
			if dl.EdgeTargetDim != sl.EdgeTargetDim || dl.EdgeClasses != sl.EdgeClasses || dl.Train != sl.Train || dl.Valid != sl.Valid || dl.Test != sl.Test {
				t.Fatalf("%s np=%d: META link %+v, single-process %+v", tc.name, n, dl, sl)
			}
			t.Logf("%s np=%d: %d positives, edge_target_dim %d, edge_classes %d", tc.name, n, len(dt), dl.EdgeTargetDim, dl.EdgeClasses)
			if len(dt) != len(st) {
				t.Fatalf("%s np=%d: %d positives, single-process %d", tc.name, n, len(dt), len(st))
			}
			for pair, want := range st {
				if got := dt[pair]; got != want {
					t.Fatalf("%s np=%d: pair %s: %q, single-process %q", tc.name, n, pair, got, want)
				}
			}
		}
		n := h.Ranks[len(h.Ranks)-1]
		r := h.MPI(Job{Ranks: n, Timeout: 4 * time.Minute, Args: []string{bin, "train", "--task", "edge", "--parts", dist,
			"--global-batch", "200", "--fanout", "5,5", "--hidden", "16", "--epochs", "2", "--lr", "0.02", "--seed", "1"}})
		if r.Err != nil {
			t.Fatalf("%s: train --task edge np=%d: %v\n%s", tc.name, n, r.Err, tail(r.Output, 30))
		}
		if !strings.Contains(r.Output, tc.metric) {
			t.Fatalf("%s: train --task edge reports no %s:\n%s", tc.name, tc.metric, tail(r.Output, 30))
		}
	}
}
