package dpartition

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"slices"
	"sort"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/testhold"
	"mpignn/partition"
)

// partReport is what a rank tells rank 0 about the part it wrote.
type partReport struct {
	Info     partition.PartInfo            `json:"info"`
	Files    map[string]partition.FileInfo `json:"files"`
	RelEdges []int64                       `json:"rel_edges,omitempty"`
	RelCut   []int64                       `json:"rel_cut,omitempty"`
}

// baseMeta is the META every rank builds identically before writing: all
// but the parts, the files and the edge counts.
func (x *run) baseMeta(split string, sparse bool, numClasses int) *partition.Meta {
	m := &partition.Meta{
		FormatVersion: partition.FormatVersion,
		Dataset:       x.ch.Meta.GraphName,
		NumParts:      x.P,
		Offsets:       x.offsets,
		NumNodes:      x.s.NumNodes(),
		NumClasses:    numClasses,
		Method:        x.opt.Method,
		Seed:          x.opt.Seed,
		HaloFeats:     x.opt.HaloFeats,
		Split:         split,
		Undirected:    x.opt.Undirected,
		SparseFeat:    sparse,
		Splits:        map[string]partition.SplitCounts{},
		Parts:         make([]partition.PartInfo, x.P),
		Files:         map[string]partition.FileInfo{},
	}
	if x.homo {
		m.FeatDim = x.dims[0]
		return m
	}
	s := x.s
	m.FormatVersion = partition.FormatVersionHetero
	h := &partition.HeteroMeta{
		NodeTypes:   slices.Clone(s.NodeTypes),
		NodeOrig:    slices.Clone(s.NodeOrig),
		Relations:   make([]string, s.NumRels()),
		TypeOffsets: x.typeOffsets(),
		FeatDims:    map[string]int{},
		RelEdges:    make([]int64, s.NumRels()),
		RelCut:      make([]int64, s.NumRels()),
		Reverse:     x.opt.Undirected,
	}
	for r, rel := range s.Relations {
		h.Relations[r] = rel.String()
	}
	for t, typ := range s.NodeTypes {
		if x.dims[t] > 0 {
			h.FeatDims[typ] = x.dims[t]
		}
	}
	if x.lt >= 0 {
		h.LabelType = s.NodeTypes[x.lt]
	}
	m.Hetero = h
	return m
}

// globals agrees on what depends on every rank's nodes: the class count
// (largest label + 1) and, for sparse features, the density.
func (x *run) globals(nd *nodeData) (numClasses int, sparse bool, err error) {
	maxLabel := int64(-1)
	for _, l := range nd.labels {
		maxLabel = max(maxLabel, int64(l))
	}
	var nz, total int64
	if f := nd.feat[0]; x.homo && f != nil {
		for _, v := range f.Data {
			if v != 0 {
				nz++
			}
		}
		total = int64(len(f.Data))
	}
	g := []int64{maxLabel, nz, total}
	mx := []int64{maxLabel}
	if err := collectives.Allreduce(x.c, mx, collectives.Max); err != nil {
		return 0, false, err
	}
	if err := collectives.Allreduce(x.c, g[1:], collectives.Sum); err != nil {
		return 0, false, err
	}
	if x.labels {
		numClasses = int(mx[0]) + 1
		if x.homo && numClasses < 1 {
			numClasses = 1
		}
	}
	switch mode := x.opt.SparseFeatures; mode {
	case "", partition.SparseOff:
	case partition.SparseAuto:
		sparse = x.homo && x.dims[0] > 0 && g[2] > 0 && float64(g[1])/float64(g[2]) < partition.SparseAutoDensity
	case partition.SparseOn:
		if !x.homo {
			return 0, false, fmt.Errorf("sparse features %q: heterogeneous partitions store their typed features dense (use auto or off)", mode)
		}
		if x.dims[0] == 0 {
			return 0, false, fmt.Errorf("sparse features %q: the dataset has no node features", mode)
		}
		sparse = true
	default:
		return 0, false, fmt.Errorf("sparse features %q: want %s, %s or %s", mode, partition.SparseAuto, partition.SparseOn, partition.SparseOff)
	}
	return numClasses, sparse, nil
}

