package tests

import (
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heteroEdgeData writes a small `gen --hetero` graph whose cites relation
// has a per-edge attribute edge_w.csv.gz (a function of the line), and
// partitions it with --edge-feat into 1 and 2 parts. It returns the
// partition directories by part count.
func heteroEdgeData(t *testing.T, bin string) map[int]string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	out, err := exec.Command(bin, "gen", "--hetero", "--papers", "600", "--authors", "800", "--institutions", "20", "--fields", "50",
		"--cites", "2000", "--writes", "2400", "--affiliations", "800", "--topics", "2000",
		"--classes", "4", "--feat-dim", "8", "--seed", "5", "--out", data).CombinedOutput()
	require.NoError(t, err, string(out))
	rel := filepath.Join(data, "raw", "relations", "paper___cites___paper")
	n, err := os.ReadFile(filepath.Join(rel, "num-edge-list.csv.gz"))
	require.NoError(t, err)
	require.NotEmpty(t, n)
	f, err := os.Create(filepath.Join(rel, "edge_w.csv.gz"))
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	for k := range 2000 {
		fmt.Fprintf(zw, "%g\n", float64(k%5)/4)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	parts := map[int]string{}
	for _, p := range []int{1, 2} {
		parts[p] = filepath.Join(dir, fmt.Sprintf("p%d", p))
		out, err := exec.Command(bin, "partition", "--data", data, "--parts", strconv.Itoa(p), "--out", parts[p], "--edge-feat").CombinedOutput()
		require.NoError(t, err, string(out))
	}
	return parts
}

// TestHeteroEdgeFeatTrain: R-GCN and HeteroSAGE with relation edge
// features (partition --edge-feat, train --use-edge-feat) train on 1 and
// 2 ranks with --global-batch to the same per-epoch losses (to float32
// summation order, as TestHeteroTrainIdentical) and the same accuracies,
// and the edge features change the model (the losses differ without
// them), layer-wise evaluation equals sampled full-neighbourhood
// evaluation, and a partition without edge features is refused with one
// line naming the flag.
func TestHeteroEdgeFeatTrain(t *testing.T) {
	bin, err := h.Mpignn()
	require.NoError(t, err)
	parts := heteroEdgeData(t, bin)
	train := func(t *testing.T, model string, p int, extra ...string) ([]float64, string) {
		metrics := filepath.Join(t.TempDir(), "m.jsonl")
		args := []string{bin, "train", "--parts", parts[p], "--global-batch", "24", "--fanout", "5,5",
			"--hidden", "16", "--embed-dim", "8", "--epochs", "3", "--seed", "1", "--quiet", "--metrics", metrics}
		if model != "hsage" { // HeteroSAGE is a heterogeneous partition's default
			args = append(args, "--model", model)
		}
		args = append(args, extra...)
		res := h.MPI(Job{Ranks: p, Args: args, Timeout: 3 * time.Minute})
		require.NoError(t, res.Err, tail(res.Output, 30))
		var losses []float64
		for _, s := range epochValues(t, metrics, "loss")["loss"] {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			losses = append(losses, v)
		}
		final := finalEmbRe.FindString(res.Stdout)
		require.NotEmpty(t, final, tail(res.Output, 10))
		acc, _, _ := strings.Cut(final, " weights=")
		return losses, acc
	}
	for _, model := range []string{"hsage", "rgcn"} {
		t.Run(model, func(t *testing.T) {
			l1, a1 := train(t, model, 1, "--use-edge-feat")
			l2, a2 := train(t, model, 2, "--use-edge-feat")
			require.Len(t, l2, len(l1))
			for i := range l1 {
				assert.InDelta(t, l1[i], l2[i], 1e-5*math.Abs(l1[i]), "epoch %d", i+1)
			}
			assert.Equal(t, a1, a2, "accuracies on 1 and 2 ranks")
			plain, _ := train(t, model, 1)
			assert.NotEqual(t, l1, plain, "the edge features must reach the model")
			// Layer-wise evaluation (the default) reads them as sampled
			// full-neighbourhood evaluation does.
			_, full := train(t, model, 1, "--use-edge-feat", "--eval-full")
			assert.Equal(t, a1, full, "layer-wise and --eval-full accuracies")
		})
	}
	// A partition without edge features: one line naming the flag.
	plain := filepath.Join(t.TempDir(), "plain")
	out, err := exec.Command(bin, "partition", "--data", filepath.Join(filepath.Dir(parts[1]), "data"), "--parts", "1", "--out", plain).CombinedOutput()
	require.NoError(t, err, string(out))
	res := h.MPI(Job{Ranks: 1, Args: []string{bin, "train", "--parts", plain, "--epochs", "1", "--use-edge-feat"}, Timeout: time.Minute})
	require.Error(t, res.Err)
	assert.Contains(t, res.Output, "--use-edge-feat: partition "+plain+" holds no edge features")
}
