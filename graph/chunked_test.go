package graph

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"codeberg.org/sbinet/npyio"
	"codeberg.org/sbinet/npyio/npz"
	"github.com/stretchr/testify/require"
)

// readAllChunks reads back every chunk of a chunked dataset: per edge type
// the type-local edges, per node type the features, labels and splits.
func readAllChunks(t *testing.T, c *Chunked) (edges map[string][][2]int64, feat map[string]*Features, labels map[string][]int64, splits map[string]map[string]*Split) {
	t.Helper()
	edges = map[string][][2]int64{}
	for e, et := range c.Meta.EdgeType {
		for k := 0; k < c.NumEdgeChunks(e); k++ {
			src, dst, err := c.ReadEdgeChunk(e, k)
			require.NoError(t, err)
			for i := range src {
				edges[et] = append(edges[et], [2]int64{src[i], dst[i]})
			}
		}
	}
	feat, labels, splits = map[string]*Features{}, map[string][]int64{}, map[string]map[string]*Split{}
	for ti, typ := range c.Meta.NodeType {
		for k := 0; k < c.NumNodeChunks(ti); k++ {
			base := c.NodeChunkStart(ti, k)
			if c.HasNodeData(typ, ChunkFeat) {
				f, err := c.ReadNodeFeat(ti, ChunkFeat, k)
				require.NoError(t, err)
				if feat[typ] == nil {
					feat[typ] = &Features{Dim: f.Dim}
				}
				feat[typ].Data = append(feat[typ].Data, f.Data...)
			}
			if c.HasNodeData(typ, ChunkLabel) {
				l, err := c.ReadNodeInts(ti, ChunkLabel, k)
				require.NoError(t, err)
				labels[typ] = append(labels[typ], l...)
			}
			for _, name := range c.SplitNames(typ) {
				if splits[name] == nil {
					splits[name] = map[string]*Split{}
				}
				if splits[name][typ] == nil {
					splits[name][typ] = &Split{Train: []int64{}, Valid: []int64{}, Test: []int64{}}
				}
				s := splits[name][typ]
				for set, dst := range []*[]int64{&s.Train, &s.Valid, &s.Test} {
					m, err := c.ReadNodeInts(ti, MaskKey(name, set), k)
					require.NoError(t, err)
					for i, x := range m {
						if x != 0 {
							*dst = append(*dst, base+int64(i))
						}
					}
				}
			}
		}
	}
	return edges, feat, labels, splits
}

func sortedIDs(ids []int64) []int64 { s := slices.Clone(ids); slices.Sort(s); return s }

func TestConvertHomogeneousRoundTrip(t *testing.T) {
	syn, err := Generate(GenOptions{Nodes: 700, AvgDegree: 6, Classes: 5, FeatDim: 8, Seed: 3, Workers: 1})
	require.NoError(t, err)
	dir := t.TempDir()
	src := filepath.Join(dir, "g")
	require.NoError(t, WriteSynthetic(src, syn))
	out := filepath.Join(dir, "chunked")
	require.NoError(t, ConvertToChunked(src, out, ConvertOptions{ChunkNodes: 200, ChunkEdges: 1000}))
	require.True(t, IsChunkedLayout(out))
	c, err := OpenChunked(out)
	require.NoError(t, err)
	require.True(t, c.Homogeneous())
	require.Equal(t, "g", c.Meta.GraphName)
	require.Equal(t, []int64{200, 200, 200, 100}, c.Meta.NumNodesPerChunk[0])

	edges, feat, labels, splits := readAllChunks(t, c)
	// The chunks hold the edge lines in file order: rebuilding the
	// adjacency as ReadOGB does gives ReadOGB's.
	d, err := ReadOGB(src, UndirectedOptions())
	require.NoError(t, err)
	var s, ds []int64
	for _, e := range edges[HomoEdgeType] {
		s, ds = append(s, e[0]), append(ds, e[1])
	}
	in := BuildInCSR(700, s, ds, BuildOptions{Undirected: true, DropSelfLoops: true, Dedup: true, Workers: 1})
	require.Equal(t, d.In.Indptr, in.Indptr)
	require.Equal(t, d.In.Indices, in.Indices)
	require.Equal(t, d.Feat.Dim, feat[HomoNodeType].Dim)
	require.Equal(t, d.Feat.Data, feat[HomoNodeType].Data)
	for v, l := range d.Labels {
		require.Equal(t, int64(l), labels[HomoNodeType][v])
	}
	want := d.Splits[GenSplitName]
	got := splits[GenSplitName][HomoNodeType]
	require.Equal(t, sortedIDs(want.Train), got.Train)
	require.Equal(t, sortedIDs(want.Valid), got.Valid)
	require.Equal(t, sortedIDs(want.Test), got.Test)
}

