package graph

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lineFeatRow is the edge feature row the tests write for line i: unique
// per line, so a stored row names the line it came from.
func lineFeatRow(i int) []float32 { return []float32{float32(i), float32(i) + 0.5} }

// edgeFeatText is edge-feat.csv.gz's text for m lines (lineFeatRow).
func edgeFeatText(m int) string {
	var b strings.Builder
	for i := range m {
		r := lineFeatRow(i)
		fmt.Fprintf(&b, "%g,%g\n", r[0], r[1])
	}
	return b.String()
}

func TestBuildInCSREdgeIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	n, m := int64(300), 200000 // enough edges for several workers
	src, dst, tm := make([]int64, m), make([]int64, m), make([]int64, m)
	for i := range src {
		src[i], dst[i], tm[i] = rng.Int64N(n), rng.Int64N(n), rng.Int64N(4)
	}
	for _, opt := range []BuildOptions{{}, {Dedup: true}, {Undirected: true}, {Undirected: true, DropSelfLoops: true, Dedup: true}} {
		for _, timed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%+v timed=%v", opt, timed), func(t *testing.T) {
				var times []int64
				if timed {
					times = tm
				}
				var ref []*CSR
				for _, w := range []int{1, 3} {
					o := opt
					o.Workers = w
					g, gt, ids := BuildInCSREdgeIDs(n, src, dst, times, o)
					// The same adjacency (and times) as the builders without ids.
					if timed {
						wg, wt := BuildInCSRTimed(n, src, dst, tm, o)
						require.Equal(t, wg, g)
						require.Equal(t, wt, gt)
					} else {
						require.Equal(t, BuildInCSR(n, src, dst, o), g)
						require.Nil(t, gt)
					}
					require.Len(t, ids, len(g.Indices))
					// Every stored edge names an input edge it stands for; with
					// Dedup the lowest index of those.
					first := map[[3]int64]int64{}
					for i := range src {
						for k, e := range [][2]int64{{src[i], dst[i]}, {dst[i], src[i]}} {
							if (k == 1 && !opt.Undirected) || (opt.DropSelfLoops && src[i] == dst[i]) {
								continue
							}
							key := [3]int64{e[0], e[1], 0}
							if timed {
								key[2] = tm[i]
							}
							if _, ok := first[key]; !ok {
								first[key] = int64(i)
							}
						}
					}
					for v := int64(0); v < n; v++ {
						for e := g.Indptr[v]; e < g.Indptr[v+1]; e++ {
							i, u := ids[e], g.Indices[e]
							require.True(t, (src[i] == u && dst[i] == v) || (opt.Undirected && src[i] == v && dst[i] == u), "edge %d->%d from line %d", u, v, i)
							if timed {
								require.Equal(t, tm[i], gt[e])
							}
							if opt.Dedup {
								key := [3]int64{u, v, 0}
								if timed {
									key[2] = gt[e]
								}
								require.Equal(t, first[key], i, "edge %d->%d keeps the first line", u, v)
							}
						}
					}
					ref = append(ref, &CSR{Indptr: g.Indptr, Indices: ids})
				}
				assert.Equal(t, ref[0], ref[1], "ids do not depend on the workers")
			})
		}
	}
}

// graphFiles is a 5-node graph with a repeated edge (lines 0 and 3, and
// line 5 its reverse), a self loop (line 4) and an isolated node 4; no
// node features.
func graphFiles() map[string]string {
	return map[string]string{
		"raw/num-node-list.csv.gz": "5\n",
		"raw/num-edge-list.csv.gz": "7\n",
		"raw/edge.csv.gz":          "0,1\n1,2\n2,3\n0,1\n3,3\n1,0\n2,0\n",
		"raw/edge-feat.csv.gz":     edgeFeatText(7),
		"raw/node-label.csv.gz":    "0\n1\n0\n1\n1\n",
		"split/s/train.csv.gz":     "0\n1\n",
		"split/s/valid.csv.gz":     "2\n",
		"split/s/test.csv.gz":      "3\n4\n",
	}
}

