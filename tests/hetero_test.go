package tests

import (
	"fmt"
	"math"
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

// heteroGraph is a small ogbn-mag-shaped graph (`gen --hetero`: papers with
// features and labels; authors, institutions and fields of study without
// features, so they train learnable embeddings) and its METIS partitions
// into 1..4 parts, made once per test process with the real binary.
var heteroGraph cliGraph

func (g *cliGraph) getHetero(t *testing.T) *cliGraph {
	return g.prepare(t, "hetero-graph", func(run func(args ...string) error) error {
		return run("gen", "--hetero", "--papers", "1500", "--authors", "2000", "--institutions", "40", "--fields", "120",
			"--cites", "5000", "--writes", "6000", "--affiliations", "2000", "--topics", "5000",
			"--classes", "5", "--feat-dim", "12", "--seed", "3", "--out", filepath.Join(g.dir, "data"))
	})
}

// heteroSeeds mix node types and ids spread over each type's range, so that
// with 2..4 parts the seeds and their neighbourhoods live on several ranks.
const heteroSeeds = "paper:0,paper:17,paper:700,paper:1499,author:3,author:1999,institution:7,field_of_study:42"

// TestHeteroSampleIdentical: typed sampling of a heterogeneous partition
// prints byte-identical blocks (every edge with its relation) for 1..4
// ranks and both transports, with per-relation fanouts that include -1
// (all) and 0 (none), and matches the golden file.
func TestHeteroSampleIdentical(t *testing.T) {
	g := heteroGraph.getHetero(t)
	bin, _ := h.Mpignn()
	fan := "paper___cites___paper=4,-1;author___writes___paper=0,2;*=3,2"
	var first, firstName string
	for _, p := range h.Ranks {
		for _, rp := range goldenPaths() {
			name := fmt.Sprintf("np=%d/%s", p, rp.name)
			res := h.MPI(Job{Ranks: p, Args: append([]string{bin, "sample", "--parts", g.parts[p], "--seeds", heteroSeeds,
				"--fanout", fan, "--seed", "7", "--epoch", "1", "--step", "2"}, rp.args...), Timeout: 2 * time.Minute})
			require.NoError(t, res.Err, "%s: %s", name, tail(res.Output, 30))
			out := res.Stdout
			require.Equal(t, 2, strings.Count(out, "\nlayer "), "%s: layer count:\n%s", name, tail(out, 10))
			// Hop 0 (the seeds' layer, printed last) takes no writes edges;
			// hop 1 takes 2 per destination.
			_, seedLayer, _ := strings.Cut(out, "\nlayer 1 ")
			require.True(t, strings.Contains(out, " author___writes___paper\n") && !strings.Contains(seedLayer, " author___writes___paper\n"),
				"%s: author___writes___paper=0,2 must appear in layer 0 only", name)
			require.Contains(t, seedLayer, " paper___cites___paper\n", name)
			if first == "" {
				first, firstName = out, name
				continue
			}
			if out != first {
				assert.Fail(t, "typed sample output depends on ranks or transport", "%s differs from %s: %s", name, firstName, firstDiff(first, out))
			}
		}
	}
	checkGolden(t, "sample-hetero.txt", first, false)
}

var heteroTrainArgs = []string{"--fanout", "5,5", "--hidden", "16", "--embed-dim", "8", "--epochs", "3", "--seed", "1",
	"--lr", "0.01", "--quiet"}

var finalEmbRe = regexp.MustCompile(`(?m)^final: .*\bweights=([0-9a-f]+) embeddings=([0-9a-f]+)$`)

// TestHeteroTrainIdentical: training HeteroSAGE (and R-GCN with bases) on
// the heterogeneous partitions with learnable embeddings gives, for each
// rank count, the same weights and embeddings under both transports and
// both embedding push methods, and per-epoch losses that agree across 1..4
// ranks to float32 summation order (the global batch is fixed). The table
// is pinned in the golden file.
func TestHeteroTrainIdentical(t *testing.T) {
	g := heteroGraph.getHetero(t)
	bin, _ := h.Mpignn()
	needGoldenISA(t, bin)
	type variant struct{ transport, push string }
	variants := []variant{{"rma", "alltoallv"}, {"alltoallv", "alltoallv"}, {"rma", "accumulate"}}
	var rows []string
	var refLoss []float64
	for _, model := range []string{"hsage", "rgcn"} {
		for _, p := range h.Ranks {
			var first string
			for _, v := range variants {
				t.Run(fmt.Sprintf("%s/np=%d/%s/%s", model, p, v.transport, v.push), func(t *testing.T) {
					metrics := filepath.Join(t.TempDir(), "m.jsonl")
					args := append([]string{bin, "train", "--parts", g.parts[p], "--batch", strconv.Itoa(goldenGlobalBatch / p),
						"--model", model, "--transport", v.transport, "--embed-push", v.push, "--metrics", metrics}, pinned(heteroTrainArgs)...)
					if model == "rgcn" {
						args = append(args, "--bases", "2")
					}
					res := h.MPI(Job{Ranks: p, Args: args, Timeout: 3 * time.Minute})
					require.NoError(t, res.Err, tail(res.Output, 30))
					requireGoldenPath(t, res.Stdout)
					m := finalEmbRe.FindStringSubmatch(res.Stdout)
					require.NotNil(t, m, "no final line with weights and embeddings:\n%s", tail(res.Output, 10))
					vals := epochValues(t, metrics, "loss")
					losses := make([]float64, len(vals["loss"]))
					for i, s := range vals["loss"] {
						var err error
						losses[i], err = strconv.ParseFloat(s, 64)
						require.NoError(t, err)
					}
					if refLoss == nil || (p == h.Ranks[0] && first == "") {
						refLoss = losses
					}
					for i := range losses {
						assert.InDelta(t, refLoss[i], losses[i], 1e-5*math.Abs(refLoss[i]), "epoch %d loss differs from %d ranks'", i+1, h.Ranks[0])
					}
					// Float32 sums of the Accumulate push may differ in the last
					// bits between runs (MPI does not order origins), so only
					// the deterministic push is compared bit for bit.
					if v.push == "accumulate" {
						return
					}
					row := fmt.Sprintf("%s np=%d weights=%s embeddings=%s", model, p, m[1], m[2])
					if first == "" {
						first = row
						rows = append(rows, row)
						return
					}
					assert.Equal(t, first, row, "%d ranks: transports must train identically", p)
				})
			}
		}
		refLoss = nil
	}
	if t.Failed() || len(h.Ranks) < goldenMaxRanks {
		return // the golden table covers every rank count
	}
	file := "train-hetero.txt"
	if strings.HasSuffix(goldenTrainFile(), "-mpich.txt") {
		file = "train-hetero-mpich.txt" // MPICH sums allreduce contributions in another order
	}
	checkGolden(t, file, "# mpignn train on the `gen --hetero` test graph: --batch 24/P "+strings.Join(pinned(heteroTrainArgs), " ")+"\n"+
		"# kernels: onednn fp32 "+goldenISA+", on any x86-64 CPU that has it\n"+
		"# one row per model and rank count P, identical for --transport rma and alltoallv\n"+strings.Join(rows, "\n")+"\n", true)
}

// TestHeteroResume: a run stopped after 2 epochs and resumed to 4 ends with
// exactly the weights AND embeddings (with their sparse Adam state) of 4
// uninterrupted epochs, on 2 ranks.
func TestHeteroResume(t *testing.T) {
	g := heteroGraph.getHetero(t)
	bin, _ := h.Mpignn()
	work := t.TempDir()
	args := func(epochs, ck string, extra ...string) []string {
		return append([]string{bin, "train", "--parts", g.parts[2], "--batch", "12", "--fanout", "5,5", "--hidden", "16",
			"--embed-dim", "8", "--epochs", epochs, "--seed", "2", "--quiet", "--checkpoint", ck}, extra...)
	}
	run := func(a []string) []string {
		res := h.MPI(Job{Ranks: 2, Args: a, Timeout: 3 * time.Minute})
		require.NoError(t, res.Err, tail(res.Output, 30))
		m := finalEmbRe.FindStringSubmatch(res.Stdout)
		require.NotNil(t, m, tail(res.Output, 10))
		return m[1:]
	}
	full := run(args("4", filepath.Join(work, "a")))
	run(args("2", filepath.Join(work, "b")))
	resumed := run(args("4", filepath.Join(work, "b"), "--resume"))
	require.Equal(t, full, resumed, "resumed weights/embeddings differ from the uninterrupted run")
	res := h.MPI(Job{Ranks: 2, Args: args("5", filepath.Join(work, "b"), "--resume", "--embed-dim", "4"), Timeout: time.Minute})
	require.Error(t, res.Err, "a resume with another --embed-dim must be refused")
	assert.Contains(t, res.Output, "embed")
	assert.NotContains(t, res.Output, "goroutine ")

	// predict classifies every node of the labelled type (papers), by
	// their ids within the type, with the checkpoint's embeddings (read by
	// original id, so another rank count can use them). 1 and 2 ranks agree
	// up to float32 summation order, which can flip a near-tie: a wrong id
	// map or embedding row would change most lines, not a few.
	var files []string
	for _, p := range []int{1, 2} {
		out := filepath.Join(work, fmt.Sprintf("pred-%d.csv", p))
		res := h.MPI(Job{Ranks: p, Args: []string{bin, "predict", "--parts", g.parts[p], "--checkpoint", filepath.Join(work, "a"),
			"--batch", strconv.Itoa(128 / p), "--out", out}, Timeout: 2 * time.Minute})
		require.NoError(t, res.Err, tail(res.Output, 20))
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		require.Len(t, lines, 1+1500, "header + one line per paper")
		assert.True(t, strings.HasPrefix(lines[1], "0,") && strings.HasPrefix(lines[1500], "1499,"), "paper ids 0..1499: %q ... %q", lines[1], lines[1500])
		files = append(files, string(b))
	}
	a, b := strings.Split(files[0], "\n"), strings.Split(files[1], "\n")
	require.Equal(t, len(a), len(b))
	differ := 0
	for i := range a {
		if a[i] != b[i] {
			differ++
		}
	}
	t.Logf("%d of 1500 predictions differ between 1 and 2 ranks", differ)
	assert.LessOrEqual(t, differ, 15, "%d of 1500 predictions differ between 1 and 2 ranks", differ)
}

// TestHeteroLinkEmbedPredict: a heterogeneous link model (with learnable
// embeddings for the featureless types) can be used after training: embed
// writes one row per node of every type, and predict --task link scores
// inspect --link-pairs's test split back to the figures train reported
// (evaluated at the last epoch only, whose embeddings the checkpoint keeps).
// Node predict says that it uses the final weights unless --final is given.
func TestHeteroLinkEmbedPredict(t *testing.T) {
	g := heteroGraph.getHetero(t)
	bin, _ := h.Mpignn()
	work := t.TempDir()
	parts := filepath.Join(work, "parts")
	out, err := exec.Command(bin, "partition", "--data", filepath.Join(g.dir, "data"), "--parts", "2", "--out", parts,
		"--link-split", "random:0.8,0.1,0.1", "--relation", "author___writes___paper", "--link-negs", "20", "--link-pool", "500").CombinedOutput()
	require.NoError(t, err, "partition: %s", out)
	ck := filepath.Join(work, "ck")
	res := h.MPI(Job{Ranks: 2, Timeout: 3 * time.Minute, Args: []string{bin, "train", "--task", "link", "--parts", parts,
		"--fanout", "5,5", "--hidden", "16", "--embed-dim", "8", "--batch", "256", "--epochs", "2", "--eval-every", "2",
		"--seed", "2", "--quiet", "--checkpoint", ck}})
	require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 30))
	trained := finalLinkFigures(t, res.Output)

	npy := filepath.Join(work, "emb.npy")
	res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "embed", "--parts", parts, "--checkpoint", ck, "--out", npy}})
	require.NoError(t, res.Err, "embed:\n%s", tail(res.Output, 20))
	assert.Contains(t, res.Output, "final weights are used")
	st, err := os.Stat(npy)
	require.NoError(t, err)
	nodes := int64(1500 + 2000 + 40 + 120)
	assert.EqualValues(t, 128+nodes*16*4, st.Size(), "one 16-wide row per node of every type after a 128-byte header")

	pairs, scores := filepath.Join(work, "pairs.csv"), filepath.Join(work, "scores.csv")
	b, err := exec.Command(bin, "inspect", parts, "--link-pairs", "test", "--out", pairs).CombinedOutput()
	require.NoError(t, err, "inspect: %s", b)
	res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: []string{bin, "predict", "--task", "link", "--parts", parts,
		"--checkpoint", ck, "--pairs", pairs, "--out", scores}})
	require.NoError(t, res.Err, "predict:\n%s", tail(res.Output, 20))
	assert.InDeltaSlice(t, trained, recomputeLinkFigures(t, pairs, scores), 6e-5, "test AUC, MRR, Hits@10, Hits@50")

	// Node classification on the same graph: the note, and none with --final.
	ckNode := filepath.Join(work, "ck-node")
	res = h.MPI(Job{Ranks: 2, Timeout: 3 * time.Minute, Args: []string{bin, "train", "--parts", g.parts[2], "--fanout", "5,5",
		"--hidden", "16", "--embed-dim", "8", "--epochs", "2", "--seed", "2", "--quiet", "--checkpoint", ckNode}})
	require.NoError(t, res.Err, "train:\n%s", tail(res.Output, 30))
	for _, final := range []bool{false, true} {
		args := []string{bin, "predict", "--parts", g.parts[2], "--checkpoint", ckNode, "--out", filepath.Join(work, "pred.csv")}
		if final {
			args = append(args, "--final")
		}
		res = h.MPI(Job{Ranks: 2, Timeout: 2 * time.Minute, Args: args})
		require.NoError(t, res.Err, "predict:\n%s", tail(res.Output, 20))
		if final {
			assert.NotContains(t, res.Output, "final weights are used")
		} else {
			assert.Contains(t, res.Output, "final weights are used")
		}
	}
}

