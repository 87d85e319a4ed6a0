package graph

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refTimedRows is the obvious timed construction: collect (time, src)
// pairs per row, sort, optionally drop exact repeats.
func refTimedRows(n int64, src, dst, tm []int64, opt BuildOptions) [][][2]int64 {
	rows := make([][][2]int64, n)
	for i := range src {
		u, v := src[i], dst[i]
		if opt.DropSelfLoops && u == v {
			continue
		}
		rows[v] = append(rows[v], [2]int64{tm[i], u})
		if opt.Undirected {
			rows[u] = append(rows[u], [2]int64{tm[i], v})
		}
	}
	for v := range rows {
		slices.SortFunc(rows[v], func(a, b [2]int64) int {
			if a[0] != b[0] {
				return int(a[0] - b[0])
			}
			return int(a[1] - b[1])
		})
		if opt.Dedup {
			rows[v] = slices.Compact(rows[v])
		}
	}
	return rows
}

func timedRows(g *CSR, tm []int64) [][][2]int64 {
	rows := make([][][2]int64, g.NumRows())
	for v := range rows {
		for i := g.Indptr[v]; i < g.Indptr[v+1]; i++ {
			rows[v] = append(rows[v], [2]int64{tm[i], g.Indices[i]})
		}
	}
	return rows
}

func TestBuildInCSRTimed(t *testing.T) {
	tests := []struct {
		name string
		opt  BuildOptions
		src  []int64
		dst  []int64
		tm   []int64
		want [][][2]int64
	}{
		{"multigraph keeps different times", BuildOptions{Dedup: true},
			[]int64{1, 1, 1, 2}, []int64{0, 0, 0, 0}, []int64{5, 3, 5, 3},
			[][][2]int64{{{3, 1}, {3, 2}, {5, 1}}, nil, nil}},
		{"no dedup keeps repeats", BuildOptions{},
			[]int64{1, 1}, []int64{0, 0}, []int64{5, 5},
			[][][2]int64{{{5, 1}, {5, 1}}, nil}},
		{"undirected copies the time", BuildOptions{Undirected: true, DropSelfLoops: true},
			[]int64{0, 1}, []int64{1, 1}, []int64{7, 9},
			[][][2]int64{{{7, 1}}, {{7, 0}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, tm := BuildInCSRTimed(int64(len(tc.want)), tc.src, tc.dst, tc.tm, tc.opt)
			require.NoError(t, g.Validate(int64(len(tc.want))))
			assert.Equal(t, tc.want, timedRows(g, tm))
		})
	}
}

func TestBuildInCSRTimedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, m = 3000, 300000 // enough edges for several workers
	src, dst, tm := make([]int64, m), make([]int64, m), make([]int64, m)
	for i := range src {
		src[i], dst[i], tm[i] = r.Int64N(n), r.Int64N(n), r.Int64N(50)
	}
	for _, opt := range []BuildOptions{
		{}, {Dedup: true}, {Undirected: true, DropSelfLoops: true, Dedup: true},
	} {
		want := refTimedRows(n, src, dst, tm, opt)
		for _, w := range []int{1, 3, 8} {
			opt.Workers = w
			g, gt := BuildInCSRTimed(n, src, dst, tm, opt)
			require.Equal(t, want, timedRows(g, gt), "options %+v", opt)
			if opt.Dedup {
				require.NoError(t, CheckTimedRows(g, gt, nil))
			}
		}
	}
}

func TestCheckTimedRows(t *testing.T) {
	g := &CSR{Indptr: []int64{0, 2}, Indices: []int64{3, 1}}
	require.NoError(t, CheckTimedRows(g, []int64{1, 2}, nil))
	require.ErrorContains(t, CheckTimedRows(g, []int64{2, 2}, nil), "row 0")
	require.ErrorContains(t, CheckTimedRows(g, []int64{2, 1}, nil), "not strictly ascending")
	require.ErrorContains(t, CheckTimedRows(g, []int64{2}, nil), "1 times for 2 edges")
}

