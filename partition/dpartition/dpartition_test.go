package dpartition

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npz"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/spmd"
	"mpignn/spmd/spmdtest"
)

var world *spmd.World

func TestMain(m *testing.M) { spmdtest.Main(m, &world) }

func comm(t *testing.T) *collectives.Comm {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	return c
}

// agree fails the test on every rank when any rank's err is set, so that
// no rank goes on into a collective the others skip.
func agree(t *testing.T, c *collectives.Comm, err error) {
	t.Helper()
	bad := int64(0)
	if err != nil {
		bad = 1
	}
	any, aerr := collectives.AllreduceScalar(c, bad, collectives.Max)
	require.NoError(t, aerr)
	require.NoError(t, err)
	require.Zero(t, any, "another rank failed")
}

// sharedDir is a temporary directory every rank of the job sees (rank 0
// makes it; all ranks run on this machine).
func sharedDir(t *testing.T, c *collectives.Comm) string {
	t.Helper()
	var name []byte
	var err error
	if c.Rank() == 0 {
		var d string
		d, err = os.MkdirTemp("", "dpartition-")
		name = []byte(d)
	}
	agree(t, c, err)
	name, err = collectives.BcastBytes(c, 0, name, nil)
	require.NoError(t, err)
	dir := string(name)
	t.Cleanup(func() {
		c.Barrier()
		if c.Rank() == 0 {
			os.RemoveAll(dir)
		}
	})
	return dir
}

// genChunked generates a synthetic graph into src (the OGB layout) and
// converts it to the chunked dataset chunked: the input of every test
// that compares the distributed partitioner with the single-process one.
func genChunked(src, chunked string, g graph.GenOptions, co graph.ConvertOptions) error {
	syn, err := graph.Generate(g)
	if err != nil {
		return err
	}
	if err := graph.WriteSynthetic(src, syn); err != nil {
		return err
	}
	return graph.ConvertToChunked(src, chunked, co)
}

// sameTree reports the first difference between two directory trees:
// a file only in one, or different bytes.
func sameTree(a, b string) error {
	files := map[string]bool{}
	err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		files[rel] = true
		x, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if !bytes.Equal(x, y) {
			if strings.HasSuffix(rel, ".json") {
				return fmt.Errorf("%s differs:\n%s\n---\n%s", rel, x, y)
			}
			return fmt.Errorf("%s differs (%d and %d bytes)", rel, len(x), len(y))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(b, p)
		if !files[rel] {
			return fmt.Errorf("%s only in the distributed output", rel)
		}
		return nil
	})
}

