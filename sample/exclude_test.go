package sample

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

func TestEdgeSet(t *testing.T) {
	x := NewEdgeSet([]int64{1, 5, 7, 2, 0, math.MinInt64}, []int64{2, 3, 7, 1, -4, math.MaxInt64})
	cases := []struct {
		name string
		u, v int64
		want bool
	}{
		{"given direction", 1, 2, true},
		{"reverse direction", 2, 1, true},
		{"second pair", 5, 3, true},
		{"second pair reversed", 3, 5, true},
		{"self pair", 7, 7, true},
		{"negative id", -4, 0, true},
		{"extreme ids", math.MaxInt64, math.MinInt64, true},
		{"shared endpoint, other pair", 1, 3, false},
		{"both endpoints known, no pair", 2, 5, false},
		{"unknown nodes", 100, 200, false},
		{"one unknown node", 1, 200, false},
		{"self pair of an endpoint", 1, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, x.Has(tc.u, tc.v))
		})
	}
	// (1,2) and (2,1) are one pair.
	assert.Equal(t, 5, x.Len())

	var none *EdgeSet
	assert.False(t, none.Has(1, 2), "nil set")
	assert.Equal(t, 0, none.Len())
	empty := NewEdgeSet(nil, nil)
	assert.False(t, empty.Has(0, 0), "empty set")
	assert.Equal(t, 0, empty.Len())
	assert.Equal(t, 1, NewEdgeSet([]int64{4, 9}, []int64{8}).Len(), "extra entries of the longer slice are ignored")
}

// TestEdgeSetMatchesMap compares a large set, whose table and filter are
// many words long, with a plain map, on its pairs and on random others.
func TestEdgeSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 3000
	src, dst := make([]int64, n), make([]int64, n)
	want := map[[2]int64]bool{}
	for i := range n {
		src[i], dst[i] = rng.Int64N(5000), rng.Int64N(5000)
		want[[2]int64{min(src[i], dst[i]), max(src[i], dst[i])}] = true
	}
	x := NewEdgeSet(src, dst)
	require.Equal(t, len(want), x.Len())
	for i := range n {
		require.True(t, x.Has(src[i], dst[i]) && x.Has(dst[i], src[i]), "pair %d (%d,%d)", i, src[i], dst[i])
	}
	for range 100000 {
		u, v := rng.Int64N(5000), rng.Int64N(5000)
		require.Equal(t, want[[2]int64{min(u, v), max(u, v)}], x.Has(u, v), "(%d,%d)", u, v)
	}
}

func TestExcludeRows(t *testing.T) {
	x := NewEdgeSet([]int64{10, 1, 7}, []int64{1, 20, 3})
	cases := []struct {
		name        string
		set         *EdgeSet
		dst         []int64
		off         []int64
		srcO        []int64
		wantOff     []int64
		wantO       []int64
		wantDropped int64
	}{
		{"nil set keeps everything", nil, []int64{1, 2}, []int64{0, 2, 3}, []int64{10, 20, 10}, []int64{0, 2, 3}, []int64{10, 20, 10}, 0},
		{"no rows", x, nil, []int64{0}, nil, []int64{0}, nil, 0},
		// Destination 1 drops 10 (twice: replacement) and 20; destination
		// 3 drops 7 (pair given as 7,3); destination 20 drops 1.
		{"drops both directions and repeats", x, []int64{1, 3, 20}, []int64{0, 4, 6, 8},
			[]int64{10, 10, 20, 30, 7, 8, 1, 2}, []int64{0, 1, 2, 3}, []int64{30, 8, 2}, 5},
		{"row emptied in the middle", x, []int64{5, 1, 5}, []int64{0, 1, 3, 4},
			[]int64{10, 10, 20, 1}, []int64{0, 1, 1, 2}, []int64{10, 1}, 2},
		{"empty rows", x, []int64{1, 2, 3}, []int64{0, 0, 0, 1}, []int64{7}, []int64{0, 0, 0, 0}, []int64{}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srcG := make([]int64, len(tc.srcO))
			for i, o := range tc.srcO {
				srcG[i] = 1000 + o // global ids differ from original ones
			}
			off := append([]int64(nil), tc.off...)
			g, o, dropped := ExcludeRows(tc.set, tc.dst, off, srcG, append([]int64(nil), tc.srcO...))
			assert.Equal(t, tc.wantOff, off, "offsets")
			assert.Equal(t, len(tc.wantO), len(o))
			for i := range tc.wantO {
				assert.Equal(t, tc.wantO[i], o[i], "original id %d", i)
				assert.Equal(t, 1000+tc.wantO[i], g[i], "global id %d", i)
			}
			assert.Equal(t, tc.wantDropped, dropped)
		})
	}
}

