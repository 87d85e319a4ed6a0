package partition

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/internal/hashkey"
)

// origEdge is an edge in original ids with its canonical id.
type origEdge struct{ id, src, dst, time int64 }

// linkView is a link partition gathered from all its parts, in original
// ids only, so that partitions into different numbers of parts compare
// equal exactly when they hold the same split.
type linkView struct {
	sets      [3][]origEdge
	pools     [2][]origEdge
	negs      [2]map[int64][]int64 // positive id -> K destinations
	adj       map[[2]int64]bool    // training adjacency src->dst
	validAdj  map[[2]int64]bool
	merged    map[[2]int64]bool // MergedValidAdjacency
	feat      map[int64][]float32
	orig2new  []int64
	newToOrig map[int64]int64
}

func gatherLink(t *testing.T, parts []*Part) *linkView {
	t.Helper()
	m := parts[0].Meta
	require.NotNil(t, m.Link)
	k := m.Link.NegsPerPos
	v := &linkView{adj: map[[2]int64]bool{}, validAdj: map[[2]int64]bool{}, merged: map[[2]int64]bool{},
		feat: map[int64][]float32{}, newToOrig: map[int64]int64{}}
	v.negs[0], v.negs[1] = map[int64][]int64{}, map[int64][]int64{}
	for _, pt := range parts {
		lp := pt.Link
		require.NotNil(t, lp)
		for i, o := range pt.Orig {
			v.newToOrig[pt.Lo+int64(i)] = o
			v.feat[o] = pt.Feat[i*m.FeatDim : (i+1)*m.FeatDim]
			for j := pt.Indptr[i]; j < pt.Indptr[i+1]; j++ {
				v.adj[[2]int64{pt.IndicesOrig[j], o}] = true
			}
			if m.Link.ValidAdj {
				for j := lp.ValidIndptr[i]; j < lp.ValidIndptr[i+1]; j++ {
					v.validAdj[[2]int64{lp.ValidIndicesOrig[j], o}] = true
				}
			}
		}
		if m.Link.ValidAdj {
			ptr, ind, indOrig, err := pt.MergedValidAdjacency()
			require.NoError(t, err)
			for i, o := range pt.Orig {
				row := indOrig[ptr[i]:ptr[i+1]]
				require.True(t, slices.IsSorted(row), "merged row %d not canonical", i)
				require.Equal(t, len(row), len(slices.Compact(slices.Clone(row))), "merged row %d has duplicates", i)
				for j, u := range row {
					require.Equal(t, u, v.newToOrigOr(ind[ptr[i]+int64(j)], u))
					v.merged[[2]int64{u, o}] = true
				}
			}
		}
		for s, e := range []*LinkEdges{&lp.Train, &lp.Valid, &lp.Test} {
			require.True(t, slices.IsSorted(e.ID), "part %d %s not sorted by id", pt.ID, setNames[s])
			for i := range e.ID {
				require.True(t, e.Src[i] >= pt.Lo && e.Src[i] < pt.Hi, "source not owned")
				v.sets[s] = append(v.sets[s], origEdge{e.ID[i], e.SrcOrig[i], e.DstOrig[i], e.Time[i]})
				if s > 0 {
					v.negs[s-1][e.ID[i]] = []int64{}
					negs := [2][]int64{lp.ValidNegOrig, lp.TestNegOrig}[s-1]
					v.negs[s-1][e.ID[i]] = append(v.negs[s-1][e.ID[i]], negs[i*k:(i+1)*k]...)
				}
			}
		}
		for q, e := range []*LinkEdges{&lp.ValidPool, &lp.TestPool} {
			for i := range e.ID {
				require.True(t, e.Src[i] >= pt.Lo && e.Src[i] < pt.Hi, "pool source not owned")
				v.pools[q] = append(v.pools[q], origEdge{e.ID[i], e.SrcOrig[i], e.DstOrig[i], e.Time[i]})
			}
		}
		require.Equal(t, lp.OrigLo, int64(len(v.orig2new)), "Orig2New blocks must tile [0,N)")
		v.orig2new = append(v.orig2new, lp.Orig2New...)
	}
	for s := range v.sets {
		slices.SortFunc(v.sets[s], func(a, b origEdge) int { return cmp.Compare(a.id, b.id) })
	}
	for q := range v.pools {
		slices.SortFunc(v.pools[q], func(a, b origEdge) int { return cmp.Compare(a.id, b.id) })
	}
	// The new ids in every file must translate to the original ids stored
	// beside them; Orig2New must be the inverse of the owned Orig arrays.
	require.Equal(t, m.NumNodes, int64(len(v.orig2new)))
	for o, g := range v.orig2new {
		require.Equal(t, int64(o), v.newToOrig[g], "Orig2New[%d]", o)
	}
	return v
}

