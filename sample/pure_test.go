package sample

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

func TestKeyStreamMatchesHash(t *testing.T) {
	for _, k := range []Key{{}, {Seed: 1}, {Seed: 7, Epoch: 3, Batch: 9, Layer: 2, Node: 123456789}, {Seed: math.MaxUint64, Node: -1}} {
		a := k.Stream()
		b := NewStream(Hash64(tagSample, k.Seed, uint64(k.Epoch), uint64(k.Batch), uint64(k.Layer), uint64(k.Node)))
		for i := range 4 {
			if x, y := a.Uint64(), b.Uint64(); x != y {
				t.Fatalf("key %+v draw %d: Key.Stream %x, NewStream(Hash64) %x", k, i, x, y)
			}
		}
	}
	// Changing any one field changes the stream.
	base := Key{Seed: 1, Epoch: 2, Batch: 3, Layer: 4, Node: 5}
	variants := []Key{base, base, base, base, base}
	variants[0].Seed++
	variants[1].Epoch++
	variants[2].Batch++
	variants[3].Layer++
	variants[4].Node++
	s0 := base.Stream()
	first := s0.Uint64()
	for i, v := range variants {
		s := v.Stream()
		if s.Uint64() == first {
			t.Fatalf("variant %d of the key gives the same first draw", i)
		}
	}
}

func TestMaskWordIsStream(t *testing.T) {
	key := MaskKey(3, 4, 1, 99)
	s := NewStream(key)
	for g := range 10 {
		w := s.Uint64()
		require.Equal(t, w, MaskWord(key, g), "word %d", g)
		for lane := range MaskLanes {
			require.Equal(t, uint32(w>>(16*lane))&0xffff, MaskDraw(key, g*MaskLanes+lane), "unit %d", g*MaskLanes+lane)
		}
	}
}

// TestMaskRate checks that the 16-bit draws drop each unit with the
// requested probability (to within 4 standard deviations over 2^20 units,
// drawn from fixed keys, so the test is deterministic) and that the
// threshold is exact at the ends and at multiples of 1/65536.
func TestMaskRate(t *testing.T) {
	for _, tc := range []struct {
		p    float32
		want uint32
	}{
		{0, 0}, {0.5, 32768}, {0.1, 6554}, {0.25, 16384}, {1.0 / 65536, 1}, {0.9, 58983}, {1, 65536},
	} {
		require.Equal(t, tc.want, MaskThreshold(tc.p), "p=%v", tc.p)
	}
	const rows, w = 1 << 12, 256
	for _, p := range []float32{0.1, 0.5, 0.9} {
		thr := MaskThreshold(p)
		dropped := 0
		perLane := [MaskLanes]int{}
		for node := range int64(rows) {
			key := MaskKey(1, 7, 2, node)
			for u := range w {
				if !MaskKeep(key, u, thr) {
					dropped++
					perLane[u%MaskLanes]++
				}
			}
		}
		n := float64(rows * w)
		sd := math.Sqrt(n * float64(p) * float64(1-p))
		require.InDelta(t, n*float64(p), float64(dropped), 4*sd, "p=%v", p)
		for lane, d := range perLane {
			require.InDelta(t, n*float64(p)/MaskLanes, float64(d), 4*sd/2, "p=%v lane %d", p, lane)
		}
	}
}

func TestUint64nRangeAndBalance(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 7, 1000, 1 << 40, math.MaxUint64/3 + 7} {
		s := NewStream(n)
		for range 1000 {
			if x := s.Uint64n(n); x >= n {
				t.Fatalf("Uint64n(%d) = %d", n, x)
			}
		}
	}
	s := NewStream(42)
	if s.Uint64n(0) != 0 {
		t.Fatal("Uint64n(0) != 0")
	}
	// Coarse balance: 6 buckets, 60000 draws, each within 5% of 10000.
	var c [6]int
	for range 60000 {
		c[s.Uint64n(6)]++
	}
	for i, x := range c {
		if x < 9500 || x > 10500 {
			t.Fatalf("bucket %d got %d of 60000 draws", i, x)
		}
	}
	for range 1000 {
		if f := s.Float32(); f < 0 || f >= 1 {
			t.Fatalf("Float32 = %v", f)
		}
		if f := s.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64 = %v", f)
		}
	}
}

