package dtrain

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/spmd"
	"mpignn/spmd/spmdtest"
	"mpignn/train"
	"mpignn/train/metrics"
	"mpignn/train/optim"
)

var world *spmd.World

func TestMain(m *testing.M) { spmdtest.Main(m, &world) }

func comm(t *testing.T) *collectives.Comm {
	t.Helper()
	c, err := collectives.NewComm()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// synthDataset is a small planted-partition graph (same on every rank for
// the same seed): most in-neighbors share the node's class and features
// carry a noisy class signal, so training has something to learn. Its
// in-lists are canonical (ascending, no repeats, no self loops).
func synthDataset(seed uint64, n int64, dim, classes int) *graph.Dataset {
	r := rand.New(rand.NewPCG(seed, 99))
	d := &graph.Dataset{Name: "synth", NumNodes: n, NumClasses: classes, Labels: make([]int32, n),
		Feat: &graph.Features{Dim: dim, Data: make([]float32, int(n)*dim)}, In: &graph.CSR{Indptr: []int64{0}}}
	byClass := make([][]int64, classes)
	for v := range n {
		c := int32(r.IntN(classes))
		d.Labels[v] = c
		byClass[c] = append(byClass[c], v)
	}
	sp := &graph.Split{}
	for v := range n {
		var row []int64
		for range 2 + r.IntN(8) {
			u := r.Int64N(n)
			if r.Float64() < 0.8 {
				same := byClass[d.Labels[v]]
				u = same[r.IntN(len(same))]
			}
			if u != v {
				row = append(row, u)
			}
		}
		slices.Sort(row)
		row = slices.Compact(row)
		d.In.Indices = append(d.In.Indices, row...)
		d.In.Indptr = append(d.In.Indptr, int64(len(d.In.Indices)))
		for k := range dim {
			x := r.NormFloat64()
			if k%classes == int(d.Labels[v]) {
				x += 0.8
			}
			d.Feat.Data[int(v)*dim+k] = float32(x)
		}
		switch {
		case v%10 < 6:
			sp.Train = append(sp.Train, v)
		case v%10 < 8:
			sp.Valid = append(sp.Valid, v)
		default:
			sp.Test = append(sp.Test, v)
		}
	}
	d.Splits = map[string]*graph.Split{"public": sp}
	return d
}

// stepLosses records the global loss of every training step.
type stepLosses struct{ l []float64 }

func (s *stepLosses) BeginEpoch(epoch, steps int)     {}
func (s *stepLosses) StepDone(step int, loss float64) { s.l = append(s.l, loss) }
func (s *stepLosses) EndEpoch(m *metrics.Epoch)       {}
func maxRelDiff(a, b []float32) float64 {
	scale, diff := 0.0, 0.0
	for i := range a {
		scale = math.Max(scale, math.Abs(float64(a[i])))
		diff = math.Max(diff, math.Abs(float64(a[i])-float64(b[i])))
	}
	return diff / math.Max(scale, 1e-30)
}

// refOptions is a model configuration with the trainer options.
type refOptions struct {
	train.Options
	Model train.Config
}

// runRef trains with the given source and reducer and returns the trainer
// and the per-step global losses.
func runRef(t *testing.T, o refOptions, red train.Reducer, src train.BatchSource, epochs int) (*train.Trainer, []float64) {
	t.Helper()
	m, err := train.NewModel(o.Model, o.Seed)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.NewTrainer(o.Options, m, red, src)
	if err != nil {
		t.Fatal(err)
	}
	rec := &stepLosses{}
	tr.Reporter = rec
	if _, err := tr.Run(train.RunOptions{Epochs: epochs}); err != nil {
		t.Fatal(err)
	}
	return tr, rec.l
}

// TestMPIReducerEquivalence runs the trainer on every rank of the real MPI
// world, each rank training on the seeds it owns (v % P == rank) of the
// same global batches, with gradients summed by MPI_Allreduce. The per-step
// losses and final weights must equal a single-process run (computed on
// every rank) and the weights must be bit-identical across ranks. This holds
// for every world size the harness runs (1..4), with and without dropout.
func TestMPIReducerEquivalence(t *testing.T) {
	c := comm(t)
	d := synthDataset(5, 360, 8, 4)
	for _, drop := range []float32{0, 0.5} {
		t.Run(fmt.Sprintf("dropout=%v", drop), func(t *testing.T) {
			o := refOptions{
				Model:   train.Config{InDim: 8, Hidden: 16, Classes: 4, Layers: 2, Dropout: drop, InputDropout: drop / 2},
				Options: train.Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 7},
			}
			src := func(rank, size int) *train.RefSource {
				return &train.RefSource{D: d, Split: d.Splits["public"], Fanouts: []int{5, 3}, GlobalBatch: 24, Seed: o.Seed, Rank: rank, Size: size}
			}
			ref, refLoss := runRef(t, o, train.LocalReducer{}, src(0, 1), 3)
			got, gotLoss := runRef(t, o, Reducer{C: c}, src(c.Rank(), c.Size()), 3)
			if len(gotLoss) != len(refLoss) || len(refLoss) == 0 {
				t.Fatalf("%d steps, reference %d", len(gotLoss), len(refLoss))
			}
			for i := range refLoss {
				if math.Abs(gotLoss[i]-refLoss[i]) > 1e-4*math.Abs(refLoss[i]) {
					t.Errorf("step %d: loss %.7f, single process %.7f", i+1, gotLoss[i], refLoss[i])
				}
			}
			if diff := maxRelDiff(ref.Model().Params(), got.Model().Params()); diff > 1e-4 {
				t.Errorf("final weights differ from the single-process run by %.3g relative", diff)
			}
			all, err := collectives.Allgather(c, []byte(WeightsHash(got.Model().Params())))
			if err != nil {
				t.Fatal(err)
			}
			for r := range c.Size() {
				if !bytes.Equal(all[16*r:16*r+16], all[:16]) {
					t.Errorf("rank %d weights %s differ from rank 0 %s", r, all[16*r:16*r+16], all[:16])
				}
			}
		})
	}
}

