package dsample

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
)

// synthTime is the time given to the k-th in-edge of original row row (node
// o's relation r is row o*R+r) by withSynthTimes: non-decreasing along the
// row with many ties (broken by the ascending original ids of an untimed
// row), so rows are in (time, id) order and prefixes end inside runs of
// equal times.
func synthTime(row int64, k int) int64 { return (row*13)%7 + int64(k)/3 }

// withSynthTimes gives every part's edges synthTime and returns the timed
// reference graph of in (rows over original ids) with the same times.
func withSynthTimes(parts []*partition.Part, in *graph.CSR, R int64) []int64 {
	for _, p := range parts {
		p.Times = make([]int64, len(p.Indices))
		for i, o := range p.Orig {
			for r := range R {
				lr := int64(i)*R + r
				for k := p.Indptr[lr]; k < p.Indptr[lr+1]; k++ {
					p.Times[k] = synthTime(o*R+r, int(k-p.Indptr[lr]))
				}
			}
		}
	}
	ts := make([]int64, in.NumEdges())
	for row := range in.NumRows() {
		for k := in.Indptr[row]; k < in.Indptr[row+1]; k++ {
			ts[k] = synthTime(row, int(k-in.Indptr[row]))
		}
	}
	return ts
}

// temporalSeeds returns the wanted seeds this rank owns, each at a time
// from -1 to 7, plus the first three again at a later time (so a node is
// a seed at two times).
func temporalSeeds(newID func(int64) int64, lo, hi int64, wanted []int64) (g, o, ts []int64) {
	ts = []int64{} // not nil: a rank without seeds still samples temporally
	add := func(v, t int64) {
		if n := newID(v); n >= lo && n < hi {
			g, o, ts = append(g, n), append(o, v), append(ts, t)
		}
	}
	for _, v := range wanted {
		add(v, (v*5)%9-1)
	}
	for _, v := range wanted[:3] {
		add(v, (v*5)%9+3)
	}
	return g, o, ts
}

func temporalCases() []sample.Temporal {
	return []sample.Temporal{
		{Strategy: sample.TemporalUniform},
		{Strategy: sample.TemporalUniform, Strict: true},
		{Strategy: sample.TemporalLast},
		{Strategy: sample.TemporalLast, Strict: true},
	}
}

// sameTimes checks the temporal fields the block comparison leaves out.
func sameTimes(t *testing.T, rank int, got, want []sample.Block) {
	t.Helper()
	for l := range got {
		assert.Equal(t, want[l].Time, got[l].Time, "rank %d layer %d: node times", rank, l)
		assert.Equal(t, want[l].EdgeTime, got[l].EdgeTime, "rank %d layer %d: edge times", rank, l)
	}
}

// noLeak checks that every sampled edge is admitted at its destination's
// time, and that sources inherit that time.
func noLeak(t *testing.T, tp sample.Temporal, bs []sample.Block) {
	t.Helper()
	for l, b := range bs {
		for i := range b.NumDst {
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				if !tp.Admits(b.EdgeTime[e], b.Time[i]) {
					t.Errorf("layer %d: edge %d -> %d of time %d at seed time %d (%s)", l, b.Orig[b.Indices[e]], b.Orig[i], b.EdgeTime[e], b.Time[i], tp)
				}
				if b.Time[b.Indices[e]] != b.Time[i] {
					t.Errorf("layer %d: source time %d differs from its destination's %d", l, b.Time[b.Indices[e]], b.Time[i])
				}
			}
		}
	}
}

