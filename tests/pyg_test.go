package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// pygModel is one model of a PyG export check: its train flags and, after
// exportAndPredict, its state dict and logits.
type pygModel struct {
	model string
	name  string // its directory, when the model is there more than once ("" = model)
	extra []string
	// tol bounds the max abs logit difference (0: 1e-4); the issue asks
	// new layers for 1e-5.
	tol    float64
	ck     string
	state  string
	logits string
}

// dir is the model's directory under work.
func (m *pygModel) dir(work string) string {
	if m.name != "" {
		return filepath.Join(work, m.name)
	}
	return filepath.Join(work, m.model)
}

// label is the model's name in pyg_check.py's difference lines: the
// architecture, sage with its aggregator unless that is mean (sage-max).
func (m *pygModel) label() string {
	for i, a := range m.extra {
		if a == "--aggr" && i+1 < len(m.extra) && m.extra[i+1] != "mean" {
			return m.model + "-" + m.extra[i+1]
		}
	}
	return m.model
}

// exportAndPredict trains m on parts (2 ranks, full neighbourhoods),
// exports it and writes its logits with predict --logits.
func exportAndPredict(t *testing.T, bin, parts, dir string, m *pygModel) []string {
	t.Helper()
	m.ck, m.state, m.logits = filepath.Join(dir, "ck"), filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "logits.npy")
	train := append([]string{bin, "train", "--parts", parts, "--model", m.model, "--fanout", "-1,-1",
		"--hidden", "16", "--epochs", "3", "--lr", "0.05", "--seed", "2", "--quiet"}, m.extra...)
	res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: append(train, "--checkpoint", m.ck)})
	require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 20))
	out, err := exec.Command(bin, "export", "--checkpoint", m.ck, "--out", m.state).CombinedOutput()
	require.NoError(t, err, "export:\n%s", out)
	res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--parts", parts,
		"--checkpoint", m.ck, "--logits", "--out", m.logits}})
	require.NoError(t, res.Err, "predict --logits:\n%s", tail(res.Output, 20))
	return train
}

