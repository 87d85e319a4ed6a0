package chunkgen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"mpignn/graph"
	"mpignn/internal/hashkey"
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
// meaning (EdgeTime and NodeTime write edge_data and node_data "time"
// chunks keyed as gen keys raw/edge_time.csv.gz and raw/node_time.csv.gz:
// graph.GenEdgeTime of the pair, graph.GenNodeTime of the node), plus the
// chunk sizes, which fix the files and so must not
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
// Node v of a type sits at position p = π⁻¹(v) of a seeded pseudo-random
// permutation π of the type's ids (a Feistel network with cycle walking,
// so both directions are computed from the id alone). Positions are cut
// into the classes' runs, sized as graph.Generate sizes its classes; v's
// class is the run holding p and its rank q = p - start(class). The node
// of rank q has weight (q+1)^-β with β = 1/(PowerLaw-1) (Chung-Lu: degrees
// then follow a power law of exponent PowerLaw), and a draw from a class
// picks a rank by the closed-form inverse of that weight's integral, so no
// alias table over the nodes is needed.
//
// Homogeneous (New): undirected pair k is drawn from the stream of
// hash(seed, k): with probability Homophily both ends come from one class
// chosen by its total weight, otherwise each end's class is chosen so;
// self loops are redrawn. Pair k is stored as edges 2k (u,v) and 2k+1
// (v,u), u < v, as gen writes its edge file.
//
// Heterogeneous (NewHetero, ogbn-mag's shape as graph.GenerateHetero):
// edge i of a relation is drawn from the stream of hash(seed, relation,
// i): its anchor end by weight over the anchor's type, the other end with
// probability Homophily from the anchor's community in the other type (by
// weight), otherwise by weight over that type. Papers carry the features,
// labels (their community) and split.
//
// Edges are not deduplicated (no process sees the others' edges): a
// repeated edge is stored twice and readers keep one copy
// (graph.UndirectedOptions, the distributed partitioner).
type Gen struct {
	opt     Options
	hetero  bool
	name    string
	beta    float64
	types   []nodeType
	rels    []relGen
	labeled int       // the type with features, labels and the split
	split   [3]int64  // train, valid, test counts of the labeled type
	cen     []float64 // class centroids, Classes x FeatDim
	featDim int
	// nodeOrig is each type's first homogenized id (heterogeneous; nil
	// for a homogeneous graph), the key of its times.
	nodeOrig []int64
}

// nodeType is one node type's planted classes and chunks.
type nodeType struct {
	name       string
	n          int64
	start      []int64   // class c holds positions [start[c], start[c+1])
	powSpan    []float64 // (size(c)+1)^(1-β) - 1, the rank inverse's scale
	cumW       []float64 // cumulative class weights
	perm       perm
	sizes      []int64 // node chunk sizes
	chunkStart []int64
}

// relGen is one relation (edge type) and its chunks.
type relGen struct {
	et          string
	src, dst    int // type indices
	anchorIsSrc bool
	edges       int64 // stored edges
	sizes       []int64
	chunkStart  []int64
}

// New validates opt and prepares a homogeneous generator; its tables are
// per class, not per node.
func New(opt Options) (*Gen, error) {
	if err := checkChunks(opt.ChunkNodes, opt.ChunkEdges); err != nil {
		return nil, err
	}
	opt.fillChunks()
	if err := opt.Fill(); err != nil { // graph.GenOptions.Validate, filling
		return nil, err
	}
	g := &Gen{opt: opt, name: GraphName, beta: 1 / (opt.PowerLaw - 1), featDim: opt.FeatDim}
	g.types = []nodeType{g.newType(graph.HomoNodeType, opt.Nodes, tagClassPerm)}
	pairs := max(1, int64(math.Round(float64(opt.Nodes)*opt.AvgDegree/2)))
	g.rels = []relGen{g.newRel(graph.HomoEdgeType, 0, 0, true, 2*pairs)}
	g.split = [3]int64{opt.Train, opt.Valid, opt.Test}
	g.centroids()
	return g, nil
}