func (v *linkView) newToOrigOr(g, def int64) int64 {
	if o, ok := v.newToOrig[g]; ok {
		return o
	}
	return def
}

// comparable is everything in original ids (new ids, and so Orig2New,
// legitimately differ between partitionings).
func (v *linkView) comparable() any {
	return []any{v.sets, v.pools, v.negs, v.adj, v.validAdj, v.merged, v.feat}
}

// undirectedPairs returns the distinct pairs (min, max) of g, self loops
// dropped, sorted.
func undirectedPairs(g *graph.CSR) [][2]int64 {
	var ps [][2]int64
	for v := int64(0); v < g.NumRows(); v++ {
		for _, u := range g.Neighbors(v) {
			if u != v {
				ps = append(ps, [2]int64{min(u, v), max(u, v)})
			}
		}
	}
	slices.SortFunc(ps, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return slices.Compact(ps)
}

// checkRandomSplit checks a random link split of d against its definition.
func checkRandomSplit(t *testing.T, d *graph.Dataset, v *linkView, frac [3]float64, meta *LinkMeta) {
	t.Helper()
	pairs := undirectedPairs(d.In)
	mm := len(pairs)
	nValid, nTest := int(math.Floor(frac[1]*float64(mm))), int(math.Floor(frac[2]*float64(mm)))
	assert.Equal(t, [3]int{mm - nValid - nTest, nValid, nTest}, [3]int{len(v.sets[0]), len(v.sets[1]), len(v.sets[2])})
	assert.Equal(t, [3]int64{int64(mm - nValid - nTest), int64(nValid), int64(nTest)}, [3]int64{meta.Train, meta.Valid, meta.Test})
	assert.False(t, meta.Directed)
	where := map[[2]int64]int{}
	for s, set := range v.sets {
		for i, e := range set {
			require.Equal(t, int64(i), e.id, "%s ids must be 0..n-1", setNames[s])
			require.Less(t, e.src, e.dst, "undirected pairs are listed src<dst")
			if i > 0 {
				p := set[i-1]
				require.True(t, p.src < e.src || p.src == e.src && p.dst < e.dst, "%s not in canonical order at %d", setNames[s], i)
			}
			_, dup := where[[2]int64{e.src, e.dst}]
			require.False(t, dup, "pair %v in two splits", e)
			where[[2]int64{e.src, e.dst}] = s
		}
	}
	require.Len(t, where, mm, "the splits together are the dataset's pairs")
	for _, p := range pairs {
		_, ok := where[p]
		require.True(t, ok, "pair %v lost", p)
	}
	// Adjacency: exactly both directions of the training pairs.
	want := map[[2]int64]bool{}
	for _, e := range v.sets[setTrain] {
		want[[2]int64{e.src, e.dst}], want[[2]int64{e.dst, e.src}] = true, true
	}
	assert.Equal(t, want, v.adj, "adjacency must be the training pairs, both directions")
	for _, s := range []int{setValid, setTest} {
		for _, e := range v.sets[s] {
			require.False(t, v.adj[[2]int64{e.src, e.dst}] || v.adj[[2]int64{e.dst, e.src}], "held-out %s pair %v in the adjacency", setNames[s], e)
		}
	}
	if meta.ValidAdj {
		wantV := map[[2]int64]bool{}
		for _, e := range v.sets[setValid] {
			wantV[[2]int64{e.src, e.dst}], wantV[[2]int64{e.dst, e.src}] = true, true
		}
		assert.Equal(t, wantV, v.validAdj)
		for k := range want {
			wantV[k] = true
		}
		assert.Equal(t, wantV, v.merged)
	}
}

// checkNegatives checks the stored negatives and pools of a homogeneous
// split (candidates over all n nodes).
func checkNegatives(t *testing.T, v *linkView, meta *LinkMeta, n int64) {
	t.Helper()
	checkTrueNegatives(t, v, meta, 0, n, 0, n)
}

// checkTrueNegatives checks the stored negatives and pools: every one is a
// true negative (not a self pair, not a pair of any split in either order
// for an undirected split), and it is the first keyed draw whenever that
// draw is one (so the redraws change only what had to change). Fixed
// negatives' destinations are in [negLo, negLo+negN), pool sources in
// [srcLo, srcLo+srcN).
func checkTrueNegatives(t *testing.T, v *linkView, meta *LinkMeta, negLo, negN, srcLo, srcN int64) {
	t.Helper()
	edges := map[[2]int64]bool{}
	for s := range v.sets {
		for _, e := range v.sets[s] {
			edges[[2]int64{e.src, e.dst}] = true
			if !meta.Directed {
				edges[[2]int64{e.dst, e.src}] = true
			}
		}
	}
	isNeg := func(u, w int64) bool { return u != w && !edges[[2]int64{u, w}] }
	for q := 0; q < 2; q++ {
		require.Len(t, v.negs[q], len(v.sets[q+1]))
		for _, e := range v.sets[q+1] {
			negs := v.negs[q][e.id]
			require.Len(t, negs, meta.NegsPerPos)
			for j, w := range negs {
				require.True(t, isNeg(e.src, w), "%s positive %v: negative %d is not a true negative", setNames[q+1], e, w)
				require.True(t, w >= negLo && w < negLo+negN, "negative %d outside the candidates", w)
				first := negLo + int64(hashkey.Hash64(tagLinkNeg, meta.Seed, uint64(q+1), uint64(e.id), uint64(j))%uint64(negN))
				if isNeg(e.src, first) {
					require.Equal(t, first, w, "a first draw that is a true negative is kept")
				}
			}
		}
		require.Len(t, v.pools[q], int(meta.Pool))
		for k, e := range v.pools[q] {
			require.Equal(t, int64(k), e.id)
			require.True(t, isNeg(e.src, e.dst), "pool pair %v is not a true negative", e)
			require.True(t, e.src >= srcLo && e.src < srcLo+srcN && e.dst >= negLo && e.dst < negLo+negN, "pool pair %v outside the candidates", e)
			u := srcLo + int64(hashkey.Hash64(tagLinkPool, meta.Seed, uint64(q+1), uint64(k), 0)%uint64(srcN))
			w := negLo + int64(hashkey.Hash64(tagLinkPool, meta.Seed, uint64(q+1), uint64(k), 1)%uint64(negN))
			if isNeg(u, w) {
				require.Equal(t, [2]int64{u, w}, [2]int64{e.src, e.dst}, "a first draw that is a true negative is kept")
			}
		}
	}
}

func TestLinkRandomSplit(t *testing.T) {
	d := communityDataset(400, 4, 3)
	frac := [3]float64{0.7, 0.1, 0.2}
	var ref *linkView
	for _, method := range []string{MethodMetis, MethodRandom} {
		for p := 1; p <= 4; p++ {
			t.Run(fmt.Sprintf("%s/P%d", method, p), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "parts")
				lo := &LinkOptions{Split: "random:0.7,0.1,0.2", NegsPerPos: 7, Pool: 50}
				m, err := WriteDataset(dir, d, p, Options{Method: method, Seed: 5, Link: lo})
				require.NoError(t, err)
				require.NoError(t, VerifyFiles(dir, m))
				parts := loadAll(t, dir)
				v := gatherLink(t, parts)
				checkRandomSplit(t, d, v, frac, m.Link)
				checkNegatives(t, v, m.Link, d.NumNodes)
				assert.Equal(t, 3, m.FeatDim, "given features are kept")
				assert.Equal(t, 0, m.Link.StructFeats)
				if ref == nil {
					ref = v
				} else {
					require.Equal(t, ref.comparable(), v.comparable(), "link split must not depend on the number of parts or the method")
				}
			})
		}
	}
	// Another seed gives another split.
	dir := filepath.Join(t.TempDir(), "parts")
	_, err := WriteDataset(dir, d, 2, Options{Seed: 6, Link: &LinkOptions{Split: "random:0.7,0.1,0.2", NegsPerPos: 7, Pool: 50}})
	require.NoError(t, err)
	assert.NotEqual(t, ref.sets, gatherLink(t, loadAll(t, dir)).sets)
}