func TestConvertHeteroRoundTrip(t *testing.T) {
	opt := HeteroGenOptions{
		Papers: 400, Authors: 600, Institutions: 20, Fields: 40,
		Cites: 3000, Writes: 4000, Affiliations: 600, Topics: 4000,
		Classes: 5, FeatDim: 6, FeatSep: 1, Seed: 2,
	}
	d, err := GenerateHetero(opt)
	require.NoError(t, err)
	dir := t.TempDir()
	src := filepath.Join(dir, "mag")
	require.NoError(t, WriteHetero(src, d))
	out := filepath.Join(dir, "chunked")
	require.NoError(t, ConvertToChunked(src, out, ConvertOptions{ChunkNodes: 150, ChunkEdges: 999}))
	c, err := OpenChunked(out)
	require.NoError(t, err)
	require.False(t, c.Homogeneous())
	back, err := ReadOGBHetero(src, HeteroReadOptions{})
	require.NoError(t, err)
	edges, feat, labels, splits := readAllChunks(t, c)
	s := back.Schema
	R := int64(s.NumRels())
	for r, rel := range s.Relations {
		var keys [][2]int64
		for v := int64(0); v < s.NumNodes(); v++ {
			for _, u := range back.In.Neighbors(v*R + int64(r)) {
				keys = append(keys, [2]int64{u - s.NodeOrig[s.SrcType(r)], v - s.NodeOrig[s.DstType(r)]})
			}
		}
		got := slices.Clone(edges[EdgeTypeOf(rel)])
		slices.SortFunc(got, func(a, b [2]int64) int {
			if a[1] != b[1] {
				return int(a[1] - b[1])
			}
			return int(a[0] - b[0])
		})
		got = slices.Compact(got)
		require.Equal(t, keys, got, rel.String())
	}
	for typ, f := range back.Feat {
		require.Equal(t, f.Data, feat[typ].Data, typ)
	}
	for typ, ls := range back.Labels {
		for i, l := range ls {
			require.Equal(t, int64(l), labels[typ][i])
		}
	}
	for name, byType := range back.Splits {
		for typ, sp := range byType {
			require.Equal(t, sortedIDs(sp.Train), splits[name][typ].Train)
			require.Equal(t, sortedIDs(sp.Test), splits[name][typ].Test)
		}
	}
}

// TestAutoChunkNodes: convert's default node chunks give a type at least
// AutoNodeChunks/2 chunks (one per node when it is smaller), so that every
// rank of a job of up to 64 ranks reads one, within the memory cap
// (issue 34: 1 M-node chunks made any smaller graph a single chunk).
func TestAutoChunkNodes(t *testing.T) {
	for _, tc := range []struct {
		n, per int64
	}{
		{0, 1}, {1, 1}, {2, 1}, {64, 1}, {128, 1}, {129, 2}, {2708, 22},
		{200000, 1563}, {AutoNodeChunks * MaxAutoChunkNodes, MaxAutoChunkNodes}, {1 << 40, MaxAutoChunkNodes},
	} {
		per := AutoChunkNodes(tc.n)
		require.Equal(t, tc.per, per, "n=%d", tc.n)
		if tc.n > 0 && per < MaxAutoChunkNodes {
			require.GreaterOrEqual(t, int64(len(ChunkSizes(tc.n, per))), min(tc.n, AutoNodeChunks/2), "n=%d", tc.n)
		}
	}
}

func TestChunkedRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		d := filepath.Join(dir, "c")
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, ChunkedMetaFile), []byte(s), 0o644))
		return d
	}
	for _, tc := range []struct{ meta, want string }{
		{`{"node_type":["_N"],"num_nodes_per_chunk":[[3]],"edge_type":["_N:_E:_N"],"num_edges_per_chunk":[[1]],"edges":{"_N:_E:_N":{"format":{"name":"hdf5"},"data":["e.h5"]}}}`, `unknown format "hdf5" (want numpy, parquet or csv)`},
		{`{"node_type":["_N"],"num_nodes_per_chunk":[[3]],"edge_type":[],"num_edges_per_chunk":[],"edges":{},"node_data":{"_N":{"feat":{"format":{"name":"csv"},"data":["f.csv"]}}}}`, "format csv is not supported for node data (use numpy or parquet)"},
		{`{"node_type":["_N"],"num_nodes_per_chunk":[[3]],"edge_type":["_N:_E:_N"],"num_edges_per_chunk":[[1,2]],"edges":{"_N:_E:_N":{"format":{"name":"parquet"},"data":["e.parquet"]}}}`, "1 files for 2 chunks"},
		{`{"node_type":["_N"],"num_nodes_per_chunk":[[3]],"edge_type":["_N:_E:_N"],"num_edges_per_chunk":[[1,2]],"edges":{"_N:_E:_N":{"format":{"name":"csv"},"data":["e.csv"]}}}`, "1 files for 2 chunks"},
		{`{"node_type":["_N"],"num_nodes_per_chunk":[[3]],"edge_type":["a:b"],"num_edges_per_chunk":[[1]],"edges":{}}`, "want src:rel:dst"},
	} {
		_, err := OpenChunked(write(tc.meta))
		require.ErrorContains(t, err, tc.want)
		require.ErrorContains(t, err, ChunkedMetaFile)
	}
	// A CSV chunk with a bad line names its file and line.
	d := write(`{"node_type":["_N"],"num_nodes_per_chunk":[[3]],"edge_type":["_N:_E:_N"],"num_edges_per_chunk":[[2]],"edges":{"_N:_E:_N":{"format":{"name":"csv","delimiter":" "},"data":["e.csv"]}}}`)
	require.NoError(t, os.WriteFile(filepath.Join(d, "e.csv"), []byte("0 1\n2 x\n"), 0o644))
	c, err := OpenChunked(d)
	require.NoError(t, err)
	_, _, err = c.ReadEdgeChunk(0, 0)
	require.ErrorContains(t, err, "e.csv line 2")
	require.NoError(t, os.WriteFile(filepath.Join(d, "e.csv"), []byte("0 1\n2 3\n"), 0o644))
	_, _, err = c.ReadEdgeChunk(0, 0)
	require.ErrorContains(t, err, "outside [0,3)")
}

