package dsample

import (
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
)

// Benchmarks on the peer-comparison graph (200k nodes, 8M directed edges,
// 100 features), on one rank, so every node is local: they measure the
// local sampling path of Sampler.Sample and the local row copy of
// FeatureStore.Gather. Targets: >= 10M sampled edges/s per core and >= 2 GB/s.
//
//	go test -run '^$' -bench . -benchtime 20x ./sample/dsample/

type benchEnv struct {
	s     *Store
	train []int64
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	if world.Size() != 1 {
		b.Skip("one-rank benchmark")
	}
	syn, err := graph.Generate(graph.GenOptions{Nodes: 200000, AvgDegree: 40, Classes: 47, FeatDim: 100, Seed: 1,
		Train: 100000, Valid: 20000, Test: 80000})
	if err != nil {
		b.Fatal(err)
	}
	d := syn.Data
	d.In = syn.BuildIn()
	dir := filepath.Join(b.TempDir(), "parts")
	if _, err := partition.Write(dir, d, make([]int32, d.NumNodes), 1, partition.Options{Method: partition.MethodRandom}); err != nil {
		b.Fatal(err)
	}
	part, err := partition.Load(dir, 0)
	if err != nil {
		b.Fatal(err)
	}
	c, err := collectives.NewComm()
	if err != nil {
		b.Fatal(err)
	}
	s, err := OpenStore(c, part, StoreOptions{Transport: collectives.TransportAlltoallv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return &benchEnv{s: s, train: part.Splits[part.Meta.Split].Train}
}

// seeds returns batch i of 1024 training nodes (new id == orig id order is
// irrelevant here: one part, so the original ids are looked up).
func (e *benchEnv) seeds(i int) (g, o []int64) { return e.seedsOf(i, 1024) }

// seedsOf returns batch i of B training nodes.
func (e *benchEnv) seedsOf(i, B int) (g, o []int64) {
	n := len(e.train) / B
	lo := (i % n) * B
	g = e.train[lo : lo+B]
	o = make([]int64, B)
	p := e.s.part
	for j, v := range g {
		o[j] = p.Orig[v-p.Lo]
	}
	return g, o
}

// cpuTime is the process's user+system CPU time. The machine is shared, so
// the benchmarks also report throughput per CPU second, which is what a
// dedicated core would deliver.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkSampleLocal(b *testing.B) {
	e := newBenchEnv(b)
	benchSample(b, e, nil)
}

// BenchmarkSampleThreads measures how sampling scales with a rank's
// threads (GOMAXPROCS 1, 2 and every core): batches of 1024 seeds with
// fanouts 15,10,5, and the layer-wise inference shape, 8192 seeds
// (dtrain.DefaultInferChunk) with fanout -1. Compare edges/s across
// thread counts on a quiet machine; edges/cpu-s shows the parallel
// overhead.
//
//	go test -run '^$' -bench SampleThreads -benchtime 20x ./sample/dsample/
func BenchmarkSampleThreads(b *testing.B) {
	e := newBenchEnv(b)
	threads := []int{1, 2}
	if n := runtime.NumCPU(); n > 2 {
		threads = append(threads, n)
	}
	for _, c := range []struct {
		name  string
		fan   []int
		batch int
	}{{"fanout=15,10,5", []int{15, 10, 5}, 1024}, {"fanout=-1", []int{-1}, 8192}} {
		for _, th := range threads {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, th), func(b *testing.B) {
				prev := runtime.GOMAXPROCS(th)
				defer runtime.GOMAXPROCS(prev)
				benchSampleWith(b, e, c.fan, c.batch, nil)
			})
		}
	}
}

// benchSample samples batch after batch with fanouts 15,10,5. excl, if not
// nil, gives the exclusion set of batch i.
func benchSample(b *testing.B, e *benchEnv, excl func(i int) *sample.EdgeSet) {
	benchSampleWith(b, e, []int{15, 10, 5}, 1024, excl)
}

