package chunkgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"mpignn/graph"
	"mpignn/sample"
)

// GraphName is the graph_name of a generated dataset's metadata.json (and
// so the Dataset of its partitions), as graph.Generate names its graph.
const GraphName = "synthetic"

// Default chunk sizes, those of `mpignn convert`.
const (
	DefaultChunkNodes = 1 << 20
	DefaultChunkEdges = 8 << 20
)

// Hash domain tags: every kind of draw hashes its own tag first, so that no
// two kinds ever share bits.
const (
	tagClassPerm = 0x63676e636c617373 // "cgnclass"
	tagSplitPerm = 0x63676e73706c6974 // "cgnsplit"
	tagEdge      = 0x63676e6564676573 // "cgnedges"
	tagFeat      = 0x63676e6665617473 // "cgnfeats"
	tagCentroid  = 0x63676e63656e7472 // "cgncentr"
)

// maxTries bounds the redraws of a self loop; the last resort is the next
// position of the same class (every class has at least two nodes).
const maxTries = 16

// Options describe the graph: the fields of graph.GenOptions keep their
// meaning (EdgeTime and NodeTime are refused: the chunked format has no
// times yet), plus the chunk sizes, which fix the files and so must not
// depend on the number of processes.
type Options struct {
	graph.GenOptions
	// ChunkNodes and ChunkEdges are the nodes of a node-data chunk and the
	// directed edges of an edge chunk; 0 means DefaultChunkNodes and
	// DefaultChunkEdges.
	ChunkNodes, ChunkEdges int64
}

// Gen generates one graph a chunk at a time. It is read-only once made:
// chunks may be written concurrently and by any process.
//
// Node v sits at position p = π⁻¹(v) of a seeded pseudo-random permutation
// π of [0,n) (a Feistel network with cycle walking, so both directions are
// computed from the id alone). Positions are cut into the classes' runs,
// sized as graph.Generate sizes its classes; v's class is the run holding
// p and its rank q = p - start(class). The node of rank q has weight
// (q+1)^-β with β = 1/(PowerLaw-1) (Chung-Lu: degrees then follow a power
// law of exponent PowerLaw), and a draw from a class picks a rank by the
// closed-form inverse of that weight's integral, so no alias table over
// the nodes is needed. Undirected pair k is drawn from the stream of
// hash(seed, k): with probability Homophily both ends come from one class
// chosen by its total weight, otherwise each end's class is chosen so;
// self loops are redrawn. Pairs are not deduplicated (no process sees the
// others' pairs): a repeated pair is stored twice and readers keep one copy
// (graph.UndirectedOptions, the distributed partitioner). Pair k is stored
// as edges 2k (u,v) and 2k+1 (v,u), u < v, as gen writes its edge file.
type Gen struct {
	opt        Options
	pairs      int64
	start      []int64   // class c holds positions [start[c], start[c+1])
	zClass     []float64 // total weight of each class
	powSpan    []float64 // (size(c)+1)^(1-β) - 1, the inverse's scale
	cumW       []float64 // cumulative zClass
	beta       float64
	nodePerm   perm
	splitPerm  perm
	cen        []float64 // class centroids, Classes x FeatDim
	nodeSizes  []int64
	edgeSizes  []int64
	nodeStarts []int64
	edgeStarts []int64
}