func TestReadOGBEdgeFeat(t *testing.T) {
	src := []int64{0, 1, 2, 0, 3, 1, 2}
	dst := []int64{1, 2, 3, 1, 3, 0, 0}
	tests := []struct {
		name string
		opt  ReadOptions
	}{
		{"as written", ReadOptions{}},
		{"dedup", ReadOptions{Dedup: true}},
		{"undirected", ReadOptions{Undirected: true}},
		{"no self loops", ReadOptions{DropSelfLoops: true}},
		{"undirected options", UndirectedOptions()},
		{"timed undirected", ReadOptions{Undirected: true, Dedup: true, DropSelfLoops: true, Time: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := graphFiles()
			f["raw/edge_time.csv.gz"] = "5\n4\n3\n5\n1\n5\n1\n"
			opt := tc.opt
			opt.EdgeFeat, opt.OptionalFeatures = true, true
			d, err := ReadOGB(writeTiny(t, f), opt)
			require.NoError(t, err)
			require.NotNil(t, d.EdgeFeat)
			require.Equal(t, 2, d.EdgeFeat.Dim)
			require.Equal(t, d.In.NumEdges(), d.EdgeFeat.NumRows())
			// The same adjacency as without edge features.
			opt.EdgeFeat = false
			plain, err := ReadOGB(writeTiny(t, f), opt)
			require.NoError(t, err)
			require.Equal(t, plain.In, d.In)
			require.Equal(t, plain.InTime, d.InTime)
			// Each stored in-edge u->v has the row of the first line that
			// gives it (u,v or, undirected, v,u), or of some such line
			// without dedup.
			for v := int64(0); v < d.NumNodes; v++ {
				for e := d.In.Indptr[v]; e < d.In.Indptr[v+1]; e++ {
					u := d.In.Indices[e]
					var lines []int
					for i := range src {
						if (src[i] == u && dst[i] == v) || (opt.Undirected && src[i] == v && dst[i] == u) {
							if !opt.Time || d.InTime[e] == []int64{5, 4, 3, 5, 1, 5, 1}[i] {
								lines = append(lines, i)
							}
						}
					}
					require.NotEmpty(t, lines, "edge %d->%d", u, v)
					row := d.EdgeFeat.Row(e)
					line := int(row[0])
					assert.Equal(t, lineFeatRow(line), row)
					assert.Contains(t, lines, line, "edge %d->%d", u, v)
					if opt.Dedup {
						assert.Equal(t, lines[0], line, "edge %d->%d keeps its first line", u, v)
					}
				}
			}
		})
	}
	t.Run("not asked for", func(t *testing.T) {
		d, err := ReadOGB(writeTiny(t, graphFiles()), ReadOptions{OptionalFeatures: true})
		require.NoError(t, err)
		assert.Nil(t, d.EdgeFeat)
		assert.Nil(t, d.Feat)
	})
}

// refNodeFeat is NodeFeatFromEdges computed directly from the edge list
// the dataset stores: every in-edge's row summed (and averaged).
func refNodeFeat(d *Dataset, mean bool) []float32 {
	dim := d.EdgeFeat.Dim
	out := make([]float32, d.NumNodes*int64(dim))
	for v := int64(0); v < d.NumNodes; v++ {
		deg := d.In.Degree(v)
		for j := range dim {
			s := 0.0
			for e := d.In.Indptr[v]; e < d.In.Indptr[v+1]; e++ {
				s += float64(d.EdgeFeat.Data[e*int64(dim)+int64(j)])
			}
			if mean && deg > 0 {
				s /= float64(deg)
			}
			out[v*int64(dim)+int64(j)] = float32(s)
		}
	}
	return out
}

func TestNodeFeatFromEdges(t *testing.T) {
	for _, mode := range []string{FromEdgesMean, FromEdgesSum} {
		t.Run(mode, func(t *testing.T) {
			dir := writeTiny(t, graphFiles())
			d, err := ReadOGB(dir, ReadOptions{Undirected: true, DropSelfLoops: true, Dedup: true, EdgeFeat: true, NodeFeatFromEdges: mode})
			require.NoError(t, err)
			require.NotNil(t, d.Feat)
			assert.Equal(t, refNodeFeat(d, mode == FromEdgesMean), d.Feat.Data)
			assert.Equal(t, []float32{0, 0}, d.Feat.Row(4), "isolated node: zeros")
			// Node 1's in-edges: 0->1 (line 0, first of 0,3,5) and 2->1 (line 1).
			want := []float32{0 + 1, 0.5 + 1.5}
			if mode == FromEdgesMean {
				want = []float32{0.5, 1}
			}
			assert.Equal(t, want, d.Feat.Row(1))
			// Without EdgeFeat the edge features are dropped once used.
			d2, err := ReadOGB(dir, ReadOptions{Undirected: true, DropSelfLoops: true, Dedup: true, NodeFeatFromEdges: mode})
			require.NoError(t, err)
			assert.Nil(t, d2.EdgeFeat)
			assert.Equal(t, d.Feat, d2.Feat)
		})
	}
	t.Run("random graph, several workers", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		n, m := int64(500), 150000
		src, dst := make([]int64, m), make([]int64, m)
		for i := range src {
			src[i], dst[i] = rng.Int64N(n), rng.Int64N(n)
		}
		g, _, ids := BuildInCSREdgeIDs(n, src, dst, nil, BuildOptions{Undirected: true, Dedup: true})
		ef := &Features{Dim: 3, Data: make([]float32, 3*m)}
		for i := range ef.Data {
			ef.Data[i] = float32(rng.NormFloat64())
		}
		d := &Dataset{NumNodes: n, In: g, EdgeFeat: GatherRows(ef, ids, 3)}
		for _, mode := range []string{FromEdgesMean, FromEdgesSum} {
			f1, err := NodeFeatFromEdges(g, d.EdgeFeat, mode, 1)
			require.NoError(t, err)
			f4, err := NodeFeatFromEdges(g, d.EdgeFeat, mode, 4)
			require.NoError(t, err)
			assert.Equal(t, f1, f4)
			assert.Equal(t, refNodeFeat(d, mode == FromEdgesMean), f1.Data)
		}
	})
}

