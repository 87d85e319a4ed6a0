package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sparseGen is the generated graph of gen with its features stored as
// CSR rows (partition --sparse-features on), so that layer 0 reads sparse
// inputs.
var sparseGen = cliGraph{partArgs: []string{"--sparse-features", "on"}}

func (g *cliGraph) getSparse(t *testing.T) *cliGraph {
	return g.prepare(t, "sparse-graph", func(run func(args ...string) error) error {
		return run("gen", "--nodes", "3000", "--avg-degree", "8", "--classes", "5", "--feat-dim", "16",
			"--seed", "3", "--out", filepath.Join(g.dir, "data"))
	})
}

// evalFields are the per-epoch evaluation figures the layer-wise tests
// compare; link runs add their ranking figures.
var (
	evalFields = []string{"loss", "val_loss", "val_acc", "test_loss", "test_acc"}
	linkFields = append([]string{"val_auc", "val_mrr", "test_auc", "test_mrr"}, evalFields...)
)

// trainEval trains 3 epochs on parts with P ranks and the given extra flags
// and returns the final weights digest and the per-epoch figures.
func trainEval(t *testing.T, bin, parts string, p int, extra ...string) (string, map[string][]string) {
	t.Helper()
	return trainFields(t, bin, parts, p, evalFields, extra...)
}

// trainFields is trainEval reading the given metrics fields.
func trainFields(t *testing.T, bin, parts string, p int, fields []string, extra ...string) (string, map[string][]string) {
	t.Helper()
	metrics := filepath.Join(t.TempDir(), "m.jsonl")
	args := append([]string{bin, "train", "--parts", parts, "--fanout", "4,3", "--batch", strconv.Itoa(96 / p),
		"--hidden", "16", "--epochs", "3", "--seed", "3", "--lr", "0.01", "--quiet", "--metrics", metrics}, extra...)
	res := h.MPI(Job{Ranks: p, Args: args, Timeout: 2 * time.Minute})
	require.NoError(t, res.Err, "%v:\n%s", extra, tail(res.Output, 30))
	w := finalWeights.FindStringSubmatch(res.Stdout)
	require.NotNil(t, w, "no final weights line:\n%s", tail(res.Output, 10))
	return w[1], epochValues(t, metrics, fields...)
}

// requireClose compares two per-epoch figure tables: accuracies exactly,
// losses to a relative 1e-6 (the two evaluations sum in another order).
func requireClose(t *testing.T, what string, want, got map[string][]string) {
	t.Helper()
	for f := range want {
		require.Len(t, got[f], len(want[f]), "%s: %s", what, f)
		for e := range want[f] {
			if f == "val_acc" || f == "test_acc" {
				assert.Equal(t, want[f][e], got[f][e], "%s: epoch %d %s", what, e+1, f)
				continue
			}
			a, err1 := strconv.ParseFloat(want[f][e], 64)
			b, err2 := strconv.ParseFloat(got[f][e], 64)
			require.NoError(t, err1)
			require.NoError(t, err2)
			assert.InEpsilon(t, a, b, 1e-6, "%s: epoch %d %s", what, e+1, f)
		}
	}
}