// TestLinkCora is the reconstruction test on real data: the counts of
// PyG's RandomLinkSplit on Cora's 5,278 pairs.
func TestLinkCora(t *testing.T) {
	d, err := graph.ReadOGB(dataDir(t, "cora"), LinkOptions{Split: "random:0.85,0.05,0.10"}.ReadOptions(graph.UndirectedOptions()))
	require.NoError(t, err)
	var ref *linkView
	for p := 1; p <= 4; p++ {
		dir := filepath.Join(t.TempDir(), "parts")
		m, err := WriteDataset(dir, d, p, Options{Seed: 1, Link: &LinkOptions{Split: "random:0.85,0.05,0.10", Pool: 1000, NegsPerPos: 20}})
		require.NoError(t, err)
		assert.Equal(t, [3]int64{4488, 263, 527}, [3]int64{m.Link.Train, m.Link.Valid, m.Link.Test})
		assert.Equal(t, 2*m.Link.Train, m.NumEdges)
		v := gatherLink(t, loadAll(t, dir))
		checkRandomSplit(t, d, v, [3]float64{0.85, 0.05, 0.10}, m.Link)
		checkNegatives(t, v, m.Link, d.NumNodes)
		if ref == nil {
			ref = v
		} else {
			require.Equal(t, ref.comparable(), v.comparable(), "P=%d differs from P=1", p)
		}
	}
}