// New validates opt and prepares the generator; its tables are per class,
// not per node.
func New(opt Options) (*Gen, error) {
	if opt.EdgeTime || opt.NodeTime {
		return nil, errors.New("gen: times are not written in the chunked format yet (the chunked readers have no times); leave out --edge-time/--node-time")
	}
	if opt.ChunkNodes == 0 {
		opt.ChunkNodes = DefaultChunkNodes
	}
	if opt.ChunkEdges == 0 {
		opt.ChunkEdges = DefaultChunkEdges
	}
	if opt.ChunkNodes < 1 || opt.ChunkEdges < 1 {
		return nil, fmt.Errorf("gen: chunk sizes %d nodes and %d edges must be positive", opt.ChunkNodes, opt.ChunkEdges)
	}
	if err := opt.Fill(); err != nil {
		return nil, err
	}
	n, k := opt.Nodes, opt.Classes
	g := &Gen{opt: opt, beta: 1 / (opt.PowerLaw - 1)}
	g.pairs = max(1, int64(math.Round(float64(n)*opt.AvgDegree/2)))

	// Class sizes as graph.Generate draws them: ∝ (c+1)^-0.5, at least 2.
	w := make([]float64, k)
	var sum float64
	for c := range w {
		w[c] = 1 / math.Sqrt(float64(c+1))
		sum += w[c]
	}
	g.start = make([]int64, k+1)
	for c := 0; c < k; c++ {
		cnt := int64(float64(n-2*int64(k))*w[c]/sum) + 2
		if c == k-1 {
			cnt = n - g.start[c]
		}
		g.start[c+1] = g.start[c] + cnt
	}
	g.zClass = make([]float64, k)
	g.cumW = make([]float64, k)
	g.powSpan = make([]float64, k)
	acc := 0.0
	for c := range g.zClass {
		g.powSpan[c] = math.Pow(float64(g.start[c+1]-g.start[c]+1), 1-g.beta) - 1
		g.zClass[c] = g.powSpan[c] / (1 - g.beta)
		acc += g.zClass[c]
		g.cumW[c] = acc
	}
	g.nodePerm = newPerm(uint64(n), opt.Seed, tagClassPerm)
	g.splitPerm = newPerm(uint64(n), opt.Seed, tagSplitPerm)

	dim := opt.FeatDim
	g.cen = make([]float64, k*dim)
	scale := opt.FeatSep / math.Sqrt(float64(dim))
	for c := 0; c < k; c++ {
		r := rand.New(rand.NewPCG(sample.Hash64(tagCentroid, opt.Seed, uint64(c)), 0))
		for j := range dim {
			g.cen[c*dim+j] = r.NormFloat64() * scale
		}
	}
	g.nodeSizes = graph.ChunkSizes(n, opt.ChunkNodes)
	g.edgeSizes = graph.ChunkSizes(2*g.pairs, opt.ChunkEdges)
	g.nodeStarts = prefix(g.nodeSizes)
	g.edgeStarts = prefix(g.edgeSizes)
	return g, nil
}

func prefix(sizes []int64) []int64 {
	out := make([]int64, len(sizes)+1)
	for i, s := range sizes {
		out[i+1] = out[i] + s
	}
	return out
}

// Options returns the options with defaults filled in.
func (g *Gen) Options() Options { return g.opt }

// NumNodes is the node count, NumEdges the stored (directed) edge count:
// twice the drawn undirected pairs.
func (g *Gen) NumNodes() int64 { return g.opt.Nodes }

// NumEdges returns the number of stored directed edges.
func (g *Gen) NumEdges() int64 { return 2 * g.pairs }

// NumNodeChunks returns the node-data chunk count.
func (g *Gen) NumNodeChunks() int { return len(g.nodeSizes) }

// NumEdgeChunks returns the edge chunk count.
func (g *Gen) NumEdgeChunks() int { return len(g.edgeSizes) }

// rankOf draws a rank of class c by weight from u in [0,1): the inverse of
// the weight's integral x^(1-β)/(1-β) over [1, size+1), of which rank q
// owns [q+1, q+2).
func (g *Gen) rankOf(c int, u float64) int64 {
	x := math.Pow(1+u*g.powSpan[c], 1/(1-g.beta))
	return min(max(int64(x)-1, 0), g.start[c+1]-g.start[c]-1)
}

// classOf draws a class by total weight from u in [0,1).
func (g *Gen) classOf(u float64) int {
	c := sort.SearchFloat64s(g.cumW, u*g.cumW[len(g.cumW)-1])
	return min(c, len(g.cumW)-1)
}

// Label returns node v's class.
func (g *Gen) Label(v int64) int {
	p := int64(g.nodePerm.inv(uint64(v)))
	return sort.Search(len(g.start)-1, func(c int) bool { return g.start[c+1] > p })
}

// SplitSet returns node v's set in the split graph.GenSplitName: 0 train,
// 1 valid, 2 test, 3 none. Counts are exactly the options' Train, Valid
// and Test: a node's set is where it falls in a second permutation.
func (g *Gen) SplitSet(v int64) int {
	s := int64(g.splitPerm.fwd(uint64(v)))
	o := g.opt
	switch {
	case s < o.Train:
		return 0
	case s < o.Train+o.Valid:
		return 1
	case s < o.Train+o.Valid+o.Test:
		return 2
	}
	return 3
}

