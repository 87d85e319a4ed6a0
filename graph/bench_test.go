package graph

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"mpignn/internal/hashkey"
)

// Speed targets (see BENCHMARKS.md): CSV parsing >= 100 MB/s of
// uncompressed text per core. The parse benchmarks feed in-memory text
// through the same chunker and line parsers ReadOGB uses (no gzip), with
// workers=1 for the per-core figure; b.SetBytes makes `go test -bench`
// print MB/s.

func edgeText(lines int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for i := 0; i < lines; i++ {
		b = strconv.AppendInt(b, r.Int64N(2450000), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, r.Int64N(2450000), 10)
		b = append(b, '\n')
	}
	return b
}

// featText writes rows of dim values: "dense" like the generator's
// (-1.234), "binary" like the bag-of-words datasets (0/1).
func featText(rows, dim int, kind string) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	var b []byte
	for i := 0; i < rows; i++ {
		for j := 0; j < dim; j++ {
			if j > 0 {
				b = append(b, ',')
			}
			if kind == "binary" {
				b = append(b, byte('0'+r.IntN(2)))
			} else {
				b = appendFloat32(b, float32(int(r.NormFloat64()*1000))/1000)
			}
		}
		b = append(b, '\n')
	}
	return b
}

func benchWorkers() []int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return []int{1, p}
	}
	return []int{1}
}

func BenchmarkParseEdges(b *testing.B) {
	const lines = 1 << 20
	text := edgeText(lines)
	src := make([]int64, lines)
	dst := make([]int64, lines)
	for _, w := range benchWorkers() {
		b.Run("workers="+strconv.Itoa(w), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				_, err := scanChunks(bytes.NewReader(text), w, func(c *textChunk) error {
					return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
						u, v, err := parseEdgeLine(line)
						src[idx], dst[idx] = u, v
						return err
					})
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseFeatures(b *testing.B) {
	const rows, dim = 20000, 100
	out := make([]float32, rows*dim)
	for _, kind := range []string{"dense", "binary"} {
		text := featText(rows, dim, kind)
		for _, w := range benchWorkers() {
			b.Run(kind+"/workers="+strconv.Itoa(w), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					_, err := scanChunks(bytes.NewReader(text), w, func(c *textChunk) error {
						return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
							return parseFeatureLine(line, out[idx*dim:(idx+1)*dim])
						})
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkReadFacebook is the end-to-end read (gunzip, parse, build the
// symmetric CSC) of ../shared/data/facebook.
func BenchmarkReadFacebook(b *testing.B) {
	dir := filepath.Join(dataRoot(), "facebook")
	if _, err := os.Stat(filepath.Join(dir, "raw")); err != nil {
		b.Skipf("dataset %s not present; set MPIGNN_DATA", dir)
	}
	for b.Loop() {
		d, err := ReadOGB(dir, UndirectedOptions())
		if err != nil {
			b.Fatal(err)
		}
		if d.NumNodes != 22470 {
			b.Fatalf("%d nodes", d.NumNodes)
		}
	}
}

// BenchmarkGenerate generates (in memory, not written) the peer-comparison
// graph shape scaled down 10x: 20,000 nodes, average degree 40.
func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(GenOptions{Nodes: 20000, AvgDegree: 40, Classes: 47, FeatDim: 100, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadDataset reads the dataset directory named by
// $MPIGNN_BENCH_DATASET (e.g. a products-size graph from `mpignn gen`)
// with UndirectedOptions; skipped when unset because it is big.
func BenchmarkReadDataset(b *testing.B) {
	dir := os.Getenv("MPIGNN_BENCH_DATASET")
	if dir == "" {
		b.Skip("set MPIGNN_BENCH_DATASET to a dataset directory")
	}
	for b.Loop() {
		d, err := ReadOGB(dir, UndirectedOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(d.In.NumEdges()), "edges")
	}
}

// BenchmarkBuildInCSRTimed builds the timed adjacency of 4M random events
// on 1M nodes (10 time values per node pair on average collide rarely).
func BenchmarkBuildInCSRTimed(b *testing.B) {
	const n, m = 1 << 20, 4 << 20
	src, dst, tm := make([]int64, m), make([]int64, m), make([]int64, m)
	for i := range src {
		src[i], dst[i], tm[i] = int64(hashkey.Step(uint64(i))%n), int64(hashkey.Step(uint64(i)+m)%n), genTime(1, 2, 0, uint64(i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		BuildInCSRTimed(n, src, dst, tm, BuildOptions{Undirected: true, Dedup: true})
	}
	b.ReportMetric(float64(2*m)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