// featureless strips d to what a link dataset like bitcoin-alpha has.
func featureless(d *graph.Dataset) *graph.Dataset {
	c := *d
	c.Feat, c.Labels, c.NumClasses, c.Splits = nil, nil, 0, nil
	return &c
}

// TestLinkStructFeats: a dataset without features or labels gets
// structural features computed from the training edges only.
func TestLinkStructFeats(t *testing.T) {
	d := featureless(communityDataset(300, 3, 9))
	var ref *linkView
	for p := 1; p <= 3; p++ {
		dir := filepath.Join(t.TempDir(), "parts")
		m, err := WriteDataset(dir, d, p, Options{Seed: 2, Link: &LinkOptions{Split: "random:0.6,0.2,0.2", Pool: 10, NegsPerPos: 3}})
		require.NoError(t, err)
		require.Equal(t, DefaultStructFeats, m.FeatDim)
		require.Equal(t, DefaultStructFeats, m.Link.StructFeats)
		require.Equal(t, 0, m.NumClasses)
		_, hasLabels := m.Files["part-0/"+fileLabels]
		require.False(t, hasLabels, "no labels file without labels")
		parts := loadAll(t, dir)
		for _, pt := range parts {
			require.Nil(t, pt.Labels)
		}
		v := gatherLink(t, parts)
		trainDeg, fullDeg := map[int64]int{}, map[int64]int{}
		for _, e := range v.sets[setTrain] {
			trainDeg[e.src]++
			trainDeg[e.dst]++
		}
		for _, pr := range undirectedPairs(d.In) {
			fullDeg[pr[0]]++
			fullDeg[pr[1]]++
		}
		differ := 0
		c := float32(1 / math.Sqrt(DefaultStructFeats))
		for o, f := range v.feat {
			want := float32(math.Log1p(float64(trainDeg[o])))
			require.InDelta(t, want, f[0], 1e-6, "node %d: in-degree feature must count training edges only", o)
			require.InDelta(t, want, f[1], 1e-6)
			for _, x := range f[2:] {
				require.True(t, x == c || x == -c)
			}
			if trainDeg[o] != fullDeg[o] {
				differ++
			}
		}
		require.Positive(t, differ, "held-out edges must change some degree, else the test proves nothing")
		if ref == nil {
			ref = v
		} else {
			require.Equal(t, ref.comparable(), v.comparable())
		}
	}
	// An explicit width replaces given features.
	dir := filepath.Join(t.TempDir(), "parts")
	m, err := WriteDataset(dir, communityDataset(100, 2, 1), 2, Options{Link: &LinkOptions{Split: "random:0.8,0.1,0.1", StructFeats: 6}})
	require.NoError(t, err)
	assert.Equal(t, 6, m.FeatDim)
	assert.Equal(t, 6, m.Link.StructFeats)
}