func TestReadOGBEdgeFeatBadInput(t *testing.T) {
	feat := "raw/edge-feat.csv.gz"
	tests := []struct {
		name  string
		files map[string]string // changes to graphFiles (value "" removes)
		opt   ReadOptions
		want  string
	}{
		{"short", map[string]string{feat: edgeFeatText(6)}, ReadOptions{EdgeFeat: true},
			"edge-feat.csv.gz: 6 edge feature rows, want one per line of edge.csv.gz (7)"},
		{"long", map[string]string{feat: edgeFeatText(9)}, ReadOptions{EdgeFeat: true},
			"edge-feat.csv.gz line 8: more edge feature rows than the 7 lines of edge.csv.gz"},
		{"ragged", map[string]string{feat: "0,1\n1,2\n2\n3,4\n4,5\n5,6\n6,7\n"}, ReadOptions{EdgeFeat: true},
			"edge-feat.csv.gz line 3: 1 values, want 2"},
		{"not a number", map[string]string{feat: "0,1\n1,2\n2,3\n3,x\n4,5\n5,6\n6,7\n"}, ReadOptions{EdgeFeat: true},
			"edge-feat.csv.gz line 4: value 2"},
		{"missing", map[string]string{feat: ""}, ReadOptions{EdgeFeat: true},
			"edge features requested but"},
		{"from-edges without edge features", map[string]string{feat: ""}, ReadOptions{NodeFeatFromEdges: FromEdgesMean},
			"node features from-edges:mean, but the dataset has no edge features"},
		{"from-edges with node features", map[string]string{"raw/node-feat.csv.gz": "1\n2\n3\n4\n5\n"}, ReadOptions{NodeFeatFromEdges: FromEdgesSum},
			"node features from-edges:sum, but the dataset has its own"},
		{"bad mode", nil, ReadOptions{NodeFeatFromEdges: "from-edges:max"},
			`NodeFeatFromEdges: node features "from-edges:max": want from-edges:mean or from-edges:sum`},
		{"no node features without the flag", map[string]string{feat: ""}, ReadOptions{},
			"missing file"},
		{"edge features only without the flag", nil, ReadOptions{},
			"node-feat.csv.gz; the dataset has edge features (edge-feat.csv.gz): --node-feat from-edges:mean (or from-edges:sum) makes node features from them"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := graphFiles()
			for k, v := range tc.files {
				if v == "" {
					delete(f, k)
				} else {
					f[k] = v
				}
			}
			opt := tc.opt
			opt.OptionalFeatures = opt.EdgeFeat // graphFiles has no node features
			_, err := ReadOGB(writeTiny(t, f), opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestWriteReadEdgeFeat(t *testing.T) {
	d, err := ReadOGB(writeTiny(t, graphFiles()), ReadOptions{Undirected: true, Dedup: true, EdgeFeat: true, OptionalFeatures: true})
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "out")
	require.NoError(t, WriteOGBFromDataset(out, d))
	assert.NoFileExists(t, filepath.Join(out, "raw", "node-feat.csv.gz"))
	back, err := ReadOGB(out, ReadOptions{EdgeFeat: true, OptionalFeatures: true})
	require.NoError(t, err)
	assert.Equal(t, d.In, back.In)
	assert.Equal(t, d.EdgeFeat, back.EdgeFeat)
	assert.Nil(t, back.Feat)
	// Edge features that are not one row per line are refused.
	bad := *d
	bad.EdgeFeat = &Features{Dim: 2, Data: []float32{1, 2}}
	err = WriteOGBFromDataset(filepath.Join(t.TempDir(), "bad"), &bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "edge feature rows")
}

func TestGenEdgeFeat(t *testing.T) {
	opt := GenOptions{Nodes: 400, AvgDegree: 6, Classes: 3, FeatDim: 2, Seed: 5, EdgeFeatDim: 3, NoNodeFeat: true}
	var dirs []string
	for _, w := range []int{1, 3} {
		o := opt
		o.Workers = w
		s, err := Generate(o)
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "g")
		require.NoError(t, WriteSynthetic(dir, s))
		assert.NoFileExists(t, filepath.Join(dir, "raw", "node-feat.csv.gz"))
		ro := UndirectedOptions()
		ro.EdgeFeat, ro.OptionalFeatures = true, true
		d, err := ReadOGB(dir, ro)
		require.NoError(t, err)
		require.Nil(t, d.Feat)
		require.Equal(t, 3, d.EdgeFeat.Dim)
		pair := map[[2]int64]int64{}
		for k, p := range s.Pairs {
			u, v := int64(p>>32), int64(p&0xffffffff)
			pair[[2]int64{min(u, v), max(u, v)}] = int64(k)
		}
		for v := int64(0); v < d.NumNodes; v++ {
			for e := d.In.Indptr[v]; e < d.In.Indptr[v+1]; e++ {
				u := d.In.Indices[e]
				k, ok := pair[[2]int64{min(u, v), max(u, v)}]
				require.True(t, ok)
				for j := range 3 {
					assert.Equal(t, GenEdgeFeat(opt.Seed, k, j, 3, d.Labels[u], d.Labels[v]), d.EdgeFeat.Row(e)[j])
				}
			}
		}
		dirs = append(dirs, dir)
	}
	a, err := os.ReadFile(filepath.Join(dirs[0], "raw", EdgeFeatFile))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dirs[1], "raw", EdgeFeatFile))
	require.NoError(t, err)
	assert.Equal(t, a, b, "the same file for any worker count")
}

