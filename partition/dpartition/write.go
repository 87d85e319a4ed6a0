package dpartition

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"slices"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/half"
	"mpignn/internal/testhold"
	"mpignn/partition"
)

// partReport is what a rank tells rank 0 about the parts it wrote: each
// part's PartInfo (by part), their files and relation counts together.
type partReport struct {
	Infos    map[int]partition.PartInfo    `json:"infos"`
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
		NumParts:      x.K,
		Offsets:       x.offsets,
		NumNodes:      x.s.NumNodes(),
		NumClasses:    numClasses,
		TargetDim:     x.tdim,
		Method:        x.opt.Method,
		Seed:          x.opt.Seed,
		HaloFeats:     x.opt.HaloFeats,
		Split:         split,
		Undirected:    x.opt.Undirected,
		SparseFeat:    sparse,
		Splits:        map[string]partition.SplitCounts{},
		Parts:         make([]partition.PartInfo, x.K),
		Files:         map[string]partition.FileInfo{},
	}
	if x.homo {
		m.FeatDim = x.dims[0]
		if k := x.featKind(); k.Half() && m.FeatDim > 0 {
			m.FeatDType = k.String() // as partition.Write records it
		}
		if x.opt.EdgeFeat {
			m.EdgeFeatDim = x.efDim
		}
		if x.dims[0] > 0 {
			m.NodeFeatFrom = x.opt.NodeFeat // as partition.Write records it
		}
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
func (x *run) globals(nds []*nodeData) (numClasses int, sparse bool, err error) {
	maxLabel := int64(-1)
	var nz, total int64
	for _, nd := range nds {
		for _, l := range nd.labels {
			maxLabel = max(maxLabel, int64(l))
		}
		if f := nd.feat[0]; x.homo && f != nil {
			for _, v := range f.Data {
				if v != 0 {
					nz++
				}
			}
			total += int64(len(f.Data))
		}
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
	if k := x.featKind(); k.Half() {
		if !x.homo {
			return 0, false, fmt.Errorf("feature type %s: heterogeneous partitions store their typed features as float32 (use fp32)", k)
		}
		return numClasses, false, nil // dense: Validate refused sparse on
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

// write writes this rank's parts into rank 0's temporary directory; rank
// 0 gathers every rank's report, writes META and renames the directory.
// The collective steps (lookups, halo features, times) take all of a
// rank's parts at once, since ranks may own different numbers of parts.
func (x *run) write(nds []*nodeData, rows []partRows) (*partition.Meta, error) {
	numClasses, sparse, err := x.globals(nds)
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

	// New ids of every part's sources, from their block owners, in one
	// lookup.
	M := len(x.mine)
	uniqs := make([][]int64, M)
	for j := range M {
		uniqs[j] = distinct(rows[j].srcs, x.s.NumNodes())
	}
	all, err := x.lookupRounds(slices.Concat(uniqs...), func(t int, i int64) int64 { return x.newID[t][i] })
	if err != nil {
		return nil, err
	}
	idss := make([][]int64, M)
	for j := range M {
		idss[j], all = all[:len(uniqs[j]):len(uniqs[j])], all[len(uniqs[j]):]
	}
	pfs := make([]*partition.PartFiles, M)
	for j, q := range x.mine {
		pfs[j] = x.partFiles(q, nds[j], rows[j], uniqs[j], idss[j])
	}
	if x.lk != nil {
		m.Link, pfs[0].Link = &x.lk.meta, x.lk.part
	}
	if x.opt.Time {
		if err := x.timeFiles(m, pfs, nds, rows); err != nil {
			return nil, err
		}
	}
	if x.opt.HaloFeats && x.homo && x.dims[0] > 0 {
		if err := x.haloFeat(pfs, nds, uniqs, idss); err != nil {
			return nil, err
		}
	}

	// Rank 0 makes the temporary directory; every rank learns its name.
	me := x.rank
	var tmpName []byte
	if me == 0 {
		tmp, err := partition.MakeTemp(x.opt.Out)
		if err != nil {
			return nil, err
		}
		tmpName = []byte(tmp)
	}
	if tmpName, err = collectives.BcastBytes(x.c, 0, tmpName, nil); err != nil {
		return nil, err
	}
	tmp := string(tmpName)
	if me == 0 {
		testhold.At("temp:" + filepath.Base(filepath.Clean(x.opt.Out)))
	}
	rep := partReport{Infos: map[int]partition.PartInfo{}}
	for j, q := range x.mine {
		info, err := pfs[j].Write(tmp, m, x.opt.Workers, x.splits)
		if err != nil {
			return nil, fmt.Errorf("rank %d, part %d: %w", me, q, err)
		}
		rep.Infos[q] = info
	}
	rep.Files = m.Files
	if m.Hetero != nil {
		rep.RelEdges, rep.RelCut = m.Hetero.RelEdges, m.Hetero.RelCut
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	gathered, counts, err := collectives.Allgatherv(x.c, b)
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
	for r, n := range counts {
		var rr partReport
		if err := json.Unmarshal(gathered[pos:pos+n], &rr); err != nil {
			return nil, fmt.Errorf("report of rank %d: %w", r, err)
		}
		pos += n
		for k, v := range rr.Files {
			m.Files[k] = v
		}
		if m.Hetero != nil {
			for i := range rr.RelEdges {
				m.Hetero.RelEdges[i] += rr.RelEdges[i]
				m.Hetero.RelCut[i] += rr.RelCut[i]
			}
		}
		for q, info := range rr.Infos {
			m.Parts[q] = info
		}
	}
	// Sums in part order, as the single-process writer adds them.
	for _, info := range m.Parts {
		m.NumEdges += info.Edges
		m.CutEdges += info.CutEdges
		for name, c := range info.Splits {
			s := m.Splits[name]
			s.Train, s.Valid, s.Test = s.Train+c.Train, s.Valid+c.Valid, s.Test+c.Test
			m.Splits[name] = s
		}
	}
	if err := partition.FinishMeta(tmp, x.opt.Out, m, x.opt.Overwrite); err != nil {
		return nil, err
	}
	return m, x.c.Barrier()
}

// partFiles is part q as the writer stores it, from its node data nd, its
// rows, and the new ids ids of its distinct sources uniq (ascending).
func (x *run) partFiles(q int, nd *nodeData, rows partRows, uniq, ids []int64) *partition.PartFiles {
	seen := make([]bool, len(uniq))
	at := func(u int64) int {
		i, _ := slices.BinarySearch(uniq, u)
		return i
	}
	lo, hi := x.offsets[q], x.offsets[q+1]
	pf := &partition.PartFiles{
		P: q, Lo: lo, Hi: hi, Rels: x.R, Orig: nd.orig, Indptr: rows.ptr, IndOrig: rows.srcs, EdgeFeat: rows.ef,
		NewID: func(u int64) int64 { return ids[at(u)] },
		FirstHalo: func(u int64) bool {
			i := at(u)
			if seen[i] {
				return false
			}
			seen[i] = true
			return true
		},
		Feat:      nd.feat[0],
		FeatRow:   func(i int, _ int64) int64 { return int64(i) },
		Targets:   nd.targets,
		TargetRow: func(i int, _ int64) int64 { return int64(i) },
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
	return pf
}

// timeFiles sets the parts' times (times.bin, and node_time.bin from the
// owned nodes' block owners when there are node times) and META's time
// entry, whose range every rank agrees on: the single-process one, over
// all stored edge times and all node times.
func (x *run) timeFiles(m *partition.Meta, pfs []*partition.PartFiles, nds []*nodeData, rows []partRows) error {
	var nts [][]int64
	if x.hasNodeTime {
		origs := make([][]int64, len(nds))
		for j, nd := range nds {
			origs[j] = nd.orig
		}
		all, err := x.lookupRounds(slices.Concat(origs...), x.nodeTimeOf)
		if err != nil {
			return err
		}
		for _, nd := range nds {
			nts, all = append(nts, all[:len(nd.orig):len(nd.orig)]), all[len(nd.orig):]
		}
	}
	// Count, -min and max of this rank's times, then of all.
	have := int64(0)
	lohi := []int64{math.MinInt64, math.MinInt64}
	for j, pf := range pfs {
		pf.Times = rows[j].times
		xs := [][]int64{rows[j].times}
		if nts != nil {
			nd, nt := nds[j], nts[j]
			pf.NodeTime = func(o int64) int64 {
				i, _ := slices.BinarySearch(nd.orig, o)
				return nt[i]
			}
			xs = append(xs, nt)
		}
		for _, ts := range xs {
			have += int64(len(ts))
			for _, t := range ts {
				lohi[0], lohi[1] = max(lohi[0], -t), max(lohi[1], t)
			}
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

// haloFeat appends to each part's features (rows in new-id order) the rows
// of its halo: the sources uniqs[j] (original ids ascending, new ids
// idss[j]) outside the part, in new-id order, fetched from the ranks that
// own their parts in rounds of at most Options.RoundIDs ids, and points the
// part's FeatRow at them. Every rank must call it (it exchanges with all).
func (x *run) haloFeat(pfs []*partition.PartFiles, nds []*nodeData, uniqs, idss [][]int64) error {
	d := int64(x.dims[0])
	type want struct {
		j   int   // my part
		row int64 // its row in that part's features
		g   int64 // new id
	}
	var wants []want
	datas := make([][]float32, len(pfs))
	for j, q := range x.mine {
		lo, hi := x.offsets[q], x.offsets[q+1]
		var halo []int64 // new ids ascending
		for _, g := range idss[j] {
			if g < lo || g >= hi {
				halo = append(halo, g)
			}
		}
		slices.Sort(halo)
		haloRow := make([]int32, len(uniqs[j]))
		for i, g := range idss[j] {
			haloRow[i] = -1
			if g < lo || g >= hi {
				k, _ := slices.BinarySearch(halo, g)
				haloRow[i] = int32(k)
			}
		}
		owned := int64(len(nds[j].orig))
		for k, g := range halo {
			wants = append(wants, want{j, owned + int64(k), g})
		}
		datas[j] = slices.Grow(nds[j].feat[0].Data, len(halo)*int(d))[:(owned+int64(len(halo)))*d]
		uniq := uniqs[j]
		pfs[j].FeatRow = func(i int, o int64) int64 {
			if i >= 0 {
				return int64(i)
			}
			k, _ := slices.BinarySearch(uniq, o)
			return owned + int64(haloRow[k])
		}
	}
	per := int64(x.opt.RoundIDs)
	if per <= 0 {
		per = max(1, (16<<20)/max(d, 1)) // 64 MB of rows a round
	}
	rounds, err := collectives.AllreduceScalar(x.c, (int64(len(wants))+per-1)/per, collectives.Max)
	if err != nil {
		return err
	}
	for k := range rounds {
		ws := wants[min(k*per, int64(len(wants))):min((k+1)*per, int64(len(wants)))]
		req := make([][]int64, x.P)
		for _, w := range ws {
			r := x.partOf(w.g) % x.P
			req[r] = append(req[r], w.g)
		}
		got, err := collectives.AlltoallvSegments(x.c, req)
		if err != nil {
			return err
		}
		rep := make([][]float32, x.P)
		for r, gs := range got {
			rows := make([]float32, 0, int64(len(gs))*d)
			for _, g := range gs {
				q := x.partOf(g)
				i := g - x.offsets[q]
				rows = append(rows, nds[x.slot(q)].feat[0].Data[i*d:(i+1)*d]...)
			}
			rep[r] = rows
		}
		back, err := collectives.AlltoallvSegments(x.c, rep)
		if err != nil {
			return err
		}
		// Replies come per rank in request order.
		pos := make([]int64, x.P)
		for _, w := range ws {
			r := x.partOf(w.g) % x.P
			copy(datas[w.j][w.row*d:(w.row+1)*d], back[r][pos[r]*d:(pos[r]+1)*d])
			pos[r]++
		}
	}
	for j := range pfs {
		pfs[j].Feat = &graph.Features{Dim: int(d), Data: datas[j]}
	}
	return nil
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

// featKind is Options.FeatDType (Validate checked it).
func (x *run) featKind() half.Kind {
	k, _ := half.Parse(x.opt.FeatDType)
	return k
}

// checkFeatures refuses, naming the chunk file, its row and the column,
// the first value of node chunk k (type ct, first id first) that the
// feature type cannot hold; the single-process writer's check
// (partition.CheckFeatures) on the rows this rank reads.
func (x *run) checkFeatures(f *graph.Features, ct, k int, first int64) error {
	kind := x.featKind()
	if !kind.Half() || !x.homo {
		return nil
	}
	file := x.ch.Meta.NodeData[x.ch.Meta.NodeType[ct]][graph.ChunkFeat].Data[k]
	return partition.CheckFeatures(kind, f, func(v int64) string {
		return fmt.Sprintf("%s row %d (node %d)", file, v, first+v)
	})
}
