package sample

import (
	"fmt"
	"slices"

	"mpignn/graph"
	"mpignn/internal/hashkey"
)

// Temporal sampling.
//
// On a timed graph every stored in-edge has a time, and each node's in-edges
// are ordered by (time, original source id). A seed carries a time T (its
// node time, a flag's value, or the time of the edge a link seed stands
// for), and only edges with time <= T (or < T, Strict) may enter its
// neighbourhood. Because a row is sorted by time, the eligible edges are a
// prefix of the row whose length one binary search finds; the choice is
// then the plain one over that prefix (Uniform) or its last f entries
// (Last, the most recent ones).
//
// The seed's time is carried through the layers: a neighbour reached from a
// seed of time T is expanded at time T in the next layer, whatever the time
// of the edge that reached it. A block node is therefore a pair (node, T),
// and the block builder deduplicates by that pair: a node reached from
// seeds of two different times appears twice, once per time. PyG gets the
// same effect by requiring disjoint=True (one subgraph per seed), which also
// keeps apart seeds that share a time; merging those is safe here because
// a node's neighbourhood at time T depends on nothing but (node, T) and the
// key, and it saves work when many seeds share a time (node years, link
// events of the same second).

// TemporalStrategy says how neighbours are chosen among the eligible ones.
type TemporalStrategy uint8

// Strategies. TemporalNone is plain (time-blind) sampling.
const (
	TemporalNone TemporalStrategy = iota
	TemporalUniform
	TemporalLast
)

// String returns the flag spelling of the strategy.
func (s TemporalStrategy) String() string {
	switch s {
	case TemporalNone:
		return "none"
	case TemporalUniform:
		return "uniform"
	case TemporalLast:
		return "last"
	}
	return fmt.Sprintf("strategy(%d)", uint8(s))
}

// ParseTemporalStrategy reads a --temporal value: "none" (or ""),
// "uniform" or "last".
func ParseTemporalStrategy(s string) (TemporalStrategy, error) {
	switch s {
	case "", "none":
		return TemporalNone, nil
	case "uniform":
		return TemporalUniform, nil
	case "last":
		return TemporalLast, nil
	}
	return TemporalNone, fmt.Errorf("temporal strategy %q: want none, uniform or last", s)
}

// Temporal configures temporal sampling. The zero value is off.
type Temporal struct {
	Strategy TemporalStrategy
	// Strict admits only edges strictly older than the seed's time, which
	// keeps simultaneous events (and a link seed's own edge) out.
	Strict bool
}

// On reports whether sampling is temporal.
func (tp Temporal) On() bool { return tp.Strategy != TemporalNone }

// String is the strategy, with "+strict" when Strict.
func (tp Temporal) String() string {
	if tp.Strict && tp.On() {
		return tp.Strategy.String() + "+strict"
	}
	return tp.Strategy.String()
}

// Code packs the configuration into a small integer for wire headers (0:
// off) and DecodeTemporal reads it back.
func (tp Temporal) Code() int64 {
	if !tp.On() {
		return 0
	}
	c := int64(tp.Strategy)
	if tp.Strict {
		c |= 4
	}
	return c
}

// DecodeTemporal is the inverse of Temporal.Code.
func DecodeTemporal(c int64) (Temporal, error) {
	if c == 0 {
		return Temporal{}, nil
	}
	s := TemporalStrategy(c & 3)
	if c&^7 != 0 || (s != TemporalUniform && s != TemporalLast) {
		return Temporal{}, fmt.Errorf("temporal code %d is not a strategy", c)
	}
	return Temporal{Strategy: s, Strict: c&4 != 0}, nil
}

// Eligible returns how many leading entries of a row whose edge times are ts
// (ascending) are eligible at seed time t: those with time <= t, or < t when
// Strict.
func (tp Temporal) Eligible(ts []int64, t int64) int64 {
	if tp.Strict {
		i, _ := slices.BinarySearch(ts, t) // first entry >= t
		return int64(i)
	}
	if t == 1<<63-1 {
		return int64(len(ts))
	}
	i, _ := slices.BinarySearch(ts, t+1) // first entry > t
	return int64(i)
}

// Admits reports whether an edge of time et is eligible at seed time t.
func (tp Temporal) Admits(et, t int64) bool {
	if tp.Strict {
		return et < t
	}
	return et <= t
}