func TestReadOGBTime(t *testing.T) {
	// tinyFiles' ring 0-1-2-3-4-0, undirected.
	opt := UndirectedOptions()
	opt.Time = true
	t.Run("edge time", func(t *testing.T) {
		f := tinyFiles()
		f["raw/edge_time.csv.gz"] = "10\n20\n30\n40\n50\n"
		f["raw/node_year.csv.gz"] = "1\n2\n3\n4\n5\n"
		d, err := ReadOGB(writeTiny(t, f), opt)
		require.NoError(t, err)
		assert.Equal(t, TimeKindEdge, d.TimeKind)
		assert.Equal(t, []int64{1, 2, 3, 4, 5}, d.NodeTime)
		assert.Equal(t, [][][2]int64{
			{{10, 1}, {50, 4}}, {{10, 0}, {20, 2}}, {{20, 1}, {30, 3}}, {{30, 2}, {40, 4}}, {{40, 3}, {50, 0}},
		}, timedRows(d.In, d.InTime))
	})
	t.Run("node time only", func(t *testing.T) {
		f := tinyFiles()
		f["raw/node_time.csv.gz"] = "5\n4\n3\n2\n1\n"
		d, err := ReadOGB(writeTiny(t, f), opt)
		require.NoError(t, err)
		assert.Equal(t, TimeKindNode, d.TimeKind)
		// Every in-edge carries its source's time, reverse edges included.
		assert.Equal(t, [][][2]int64{
			{{1, 4}, {4, 1}}, {{3, 2}, {5, 0}}, {{2, 3}, {4, 1}}, {{1, 4}, {3, 2}}, {{2, 3}, {5, 0}},
		}, timedRows(d.In, d.InTime))
	})
	t.Run("untimed unchanged", func(t *testing.T) {
		f := tinyFiles()
		f["raw/edge_time.csv.gz"] = "10\n20\n30\n40\n50\n"
		d, err := ReadOGB(writeTiny(t, f), UndirectedOptions())
		require.NoError(t, err)
		assert.Nil(t, d.InTime)
		assert.Nil(t, d.NodeTime)
		assert.Equal(t, "", d.TimeKind)
	})
}