func TestChoosePositions(t *testing.T) {
	cases := []struct {
		deg     int64
		fanout  int
		replace bool
		want    int // number of positions
		all     bool
	}{
		{0, 5, false, 0, false},
		{0, 5, true, 0, false},
		{10, 0, false, 0, false},
		{3, 5, false, 3, true},         // fanout > degree: everything
		{5, 5, false, 5, true},         // fanout == degree
		{5, -1, false, 5, true},        // -1: everything
		{5, -1, true, 5, true},         // -1 ignores replacement
		{3, 5, true, 5, false},         // replacement: fanout draws even above degree
		{100, 10, false, 10, false},    // Floyd
		{100, 60, false, 60, false},    // complement of a Floyd draw
		{1000, 100, false, 100, false}, // rejection
		{1000, 600, false, 600, false}, // complement of rejection
		{100, 30, true, 30, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("deg%d_f%d_r%v", tc.deg, tc.fanout, tc.replace), func(t *testing.T) {
			for node := range int64(50) {
				k := Key{Seed: 9, Node: node}
				prefix := []int64{-7}
				got := ChoosePositions(k, tc.deg, tc.fanout, tc.replace, prefix)
				if got[0] != -7 {
					t.Fatal("prefix overwritten")
				}
				pos := got[1:]
				if len(pos) != tc.want {
					t.Fatalf("%d positions, want %d", len(pos), tc.want)
				}
				for i, p := range pos {
					if p < 0 || p >= tc.deg {
						t.Fatalf("position %d outside [0,%d)", p, tc.deg)
					}
					if i > 0 && (pos[i-1] > p || (!tc.replace && pos[i-1] == p)) {
						t.Fatalf("positions not ascending/distinct: %v", pos)
					}
					if tc.all && p != int64(i) {
						t.Fatalf("want all positions in order, got %v", pos)
					}
				}
				again := ChoosePositions(k, tc.deg, tc.fanout, tc.replace, nil)
				if !slices.Equal(again, pos) {
					t.Fatal("not deterministic")
				}
			}
		})
	}
}

// TestChoosePositionsUniform checks that each position is picked with
// probability f/deg (within 10%) over many keys, for every algorithm path.
func TestChoosePositionsUniform(t *testing.T) {
	for _, tc := range []struct {
		deg int64
		f   int
	}{{20, 5}, {20, 15}, {200, 60}, {200, 130}} {
		counts := make([]int, tc.deg)
		const trials = 20000
		var buf []int64
		for n := range int64(trials) {
			buf = ChoosePositions(Key{Seed: 1, Node: n}, tc.deg, tc.f, false, buf[:0])
			for _, p := range buf {
				counts[p]++
			}
		}
		want := float64(trials) * float64(tc.f) / float64(tc.deg)
		for p, c := range counts {
			if math.Abs(float64(c)-want) > 0.1*want {
				t.Fatalf("deg %d fanout %d: position %d picked %d times, want about %.0f", tc.deg, tc.f, p, c, want)
			}
		}
	}
}

