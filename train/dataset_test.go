package train

import (
	"os"
	"path/filepath"
	"testing"

	"mpignn/graph"
	"mpignn/train/optim"
)

// dataDir locates ../shared/data (relative to the repository root), or
// $MPIGNN_DATA; tests that need a dataset skip when it is absent.
func dataDir(t *testing.T, name string) string {
	t.Helper()
	base := os.Getenv("MPIGNN_DATA")
	if base == "" {
		base = filepath.Join("..", "..", "shared", "data")
	}
	dir := filepath.Join(base, name)
	if _, err := os.Stat(filepath.Join(dir, "raw")); err != nil {
		t.Skipf("dataset %s not available (%v); set MPIGNN_DATA", name, err)
	}
	return dir
}

// TestCoraReference trains the reference (single-process) pipeline on Cora's
// public split with the default CLI hyperparameters and requires the test
// accuracy of the best-validation epoch to reach GraphSAGE's usual level
// (DGL's example reports 83.3 %; the issue asks for >= 80 %).
func TestCoraReference(t *testing.T) {
	opt := graph.UndirectedOptions()
	opt.NormalizeFeatures = true
	d, err := graph.ReadOGB(dataDir(t, "cora"), opt)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	seeds := []uint64{1, 2, 3}
	for _, seed := range seeds {
		o := testOpts{
			Model:   Config{InDim: d.Feat.Dim, Hidden: 128, Classes: d.NumClasses, Layers: 2, Dropout: 0.5, InputDropout: 0.5},
			Options: Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: seed},
		}
		src := &RefSource{D: d, Split: d.Splits["public"], Fanouts: []int{10, 5}, GlobalBatch: 64, EvalBatch: 512, Seed: seed, Size: 1}
		tr, err := newTrainer(o, LocalReducer{}, src)
		if err != nil {
			t.Fatal(err)
		}
		s, err := tr.Run(RunOptions{Epochs: 50})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: best epoch %d val %.4f test %.4f", seed, s.BestEpoch, s.BestValAcc, s.TestAcc)
		sum += s.TestAcc
	}
	if mean := sum / float64(len(seeds)); mean < 0.80 {
		t.Errorf("mean test accuracy %.4f over %d seeds, want >= 0.80", mean, len(seeds))
	}
}
