package graph

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"mpignn/internal/hashkey"
)

// GenTimeRange is the exclusive upper bound of generated times: they are
// uniform in [0, GenTimeRange).
const GenTimeRange = 1_000_000

// Hash domain tags of generated times, so that edge and node times never
// share bits with each other or with the generator's other draws.
const (
	tagGenEdgeTime = 0x6765646765746d // "gedgetm"
	tagGenNodeTime = 0x676e6f6465746d // "gnodetm"
)

// genTime is the generated time keyed by (seed, tag, a, b): a pure
// function, so the times of a graph do not depend on workers or order.
// (It is not hashkey.Hash64, which came later: generated times keep the
// chaining they were first written with, so generated graphs stay the same.)
func genTime(seed, tag, a, b uint64) int64 {
	x := seed ^ tag
	for _, k := range []uint64{a, b} {
		x = hashkey.Step(x ^ hashkey.Step(k+hashkey.Golden))
	}
	return int64(x % GenTimeRange)
}

// GenEdgeTime is the time gen writes for both lines 2k and 2k+1 of
// undirected pair k (raw/edge_time.csv.gz): the chunked generator keys its
// edge times the same, so that both layouts of a seed carry the same times.
func GenEdgeTime(seed uint64, pair int64) int64 {
	return genTime(seed, tagGenEdgeTime, 0, uint64(pair))
}

// GenNodeTime is the time gen writes for node v (raw/node_time.csv.gz).
func GenNodeTime(seed uint64, v int64) int64 {
	return genTime(seed, tagGenNodeTime, 0, uint64(v))
}

// GenHeteroEdgeTime is the time GenerateHetero gives edge u -> v
// (homogenized ids) of relation r (its index in the schema, canonical-name
// order), which WriteHetero writes per relation.
func GenHeteroEdgeTime(seed uint64, r int, u, v int64) int64 {
	return genTime(seed, tagGenEdgeTime, uint64(r)<<40|uint64(u), uint64(v))
}

// writeIntLines writes one integer per line, value(i) for i in [0,m).
func writeIntLines(path string, m int64, workers int, value func(i int64) int64) error {
	const per = 1 << 20
	return writeGzipChunks(path, workers, chunksOf(m, per), func(c int, b []byte) []byte {
		for i := int64(c) * per; i < min(m, int64(c+1)*per); i++ {
			b = strconv.AppendInt(b, value(i), 10)
			b = append(b, '\n')
		}
		return b
	})
}

// writeSyntheticTimes adds raw/edge_time.csv.gz (both lines of an
// undirected pair, written as lines 2k and 2k+1, get pair k's time: one
// interaction) and raw/node_time.csv.gz as s.Opt asks.
func writeSyntheticTimes(raw string, s *Synthetic, workers int) error {
	seed := s.Opt.Seed
	if s.Opt.EdgeTime {
		err := writeIntLines(filepath.Join(raw, "edge_time.csv.gz"), 2*int64(len(s.Pairs)), workers, func(i int64) int64 {
			return GenEdgeTime(seed, i/2)
		})
		if err != nil {
			return err
		}
	}
	if s.Opt.NodeTime {
		return writeIntLines(filepath.Join(raw, "node_time.csv.gz"), s.Opt.Nodes, workers, func(v int64) int64 {
			return GenNodeTime(seed, v)
		})
	}
	return nil
}

// addHeteroGenTimes gives a generated heterogeneous graph its times as opt
// asks: every edge u -r-> v the time keyed by (seed, r, u, v), each
// relation row then sorted by (time, source); every node the time keyed by
// its homogenized id.
func addHeteroGenTimes(d *HeteroDataset, opt HeteroGenOptions) {
	s := d.Schema
	if opt.NodeTime {
		d.NodeTime = make([]int64, s.NumNodes())
		for v := range d.NodeTime {
			d.NodeTime[v] = GenNodeTime(opt.Seed, int64(v))
		}
	}
	if !opt.EdgeTime {
		return
	}
	R := int64(s.NumRels())
	d.InTime = make([]int64, d.In.NumEdges())
	d.TimeKind = TimeKindEdge
	forEachChunk(opt.Workers, R, func(r int64) {
		dt := s.DstType(int(r))
		for v := s.NodeOrig[dt]; v < s.NodeOrig[dt+1]; v++ {
			lo, hi := d.In.Indptr[v*R+r], d.In.Indptr[v*R+r+1]
			row := make([]timedEntry, hi-lo)
			for i, u := range d.In.Indices[lo:hi] {
				row[i] = timedEntry{GenHeteroEdgeTime(opt.Seed, int(r), u, v), u}
			}
			slices.SortFunc(row, func(a, b timedEntry) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.src, b.src)) })
			for i, e := range row {
				d.In.Indices[lo+int64(i)], d.InTime[lo+int64(i)] = e.src, e.t
			}
		}
	})
}

// writeHeteroNodeTimes writes raw/node_time/<type>/node_time.csv.gz for
// every type from d.NodeTime.
func writeHeteroNodeTimes(raw string, d *HeteroDataset, workers int) error {
	s := d.Schema
	for t, ty := range s.NodeTypes {
		nd := filepath.Join(raw, "node_time", ty)
		if err := os.MkdirAll(nd, 0o755); err != nil {
			return err
		}
		off := s.NodeOrig[t]
		if err := writeIntLines(filepath.Join(nd, "node_time.csv.gz"), s.Count(t), workers, func(i int64) int64 { return d.NodeTime[off+i] }); err != nil {
			return fmt.Errorf("write node times of %s: %w", ty, err)
		}
	}
	return nil
}