func TestBlockBuilder(t *testing.T) {
	var bb BlockBuilder
	if err := bb.Reset([]int64{10, 20}, []int64{110, 120}); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(bb.AddNeighbors(0, []int64{30, 20, 30}, []int64{130, 120, 130}))
	must(bb.AddNeighbors(1, []int64{40, 10}, []int64{140, 110}))
	b := bb.Block()
	want := Block{NumDst: 2, Nodes: []int64{10, 20, 30, 40}, Orig: []int64{110, 120, 130, 140},
		Indptr: []int32{0, 3, 5}, Indices: []int32{2, 1, 2, 3, 0}}
	if b.NumDst != want.NumDst || !slices.Equal(b.Nodes, want.Nodes) || !slices.Equal(b.Orig, want.Orig) ||
		!slices.Equal(b.Indptr, want.Indptr) || !slices.Equal(b.Indices, want.Indices) {
		t.Fatalf("got %+v want %+v", b, want)
	}
	must(b.Validate())
	// Reset from the block's own nodes (aliasing) and skipped rows.
	must(bb.Reset(b.Nodes, b.Orig))
	must(bb.AddNeighbors(3, []int64{50}, []int64{150}))
	b2 := bb.Block()
	if !slices.Equal(b2.Indptr, []int32{0, 0, 0, 0, 1}) || !slices.Equal(b2.Nodes, []int64{10, 20, 30, 40, 50}) {
		t.Fatalf("second block %+v", b2)
	}
	// b2 was built on all of b's nodes, so b2 then b chain; b then b2 not.
	if err := ValidateBlocks([]Block{b2, b}); err != nil {
		t.Fatal(err)
	}
	if err := ValidateBlocks([]Block{b, b2}); err == nil {
		t.Fatal("chaining violation not detected")
	}
	// Errors.
	for name, err := range map[string]error{
		"repeated destination": bb.Reset([]int64{1, 1}, []int64{1, 1}),
		"length mismatch":      bb.Reset([]int64{1}, nil),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	must(bb.Reset([]int64{1, 2}, []int64{1, 2}))
	must(bb.AddNeighbors(1, nil, nil))
	if err := bb.AddNeighbors(0, nil, nil); err == nil {
		t.Error("out-of-order destination accepted")
	}
	// AddRows equals AddNeighbors.
	must(bb.Reset([]int64{10, 20}, []int64{110, 120}))
	must(bb.AddRows([]int64{0, 3, 5}, []int64{30, 20, 30, 40, 10}, []int64{130, 120, 130, 140, 110}))
	b3 := bb.Block()
	if !slices.Equal(b3.Indices, want.Indices) || !slices.Equal(b3.Nodes, want.Nodes) {
		t.Fatalf("AddRows block %+v", b3)
	}
}

// TestBlockBuilderDense checks that dense and bounded mode build the same
// blocks as the hash table, row by row and in bulk, across generations
// (the bounded table's 24-bit tags wrap among them), and reject ids outside
// their range.
func TestBlockBuilderDense(t *testing.T) {
	for _, m := range indexModes {
		t.Run(m.name, func(t *testing.T) {
			var hash, idx BlockBuilder
			m.use(&idx, 100)
			idx.gen = tabGenMask - 3 // the tags wrap in round 2 or 3
			src := []int64{5, 7, 5, 99, 0, 7, 42}
			for round := range 6 {
				dst := []int64{int64(round), 50}
				for _, bb := range []*BlockBuilder{&hash, &idx} {
					require.NoError(t, bb.Reset(dst, dst))
					require.NoError(t, bb.AddNeighbors(1, src, src))
				}
				h, d := hash.Block(), idx.Block()
				require.Equal(t, h, d, "round %d", round)
				// Bulk: the same rows through AddRows.
				require.NoError(t, idx.Reset(dst, dst))
				require.NoError(t, idx.AddRows([]int64{0, 0, int64(len(src))}, src, src))
				require.Equal(t, h, idx.Block(), "round %d, AddRows", round)
			}
			require.EqualError(t, idx.Reset([]int64{100}, []int64{100}), "block builder: destination 0 has id 100 outside [0,100)")
			require.NoError(t, idx.Reset([]int64{1}, []int64{1}))
			require.EqualError(t, idx.AddNeighbors(0, []int64{-1}, []int64{-1}), "block builder: source id -1 outside [0,100)")
		})
	}
}

// TestBlockBuilderBoundedGrows: the bounded table grows with the block
// (from its 16 slots, through rehashes in the middle of a row and of
// AddRows) and not with the id range, and builds the hash table's blocks.
func TestBlockBuilderBoundedGrows(t *testing.T) {
	const n = 1 << 36 // a range no dense index could hold
	var hash, bd BlockBuilder
	bd.UseBoundedIDs(n, 0, 0)
	var src []int64
	for i := range int64(3000) {
		src = append(src, (i*7919)%2000*(n/2000)) // 2000 distinct ids, repeated
	}
	dst := []int64{n - 1, 3}
	for _, bb := range []*BlockBuilder{&hash, &bd} {
		require.NoError(t, bb.Reset(dst, dst))
		require.NoError(t, bb.AddNeighbors(0, src[:1000], src[:1000]))
		require.NoError(t, bb.AddNeighbors(1, src[1000:], src[1000:]))
	}
	want := hash.Block()
	require.Equal(t, want, bd.Block())
	require.NoError(t, bd.Reset(dst, dst))
	require.NoError(t, bd.AddRows([]int64{0, 1000, 3000}, src, src))
	require.Equal(t, want, bd.Block())
	require.Less(t, bd.IndexBytes(), int64(1<<20), "the table is sized by the block")
	// Past 2^40-1 ids the builder falls back to the general hash table.
	bd.UseBoundedIDs(1<<41, 0, 0)
	require.NoError(t, bd.Reset([]int64{1 << 40}, []int64{0}))
}

// TestBlockBuilderManyNodes grows the hash table through several rehashes.
func TestBlockBuilderManyNodes(t *testing.T) {
	var bb BlockBuilder
	if err := bb.Reset([]int64{-1}, []int64{-1}); err != nil {
		t.Fatal(err)
	}
	var src []int64
	for i := range int64(5000) {
		src = append(src, (i*7919)%3000) // repeats after 3000
	}
	if err := bb.AddNeighbors(0, src, src); err != nil {
		t.Fatal(err)
	}
	b := bb.Block()
	if len(b.Nodes) != 3001 || b.NumEdges() != 5000 {
		t.Fatalf("%d nodes %d edges, want 3001 and 5000", len(b.Nodes), b.NumEdges())
	}
	for e, j := range b.Indices {
		if b.Nodes[j] != src[e] {
			t.Fatalf("edge %d maps to node %d, want %d", e, b.Nodes[j], src[e])
		}
	}
}

func TestBlockValidate(t *testing.T) {
	good := Block{NumDst: 1, Nodes: []int64{1, 2}, Orig: []int64{1, 2}, Indptr: []int32{0, 1}, Indices: []int32{1}}
	bad := []Block{
		{NumDst: 1, Nodes: []int64{1, 2}, Orig: []int64{1}, Indptr: []int32{0, 1}, Indices: []int32{1}},
		{NumDst: 3, Nodes: []int64{1, 2}, Orig: []int64{1, 2}, Indptr: []int32{0, 1, 1, 1}, Indices: []int32{1}},
		{NumDst: 1, Nodes: []int64{1, 2}, Orig: []int64{1, 2}, Indptr: []int32{1, 1}, Indices: []int32{1}},
		{NumDst: 1, Nodes: []int64{1, 2}, Orig: []int64{1, 2}, Indptr: []int32{0, 2}, Indices: []int32{1}},
		{NumDst: 1, Nodes: []int64{1, 2}, Orig: []int64{1, 2}, Indptr: []int32{0, 1}, Indices: []int32{2}},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, b := range bad {
		if b.Validate() == nil {
			t.Errorf("bad block %d accepted", i)
		}
	}
}

func TestPermutationIsBijection(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 3, 17, 1000, 4097} {
		p := NewPermutation(5, 1, n)
		seen := make([]bool, n)
		for i := range n {
			j := p.At(i)
			if j < 0 || j >= n || seen[j] {
				t.Fatalf("n=%d: At(%d)=%d repeats or is out of range", n, i, j)
			}
			seen[j] = true
		}
	}
	a, b := NewPermutation(5, 1, 1000), NewPermutation(5, 2, 1000)
	same := 0
	for i := range int64(1000) {
		if a.At(i) == b.At(i) {
			same++
		}
	}
	if same > 20 {
		t.Fatalf("epochs 1 and 2 agree on %d of 1000 positions", same)
	}
}

func TestNumSteps(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		g, w int
	}{{0, 5, 0}, {1, 5, 1}, {5, 5, 1}, {6, 5, 2}, {10, 0, 0}, {-1, 3, 0}} {
		if got := NumSteps(tc.n, tc.g); got != tc.w {
			t.Errorf("NumSteps(%d,%d) = %d, want %d", tc.n, tc.g, got, tc.w)
		}
	}
}