// checkInPyTorch runs scripts/pyg_check.py over the models (one read of
// the dataset) and requires every model's max abs logit difference to be
// at most its tol (1e-4 unless set).
func checkInPyTorch(t *testing.T, py, data string, models []*pygModel, extra ...string) {
	t.Helper()
	args := append([]string{filepath.Join(h.Root, "scripts", "pyg_check.py"), "--data", data, "--tol", "1e-4"}, extra...)
	args = append(args, "--state")
	for _, m := range models {
		args = append(args, m.state)
	}
	args = append(args, "--logits")
	for _, m := range models {
		args = append(args, m.logits)
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	t.Logf("%s", strings.TrimSpace(string(out)))
	require.NoError(t, err, "pyg_check.py:\n%s", out)
	diffRe := regexp.MustCompile(`(?m)^([\w-]+): .*max abs logit difference ([0-9.e+-]+)`)
	tol := map[string]float64{}
	for _, m := range models {
		tol[m.label()] = 1e-4
		if m.tol != 0 {
			tol[m.label()] = m.tol
		}
	}
	found := map[string]bool{}
	for _, m := range diffRe.FindAllStringSubmatch(string(out), -1) {
		d, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		assert.LessOrEqual(t, d, tol[m[1]], "%s: PyTorch and mpignn logits differ", m[1])
		found[m[1]] = true
	}
	for _, m := range models {
		assert.True(t, found[m.label()], "no difference line for %s:\n%s", m.label(), out)
	}
}

// TestPyGExportCora trains sage, gcn, gat, gatv2 and gin (ε fixed, then
// learnable: PyG's eps buffer and Parameter) on Cora under mpirun (2 ranks,
// full neighbourhoods), exports each with `mpignn export`, and rebuilds it
// in plain PyTorch from the state dict and its JSON sidecar with PyG's
// names, shapes and layer equations (scripts/pyg_check.py): the full-graph
// logits must equal `predict --logits` within 1e-4 (gatv2: 1e-5). Then `train --init-from
// FILE --epochs 0` followed by a second export must give the same bytes,
// and a state dict of another architecture must be refused with its name.
func TestPyGExportCora(t *testing.T) {
	py := torchPython(t)
	data := needDataset(t, "cora", "raw", "edge.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts := filepath.Join(work, "parts")
	msg, err := exec.Command(bin, "partition", "--data", data, "--split", "public", "--parts", "2", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition:\n%s", msg)

	models := []*pygModel{
		{model: "sage"},
		{model: "gcn"},
		{model: "gat", extra: []string{"--heads", "4", "--attn-dropout", "0.3"}},
		// Between the layers: BasicGNN's norm and jk, and the residual
		// module of pyg_check.py (GCN's through its first-layer mean).
		{model: "sage", name: "sage-between", extra: []string{"--residual", "--norm", "layer", "--jk", "cat"}},
		{model: "gat", name: "gat-jk", extra: []string{"--heads", "4", "--jk", "max"}},
		{model: "gcn", name: "gcn-between", extra: []string{"--residual", "--norm", "layer", "--jk", "last"}},
		{model: "sage", name: "sage-max", extra: []string{"--aggr", "max"}},
		{model: "sage", name: "sage-sum", extra: []string{"--aggr", "sum"}},
		{model: "sage", name: "sage-pool", extra: []string{"--aggr", "pool"}},
		// GIN with ε fixed (PyG's eps buffer) and learnable (a Parameter).
		{model: "gin", extra: []string{"--eps", "0.25"}},
		{model: "gin", name: "gin-train-eps", extra: []string{"--train-eps", "--eps", "0.1"}},
		{model: "gatv2", extra: []string{"--heads", "4", "--attn-dropout", "0.3"}, tol: 1e-5},
	}
	for _, m := range models {
		dir := m.dir(work)
		train := exportAndPredict(t, bin, parts, dir, m)
		checkRoundTrip(t, bin, train, m, dir)
	}
	checkInPyTorch(t, py, data, models)

	// The other direction: a model initialised in PyTorch and saved as a
	// PyG user would (tensors in another order, no metadata, GATConv under
	// PyG <= 2.4's lin_src/lin_dst names) is evaluated by mpignn
	// (--init-from, --epochs 0, predict --logits) with PyTorch's logits.
	var random []*pygModel
	for i, m := range models {
		r := &pygModel{model: m.model, name: m.name, extra: m.extra, tol: m.tol, ck: filepath.Join(m.dir(work), "ck-random"),
			state: filepath.Join(m.dir(work), "random.safetensors"), logits: filepath.Join(m.dir(work), "random.npy")}
		out, err := exec.Command(py, filepath.Join(h.Root, "scripts", "pyg_check.py"), "--data", data, "--state", m.state,
			"--make-random", r.state, "--seed", strconv.Itoa(i)).CombinedOutput()
		require.NoError(t, err, "pyg_check.py --make-random:\n%s", out)
		args := append([]string{bin, "train", "--parts", parts, "--model", m.model, "--fanout", "-1,-1", "--hidden", "16",
			"--epochs", "0", "--quiet", "--checkpoint", r.ck, "--init-from", r.state}, m.extra...)
		res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: args})
		require.NoError(t, res.Err, "train --init-from a PyTorch file:\n%s", tail(res.Output, 20))
		res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--parts", parts,
			"--checkpoint", r.ck, "--logits", "--out", r.logits}})
		require.NoError(t, res.Err, "predict --logits:\n%s", tail(res.Output, 20))
		random = append(random, r)
	}
	checkInPyTorch(t, py, data, random)

	// predict --gcn-norm sym evaluates a GCN with GCNConv's first layer
	// too: the PyTorch-initialised GCN's logits are then pure GCNConv's.
	g := *random[1]
	g.logits = filepath.Join(filepath.Dir(g.state), "random-sym.npy")
	res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--parts", parts,
		"--checkpoint", g.ck, "--logits", "--gcn-norm", "sym", "--out", g.logits}})
	require.NoError(t, res.Err, "predict --gcn-norm sym:\n%s", tail(res.Output, 20))
	checkInPyTorch(t, py, data, []*pygModel{&g}, "--gcn-norm", "sym")

	// A GAT state dict into a GCN run: refused, naming the file and tensor.
	res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "train", "--parts", parts, "--model", "gcn",
		"--fanout", "-1,-1", "--hidden", "16", "--epochs", "1", "--quiet", "--init-from", models[2].state}})
	require.Error(t, res.Err, "a GAT state dict loaded into GCN")
	assert.Contains(t, res.Output, "--init-from "+models[2].state)
	assert.Contains(t, res.Output, "att_")

	// A GIN whose ε was the constant 0.25 into a GIN run with ε = 0: the
	// eps buffer disagrees with the model, refused by name. (Found by
	// model, not position: the list grows with every architecture.)
	gin := models[slices.IndexFunc(models, func(m *pygModel) bool { return m.model == "gin" && m.name == "" })]
	res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "train", "--parts", parts, "--model", "gin",
		"--fanout", "-1,-1", "--hidden", "16", "--epochs", "1", "--quiet", "--init-from", gin.state}})
	require.Error(t, res.Err, "a GIN state dict with eps 0.25 loaded into a GIN with eps 0")
	assert.Contains(t, res.Output, "tensor convs.0.eps is [0.25], the gin model's eps 0 (a constant: train_eps false) holds [0]")
}