// Validate reports options New cannot generate from, a zero field read as
// its default: the chunk sizes and the graph's (graph.GenOptions).
func (o Options) Validate() error {
	if err := checkChunks(o.ChunkNodes, o.ChunkEdges); err != nil {
		return err
	}
	return o.GenOptions.Validate()
}

// Validate reports options NewHetero cannot generate from, as
// Options.Validate does.
func (o HeteroOptions) Validate() error {
	if err := checkChunks(o.ChunkNodes, o.ChunkEdges); err != nil {
		return err
	}
	return o.HeteroGenOptions.Validate()
}

// checkChunks refuses negative chunk sizes (zero is the default).
func checkChunks(nodes, edges int64) error {
	if nodes < 0 || edges < 0 {
		return fmt.Errorf("gen: chunk sizes %d nodes and %d edges must be positive", nodes, edges)
	}
	return nil
}

// fillChunks gives zero chunk sizes their defaults.
func (o *Options) fillChunks() {
	if o.ChunkNodes == 0 {
		o.ChunkNodes = DefaultChunkNodes
	}
	if o.ChunkEdges == 0 {
		o.ChunkEdges = DefaultChunkEdges
	}
}

// HeteroOptions describe an ogbn-mag-shaped graph (graph.HeteroGenOptions:
// EdgeTime and NodeTime write every relation's edge times and every
// type's node times keyed as GenerateHetero keys them, by relation index
// and homogenized ids) and its chunk sizes.
type HeteroOptions struct {
	graph.HeteroGenOptions
	ChunkNodes, ChunkEdges int64
}

// HeteroGraphName is the graph_name of a generated heterogeneous dataset,
// as graph.GenerateHetero names its graph.
const HeteroGraphName = "synthetic-mag"

// NewHetero validates opt and prepares a heterogeneous generator.
func NewHetero(opt HeteroOptions) (*Gen, error) {
	if err := checkChunks(opt.ChunkNodes, opt.ChunkEdges); err != nil {
		return nil, err
	}
	co := Options{ChunkNodes: opt.ChunkNodes, ChunkEdges: opt.ChunkEdges}
	co.fillChunks()
	h := opt.HeteroGenOptions
	if err := h.Fill(); err != nil { // graph.HeteroGenOptions.Validate, filling
		return nil, err
	}
	co.GenOptions = graph.GenOptions{Classes: h.Classes, FeatDim: h.FeatDim, Seed: h.Seed, Homophily: h.Homophily,
		FeatSep: h.FeatSep, PowerLaw: h.PowerLaw, Workers: h.Workers, Nodes: h.Papers, EdgeTime: h.EdgeTime, NodeTime: h.NodeTime}
	g := &Gen{opt: co, hetero: true, name: HeteroGraphName, beta: 1 / (h.PowerLaw - 1), featDim: h.FeatDim}
	counts := map[string]int64{graph.TypeAuthor: h.Authors, graph.TypeField: h.Fields, graph.TypeInstitution: h.Institutions, graph.TypePaper: h.Papers}
	names := []string{graph.TypeAuthor, graph.TypeField, graph.TypeInstitution, graph.TypePaper} // sorted
	for t, name := range names {
		g.types = append(g.types, g.newType(name, counts[name], hashkey.Hash64(tagClassPerm, uint64(t))))
	}
	// Relations come in canonical-name order and types sorted, as
	// graph.NewSchema orders them: g.rels' index is the schema's relation
	// index and nodeOrig its homogenized offsets (the keys of the times).
	g.nodeOrig = make([]int64, len(g.types))
	for t := 1; t < len(g.types); t++ {
		g.nodeOrig[t] = g.nodeOrig[t-1] + g.types[t-1].n
	}
	g.labeled = slices.Index(names, graph.TypePaper)
	for _, r := range h.GenRelations() {
		g.rels = append(g.rels, g.newRel(graph.EdgeTypeOf(r.Rel), slices.Index(names, r.Rel.Src), slices.Index(names, r.Rel.Dst), r.AnchorIsSrc, r.Edges))
	}
	train := int64(math.Round(h.TrainFrac * float64(h.Papers)))
	valid := int64(math.Round(h.ValidFrac * float64(h.Papers)))
	g.split = [3]int64{train, valid, h.Papers - train - valid}
	g.centroids()
	return g, nil
}