// timeDataset is a small directed event graph with a time split held in
// Dataset.LinkSplits, including a repeated event, a reversed pair and a
// self loop.
func timeDataset() *graph.Dataset {
	n := int64(8)
	tr := graph.LinkSet{
		Src:  []int64{3, 0, 1, 0, 2, 5, 0, 6, 7},
		Dst:  []int64{4, 1, 0, 1, 2, 6, 2, 7, 3},
		Time: []int64{5, 9, 1, 2, 3, 4, 4, 6, 6},
	}
	va := graph.LinkSet{Src: []int64{4, 1, 5}, Dst: []int64{3, 2, 7}, Time: []int64{10, 11, 11}}
	te := graph.LinkSet{Src: []int64{7, 2}, Dst: []int64{0, 6}, Time: []int64{12, 13}}
	all := append(append(slices.Clone(tr.Src), va.Src...), te.Src...)
	allD := append(append(slices.Clone(tr.Dst), va.Dst...), te.Dst...)
	return &graph.Dataset{
		Name: "events", NumNodes: n,
		In:         graph.BuildInCSR(n, all, allD, graph.BuildOptions{Undirected: true, DropSelfLoops: true, Dedup: true}),
		LinkSplits: map[string]*graph.LinkSplit{"time": {Train: tr, Valid: va, Test: te, HasTime: true}},
	}
}

