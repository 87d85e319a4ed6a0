package dpartition

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
)

// MethodAssignment is the Meta.Method of a partition whose assignment was
// read from files (Options.AssignmentDir).
const MethodAssignment = "assignment"

// Options configure Run. The reader options mirror those the partition
// command gives ReadOGB and ReadOGBHetero, so that the result equals the
// single-process partition of the same dataset.
type Options struct {
	// Data is the chunked dataset directory, Out the partition directory.
	Data, Out string
	// Parts is the number of parts, any number of at least 1: part q is
	// written by rank q mod the number of ranks (link splits and
	// MethodML need one part per rank).
	Parts int
	// Method is MethodParMetis, MethodLP, MethodML, partition.MethodRandom or MethodAssignment (then
	// AssignmentDir holds "<node type>.txt" files of part ids, one line per
	// node in type-local order; "_N.txt" for a homogeneous graph).
	Method        string
	AssignmentDir string
	Seed          uint64
	// Split and LabelType are partition.Options' fields.
	Split, LabelType string
	// Undirected: homogeneous graphs get every edge's reverse and lose
	// self loops (graph.UndirectedOptions); otherwise edges are kept as
	// stored. It is recorded in META (Undirected, Hetero.Reverse).
	Undirected bool
	// Reverse and NoReverse plan the relations of a heterogeneous graph
	// (graph.PlanRelations), as HeteroReadOptions does.
	Reverse   bool
	NoReverse []string
	// NormalizeFeatures divides every feature row by its sum.
	NormalizeFeatures bool
	// SparseFeatures is partition.Options.SparseFeatures.
	SparseFeatures string
	// FeatDType is partition.Options.FeatDType: the node features stored
	// at two bytes a value (homogeneous dense features only, as there).
	FeatDType string
	// HaloFeats also stores the features of every part's 1-hop halo
	// (partition.Options.HaloFeats; homogeneous datasets only, as there).
	HaloFeats bool
	// Time stores the dataset's times (partition.Options.Time): an edge
	// type's edge_data "time", else each edge's source's node_data "time".
	Time bool
	// EdgeFeat stores the edge features (partition.Options.EdgeFeat):
	// edge_data "feat" of a homogeneous graph, each row moved with its
	// edge into the part's edge_feat.bin. NodeFeat (graph.FromEdgesMean or
	// FromEdgesSum, partition.Options.NodeFeat) derives the node features
	// from them, over each node's stored in-edges, where the part's
	// in-edges are.
	EdgeFeat bool
	NodeFeat string
	// Link draws a link-prediction split (partition.Options.Link): random
	// splits of homogeneous undirected datasets, untimed (see link.go).
	Link      *partition.LinkOptions
	Overwrite bool
	Workers   int
	// RoundIDs bounds the ids one rank sends in one lookup round (0:
	// 4 M), RoundEdges the edges one rank moves in one round (0: 1 M);
	// tests lower them to exercise the rounds.
	RoundIDs, RoundEdges int
	// Phase, if set, is called on every rank with the wall time of each
	// step as it ends ("assignment", "graph" and "PT-Scotch", "label
	// propagation" or "coarsening", "METIS" and "refinement" inside it,
	// "nodes", "edges", "write"), for the command's report.
	Phase func(name string, d time.Duration)
}