// newType plants the classes of a type of n nodes: sizes ∝ (c+1)^-0.5 as
// graph.Generate's, each at least min(2, n/classes).
func (g *Gen) newType(name string, n int64, tag uint64) nodeType {
	k := g.opt.Classes
	t := nodeType{name: name, n: n, start: make([]int64, k+1), powSpan: make([]float64, k), cumW: make([]float64, k)}
	w := make([]float64, k)
	var sum float64
	for c := range w {
		w[c] = 1 / math.Sqrt(float64(c+1))
		sum += w[c]
	}
	least := min(2, n/int64(k))
	for c := 0; c < k; c++ {
		cnt := int64(float64(n-least*int64(k))*w[c]/sum) + least
		if c == k-1 {
			cnt = n - t.start[c]
		}
		t.start[c+1] = t.start[c] + cnt
	}
	acc := 0.0
	for c := range k {
		t.powSpan[c] = math.Pow(float64(t.start[c+1]-t.start[c]+1), 1-g.beta) - 1
		acc += t.powSpan[c] / (1 - g.beta) // the class's total weight
		t.cumW[c] = acc
	}
	t.perm = newPerm(uint64(n), g.opt.Seed, tag)
	t.sizes = graph.ChunkSizes(n, g.opt.ChunkNodes)
	t.chunkStart = prefix(t.sizes)
	return t
}

func (g *Gen) newRel(et string, src, dst int, anchorIsSrc bool, edges int64) relGen {
	sizes := graph.ChunkSizes(edges, g.opt.ChunkEdges)
	return relGen{et: et, src: src, dst: dst, anchorIsSrc: anchorIsSrc, edges: edges, sizes: sizes, chunkStart: prefix(sizes)}
}

// centroids draws the class centroids of the labeled type's features.
func (g *Gen) centroids() {
	k, dim := g.opt.Classes, g.featDim
	g.cen = make([]float64, k*dim)
	scale := g.opt.FeatSep / math.Sqrt(float64(dim))
	for c := 0; c < k; c++ {
		r := rand.New(rand.NewPCG(hashkey.Hash64(tagCentroid, g.opt.Seed, uint64(c)), 0))
		for j := range dim {
			g.cen[c*dim+j] = r.NormFloat64() * scale
		}
	}
}

func prefix(sizes []int64) []int64 {
	out := make([]int64, len(sizes)+1)
	for i, s := range sizes {
		out[i+1] = out[i] + s
	}
	return out
}

// Options returns the options with defaults filled in (for a
// heterogeneous graph: Nodes is the paper count).
func (g *Gen) Options() Options { return g.opt }

// Hetero reports whether the graph is heterogeneous.
func (g *Gen) Hetero() bool { return g.hetero }

// NumNodes returns the node count over all types.
func (g *Gen) NumNodes() int64 {
	var n int64
	for _, t := range g.types {
		n += t.n
	}
	return n
}

// NumEdges returns the stored edge count over all relations.
func (g *Gen) NumEdges() int64 {
	var m int64
	for _, r := range g.rels {
		m += r.edges
	}
	return m
}

// NumDraws is what the same-class counts of WriteEdgeChunk add up to:
// the undirected pairs of a homogeneous graph, else the edges.
func (g *Gen) NumDraws() int64 {
	if g.hetero {
		return g.NumEdges()
	}
	return g.NumEdges() / 2
}

// SplitCounts returns the train, valid and test counts (of papers when
// heterogeneous).
func (g *Gen) SplitCounts() [3]int64 { return g.split }

// NumTypes returns the node type count, NumRels the relation count.
func (g *Gen) NumTypes() int { return len(g.types) }