func TestLinkTimeSplit(t *testing.T) {
	d := timeDataset()
	ls := d.LinkSplits["time"]
	for _, undirected := range []bool{true, false} {
		var ref *linkView
		for p := 1; p <= 4; p++ {
			dir := filepath.Join(t.TempDir(), "parts")
			m, err := WriteDataset(dir, d, p, Options{Seed: 3, Undirected: undirected, Method: MethodRandom,
				Link: &LinkOptions{Split: "time", Pool: 5, NegsPerPos: 2}})
			require.NoError(t, err)
			require.True(t, m.Link.Directed)
			require.True(t, m.Link.HasTime)
			require.Equal(t, [3]int64{9, 3, 2}, [3]int64{m.Link.Train, m.Link.Valid, m.Link.Test})
			v := gatherLink(t, loadAll(t, dir))
			checkNegatives(t, v, m.Link, d.NumNodes)
			// Canonical order: (src, dst, time, line); the repeated
			// event 0->1 comes by time.
			wantTrain := []origEdge{{0, 0, 1, 2}, {1, 0, 1, 9}, {2, 0, 2, 4}, {3, 1, 0, 1}, {4, 2, 2, 3}, {5, 3, 4, 5}, {6, 5, 6, 4}, {7, 6, 7, 6}, {8, 7, 3, 6}}
			require.Equal(t, wantTrain, v.sets[setTrain])
			require.Equal(t, []origEdge{{0, 1, 2, 11}, {1, 4, 3, 10}, {2, 5, 7, 11}}, v.sets[setValid])
			adj := map[[2]int64]bool{}
			for i := range ls.Train.Src {
				u, w := ls.Train.Src[i], ls.Train.Dst[i]
				if u == w {
					continue
				}
				adj[[2]int64{u, w}] = true
				if undirected {
					adj[[2]int64{w, u}] = true
				}
			}
			require.Equal(t, adj, v.adj)
			// Valid adjacency: valid events (and reverses) not already
			// in the training adjacency. 4->3 reverses 3->4.
			wantV := map[[2]int64]bool{{1, 2}: true, {5, 7}: true}
			if undirected {
				wantV = map[[2]int64]bool{{1, 2}: true, {2, 1}: true, {5, 7}: true, {7, 5}: true}
			} else {
				wantV[[2]int64{4, 3}] = true
			}
			require.Equal(t, wantV, v.validAdj)
			if ref == nil {
				ref = v
			} else {
				require.Equal(t, ref.comparable(), v.comparable(), "P=%d", p)
			}
		}
	}
}

func TestLinkBitcoinTime(t *testing.T) {
	dir := dataDir(t, "bitcoinalpha")
	lo := LinkOptions{Split: "time"}
	d, err := graph.ReadOGB(dir, lo.ReadOptions(graph.UndirectedOptions()))
	require.NoError(t, err)
	require.Nil(t, d.Feat)
	require.Nil(t, d.Labels)
	var ref *linkView
	for p := 1; p <= 4; p++ {
		out := filepath.Join(t.TempDir(), "parts")
		m, err := WriteDataset(out, d, p, Options{Seed: 1, Undirected: true, Link: &lo})
		require.NoError(t, err)
		assert.Equal(t, [3]int64{19339, 2419, 2428}, [3]int64{m.Link.Train, m.Link.Valid, m.Link.Test})
		assert.True(t, m.Link.Directed)
		assert.True(t, m.Link.HasTime)
		assert.Equal(t, DefaultStructFeats, m.FeatDim)
		assert.Equal(t, int64(DefaultPool), m.Link.Pool)
		v := gatherLink(t, loadAll(t, out))
		for _, e := range v.sets[setValid] {
			require.GreaterOrEqual(t, e.time, int64(1376366400))
			require.Less(t, e.time, int64(1395633600))
		}
		if ref == nil {
			ref = v
		} else {
			require.Equal(t, ref.comparable(), v.comparable(), "P=%d", p)
		}
	}
}

func TestLinkBadOptions(t *testing.T) {
	d := communityDataset(60, 2, 1)
	for _, tc := range []struct {
		name string
		lo   LinkOptions
		want string
	}{
		{"sum", LinkOptions{Split: "random:0.8,0.1,0.2"}, "sum to"},
		{"zero train", LinkOptions{Split: "random:0,0.5,0.5"}, "train > 0"},
		{"negative", LinkOptions{Split: "random:1.1,-0.1,0"}, "train > 0"},
		{"two fractions", LinkOptions{Split: "random:0.9,0.1"}, "three fractions"},
		{"not a number", LinkOptions{Split: "random:a,0.1,0.1"}, "not a number"},
		{"nan", LinkOptions{Split: "random:NaN,0.1,0.1"}, "not a number"},
		{"kind", LinkOptions{Split: "temporal"}, "want random"},
		{"negs", LinkOptions{Split: "time", NegsPerPos: -1}, "Link.NegsPerPos -1"},
		{"pool", LinkOptions{Split: "time", Pool: -5}, "Link.Pool -5"},
		{"struct", LinkOptions{Split: "time", StructFeats: 1}, "Link.StructFeats 1"},
		{"no time split", LinkOptions{Split: "time"}, "no link split \"time\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WriteDataset(filepath.Join(t.TempDir(), "p"), d, 2, Options{Link: &tc.lo})
			require.ErrorContains(t, err, tc.want)
		})
	}
	// Valid edges out of range in a hand-made time split.
	bad := timeDataset()
	bad.LinkSplits["time"].Valid.Dst[0] = 99
	_, err := WriteDataset(filepath.Join(t.TempDir(), "p"), bad, 2, Options{Link: &LinkOptions{Split: "time"}})
	require.ErrorContains(t, err, "outside [0,8)")
}

