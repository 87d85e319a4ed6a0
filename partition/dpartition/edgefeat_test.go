package dpartition

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// writeLineEdgeFeat replaces src's raw/edge-feat.csv.gz by rows unique per
// line of edge.csv.gz (gen writes the same row for both lines of a pair),
// so that which line's row a stored edge keeps shows in the output.
func writeLineEdgeFeat(src string, dim int) error {
	zr, err := os.Open(filepath.Join(src, "raw", "num-edge-list.csv.gz"))
	if err != nil {
		return err
	}
	defer zr.Close()
	r, err := gzip.NewReader(zr)
	if err != nil {
		return err
	}
	var lines int64
	if _, err := fmt.Fscan(r, &lines); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(src, "raw", graph.EdgeFeatFile))
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	for i := range lines {
		for j := range dim {
			sep := ","
			if j == dim-1 {
				sep = "\n"
			}
			fmt.Fprintf(zw, "%g%s", float32(i)+float32(j)/8, sep)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestEdgeFeatMatchesSingleProcess: with Options.EdgeFeat and NodeFeat the
// distributed partition of a chunked dataset with edge_data "feat"
// (convert of a raw dataset with edge features) is byte-identical to
// partition.Write of the dataset ReadOGB reads with EdgeFeat and
// NodeFeatFromEdges: every stored edge has the row of its first line
// (reverses their edge's), node features from the in-edges' rows, times
// and the node-time rule of which line a repeat keeps.
func TestEdgeFeatMatchesSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	for _, tc := range []struct {
		name               string
		noNodeFeat         bool
		edgeFeat           bool
		nodeFeat           string
		undirected         bool
		edgeTime, nodeTime bool
		normalize          bool
		method             string
	}{
		{"ef", false, true, "", true, false, false, false, partition.MethodRandom},
		{"ef-nf-mean", true, true, graph.FromEdgesMean, true, false, false, false, MethodAssignment},
		{"nf-sum-directed", true, false, graph.FromEdgesSum, false, false, false, true, partition.MethodRandom},
		{"ef-edge-time", false, true, "", true, true, false, false, partition.MethodRandom},
		{"ef-nf-node-time", true, true, graph.FromEdgesMean, true, false, true, false, partition.MethodRandom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, chunked := filepath.Join(dir, "g-"+tc.name), filepath.Join(dir, "chunked-"+tc.name)
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			assignDir := filepath.Join(dir, "assign-"+tc.name)
			timed := tc.edgeTime || tc.nodeTime
			var err error
			if c.Rank() == 0 {
				err = func() error {
					syn, err := graph.Generate(graph.GenOptions{Nodes: 389, AvgDegree: 6, Classes: 3, FeatDim: 5, Seed: 6, Workers: 1,
						EdgeFeatDim: 4, NoNodeFeat: tc.noNodeFeat, EdgeTime: tc.edgeTime, NodeTime: tc.nodeTime})
					if err != nil {
						return err
					}
					if err := graph.WriteSynthetic(src, syn); err != nil {
						return err
					}
					if err := writeLineEdgeFeat(src, 3); err != nil {
						return err
					}
					if err := graph.ConvertToChunked(src, chunked, graph.ConvertOptions{ChunkNodes: 40, ChunkEdges: 250}); err != nil {
						return err
					}
					ro := graph.ReadOptions{Dedup: true, Workers: 1}
					if tc.undirected {
						ro = graph.UndirectedOptions()
						ro.Workers = 1
					}
					ro.Time, ro.EdgeFeat, ro.NodeFeatFromEdges, ro.NormalizeFeatures = timed, tc.edgeFeat, tc.nodeFeat, tc.normalize
					d, err := graph.ReadOGB(src, ro)
					if err != nil {
						return err
					}
					assign := partition.Random(d.NumNodes, P, 5)
					if tc.method == MethodAssignment {
						if assign, err = partition.Assign(d, P, partition.Options{Seed: 3, Workers: 1}); err != nil {
							return err
						}
						if err := writeAssign(assignDir, []string{graph.HomoNodeType}, []int64{0, d.NumNodes}, assign); err != nil {
							return err
						}
					}
					_, err = partition.Write(single, d, assign, P, partition.Options{
						Method: tc.method, Seed: 5, Undirected: tc.undirected, Workers: 1, Time: timed,
						EdgeFeat: tc.edgeFeat, NodeFeat: tc.nodeFeat,
					})
					return err
				}()
			}
			agree(t, c, err)
			m, err := Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: tc.method, AssignmentDir: assignDir, Seed: 5,
				Undirected: tc.undirected, Time: timed, NormalizeFeatures: tc.normalize, EdgeFeat: tc.edgeFeat, NodeFeat: tc.nodeFeat,
				Workers: 1, RoundIDs: 31, RoundEdges: 70,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				require.NotNil(t, m)
				if tc.edgeFeat {
					require.Equal(t, 3, m.EdgeFeatDim)
				}
				err = sameTree(single, dist)
			}
			agree(t, c, err)
		})
	}
}

