package partition

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"mpignn/graph"
)

// synthDataset generates an undirected graph with planted communities for
// benchmarks (mpignn gen produces comparable graphs on disk): node v is in
// community v%classes, out-degrees follow a discrete power law (Pareto,
// alpha 2.5) scaled so that about `pairs` edge lines exist, 85 % of the
// edges stay inside the community, and reverse edges are added as the
// reader does. Features are a class centroid plus noise.
func synthDataset(n, pairs int64, classes, dim int, seed uint64) *graph.Dataset {
	rng := rand.New(rand.NewPCG(seed, 11))
	const alpha = 2.5
	mean := float64(pairs) / float64(n)
	xm := mean * (alpha - 1) / alpha
	src := make([]int64, 0, pairs+pairs/8)
	dst := make([]int64, 0, pairs+pairs/8)
	c64 := int64(classes)
	per := n / c64
	for v := int64(0); v < n && int64(len(src)) < pairs; v++ {
		k := int(min(xm/math.Pow(1-rng.Float64(), 1/alpha)+0.5, 5000))
		for range k {
			var u int64
			if rng.IntN(100) < 85 {
				u = rng.Int64N(per)*c64 + v%c64
			} else {
				u = rng.Int64N(n)
			}
			src = append(src, v)
			dst = append(dst, u)
		}
	}
	d := &graph.Dataset{
		Name:       "synthetic",
		NumNodes:   n,
		In:         graph.BuildInCSR(n, src, dst, graph.BuildOptions{Undirected: true, DropSelfLoops: true, Dedup: true}),
		Feat:       &graph.Features{Dim: dim, Data: make([]float32, n*int64(dim))},
		Labels:     make([]int32, n),
		NumClasses: classes,
	}
	src, dst = nil, nil
	cent := make([]float32, classes*dim)
	for i := range cent {
		cent[i] = float32(rng.NormFloat64())
	}
	for v := int64(0); v < n; v++ {
		c := int(v % c64)
		d.Labels[v] = int32(c)
		row := d.Feat.Data[v*int64(dim) : (v+1)*int64(dim)]
		for j := range row {
			row[j] = cent[c*dim+j] + 2*(rng.Float32()-0.5)
		}
	}
	s := &graph.Split{}
	for v := int64(0); v < n; v++ {
		switch r := rng.IntN(100); {
		case r < 10:
			s.Train = append(s.Train, v)
		case r < 12:
			s.Valid = append(s.Valid, v)
		default:
			s.Test = append(s.Test, v)
		}
	}
	d.Splits = map[string]*graph.Split{"public": s}
	return d
}

// benchPartition generates the graph (untimed), then times METIS plus
// writing the partition directory.
func benchPartition(b *testing.B, n, pairs int64, classes, dim, parts int) {
	t0 := time.Now()
	d := synthDataset(n, pairs, classes, dim, 1)
	runtime.GC()
	b.Logf("generated %d nodes, %d directed edges, %d features in %.1fs", d.NumNodes, d.In.NumEdges(), dim, time.Since(t0).Seconds())
	root := b.TempDir()
	b.ResetTimer()
	var m *Meta
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(root, "p")
		os.RemoveAll(dir)
		t1 := time.Now()
		assign, err := Assign(d, parts, Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		tm := time.Since(t1)
		if m, err = Write(dir, d, assign, parts, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
		b.Logf("METIS %.1fs, write %.1fs", tm.Seconds(), time.Since(t1).Seconds()-tm.Seconds())
	}
	b.StopTimer()
	b.ReportMetric(m.EdgeCut(), "edge_cut")
	b.ReportMetric(m.Balance(), "balance")
	b.ReportMetric(cutFraction(d.In, Random(d.NumNodes, parts, 1)), "random_edge_cut")
}

// BenchmarkPartitionProducts partitions an ogbn-products-sized graph
// (2.45 M nodes, ~62 M directed edges, 100 features, 47 classes) into 4
// with METIS. It needs several GiB and minutes, so it only runs with
// MPIGNN_BENCH_PRODUCTS=1:
//
//	go test -c -o bin/partition.test ./partition/
//	MPIGNN_BENCH_PRODUCTS=1 /usr/bin/time -v bin/partition.test -test.run '^$' \
//	    -test.bench PartitionProducts -test.benchtime 1x -test.v
func BenchmarkPartitionProducts(b *testing.B) {
	if os.Getenv("MPIGNN_BENCH_PRODUCTS") != "1" {
		b.Skip("set MPIGNN_BENCH_PRODUCTS=1 to run (minutes, several GiB)")
	}
	benchPartition(b, 2_449_029, 31_000_000, 47, 100, 4)
}

// BenchmarkPartitionPeer200k partitions a 200,000-node graph with about
// 8 M directed edges into 2 with METIS and reports the edge cut.
func BenchmarkPartitionPeer200k(b *testing.B) {
	benchPartition(b, 200_000, 4_000_000, 47, 100, 2)
}