// run is the state of one rank's partitioning.
type run struct {
	c       *collectives.Comm
	opt     Options
	ch      *graph.Chunked
	P, rank int
	K       int   // parts
	mine    []int // the parts this rank owns (q mod P == rank), ascending
	homo    bool
	s       *graph.Schema
	R       int64
	ctype   []int     // schema type -> chunked node type index
	kLo     []int     // schema type -> this rank's first node chunk
	kHi     []int     // and one past its last
	bstart  [][]int64 // schema type -> per rank r, first type-local id of r's block (len P+1)
	assign  [][]int32 // schema type -> part of each node of this rank's block
	newID   [][]int64 // schema type -> new id of each node of this rank's block
	counts  []int64   // [r][t][q] flattened: nodes of type t in rank r's block assigned to part q
	offsets []int64   // part offsets (K+1)
	lt      int       // label type (schema index), -1 none
	labels  bool      // labels.bin is written
	tdim    int       // width of real targets (a homogeneous "label" of K > 1 columns; targets.bin), 0 none
	splits  []string  // split names of the label type, sorted
	dims    []int     // schema type -> feature dimension (0 none)
	// With Options.Time: relTime[e] says chunked edge type e has edge
	// times (else its edges take their sources' node times), edgeTime
	// that one has (the time kind is then edge); nodeTime[t] holds the
	// node times of this rank's block of type t (nil: the type has none;
	// its nodes' time is 0, as in ReadOGBHetero), hasNodeTime that a type
	// has node times.
	relTime     []bool
	edgeTime    bool
	nodeTime    [][]int64
	hasNodeTime bool
	// efDim is the width of the edge features moved with the edges
	// (Options.EdgeFeat or NodeFeat), 0 when none are read.
	efDim int
	// elDim is the width of the edge labels moved with the edges (a link
	// split's edge task targets), 0 when none are read; elClasses their
	// class count when they are classes (elDim 1).
	elDim, elClasses int
	// linkOpt is Options.Link with its defaults; lk the split drawn.
	linkOpt *partition.LinkOptions
	lk      *linkSplit
}

// Run partitions opt.Data with every rank of c and returns the written
// META on rank 0 (nil on the other ranks). Every rank must call it with
// the same options. An error on any rank must end the job (spmd.Run): the
// other ranks may be waiting in a collective.
func Run(c *collectives.Comm, opt Options) (*partition.Meta, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	x := &run{c: c, opt: opt, P: c.Size(), rank: c.Rank(), K: opt.Parts}
	for q := x.rank; q < x.K; q += x.P {
		x.mine = append(x.mine, q)
	}
	if x.rank == 0 {
		if err := partition.CheckOutDir(opt.Out, opt.Overwrite); err != nil {
			return nil, err
		}
	}
	var err error
	if x.ch, err = graph.OpenChunked(opt.Data); err != nil {
		return nil, err
	}
	if err := x.plan(); err != nil {
		return nil, err
	}
	if opt.HaloFeats && !x.homo {
		// The single-process writer's refusal (heteroSourceOf), word for word.
		return nil, errors.New("partition: halo features are not supported for heterogeneous graphs (features are per node type)")
	}
	if x.linkOpt, err = x.linkOptions(); err != nil {
		return nil, err
	}
	if x.linkOpt != nil {
		x.splits = nil // node splits are not read for a link task
	}
	switch {
	case x.K != x.P && x.linkOpt != nil:
		return nil, fmt.Errorf("--parts %d on %d ranks: a link split is drawn with one part per rank; run it with %d ranks (mpirun -n %d)", x.K, x.P, x.K, x.K)
	}
	if err := x.readNodeTimes(); err != nil {
		return nil, err
	}
	if err := x.planEdgeFeat(); err != nil {
		return nil, err
	}
	if err := x.planEdgeLabels(); err != nil {
		return nil, err
	}
	if err := partition.CheckParts(x.s.NumNodes(), x.K); err != nil {
		return nil, err
	}
	t := time.Now()
	if err := x.readAssignment(); err != nil {
		return nil, err
	}
	if err := x.relabel(); err != nil {
		return nil, err
	}
	t = x.phase("assignment", t)
	nds, err := x.moveNodes()
	if err != nil {
		return nil, err
	}
	t = x.phase("nodes", t)
	rows, err := x.moveEdges(nds)
	if err != nil {
		return nil, err
	}
	// Before the link split, as graph.ReadOGB derives them from the whole
	// graph before partition.Write draws the split.
	if err := x.nodeFeatFromEdges(nds, rows); err != nil {
		return nil, err
	}
	if x.linkOpt != nil {
		// One part per rank (checked above).
		if rows[0].ptr, rows[0].srcs, err = x.link(nds[0], rows[0].ptr, rows[0].srcs, rows[0].el); err != nil {
			return nil, err
		}
		rows[0].el = nil // they are the positives' targets now
	}
	t = x.phase("edges", t)
	m, err := x.write(nds, rows)
	x.phase("write", t)
	return m, err
}

// phase reports the step that began at t0 to Options.Phase and returns
// the time it ended.
func (x *run) phase(name string, t0 time.Time) time.Time {
	now := time.Now()
	if x.opt.Phase != nil {
		x.opt.Phase(name, now.Sub(t0))
	}
	return now
}

