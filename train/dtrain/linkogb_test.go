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

// ogbSplit is the test split of an OGB-layout dataset written by
// writeOGBLike: its positives and either k stored negatives per positive
// (negDst) or the shared negative pairs (poolSrc, poolDst).
type ogbSplit struct {
	src, dst         []int64
	k                int
	negDst           []int64
	poolSrc, poolDst []int64
}

// writeOGBLike writes, under dir, a small graph in OGB's raw layout with a
// split of its edges in OGB's own files, split/time/{train,valid,test}.pt
// written by real PyTorch: with k > 0 in ogbl-citation2's layout (valid
// and test with k stored negatives per positive, uniform over all nodes as
// OGB's), else in ogbl-collab's (edge, weight, year; valid and test with
// shared negative pairs edge_neg, more in valid than in test). The training
// edges are raw/edge.csv.gz, as in OGB's zips. It returns the test split.
func writeOGBLike(t *testing.T, dir string, k int) ogbSplit {
	t.Helper()
	d := synthDataset(21, 200, 5, 3)
	r := rand.New(rand.NewPCG(21, 5))
	var sets [3]ogbSplit // train, valid, test
	var years [3][]int64
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			if k == 0 && u > v {
				continue // collab lists each undirected pair once
			}
			s := 0
			if x := r.Float64(); x < 0.1 {
				s = 1
			} else if x < 0.2 {
				s = 2
			}
			e := &sets[s]
			e.src, e.dst = append(e.src, u), append(e.dst, v)
			years[s] = append(years[s], 2000+int64(s)*10+r.Int64N(5))
			if s > 0 && k > 0 {
				for range k {
					e.negDst = append(e.negDst, r.Int64N(d.NumNodes))
				}
			}
		}
	}
	for s := 1; s <= 2 && k == 0; s++ {
		for range 160 - 40*s {
			sets[s].poolSrc = append(sets[s].poolSrc, r.Int64N(d.NumNodes))
			sets[s].poolDst = append(sets[s].poolDst, r.Int64N(d.NumNodes))
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
		e := sets[i]
		if k > 0 {
			fmt.Fprintf(&py, "d = {'source_node': L(%s), 'target_node': L(%s)}\n", list(e.src), list(e.dst))
			if i > 0 {
				fmt.Fprintf(&py, "d['target_node_neg'] = L(%s).view(-1, %d)\n", list(e.negDst), k)
			}
		} else {
			fmt.Fprintf(&py, "d = {'edge': torch.stack([L(%s), L(%s)], 1), 'weight': torch.ones(%d, dtype=torch.long), 'year': L(%s)}\n",
				list(e.src), list(e.dst), len(e.src), list(years[i]))
			if i > 0 {
				fmt.Fprintf(&py, "d['edge_neg'] = torch.stack([L(%s), L(%s)], 1)\n", list(e.poolSrc), list(e.poolDst))
			}
		}
		fmt.Fprintf(&py, "torch.save(d, %q)\n", filepath.Join(sd, name+".pt"))
	}
	out, err := exec.Command("/usr/bin/python3", "-c", py.String()).CombinedOutput()
	require.NoError(t, err, "python: %s", out)
	test := sets[2]
	test.k = k
	return test
}

// TestLinkOGBStoredNegatives is the end-to-end check of OGB's evaluation:
// a dataset in OGB's layout with .pt split files is read and partitioned,
// a link model trains one epoch, and the figures it reports equal the ones
// recomputed from predict's scores of the test positives and OGB's stored
// negatives, taken from the split's own arrays (not from the partition):
// citation2-like (20 negatives per positive) the test MRR, collab-like
// (shared negative pairs) the test Hits@10 and Hits@50.
func TestLinkOGBStoredNegatives(t *testing.T) {
	c := comm(t)
	// Every rank asks (same machine, same answer), so all skip together.
	if exec.Command("/usr/bin/python3", "-c", "import torch").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import torch (scripts/deps.sh installs python3-torch): no OGB .pt split to read")
	}
	for _, layout := range []struct {
		name string
		k    int
	}{{"citation2", 20}, {"collab", 0}} {
		t.Run(layout.name, func(t *testing.T) {
			testLinkOGB(t, c, layout.k)
		})
	}
}

