package dtrain

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/osx"
	"mpignn/partition"
	"mpignn/sample/dsample"
	"mpignn/train/metrics"
)

// ogbCitationLike writes, under dir, a small graph in OGB's raw layout
// with an ogbl-citation2-style split of its directed edges in OGB's own
// files, split/time/{train,valid,test}.pt written by real PyTorch (valid
// and test with k stored negatives per positive, uniform over all nodes
// as OGB's), and returns the test positives and their negatives. The
// training edges are raw/edge.csv.gz, as in OGB's zips.
func ogbCitationLike(t *testing.T, dir string, k int) (src, dst, neg []int64) {
	t.Helper()
	d := synthDataset(21, 200, 5, 3)
	r := rand.New(rand.NewPCG(21, 5))
	type set struct{ src, dst, neg []int64 }
	var sets [3]set // train, valid, test
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			s := 0
			if x := r.Float64(); x < 0.1 {
				s = 1
			} else if x < 0.2 {
				s = 2
			}
			sets[s].src, sets[s].dst = append(sets[s].src, u), append(sets[s].dst, v)
			if s > 0 {
				for range k {
					sets[s].neg = append(sets[s].neg, r.Int64N(d.NumNodes))
				}
			}
		}
	}
	require.NoError(t, graph.WriteOGB(dir, d, sets[0].src, sets[0].dst))
	list := func(xs []int64) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = strconv.FormatInt(x, 10)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	sd := filepath.Join(dir, "split", "time")
	require.NoError(t, os.MkdirAll(sd, 0o755))
	var py strings.Builder
	py.WriteString("import torch\nL = lambda xs: torch.tensor(xs, dtype=torch.long)\n")
	for i, name := range []string{"train", "valid", "test"} {
		s := sets[i]
		fmt.Fprintf(&py, "d = {'source_node': L(%s), 'target_node': L(%s)}\n", list(s.src), list(s.dst))
		if i > 0 {
			fmt.Fprintf(&py, "d['target_node_neg'] = L(%s).view(-1, %d)\n", list(s.neg), k)
		}
		fmt.Fprintf(&py, "torch.save(d, %q)\n", filepath.Join(sd, name+".pt"))
	}
	out, err := exec.Command("/usr/bin/python3", "-c", py.String()).CombinedOutput()
	require.NoError(t, err, "python: %s", out)
	return sets[2].src, sets[2].dst, sets[2].neg
}

// TestLinkOGBStoredNegatives is the end-to-end check of OGB's evaluation:
// a dataset in OGB's layout with .pt split files (citation2-like, 20
// stored negatives per positive) is read and partitioned, a link model
// trains one epoch, and the test MRR it reports equals the MRR recomputed
// from predict's scores of the test positives and OGB's stored negatives
// taken from the split file's own arrays (not from the partition).
func TestLinkOGBStoredNegatives(t *testing.T) {
	c := comm(t)
	const k = 20
	// Every rank asks (same machine, same answer), so all skip together.
	if exec.Command("/usr/bin/python3", "-c", "import torch").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import torch (scripts/deps.sh installs python3-torch): no OGB .pt split to read")
	}
	tmp := sharedDir(t, c)
	data, parts := filepath.Join(tmp, "ogbl-tiny"), filepath.Join(tmp, "parts")
	var src, dst, neg []int64
	var err error
	if c.Rank() == 0 {
		src, dst, neg = ogbCitationLike(t, data, k)
		lo := &partition.LinkOptions{Split: "time"}
		var d *graph.Dataset
		if d, err = graph.ReadOGB(data, lo.ReadOptions(graph.ReadOptions{Undirected: true, DropSelfLoops: true, Dedup: true})); err == nil {
			var m *partition.Meta
			m, err = partition.WriteDataset(parts, d, c.Size(), partition.Options{Method: partition.MethodRandom, Seed: 3, Undirected: true, Link: lo})
			if err == nil && (!m.Link.StoredNegs || m.Link.NegsPerPos != k) {
				err = fmt.Errorf("partition stored_negs %v, K %d: want OGB's %d", m.Link.StoredNegs, m.Link.NegsPerPos, k)
			}
		}
	}
	require.NoError(t, collectives.Agree(c, err))

	cfg := testTrainConfig(c, parts, 0)
	cfg.Task, cfg.Link.NegRatio = TaskLink, 1
	cfg.Loader.EvalFanouts = []int{-1, -1} // the whole neighborhood, as predict's Full
	cfg.Run.Epochs = 1
	cfg.Run.CheckpointDir = filepath.Join(tmp, "ck")
	res, err := Train(c, cfg)
	require.NoError(t, err)
	require.NotNil(t, res.Summary.TestMRR)
	reported := *res.Summary.TestMRR

	// The pairs: each test positive, then its K stored negatives.
	pairs, scores := filepath.Join(tmp, "pairs.csv"), filepath.Join(tmp, "scores.csv")
	if c.Rank() == 0 {
		var b strings.Builder
		b.WriteString("src,dst\n")
		for i := range src {
			fmt.Fprintf(&b, "%d,%d\n", src[i], dst[i])
			for _, w := range neg[i*k : (i+1)*k] {
				fmt.Fprintf(&b, "%d,%d\n", src[i], w)
			}
		}
		err = osx.WriteFileAtomic(pairs, []byte(b.String()))
	}
	require.NoError(t, collectives.Agree(c, err))
	_, err = PredictLink(c, EmbedConfig{PartDir: parts, CheckpointDir: cfg.Run.CheckpointDir, Out: scores, Pairs: pairs, Full: true, Batch: 16,
		Store: dsample.StoreOptions{Transport: collectives.TransportAuto}})
	require.NoError(t, err)
	if c.Rank() != 0 {
		return
	}
	raw, err := os.ReadFile(scores)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")[1:]
	require.Len(t, lines, len(src)*(k+1))
	var pos, negs []float32
	for i, l := range lines {
		f := strings.Split(l, ",")
		s, err := strconv.ParseFloat(f[2], 32)
		require.NoError(t, err)
		if i%(k+1) == 0 {
			pos = append(pos, float32(s))
		} else {
			negs = append(negs, float32(s))
		}
	}
	rf, err := metrics.MRR(pos, negs, k)
	require.NoError(t, err)
	t.Logf("test MRR: reported %.6f, recomputed from predict's scores of OGB's negatives %.6f (%d positives, %d negatives each)", reported, rf.MRR, len(pos), k)
	// Layer-wise (predict) and sampled full-neighborhood (train)
	// embeddings differ in the last float bits only, as in TestLinkCLI.
	require.InDelta(t, rf.MRR, reported, 6e-5)
}