// TestRankStepsMergeToEpochBatches splits a training set over P simulated
// ranks, unevenly and with one empty rank, and checks that every rank gets
// the same number of steps and that merging step k over ranks gives step k
// of the one-rank epoch with the global batch: P·B, or a global batch given
// as such (37, which no P above 1 divides: train --global-batch).
func TestRankStepsMergeToEpochBatches(t *testing.T) {
	var train []int64
	for v := int64(0); v < 500; v++ {
		if v%7 != 3 {
			train = append(train, v*3+1)
		}
	}
	sorted := slices.Clone(train)
	slices.Sort(sorted)
	for _, PG := range [][2]int{{1, 16}, {2, 32}, {3, 48}, {4, 64}, {1, 37}, {2, 37}, {3, 37}, {4, 37}} {
		P, G := PG[0], PG[1]
		want, err := EpochBatches(11, 2, train, G)
		if err != nil {
			t.Fatal(err)
		}
		owner := func(v int64) int { return int(v%int64(P+1)) % P } // rank 0 gets twice the share
		merged := make([][]int64, len(want))
		for r := range P {
			var mine []int64
			for _, v := range train {
				if owner(v) == r && !(P > 2 && r == P-1) {
					mine = append(mine, v)
				}
			}
			if P > 2 && r == P-1 {
				continue // this rank owns no training node: checked below
			}
			idx, err := CanonicalIndex(sorted, mine)
			if err != nil {
				t.Fatal(err)
			}
			steps, err := RankSteps(11, 2, int64(len(train)), G, idx)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != len(want) {
				t.Fatalf("P=%d G=%d rank %d: %d steps, want %d", P, G, r, len(steps), len(want))
			}
			for k, locals := range steps {
				for _, j := range locals {
					merged[k] = append(merged[k], mine[j])
				}
			}
		}
		if P > 2 {
			empty, err := RankSteps(11, 2, int64(len(train)), G, nil)
			if err != nil || len(empty) != len(want) {
				t.Fatalf("P=%d empty rank: %d steps (%v), want %d", P, len(empty), err, len(want))
			}
			// Put the excluded rank's nodes back through a separate rank
			// index so the merge is complete.
			var rest []int64
			for _, v := range train {
				if owner(v) == P-1 {
					rest = append(rest, v)
				}
			}
			idx, _ := CanonicalIndex(sorted, rest)
			steps, _ := RankSteps(11, 2, int64(len(train)), G, idx)
			for k, locals := range steps {
				for _, j := range locals {
					merged[k] = append(merged[k], rest[j])
				}
			}
		}
		for k := range want {
			a := slices.Sorted(slices.Values(merged[k]))
			b := slices.Sorted(slices.Values(want[k]))
			if !slices.Equal(a, b) {
				t.Fatalf("P=%d G=%d step %d: merged %v, want %v", P, G, k, a, b)
			}
		}
	}
	if _, err := EpochBatches(1, 0, []int64{1, 1}, 4); err == nil {
		t.Error("duplicate training node accepted")
	}
	if _, err := CanonicalIndex([]int64{1, 2}, []int64{3}); err == nil {
		t.Error("unknown node accepted")
	}
}

