package tests

import (
	"fmt"
	"math"
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

// temporalGraph is a generated graph with random edge and node times,
// partitioned with --time into 1..4 parts; temporalHetero the same for an
// ogbn-mag-shaped heterogeneous graph.
var temporalGraph, temporalHetero = cliGraph{partArgs: []string{"--time"}}, cliGraph{partArgs: []string{"--time"}}

func (g *cliGraph) getTemporal(t *testing.T) *cliGraph {
	return g.prepare(t, "temporal-graph", func(run func(args ...string) error) error {
		return run("gen", "--nodes", "2000", "--avg-degree", "10", "--classes", "4", "--feat-dim", "8",
			"--edge-time", "--node-time", "--seed", "5", "--out", filepath.Join(g.dir, "data"))
	})
}

func (g *cliGraph) getTemporalHetero(t *testing.T) *cliGraph {
	return g.prepare(t, "temporal-hetero", func(run func(args ...string) error) error {
		return run("gen", "--hetero", "--papers", "800", "--authors", "900", "--institutions", "20", "--fields", "60",
			"--cites", "3000", "--writes", "3000", "--affiliations", "900", "--topics", "2500",
			"--classes", "4", "--feat-dim", "8", "--edge-time", "--seed", "4", "--out", filepath.Join(g.dir, "data"))
	})
}

// temporalLine is one edge line of the temporal sample text:
// "dst@seedtime src@edgetime [relation]".
var temporalLine = regexp.MustCompile(`^(\d+)@(-?\d+) (\d+)@(-?\d+)( \S+)?$`)

// checkNoLeak parses a temporal sample text and fails on any edge newer
// than (or, strict, as new as) the time its destination was expanded at;
// it returns the number of edges.
func checkNoLeak(t *testing.T, name, out string, strict bool) int {
	t.Helper()
	edges := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "layer ") {
			continue
		}
		m := temporalLine.FindStringSubmatch(line)
		require.NotNil(t, m, "%s: malformed edge line %q", name, line)
		seedT, _ := strconv.ParseInt(m[2], 10, 64)
		edgeT, _ := strconv.ParseInt(m[4], 10, 64)
		if edgeT > seedT || (strict && edgeT == seedT) {
			t.Errorf("%s: leak: edge %q is newer than its seed time", name, line)
		}
		edges++
	}
	return edges
}

// TestTemporalSampleIdentical: temporal sampling prints byte-identical
// blocks, every edge with its time, for 1..4 ranks and both transports;
// no sampled edge is newer than its seed's time (strictly older with
// --temporal-strict); homogeneous (node times and a fixed --seed-time) and
// heterogeneous (per-relation edge times). The outputs are pinned in the
// golden file.
func TestTemporalSampleIdentical(t *testing.T) {
	homo := temporalGraph.getTemporal(t)
	het := temporalHetero.getTemporalHetero(t)
	bin, _ := h.Mpignn()
	type variant struct {
		name   string
		g      *cliGraph
		args   []string
		strict bool
	}
	variants := []variant{
		{"uniform node time", homo, []string{"--seeds", "0,7,99,512,1024,1999", "--fanout", "5,-1", "--temporal", "uniform"}, false},
		{"last strict seed-time", homo, []string{"--seeds", "3,250,1200,1777", "--fanout", "4,3", "--temporal", "last", "--temporal-strict", "--seed-time", "500000"}, true},
		{"uniform replace seed-time", homo, []string{"--seeds", "3,250,1200,1777", "--fanout", "6,2", "--replace", "--temporal", "uniform", "--seed-time", "300000"}, false},
		{"hetero uniform strict", het, []string{"--seeds", "paper:0,paper:400,author:5,author:899,field_of_study:3", "--fanout", "3,2",
			"--temporal", "uniform", "--temporal-strict", "--seed-time", "600000"}, true},
	}
	var golden []string
	for _, v := range variants {
		var first, firstName string
		for _, p := range h.Ranks {
			for _, tr := range goldenTransports {
				name := fmt.Sprintf("%s/np=%d/%s", v.name, p, tr)
				args := append([]string{bin, "sample", "--parts", v.g.parts[p], "--seed", "9", "--epoch", "2", "--step", "1", "--transport", tr}, v.args...)
				res := h.MPI(Job{Ranks: p, Args: args, Timeout: 2 * time.Minute})
				require.NoError(t, res.Err, "%s: %s", name, tail(res.Output, 30))
				out := res.Stdout
				require.Greater(t, checkNoLeak(t, name, out, v.strict), 0, "%s: no edges sampled", name)
				if first == "" {
					first, firstName = out, name
					continue
				}
				if out != first {
					assert.Fail(t, "temporal sample output depends on ranks or transport", "%s differs from %s: %s", name, firstName, firstDiff(first, out))
				}
			}
		}
		golden = append(golden, first)
	}
	// Times really bound the sample: the same seeds without --temporal take
	// edges the temporal sample may not.
	res := h.MPI(Job{Ranks: 1, Args: []string{bin, "sample", "--parts", homo.parts[1], "--seeds", "3,250,1200,1777", "--fanout", "4,3", "--seed", "9", "--epoch", "2", "--step", "1"}, Timeout: time.Minute})
	require.NoError(t, res.Err, tail(res.Output, 20))
	assert.NotEqual(t, golden[1], res.Stdout)
	checkGolden(t, "sample-temporal.txt", strings.Join(golden, ""), false)
}

