package dtrain

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/osx"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/optim"
)

// writeLinkParts partitions d into n parts with a random link split (rank 0
// writes, every rank gets the path).
func writeLinkParts(t *testing.T, c *collectives.Comm, d *graph.Dataset, n int) string {
	t.Helper()
	dir := filepath.Join(sharedDir(t, c), fmt.Sprintf("link-parts-%d", n))
	var err error
	if c.Rank() == 0 {
		_, err = partition.WriteDataset(dir, d, n, partition.Options{
			Method: partition.MethodMetis, Seed: 3, Undirected: true,
			Link: &partition.LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: 20, Pool: 300},
		})
	}
	require.NoError(t, collectives.Agree(c, err))
	return dir
}

// refLinkSource is the single-process reference of the link loader: the
// whole training graph in original ids, the same global batches of
// training edges, the same keyed negatives, the same exclusion of the
// step's positive edges, sampled by sample.Reference.
type refLinkSource struct {
	in       *graph.CSR // training in-adjacency by original id, canonical rows
	feat     []float32  // by original id
	dim      int
	n        int64
	edges    map[int64][3]int64 // canonical id -> src, dst (orig)
	ids      []int64
	seed     uint64
	k        int
	fanouts  []int
	G        int
	ref      sample.Reference
	noExclud bool
}

// newRefLinkSource reads every part of dir (each rank reads them all).
func newRefLinkSource(t *testing.T, dir string, seed uint64, k int, fanouts []int, G int) *refLinkSource {
	t.Helper()
	m, err := partition.LoadMeta(dir)
	require.NoError(t, err)
	n := m.NumNodes
	s := &refLinkSource{n: n, dim: m.FeatDim, feat: make([]float32, n*int64(m.FeatDim)), edges: map[int64][3]int64{},
		seed: seed, k: k, fanouts: fanouts, G: G}
	rows := make([][]int64, n)
	for p := range m.NumParts {
		pt, err := partition.LoadWithMeta(dir, m, p)
		require.NoError(t, err)
		for i, o := range pt.Orig {
			rows[o] = pt.IndicesOrig[pt.Indptr[i]:pt.Indptr[i+1]]
			copy(s.feat[o*int64(s.dim):(o+1)*int64(s.dim)], pt.Feat[i*s.dim:(i+1)*s.dim])
		}
		tr := &pt.Link.Train
		for i := range tr.ID {
			s.edges[tr.ID[i]] = [3]int64{tr.SrcOrig[i], tr.DstOrig[i]}
			s.ids = append(s.ids, tr.ID[i])
		}
	}
	s.in = &graph.CSR{Indptr: []int64{0}}
	for _, r := range rows {
		s.in.Indices = append(s.in.Indices, r...)
		s.in.Indptr = append(s.in.Indptr, int64(len(s.in.Indices)))
	}
	s.ref.G = sample.CSRGraph{In: s.in}
	return s
}

func (s *refLinkSource) Steps(split string, epoch int) (int, error) {
	return sample.NumSteps(int64(len(s.ids)), s.G), nil
}

func (s *refLinkSource) Batch(split string, epoch, step int, b *sample.Batch) error {
	batches, err := sample.EpochBatches(s.seed, epoch, s.ids, s.G)
	if err != nil {
		return err
	}
	ids := batches[step]
	index := map[int64]int32{}
	b.Seeds, b.SeedsOrig, b.Pairs, b.PairLabels = nil, nil, nil, nil
	add := func(v int64) int32 {
		if j, ok := index[v]; ok {
			return j
		}
		index[v] = int32(len(b.Seeds))
		b.Seeds = append(b.Seeds, v)
		b.SeedsOrig = append(b.SeedsOrig, v)
		return index[v]
	}
	var src, dst []int64
	for _, id := range ids {
		e := s.edges[id]
		src, dst = append(src, e[0]), append(dst, e[1])
		u, v := add(e[0]), add(e[1])
		b.Pairs = append(b.Pairs, u, v)
		b.PairLabels = append(b.PairLabels, 1)
		for j := range s.k {
			w := add(dsample.NegativeOrig(s.seed, epoch, id, j, 0, s.n))
			b.Pairs = append(b.Pairs, u, w)
			b.PairLabels = append(b.PairLabels, 0)
		}
	}
	b.GlobalSeeds = len(ids) * (1 + s.k)
	s.ref.Exclude = nil
	if !s.noExclud {
		s.ref.Exclude = sample.NewEdgeSet(src, dst)
	}
	blocks, err := s.ref.Sample(b.Seeds, b.SeedsOrig, s.fanouts, sample.Key{Seed: s.seed, Epoch: epoch, Batch: step}, false)
	if err != nil {
		return err
	}
	b.Blocks = blocks
	b.X = b.X[:0]
	for _, v := range blocks[0].Orig {
		b.X = append(b.X, s.feat[v*int64(s.dim):(v+1)*int64(s.dim)]...)
	}
	return nil
}