// NumRels returns the relation (edge type) count.
func (g *Gen) NumRels() int { return len(g.rels) }

// NumNodeChunks returns the chunk count of node type t.
func (g *Gen) NumNodeChunks(t int) int { return len(g.types[t].sizes) }

// NumEdgeChunks returns the chunk count of relation r.
func (g *Gen) NumEdgeChunks(r int) int { return len(g.rels[r].sizes) }

// rankOf draws a rank of class c by weight from u in [0,1): the inverse of
// the weight's integral x^(1-β)/(1-β) over [1, size+1), of which rank q
// owns [q+1, q+2).
func (g *Gen) rankOf(t *nodeType, c int, u float64) int64 {
	x := math.Pow(1+u*t.powSpan[c], 1/(1-g.beta))
	return min(max(int64(x)-1, 0), t.start[c+1]-t.start[c]-1)
}

// classOf draws a class of t by total weight from u in [0,1): the first
// whose cumulative weight exceeds u·total, so never an empty class (a
// small type of a heterogeneous graph has some).
func (t *nodeType) classOf(u float64) int {
	x := u * t.cumW[len(t.cumW)-1]
	c := sort.Search(len(t.cumW), func(c int) bool { return t.cumW[c] > x })
	return min(c, len(t.cumW)-1)
}

// label returns the class of node v of t.
func (t *nodeType) label(v int64) int {
	p := int64(t.perm.inv(uint64(v)))
	return sort.Search(len(t.start)-1, func(c int) bool { return t.start[c+1] > p })
}

// Label returns node v's class (of the labeled type when heterogeneous).
func (g *Gen) Label(v int64) int { return g.types[g.labeled].label(v) }

// SplitSet returns node v's set in the split graph.GenSplitName (of the
// labeled type): 0 train, 1 valid, 2 test, 3 none. Counts are exactly
// SplitCounts: a node's set is where it falls in a second permutation.
func (g *Gen) SplitSet(v int64) int {
	sp := newPerm(uint64(g.types[g.labeled].n), g.opt.Seed, tagSplitPerm)
	return g.splitSet(&sp, v)
}

func (g *Gen) splitSet(sp *perm, v int64) int {
	s := int64(sp.fwd(uint64(v)))
	switch {
	case s < g.split[0]:
		return 0
	case s < g.split[0]+g.split[1]:
		return 1
	case s < g.split[0]+g.split[1]+g.split[2]:
		return 2
	}
	return 3
}

// Pair returns undirected pair k (u < v) of a homogeneous graph and
// whether its ends share a class.
func (g *Gen) Pair(k int64) (u, v int64, same bool) {
	t := &g.types[0]
	r := hashkey.NewStream(hashkey.Hash64(tagEdge, g.opt.Seed, uint64(k)))
	var pu, pv int64
	for try := 0; ; try++ {
		cu := t.classOf(r.Float64())
		cv := cu
		same = r.Float64() < g.opt.Homophily
		if !same {
			cv = t.classOf(r.Float64())
		}
		lo, s := t.start[cu], t.start[cu+1]-t.start[cu]
		pu = lo + g.rankOf(t, cu, r.Float64())
		pv = t.start[cv] + g.rankOf(t, cv, r.Float64())
		if pu != pv {
			same = same || cu == cv
			break
		}
		if try == maxTries-1 {
			pv, same = lo+(pu-lo+1)%s, true
			break
		}
	}
	u, v = int64(t.perm.fwd(uint64(pu))), int64(t.perm.fwd(uint64(pv)))
	if u > v {
		u, v = v, u
	}
	return u, v, same
}