// TestTemporalDistributedEqualsReference: on every transport and strategy,
// homogeneous and typed, the distributed temporal sampler draws the
// reference's blocks (node and edge times included) and nothing newer than
// a seed's time.
func TestTemporalDistributedEqualsReference(t *testing.T) {
	homo := newFixture(t, false, false)
	het := newHeteroFixture(t)
	type graphCase struct {
		name    string
		f       *fixture
		in      *graph.CSR
		sch     *graph.Schema
		R       int64
		wanted  []int64
		fanouts []sample.RelFanouts
	}
	hw := heteroWanted(het.d)[0]
	cases := []graphCase{
		{"homogeneous", homo, homo.d.In, nil, 1, wantedSeeds(),
			[]sample.RelFanouts{{{4}, {3}}, {{-1}, {2}}, {{2}, {40}, {3}}}},
		{"hetero", het.fixture, het.d.In, het.d.Schema, 5, hw,
			[]sample.RelFanouts{sample.UniformRelFanouts([]int{3, 2}, 5), {{2, 0, -1, 3, 4}, {-1, 2, 1, 0, 2}}}},
	}
	for _, gc := range cases {
		ts := withSynthTimes(gc.f.parts, gc.in, gc.R)
		require.NoError(t, graph.CheckTimedRows(gc.in, ts, nil))
		ref := &sample.HeteroReference{G: sample.TimedCSR{In: gc.in, Time: ts, Sch: gc.sch}}
		newID := func(o int64) int64 {
			for _, p := range gc.f.parts {
				if i := slices.Index(p.Orig, o); i >= 0 {
					return p.Lo + int64(i)
				}
			}
			return -1
		}
		for _, tr := range transports() {
			g, err := openGraphNamed(gc.f.c, gc.f.part, tr)
			require.NoError(t, err)
			require.True(t, g.Timed())
			s := NewSampler(g)
			for _, tp := range temporalCases() {
				require.NoError(t, s.SetTemporal(tp))
				ref.Temporal = tp
				for fi, fan := range gc.fanouts {
					for _, replace := range []bool{false, true} {
						t.Run(fmt.Sprintf("%s/%s/%s/%d/replace=%t", gc.name, tr, tp, fi, replace), func(t *testing.T) {
							sg, so, st := temporalSeeds(newID, gc.f.part.Lo, gc.f.part.Hi, gc.wanted)
							base := sample.Key{Seed: 5, Epoch: 1, Batch: 3}
							got, err := s.Sample(Request{Seeds: sg, SeedsOrig: so, Times: st, Rel: fan, Key: base, Replace: replace})
							require.NoError(t, err)
							want, err := ref.SampleRelAt(so, so, st, fan, base, replace)
							require.NoError(t, err)
							sameBlocks(t, gc.f.c.Rank(), gc.f.origOf, got, want)
							sameTimes(t, gc.f.c.Rank(), got, want)
							noLeak(t, tp, got)
							require.NoError(t, sample.ValidateBlocks(got))
						})
					}
				}
			}
			require.NoError(t, g.Close())
		}
	}
}

// TestSampleRequestForms: the forms a Request may take resolve as
// documented: with seed times, one fanout list draws what the same list
// for every relation draws, on a homogeneous and a typed graph; seed times
// while temporal sampling is off are refused (on every rank alike, before
// any transport call).
func TestSampleRequestForms(t *testing.T) {
	homo := newFixture(t, false, false)
	het := newHeteroFixture(t)
	for _, gc := range []struct {
		name string
		f    *fixture
		in   *graph.CSR
		R    int64
	}{{"homogeneous", homo, homo.d.In, 1}, {"hetero", het.fixture, het.d.In, 5}} {
		withSynthTimes(gc.f.parts, gc.in, gc.R)
		for _, tr := range transports() {
			t.Run(gc.name+"/"+tr, func(t *testing.T) {
				g, err := openGraphNamed(gc.f.c, gc.f.part, tr)
				require.NoError(t, err)
				defer g.Close()
				s := NewSampler(g)
				seeds, orig := ownedSeeds(gc.f.part, []int64{3, 12, 17, 42, 100})
				times := make([]int64, len(seeds)) // not nil, also without seeds
				for i := range times {
					times[i] = int64(i % 4)
				}
				base := sample.Key{Seed: 9, Batch: 1}
				_, err = s.Sample(Request{Seeds: seeds, SeedsOrig: orig, Times: times, Fanouts: []int{3, 2}, Key: base})
				require.ErrorContains(t, err, "seed times given but temporal sampling is off")

				require.NoError(t, s.SetTemporal(sample.Temporal{Strategy: sample.TemporalUniform}))
				got, err := s.Sample(Request{Seeds: seeds, SeedsOrig: orig, Times: times, Fanouts: []int{3, 2}, Key: base})
				require.NoError(t, err)
				want, err := s.Sample(Request{Seeds: seeds, SeedsOrig: orig, Times: times, Rel: sample.UniformRelFanouts([]int{3, 2}, int(gc.R)), Key: base})
				require.NoError(t, err)
				assert.Equal(t, want, got)
			})
		}
	}
}