// plan builds the schema, this rank's node blocks, the relations and what
// the node data hold (label type, splits, feature dimensions).
func (x *run) plan() error {
	ch := x.ch
	x.homo = ch.Homogeneous()
	counts := map[string]int64{}
	for i, typ := range ch.Meta.NodeType {
		counts[typ] = ch.Counts[i]
	}
	rels := ch.Rels
	if !x.homo {
		var err error
		if rels, _, err = graph.PlanRelations(ch.Rels, x.opt.Reverse, x.opt.NoReverse); err != nil {
			return fmt.Errorf("%s: %w", x.opt.Data, err)
		}
	}
	s, err := graph.NewSchema(counts, rels)
	if err != nil {
		return fmt.Errorf("%s: %w", x.opt.Data, err)
	}
	x.s = s
	x.R = int64(s.NumRels())
	if x.homo {
		x.R = 1
	}
	T := s.NumTypes()
	x.ctype = make([]int, T)
	x.kLo, x.kHi = make([]int, T), make([]int, T)
	x.bstart = make([][]int64, T)
	for t, typ := range s.NodeTypes {
		ct := ch.TypeIndex(typ)
		x.ctype[t] = ct
		k := ch.NumNodeChunks(ct)
		x.kLo[t], x.kHi[t] = graph.ChunkRange(k, x.P, x.rank)
		x.bstart[t] = make([]int64, x.P+1)
		for r := 0; r <= x.P; r++ {
			lo, _ := graph.ChunkRange(k, x.P, min(r, x.P-1))
			if r == x.P {
				lo = k
			}
			x.bstart[t][r] = ch.NodeChunkStart(ct, lo)
		}
	}
	// The label type: the only labelled type, or Options.LabelType.
	x.lt = -1
	var labelled []string
	for _, typ := range s.NodeTypes {
		if ch.HasNodeData(typ, graph.ChunkLabel) {
			labelled = append(labelled, typ)
		}
	}
	switch {
	case x.homo:
		if len(labelled) == 1 {
			x.lt = 0
		}
		if x.opt.LabelType != "" {
			return errors.New("--label-type applies to heterogeneous datasets")
		}
	case x.opt.LabelType != "":
		if !slices.Contains(labelled, x.opt.LabelType) {
			return fmt.Errorf("label type %q: the dataset has labels for %v", x.opt.LabelType, labelled)
		}
		x.lt = s.TypeIndex(x.opt.LabelType)
	case len(labelled) == 1:
		x.lt = s.TypeIndex(labelled[0])
	case len(labelled) > 1:
		return fmt.Errorf("the dataset has labels for node types %v: choose one (--label-type)", labelled)
	}
	x.labels = x.lt >= 0
	if x.homo && x.lt == 0 {
		// A "label" of several columns holds real targets (convert
		// writes a multi-column node-label.csv.gz so): every rank learns
		// the width, from its first chunk's header or from the others.
		w := []int64{0}
		if x.kLo[0] < x.kHi[0] {
			k, err := ch.NodeDataWidth(x.ctype[0], graph.ChunkLabel, x.kLo[0])
			if err != nil {
				return err
			}
			w[0] = int64(k)
		}
		if err := collectives.Allreduce(x.c, w, collectives.Max); err != nil {
			return err
		}
		if w[0] > 1 {
			x.tdim, x.labels = int(w[0]), false
		}
	}
	if x.lt >= 0 {
		x.splits = ch.SplitNames(s.NodeTypes[x.lt])
	} else if x.homo {
		x.splits = ch.SplitNames(graph.HomoNodeType)
	}
	x.dims = make([]int, T)
	return nil
}