func TestReadOGBTimeBadInput(t *testing.T) {
	opt := UndirectedOptions()
	opt.Time = true
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no time file", nil, "looked for"},
		{"short edge time", map[string]string{"raw/edge_time.csv.gz": "1\n2\n"}, "edge_time.csv.gz: 2 lines, want one per edge of edge.csv.gz (5)"},
		{"long edge time", map[string]string{"raw/edge_time.csv.gz": "1\n2\n3\n4\n5\n6\n"}, "edge_time.csv.gz line 6: more lines"},
		{"bad edge time", map[string]string{"raw/edge_time.csv.gz": "1\n2\nx\n4\n5\n"}, "edge_time.csv.gz line 3: time"},
		{"bad node year", map[string]string{"raw/node_year.csv.gz": "1\n2\n3\n4.5\n5\n"}, "node_year.csv.gz line 4"},
		{"short node time", map[string]string{"raw/node_time.csv.gz": "1\n"}, "node_time.csv.gz: 1 lines, want one per node (5)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := tinyFiles()
			for k, v := range tc.files {
				f[k] = v
			}
			_, err := ReadOGB(writeTiny(t, f), opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadBitcoinAlphaTime(t *testing.T) {
	dir := filepath.Join(dataRoot(), "bitcoinalpha")
	if !fileExists(filepath.Join(dir, "raw", "edge_time.csv.gz")) {
		t.Skipf("bitcoin-alpha not found under %s (set MPIGNN_DATA)", dir)
	}
	d, err := ReadOGB(dir, ReadOptions{OptionalFeatures: true, OptionalLabels: true, Time: true, Dedup: true, Splits: []string{}})
	require.NoError(t, err)
	assert.Equal(t, int64(3783), d.NumNodes)
	assert.Equal(t, int64(24186), d.In.NumEdges(), "every rating event is kept")
	assert.Equal(t, TimeKindEdge, d.TimeKind)
	assert.Nil(t, d.NodeTime)
	require.NoError(t, CheckTimedRows(d.In, d.InTime, nil))
	// README: first day 2010-11-08 (1289192400), last 2016-01-22 (1453438800).
	assert.Equal(t, int64(1289192400), slices.Min(d.InTime))
	assert.Equal(t, int64(1453438800), slices.Max(d.InTime))
}

// timedRelRows returns every relation row's (time, source) pairs, keyed
// "relation dstOrig".
func timedRelRows(d *HeteroDataset) map[string][][2]int64 {
	out := map[string][][2]int64{}
	R := int64(d.Schema.NumRels())
	for v := int64(0); v < d.NumNodes(); v++ {
		for r := int64(0); r < R; r++ {
			for i := d.In.Indptr[v*R+r]; i < d.In.Indptr[v*R+r+1]; i++ {
				k := d.Schema.Relations[r].String() + " " + strconv.FormatInt(v, 10)
				out[k] = append(out[k], [2]int64{d.InTime[i], d.In.Indices[i]})
			}
		}
	}
	return out
}

func TestReadOGBHeteroTime(t *testing.T) {
	// Homogenized ids: author 0..1, paper 2..4, venue 5.
	opt := DefaultHeteroReadOptions()
	opt.Time = true
	t.Run("edge and node times", func(t *testing.T) {
		f := heteroFiles()
		f["raw/relations/author___writes___paper/edge_time.csv.gz"] = "10\n11\n12\n13\n"
		f["raw/node_year/paper/node_year.csv.gz"] = "2000\n2001\n2002\n"
		opt := opt
		opt.NoReverse = []string{"paper___published_in___venue"} // venues have no node times
		d, err := ReadOGBHetero(writeTiny(t, f), opt)
		require.NoError(t, err)
		assert.Equal(t, TimeKindEdge, d.TimeKind)
		assert.Equal(t, []int64{0, 0, 2000, 2001, 2002, 0}, d.NodeTime)
		rows := timedRelRows(d)
		// The duplicate line 0,1 at 11 and 13 is two events.
		assert.Equal(t, [][2]int64{{11, 0}, {12, 1}, {13, 0}}, rows["author___writes___paper 3"])
		assert.Equal(t, [][2]int64{{10, 2}, {11, 3}, {13, 3}}, rows["paper___rev_writes___author 0"])
		// cites (node times of papers), symmetrized: paper 0 <- 1 (2001), 2 (2002).
		assert.Equal(t, [][2]int64{{2001, 3}, {2002, 4}}, rows["paper___cites___paper 2"])
		assert.Equal(t, [][2]int64{{2000, 2}, {2001, 3}, {2002, 4}}, rows["paper___published_in___venue 5"])
	})
	t.Run("errors", func(t *testing.T) {
		f := heteroFiles()
		f["raw/node_year/paper/node_year.csv.gz"] = "2000\n2001\n2002\n"
		_, err := ReadOGBHetero(writeTiny(t, f), opt)
		require.ErrorContains(t, err, "relation author___writes___paper: times requested but it has no")

		f["raw/relations/author___writes___paper/edge_time.csv.gz"] = "10\n11\n12\n13\n"
		_, err = ReadOGBHetero(writeTiny(t, f), opt)
		require.ErrorContains(t, err, `relation paper___published_in___venue: its times are its source nodes' times, but its reverse's source type "venue" has no node times`)

		f["raw/relations/author___writes___paper/edge_time.csv.gz"] = "10\n11\nx\n13\n"
		_, err = ReadOGBHetero(writeTiny(t, f), opt)
		require.ErrorContains(t, err, "author___writes___paper/edge_time.csv.gz line 3")
	})
	t.Run("untimed unchanged", func(t *testing.T) {
		f := heteroFiles()
		f["raw/relations/author___writes___paper/edge_time.csv.gz"] = "10\n11\n12\n13\n"
		d, err := ReadOGBHetero(writeTiny(t, f), DefaultHeteroReadOptions())
		require.NoError(t, err)
		assert.Nil(t, d.InTime)
		assert.Equal(t, []int64{0, 1}, relRows(d)["author___writes___paper 3"])
	})
}

func TestReadMovieLensTime(t *testing.T) {
	dir := filepath.Join(dataRoot(), "movielens100k")
	if !fileExists(filepath.Join(dir, "raw", "relations", "user___rates___movie", "edge_time.csv.gz")) {
		t.Skipf("MovieLens 100K not found under %s (set MPIGNN_DATA)", dir)
	}
	opt := DefaultHeteroReadOptions()
	opt.Time = true
	d, err := ReadOGBHetero(dir, opt)
	require.NoError(t, err)
	assert.Equal(t, TimeKindEdge, d.TimeKind)
	assert.Equal(t, int64(200000), d.In.NumEdges(), "100,000 ratings and their reverses")
	require.NoError(t, CheckTimedRows(d.In, d.InTime, nil))
	// README: Sept 1997 - Apr 1998.
	assert.Equal(t, int64(874724710), slices.Min(d.InTime))
	assert.Equal(t, int64(893286638), slices.Max(d.InTime))
}

func TestGenTimes(t *testing.T) {
	o := smallGen(4, 2)
	o.EdgeTime, o.NodeTime = true, true
	s, err := Generate(o)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "g")
	require.NoError(t, WriteSynthetic(dir, s))
	opt := UndirectedOptions()
	opt.Time = true
	d, err := ReadOGB(dir, opt)
	require.NoError(t, err)
	assert.Equal(t, TimeKindEdge, d.TimeKind)
	require.Len(t, d.NodeTime, int(o.Nodes))
	require.NoError(t, CheckTimedRows(d.In, d.InTime, nil))
	assert.Less(t, slices.Max(d.InTime), int64(GenTimeRange))
	assert.GreaterOrEqual(t, slices.Min(d.NodeTime), int64(0))
	// Both directions of a pair carry the same time.
	plain, err := ReadOGB(dir, UndirectedOptions())
	require.NoError(t, err)
	assert.Equal(t, plain.In.NumEdges(), d.In.NumEdges(), "the generator's pairs are distinct")
	at := map[[2]int64]int64{}
	for v := int64(0); v < d.NumNodes; v++ {
		for k := d.In.Indptr[v]; k < d.In.Indptr[v+1]; k++ {
			at[[2]int64{d.In.Indices[k], v}] = d.InTime[k]
		}
	}
	for e, tm := range at {
		require.Equal(t, tm, at[[2]int64{e[1], e[0]}])
	}
	// Same seed, same times; untimed writes have no time files.
	o2 := smallGen(4, 1)
	s2, err := Generate(o2)
	require.NoError(t, err)
	dir2 := filepath.Join(t.TempDir(), "g2")
	require.NoError(t, WriteSynthetic(dir2, s2))
	assert.False(t, fileExists(filepath.Join(dir2, "raw", "edge_time.csv.gz")))
	assert.False(t, fileExists(filepath.Join(dir2, "raw", "node_time.csv.gz")))
}

func TestGenHeteroTimes(t *testing.T) {
	o := MagGenOptions(0.002)
	o.Seed, o.EdgeTime, o.NodeTime = 3, true, true
	d, err := GenerateHetero(o)
	require.NoError(t, err)
	require.NoError(t, CheckTimedRows(d.In, d.InTime, nil))
	dir := filepath.Join(t.TempDir(), "h")
	require.NoError(t, WriteHetero(dir, d))
	ro := HeteroReadOptions{Time: true}
	back, err := ReadOGBHetero(dir, ro)
	require.NoError(t, err)
	assert.Equal(t, d.In, back.In)
	assert.Equal(t, d.InTime, back.InTime)
	assert.Equal(t, d.NodeTime, back.NodeTime)
	// With reverse relations, each reverse edge keeps the edge's time.
	ro.Reverse = true
	rev, err := ReadOGBHetero(dir, ro)
	require.NoError(t, err)
	require.NoError(t, CheckTimedRows(rev.In, rev.InTime, nil))
	// The graph without times is the one generated without them.
	o.EdgeTime, o.NodeTime = false, false
	plain, err := GenerateHetero(o)
	require.NoError(t, err)
	assert.Equal(t, relRows(plain), relRowsSorted(d))
}

// relRowsSorted is relRows with every row sorted by source.
func relRowsSorted(d *HeteroDataset) map[string][]int64 {
	out := relRows(d)
	for k, row := range out {
		out[k] = slices.Sorted(slices.Values(row)) // a copy: rows alias d.In
	}
	return out
}

// TestGenTimePinned pins generated times (values from before the mixer
// moved to internal/hashkey): generated graphs must not change.
func TestGenTimePinned(t *testing.T) {
	assert.Equal(t, int64(17290), genTime(1, tagGenEdgeTime, 0, 7))
	assert.Equal(t, int64(926780), genTime(99, tagGenNodeTime, 3, 1<<40))
}