// TestReferenceExclude: with the exclusion set, no sampled edge is in it,
// and every row equals the row sampled without the set minus its excluded
// neighbors (so rows without excluded edges are identical).
func TestReferenceExclude(t *testing.T) {
	// A graph of 60 nodes where node v has in-neighbors v+1..v+12 (mod 60):
	// capped rows for small fanouts, all-neighbor rows for -1.
	const n = 60
	var src, dst []int64
	for v := range int64(n) {
		for k := int64(1); k <= 12; k++ {
			src = append(src, (v+k)%n)
			dst = append(dst, v)
		}
	}
	g := CSRGraph{In: graph.BuildInCSR(n, src, dst, graph.BuildOptions{Dedup: true})}
	require.NoError(t, CheckCanonical(g.In))
	seeds := []int64{4, 17, 33, 5}
	// The seed edges: some into the seeds, some out of them (given as
	// reverse), one between two seeds.
	x := NewEdgeSet([]int64{5, 21, 4, 33, 30}, []int64{4, 17, 10, 40, 33})
	cases := []struct {
		name    string
		fanouts []int
		replace bool
	}{
		{"fanout -1,-1", []int{-1, -1}, false},
		{"fanout 6,4", []int{6, 4}, false},
		{"fanout 6,4 replace", []int{6, 4}, true},
		{"fanout 3,-1,5", []int{3, -1, 5}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := Key{Seed: 9, Epoch: 1, Batch: 3}
			full, err := SampleBlocks(g, seeds, seeds, tc.fanouts, key, tc.replace)
			require.NoError(t, err)
			r := Reference{G: g, Exclude: x}
			got, err := r.Sample(seeds, seeds, tc.fanouts, key, tc.replace)
			require.NoError(t, err)
			require.NoError(t, ValidateBlocks(got))
			dropped := 0
			for l := range got {
				fullRows := rowsByDst(&full[l])
				for v, row := range rowsByDst(&got[l]) {
					for _, u := range row {
						require.False(t, x.Has(u, v), "layer %d: excluded edge %d -> %d sampled", l, u, v)
					}
					want, ok := fullRows[v]
					require.True(t, ok, "layer %d: destination %d not sampled without exclusion", l, v)
					var kept []int64
					for _, u := range want {
						if x.Has(u, v) {
							dropped++
						} else {
							kept = append(kept, u)
						}
					}
					assert.Equal(t, kept, row, "layer %d destination %d", l, v)
				}
			}
			assert.Positive(t, dropped, "the set excluded nothing: the test proves nothing")
		})
	}
}

// rowsByDst maps each destination (original id) of b to its sources
// (original ids) in block order.
func rowsByDst(b *Block) map[int64][]int64 {
	rows := map[int64][]int64{}
	for i := range b.NumDst {
		row := []int64{}
		for _, j := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
			row = append(row, b.Orig[j])
		}
		rows[b.Orig[i]] = row
	}
	return rows
}

// BenchmarkExcludeRows times the filter alone on a layer of 16384
// destinations with 15 sampled neighbors each among 200k nodes, without a
// set and with a set of 1024 edges into the first 1024 destinations (the
// seeds, which every layer of a link-prediction step holds).
//
//	go test -run '^$' -bench ExcludeRows ./sample/
func BenchmarkExcludeRows(b *testing.B) {
	const dsts, fan, nodes = 16384, 15, 200000
	rng := rand.New(rand.NewPCG(3, 4))
	dstO := make([]int64, dsts)
	off := make([]int64, dsts+1)
	srcO := make([]int64, dsts*fan)
	for i := range dsts {
		dstO[i] = rng.Int64N(nodes)
		off[i+1] = int64((i + 1) * fan)
		for j := range fan {
			srcO[i*fan+j] = rng.Int64N(nodes)
		}
	}
	var xs, xd []int64
	for i := range 1024 {
		xs = append(xs, srcO[i*fan+rng.IntN(fan)])
		xd = append(xd, dstO[i])
	}
	for _, tc := range []struct {
		name string
		x    *EdgeSet
	}{{"none", nil}, {"edges=1024", NewEdgeSet(xs, xd)}} {
		b.Run(tc.name, func(b *testing.B) {
			o, g, w := make([]int64, len(srcO)), make([]int64, len(srcO)), make([]int64, len(off))
			for b.Loop() {
				copy(o, srcO)
				copy(g, srcO)
				copy(w, off)
				ExcludeRows(tc.x, dstO, w, g, o)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(srcO)), "ns/edge")
		})
	}
}
