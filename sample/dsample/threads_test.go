package dsample

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/par"
	"mpignn/partition"
	"mpignn/sample"
)

// bigFixture is a graph large enough that a layer's rows and edges cross
// par.MinWork, so that the parallel row loops, exclusion and block builder
// run on several goroutines (the small fixture stays on the serial paths).
func bigFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	syn, err := graph.Generate(graph.GenOptions{Nodes: 24000, AvgDegree: 24, Classes: 5, FeatDim: 2, Seed: 3})
	require.NoError(t, err)
	d := syn.Data
	d.In = syn.BuildIn()
	P := c.Size()
	parts := writeParts(t, c, func(dir string) error {
		_, err := partition.Write(dir, d, testAssign(d.NumNodes, P), P, partition.Options{Method: partition.MethodRandom})
		return err
	})
	return &fixture{d: d, c: c, parts: parts, part: parts[c.Rank()]}
}

// TestSampleThreadsIdentical: the same request sampled on 1 and on 4
// threads gives the same blocks, bit for bit and in the same node order,
// on every transport, with and without replacement, exclusion and seed
// times, and (untimed, without exclusion) the reference's blocks. Layers
// hold up to a few 100k edges, well past par.MinWork.
func TestSampleThreadsIdentical(t *testing.T) {
	f := bigFixture(t)
	// Seeds: every third original id below 12000 that this rank owns.
	var wanted []int64
	for v := int64(0); v < 12000; v += 3 {
		wanted = append(wanted, v)
	}
	seedsG, seedsO := ownedSeeds(f.part, wanted)
	// Exclusion: every in-edge of the first 2000 wanted seeds (the same set
	// on every rank).
	var src, dst []int64
	for _, v := range wanted[:2000] {
		for _, u := range f.d.In.Neighbors(v) {
			src, dst = append(src, u), append(dst, v)
		}
	}
	x := sample.NewEdgeSet(src, dst)
	times := make([]int64, len(seedsG))
	for i, o := range seedsO {
		times[i] = (o*5)%9 + 2
	}
	ts := withSynthTimes(f.parts, f.d.In, 1)
	require.NoError(t, graph.CheckTimedRows(f.d.In, ts, nil))
	base := sample.Key{Seed: 11, Epoch: 1, Batch: 2}
	sampleOn := func(s *Sampler, threads int, r Request) []sample.Block {
		prev := runtime.GOMAXPROCS(threads)
		defer runtime.GOMAXPROCS(prev)
		blocks, err := s.Sample(r)
		require.NoError(t, err)
		return blocks
	}
	edges := 0
	for _, tr := range transports() {
		g, err := openGraphNamed(f.c, f.part, tr)
		require.NoError(t, err)
		s := NewSampler(g)
		for _, fan := range [][]int{{10, 10}, {60, 5}, {-1}} {
			for _, replace := range []bool{false, true} {
				for _, excl := range []*sample.EdgeSet{nil, x} {
					for _, timed := range []bool{false, true} {
						name := fmt.Sprintf("%s/%v/replace=%t/exclude=%t/timed=%t", tr, fan, replace, excl != nil, timed)
						r := Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: fan, Key: base, Replace: replace}
						tp := sample.Temporal{}
						if timed {
							r.Times = times
							tp.Strategy = sample.TemporalUniform
						}
						require.NoError(t, s.SetTemporal(tp))
						s.SetExclude(excl)
						one := sampleOn(s, 1, r)
						four := sampleOn(s, 4, r)
						if !timed {
							ref := sample.Reference{G: sample.CSRGraph{In: f.d.In}, Exclude: excl}
							want, err := ref.Sample(seedsO, seedsO, fan, base, replace)
							require.NoError(t, err)
							require.True(t, sameBlocks(t, f.c.Rank(), f.origOf, one, want), name+" (1 thread)")
							require.True(t, sameBlocks(t, f.c.Rank(), f.origOf, four, want), name)
						}
						require.Equal(t, one, four, name)
						require.NoError(t, sample.ValidateBlocks(four), name)
						edges = max(edges, one[0].NumEdges())
					}
				}
			}
		}
		s.SetExclude(nil)
		require.NoError(t, g.Close())
	}
	if f.c.Size() <= 2 {
		require.Greater(t, edges, par.MinWork, "layers too small to run in parallel")
	}
}