// TestConvertEdgeFeatOnly: convert writes a dataset with edge features
// and no node features as edge_data "feat" chunks laid out as the edge
// chunks (row i of chunk k that of the chunk's edge i), and no node "feat".
func TestConvertEdgeFeatOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c")
	require.NoError(t, ConvertToChunked(writeTiny(t, graphFiles()), out, ConvertOptions{ChunkEdges: 3}))
	c, err := OpenChunked(out)
	require.NoError(t, err)
	assert.False(t, c.HasNodeData(HomoNodeType, ChunkFeat))
	require.True(t, c.HasEdgeData(HomoEdgeType, ChunkFeat))
	line := 0
	for k := range c.NumEdgeChunks(0) {
		dim, err := c.EdgeFeatDim(0, ChunkFeat, k)
		require.NoError(t, err)
		assert.Equal(t, 2, dim)
		f, err := c.ReadEdgeFeat(0, ChunkFeat, k)
		require.NoError(t, err)
		for i := range f.NumRows() {
			assert.Equal(t, lineFeatRow(line), f.Row(i), "chunk %d row %d", k, i)
			line++
		}
	}
	assert.Equal(t, 7, line)
}

// TestConvertEdgeFeatBad: an edge feature file of another row count than
// the edge lines, and edge_data "feat" chunks of the wrong shape, are one
// line naming the file.
func TestConvertEdgeFeatBad(t *testing.T) {
	files := graphFiles()
	files["raw/edge-feat.csv.gz"] = edgeFeatText(6)
	err := ConvertToChunked(writeTiny(t, files), filepath.Join(t.TempDir(), "c"), ConvertOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "edge-feat.csv.gz: 6 edge feature rows, want one per edge line (7)")
	assert.NotContains(t, err.Error(), "\n")

	out := filepath.Join(t.TempDir(), "c")
	require.NoError(t, ConvertToChunked(writeTiny(t, graphFiles()), out, ConvertOptions{ChunkEdges: 4}))
	c, err := OpenChunked(out)
	require.NoError(t, err)
	chunk := filepath.Join(out, c.Meta.EdgeData[HomoEdgeType][ChunkFeat].Data[0])
	for _, bad := range []any{
		[]float32{1, 2, 3, 4},               // 1-D
		[][]float32{{1, 2}, {3, 4}, {5, 6}}, // 3 rows for a chunk of 4 edges
	} {
		require.NoError(t, WriteNpy(chunk, bad))
		_, err := c.ReadEdgeFeat(0, ChunkFeat, 0)
		require.Error(t, err)
		assert.Contains(t, err.Error(), chunk+": shape")
		assert.Contains(t, err.Error(), "want (4, dim) (one row per edge of the chunk)")
		assert.NotContains(t, err.Error(), "\n")
	}
}