// writeAssign writes one assignment file per node type (DistDGL's
// <ntype>.txt) of a homogenized assignment.
func writeAssign(dir string, types []string, nodeOrig []int64, assign []int32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for t, typ := range types {
		var b strings.Builder
		for _, p := range assign[nodeOrig[t]:nodeOrig[t+1]] {
			fmt.Fprintf(&b, "%d\n", p)
		}
		if err := os.WriteFile(filepath.Join(dir, typ+".txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestHomogeneousMatchesSingleProcess: for the same assignment (random,
// and METIS' read back from files) the distributed partition of the
// chunked dataset is byte-identical to partition.Write of the dataset
// read by ReadOGB, with several chunks per rank, uneven chunk counts and
// lookups in many rounds.
func TestHomogeneousMatchesSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	src, chunked := filepath.Join(dir, "g"), filepath.Join(dir, "chunked")
	for _, tc := range []struct {
		name       string
		method     string
		undirected bool
		sparse     string
		halo       bool
		featDType  string
	}{
		{"random", partition.MethodRandom, true, partition.SparseAuto, false, ""},
		{"assignment", MethodAssignment, true, partition.SparseOff, false, ""},
		{"directed", partition.MethodRandom, false, partition.SparseOn, false, ""},
		{"halo", MethodAssignment, true, partition.SparseOff, true, ""},
		{"halo-sparse", partition.MethodRandom, false, partition.SparseOn, true, ""},
		// Features at two bytes a value (auto keeps them dense).
		{"halo-bf16", partition.MethodRandom, true, partition.SparseAuto, true, "bf16"},
		{"fp16", MethodAssignment, true, partition.SparseOff, false, "fp16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			assignDir := filepath.Join(dir, "assign-"+tc.name)
			var err error
			if c.Rank() == 0 {
				err = func() error {
					if !graph.IsChunkedLayout(chunked) {
						if err := genChunked(src, chunked, graph.GenOptions{Nodes: 611, AvgDegree: 7, Classes: 5, FeatDim: 6, Seed: 4, Workers: 1}, graph.ConvertOptions{ChunkNodes: 50, ChunkEdges: 333}); err != nil {
							return err
						}
					}
					ro := graph.ReadOptions{Dedup: true, Workers: 1}
					if tc.undirected {
						ro = graph.UndirectedOptions()
					}
					d, err := graph.ReadOGB(src, ro)
					if err != nil {
						return err
					}
					assign := partition.Random(d.NumNodes, P, 9)
					if tc.method == MethodAssignment {
						if assign, err = partition.Assign(d, P, partition.Options{Seed: 3, Workers: 1}); err != nil {
							return err
						}
						if err := writeAssign(assignDir, []string{graph.HomoNodeType}, []int64{0, d.NumNodes}, assign); err != nil {
							return err
						}
					}
					_, err = partition.Write(single, d, assign, P, partition.Options{
						Method: tc.method, Seed: 9, Undirected: tc.undirected, Workers: 1, SparseFeatures: tc.sparse,
						HaloFeats: tc.halo, FeatDType: tc.featDType,
					})
					return err
				}()
			}
			agree(t, c, err)
			m, err := Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: tc.method, AssignmentDir: assignDir, Seed: 9,
				Undirected: tc.undirected, SparseFeatures: tc.sparse, HaloFeats: tc.halo, Workers: 1, RoundIDs: 37, RoundEdges: 100,
				FeatDType: tc.featDType,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				require.NotNil(t, m)
				require.Equal(t, tc.featDType, m.FeatDType)
				err = sameTree(single, dist)
			}
			agree(t, c, err)
		})
	}
}

// TestTimeMatchesSingleProcess: with Options.Time the distributed
// partition of a chunked dataset with edge_data/node_data times (convert
// of a timed OGB layout) is byte-identical to partition.Write with Time of
// the dataset read by ReadOGB with Time: edge times, node times only (each
// edge gets its source's), directed and undirected.
func TestTimeMatchesSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	for _, tc := range []struct {
		name               string
		edgeTime, nodeTime bool
		undirected         bool
		method             string
	}{
		{"edge-node", true, true, true, partition.MethodRandom},
		{"node-only", false, true, true, MethodAssignment},
		{"edge-directed", true, false, false, partition.MethodRandom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, chunked := filepath.Join(dir, "g-"+tc.name), filepath.Join(dir, "chunked-"+tc.name)
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			assignDir := filepath.Join(dir, "assign-"+tc.name)
			var err error
			if c.Rank() == 0 {
				err = func() error {
					if err := genChunked(src, chunked, graph.GenOptions{Nodes: 433, AvgDegree: 6, Classes: 3, FeatDim: 4, Seed: 8, Workers: 1,
						EdgeTime: tc.edgeTime, NodeTime: tc.nodeTime}, graph.ConvertOptions{ChunkNodes: 40, ChunkEdges: 300}); err != nil {
						return err
					}
					ro := graph.ReadOptions{Dedup: true, Workers: 1}
					if tc.undirected {
						ro = graph.UndirectedOptions()
					}
					ro.Time = true
					d, err := graph.ReadOGB(src, ro)
					if err != nil {
						return err
					}
					assign := partition.Random(d.NumNodes, P, 2)
					if tc.method == MethodAssignment {
						if assign, err = partition.Assign(d, P, partition.Options{Seed: 3, Workers: 1, Time: true}); err != nil {
							return err
						}
						if err := writeAssign(assignDir, []string{graph.HomoNodeType}, []int64{0, d.NumNodes}, assign); err != nil {
							return err
						}
					}
					_, err = partition.Write(single, d, assign, P, partition.Options{
						Method: tc.method, Seed: 2, Undirected: tc.undirected, Workers: 1, Time: true,
					})
					return err
				}()
			}
			agree(t, c, err)
			_, err = Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: tc.method, AssignmentDir: assignDir, Seed: 2,
				Undirected: tc.undirected, Time: true, Workers: 1, RoundIDs: 29, RoundEdges: 90,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				err = sameTree(single, dist)
				if err == nil {
					_, err = os.Stat(filepath.Join(dist, "part-0", "times.bin"))
				}
				if _, nerr := os.Stat(filepath.Join(dist, "part-0", "node_time.bin")); err == nil && (nerr == nil) != tc.nodeTime {
					err = fmt.Errorf("node_time.bin: %v, want it present: %v", nerr, tc.nodeTime)
				}
			}
			agree(t, c, err)
		})
	}
}