// readNodeTimes checks that a timed run has the times it needs, as
// ReadOGB and ReadOGBHetero check them, and reads the node times of this
// rank's blocks (Options.Time).
func (x *run) readNodeTimes() error {
	if !x.opt.Time {
		return nil
	}
	ch := x.ch
	T := x.s.NumTypes()
	x.nodeTime = make([][]int64, T)
	has := make([]bool, T)
	for t, typ := range x.s.NodeTypes {
		if !ch.HasNodeData(typ, graph.ChunkTime) {
			continue
		}
		has[t], x.hasNodeTime = true, true
		lo, hi := x.block(t)
		x.nodeTime[t] = make([]int64, 0, hi-lo) // not nil: the type has times
		for k := x.kLo[t]; k < x.kHi[t]; k++ {
			ts, err := ch.ReadNodeInts(x.ctype[t], graph.ChunkTime, k)
			if err != nil {
				return err
			}
			x.nodeTime[t] = append(x.nodeTime[t], ts...)
		}
	}
	x.relTime = make([]bool, len(ch.Rels))
	plans := x.relPlans()
	for e, rel := range ch.Rels {
		et := ch.Meta.EdgeType[e]
		if ch.HasEdgeData(et, graph.ChunkTime) {
			x.relTime[e], x.edgeTime = true, true
			continue
		}
		if x.homo {
			if !has[0] {
				return fmt.Errorf("%s: times requested (--time) but the dataset has no edge or node times (edge_data %s/%s, node_data %s/%s)",
					x.opt.Data, et, graph.ChunkTime, graph.HomoNodeType, graph.ChunkTime)
			}
			continue
		}
		if !has[x.s.TypeIndex(rel.Src)] {
			return fmt.Errorf("%s: relation %s: times requested (--time) but it has no edge_data %s and its source type %q no node_data %s",
				x.opt.Data, rel, graph.ChunkTime, rel.Src, graph.ChunkTime)
		}
		if pl := plans[e]; (pl.sym || pl.rr >= 0) && !has[x.s.TypeIndex(rel.Dst)] {
			return fmt.Errorf("%s: relation %s: its times are its source nodes' times, but its reverse's source type %q has no node times", x.opt.Data, rel, rel.Dst)
		}
	}
	return nil
}

// nodeTimeOf is the node time of the i-th node of this rank's block of
// type t (0 for a type without node times).
func (x *run) nodeTimeOf(t int, i int64) int64 {
	if x.nodeTime[t] == nil {
		return 0
	}
	return x.nodeTime[t][i]
}

// block returns this rank's type-local node range of type t.
func (x *run) block(t int) (lo, hi int64) { return x.bstart[t][x.rank], x.bstart[t][x.rank+1] }

// owner returns the rank whose block holds homogenized id v, and v's type
// and type-local id.
func (x *run) owner(v int64) (r, t int, local int64) {
	t = x.s.TypeOf(v)
	local = v - x.s.NodeOrig[t]
	b := x.bstart[t]
	r = sort.Search(x.P, func(r int) bool { return b[r+1] > local })
	return r, t, local
}

// readAssignment fills x.assign for this rank's blocks.
func (x *run) readAssignment() error {
	switch x.opt.Method {
	case MethodParMetis:
		return x.parmetisAssign()
	case MethodLP:
		return x.lpAssign()
	case MethodML:
		return x.mlAssign()
	}
	T := x.s.NumTypes()
	x.assign = make([][]int32, T)
	var full []int32
	if x.opt.Method == partition.MethodRandom {
		// The single-process random assignment is a sequential shuffle of
		// all nodes; every rank computes it (4 bytes a node) and keeps its
		// blocks, so the result is the single-process one.
		full = partition.Random(x.s.NumNodes(), x.K, x.opt.Seed)
	}
	for t, typ := range x.s.NodeTypes {
		lo, hi := x.block(t)
		if full != nil {
			base := x.s.NodeOrig[t]
			x.assign[t] = slices.Clone(full[base+lo : base+hi])
			continue
		}
		name := typ
		if x.homo {
			name = graph.HomoNodeType
		}
		a, err := readAssignFile(filepath.Join(x.opt.AssignmentDir, name+".txt"), lo, hi, x.s.Count(t), x.K)
		if err != nil {
			return err
		}
		x.assign[t] = a
	}
	return nil
}

// readAssignFile reads lines [lo,hi) of an assignment file of n lines,
// checking every line it reads and the line count.
func readAssignFile(path string, lo, hi, n int64, P int) ([]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("assignment: %w", err)
	}
	defer f.Close()
	out := make([]int32, 0, hi-lo)
	sc := bufio.NewScanner(f)
	line := int64(0)
	for sc.Scan() {
		if line >= lo && line < hi {
			var p int
			b := sc.Bytes()
			if _, err := fmt.Sscan(string(b), &p); err != nil || p < 0 || p >= P {
				return nil, fmt.Errorf("%s line %d: part %q: want an integer in [0,%d)", path, line+1, b, P)
			}
			out = append(out, int32(p))
		}
		line++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if line != n {
		return nil, fmt.Errorf("%s: %d lines, want one per node of the type (%d)", path, line, n)
	}
	return out, nil
}