// write writes this rank's part into rank 0's temporary directory; rank 0
// gathers every part's report, writes META and renames the directory.
func (x *run) write(nd *nodeData, ptr, srcs, times []int64) (*partition.Meta, error) {
	numClasses, sparse, err := x.globals(nd)
	if err != nil {
		return nil, err
	}
	names := map[string]*graph.Split{}
	for _, n := range x.splits {
		names[n] = &graph.Split{}
	}
	split, err := partition.ResolveSplit(&graph.Dataset{Splits: names}, x.opt.Split)
	if err != nil {
		if !x.homo && x.lt >= 0 {
			return nil, fmt.Errorf("node type %q: %w", x.s.NodeTypes[x.lt], err)
		}
		return nil, err
	}
	m := x.baseMeta(split, sparse, numClasses)

	// New ids of every source, from their block owners.
	uniq := distinct(srcs, x.s.NumNodes())
	ids, err := x.lookupRounds(uniq, func(t int, i int64) int64 { return x.newID[t][i] })
	if err != nil {
		return nil, err
	}
	seen := make([]bool, len(uniq))
	at := func(u int64) int {
		i, _ := slices.BinarySearch(uniq, u)
		return i
	}
	me := x.rank
	lo, hi := x.offsets[me], x.offsets[me+1]
	pf := &partition.PartFiles{
		P: me, Lo: lo, Hi: hi, Rels: x.R, Orig: nd.orig, Indptr: ptr, IndOrig: srcs,
		NewID: func(u int64) int64 { return ids[at(u)] },
		FirstHalo: func(u int64) bool {
			i := at(u)
			if seen[i] {
				return false
			}
			seen[i] = true
			return true
		},
		Feat:    nd.feat[0],
		FeatRow: func(i int, _ int64) int64 { return int64(i) },
		Splits: func(name string) (tr, va, te []int64) {
			si := slices.Index(x.splits, name)
			tr, va, te = []int64{}, []int64{}, []int64{}
			for i, c := range nd.splits[si] {
				switch c {
				case 1:
					tr = append(tr, lo+int64(i))
				case 2:
					va = append(va, lo+int64(i))
				case 3:
					te = append(te, lo+int64(i))
				}
			}
			return tr, va, te
		},
	}
	if x.labels {
		pf.Label = func(i int, _ int64) int32 { return nd.labels[i] }
	}
	if x.lk != nil {
		m.Link, pf.Link = &x.lk.meta, x.lk.part
	}
	if x.opt.Time {
		if err := x.timeFiles(m, pf, nd, times); err != nil {
			return nil, err
		}
	}
	if x.opt.HaloFeats && pf.Feat != nil {
		// The halo's rows follow the owned ones in one feature matrix:
		// halo node o (original id) is row len(Orig)+haloRow[at(o)].
		feat, haloRow, err := x.haloFeat(pf.Feat, uniq, ids)
		if err != nil {
			return nil, err
		}
		owned := int64(len(nd.orig))
		pf.Feat = feat
		pf.FeatRow = func(i int, o int64) int64 {
			if i >= 0 {
				return int64(i)
			}
			return owned + int64(haloRow[at(o)])
		}
	}
	if !x.homo {
		pf.Feat = nil
		pf.HetFeat = map[string]*graph.Features{}
		for t, typ := range x.s.NodeTypes {
			if nd.feat[t] != nil {
				pf.HetFeat[typ] = nd.feat[t]
			}
		}
		pf.HetRow = func(_ int, k int64, _ int64) int64 { return k }
	}

	// Rank 0 makes the temporary directory; every rank learns its name.
	var tmpName []byte
	if me == 0 {
		tmp, err := partition.MakeTemp(x.opt.Out)
		if err != nil {
			return nil, err
		}
		tmpName = []byte(tmp)
	}
	if tmpName, err = bcastBytes(x.c, tmpName); err != nil {
		return nil, err
	}
	tmp := string(tmpName)
	if me == 0 {
		testhold.At("temp:" + filepath.Base(filepath.Clean(x.opt.Out)))
	}
	info, err := pf.Write(tmp, m, x.opt.Workers, x.splits)
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", me, err)
	}
	rep := partReport{Info: info, Files: m.Files}
	if m.Hetero != nil {
		rep.RelEdges, rep.RelCut = m.Hetero.RelEdges, m.Hetero.RelCut
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	all, counts, err := collectives.Allgatherv(x.c, b)
	if err != nil {
		return nil, err
	}
	if me != 0 {
		// Rank 0 renames once META is written; wait for it so that the
		// output exists when Run returns on any rank.
		return nil, x.c.Barrier()
	}
	m.Files = map[string]partition.FileInfo{}
	if m.Hetero != nil {
		clear(m.Hetero.RelEdges)
		clear(m.Hetero.RelCut)
	}
	pos := int64(0)
	for p, n := range counts {
		var r partReport
		if err := json.Unmarshal(all[pos:pos+n], &r); err != nil {
			return nil, fmt.Errorf("report of rank %d: %w", p, err)
		}
		pos += n
		m.Parts[p] = r.Info
		m.NumEdges += r.Info.Edges
		m.CutEdges += r.Info.CutEdges
		for k, v := range r.Files {
			m.Files[k] = v
		}
		for name, c := range r.Info.Splits {
			s := m.Splits[name]
			s.Train, s.Valid, s.Test = s.Train+c.Train, s.Valid+c.Valid, s.Test+c.Test
			m.Splits[name] = s
		}
		if m.Hetero != nil {
			for i := range r.RelEdges {
				m.Hetero.RelEdges[i] += r.RelEdges[i]
				m.Hetero.RelCut[i] += r.RelCut[i]
			}
		}
	}
	if err := partition.FinishMeta(tmp, x.opt.Out, m, x.opt.Overwrite); err != nil {
		return nil, err
	}
	return m, x.c.Barrier()
}

