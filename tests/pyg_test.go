package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// torchPython returns a python3 that imports torch and numpy (Debian's
// python3-torch lives under /usr/bin, which a pyenv python3 earlier on PATH
// would hide), or skips the test.
func torchPython(t *testing.T) string {
	t.Helper()
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import torch, numpy").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with torch and numpy (scripts/deps.sh installs python3-torch python3-numpy): the PyG export is not checked in PyTorch")
	return ""
}

// TestPyGExportCora trains sage, gcn and gat on Cora under mpirun (2 ranks,
// full neighbourhoods), exports each with `mpignn export`, and rebuilds it
// in plain PyTorch from the state dict and its JSON sidecar with PyG's
// names, shapes and layer equations (scripts/pyg_check.py): the full-graph
// logits must equal `predict --logits` within 1e-4. Then `train --init-from
// FILE --epochs 0` followed by a second export must give the same bytes,
// and a state dict of another architecture must be refused with its name.
func TestPyGExportCora(t *testing.T) {
	py := torchPython(t)
	data := coraDir()
	if _, err := os.Stat(filepath.Join(data, "raw", "edge.csv.gz")); err != nil {
		t.Skipf("Cora not found at %s (%v): set MPIGNN_DATA to the folder holding cora/", data, err)
	}
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts := filepath.Join(work, "parts")
	msg, err := exec.Command(bin, "partition", "--data", data, "--split", "public", "--parts", "2", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition:\n%s", msg)

	diffRe := regexp.MustCompile(`max abs logit difference ([0-9.e+-]+)`)
	cases := []struct {
		model string
		extra []string
	}{
		{"sage", nil},
		{"gcn", nil},
		{"gat", []string{"--heads", "4", "--attn-dropout", "0.3"}},
	}
	states := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			dir := filepath.Join(work, tc.model)
			ck, st, logits := filepath.Join(dir, "ck"), filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "logits.npy")
			train := append([]string{bin, "train", "--parts", parts, "--model", tc.model, "--fanout", "-1,-1",
				"--hidden", "16", "--epochs", "5", "--lr", "0.05", "--seed", "2", "--quiet"}, tc.extra...)
			res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: append(train, "--checkpoint", ck)})
			require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 20))
			out, err := exec.Command(bin, "export", "--checkpoint", ck, "--out", st).CombinedOutput()
			require.NoError(t, err, "export:\n%s", out)
			states[tc.model] = st
			res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--parts", parts,
				"--checkpoint", ck, "--logits", "--out", logits}})
			require.NoError(t, res.Err, "predict --logits:\n%s", tail(res.Output, 20))

			out, err = exec.Command(py, filepath.Join(h.Root, "scripts", "pyg_check.py"), "--data", data,
				"--state", st, "--logits", logits, "--tol", "1e-4").CombinedOutput()
			t.Logf("%s", strings.TrimSpace(string(out)))
			require.NoError(t, err, "pyg_check.py:\n%s", out)
			m := diffRe.FindStringSubmatch(string(out))
			require.NotNil(t, m, "no difference line:\n%s", out)
			d, err := strconv.ParseFloat(m[1], 64)
			require.NoError(t, err)
			assert.LessOrEqual(t, d, 1e-4, "%s: PyTorch and mpignn logits differ", tc.model)

			// Round trip: import the exported state dict into a fresh
			// checkpoint and export it again.
			ck2, st2 := filepath.Join(dir, "ck2"), filepath.Join(dir, "again.safetensors")
			res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: append(train, "--checkpoint", ck2, "--init-from", st, "--epochs", "0")})
			require.NoError(t, res.Err, "train --init-from:\n%s", tail(res.Output, 20))
			out, err = exec.Command(bin, "export", "--checkpoint", ck2, "--out", st2).CombinedOutput()
			require.NoError(t, err, "export:\n%s", out)
			a, err := os.ReadFile(st)
			require.NoError(t, err)
			b, err := os.ReadFile(st2)
			require.NoError(t, err)
			assert.Equal(t, a, b, "export -> --init-from -> export changed the bytes")
		})
	}

	// A GAT state dict into a GCN run: refused, naming the file and tensor.
	if states["gat"] == "" {
		return
	}
	res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "train", "--parts", parts, "--model", "gcn",
		"--fanout", "-1,-1", "--hidden", "16", "--epochs", "1", "--quiet", "--init-from", states["gat"]}})
	require.Error(t, res.Err, "a GAT state dict loaded into GCN")
	assert.Contains(t, res.Output, "--init-from "+states["gat"])
	assert.Contains(t, res.Output, "att_")
}