// relabel gathers the per-(rank, type, part) counts and gives every node
// of this rank's blocks its new id: part-major, then by homogenized
// original id (partition.Relabel's numbering).
func (x *run) relabel() error {
	T, P, K := x.s.NumTypes(), x.P, x.K
	mine := make([]int64, T*K)
	for t := range T {
		for _, p := range x.assign[t] {
			mine[t*K+int(p)]++
		}
	}
	all, err := collectives.Allgather(x.c, mine)
	if err != nil {
		return err
	}
	x.counts = all
	cnt := func(r, t, q int) int64 { return all[(r*T+t)*K+q] }
	x.offsets = make([]int64, K+1)
	for q := range K {
		x.offsets[q+1] = x.offsets[q]
		for r := range P {
			for t := range T {
				x.offsets[q+1] += cnt(r, t, q)
			}
		}
	}
	x.newID = make([][]int64, T)
	for t := range T {
		next := make([]int64, K)
		for q := range K {
			next[q] = x.offsets[q]
			for t2 := range t {
				for r := range P {
					next[q] += cnt(r, t2, q)
				}
			}
			for r := range x.rank {
				next[q] += cnt(r, t, q)
			}
		}
		ids := make([]int64, len(x.assign[t]))
		for i, q := range x.assign[t] {
			ids[i] = next[q]
			next[q]++
		}
		x.newID[t] = ids
	}
	return nil
}

// typeOffsets returns, per type, the part offsets of its nodes (HeteroMeta).
func (x *run) typeOffsets() [][]int64 {
	T, P, K := x.s.NumTypes(), x.P, x.K
	out := make([][]int64, T)
	for t := range T {
		off := make([]int64, K+1)
		for q := range K {
			off[q+1] = off[q]
			for r := range P {
				off[q+1] += x.counts[(r*T+t)*K+q]
			}
		}
		out[t] = off
	}
	return out
}

// partOf returns the part of new id g.
func (x *run) partOf(g int64) int {
	return sort.Search(x.K, func(q int) bool { return x.offsets[q+1] > g })
}

// slot returns the index in x.mine of part q, which this rank owns.
func (x *run) slot(q int) int { return q / x.P }

// byOwner packs per-part segments into per-rank ones for an exchange: the
// segments of the parts rank d owns, in increasing part order.
func byOwner[T collectives.Elem](P int, per [][]T) [][]T {
	out := make([][]T, P)
	for q, s := range per {
		out[q%P] = append(out[q%P], s...)
	}
	return out
}

// nodeData is what the owner of a part holds about its nodes, in new-id
// order.
type nodeData struct {
	orig   []int64
	labels []int32
	splits [][]uint8 // per split name: 0 none, 1 train, 2 valid, 3 test
	feat   []*graph.Features
	// targets are the real targets of a homogeneous part (run.tdim wide),
	// nil without.
	targets *graph.Features
}