// TestHeteroTimeMatchesSingleProcess is TestTimeMatchesSingleProcess for
// a heterogeneous graph with reverse relations: per-relation edge times,
// and node times only (every edge, reverses too, takes its source's).
func TestHeteroTimeMatchesSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	for _, tc := range []struct {
		name               string
		edgeTime, nodeTime bool
	}{
		{"edge-node", true, true},
		{"node-only", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, chunked := filepath.Join(dir, "mag-"+tc.name), filepath.Join(dir, "chunked-"+tc.name)
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			var err error
			if c.Rank() == 0 {
				err = func() error {
					d, err := graph.GenerateHetero(graph.HeteroGenOptions{
						Papers: 200, Authors: 260, Institutions: 12, Fields: 25,
						Cites: 1200, Writes: 1500, Affiliations: 300, Topics: 1200,
						Classes: 4, FeatDim: 3, FeatSep: 1, Seed: 7, EdgeTime: tc.edgeTime, NodeTime: tc.nodeTime,
					})
					if err != nil {
						return err
					}
					if err := graph.WriteHetero(src, d); err != nil {
						return err
					}
					if err := graph.ConvertToChunked(src, chunked, graph.ConvertOptions{ChunkNodes: 60, ChunkEdges: 400}); err != nil {
						return err
					}
					ro := graph.DefaultHeteroReadOptions()
					ro.Time = true
					if d, err = graph.ReadOGBHetero(src, ro); err != nil {
						return err
					}
					_, err = partition.WriteHetero(single, d, partition.Random(d.NumNodes(), P, 5), P,
						partition.Options{Method: partition.MethodRandom, Seed: 5, Undirected: true, Workers: 1, Time: true})
					return err
				}()
			}
			agree(t, c, err)
			_, err = Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: partition.MethodRandom, Seed: 5,
				Undirected: true, Reverse: true, Time: true, Workers: 1, RoundIDs: 53, RoundEdges: 170,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				err = sameTree(single, dist)
				if err == nil {
					_, err = os.Stat(filepath.Join(dist, "part-0", "node_time.bin"))
				}
			}
			agree(t, c, err)
		})
	}
}