// TestTemporalRefusals: temporal flags on a partition without times, and
// inconsistent temporal flags, are refused with one clear message.
func TestTemporalRefusals(t *testing.T) {
	plain := gen.get(t)
	bin, _ := h.Mpignn()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"untimed partition", []string{"sample", "--parts", plain.parts[2], "--seeds", "1,2", "--temporal", "uniform", "--seed-time", "5"}, "partition it with --time"},
		{"bad strategy", []string{"sample", "--parts", plain.parts[2], "--seeds", "1", "--temporal", "recent"}, "want none, uniform or last"},
		{"strict without strategy", []string{"sample", "--parts", plain.parts[2], "--seeds", "1", "--temporal-strict"}, "need --temporal uniform or last"},
		{"bad seed time", []string{"sample", "--parts", plain.parts[2], "--seeds", "1", "--temporal", "last", "--seed-time", "soon"}, "want an integer time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.MPI(Job{Ranks: 2, Args: append([]string{bin}, c.args...), Timeout: time.Minute})
			require.Error(t, res.Err, "%s: accepted", c.name)
			assert.Contains(t, res.Output, c.want)
			assert.NotContains(t, res.Output, "panic")
		})
	}
}

var finalWeightsRe = regexp.MustCompile(`(?m)^final: .*\bweights=([0-9a-f]+)`)

