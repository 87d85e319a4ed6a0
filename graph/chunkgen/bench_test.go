package chunkgen

import (
	"os"
	"path/filepath"
	"testing"

	"mpignn/graph"
)

// BenchmarkChunks writes one edge chunk and one node chunk of a
// products-like shape (1 M edges, 64 k nodes of 32 features).
func BenchmarkChunks(b *testing.B) {
	g, err := New(Options{GenOptions: graph.GenOptions{Nodes: 1 << 20, AvgDegree: 20, Classes: 47, FeatDim: 32, Seed: 1, Workers: 1},
		ChunkNodes: 1 << 16, ChunkEdges: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, d := range g.Dirs() {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("edges", func(b *testing.B) {
		for range b.N {
			if _, _, err := g.WriteEdgeChunk(dir, 0, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nodes", func(b *testing.B) {
		for range b.N {
			if _, err := g.WriteNodeChunk(dir, 0, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