// TestLinkLoadRejectsTampering: a META whose link counts disagree, or a
// link file whose contents break the structure, is refused with the file
// named.
func TestLinkLoadChecks(t *testing.T) {
	d := communityDataset(120, 3, 4)
	dir := filepath.Join(t.TempDir(), "parts")
	m, err := WriteDataset(dir, d, 2, Options{Seed: 1, Link: &LinkOptions{Split: "random:0.8,0.1,0.1", Pool: 20, NegsPerPos: 4}})
	require.NoError(t, err)
	// Structure: rewrite part 1's training file with a source it does not
	// own (and a matching META entry, so only the structure check fires).
	pt, err := LoadWithMeta(dir, m, 1)
	require.NoError(t, err)
	e := pt.Link.Train
	e.Src[0] = pt.Lo - 1
	aw, err := newArrayWriter(1)
	require.NoError(t, err)
	defer aw.close()
	xs := slices.Concat(e.Src, e.Dst, e.SrcOrig, e.DstOrig, e.ID, e.Time)
	require.NoError(t, putArray(m.Files, aw, filepath.Join(dir, "part-1"), 1, fileLinkTrain, xs))
	_, err = LoadWithMeta(dir, m, 1)
	require.ErrorContains(t, err, filepath.Join("part-1", fileLinkTrain))
	require.ErrorContains(t, err, "not owned")
	// Orig2New disagreeing with the owned nodes' original ids.
	pt0, err := LoadWithMeta(dir, m, 0)
	require.NoError(t, err)
	o2n := slices.Clone(pt0.Link.Orig2New)
	o2n[0], o2n[1] = o2n[1], o2n[0]
	require.NoError(t, putArray(m.Files, aw, filepath.Join(dir, "part-0"), 0, fileLinkOrig2New, o2n))
	_, err = LoadWithMeta(dir, m, 0)
	require.ErrorContains(t, err, filepath.Join("part-0", fileLinkOrig2New))
	// META: link counts that do not add up.
	m2, err := LoadMeta(dir)
	require.NoError(t, err)
	m2.Parts[0].Link.Valid++
	require.ErrorContains(t, m2.validate(), "positives")
}

func TestMergedValidAdjacencyNeedsLink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parts")
	_, err := WriteDataset(dir, communityDataset(50, 2, 1), 1, Options{})
	require.NoError(t, err)
	pt, err := Load(dir, 0)
	require.NoError(t, err)
	require.Nil(t, pt.Link)
	_, _, _, err = pt.MergedValidAdjacency()
	require.Error(t, err)

	dir2 := filepath.Join(t.TempDir(), "parts")
	_, err = WriteDataset(dir2, communityDataset(50, 2, 1), 2, Options{Link: &LinkOptions{Split: "random:0.8,0.1,0.1", NoValidAdj: true}})
	require.NoError(t, err)
	pt, err = Load(dir2, 1)
	require.NoError(t, err)
	require.Nil(t, pt.Link.ValidIndptr)
	_, _, _, err = pt.MergedValidAdjacency()
	require.ErrorContains(t, err, "no valid-edge adjacency")
}