// TestPyGExportDBLP does the same for the heterogeneous models on DBLP:
// HeteroSAGE (HeteroConv of SAGEConv per edge type) and R-GCN with bases
// (RGCNConv), each with the conference type's learnable embedding exported
// as a torch.nn.Embedding; the logits of every author must agree, the
// round trip through --init-from (embeddings included) must keep the
// bytes, and a state dict of the other model is refused.
func TestPyGExportDBLP(t *testing.T) {
	py := torchPython(t)
	data := needDataset(t, "dblp", "raw", "num-node-dict.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts := filepath.Join(work, "parts")
	msg, err := exec.Command(bin, "partition", "--data", data, "--parts", "2", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition:\n%s", msg)
	models := []*pygModel{{model: "hsage"}, {model: "rgcn", extra: []string{"--bases", "2"}}}
	var trains [][]string
	for _, m := range models {
		dir := filepath.Join(work, m.model)
		trains = append(trains, exportAndPredict(t, bin, parts, dir, m))
		b, err := os.ReadFile(strings.TrimSuffix(m.state, ".safetensors") + ".json")
		require.NoError(t, err)
		assert.Contains(t, string(b), `"conference": [`, "the learnable conference embedding is exported")
	}
	checkInPyTorch(t, py, data, models)

	// Round trip of hsage, embeddings included.
	m := models[0]
	checkRoundTrip(t, bin, trains[0], m, work)

	// The HeteroSAGE state dict into an R-GCN run: refused by name.
	res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: append(trains[1], "--init-from", m.state)})
	require.Error(t, res.Err, "a HeteroSAGE state dict loaded into R-GCN")
	assert.Contains(t, res.Output, "the rgcn model needs tensors missing from the state dict: convs.0.root")
}

// TestPyGExportDBLPHGB does the same for homogeneous architectures on
// DBLP, HGB style (typed input projections, then GCN or GAT over the typed
// blocks ignoring the types): the export is lins.<type> plus the
// architecture's own convs, which scripts/pyg_check.py runs over the
// homogenized graph (node types concatenated in node_types order); every
// author's logits must agree, and the round trip must keep the bytes.
func TestPyGExportDBLPHGB(t *testing.T) {
	py := torchPython(t)
	data := needDataset(t, "dblp", "raw", "num-node-dict.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts := filepath.Join(work, "parts")
	msg, err := exec.Command(bin, "partition", "--data", data, "--parts", "2", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition:\n%s", msg)
	models := []*pygModel{{model: "gcn"}, {model: "gat", extra: []string{"--heads", "2"}}}
	var trains [][]string
	for _, m := range models {
		trains = append(trains, exportAndPredict(t, bin, parts, filepath.Join(work, m.model), m))
		b, err := os.ReadFile(strings.TrimSuffix(m.state, ".safetensors") + ".json")
		require.NoError(t, err)
		assert.Contains(t, string(b), `"class": "HGBHomogeneous"`)
		assert.Contains(t, string(b), `"conference": [`, "the learnable conference embedding is exported")
	}
	checkInPyTorch(t, py, data, models)
	checkRoundTrip(t, bin, trains[1], models[1], work)
}

// TestPyGExportLinkDecoder: a link model's MLP decoder leaves as its own
// module (OGB's LinkPredictor under "decoder."): fed mpignn's node
// embeddings (embed), it must give predict --task link's scores and
// probabilities within 1e-4.
func TestPyGExportLinkDecoder(t *testing.T) {
	py := torchPython(t)
	data := needDataset(t, "cora", "raw", "edge.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	work := t.TempDir()
	parts, ck := filepath.Join(work, "parts"), filepath.Join(work, "ck")
	st, emb := filepath.Join(work, "link.safetensors"), filepath.Join(work, "emb.npy")
	pairs, scores := filepath.Join(work, "pairs.csv"), filepath.Join(work, "scores.csv")
	msg, err := exec.Command(bin, "partition", "--data", data, "--parts", "2", "--link-split", "random:0.85,0.05,0.10", "--out", parts).CombinedOutput()
	require.NoError(t, err, "partition:\n%s", msg)
	res := h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "train", "--task", "link", "--parts", parts,
		"--fanout", "-1,-1", "--batch", "512", "--hidden", "16", "--dropout", "0", "--weight-decay", "0", "--decoder", "mlp",
		"--epochs", "3", "--quiet", "--checkpoint", ck}})
	require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 20))
	out, err := exec.Command(bin, "export", "--checkpoint", ck, "--out", st).CombinedOutput()
	require.NoError(t, err, "export:\n%s", out)
	res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "embed", "--parts", parts, "--checkpoint", ck, "--out", emb}})
	require.NoError(t, res.Err, "embed:\n%s", tail(res.Output, 20))
	require.NoError(t, os.WriteFile(pairs, []byte("0,633\n5,100\n2000,17\n42,42\n2707,0\n1,2\n"), 0o644))
	res = h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: []string{bin, "predict", "--task", "link", "--parts", parts,
		"--checkpoint", ck, "--pairs", pairs, "--out", scores}})
	require.NoError(t, res.Err, "predict --task link:\n%s", tail(res.Output, 20))
	out, err = exec.Command(py, filepath.Join(h.Root, "scripts", "pyg_check.py"), "--data", data, "--state", st,
		"--embeddings", emb, "--scores", scores, "--tol", "1e-4").CombinedOutput()
	t.Logf("%s", strings.TrimSpace(string(out)))
	require.NoError(t, err, "pyg_check.py:\n%s", out)
	assert.Contains(t, string(out), "decoder mlp: 6 pairs")
}