// moveNodes sends every node of this rank's blocks (original id, label,
// split membership, features) to the owner of its part, a node chunk per
// round, and returns the node data of this rank's parts (x.mine order);
// received runs are placed by source rank, so that a part's nodes come out
// in homogenized id order without sorting.
func (x *run) moveNodes() ([]*nodeData, error) {
	T, P, K := x.s.NumTypes(), x.P, x.K
	nds := make([]*nodeData, len(x.mine))
	for j, q := range x.mine {
		nodes := x.offsets[q+1] - x.offsets[q]
		nd := &nodeData{orig: make([]int64, nodes), splits: make([][]uint8, len(x.splits)), feat: make([]*graph.Features, T)}
		if x.labels {
			nd.labels = make([]int32, nodes)
			if !x.homo {
				for i := range nd.labels {
					nd.labels[i] = -1
				}
			}
		}
		for i := range nd.splits {
			nd.splits[i] = make([]uint8, nodes)
		}
		if x.tdim > 0 {
			nd.targets = &graph.Features{Dim: x.tdim, Data: make([]float32, nodes*int64(x.tdim))}
		}
		nds[j] = nd
	}
	// Feature dimensions: a rank without chunks of a type learns them here.
	dims := make([]int64, T)
	for t, typ := range x.s.NodeTypes {
		if x.ch.HasNodeData(typ, graph.ChunkFeat) && x.kLo[t] < x.kHi[t] {
			d, err := x.ch.NodeFeatDim(x.ctype[t], graph.ChunkFeat, x.kLo[t])
			if err != nil {
				return nil, err
			}
			dims[t] = int64(d)
		}
	}
	gdims := slices.Clone(dims)
	if err := collectives.Allreduce(x.c, gdims, collectives.Max); err != nil {
		return nil, err
	}
	for t := range T {
		if dims[t] != 0 && dims[t] != gdims[t] {
			return nil, fmt.Errorf("%s: node type %s: features of dimension %d here, %d on another rank", x.opt.Data, x.s.NodeTypes[t], dims[t], gdims[t])
		}
		x.dims[t] = int(gdims[t])
	}
	// start[j]: index in part mine[j] of its first node of type t.
	start := make([]int64, len(x.mine))
	for t := range T {
		// Where each source rank's nodes of type t land in each of my parts.
		pos := make([][]int64, len(x.mine))
		typeStart := make([]int64, len(x.mine))
		for j, q := range x.mine {
			pos[j] = make([]int64, P)
			at := start[j]
			for r := range P {
				pos[j][r] = at
				at += x.counts[(r*T+t)*K+q]
			}
			typeStart[j] = start[j]
			typeCount := at - start[j]
			start[j] = at
			if x.dims[t] > 0 {
				nds[j].feat[t] = &graph.Features{Dim: x.dims[t], Data: make([]float32, typeCount*int64(x.dims[t]))}
			}
		}
		rounds := 0
		for r := range P {
			a, b := graph.ChunkRange(x.ch.NumNodeChunks(x.ctype[t]), P, r)
			rounds = max(rounds, b-a)
		}
		lo, _ := x.block(t)
		for k := range rounds {
			if err := x.nodeRound(nds, t, x.kLo[t]+k, lo, pos, typeStart); err != nil {
				return nil, err
			}
		}
	}
	return nds, nil
}