// timeFiles sets the part's times (times.bin, and node_time.bin from the
// owned nodes' block owners when there are node times) and META's time
// entry, whose range every rank agrees on: the single-process one, over
// all stored edge times and all node times.
func (x *run) timeFiles(m *partition.Meta, pf *partition.PartFiles, nd *nodeData, times []int64) error {
	pf.Times = times
	var nt []int64
	if x.hasNodeTime {
		var err error
		if nt, err = x.lookupRounds(nd.orig, x.nodeTimeOf); err != nil {
			return err
		}
		pf.NodeTime = func(o int64) int64 {
			i, _ := slices.BinarySearch(nd.orig, o)
			return nt[i]
		}
	}
	// Count, -min and max of this rank's times, then of all.
	have := int64(len(times) + len(nt))
	lohi := []int64{math.MinInt64, math.MinInt64}
	for _, xs := range [][]int64{times, nt} {
		for _, t := range xs {
			lohi[0], lohi[1] = max(lohi[0], -t), max(lohi[1], t)
		}
	}
	if err := collectives.Allreduce(x.c, lohi, collectives.Max); err != nil {
		return err
	}
	total, err := collectives.AllreduceScalar(x.c, have, collectives.Sum)
	if err != nil {
		return err
	}
	tm := &partition.TimeMeta{Kind: graph.TimeKindNode, NodeTime: x.hasNodeTime}
	if x.edgeTime {
		tm.Kind = graph.TimeKindEdge
	}
	if total > 0 {
		tm.Min, tm.Max = -lohi[0], lohi[1]
	}
	m.Time = tm
	return nil
}

// haloFeat returns own (this part's features, rows in new-id order)
// followed by the rows of its halo: the sources uniq (original ids
// ascending, new ids ids) outside this part, in new-id order, fetched from
// the parts that own them (row new id - offset there) in rounds of at
// most Options.RoundIDs ids. haloRow[i] is the halo row of uniq[i] (-1:
// owned). Every rank must call it (it exchanges with all).
func (x *run) haloFeat(own *graph.Features, uniq, ids []int64) (*graph.Features, []int32, error) {
	me := x.rank
	lo, hi := x.offsets[me], x.offsets[me+1]
	var halo []int64 // new ids ascending
	for _, g := range ids {
		if g < lo || g >= hi {
			halo = append(halo, g)
		}
	}
	slices.Sort(halo)
	haloRow := make([]int32, len(uniq))
	for i, g := range ids {
		haloRow[i] = -1
		if g < lo || g >= hi {
			j, _ := slices.BinarySearch(halo, g)
			haloRow[i] = int32(j)
		}
	}
	d := int64(own.Dim)
	per := int64(x.opt.RoundIDs)
	if per <= 0 {
		per = max(1, (16<<20)/max(d, 1)) // 64 MB of rows a round
	}
	rounds, err := collectives.AllreduceScalar(x.c, (int64(len(halo))+per-1)/per, collectives.Max)
	if err != nil {
		return nil, nil, err
	}
	data := slices.Grow(own.Data, len(halo)*int(d))
	for k := range rounds {
		a, b := min(k*per, int64(len(halo))), min((k+1)*per, int64(len(halo)))
		// halo is ascending and parts are id ranges: grouping by part
		// keeps the order, so the replies concatenate in halo order.
		req := make([][]int64, x.P)
		for _, g := range halo[a:b] {
			p := sort.Search(x.P, func(p int) bool { return x.offsets[p+1] > g })
			req[p] = append(req[p], g)
		}
		got, err := collectives.AlltoallvSegments(x.c, req)
		if err != nil {
			return nil, nil, err
		}
		rep := make([][]float32, x.P)
		for q, gs := range got {
			rows := make([]float32, 0, int64(len(gs))*d)
			for _, g := range gs {
				i := g - lo
				rows = append(rows, own.Data[i*d:(i+1)*d]...)
			}
			rep[q] = rows
		}
		back, err := collectives.AlltoallvSegments(x.c, rep)
		if err != nil {
			return nil, nil, err
		}
		for _, rows := range back {
			data = append(data, rows...)
		}
	}
	return &graph.Features{Dim: own.Dim, Data: data}, haloRow, nil
}

// bcastBytes broadcasts rank 0's b.
func bcastBytes(c *collectives.Comm, b []byte) ([]byte, error) {
	n := []int64{int64(len(b))}
	if err := collectives.Bcast(c, n, 0); err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		b = make([]byte, n[0])
	}
	if n[0] == 0 {
		return b, nil
	}
	if err := collectives.Bcast(c, b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// distinct returns the distinct ids of xs (in [0,n)) ascending, through a
// bitmap of n bits rather than a sorted copy of xs.
func distinct(xs []int64, n int64) []int64 {
	set := make([]uint64, (n+63)/64)
	for _, u := range xs {
		set[u>>6] |= 1 << (u & 63)
	}
	cnt := 0
	for _, w := range set {
		cnt += bits.OnesCount64(w)
	}
	out := make([]int64, 0, cnt)
	for i, w := range set {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, int64(i)*64+int64(b))
			w &= w - 1
		}
	}
	return out
}