// TestTrainLinkMatchesReference: link training on P ranks (per-rank batch
// 12/P edges) takes the same steps as the single-process reference with 12
// edges per step: the same loss at every step and the same final weights,
// for both decoders, with dropout, on both transports, with the step's
// edges excluded from message passing. The harness runs it for P = 1..4.
func TestTrainLinkMatchesReference(t *testing.T) {
	c := comm(t)
	if 12%c.Size() != 0 {
		t.Skipf("global batch 12 does not split over %d ranks", c.Size())
	}
	d := synthDataset(8, 300, 6, 3)
	dir := writeLinkParts(t, c, d, c.Size())
	type tcase struct {
		decoder   string
		drop      float32
		transport collectives.Transport
		keep      bool
	}
	cases := []tcase{
		{train.DecoderDot, 0, collectives.TransportAuto, false},
		{train.DecoderMLP, 0.5, collectives.TransportAuto, false},
		{train.DecoderMLP, 0.5, collectives.TransportAlltoallv, false},
		{train.DecoderDot, 0, collectives.TransportAlltoallv, true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/dropout=%v/%v/keep=%v", tc.decoder, tc.drop, tc.transport, tc.keep), func(t *testing.T) {
			cfg := testTrainConfig(c, dir, tc.drop)
			cfg.Task = TaskLink
			cfg.Model.Decoder = tc.decoder
			cfg.Link = LinkOptions{NegRatio: 2, KeepSeedEdges: tc.keep}
			cfg.Store.Transport = tc.transport
			cfg.Run.Epochs = 2
			rec := &stepLosses{}
			cfg.Reporter = rec
			var out bytes.Buffer
			cfg.Out = &out
			res, err := Train(c, cfg)
			require.NoError(t, err)

			src := newRefLinkSource(t, dir, 11, 2, []int{4, 3}, 12)
			src.noExclud = tc.keep
			mc := train.Config{InDim: 6, Hidden: 16, Classes: 16, Layers: 2, Dropout: tc.drop, InputDropout: tc.drop / 2, Decoder: tc.decoder}
			model, err := train.NewModel(mc, 11)
			require.NoError(t, err)
			ref, err := train.NewTrainer(train.Options{Adam: optim.DefaultAdam(0.01, 5e-4), Seed: 11}, model, train.LocalReducer{}, src)
			require.NoError(t, err)
			rl := &stepLosses{}
			ref.Reporter = rl
			for range 2 {
				_, err := ref.TrainEpoch()
				require.NoError(t, err)
			}
			require.Len(t, rec.l, len(rl.l))
			for i := range rl.l {
				require.InDelta(t, rl.l[i], rec.l[i], 1e-4*math.Abs(rl.l[i]), "step %d", i+1)
			}
			require.Less(t, maxRelDiff(ref.Model().Params(), res.Params), 1e-4, "final weights differ from the reference")
			if c.Rank() == 0 {
				require.NoError(t, res.WriteFinal(&out)) // the line train prints last
				s := out.String()
				require.Contains(t, s, "final: ")
				require.Contains(t, s, "test_auc=")
				require.Contains(t, s, "weights="+res.Weights)
			}
			require.NotNil(t, res.Summary.TestAUC)
		})
	}
}

// TestTrainLinkResume: 2 epochs then a resume to 3 end with the same
// weights and test figures, bit for bit, as 3 uninterrupted epochs.
func TestTrainLinkResume(t *testing.T) {
	c := comm(t)
	d := synthDataset(9, 240, 6, 3)
	dir := writeLinkParts(t, c, d, c.Size())
	tmp := sharedDir(t, c)
	cfg := testTrainConfig(c, dir, 0.5)
	cfg.Task, cfg.Model.Decoder = TaskLink, train.DecoderMLP
	cfg.Link = LinkOptions{NegRatio: 1, UseValidEdges: true}
	cfg.Loader.Batch = 8
	cfg.Run.Epochs = 3
	cfg.Run.CheckpointDir = filepath.Join(tmp, "straight")
	straight, err := Train(c, cfg)
	require.NoError(t, err)
	cfg.Run.CheckpointDir = filepath.Join(tmp, "resumed")
	cfg.Run.Epochs = 2
	_, err = Train(c, cfg)
	require.NoError(t, err)
	cfg.Run.Epochs, cfg.Resume = 3, true
	resumed, err := Train(c, cfg)
	require.NoError(t, err)
	require.Equal(t, straight.Weights, resumed.Weights)
	require.Equal(t, *straight.Summary.TestMRR, *resumed.Summary.TestMRR)
	require.Equal(t, *straight.Summary.TestAUC, *resumed.Summary.TestAUC)

	// A resume with another negative ratio changes the trajectory: refused.
	cfg.Link.NegRatio = 3
	cfg.Run.Epochs = 4
	_, err = Train(c, cfg)
	require.Error(t, err)
	require.Contains(t, err.Error(), "Link.NegRatio was 1, now 3")
}