// TestTemporalLinkTrain: temporal link prediction on bitcoin-alpha's
// chronological split (strict, uniform) gives, for 1 and 2 ranks, the same
// weights under both transports and losses that agree across rank counts;
// the streaming partition (--link-graph all) is refused without strict
// temporal sampling.
func TestTemporalLinkTrain(t *testing.T) {
	data := needDataset(t, "bitcoinalpha", "raw", "edge_time.csv.gz")
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	parts := map[int]string{}
	for _, p := range []int{1, 2} {
		parts[p] = filepath.Join(dir, fmt.Sprintf("all-%d", p))
		out, err := exec.Command(bin, "partition", "--data", data, "--parts", strconv.Itoa(p), "--seed", "0", "--link-split", "time",
			"--struct-feats", "2", "--time", "--link-graph", "all", "--out", parts[p]).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	// The link task's defaults before issue 24 (dot decoder, dropout 0.5,
	// weight decay 5e-4, raw features), which this tolerance was set for.
	args := []string{"train", "--task", "link", "--fanout", "4,3", "--hidden", "16", "--epochs", "3", "--eval-every", "3",
		"--temporal", "uniform", "--temporal-strict", "--seed", "3", "--quiet",
		"--decoder", "dot", "--dropout", "0.5", "--weight-decay", "5e-4", "--norm-feat=false"}
	var refLoss []float64
	for _, p := range []int{1, 2} {
		var first string
		for _, tr := range goldenTransports {
			metrics := filepath.Join(t.TempDir(), "m.jsonl")
			res := h.MPI(Job{Ranks: p, Args: append(append([]string{bin}, args...), "--parts", parts[p], "--batch", strconv.Itoa(1024/p),
				"--transport", tr, "--metrics", metrics), Timeout: 4 * time.Minute})
			require.NoError(t, res.Err, tail(res.Output, 30))
			m := finalWeightsRe.FindStringSubmatch(res.Stdout)
			require.NotNil(t, m, "np=%d/%s: no final line:\n%s", p, tr, tail(res.Output, 10))
			require.Contains(t, res.Stdout, "test_auc=")
			if first == "" {
				first = m[1]
			} else {
				assert.Equal(t, first, m[1], "np=%d: weights differ between transports", p)
			}
			vals := epochValues(t, metrics, "loss")
			for i, s := range vals["loss"] {
				v, err := strconv.ParseFloat(s, 64)
				require.NoError(t, err)
				if refLoss == nil || len(refLoss) <= i {
					refLoss = append(refLoss, v)
					continue
				}
				assert.InDelta(t, refLoss[i], v, 1e-5*math.Abs(refLoss[i]), "np=%d/%s epoch %d loss differs from 1 rank's", p, tr, i+1)
			}
		}
	}
	for _, extra := range [][]string{{"--temporal", "none"}, {"--temporal", "last"}} {
		res := h.MPI(Job{Ranks: 2, Args: append([]string{bin, "train", "--task", "link", "--parts", parts[2], "--epochs", "1", "--quiet"}, extra...), Timeout: time.Minute})
		require.Error(t, res.Err, "%v accepted on a --link-graph all partition", extra)
		assert.Contains(t, res.Output, "link-graph all")
		assert.NotContains(t, res.Output, "panic")
	}
}

// TestTemporalNodeTrain: node classification with temporal sampling (each
// seed at its node time, and at a fixed --seed-time) trains to the same
// weights under both transports for each rank count, with losses that
// agree across rank counts; it differs from time-blind training on the
// same partition.
func TestTemporalNodeTrain(t *testing.T) {
	g := temporalGraph.getTemporal(t)
	bin, _ := h.Mpignn()
	plain := ""
	for _, extra := range [][]string{nil, {"--temporal", "uniform"}, {"--temporal", "last", "--seed-time", "700000", "--temporal-strict"}} {
		var refLoss []float64
		for _, p := range []int{1, 2, 3} {
			var first string
			for _, tr := range goldenTransports {
				name := fmt.Sprintf("%v/np=%d/%s", extra, p, tr)
				metrics := filepath.Join(t.TempDir(), "m.jsonl")
				args := append([]string{bin, "train", "--parts", g.parts[p], "--fanout", "5,5", "--hidden", "16", "--epochs", "3",
					"--batch", strconv.Itoa(240 / p), "--seed", "2", "--quiet", "--transport", tr, "--metrics", metrics}, extra...)
				res := h.MPI(Job{Ranks: p, Args: args, Timeout: 2 * time.Minute})
				require.NoError(t, res.Err, "%s: %s", name, tail(res.Output, 30))
				m := finalWeightsRe.FindStringSubmatch(res.Stdout)
				require.NotNil(t, m, "%s: no final line:\n%s", name, tail(res.Output, 10))
				if first == "" {
					first = m[1]
				} else {
					assert.Equal(t, first, m[1], "%s: weights differ between transports", name)
				}
				for i, s := range epochValues(t, metrics, "loss")["loss"] {
					v, err := strconv.ParseFloat(s, 64)
					require.NoError(t, err)
					if len(refLoss) <= i {
						refLoss = append(refLoss, v)
						continue
					}
					assert.InDelta(t, refLoss[i], v, 1e-5*math.Abs(refLoss[i]), "%s: epoch %d loss differs from 1 rank's", name, i+1)
				}
			}
			if extra == nil && p == 1 {
				plain = first
			} else if p == 1 {
				assert.NotEqual(t, plain, first, "%v trains like time-blind sampling", extra)
			}
		}
	}
}
