package chunkgen

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

func TestPermIsBijection(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 5, 17, 64, 1000, 4097} {
		p := newPerm(n, 7, tagClassPerm)
		seen := make([]bool, n)
		for x := range n {
			y := p.fwd(x)
			require.Less(t, y, n, "n=%d", n)
			require.False(t, seen[y], "n=%d: %d hit twice", n, y)
			seen[y] = true
			require.Equal(t, x, p.inv(y), "n=%d", n)
		}
	}
}

func small(seed uint64) Options {
	return Options{GenOptions: graph.GenOptions{Nodes: 3000, AvgDegree: 8, Classes: 5, FeatDim: 6, Seed: seed, Workers: 2}, ChunkNodes: 700, ChunkEdges: 5001}
}

// write generates every chunk of o into a fresh directory.
func write(t *testing.T, o Options) (string, *Gen) {
	t.Helper()
	g, err := New(o)
	require.NoError(t, err)
	return writeGen(t, g), g
}

func writeGen(t *testing.T, g *Gen) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range g.Dirs() {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for ty := range g.NumTypes() {
		for k := range g.NumNodeChunks(ty) {
			_, err := g.WriteNodeChunk(dir, ty, k)
			require.NoError(t, err)
		}
	}
	for r := range g.NumRels() {
		for k := range g.NumEdgeChunks(r) {
			_, _, err := g.WriteEdgeChunk(dir, r, k)
			require.NoError(t, err)
		}
	}
	writeMeta(t, dir, g)
	return dir
}

func writeMeta(t *testing.T, dir string, g *Gen) {
	t.Helper()
	b, err := MetaJSON(g.Meta())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, graph.ChunkedMetaFile), b, 0o644))
}

// TestChunksReadBack: the chunks open with graph.OpenChunked and hold
// exactly the values of Edge, Label, SplitSet and Features; the split
// counts are the options'.
func TestChunksReadBack(t *testing.T) {
	dir, g := write(t, small(3))
	c, err := graph.OpenChunked(dir)
	require.NoError(t, err)
	require.True(t, c.Homogeneous())
	require.Equal(t, []int64{3000}, c.Counts)
	i := int64(0)
	for k := range c.NumEdgeChunks(0) {
		src, dst, err := c.ReadEdgeChunk(0, k)
		require.NoError(t, err)
		for j := range src {
			u, v, _ := g.Edge(0, i)
			require.Equal(t, [2]int64{u, v}, [2]int64{src[j], dst[j]}, "edge %d", i)
			require.NotEqual(t, u, v, "self loop at %d", i)
			i++
		}
	}
	require.Equal(t, g.NumEdges(), i)
	require.Equal(t, int64(2*12000), i)
	var sets [4]int64
	v := int64(0)
	for k := range c.NumNodeChunks(0) {
		labels, err := c.ReadNodeInts(0, graph.ChunkLabel, k)
		require.NoError(t, err)
		feat, err := c.ReadNodeFeat(0, graph.ChunkFeat, k)
		require.NoError(t, err)
		var masks [3][]int64
		for s, key := range maskKeys() {
			masks[s], err = c.ReadNodeInts(0, key, k)
			require.NoError(t, err)
		}
		for j := range labels {
			require.Equal(t, int64(g.Label(v)), labels[j])
			require.Equal(t, g.Features(v), feat.Row(int64(j)))
			set := g.SplitSet(v)
			sets[set]++
			for s := range masks {
				require.Equal(t, int64(b2i(s == set)), masks[s][j])
			}
			v++
		}
	}
	o := g.Options()
	assert.Equal(t, [4]int64{o.Train, o.Valid, o.Test, 0}, sets)
	assert.Equal(t, [3]int64{o.Train, o.Valid, o.Test}, g.SplitCounts())
	assert.Equal(t, []string{graph.GenSplitName}, c.SplitNames(graph.HomoNodeType))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestChunksIndependentOfWorkersAndSizes: the workers do not change a
// byte; other chunk sizes cut the same values differently.
func TestChunksIndependentOfWorkersAndSizes(t *testing.T) {
	a, _ := write(t, small(5))
	o := small(5)
	o.Workers = 3
	b, _ := write(t, o)
	requireSameTree(t, a, b)

	o.ChunkNodes, o.ChunkEdges = 3000, 1<<20
	one, _ := write(t, o)
	ca, err := graph.OpenChunked(a)
	require.NoError(t, err)
	c1, err := graph.OpenChunked(one)
	require.NoError(t, err)
	var src []int64
	for k := range ca.NumEdgeChunks(0) {
		s, _, err := ca.ReadEdgeChunk(0, k)
		require.NoError(t, err)
		src = append(src, s...)
	}
	s1, _, err := c1.ReadEdgeChunk(0, 0)
	require.NoError(t, err)
	assert.Equal(t, s1, src)
}

func requireSameTree(t *testing.T, a, b string) {
	t.Helper()
	var files []string
	require.NoError(t, filepath.Walk(a, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(a, p)
			files = append(files, rel)
		}
		return err
	}))
	require.NotEmpty(t, files)
	for _, f := range files {
		x, err := os.ReadFile(filepath.Join(a, f))
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(b, f))
		require.NoError(t, err)
		require.True(t, bytes.Equal(x, y), "%s differs", f)
	}
}