// sharedDir makes a temporary directory on rank 0 and tells every rank its
// path (all ranks run on this machine in the tests).
func sharedDir(t testing.TB, c *collectives.Comm) string {
	t.Helper()
	var dir string
	var err error
	if c.Rank() == 0 {
		dir, err = os.MkdirTemp("", "mpignn-dist-test-")
	}
	b, err := collectives.BcastBytes(c, 0, []byte(dir), err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Barrier()
		if c.Rank() == 0 {
			os.RemoveAll(string(b))
		}
	})
	return string(b)
}

// TestLoadCheckpointBroadcast: every rank gets rank 0's checkpoint, and a
// missing or corrupt file fails on every rank with the file named.
func TestLoadCheckpointBroadcast(t *testing.T) {
	c := comm(t)
	dir := sharedDir(t, c)
	cfg := train.Config{InDim: 4, Hidden: 5, Classes: 3, Layers: 2}
	p, err := train.InitParams(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	ck := &train.Checkpoint{Model: cfg, Adam: optim.DefaultAdam(0.01, 0), Seed: 3, Epoch: 2, Step: 9, AdamT: 9,
		Params: p, M: make([]float32, len(p)), V: make([]float32, len(p))}
	if _, err := LoadCheckpoint(c, filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "missing file") {
		t.Fatalf("missing checkpoint: got %v", err)
	}
	var werr error
	if c.Rank() == 0 {
		werr = train.SaveCheckpoint(dir, ck)
	}
	if err := collectives.Agree(c, werr); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Epoch != 2 || got.Step != 9 || !slices.Equal(got.Params, p) {
		t.Fatalf("loaded epoch %d step %d, params equal %v", got.Epoch, got.Step, slices.Equal(got.Params, p))
	}
	if c.Rank() == 0 {
		path := filepath.Join(dir, train.CheckpointFile)
		data, err := os.ReadFile(path)
		if err == nil {
			data[len(data)/2] ^= 0x40
			err = os.WriteFile(path, data, 0o644)
		}
		werr = err
	}
	if err := collectives.Agree(c, werr); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(c, dir); err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), train.CheckpointFile) {
		t.Fatalf("corrupt checkpoint: got %v", err)
	}
}

func TestRowNormalize(t *testing.T) {
	x := []float32{1, -3, 0, 0, 0, 0, 2, 2, 4}
	RowNormalize(x, 3)
	want := []float32{0.25, -0.75, 0, 0, 0, 0, 0.25, 0.25, 0.5}
	if !slices.Equal(x, want) {
		t.Fatalf("got %v, want %v", x, want)
	}
}

func TestWeightsHash(t *testing.T) {
	a := WeightsHash([]float32{1, 2, 3})
	if len(a) != 16 || a == WeightsHash([]float32{1, 2, 3.0000002}) || a != WeightsHash([]float32{1, 2, 3}) {
		t.Fatalf("hash %q is not a 16-digit fingerprint sensitive to one ulp", a)
	}
	// Negative zero differs from zero in its bytes, so the hash must too.
	if WeightsHash([]float32{0}) == WeightsHash([]float32{float32(math.Copysign(0, -1))}) {
		t.Fatal("hash ignores the sign of zero")
	}
}