func TestLinkPartAccessors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parts")
	_, err := WriteDataset(dir, communityDataset(80, 2, 1), 2, Options{Link: &LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: 3, Pool: 9}})
	require.NoError(t, err)
	pt, err := Load(dir, 0)
	require.NoError(t, err)
	lp := pt.Link
	for _, set := range []string{"train", "valid", "test"} {
		require.NotNil(t, lp.Positives(set))
	}
	assert.Same(t, &lp.Test, lp.Positives("test"))
	neg, negOrig := lp.Negatives("valid")
	assert.Len(t, neg, 3*lp.Valid.Len())
	assert.Len(t, negOrig, len(neg))
	assert.Same(t, &lp.TestPool, lp.NegPool("test"))
	assert.Nil(t, lp.Positives("nope"))
	assert.Nil(t, lp.NegPool("train"))
}

func TestLinkOptionsKey(t *testing.T) {
	a := LinkOptions{Split: "random:0.85,0.05,0.10"}
	b := LinkOptions{Split: "random:0.85,0.05,0.10", NegsPerPos: DefaultNegsPerPos, Pool: DefaultPool}
	assert.Equal(t, a.Key(), b.Key(), "defaults and explicit defaults are the same partition")
	assert.NotEqual(t, a.Key(), LinkOptions{Split: "random:0.85,0.05,0.10", Pool: 5}.Key())
	assert.NotEqual(t, a.Key(), LinkOptions{Split: "time"}.Key())
	assert.NotContains(t, a.Key(), ":")
	assert.NotContains(t, a.Key(), ",")
	lm := &LinkMeta{Split: a.Split, Seed: 4, NegsPerPos: DefaultNegsPerPos, Pool: DefaultPool, ValidAdj: true}
	assert.True(t, a.Matches(lm, 4))
	assert.False(t, a.Matches(lm, 5))
	assert.False(t, LinkOptions{Split: a.Split, NoValidAdj: true}.Matches(lm, 4))
}

// TestLinkTrueNegatives: on a dense graph, where a uniform draw often hits
// an edge or the source itself, every stored negative and pool pair is a
// true negative (checkNegatives), many first draws had to be redrawn, and
// the result is the same for any number of parts. A complete graph has no
// negatives: the error says so instead of storing edges.
func TestLinkTrueNegatives(t *testing.T) {
	d := communityDataset(30, 1, 3)
	lo := LinkOptions{Split: "random:0.6,0.2,0.2", NegsPerPos: 10, Pool: 40}
	var ref *linkView
	for p := 1; p <= 3; p++ {
		dir := filepath.Join(t.TempDir(), "parts")
		m, err := WriteDataset(dir, d, p, Options{Seed: 2, Link: &lo})
		require.NoError(t, err)
		v := gatherLink(t, loadAll(t, dir))
		checkNegatives(t, v, m.Link, d.NumNodes)
		if ref == nil {
			ref = v
			continue
		}
		require.Equal(t, ref.comparable(), v.comparable(), "P=%d differs from P=1", p)
	}
	redrawn := 0
	for q := 0; q < 2; q++ {
		for _, e := range ref.sets[q+1] {
			for j, w := range ref.negs[q][e.id] {
				if first := int64(hashkey.Hash64(tagLinkNeg, 2, uint64(q+1), uint64(e.id), uint64(j)) % uint64(d.NumNodes)); first != w {
					redrawn++
				}
			}
		}
	}
	assert.Greater(t, redrawn, 10, "the dense graph must exercise the redraws")

	var src, dst []int64
	for u := int64(0); u < 6; u++ {
		for w := u + 1; w < 6; w++ {
			src, dst = append(src, u), append(dst, w)
		}
	}
	complete := &graph.Dataset{NumNodes: 6, In: graph.BuildInCSR(6, src, dst, graph.BuildOptions{Undirected: true, Dedup: true, DropSelfLoops: true})}
	_, err := WriteDataset(filepath.Join(t.TempDir(), "k6"), complete, 1, Options{Seed: 1, Link: &LinkOptions{Split: "random:0.6,0.2,0.2", NegsPerPos: 2, Pool: 2}})
	require.ErrorContains(t, err, "complete")
}