// Edge returns stored edge i of relation r (type-local ids) and whether
// its ends share a class.
func (g *Gen) Edge(r int, i int64) (src, dst int64, same bool) {
	if !g.hetero {
		u, v, s := g.Pair(i / 2)
		if i%2 == 1 {
			return v, u, s
		}
		return u, v, s
	}
	rel := &g.rels[r]
	at, ot := &g.types[rel.dst], &g.types[rel.src]
	if rel.anchorIsSrc {
		at, ot = ot, at
	}
	st := hashkey.NewStream(hashkey.Hash64(tagEdge, g.opt.Seed, uint64(r), uint64(i)))
	var pa, po int64
	for try := 0; ; try++ {
		ca := at.classOf(st.Float64())
		pa = at.start[ca] + g.rankOf(at, ca, st.Float64())
		co := ca
		if !(st.Float64() < g.opt.Homophily) || ot.start[ca+1] == ot.start[ca] {
			co = ot.classOf(st.Float64())
		}
		po = ot.start[co] + g.rankOf(ot, co, st.Float64())
		same = co == ca
		if at != ot || pa != po {
			break
		}
		if try == maxTries-1 { // a self loop of cites: the next paper of the class
			s := ot.start[co+1] - ot.start[co]
			po = ot.start[co] + (po-ot.start[co]+1)%s
			break
		}
	}
	a, o := int64(at.perm.fwd(uint64(pa))), int64(ot.perm.fwd(uint64(po)))
	if rel.anchorIsSrc {
		return a, o, same
	}
	return o, a, same
}

// featRow writes node v of class c's features into row: the centroid plus
// unit Gaussian noise from v's own stream, rounded to 1e-3 as gen does.
func (g *Gen) featRow(v int64, c int, pcg *rand.PCG, r *rand.Rand, row []float32) {
	pcg.Seed(hashkey.Hash64(tagFeat, g.opt.Seed, uint64(v)), 0)
	cen := g.cen[c*len(row) : (c+1)*len(row)]
	for j := range row {
		row[j] = float32(math.Round((cen[j]+r.NormFloat64())*1000)) / 1000
	}
}

// Features returns node v's feature row (of the labeled type).
func (g *Gen) Features(v int64) []float32 {
	pcg := rand.NewPCG(0, 0)
	row := make([]float32, g.featDim)
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
		GraphName: g.name,
		Edges:     map[string]graph.ChunkFiles{},
		NodeData:  map[string]map[string]graph.ChunkFiles{},
	}
	for _, t := range g.types {
		m.NodeType = append(m.NodeType, t.name)
		m.NumNodesPerChunk = append(m.NumNodesPerChunk, t.sizes)
	}
	for _, r := range g.rels {
		m.EdgeType = append(m.EdgeType, r.et)
		m.NumEdgesPerChunk = append(m.NumEdgesPerChunk, r.sizes)
		ef := graph.ChunkFiles{Format: numpy}
		for k := range r.sizes {
			ef.Data = append(ef.Data, graph.EdgeChunkFile(r.et, k))
		}
		m.Edges[r.et] = ef
		if g.opt.EdgeTime {
			tf := graph.ChunkFiles{Format: numpy}
			for k := range r.sizes {
				tf.Data = append(tf.Data, graph.EdgeDataChunkFile(r.et, graph.ChunkTime, k))
			}
			if m.EdgeData == nil {
				m.EdgeData = map[string]map[string]graph.ChunkFiles{}
			}
			m.EdgeData[r.et] = map[string]graph.ChunkFiles{graph.ChunkTime: tf}
		}
	}
	lt := g.types[g.labeled]
	nd := map[string]graph.ChunkFiles{}
	mk := maskKeys()
	for _, key := range append([]string{graph.ChunkFeat, graph.ChunkLabel}, mk[:]...) {
		f := graph.ChunkFiles{Format: numpy}
		for k := range lt.sizes {
			f.Data = append(f.Data, graph.NodeChunkFile(lt.name, key, k))
		}
		nd[key] = f
	}
	m.NodeData[lt.name] = nd
	if g.opt.NodeTime {
		for _, t := range g.types {
			f := graph.ChunkFiles{Format: numpy}
			for k := range t.sizes {
				f.Data = append(f.Data, graph.NodeChunkFile(t.name, graph.ChunkTime, k))
			}
			if m.NodeData[t.name] == nil {
				m.NodeData[t.name] = map[string]graph.ChunkFiles{}
			}
			m.NodeData[t.name][graph.ChunkTime] = f
		}
	}
	return m
}