// TestEdgeFeatRejects: edge features asked of a dataset without them, node
// features from edges over a dataset's own, edge features with a link
// split, and edge_data "feat" chunks of the wrong shape are one line.
func TestEdgeFeatRejects(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	plain, withEF := filepath.Join(dir, "plain"), filepath.Join(dir, "ef")
	var err error
	if c.Rank() == 0 {
		err = func() error {
			if err := genChunked(filepath.Join(dir, "g"), plain, graph.GenOptions{Nodes: 120, AvgDegree: 4, Classes: 3, FeatDim: 2, Seed: 1, Workers: 1}, graph.ConvertOptions{ChunkNodes: 30, ChunkEdges: 100}); err != nil {
				return err
			}
			return genChunked(filepath.Join(dir, "g-ef"), withEF, graph.GenOptions{Nodes: 120, AvgDegree: 4, Classes: 3, FeatDim: 2, EdgeFeatDim: 2, Seed: 1, Workers: 1}, graph.ConvertOptions{ChunkNodes: 30, ChunkEdges: 100})
		}()
	}
	agree(t, c, err)
	out := filepath.Join(dir, "out")
	_, err = Run(c, Options{Data: plain, Out: out, Parts: P, Method: partition.MethodRandom, Undirected: true, EdgeFeat: true})
	require.ErrorContains(t, err, "edge features requested (--edge-feat or --node-feat) but the dataset has no edge_data _N:_E:_N/feat")
	_, err = Run(c, Options{Data: withEF, Out: out, Parts: P, Method: partition.MethodRandom, Undirected: true, NodeFeat: graph.FromEdgesMean})
	require.ErrorContains(t, err, "node features from-edges:mean, but the dataset has its own (node_data _N/feat); leave out --node-feat")
	_, err = Run(c, Options{Data: withEF, Out: out, Parts: P, Method: partition.MethodRandom, Undirected: true, NodeFeat: "from-edges:max"})
	require.ErrorContains(t, err, `node features "from-edges:max"`)
	_, err = Run(c, Options{Data: withEF, Out: out, Parts: P, Method: partition.MethodRandom, Undirected: true, EdgeFeat: true, Link: &partition.LinkOptions{Split: "random:0.8,0.1,0.1"}})
	require.ErrorContains(t, err, "edge features with a link split are not supported yet")
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist)

	// A chunk of another row count than its edges, and a 1-D one: read as
	// the rank that owns the chunk reads it.
	ch, err := graph.OpenChunked(withEF)
	require.NoError(t, err)
	x := &run{ch: ch, opt: Options{Data: withEF}, efDim: 2}
	if c.Rank() == 0 {
		chunk := filepath.Join(withEF, ch.Meta.EdgeData[graph.HomoEdgeType][graph.ChunkFeat].Data[1])
		for _, bad := range []any{[][]float32{{1, 2}, {3, 4}}, []float32{1, 2, 3}} {
			require.NoError(t, graph.WriteNpy(chunk, bad))
			_, err := x.readEdgeFeatChunk(1)
			require.ErrorContains(t, err, chunk+": shape")
			require.ErrorContains(t, err, "(one row per edge of the chunk)")
			require.NotContains(t, err.Error(), "\n")
		}
	}
	agree(t, c, nil)
}

// TestNodeFeatFromEdgesLink: node features from edges with a link split
// are derived over the whole graph before the split, as graph.ReadOGB
// derives them before partition.Write draws it: byte-identical.
func TestNodeFeatFromEdgesLink(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	src, chunked := filepath.Join(dir, "g"), filepath.Join(dir, "chunked")
	single, dist := filepath.Join(dir, "single"), filepath.Join(dir, "dist")
	link := partition.LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: 3, Pool: 100}
	var err error
	if c.Rank() == 0 {
		err = func() error {
			if err := genChunked(src, chunked, graph.GenOptions{Nodes: 301, AvgDegree: 6, Classes: 3, FeatDim: 4, EdgeFeatDim: 3, NoNodeFeat: true, Seed: 2, Workers: 1}, graph.ConvertOptions{ChunkNodes: 40, ChunkEdges: 200}); err != nil {
				return err
			}
			lo := link
			ro := lo.ReadOptions(graph.UndirectedOptions())
			ro.NodeFeatFromEdges = graph.FromEdgesMean
			d, err := graph.ReadOGB(src, ro)
			if err != nil {
				return err
			}
			_, err = partition.Write(single, d, partition.Random(d.NumNodes, P, 5), P, partition.Options{
				Method: partition.MethodRandom, Seed: 5, Undirected: true, Workers: 1, Link: &lo, NodeFeat: graph.FromEdgesMean,
			})
			return err
		}()
	}
	agree(t, c, err)
	lo := link
	_, err = Run(c, Options{
		Data: chunked, Out: dist, Parts: P, Method: partition.MethodRandom, Seed: 5, Undirected: true, Link: &lo,
		NodeFeat: graph.FromEdgesMean, Workers: 1, RoundIDs: 29, RoundEdges: 90,
	})
	agree(t, c, err)
	if c.Rank() == 0 {
		err = sameTree(single, dist)
	}
	agree(t, c, err)
}
