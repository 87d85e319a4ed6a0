package dtrain

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mpignn/train/metrics"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/optim"
)

// writeParts partitions d into n parts in a directory shared by all ranks
// (rank 0 writes it) and returns its path.
func writeParts(t *testing.T, c *collectives.Comm, d *graph.Dataset, n int, method string) string {
	t.Helper()
	dir := filepath.Join(sharedDir(t, c), fmt.Sprintf("parts-%d", n))
	var err error
	if c.Rank() == 0 {
		_, err = partition.WriteDataset(dir, d, n, partition.Options{Method: method, Seed: 3, Split: "public"})
	}
	if err := collectives.Agree(c, err); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testTrainConfig trains 3 epochs with global batch 12 (per-rank 12/P).
func testTrainConfig(c *collectives.Comm, dir string, dropout float32) TrainConfig {
	return TrainConfig{
		PartDir: dir,
		Model:   train.Config{Hidden: 16, Dropout: dropout, InputDropout: dropout / 2},
		Trainer: train.Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 11},
		Loader:  dsample.LoaderOptions{Fanouts: []int{4, 3}, Batch: 12 / c.Size()},
		Store:   dsample.StoreOptions{Transport: collectives.TransportAuto},
		Run:     train.RunOptions{Epochs: 3},
	}
}

// TestTrainMatchesReference is the end-to-end equivalence test: the full
// distributed pipeline (partition on disk, distributed sampler and feature
// store, MPI Allreduce) on P ranks with per-rank batch 12/P trains exactly
// like the single-process reference with batch 12: same loss at every step
// and the same final weights (1e-4 relative), for dropout 0 and 0.5. The
// harness runs it for P = 1..4, so P = 1, 2, 4 (and 3) all agree with the
// same reference.
func TestTrainMatchesReference(t *testing.T) {
	c := comm(t)
	if 12%c.Size() != 0 {
		t.Skipf("global batch 12 does not split over %d ranks", c.Size())
	}
	d := synthDataset(8, 300, 6, 3)
	dir := writeParts(t, c, d, c.Size(), partition.MethodMetis)
	type tcase struct {
		arch      string
		drop      float32
		transport collectives.Transport
	}
	var cases []tcase
	for _, arch := range train.Archs() {
		if arch == train.ArchGINE {
			continue // reads edge features, which synthDataset's partitions do not have
		}
		cases = append(cases, tcase{arch, 0, collectives.TransportAuto}, tcase{arch, 0.5, collectives.TransportAuto},
			tcase{arch, 0.5, collectives.TransportAlltoallv})
	}
	for _, tc := range cases {
		drop := tc.drop
		t.Run(fmt.Sprintf("%s/dropout=%v/%v", tc.arch, drop, tc.transport), func(t *testing.T) {
			cfg := testTrainConfig(c, dir, drop)
			cfg.Store.Transport = tc.transport
			cfg.Model.Arch = tc.arch
			if tc.arch == train.ArchGAT {
				cfg.Model.Opts = train.GATOpts(4, drop)
			}
			rec := &stepLosses{}
			cfg.Reporter = rec
			var out bytes.Buffer
			cfg.Out = &out
			res, err := Train(c, cfg)
			if err != nil {
				t.Fatal(err)
			}
			o := refOptions{
				Model: train.Config{Arch: tc.arch, InDim: 6, Hidden: 16, Classes: 3, Layers: 2, Dropout: drop, InputDropout: drop / 2,
					Opts: cfg.Model.Opts},
				Options: train.Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 11},
			}
			ref, refLoss := runRef(t, o, train.LocalReducer{}, &train.RefSource{
				D: d, Split: d.Splits["public"], Fanouts: []int{4, 3}, GlobalBatch: 12, Seed: 11, Size: 1}, 3)
			if len(rec.l) != len(refLoss) {
				t.Fatalf("%d steps, reference %d", len(rec.l), len(refLoss))
			}
			for i := range refLoss {
				if math.Abs(rec.l[i]-refLoss[i]) > 1e-4*math.Abs(refLoss[i]) {
					t.Errorf("step %d: loss %.7f, reference %.7f", i+1, rec.l[i], refLoss[i])
				}
			}
			if diff := maxRelDiff(ref.Model().Params(), res.Params); diff > 1e-4 {
				t.Errorf("final weights differ from the reference by %.3g relative", diff)
			}
			if c.Rank() == 0 {
				if err := res.WriteFinal(&out); err != nil { // the line train prints last
					t.Fatal(err)
				}
				s := out.String()
				if !strings.Contains(s, "transport: ") || !strings.Contains(s, "final: ") || !strings.Contains(s, "weights="+res.Weights) {
					t.Errorf("rank 0 output lacks the transport/final lines:\n%s", s)
				}
			}
		})
	}
}