// Dirs returns the directories, relative to the dataset, that the chunk
// files go into; they must exist before chunks are written.
func (g *Gen) Dirs() []string {
	dirs := []string{filepath.Dir(graph.EdgeChunkFile(g.rels[0].et, 0)), filepath.Dir(graph.NodeChunkFile(g.types[g.labeled].name, graph.ChunkFeat, 0))}
	if g.opt.EdgeTime {
		for _, r := range g.rels {
			dirs = append(dirs, filepath.Dir(graph.EdgeDataChunkFile(r.et, graph.ChunkTime, 0)))
		}
	}
	if g.opt.NodeTime {
		for t, nt := range g.types {
			if t != g.labeled {
				dirs = append(dirs, filepath.Dir(graph.NodeChunkFile(nt.name, graph.ChunkTime, 0)))
			}
		}
	}
	return dirs
}

// ChunkMemory estimates the bytes that writing one node chunk and one edge
// chunk holds (float64: absurd sizes give a huge number, not an overflow):
// the chunk arrays and the numpy writer's copy of them.
func (g *Gen) ChunkMemory() float64 {
	o := g.opt
	node := float64(o.ChunkNodes) * (float64(g.featDim)*4 + 8 + 3 + 24 + 8)
	edge := float64(o.ChunkEdges) * (16 + 8)
	return 2*math.Max(node, edge) + float64(o.Classes*g.featDim)*8
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

// WriteNodeChunk writes chunk k of node type t's data (features, labels
// and the split masks; types without data have no files) under dir, whose
// Dirs exist, and returns the chunk's node count.
func (g *Gen) WriteNodeChunk(dir string, t, k int) (int64, error) {
	nt := &g.types[t]
	lo, size := nt.chunkStart[k], nt.sizes[k]
	var times []int64
	if g.opt.NodeTime {
		// Keyed by the homogenized id, as gen keys node times.
		off := int64(0)
		if g.hetero {
			off = g.nodeOrig[t]
		}
		times = make([]int64, size)
		for i := range times {
			times[i] = graph.GenNodeTime(g.opt.Seed, off+lo+int64(i))
		}
	}
	if t != g.labeled {
		if times != nil {
			return size, graph.WriteNpy(filepath.Join(dir, graph.NodeChunkFile(nt.name, graph.ChunkTime, k)), times)
		}
		return size, nil
	}
	dim := int64(g.featDim)
	data := make([]float32, size*dim)
	rows := make([][]float32, size)
	labels := make([]int64, size)
	var masks [3][]uint8
	for set := range masks {
		masks[set] = make([]uint8, size)
	}
	sp := newPerm(uint64(nt.n), g.opt.Seed, tagSplitPerm)
	g.span(size, func(a, b int64) {
		pcg := rand.NewPCG(0, 0)
		r := rand.New(pcg)
		for i := a; i < b; i++ {
			v := lo + i
			c := nt.label(v)
			labels[i] = int64(c)
			rows[i] = data[i*dim : (i+1)*dim]
			g.featRow(v, c, pcg, r, rows[i])
			if set := g.splitSet(&sp, v); set < 3 {
				masks[set][i] = 1
			}
		}
	})
	mk := maskKeys()
	put := []struct {
		key string
		xs  any
	}{{graph.ChunkFeat, rows}, {graph.ChunkLabel, labels}, {mk[0], masks[0]}, {mk[1], masks[1]}, {mk[2], masks[2]}}
	if times != nil {
		put = append(put, struct {
			key string
			xs  any
		}{graph.ChunkTime, times})
	}
	for _, p := range put {
		if err := graph.WriteNpy(filepath.Join(dir, graph.NodeChunkFile(nt.name, p.key, k)), p.xs); err != nil {
			return 0, err
		}
	}
	return size, nil
}

// WriteEdgeChunk writes chunk k of relation r under dir, whose Dirs
// exist, and returns its edge count and how many of its draws joined two
// nodes of one class (homogeneous: the pairs whose first edge 2k it holds;
// summed over all chunks, the same-class share of NumDraws).
func (g *Gen) WriteEdgeChunk(dir string, r, k int) (edges, sameClass int64, err error) {
	rel := &g.rels[r]
	lo, size := rel.chunkStart[k], rel.sizes[k]
	buf := make([][2]int64, size)
	var mu sync.Mutex
	g.span(size, func(a, b int64) {
		var same int64
		for i := a; i < b; i++ {
			e := lo + i
			if !g.hetero && i > a && e%2 == 1 {
				buf[i] = [2]int64{buf[i-1][1], buf[i-1][0]}
				continue
			}
			u, v, s := g.Edge(r, e)
			buf[i] = [2]int64{u, v}
			if s && (g.hetero || e%2 == 0) {
				same++
			}
		}
		mu.Lock()
		sameClass += same
		mu.Unlock()
	})
	if err := graph.WriteNpy(filepath.Join(dir, graph.EdgeChunkFile(rel.et, k)), buf); err != nil {
		return 0, 0, err
	}
	if g.opt.EdgeTime {
		// Homogeneous: edges 2p and 2p+1 are pair p, as gen's
		// edge_time.csv.gz lines; heterogeneous: GenerateHetero's key.
		times := make([]int64, size)
		for i := range times {
			if g.hetero {
				sOff, dOff := g.nodeOrig[rel.src], g.nodeOrig[rel.dst]
				times[i] = graph.GenHeteroEdgeTime(g.opt.Seed, r, sOff+buf[i][0], dOff+buf[i][1])
			} else {
				times[i] = graph.GenEdgeTime(g.opt.Seed, (lo+int64(i))/2)
			}
		}
		if err := graph.WriteNpy(filepath.Join(dir, graph.EdgeDataChunkFile(rel.et, graph.ChunkTime, k)), times); err != nil {
			return 0, 0, err
		}
	}
	return size, sameClass, nil
}

// Describe returns the README.md written beside the chunks.
func (g *Gen) Describe() string {
	o := g.opt
	var b strings.Builder
	fmt.Fprintf(&b, "# Synthetic graph (mpignn gen --format chunked)\n\n")
	fmt.Fprintf(&b, "Degree-corrected stochastic block model in DistDGL's chunked format; classes are the planted communities.\n")
	fmt.Fprintf(&b, "Every value is a function of the seed and a node id or edge index: any number of processes writes the same files.\n\n")
	if g.hetero {
		fmt.Fprintf(&b, "- ogbn-mag's shape:")
		for _, t := range g.types {
			fmt.Fprintf(&b, " %s %d", t.name, t.n)
		}
		fmt.Fprintf(&b, "; edges")
		for _, r := range g.rels {
			fmt.Fprintf(&b, " %s %d", r.et, r.edges)
		}
		fmt.Fprintf(&b, " (a repeated edge is stored twice, readers keep one)\n")
	} else {
		fmt.Fprintf(&b, "- nodes %d, stored edges %d (%d undirected pairs, both directions; a repeated pair is stored twice, readers keep one)\n", o.Nodes, g.NumEdges(), g.NumEdges()/2)
	}
	fmt.Fprintf(&b, "- classes %d, feature dim %d, seed %d\n", o.Classes, g.featDim, o.Seed)
	fmt.Fprintf(&b, "- homophily parameter %g, feature separation %g, power-law exponent %g\n", o.Homophily, o.FeatSep, o.PowerLaw)
	fmt.Fprintf(&b, "- split %q of %s: train %d, valid %d, test %d\n", graph.GenSplitName, g.types[g.labeled].name, g.split[0], g.split[1], g.split[2])
	fmt.Fprintf(&b, "- chunks of %d nodes and %d edges\n", o.ChunkNodes, o.ChunkEdges)
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