// Pair returns undirected pair k (u < v) and whether it was drawn inside
// one class.
func (g *Gen) Pair(k int64) (u, v int64, same bool) {
	r := sample.NewStream(sample.Hash64(tagEdge, g.opt.Seed, uint64(k)))
	var pu, pv int64
	for try := 0; ; try++ {
		cu := g.classOf(r.Float64())
		cv := cu
		same = r.Float64() < g.opt.Homophily
		if !same {
			cv = g.classOf(r.Float64())
		}
		lo, s := g.start[cu], g.start[cu+1]-g.start[cu]
		pu = lo + g.rankOf(cu, r.Float64())
		pv = g.start[cv] + g.rankOf(cv, r.Float64())
		if pu != pv {
			same = same || cu == cv
			break
		}
		if try == maxTries-1 {
			pv, same = lo+(pu-lo+1)%s, true
			break
		}
	}
	u, v = int64(g.nodePerm.fwd(uint64(pu))), int64(g.nodePerm.fwd(uint64(pv)))
	if u > v {
		u, v = v, u
	}
	return u, v, same
}

// Edge returns stored edge i: pair i/2, reversed for odd i.
func (g *Gen) Edge(i int64) (src, dst int64) {
	u, v, _ := g.Pair(i / 2)
	if i%2 == 1 {
		return v, u
	}
	return u, v
}

// featRow writes node v of class c's features into row: the centroid plus
// unit Gaussian noise from v's own stream, rounded to 1e-3 as gen does.
func (g *Gen) featRow(v int64, c int, pcg *rand.PCG, r *rand.Rand, row []float32) {
	pcg.Seed(sample.Hash64(tagFeat, g.opt.Seed, uint64(v)), 0)
	cen := g.cen[c*len(row) : (c+1)*len(row)]
	for j := range row {
		row[j] = float32(math.Round((cen[j]+r.NormFloat64())*1000)) / 1000
	}
}

// Features returns node v's feature row.
func (g *Gen) Features(v int64) []float32 {
	pcg := rand.NewPCG(0, 0)
	row := make([]float32, g.opt.FeatDim)
	g.featRow(v, g.Label(v), pcg, rand.New(pcg), row)
	return row
}

// maskKeys are the node data keys of the split's sets, in SplitSet order.
func maskKeys() [3]string {
	var ks [3]string
	for set := range ks {
		ks[set] = graph.MaskKey(graph.GenSplitName, set)
	}
	return ks
}

// Meta returns the dataset's metadata.json: every file of every chunk.
func (g *Gen) Meta() *graph.ChunkedMeta {
	numpy := graph.ChunkFormat{Name: graph.FormatNumpy}
	m := &graph.ChunkedMeta{
		GraphName:        GraphName,
		NodeType:         []string{graph.HomoNodeType},
		NumNodesPerChunk: [][]int64{g.nodeSizes},
		EdgeType:         []string{graph.HomoEdgeType},
		NumEdgesPerChunk: [][]int64{g.edgeSizes},
		Edges:            map[string]graph.ChunkFiles{},
		NodeData:         map[string]map[string]graph.ChunkFiles{graph.HomoNodeType: {}},
	}
	ef := graph.ChunkFiles{Format: numpy}
	for k := range g.edgeSizes {
		ef.Data = append(ef.Data, graph.EdgeChunkFile(graph.HomoEdgeType, k))
	}
	m.Edges[graph.HomoEdgeType] = ef
	mk := maskKeys()
	for _, key := range append([]string{graph.ChunkFeat, graph.ChunkLabel}, mk[:]...) {
		f := graph.ChunkFiles{Format: numpy}
		for k := range g.nodeSizes {
			f.Data = append(f.Data, graph.NodeChunkFile(graph.HomoNodeType, key, k))
		}
		m.NodeData[graph.HomoNodeType][key] = f
	}
	return m
}

// Dirs returns the directories, relative to the dataset, that the chunk
// files go into; they must exist before chunks are written.
func (g *Gen) Dirs() []string {
	return []string{filepath.Dir(graph.EdgeChunkFile(graph.HomoEdgeType, 0)), filepath.Dir(graph.NodeChunkFile(graph.HomoNodeType, graph.ChunkFeat, 0))}
}

// ChunkMemory estimates the bytes that writing one node chunk and one edge
// chunk holds (float64: absurd sizes give a huge number, not an overflow):
// the chunk arrays and the numpy writer's copy of them.
func (g *Gen) ChunkMemory() float64 {
	o := g.opt
	node := float64(o.ChunkNodes) * (float64(o.FeatDim)*4 + 8 + 3 + 24)
	edge := float64(o.ChunkEdges) * 16
	return 2*math.Max(node, edge) + float64(o.Classes*o.FeatDim)*8
}

// span splits [0,n) into one sub-range per worker and runs fn on each.
func (g *Gen) span(n int64, fn func(lo, hi int64)) {
	w := int64(max(1, g.opt.Workers))
	w = min(w, max(1, n/4096))
	var wg sync.WaitGroup
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(n*i/w, n*(i+1)/w)
		}()
	}
	wg.Wait()
}