// TestReferenceSampler checks the single-process sampler on a tiny
// hand-built graph where the full-neighborhood result is known.
func TestReferenceSampler(t *testing.T) {
	// Edges into: 0 <- {1,2}, 1 <- {2}, 2 <- {}, 3 <- {0,1,2}.
	in := &graph.CSR{Indptr: []int64{0, 2, 3, 3, 6}, Indices: []int64{1, 2, 2, 0, 1, 2}}
	if err := CheckCanonical(in); err != nil {
		t.Fatal(err)
	}
	d := &graph.Dataset{Name: "tiny", NumNodes: 4, In: in}
	blocks, err := ReferenceBlocks(d, []int64{3}, []int{-1, -1}, Key{Seed: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateBlocks(blocks); err != nil {
		t.Fatal(err)
	}
	last := blocks[1]
	if !slices.Equal(last.Nodes, []int64{3, 0, 1, 2}) || !slices.Equal(last.Indices, []int32{1, 2, 3}) {
		t.Fatalf("seed block %+v", last)
	}
	first := blocks[0]
	// dst 3,0,1,2 -> sources {0,1,2}, {1,2}, {2}, {}.
	if !slices.Equal(first.Indptr, []int32{0, 3, 5, 6, 6}) || len(first.Nodes) != 4 {
		t.Fatalf("input block %+v", first)
	}
	if _, err := ReferenceBlocks(d, []int64{4}, []int{1}, Key{}, false); err == nil {
		t.Error("out-of-range seed accepted")
	}
	bad := &graph.CSR{Indptr: []int64{0, 2}, Indices: []int64{1, 1}}
	if CheckCanonical(bad) == nil {
		t.Error("repeated neighbor accepted as canonical")
	}
	// EdgeRecords + CanonicalText of the sample.
	text, err := CanonicalText(EdgeRecords(blocks, nil), 2)
	if err != nil {
		t.Fatal(err)
	}
	want := "layer 0 dst 4 edges 6\n0 1\n0 2\n1 2\n3 0\n3 1\n3 2\nlayer 1 dst 1 edges 3\n3 0\n3 1\n3 2\n"
	if string(text) != want {
		t.Fatalf("text\n%s\nwant\n%s", text, want)
	}
	// Records repeated by two "ranks" collapse.
	recs := EdgeRecords(blocks, nil)
	text2, err := CanonicalText(append(slices.Clone(recs), recs...), 2)
	if err != nil || string(text2) != want {
		t.Fatalf("duplicated records: %v\n%s", err, text2)
	}
	if _, err := CanonicalText([]int64{0, 1, 5}, 2); err == nil {
		t.Error("truncated record accepted")
	}
}