// TestHeteroMatchesSingleProcess is the same for a heterogeneous
// (ogbn-mag-shaped) graph with reverse relations and a symmetrized self
// relation.
func TestHeteroMatchesSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	src, chunked := filepath.Join(dir, "mag"), filepath.Join(dir, "chunked")
	for _, method := range []string{partition.MethodRandom, MethodAssignment} {
		t.Run(method, func(t *testing.T) {
			single, dist := filepath.Join(dir, "single-"+method), filepath.Join(dir, "dist-"+method)
			assignDir := filepath.Join(dir, "assign-"+method)
			var err error
			if c.Rank() == 0 {
				err = func() error {
					if !graph.IsChunkedLayout(chunked) {
						d, err := graph.GenerateHetero(graph.HeteroGenOptions{
							Papers: 300, Authors: 420, Institutions: 15, Fields: 30,
							Cites: 2000, Writes: 2500, Affiliations: 400, Topics: 2000,
							Classes: 4, FeatDim: 5, FeatSep: 1, Seed: 6,
						})
						if err != nil {
							return err
						}
						if err := graph.WriteHetero(src, d); err != nil {
							return err
						}
						if err := graph.ConvertToChunked(src, chunked, graph.ConvertOptions{ChunkNodes: 70, ChunkEdges: 555}); err != nil {
							return err
						}
					}
					d, err := graph.ReadOGBHetero(src, graph.DefaultHeteroReadOptions())
					if err != nil {
						return err
					}
					opt := partition.Options{Method: method, Seed: 5, Undirected: true, Workers: 1}
					assign := partition.Random(d.NumNodes(), P, 5)
					if method == MethodAssignment {
						if assign, err = partition.AssignHetero(d, P, partition.Options{Seed: 2, Workers: 1}); err != nil {
							return err
						}
						if err := writeAssign(assignDir, d.Schema.NodeTypes, d.Schema.NodeOrig, assign); err != nil {
							return err
						}
					}
					_, err = partition.WriteHetero(single, d, assign, P, opt)
					return err
				}()
			}
			agree(t, c, err)
			_, err = Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: method, AssignmentDir: assignDir, Seed: 5,
				Undirected: true, Reverse: true, Workers: 1, RoundIDs: 101, RoundEdges: 250,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				err = sameTree(single, dist)
			}
			agree(t, c, err)
		})
	}
}

// TestRejects: bad input gives one error naming what is wrong, on every
// rank, and leaves no output.
func TestRejects(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	chunked := filepath.Join(dir, "chunked")
	var err error
	if c.Rank() == 0 {
		err = func() error {
			if err := genChunked(filepath.Join(dir, "g"), chunked, graph.GenOptions{Nodes: 200, AvgDegree: 4, Classes: 3, FeatDim: 2, Seed: 1, Workers: 1}, graph.ConvertOptions{ChunkNodes: 64}); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "_N.txt"), []byte(strings.Repeat("0\n", 199)+"7\n"), 0o644)
		}()
	}
	agree(t, c, err)
	out := filepath.Join(dir, "out")
	_, err = Run(c, Options{Data: chunked, Out: out, Parts: 0, Method: partition.MethodRandom})
	require.ErrorContains(t, err, "--parts 0: want at least 1")
	_, err = Run(c, Options{Data: chunked, Out: out, Parts: P + 1, Method: partition.MethodRandom, Undirected: true, Link: &partition.LinkOptions{Split: "random:0.8,0.1,0.1"}})
	require.ErrorContains(t, err, "a link split is drawn with one part per rank")
	_, err = Run(c, Options{Data: chunked, Out: out, Parts: P, Method: partition.MethodMetis})
	require.ErrorContains(t, err, "supports parmetis, lp, ml, random")
	_, err = Run(c, Options{Data: chunked, Out: out, Parts: P, Method: partition.MethodRandom, FeatDType: "bf16", SparseFeatures: partition.SparseOn})
	require.EqualError(t, err, "feature type bf16 with sparse features on: sparse rows store float32 values (use auto or off)")
	_, err = Run(c, Options{Data: chunked, Out: out, Parts: P, Method: partition.MethodRandom, FeatDType: "fp8"})
	require.EqualError(t, err, `feature type "fp8": want fp32, bf16 or fp16`)
	// A bad part id is reported by the rank that reads its line (the
	// command then aborts the job with it): here read as that rank would.
	_, err = readAssignFile(filepath.Join(dir, "_N.txt"), 150, 200, 200, P)
	require.ErrorContains(t, err, "_N.txt line 200")
	_, err = readAssignFile(filepath.Join(dir, "_N.txt"), 0, 10, 300, P)
	require.ErrorContains(t, err, "200 lines, want one per node of the type (300)")
	_, statErr := os.Stat(out)
	require.ErrorIs(t, statErr, os.ErrNotExist)
}