// TestConvertNpz writes OGB's binary layout (ogbn-papers100M's: data.npz
// with edge_index (2,m), node_feat, node_year, num_nodes_list;
// node-label.npz with NaN for unlabelled nodes) with npyio and converts
// it: the chunks hold the same edges, features, labels (-1 for NaN), years
// and split.
func TestConvertNpz(t *testing.T) {
	const n, m, dim = 230, 900, 3
	dir := t.TempDir()
	src := filepath.Join(dir, "papers")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "raw"), 0o755))
	ei := [][]int64{make([]int64, m), make([]int64, m)}
	for i := range m {
		ei[0][i], ei[1][i] = int64(i*7%n), int64(i*13%n)
	}
	feat := make([][]float32, n)
	year := make([][]int64, n)
	label := make([][]float64, n)
	for v := range n {
		feat[v] = []float32{float32(v), float32(v) / 2, -1}
		year[v] = []int64{2000 + int64(v%20)}
		label[v] = []float64{float64(v % 5)}
		if v%3 == 0 {
			label[v][0] = math.NaN()
		}
	}
	w, err := npz.Create(filepath.Join(src, "raw", "data.npz"))
	require.NoError(t, err)
	require.NoError(t, w.Write("edge_index.npy", ei))
	require.NoError(t, w.Write("node_feat.npy", feat))
	require.NoError(t, w.Write("node_year.npy", year))
	require.NoError(t, w.Write("num_nodes_list.npy", []int64{n}))
	require.NoError(t, w.Close())
	w, err = npz.Create(filepath.Join(src, "raw", "node-label.npz"))
	require.NoError(t, err)
	require.NoError(t, w.Write("node_label.npy", label))
	require.NoError(t, w.Close())
	sd := filepath.Join(src, "split", "time")
	require.NoError(t, os.MkdirAll(sd, 0o755))
	require.NoError(t, writeIDs(filepath.Join(sd, "train.csv.gz"), []int64{1, 2, 4}, n, 1))
	require.NoError(t, writeIDs(filepath.Join(sd, "valid.csv.gz"), []int64{5}, n, 1))
	require.NoError(t, writeIDs(filepath.Join(sd, "test.csv.gz"), []int64{7, 8}, n, 1))
	require.True(t, IsNpzLayout(src))
	_, err = ReadOGB(src, UndirectedOptions())
	require.ErrorContains(t, err, "mpignn convert")

	out := filepath.Join(dir, "chunked")
	require.NoError(t, ConvertToChunked(src, out, ConvertOptions{ChunkNodes: 100, ChunkEdges: 400}))
	c, err := OpenChunked(out)
	require.NoError(t, err)
	require.True(t, c.Homogeneous())
	edges, f, labels, splits := readAllChunks(t, c)
	require.Len(t, edges[HomoEdgeType], m)
	for i, e := range edges[HomoEdgeType] {
		require.Equal(t, [2]int64{ei[0][i], ei[1][i]}, e)
	}
	require.Equal(t, dim, f[HomoNodeType].Dim)
	for v := range n {
		require.Equal(t, feat[v], f[HomoNodeType].Row(int64(v)))
		want := int64(v % 5)
		if v%3 == 0 {
			want = -1
		}
		require.Equal(t, want, labels[HomoNodeType][v])
	}
	require.Equal(t, &Split{Train: []int64{1, 2, 4}, Valid: []int64{5}, Test: []int64{7, 8}}, splits["time"][HomoNodeType])
	y, err := c.ReadNodeInts(0, "year", 2)
	require.NoError(t, err)
	require.Equal(t, int64(2000+200%20), y[0])
}

// TestWriteNpyFastMatchesNpyio: the direct writer gives npyio's bytes for
// every type it handles; ragged rows fall back to npyio.
func TestWriteNpyFastMatchesNpyio(t *testing.T) {
	for name, xs := range map[string]any{
		"pairs":     [][2]int64{{1, 2}, {3, -4}, {1 << 40, 0}},
		"ints":      []int64{5, -1, 7},
		"long ints": make([]int64, 1000),
		"masks":     []uint8{0, 1, 1},
		"rows":      [][]float32{{1.5, 2}, {3, 4.25}, {0, -1}},
		"one col":   [][]float32{{1}, {2}},
		"wide rows": [][]float32{make([]float32, 100)},
	} {
		t.Run(name, func(t *testing.T) {
			var fast, ref bytes.Buffer
			ok, err := writeNpyFast(&fast, xs)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, npyio.Write(&ref, xs))
			require.Equal(t, ref.Bytes(), fast.Bytes())
		})
	}
	ok, err := writeNpyFast(io.Discard, [][]float32{{1, 2}, {3}})
	require.NoError(t, err)
	require.False(t, ok, "ragged rows")
	// No pairs: shape (0, 2), which the edge reader accepts (npyio writes
	// a shapeless void array for an empty [][2]int64).
	var b bytes.Buffer
	_, err = writeNpyFast(&b, [][2]int64{})
	require.NoError(t, err)
	require.Contains(t, b.String(), "'shape': (0, 2)")
}