// TestHGBTrainRankCounts: homogeneous architectures train on a
// heterogeneous partition HGB style (typed input projections, learnable
// embeddings for the featureless types, then GCN or GAT over the typed
// blocks ignoring the types): with --global-batch the same flags train the
// same model on every rank count (within the global-batch tolerances),
// evaluation reports an accuracy, and --bases, R-GCN's, is refused for
// them with one line naming the flag.
func TestHGBTrainRankCounts(t *testing.T) {
	g := heteroGraph.getHetero(t)
	bin, _ := h.Mpignn()
	for _, model := range [][]string{{"--model", "gcn"}, {"--model", "gat", "--heads", "2"}} {
		t.Run(model[1], func(t *testing.T) {
			var first globalBatchRun
			for _, p := range h.Ranks {
				args := append([]string{"--parts", g.parts[p], "--global-batch", "24", "--fanout", "5,5", "--hidden", "16",
					"--embed-dim", "8", "--epochs", "3", "--seed", "1", "--quiet"}, model...)
				run, _, out := trainGlobalBatchAt(t, bin, t.TempDir(), p, nil, args...)
				assert.Regexp(t, `(?m)^final: epochs=3 .*test_acc=0\.[0-9]+ .*embeddings=[0-9a-f]+$`, out, "%d ranks", p)
				if first.params == nil {
					first = run
					continue
				}
				sameModel(t, model[1]+" on a heterogeneous graph", first, run)
			}
		})
	}
	res := h.MPI(Job{Ranks: 1, Timeout: time.Minute, Args: []string{bin, "train", "--parts", g.parts[1], "--model", "gcn", "--bases", "2",
		"--fanout", "5,5", "--epochs", "1", "--quiet"}})
	require.Error(t, res.Err, "--bases with gcn")
	assert.Contains(t, res.Output, "--bases applies to --model rgcn only")
}