// TestParMetis partitions with PT-Scotch on every rank count: the result
// loads and verifies, is the same for the same seed, and cuts far fewer
// edges than random on a graph with planted communities (PT-Scotch leaves
// ParMETIS' edgecut at 0; META's cut is counted by the writer).
func TestParMetis(t *testing.T) {
	if !ParMetisAvailable {
		t.Skip("ParMETIS (PT-Scotch) is not in this build")
	}
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	chunked := filepath.Join(dir, "chunked")
	var err error
	if c.Rank() == 0 {
		err = func() error {
			return genChunked(filepath.Join(dir, "g"), chunked, graph.GenOptions{Nodes: 2000, AvgDegree: 8, Classes: 4, FeatDim: 4, Homophily: 0.9, Seed: 8, Workers: 1}, graph.ConvertOptions{ChunkNodes: 250, ChunkEdges: 3000})
		}()
	}
	agree(t, c, err)
	a := checkMethod(t, c, dir, chunked, P, MethodParMetis, 0.6)
	if c.Rank() == 0 && P > 1 {
		require.Less(t, a.Balance(), 1.2)
	}
}

// checkMethod partitions chunked twice with method and once at random
// (seed 3, P parts) and checks, on rank 0, that the two runs wrote the
// same tree, that every part loads, and (P > 1) that the cut is below
// maxVsRandom times random's. It returns the first run's Meta (nil off
// rank 0).
func checkMethod(t *testing.T, c *collectives.Comm, dir, chunked string, P int, method string, maxVsRandom float64) *partition.Meta {
	t.Helper()
	run := func(name, method string) *partition.Meta {
		m, err := Run(c, Options{Data: chunked, Out: filepath.Join(dir, name), Parts: P, Method: method, Seed: 3, Undirected: true, Workers: 1})
		agree(t, c, err)
		return m
	}
	a, b, r := run(method+"-a", method), run(method+"-b", method), run(method+"-random", partition.MethodRandom)
	if c.Rank() != 0 {
		return nil
	}
	require.NoError(t, sameTree(filepath.Join(dir, method+"-a"), filepath.Join(dir, method+"-b")), "%s: same seed, different partitions", method)
	require.Equal(t, method, a.Method)
	require.Equal(t, a.CutEdges, b.CutEdges)
	for p := range P {
		_, err := partition.Load(filepath.Join(dir, method+"-a"), p)
		require.NoError(t, err)
	}
	if P > 1 {
		t.Logf("P=%d: %s cut %d, random %d; balance %.4f", P, method, a.CutEdges, r.CutEdges, a.Balance())
		require.Less(t, float64(a.CutEdges), maxVsRandom*float64(r.CutEdges), "%s cut %d vs random %d", method, a.CutEdges, r.CutEdges)
	}
	return a
}

