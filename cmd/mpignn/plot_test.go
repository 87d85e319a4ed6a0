package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mpignn/train/metrics"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTestMetrics(t *testing.T, path string, epochs int, summary bool) {
	t.Helper()
	w, err := metrics.Create(path, 0)
	require.NoError(t, err)
	defer w.Close()
	for e := 1; e <= epochs; e++ {
		m := metrics.Epoch{Type: "epoch", Epoch: e, Loss: 2 / float64(e), TrainAcc: 1 - 0.5/float64(e)}
		// Odd epochs are evaluated (as with --eval-every 2), and the last.
		if e%2 == 1 || e == epochs {
			vl, va, ta := 2.2/float64(e), 0.9-0.5/float64(e), 0.88-0.5/float64(e)
			m.ValLoss, m.ValAcc, m.TestAcc = &vl, &va, &ta
		}
		require.NoError(t, w.WriteEpoch(&m))
	}
	if summary {
		require.NoError(t, w.WriteSummary(&metrics.Summary{Type: "summary", Epochs: epochs, BestEpoch: epochs, BestValAcc: 0.8, TestAcc: 0.79}))
	}
}

func TestPlotWritesImages(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		epochs  int
		summary bool
		out     string
	}{
		{20, true, "loss.png"},
		{1, false, "one.png"},
		{5, true, "curves.svg"},
	}
	for _, tc := range tests {
		t.Run(tc.out, func(t *testing.T) {
			m := filepath.Join(dir, fmt.Sprintf("m%d.jsonl", tc.epochs))
			writeTestMetrics(t, m, tc.epochs, tc.summary)
			out := filepath.Join(dir, tc.out)
			require.NoError(t, runPlot([]string{"--metrics", m, "--out", out}))
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			if strings.HasSuffix(tc.out, ".svg") {
				require.Contains(t, string(data), "<svg", "not an SVG")
				return
			}
			img, err := png.Decode(bytes.NewReader(data))
			require.NoError(t, err)
			b := img.Bounds()
			require.GreaterOrEqual(t, b.Dx(), 800, "image %v too small", b)
			require.GreaterOrEqual(t, b.Dy(), 300, "image %v too small", b)
			// Something other than background must be drawn in both halves.
			for _, half := range []int{0, 1} {
				ink := 0
				for y := b.Min.Y; y < b.Max.Y; y += 2 {
					for x := b.Min.X + half*b.Dx()/2; x < b.Min.X+(half+1)*b.Dx()/2; x += 2 {
						r, g, bl, _ := img.At(x, y).RGBA()
						if r < 0x8000 || g < 0x8000 || bl < 0x8000 {
							ink++
						}
					}
				}
				assert.GreaterOrEqual(t, ink, 100, "dark pixels in half %d of the image", half)
			}
		})
	}
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	good := filepath.Join(dir, "good.jsonl")
	writeTestMetrics(t, good, 3, true)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"type\":\"epoch\",\"epoch\":1}\nnot json\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--out", "x.png"}, "--metrics FILE is required"},
		{[]string{"--metrics", filepath.Join(dir, "none.jsonl")}, "no such file"},
		{[]string{"--metrics", empty, "--out", filepath.Join(dir, "e.png")}, "no epoch lines"},
		{[]string{"--metrics", bad, "--out", filepath.Join(dir, "b.png")}, "line 2"},
		{[]string{"--metrics", good, "--out", filepath.Join(dir, "x.gif")}, "unsupported image type"},
		{[]string{"--metrics", good, "--out", filepath.Join(dir, "missing-dir", "x.png")}, "no such file"},
		{[]string{"--metrics", good, "extra"}, "unexpected argument"},
	}
	for _, tc := range tests {
		assert.ErrorContains(t, runPlot(tc.args), tc.want, "%v", tc.args)
	}
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 3, "failed runs left files behind")
}

// TestPlotLinkRun: metrics of a link-prediction run get the MRR/AUC panel
// (its title names the best validation MRR), in SVG so the text is visible.
func TestPlotLinkRun(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "link.jsonl")
	var lines []string
	for e := 1; e <= 3; e++ {
		lines = append(lines, fmt.Sprintf(`{"type":"epoch","epoch":%d,"loss":0.6,"train_acc":0.6,"val_auc":0.%d,"val_mrr":0.%d,"test_auc":0.%d,"test_mrr":0.%d}`, e, 7+e, 2+e, 7+e, 1+e))
	}
	lines = append(lines, `{"type":"summary","epochs":3,"best_epoch":3,"best_val_acc":0.9,"test_acc":0.9,"total_s":1,"best_val_mrr":0.5,"test_auc":0.9,"test_mrr":0.4}`)
	require.NoError(t, os.WriteFile(m, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	out := filepath.Join(dir, "link.svg")
	require.NoError(t, runPlot([]string{"--metrics", m, "--out", out}))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "best val MRR 0.5000 at epoch 3")
	assert.NotContains(t, string(data), ": accuracy")
}

// TestPlotTargetRuns: a multi-label run plots ROC-AUC and F1, a
// regression run RMSE and MAE, each titled with its best epoch.
func TestPlotTargetRuns(t *testing.T) {
	for _, tc := range []struct {
		name, epoch, summary string
		want                 []string
	}{
		{"multilabel", `"val_rocauc":0.7%d,"test_rocauc":0.7%d,"val_f1_micro":0.3,"test_f1_micro":0.3`,
			`"val_rocauc":0.73,"test_rocauc":0.74`, []string{"ROC-AUC and F1 (best epoch 3: val ROC-AUC 0.7300, test 0.7400)", "test F1 micro"}},
		{"regression", `"val_rmse":0.%d,"test_rmse":0.%d,"val_mae":0.1,"test_mae":0.1`,
			`"val_rmse":0.2,"test_rmse":0.25`, []string{"RMSE and MAE (best epoch 3: val RMSE 0.2000, test 0.2500)", "squared error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := filepath.Join(dir, "m.jsonl")
			var lines []string
			for e := 1; e <= 3; e++ {
				lines = append(lines, fmt.Sprintf(`{"type":"epoch","epoch":%d,"loss":0.6,"train_acc":0.1,"val_loss":0.5,"val_acc":0.1,"test_loss":0.5,"test_acc":0.1,`+tc.epoch+`}`, e, e+1, e+2))
			}
			lines = append(lines, `{"type":"summary","epochs":3,"best_epoch":3,"best_val_acc":0.1,"test_acc":0.1,"total_s":1,`+tc.summary+`}`)
			require.NoError(t, os.WriteFile(m, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			out := filepath.Join(dir, "p.svg")
			require.NoError(t, runPlot([]string{"--metrics", m, "--out", out}))
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			for _, w := range tc.want {
				assert.Contains(t, string(data), w)
			}
			assert.NotContains(t, string(data), ": accuracy")
		})
	}
}