// Choose appends to dst the positions, in [0,eligible), picked for the row
// described by k at seed time t, and returns the extended slice (ascending,
// like ChoosePositions). Uniform draws as ChoosePositions does over the
// eligible prefix, from the stream of (k, t), so that a node expanded at two
// times draws independently; Last takes the last f eligible positions (all
// when f < 0 or f >= eligible; with replacement too, since repeating the
// most recent edges adds nothing).
func (tp Temporal) Choose(k Key, t, eligible int64, fanout int, replace bool, dst []int64) []int64 {
	if eligible <= 0 || fanout == 0 {
		return dst
	}
	f := int64(fanout)
	if tp.Strategy == TemporalLast {
		if fanout < 0 || f >= eligible {
			return appendRange(dst, eligible)
		}
		for p := eligible - f; p < eligible; p++ {
			dst = append(dst, p)
		}
		return dst
	}
	if fanout < 0 || (!replace && f >= eligible) {
		return appendRange(dst, eligible)
	}
	r := k.StreamAt(t)
	if replace {
		return drawWithReplacement(&r, eligible, f, dst)
	}
	return chooseSubset(&r, eligible, f, dst)
}

// NumChoices returns how many positions Choose appends for a row with
// eligible leading edges (see sample.NumChoices): Last never repeats, so
// replace changes nothing for it.
func (tp Temporal) NumChoices(eligible int64, fanout int, replace bool) int64 {
	if tp.Strategy == TemporalLast {
		replace = false
	}
	return NumChoices(eligible, fanout, replace)
}

// ChooseInto is ChooseInto for Choose: the row's positions go straight
// into dst, of length tp.NumChoices(eligible, fanout, replace), through
// spare (returned for reuse) when Choose needs more room than that.
func (tp Temporal) ChooseInto(k Key, t, eligible int64, fanout int, replace bool, dst, spare []int64) []int64 {
	if tp.Strategy != TemporalLast && ChooseRoom(eligible, fanout, replace) > int64(len(dst)) {
		spare = tp.Choose(k, t, eligible, fanout, replace, spare[:0])
		copy(dst, spare)
		return spare
	}
	tp.Choose(k, t, eligible, fanout, replace, dst[:0:len(dst)])
	return spare
}

// StreamAt is the random stream of the key at seed time t: Stream's hash
// with t as a seventh word, so temporal and plain choices never share bits.
func (k Key) StreamAt(t int64) Stream {
	return hashkey.NewStream(hashkey.Word(k.hashInto(hashkey.Start(7)), uint64(t)))
}

// TimedRelGraph is a RelGraph whose rows carry the time of every edge,
// each row sorted by (time, original source id).
type TimedRelGraph interface {
	RelGraph
	// InTimesRel returns the edge times of InNeighborsRel(v, r), aligned.
	InTimesRel(v int64, r int) []int64
}

// TimedCSR is an unpartitioned timed in-adjacency (global id == original
// id) over rows v*R+r, with R = Schema.NumRels() (1 when Schema is nil, a
// homogeneous graph): graph.Dataset.In with Dataset.InTime, or
// graph.HeteroDataset's.
type TimedCSR struct {
	In   *graph.CSR
	Time []int64 // aligned with In.Indices
	Sch  *graph.Schema
}

func (g TimedCSR) rels() int64 {
	if g.Sch == nil {
		return 1
	}
	return int64(g.Sch.NumRels())
}

// NumNodes implements RelGraph.
func (g TimedCSR) NumNodes() int64 { return g.In.NumRows() / g.rels() }

// Schema implements RelGraph.
func (g TimedCSR) Schema() *graph.Schema { return g.Sch }

// InNeighborsRel implements RelGraph; both results are the same slice.
func (g TimedCSR) InNeighborsRel(v int64, r int) (global, orig []int64) {
	nb := g.In.Neighbors(v*g.rels() + int64(r))
	return nb, nb
}

// InTimesRel implements TimedRelGraph.
func (g TimedCSR) InTimesRel(v int64, r int) []int64 {
	row := v*g.rels() + int64(r)
	return g.Time[g.In.Indptr[row]:g.In.Indptr[row+1]]
}