// WriteNodeChunk writes node-data chunk k (features, labels and the split
// masks) under dir, whose Dirs exist.
func (g *Gen) WriteNodeChunk(dir string, k int) error {
	lo, size := g.nodeStarts[k], g.nodeSizes[k]
	dim := int64(g.opt.FeatDim)
	data := make([]float32, size*dim)
	rows := make([][]float32, size)
	labels := make([]int64, size)
	var masks [3][]uint8
	for set := range masks {
		masks[set] = make([]uint8, size)
	}
	g.span(size, func(a, b int64) {
		pcg := rand.NewPCG(0, 0)
		r := rand.New(pcg)
		for i := a; i < b; i++ {
			v := lo + i
			c := g.Label(v)
			labels[i] = int64(c)
			rows[i] = data[i*dim : (i+1)*dim]
			g.featRow(v, c, pcg, r, rows[i])
			if set := g.SplitSet(v); set < 3 {
				masks[set][i] = 1
			}
		}
	})
	mk := maskKeys()
	put := []struct {
		key string
		xs  any
	}{{graph.ChunkFeat, rows}, {graph.ChunkLabel, labels}, {mk[0], masks[0]}, {mk[1], masks[1]}, {mk[2], masks[2]}}
	for _, p := range put {
		if err := graph.WriteNpy(filepath.Join(dir, graph.NodeChunkFile(graph.HomoNodeType, p.key, k)), p.xs); err != nil {
			return err
		}
	}
	return nil
}

// WriteEdgeChunk writes edge chunk k under dir, whose Dirs exist, and
// returns how many of the pairs whose first edge (2k) it holds join two
// nodes of one class (summed over all chunks: the same-class pairs).
func (g *Gen) WriteEdgeChunk(dir string, k int) (sameClass int64, err error) {
	lo, size := g.edgeStarts[k], g.edgeSizes[k]
	buf := make([][2]int64, size)
	var mu sync.Mutex
	g.span(size, func(a, b int64) {
		var same int64
		for i := a; i < b; i++ {
			e := lo + i
			switch {
			case i > a && e%2 == 1:
				buf[i] = [2]int64{buf[i-1][1], buf[i-1][0]}
			case e%2 == 1: // the pair's first edge is in the previous chunk
				u, v, _ := g.Pair(e / 2)
				buf[i] = [2]int64{v, u}
			default:
				u, v, s := g.Pair(e / 2)
				buf[i] = [2]int64{u, v}
				if s {
					same++
				}
			}
		}
		mu.Lock()
		sameClass += same
		mu.Unlock()
	})
	return sameClass, graph.WriteNpy(filepath.Join(dir, graph.EdgeChunkFile(graph.HomoEdgeType, k)), buf)
}

// Describe returns the README.md written beside the chunks.
func (g *Gen) Describe() string {
	o := g.opt
	var b strings.Builder
	fmt.Fprintf(&b, "# Synthetic graph (mpignn gen --format chunked)\n\n")
	fmt.Fprintf(&b, "Degree-corrected stochastic block model in DistDGL's chunked format; classes are the planted communities.\n")
	fmt.Fprintf(&b, "Every value is a function of the seed and a node id or edge index: any number of processes writes the same files.\n\n")
	fmt.Fprintf(&b, "- nodes %d, stored edges %d (%d undirected pairs, both directions; a repeated pair is stored twice, readers keep one)\n", o.Nodes, 2*g.pairs, g.pairs)
	fmt.Fprintf(&b, "- classes %d, feature dim %d, seed %d\n", o.Classes, o.FeatDim, o.Seed)
	fmt.Fprintf(&b, "- homophily parameter %g, feature separation %g, power-law exponent %g\n", o.Homophily, o.FeatSep, o.PowerLaw)
	fmt.Fprintf(&b, "- split %q: train %d, valid %d, test %d\n", graph.GenSplitName, o.Train, o.Valid, o.Test)
	fmt.Fprintf(&b, "- chunks: %d node chunks of %d nodes, %d edge chunks of %d edges\n", len(g.nodeSizes), o.ChunkNodes, len(g.edgeSizes), o.ChunkEdges)
	return b.String()
}

// MetaJSON encodes m as metadata.json's bytes (indented, keys sorted, so
// every process that encodes the same metadata writes the same bytes).
func MetaJSON(m *graph.ChunkedMeta) ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", graph.ChunkedMetaFile, err)
	}
	return append(b, '\n'), nil
}