// writeNpzDataset writes a homogeneous dataset in OGB's npz layout
// (ogbn-papers100M's: raw/data.npz, raw/node-label.npz with NaN for the
// nodes with no label, split/time/*.csv.gz): n nodes on a ring with
// chords, labels v%4 except NaN where unlabelled(v), and a split whose
// sets take every labelled node (and the nodes of extra as training
// nodes).
func writeNpzDataset(dir string, n int64, unlabelled func(v int64) bool, extra []int64) error {
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		return err
	}
	ei := [][]int64{{}, {}}
	for v := range n {
		ei[0], ei[1] = append(ei[0], v, v), append(ei[1], (v+1)%n, (v*7+3)%n)
	}
	feat := make([][]float32, n)
	label := make([][]float64, n)
	var sets [3][]int64
	for v := range n {
		feat[v] = []float32{float32(v % 3), float32(v % 5)}
		label[v] = []float64{float64(v % 4)}
		if unlabelled(v) {
			label[v][0] = math.NaN()
			continue
		}
		sets[v%3] = append(sets[v%3], v)
	}
	sets[0] = append(sets[0], extra...)
	slices.Sort(sets[0])
	for _, f := range []struct {
		name string
		arrs map[string]any
	}{
		{"data.npz", map[string]any{"edge_index.npy": ei, "node_feat.npy": feat, "num_nodes_list.npy": []int64{n}}},
		{"node-label.npz", map[string]any{"node_label.npy": label}},
	} {
		w, err := npz.Create(filepath.Join(dir, "raw", f.name))
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(f.arrs)) {
			if err := w.Write(k, f.arrs[k]); err != nil {
				return err
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	sd := filepath.Join(dir, "split", "time")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		return err
	}
	for i, name := range []string{"train", "valid", "test"} {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		for _, v := range sets[i] {
			fmt.Fprintf(z, "%d\n", v)
		}
		if err := z.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(sd, name+".csv.gz"), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TestUnlabelledNodes: a homogeneous dataset whose label file marks some
// nodes as unlabelled (OGB's NaN, as ogbn-papers100M labels 1.5 M of its
// 111 M nodes) partitions on every rank count: the unlabelled nodes keep
// their edges and features, carry label -1 and are in no split set; a
// split that names an unlabelled node is refused, naming the node and
// the mask.
func TestUnlabelledNodes(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	const n = 400
	unlabelled := func(v int64) bool { return v%3 == 1 || v >= 300 }
	var err error
	if c.Rank() == 0 {
		err = func() error {
			for _, tc := range []struct {
				name  string
				extra []int64
			}{{"good", nil}, {"bad", []int64{1, 52, 103, 151, 202, 250, 301, 351}}} {
				src := filepath.Join(dir, tc.name)
				if err := writeNpzDataset(src, n, unlabelled, tc.extra); err != nil {
					return err
				}
				// 50-node chunks: every rank holds chunks, and every
				// chunk of "bad" holds an unlabelled training node.
				if err := graph.ConvertToChunked(src, src+"-ck", graph.ConvertOptions{ChunkNodes: 50, ChunkEdges: 300}); err != nil {
					return err
				}
			}
			return nil
		}()
	}
	agree(t, c, err)
	out := filepath.Join(dir, "out")
	m, err := Run(c, Options{Data: filepath.Join(dir, "good-ck"), Out: out, Parts: P, Method: partition.MethodRandom, Seed: 2, Undirected: true, Workers: 1})
	agree(t, c, err)
	if c.Rank() == 0 {
		require.Equal(t, 4, m.NumClasses)
		labelled, inSplit := 0, 0
		for p := range P {
			pt, err := partition.Load(out, p)
			require.NoError(t, err)
			for i, o := range pt.Orig {
				want := int32(o % 4)
				if unlabelled(o) {
					want = -1
				} else {
					labelled++
				}
				require.Equal(t, want, pt.Labels[i], "node %d", o)
			}
			s := pt.Splits["time"]
			for _, g := range slices.Concat(s.Train, s.Valid, s.Test) {
				require.False(t, unlabelled(pt.Orig[g-pt.Lo]), "unlabelled node %d in a split", pt.Orig[g-pt.Lo])
				inSplit++
			}
		}
		require.Equal(t, labelled, inSplit, "every labelled node is in one set")
		require.Equal(t, 200, labelled)
	}
	// Every 50-node chunk of "bad" has an unlabelled training node, so
	// every rank returns the error in its first node round.
	_, err = Run(c, Options{Data: filepath.Join(dir, "bad-ck"), Out: filepath.Join(dir, "bad-out"), Parts: P, Method: partition.MethodRandom, Seed: 2, Undirected: true, Workers: 1})
	require.ErrorContains(t, err, "has no label (-1 in")
	require.ErrorContains(t, err, "but is in train_mask:time")
	_, statErr := os.Stat(filepath.Join(dir, "bad-out"))
	require.ErrorIs(t, statErr, os.ErrNotExist)
}