// checkRoundTrip imports m's exported state dict into a fresh checkpoint
// under dir (train --init-from --epochs 0 with the training flags train)
// and exports it again: the bytes must not change.
func checkRoundTrip(t *testing.T, bin string, train []string, m *pygModel, dir string) {
	t.Helper()
	ck2, st2 := filepath.Join(dir, "ck2"), filepath.Join(dir, "again.safetensors")
	res := h.MPI(Job{Ranks: 2, Timeout: time.Minute, Args: append(train, "--checkpoint", ck2, "--init-from", m.state, "--epochs", "0")})
	require.NoError(t, res.Err, "train --init-from:\n%s", tail(res.Output, 20))
	// Nothing was trained or evaluated: the final line says what was
	// done rather than accuracies of 0 (issue 34).
	assert.Regexp(t, `final: epochs=0 weights=[0-9a-f]+( embeddings=[0-9a-f]+)?: imported `+regexp.QuoteMeta(m.state)+`, not trained or evaluated; predict and embed --checkpoint `+regexp.QuoteMeta(ck2)+` evaluate it`, res.Output)
	assert.NotContains(t, res.Output, "best_val_acc")
	out, err := exec.Command(bin, "export", "--checkpoint", ck2, "--out", st2).CombinedOutput()
	require.NoError(t, err, "export:\n%s", out)
	a, err := os.ReadFile(m.state)
	require.NoError(t, err)
	b, err := os.ReadFile(st2)
	require.NoError(t, err)
	assert.Equal(t, a, b, "%s: export -> --init-from -> export changed the bytes", m.model)
}

// TestPyGExportHeteroEdgeFeat: HeteroSAGE (HeteroConv of GeneralConv with
// edge_dim) and R-GCN (with bases; scripts/pyg_check.py's RGCNEdgeConv)
// trained with relation edge features (partition --edge-feat, train
// --use-edge-feat) on a `gen --hetero` graph whose cites relation has an
// edge attribute: the export loaded into PyTorch, fed every edge with its
// attribute row, reproduces predict --logits within 1e-4.
func TestPyGExportHeteroEdgeFeat(t *testing.T) {
	py := torchPython(t)
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	parts := heteroEdgeData(t, bin)
	data := filepath.Join(filepath.Dir(parts[2]), "data")
	work := t.TempDir()
	models := []*pygModel{
		{model: "hsage", extra: []string{"--use-edge-feat"}},
		{model: "rgcn", extra: []string{"--use-edge-feat", "--bases", "2"}},
	}
	for _, m := range models {
		exportAndPredict(t, bin, parts[2], filepath.Join(work, m.model), m)
		b, err := os.ReadFile(strings.TrimSuffix(m.state, ".safetensors") + ".json")
		require.NoError(t, err)
		assert.Contains(t, string(b), `"edge_dim": 1`)
	}
	checkInPyTorch(t, py, data, models)
}