// TestPlantedStructure: edges are mostly inside a class (about the
// homophily parameter), degrees are heavy-tailed, the seed matters, and
// features sit nearer their own class's centroid than another's.
func TestPlantedStructure(t *testing.T) {
	o := Options{GenOptions: graph.GenOptions{Nodes: 20000, AvgDegree: 10, Classes: 8, FeatDim: 16, Seed: 1}}
	g, err := New(o)
	require.NoError(t, err)
	deg := make([]int64, o.Nodes)
	var same int64
	seen := map[[2]int64]bool{}
	pairs := g.NumDraws()
	for k := range pairs {
		u, v, s := g.Pair(k)
		seen[[2]int64{u, v}] = true
		deg[u]++
		deg[v]++
		if g.Label(u) == g.Label(v) {
			same++
		}
		require.Equal(t, g.Label(u) == g.Label(v), s, "pair %d", k)
	}
	h := float64(same) / float64(pairs)
	assert.InDelta(t, 0.8, h, 0.06, "edge homophily")
	mean := float64(2*pairs) / float64(o.Nodes)
	assert.Greater(t, float64(slices.Max(deg)), 20*mean, "max degree vs mean %v", mean)
	dup := 1 - float64(len(seen))/float64(pairs)
	assert.Less(t, dup, 0.05, "repeated pairs")
	t.Logf("edge homophily %.4f, max degree %d (mean %.1f), repeated pairs %.4f", h, slices.Max(deg), mean, dup)

	o2 := o
	o2.Seed = 2
	g2, err := New(o2)
	require.NoError(t, err)
	u1, v1, _ := g.Pair(0)
	u2, v2, _ := g2.Pair(0)
	assert.NotEqual(t, [2]int64{u1, v1}, [2]int64{u2, v2})

	near := 0
	for v := range int64(2000) {
		x := g.Features(v)
		best, bestD := -1, 0.0
		for c := range o.Classes {
			d := 0.0
			for j, mu := range g.cen[c*16 : (c+1)*16] {
				d += (float64(x[j]) - mu) * (float64(x[j]) - mu)
			}
			if best < 0 || d < bestD {
				best, bestD = c, d
			}
		}
		if best == g.Label(v) {
			near++
		}
	}
	assert.Greater(t, near, 2000/8*2, "features-only nearest centroid hits %d of 2000", near)
}

func TestBadOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		mod  func(*Options)
		want string
	}{
		"chunk":      {func(o *Options) { o.ChunkEdges = -1 }, "chunk sizes"},
		"few nodes":  {func(o *Options) { o.Nodes = 5 }, "too few"},
		"power law":  {func(o *Options) { o.PowerLaw = 1.5 }, "power-law"},
		"split size": {func(o *Options) { o.Train = 5000 }, "needs more than"},
	} {
		t.Run(name, func(t *testing.T) {
			o := small(1)
			tc.mod(&o)
			_, err := New(o)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestTimes: --edge-time and --node-time write edge_data and node_data
// "time" chunks holding gen's times of the same seed (both lines of pair p
// the pair's, every node its own), whatever the chunk sizes; a
// heterogeneous graph's carry GenerateHetero's keys.
func TestTimes(t *testing.T) {
	o := small(4)
	o.EdgeTime, o.NodeTime = true, true
	for _, sizes := range [][2]int64{{700, 5001}, {1000, 999}} {
		o.ChunkNodes, o.ChunkEdges = sizes[0], sizes[1]
		dir, g := write(t, o)
		c, err := graph.OpenChunked(dir)
		require.NoError(t, err)
		require.True(t, c.HasEdgeData(graph.HomoEdgeType, graph.ChunkTime))
		require.True(t, c.HasNodeData(graph.HomoNodeType, graph.ChunkTime))
		i := int64(0)
		for k := range c.NumEdgeChunks(0) {
			ts, err := c.ReadEdgeInts(0, graph.ChunkTime, k)
			require.NoError(t, err)
			for _, x := range ts {
				require.Equal(t, graph.GenEdgeTime(4, i/2), x, "edge %d", i)
				i++
			}
		}
		require.Equal(t, g.NumEdges(), i)
		v := int64(0)
		for k := range c.NumNodeChunks(0) {
			ts, err := c.ReadNodeInts(0, graph.ChunkTime, k)
			require.NoError(t, err)
			for _, x := range ts {
				require.Equal(t, graph.GenNodeTime(4, v), x, "node %d", v)
				v++
			}
		}
		require.Equal(t, o.Nodes, v)
	}
	// Heterogeneous: GenerateHetero's keys, by relation index (the
	// schema's) and homogenized ids.
	h := graph.MagGenOptions(0.003)
	h.Seed, h.Workers, h.EdgeTime, h.NodeTime = 6, 2, true, true
	g, err := NewHetero(HeteroOptions{HeteroGenOptions: h, ChunkNodes: 900, ChunkEdges: 5000})
	require.NoError(t, err)
	c, err := graph.OpenChunked(writeGen(t, g))
	require.NoError(t, err)
	counts := map[string]int64{}
	for i, typ := range c.Meta.NodeType {
		counts[typ] = c.Counts[i]
	}
	s, err := graph.NewSchema(counts, c.Rels)
	require.NoError(t, err)
	for e, rel := range c.Rels {
		r := s.RelIndex(rel.String())
		require.Equal(t, e, r, "relations in schema order")
		sOff, dOff := s.NodeOrig[s.TypeIndex(rel.Src)], s.NodeOrig[s.TypeIndex(rel.Dst)]
		for k := range c.NumEdgeChunks(e) {
			src, dst, err := c.ReadEdgeChunk(e, k)
			require.NoError(t, err)
			ts, err := c.ReadEdgeInts(e, graph.ChunkTime, k)
			require.NoError(t, err)
			for i := range src {
				require.Equal(t, graph.GenHeteroEdgeTime(6, r, sOff+src[i], dOff+dst[i]), ts[i], "%s edge %d of chunk %d", rel, i, k)
			}
		}
	}
	for ct, typ := range c.Meta.NodeType {
		v := s.NodeOrig[s.TypeIndex(typ)]
		for k := range c.NumNodeChunks(ct) {
			ts, err := c.ReadNodeInts(ct, graph.ChunkTime, k)
			require.NoError(t, err)
			for _, x := range ts {
				require.Equal(t, graph.GenNodeTime(6, v), x, "%s node %d", typ, v)
				v++
			}
		}
	}
}

// TestHeteroReadsBack: the ogbn-mag-shaped graph opens with its four types
// and relations, edges are Edge's and stay in their types' ranges, papers
// carry labels, features and the split; most edges join one community.
func TestHeteroReadsBack(t *testing.T) {
	h := graph.MagGenOptions(0.005)
	h.Seed, h.Workers = 4, 2
	g, err := NewHetero(HeteroOptions{HeteroGenOptions: h, ChunkNodes: 1500, ChunkEdges: 7000})
	require.NoError(t, err)
	dir := writeGen(t, g)
	c, err := graph.OpenChunked(dir)
	require.NoError(t, err)
	require.False(t, c.Homogeneous())
	require.Equal(t, []string{graph.TypeAuthor, graph.TypeField, graph.TypeInstitution, graph.TypePaper}, c.Meta.NodeType)
	require.Equal(t, []int64{h.Authors, h.Fields, h.Institutions, h.Papers}, c.Counts)
	var same, total int64
	for r := range c.Meta.EdgeType {
		i := int64(0)
		for k := range c.NumEdgeChunks(r) {
			src, dst, err := c.ReadEdgeChunk(r, k) // checks the type ranges
			require.NoError(t, err)
			for j := range src {
				u, v, s := g.Edge(r, i)
				require.Equal(t, [2]int64{u, v}, [2]int64{src[j], dst[j]})
				if s {
					same++
				}
				i++
			}
		}
		require.Equal(t, g.rels[r].edges, i, c.Meta.EdgeType[r])
		total += i
	}
	// Homophily 0.7, less where the small types (44 institutions) have no
	// member of the anchor's community; at random about 1 in 100 would.
	assert.Greater(t, float64(same)/float64(total), 0.4, "share of edges inside a community")
	pt := c.TypeIndex(graph.TypePaper)
	require.Equal(t, []string{graph.TypePaper}, slices.Sorted(maps.Keys(c.Meta.NodeData)))
	var sets [4]int64
	v := int64(0)
	for k := range c.NumNodeChunks(pt) {
		labels, err := c.ReadNodeInts(pt, graph.ChunkLabel, k)
		require.NoError(t, err)
		feat, err := c.ReadNodeFeat(pt, graph.ChunkFeat, k)
		require.NoError(t, err)
		require.Equal(t, h.FeatDim, feat.Dim)
		for j := range labels {
			require.Equal(t, int64(g.Label(v)), labels[j])
			sets[g.SplitSet(v)]++
			v++
		}
	}
	sp := g.SplitCounts()
	assert.Equal(t, [4]int64{sp[0], sp[1], sp[2], 0}, sets)
}

// TestEmptyClassesNeverDrawn: a type with fewer nodes than classes has
// empty classes; no draw lands in one, even at u = 0.
func TestEmptyClassesNeverDrawn(t *testing.T) {
	h := graph.MagGenOptions(0.001) // 9 institutions for 50 classes
	h.Classes = 50
	g, err := NewHetero(HeteroOptions{HeteroGenOptions: h})
	require.NoError(t, err)
	for _, ty := range g.types {
		for _, u := range []float64{0, 1e-300, 0.5, 1 - 1e-16} {
			c := ty.classOf(u)
			require.Greater(t, ty.start[c+1], ty.start[c], "%s: u=%v drew empty class %d", ty.name, u, c)
		}
	}
	for r := range g.NumRels() {
		for i := range min(g.rels[r].edges, 2000) {
			g.Edge(r, i)
		}
	}
}