// TestTrainResume: 2 epochs, then a resumed run to 4, ends with the same
// weights (bit for bit) and metrics file contents as 4 uninterrupted epochs.
func TestTrainResume(t *testing.T) {
	c := comm(t)
	d := synthDataset(9, 240, 6, 3)
	dir := writeParts(t, c, d, c.Size(), partition.MethodRandom)
	tmp := sharedDir(t, c)
	cfg := testTrainConfig(c, dir, 0.5)
	cfg.Loader.Batch = 8
	cfg.Run.Epochs = 4
	cfg.Run.CheckpointDir = filepath.Join(tmp, "straight")
	cfg.Metrics = filepath.Join(tmp, "straight.jsonl")
	straight, err := Train(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.CheckpointDir = filepath.Join(tmp, "resumed")
	cfg.Metrics = filepath.Join(tmp, "resumed.jsonl")
	cfg.Run.Epochs = 2
	if _, err := Train(c, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Run.Epochs, cfg.Resume = 4, true
	resumed, err := Train(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Weights != straight.Weights {
		t.Fatalf("resumed weights %s, uninterrupted %s", resumed.Weights, straight.Weights)
	}
	if resumed.Summary.BestValAcc != straight.Summary.BestValAcc || resumed.Summary.TestAcc != straight.Summary.TestAcc {
		t.Fatalf("resumed summary %+v, uninterrupted %+v", resumed.Summary, straight.Summary)
	}
	if c.Rank() == 0 {
		a, _, err1 := metrics.Read(filepath.Join(tmp, "straight.jsonl"))
		b, _, err2 := metrics.Read(filepath.Join(tmp, "resumed.jsonl"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if len(a) != 4 || len(b) != 4 {
			t.Fatalf("metrics have %d and %d epochs, want 4", len(a), len(b))
		}
		for e := range a {
			if a[e].Loss != b[e].Loss || a[e].ValAccuracy() != b[e].ValAccuracy() {
				t.Errorf("epoch %d: resumed loss %v val %v, uninterrupted %v %v", e+1, b[e].Loss, b[e].ValAccuracy(), a[e].Loss, a[e].ValAccuracy())
			}
		}
	}
}

// TestTrainBadInput: a partition with a different part count, a missing
// checkpoint and a corrupt checkpoint each fail on EVERY rank with a clear
// message (and no rank hangs).
func TestTrainBadInput(t *testing.T) {
	c := comm(t)
	d := synthDataset(10, 120, 4, 2)
	wrong := writeParts(t, c, d, c.Size()+1, partition.MethodRandom)
	_, err := Train(c, testTrainConfig(c, wrong, 0))
	want := fmt.Sprintf("has %d parts but the job runs %d ranks", c.Size()+1, c.Size())
	if c.Size() == 1 {
		// A one-rank job was most likely started without mpirun.
		want = "has 2 parts but this is a job of 1 rank: start it under MPI with one rank per part, ./mpirun.sh -n 2"
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("parts != ranks: got %v", err)
	}
	good := writeParts(t, c, d, c.Size(), partition.MethodRandom)
	cfg := testTrainConfig(c, good, 0)
	cfg.Run.Epochs = 1
	cfg.Run.CheckpointDir = filepath.Join(sharedDir(t, c), "ck")
	cfg.Resume = true
	if _, err := Train(c, cfg); err == nil || !strings.Contains(err.Error(), "missing file") {
		t.Errorf("missing checkpoint: got %v", err)
	}
	cfg.Resume = false
	if _, err := Train(c, cfg); err != nil {
		t.Fatal(err)
	}
	var werr error
	if c.Rank() == 0 {
		path := filepath.Join(cfg.Run.CheckpointDir, train.CheckpointFile)
		werr = os.Truncate(path, 100)
	}
	if err := collectives.Agree(c, werr); err != nil {
		t.Fatal(err)
	}
	cfg.Resume, cfg.Run.Epochs = true, 2
	if _, err := Train(c, cfg); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("corrupt checkpoint: got %v", err)
	}

	// A NaN feature on a training node makes the loss NaN at the step that
	// samples it; every rank stops there, naming epoch and step.
	for k := range d.Feat.Dim {
		d.Feat.Data[k] = float32(math.NaN()) // node 0 is a training node
	}
	nan := writeParts(t, c, d, c.Size(), partition.MethodRandom)
	cfg = testTrainConfig(c, nan, 0)
	_, err = Train(c, cfg)
	if err == nil || !strings.Contains(err.Error(), "epoch 1 step ") || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN features: got %v", err)
	}
}

// TestPredict: predictions with the full neighborhood reproduce the test
// accuracy that training measured (also with the full neighborhood) for the
// best-validation weights, every node appears once in id order, and a
// missing checkpoint fails on every rank.
func TestPredict(t *testing.T) {
	c := comm(t)
	d := synthDataset(12, 240, 6, 3)
	dir := writeParts(t, c, d, c.Size(), partition.MethodMetis)
	tmp := sharedDir(t, c)
	cfg := testTrainConfig(c, dir, 0.5)
	cfg.EvalFull = true
	cfg.Run.CheckpointDir = filepath.Join(tmp, "ck")
	res, err := Train(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "pred.csv")
	n, err := Predict(c, PredictConfig{EmbedConfig: EmbedConfig{PartDir: dir, CheckpointDir: cfg.Run.CheckpointDir, Out: out, Full: true, Batch: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if n != d.NumNodes {
		t.Fatalf("predicted %d nodes, graph has %d", n, d.NumNodes)
	}
	if c.Rank() == 0 {
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if lines[0] != "original_node_id,predicted_class" || int64(len(lines)-1) != d.NumNodes {
			t.Fatalf("header %q, %d rows", lines[0], len(lines)-1)
		}
		pred := make([]int32, d.NumNodes)
		for i, ln := range lines[1:] {
			var v int64
			var y int32
			if _, err := fmt.Sscanf(ln, "%d,%d", &v, &y); err != nil || v != int64(i) || y < 0 || int(y) >= d.NumClasses {
				t.Fatalf("row %d %q: want node %d and a class (%v)", i+1, ln, i, err)
			}
			pred[v] = y
		}
		correct := 0
		test := d.Splits["public"].Test
		for _, v := range test {
			if pred[v] == d.Labels[v] {
				correct++
			}
		}
		if acc := float64(correct) / float64(len(test)); math.Abs(acc-res.Summary.TestAcc) > 1e-9 {
			t.Errorf("test accuracy from predictions %.4f, training reported %.4f", acc, res.Summary.TestAcc)
		}
	}
	_, err = Predict(c, PredictConfig{EmbedConfig: EmbedConfig{PartDir: dir, CheckpointDir: filepath.Join(tmp, "nothing"), Out: out, Batch: 8}})
	if err == nil || !strings.Contains(err.Error(), "missing file") {
		t.Errorf("missing checkpoint: got %v", err)
	}
}