// benchSampleWith samples batch after batch of the given size with the
// given fanouts.
func benchSampleWith(b *testing.B, e *benchEnv, fan []int, batch int, excl func(i int) *sample.EdgeSet) {
	b.ReportAllocs()
	var edges, excluded int64
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		g, o := e.seedsOf(i, batch)
		if excl != nil {
			e.s.sampler.SetExclude(excl(i))
		}
		var st sample.SampleStats
		if _, err := e.s.Sampler().Sample(Request{Seeds: g, SeedsOrig: o, Fanouts: fan, Key: sample.Key{Seed: 1, Batch: i}, Stats: &st}); err != nil {
			b.Fatal(err)
		}
		e.s.sampler.SetExclude(nil)
		edges += st.Edges()
		excluded += st.Excluded
	}
	b.ReportMetric(float64(edges)/b.Elapsed().Seconds(), "edges/s")
	b.ReportMetric(float64(edges)/(cpuTime()-cpu0).Seconds(), "edges/cpu-s")
	b.ReportMetric(float64(edges)/float64(b.N), "edges/batch")
	if excl != nil {
		b.ReportMetric(float64(excluded)/float64(b.N), "excluded/batch")
	}
}

// BenchmarkSampleExclude measures what excluding a link-prediction batch's
// seed edges costs: the same batches as BenchmarkSampleLocal, without a set
// and with a set of 1024 edges, one into each seed (so every seed row, and
// every later row of a seed, takes the slow path of the filter). The sets
// are built before the timer starts, as the loader builds a step's set
// once; "build" times building one set alone.
//
//	go test -run '^$' -bench SampleExclude -benchtime 20x ./sample/dsample/
func BenchmarkSampleExclude(b *testing.B) {
	e := newBenchEnv(b)
	// A set per batch of seeds (e.seeds cycles through them).
	batches := len(e.train) / 1024
	sets := make([]*sample.EdgeSet, batches)
	var src, dst []int64
	for i := range batches {
		g, o := e.seeds(i)
		// One chosen in-neighbor per seed is an edge into it.
		blocks, err := e.s.Sampler().Sample(Request{Seeds: g, SeedsOrig: o, Fanouts: []int{1}, Key: sample.Key{Seed: 99, Batch: i}})
		if err != nil {
			b.Fatal(err)
		}
		bl := &blocks[0]
		src, dst = src[:0], dst[:0]
		for v := range bl.NumDst {
			for _, j := range bl.Indices[bl.Indptr[v]:bl.Indptr[v+1]] {
				src = append(src, bl.Orig[j])
				dst = append(dst, bl.Orig[v])
			}
		}
		sets[i] = sample.NewEdgeSet(src, dst)
	}
	b.Run("none", func(b *testing.B) { benchSample(b, e, nil) })
	b.Run("edges=1024", func(b *testing.B) {
		benchSample(b, e, func(i int) *sample.EdgeSet { return sets[i%batches] })
	})
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			sample.NewEdgeSet(src, dst)
		}
		b.ReportMetric(float64(len(src)), "edges/set")
	})
}

func BenchmarkGatherLocal(b *testing.B) {
	e := newBenchEnv(b)
	g, o := e.seeds(0)
	blocks, err := e.s.Sampler().Sample(Request{Seeds: g, SeedsOrig: o, Fanouts: []int{15, 10, 5}, Key: sample.Key{Seed: 1}})
	if err != nil {
		b.Fatal(err)
	}
	nodes := blocks[0].Nodes
	var x []float32
	b.SetBytes(int64(len(nodes) * 4 * e.s.part.Meta.FeatDim))
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if x, err = e.s.feat.Gather(NodeFeat(), nodes, x, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(nodes)*4*e.s.part.Meta.FeatDim)/(cpuTime()-cpu0).Seconds()/1e9, "GB/cpu-s")
	b.ReportMetric(float64(len(nodes)), "rows/batch")
}