func testLinkOGB(t *testing.T, c *collectives.Comm, k int) {
	tmp := sharedDir(t, c)
	data, parts := filepath.Join(tmp, "ogbl-tiny"), filepath.Join(tmp, "parts")
	var test ogbSplit
	var err error
	if c.Rank() == 0 {
		test = writeOGBLike(t, data, k)
		lo := &partition.LinkOptions{Split: "time"}
		var d *graph.Dataset
		if d, err = graph.ReadOGB(data, lo.ReadOptions(graph.ReadOptions{Undirected: true, DropSelfLoops: true, Dedup: true})); err == nil {
			var m *partition.Meta
			m, err = partition.WriteDataset(parts, d, c.Size(), partition.Options{Method: partition.MethodRandom, Seed: 3, Undirected: true, Link: lo})
			switch {
			case err != nil:
			case k > 0 && (!m.Link.StoredNegs || m.Link.NegsPerPos != k):
				err = fmt.Errorf("partition stored_negs %v, K %d: want OGB's %d", m.Link.StoredNegs, m.Link.NegsPerPos, k)
			case k == 0 && (!m.Link.StoredPool || m.Link.PoolSize("test") != int64(len(test.poolSrc))):
				err = fmt.Errorf("partition stored_pool %v, test pool %d: want OGB's %d", m.Link.StoredPool, m.Link.PoolSize("test"), len(test.poolSrc))
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
	s := res.Summary
	require.True(t, s.TestMRR != nil && s.TestHits10 != nil && s.TestHits50 != nil)

	// The pairs: each test positive, then its K stored negatives; or the
	// positives, then the shared negatives.
	pairs, scores := filepath.Join(tmp, "pairs.csv"), filepath.Join(tmp, "scores.csv")
	if c.Rank() == 0 {
		var b strings.Builder
		b.WriteString("src,dst\n")
		for i := range test.src {
			fmt.Fprintf(&b, "%d,%d\n", test.src[i], test.dst[i])
			for _, w := range test.negDst[i*k : (i+1)*k] {
				fmt.Fprintf(&b, "%d,%d\n", test.src[i], w)
			}
		}
		for i := range test.poolSrc {
			fmt.Fprintf(&b, "%d,%d\n", test.poolSrc[i], test.poolDst[i])
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
	require.Len(t, lines, len(test.src)*(k+1)+len(test.poolSrc))
	var pos, neg, pool []float32
	for i, l := range lines {
		f := strings.Split(l, ",")
		x, err := strconv.ParseFloat(f[2], 32)
		require.NoError(t, err)
		switch {
		case i >= len(test.src)*(k+1):
			pool = append(pool, float32(x))
		case i%(k+1) == 0:
			pos = append(pos, float32(x))
		default:
			neg = append(neg, float32(x))
		}
	}
	// Layer-wise (predict) and sampled full-neighborhood (train)
	// embeddings differ in the last float bits only, as in TestLinkCLI.
	if k > 0 {
		rf, err := metrics.MRR(pos, neg, k)
		require.NoError(t, err)
		t.Logf("test MRR: reported %.6f, recomputed from predict's scores of OGB's negatives %.6f (%d positives, %d negatives each)", *s.TestMRR, rf.MRR, len(pos), k)
		require.InDelta(t, rf.MRR, *s.TestMRR, 6e-5)
		return
	}
	h10, h50 := metrics.HitsAtK(pos, pool, 10), metrics.HitsAtK(pos, pool, 50)
	t.Logf("test Hits@10, @50: reported %.6f %.6f, recomputed from predict's scores of OGB's shared negatives %.6f %.6f (%d positives, %d negative pairs)",
		*s.TestHits10, *s.TestHits50, h10, h50, len(pos), len(pool))
	require.InDeltaSlice(t, []float64{h10, h50}, []float64{*s.TestHits10, *s.TestHits50}, 6e-5)
}