// TestLayerwiseEval: layer-wise evaluation (the default) is exact: for
// GraphSAGE, GCN and GAT (also over sparse input features), and for the heterogeneous HeteroSAGE and R-GCN,
// its figures equal sampled evaluation over full neighbourhoods
// (--eval-full, exponential in the hops) up to summation order, and
// training is untouched (the same weights as with --eval sampled). Its
// figures are identical under both transports for each rank count and
// agree across rank counts.
func TestLayerwiseEval(t *testing.T) {
	g := gen.get(t)
	sp := sparseGen.getSparse(t)
	het := heteroGraph.getHetero(t)
	bin, _ := h.Mpignn()
	p := h.Ranks[len(h.Ranks)-1]
	for _, c := range []struct {
		name  string
		parts string
		args  []string
	}{
		{"sage", g.parts[p], []string{"--model", "sage"}},
		{"gcn", g.parts[p], []string{"--model", "gcn"}},
		{"gat", g.parts[p], []string{"--model", "gat", "--heads", "2"}},
		{"gatv2", g.parts[p], []string{"--model", "gatv2", "--heads", "2", "--attn-dropout", "0.3"}},
		{"gcn-sparse-features", sp.parts[p], []string{"--model", "gcn"}},
		{"sage-pool", g.parts[p], []string{"--model", "sage", "--aggr", "pool"}},
		{"sage-max-sparse-features", sp.parts[p], []string{"--model", "sage", "--aggr", "max"}},
		{"sage-pool-sparse-features", sp.parts[p], []string{"--model", "sage", "--aggr", "pool"}},
		{"hsage", het.parts[p], []string{"--model", "hsage", "--embed-dim", "8"}},
		{"rgcn", het.parts[p], []string{"--model", "rgcn", "--embed-dim", "8", "--bases", "2"}},
	} {
		t.Run(fmt.Sprintf("%s/np=%d", c.name, p), func(t *testing.T) {
			wl, lw := trainEval(t, bin, c.parts, p, c.args...)
			wf, full := trainEval(t, bin, c.parts, p, append(c.args, "--eval-full")...)
			ws, sampled := trainEval(t, bin, c.parts, p, append(c.args, "--eval", "sampled")...)
			assert.Equal(t, wf, wl, "evaluation changed the training")
			assert.Equal(t, ws, wl, "evaluation changed the training")
			assert.Equal(t, sampled["loss"], lw["loss"], "evaluation changed the training losses")
			requireClose(t, "layer-wise vs --eval-full", full, lw)
		})
	}

	t.Run("link/np=2", func(t *testing.T) {
		parts := linkParts(t, bin, filepath.Join(g.dir, "data"), 2)
		args := []string{"--task", "link", "--neg-ratio", "2", "--decoder", "dot"}
		wl, lw := trainFields(t, bin, parts, 2, linkFields, args...)
		wf, full := trainFields(t, bin, parts, 2, linkFields, append(args, "--eval-full")...)
		assert.Equal(t, wf, wl, "evaluation changed the training")
		requireClose(t, "link: layer-wise vs --eval-full", full, lw)
	})

	var first map[string][]string
	for _, p := range h.Ranks {
		var row map[string][]string
		for _, tr := range goldenTransports {
			_, got := trainEval(t, bin, g.parts[p], p, "--transport", tr, "--eval", "layer-wise")
			if row == nil {
				row = got
				continue
			}
			for _, f := range evalFields {
				assert.Equal(t, row[f], got[f], "np=%d: %s differs between transports", p, f)
			}
		}
		if first == nil {
			first = row
			continue
		}
		// Training itself differs across rank counts in the last bits
		// (the Allreduce order), so only the accuracies must be equal.
		for _, f := range []string{"val_acc", "test_acc"} {
			assert.Equal(t, first[f], row[f], "np=%d: %s differs from np=%d", p, f, h.Ranks[0])
		}
	}
}

// TestLayerwisePredict: predict and embed default to layer-wise inference,
// whose classes equal sampled inference over every neighbour (--full) and
// do not depend on the number of ranks; the refusals name the clashing
// flags.
func TestLayerwisePredict(t *testing.T) {
	g := gen.get(t)
	tg := temporalGraph.getTemporal(t)
	bin, _ := h.Mpignn()
	work := t.TempDir()
	ckpt := filepath.Join(work, "ckpt")
	res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--parts", g.parts[2], "--model", "gcn",
		"--fanout", "4,3", "--batch", "48", "--hidden", "16", "--epochs", "2", "--seed", "3", "--quiet", "--checkpoint", ckpt}})
	require.NoError(t, res.Err, tail(res.Output, 20))
	predict := func(p int, extra ...string) []byte {
		out := filepath.Join(work, fmt.Sprintf("pred-%d-%d.csv", p, len(extra)))
		res := h.MPI(Job{Ranks: p, Timeout: 2 * time.Minute, Args: append([]string{bin, "predict", "--parts", g.parts[p],
			"--checkpoint", ckpt, "--out", out}, extra...)})
		require.NoError(t, res.Err, "predict np=%d %v:\n%s", p, extra, tail(res.Output, 20))
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		return b
	}
	lw := predict(2)
	assert.Equal(t, string(predict(2, "--full")), string(lw), "layer-wise and --full predictions differ")
	for _, p := range h.Ranks {
		assert.Equal(t, string(lw), string(predict(p)), "np=%d predicts other classes than np=2", p)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"eval-bogus", []string{bin, "train", "--parts", g.parts[2], "--epochs", "1", "--quiet", "--eval", "exact"}, `--eval "exact"`},
		{"eval-full-clash", []string{bin, "train", "--parts", g.parts[2], "--epochs", "1", "--quiet", "--eval", "layer-wise", "--eval-full"}, "--eval-full"},
		{"temporal-clash", []string{bin, "train", "--parts", tg.parts[2], "--epochs", "1", "--quiet", "--temporal", "uniform", "--eval", "layer-wise"},
			"cannot evaluate temporally"},
		{"predict-full-clash", []string{bin, "predict", "--parts", g.parts[2], "--checkpoint", ckpt, "--out", filepath.Join(work, "x.csv"),
			"--eval", "layer-wise", "--full"}, "--fanout and --full choose sampled inference"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := h.MPI(Job{Ranks: 2, Args: c.args, Timeout: time.Minute})
			require.Error(t, res.Err, "%s must be refused:\n%s", c.name, tail(res.Output, 10))
			assert.Contains(t, res.Output, c.want)
			assert.NotContains(t, res.Output, "goroutine ", "a refusal must not panic")
		})
	}
	_, err := os.Stat(filepath.Join(work, "x.csv"))
	assert.True(t, os.IsNotExist(err), "a refused predict wrote its output")
}
