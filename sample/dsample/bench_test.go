package dsample

import (
	"path/filepath"
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
// local sampling path of Store.Sample and the local row copy of
// Store.Gather. Targets: >= 10M sampled edges/s per core and >= 2 GB/s.
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
func (e *benchEnv) seeds(i int) (g, o []int64) {
	const B = 1024
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
	fan := []int{15, 10, 5}
	var edges int64
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; b.Loop(); i++ {
		g, o := e.seeds(i)
		var st sample.SampleStats
		if _, err := e.s.Sample(g, o, fan, sample.Key{Seed: 1, Batch: i}, false, &st); err != nil {
			b.Fatal(err)
		}
		edges += st.Edges()
	}
	b.ReportMetric(float64(edges)/b.Elapsed().Seconds(), "edges/s")
	b.ReportMetric(float64(edges)/(cpuTime()-cpu0).Seconds(), "edges/cpu-s")
	b.ReportMetric(float64(edges)/float64(b.N), "edges/batch")
}

func BenchmarkGatherLocal(b *testing.B) {
	e := newBenchEnv(b)
	g, o := e.seeds(0)
	blocks, err := e.s.Sample(g, o, []int{15, 10, 5}, sample.Key{Seed: 1}, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	nodes := blocks[0].Nodes
	var x []float32
	b.SetBytes(int64(len(nodes) * 4 * e.s.FeatDim()))
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if x, err = e.s.Gather(nodes, x, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(nodes)*4*e.s.FeatDim())/(cpuTime()-cpu0).Seconds()/1e9, "GB/cpu-s")
	b.ReportMetric(float64(len(nodes)), "rows/batch")
}
