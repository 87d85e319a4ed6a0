package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/train"
	"mpignn/train/optim"
)

// TestExportCLI: export writes the state dict and its sidecar from a real
// checkpoint file (best weights unless --final), and every bad invocation
// ends with one line naming the flag or file, and no output.
func TestExportCLI(t *testing.T) {
	dir := t.TempDir()
	cfg := train.Config{Arch: train.ArchGCN, InDim: 4, Hidden: 6, Classes: 3, Layers: 2, Dropout: 0.5, InputDropout: 0.5}
	p, err := train.InitParams(cfg, 1)
	require.NoError(t, err)
	best := make([]float32, len(p))
	for i := range best {
		best[i] = p[i] + 1
	}
	n := len(p)
	ck := filepath.Join(dir, "ck")
	require.NoError(t, train.SaveCheckpoint(ck, &train.Checkpoint{Model: cfg, Adam: optim.DefaultAdam(0.01, 0), Seed: 1,
		Params: p, M: make([]float32, n), V: make([]float32, n), BestParams: best, RunInfo: []byte(`{"row_norm":true}`)}))

	for _, tc := range []struct {
		name  string
		extra []string
		want  []float32
		tag   string
	}{
		{"best", nil, best, "best"},
		{"final", []string{"--final"}, p, "final"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".safetensors")
			msg, code := runCLI(t, append([]string{"export", "--checkpoint", ck, "--out", out}, tc.extra...)...)
			require.Equal(t, 0, code, msg)
			got, err := train.LoadPyG(out, cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			b, err := os.ReadFile(filepath.Join(dir, tc.name+".json"))
			require.NoError(t, err)
			var side pygSidecar
			require.NoError(t, json.Unmarshal(b, &side))
			assert.Equal(t, "torch_geometric.nn.models.GCN", side.Model.Class)
			assert.Equal(t, map[string]any{"in_channels": 4.0, "hidden_channels": 6.0, "num_layers": 2.0, "out_channels": 3.0, "dropout": 0.5}, side.Model.Kwargs)
			assert.True(t, side.RowNormalize)
			assert.Equal(t, tc.tag, side.Weights)
			assert.Equal(t, tc.name+".safetensors", side.StateDict)
			assert.NotEmpty(t, side.Model.Notes, "the GCN first-layer difference is stated")
		})
	}

	// Flag mistakes exit 2, a missing checkpoint 1.
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"no out", []string{"--checkpoint", ck}, "--checkpoint and --out are required", 2},
		{"suffix", []string{"--checkpoint", ck, "--out", filepath.Join(dir, "m.pt")}, "must end in .safetensors", 2},
		{"format", []string{"--checkpoint", ck, "--out", filepath.Join(dir, "m.safetensors"), "--format", "dgl"}, `--format "dgl"`, 2},
		{"no checkpoint", []string{"--checkpoint", filepath.Join(dir, "nope"), "--out", filepath.Join(dir, "m.safetensors")}, filepath.Join(dir, "nope"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, code := runCLI(t, append([]string{"export"}, tc.args...)...)
			assert.Equal(t, tc.code, code, msg)
			assert.Contains(t, msg, tc.want)
			assert.NotContains(t, msg, "goroutine", "no panic trace")
			_, err := os.Stat(filepath.Join(dir, "m.safetensors"))
			assert.True(t, os.IsNotExist(err), "no output on error")
		})
	}
}

// TestPredictLogitsFlags: --logits is for node tasks and .npy outputs; both
// mistakes are refused before MPI starts, as flag mistakes (exit code 2).
func TestPredictLogitsFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", filepath.Join(dir, "l.csv")}, "--logits: --out " + filepath.Join(dir, "l.csv") + " must end in .npy"},
		{[]string{"--out", filepath.Join(dir, "l.npy"), "--task", "link", "--pairs", "p.csv"}, "--logits applies to --task node and multilabel only"},
	} {
		msg, code := runCLI(t, append([]string{"predict", "--parts", dir, "--checkpoint", dir, "--logits"}, tc.args...)...)
		assert.Equal(t, 2, code, msg)
		assert.Contains(t, msg, tc.want)
	}
}