// TestLinkEmbedAndPredict: embed writes every node's row by original id
// (the same rows whatever the rank count, up to float rounding), and
// predict --task link scores pairs with the decoder on those rows.
func TestLinkEmbedAndPredict(t *testing.T) {
	c := comm(t)
	d := synthDataset(12, 200, 5, 3)
	dir := writeLinkParts(t, c, d, c.Size())
	tmp := sharedDir(t, c)
	cfg := testTrainConfig(c, dir, 0)
	cfg.Task, cfg.Link.NegRatio = TaskLink, 1
	cfg.Run.Epochs = 1
	cfg.Run.CheckpointDir = filepath.Join(tmp, "ck")
	_, err := Train(c, cfg)
	require.NoError(t, err)

	npy := filepath.Join(tmp, "emb.npy")
	n, err := Embed(c, EmbedConfig{PartDir: dir, CheckpointDir: cfg.Run.CheckpointDir, Out: npy, Full: true, Batch: 16,
		Store: dsample.StoreOptions{Transport: collectives.TransportAuto}})
	require.NoError(t, err)
	require.EqualValues(t, 200, n)

	pairs := filepath.Join(tmp, "pairs.csv")
	if c.Rank() == 0 {
		require.NoError(t, osx.WriteFileAtomic(pairs, []byte("src,dst\n0,1\n5,7\n199,3\n")))
	}
	require.NoError(t, c.Barrier())
	out := filepath.Join(tmp, "scores.csv")
	np, err := PredictLink(c, EmbedConfig{PartDir: dir, CheckpointDir: cfg.Run.CheckpointDir, Out: out, Pairs: pairs, Full: true, Batch: 16,
		Store: dsample.StoreOptions{Transport: collectives.TransportAuto}})
	require.NoError(t, err)
	require.EqualValues(t, 3, np)

	// A bad pairs file: one error naming the file and line, on every rank,
	// and no output.
	bad := filepath.Join(tmp, "bad.csv")
	if c.Rank() == 0 {
		require.NoError(t, os.WriteFile(bad, []byte("0,1\n2;3\n"), 0o644))
	}
	require.NoError(t, c.Barrier())
	_, err = PredictLink(c, EmbedConfig{PartDir: dir, CheckpointDir: cfg.Run.CheckpointDir, Out: out + ".bad", Pairs: bad, Batch: 16,
		Store: dsample.StoreOptions{Transport: collectives.TransportAuto}})
	require.ErrorContains(t, err, "bad.csv:2")
	require.NoFileExists(t, out+".bad")
	if c.Rank() != 0 {
		return
	}
	rows := readNPY(t, npy, 200, 16)
	ck, err := train.LoadCheckpoint(cfg.Run.CheckpointDir)
	require.NoError(t, err)
	model, err := train.NewModel(ck.Model, ck.Seed)
	require.NoError(t, err)
	require.NoError(t, model.SetParams(ck.BestParams))
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	got := string(raw)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Equal(t, "src,dst,score,prob", lines[0])
	for i, p := range [][2]int{{0, 1}, {5, 7}, {199, 3}} {
		want := make([]float32, 1)
		require.NoError(t, model.ScorePairs(rows[p[0]*16:(p[0]+1)*16], rows[p[1]*16:(p[1]+1)*16], want))
		var u, v int
		var s, prob float64
		_, err := fmt.Sscanf(lines[i+1], "%d,%d,%g,%g", &u, &v, &s, &prob)
		require.NoError(t, err)
		require.Equal(t, p, [2]int{u, v})
		require.InDelta(t, float64(want[0]), s, 1e-5*math.Max(1, math.Abs(s)))
	}
	// A bad pairs file: one error naming the file and line, on every rank.
	require.NoError(t, osx.WriteFileAtomic(pairs, []byte("0,1\n2;3\n")))
}

// readNPY reads a float32 .npy file of shape (n, w) written by Embed.
func readNPY(t *testing.T, path string, n, w int) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")))
	hl := int(b[8]) | int(b[9])<<8
	hdr := string(b[10 : 10+hl])
	require.Contains(t, hdr, fmt.Sprintf("'shape': (%d, %d)", n, w))
	require.Zero(t, (10+hl)%64, "header not 64-byte aligned")
	data := b[10+hl:]
	require.Len(t, data, 4*n*w)
	out := make([]float32, n*w)
	for i := range out {
		out[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
	}
	return out
}