// nodeRound exchanges node chunk k of type t (nothing when this rank has
// fewer chunks): pos[j][r] is where source rank r's next nodes land in part
// mine[j] (index into it), advanced here. The ids sent to a rank start
// with how many go to each of its parts.
func (x *run) nodeRound(nds []*nodeData, t, k int, blockLo int64, pos [][]int64, typeStart []int64) error {
	P, K := x.P, x.K
	ct := x.ctype[t]
	typ := x.s.NodeTypes[t]
	ids := make([][]int64, K)
	labels := make([][]int32, K)
	splits := make([][]uint8, K)
	feats := make([][]float32, K)
	targs := make([][]float32, K)
	if k < x.kHi[t] {
		first := x.ch.NodeChunkStart(ct, k)
		n := x.ch.Meta.NumNodesPerChunk[ct][k]
		var f *graph.Features
		var err error
		if x.dims[t] > 0 {
			if f, err = x.ch.ReadNodeFeat(ct, graph.ChunkFeat, k); err != nil {
				return err
			}
			if f.Dim != x.dims[t] {
				return fmt.Errorf("%s: node type %s chunk %d: features of dimension %d, want %d", x.opt.Data, typ, k, f.Dim, x.dims[t])
			}
			if x.opt.NormalizeFeatures {
				f.NormalizeRows(x.opt.Workers)
			}
			if err := x.checkFeatures(f, ct, k, first); err != nil {
				return err
			}
		}
		var tg *graph.Features
		if x.tdim > 0 {
			if tg, err = x.ch.ReadNodeFeat(ct, graph.ChunkLabel, k); err != nil {
				return err
			}
			if tg.Dim != x.tdim {
				return fmt.Errorf("%s: node chunk %d: targets of width %d, want %d (%s)", x.opt.Data, k, tg.Dim, x.tdim, x.ch.Meta.NodeData[typ][graph.ChunkLabel].Data[k])
			}
		}
		var lab []int64
		withLabels := x.labels && t == max(x.lt, 0)
		if withLabels {
			if lab, err = x.ch.ReadNodeInts(ct, graph.ChunkLabel, k); err != nil {
				return err
			}
		}
		var code []uint8
		if t == max(x.lt, 0) && len(x.splits) > 0 {
			code = make([]uint8, n*int64(len(x.splits)))
			for si, name := range x.splits {
				for set := range 3 {
					m, err := x.ch.ReadNodeInts(ct, graph.MaskKey(name, set), k)
					if err != nil {
						return err
					}
					for i, b := range m {
						if b == 0 {
							continue
						}
						c := &code[int64(i)*int64(len(x.splits))+int64(si)]
						if *c != 0 {
							return fmt.Errorf("%s: node type %s: split %q: node %d is in two sets (%s)", x.opt.Data, typ, name, first+int64(i), x.ch.Meta.NodeData[typ][graph.MaskKey(name, set)].Data[k])
						}
						*c = uint8(set + 1)
					}
				}
			}
		}
		for i := range n {
			v := first + i
			p := x.assign[t][v-blockLo]
			ids[p] = append(ids[p], x.s.NodeOrig[t]+v)
			if withLabels {
				l := lab[i]
				if x.homo && l == -1 && code != nil {
					// An unlabelled node (OGB's NaN, ogbn-papers100M's
					// 109 M of 111 M) is kept, but never as a target (a
					// heterogeneous dataset is checked as the
					// single-process writer checks it, which it is not).
					for si, c := range code[i*int64(len(x.splits)) : (i+1)*int64(len(x.splits))] {
						if c != 0 {
							return fmt.Errorf("%s: node %d has no label (-1 in %s) but is in %s", x.opt.Data, v, x.ch.Meta.NodeData[typ][graph.ChunkLabel].Data[k], graph.MaskKey(x.splits[si], int(c)-1))
						}
					}
				}
				if l < -1 || l > 1<<31-2 {
					return fmt.Errorf("%s: node %d of type %s: label %d outside [-1,%d] (%s)", x.opt.Data, v, typ, l, 1<<31-2, x.ch.Meta.NodeData[typ][graph.ChunkLabel].Data[k])
				}
				labels[p] = append(labels[p], int32(l))
			}
			if code != nil {
				splits[p] = append(splits[p], code[i*int64(len(x.splits)):(i+1)*int64(len(x.splits))]...)
			}
			if f != nil {
				feats[p] = append(feats[p], f.Row(i)...)
			}
			if tg != nil {
				targs[p] = append(targs[p], tg.Row(i)...)
			}
		}
	}
	head := make([][]int64, K)
	for q := range K {
		head[q] = []int64{int64(len(ids[q]))}
	}
	hdr := byOwner(P, head)
	idSeg := byOwner(P, ids)
	for d := range P {
		idSeg[d] = append(hdr[d], idSeg[d]...)
	}
	rids, err := collectives.AlltoallvSegments(x.c, idSeg)
	if err != nil {
		return err
	}
	rlab, err := collectives.AlltoallvSegments(x.c, byOwner(P, labels))
	if err != nil {
		return err
	}
	rsplit, err := collectives.AlltoallvSegments(x.c, byOwner(P, splits))
	if err != nil {
		return err
	}
	rfeat, err := collectives.AlltoallvSegments(x.c, byOwner(P, feats))
	if err != nil {
		return err
	}
	rtarg, err := collectives.AlltoallvSegments(x.c, byOwner(P, targs))
	if err != nil {
		return err
	}
	S := int64(len(x.splits))
	M := len(x.mine)
	d := int64(x.dims[t])
	for r := range P {
		off := int64(0) // nodes of rank r's message before part j's
		data := rids[r][M:]
		for j := range M {
			c := rids[r][j]
			nd, at := nds[j], pos[j][r]
			copy(nd.orig[at:], data[off:off+c])
			if len(rlab[r]) > 0 {
				copy(nd.labels[at:], rlab[r][off:off+c])
			}
			if int64(len(rsplit[r])) > 0 {
				for i := range c {
					for si := range S {
						nd.splits[si][at+i] = rsplit[r][(off+i)*S+si]
					}
				}
			}
			if f := nd.feat[t]; f != nil {
				copy(f.Data[(at-typeStart[j])*d:], rfeat[r][off*d:(off+c)*d])
			}
			if tg := nd.targets; tg != nil {
				w := int64(tg.Dim)
				copy(tg.Data[at*w:], rtarg[r][off*w:(off+c)*w])
			}
			pos[j][r] += c
			off += c
		}
	}
	return nil
}
