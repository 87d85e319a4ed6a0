package partition

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// timedCommunity is communityDataset as a temporal multigraph: every edge
// event gets a random time in [0,20), some pairs twice at different times,
// and every node a node time.
func timedCommunity(n int64, seed uint64) *graph.Dataset {
	d := communityDataset(n, 3, seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	var src, dst, tm []int64
	for v := int64(0); v < n; v++ {
		for _, u := range d.In.Neighbors(v) {
			for k := 0; k < 1+rng.IntN(2); k++ {
				src, dst, tm = append(src, u), append(dst, v), append(tm, rng.Int64N(20))
			}
		}
	}
	d.In, d.InTime = graph.BuildInCSRTimed(n, src, dst, tm, graph.BuildOptions{Dedup: true})
	d.NodeTime = make([]int64, n)
	for v := range d.NodeTime {
		d.NodeTime[v] = rng.Int64N(100) - 50
	}
	d.TimeKind = graph.TimeKindEdge
	return d
}

// timedRowsByOrig gathers, from all parts, every node's timed row as
// (time, original source) pairs and the node times, by original id.
func timedRowsByOrig(t *testing.T, n int64, parts []*Part) ([][][2]int64, []int64) {
	rows := make([][][2]int64, n)
	nt := make([]int64, n)
	for _, pt := range parts {
		require.NotNil(t, pt.Times)
		for i, o := range pt.Orig {
			rows[o] = [][2]int64{}
			for k := pt.Indptr[i]; k < pt.Indptr[i+1]; k++ {
				rows[o] = append(rows[o], [2]int64{pt.Times[k], pt.IndicesOrig[k]})
				require.Equal(t, pt.IndicesOrig[k], newToOrig(parts, pt.Indices[k]))
			}
			if pt.NodeTime != nil {
				nt[o] = pt.NodeTime[i]
			}
		}
	}
	return rows, nt
}

func datasetTimedRows(d *graph.Dataset) [][][2]int64 {
	rows := make([][][2]int64, d.NumNodes)
	for v := range rows {
		rows[v] = [][2]int64{}
		for k := d.In.Indptr[v]; k < d.In.Indptr[v+1]; k++ {
			rows[v] = append(rows[v], [2]int64{d.InTime[k], d.In.Indices[k]})
		}
	}
	return rows
}

func TestTimedRoundTrip(t *testing.T) {
	d := timedCommunity(300, 3)
	want := datasetTimedRows(d)
	for _, method := range []string{MethodMetis, MethodRandom} {
		for p := 1; p <= 4; p++ {
			dir := filepath.Join(t.TempDir(), "p")
			m, err := WriteDataset(dir, d, p, Options{Method: method, Seed: 1, Time: true})
			require.NoError(t, err, "%s P=%d", method, p)
			require.NotNil(t, m.Time)
			assert.Equal(t, TimeMeta{Kind: graph.TimeKindEdge, NodeTime: true, Min: min(slices.Min(d.InTime), slices.Min(d.NodeTime)), Max: max(slices.Max(d.InTime), slices.Max(d.NodeTime))}, *m.Time)
			assert.Equal(t, d.In.NumEdges(), m.NumEdges, "multigraph events are all kept")
			rows, nt := timedRowsByOrig(t, d.NumNodes, loadAll(t, dir))
			assert.Equal(t, want, rows, "%s P=%d", method, p)
			assert.Equal(t, d.NodeTime, nt, "%s P=%d", method, p)
		}
	}
}

func TestTimedEdgeOnlyAndErrors(t *testing.T) {
	d := timedCommunity(120, 4)
	d.NodeTime = nil
	dir := filepath.Join(t.TempDir(), "p")
	m, err := WriteDataset(dir, d, 2, Options{Method: MethodRandom, Time: true})
	require.NoError(t, err)
	assert.False(t, m.Time.NodeTime)
	parts := loadAll(t, dir)
	assert.Nil(t, parts[0].NodeTime)
	_, err = os.Stat(filepath.Join(dir, "part-0", fileNodeTime))
	assert.ErrorIs(t, err, os.ErrNotExist)

	untimed := communityDataset(120, 3, 4)
	_, err = WriteDataset(filepath.Join(t.TempDir(), "q"), untimed, 2, Options{Method: MethodRandom, Time: true})
	require.ErrorContains(t, err, "no edge or node times")
}

// TestUntimedUnchanged: without Options.Time, a timed dataset's times are
// ignored, META has no time entry and the file set is the untimed one.
func TestUntimedUnchanged(t *testing.T) {
	plain := communityDataset(200, 3, 5)
	a := filepath.Join(t.TempDir(), "a")
	_, err := WriteDataset(a, plain, 3, Options{Seed: 2})
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(a, MetaFile))
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"time"`)
	for p := 0; p < 3; p++ {
		for _, f := range []string{fileTimes, fileNodeTime} {
			_, err := os.Stat(filepath.Join(a, partDir(p), f))
			assert.ErrorIs(t, err, os.ErrNotExist)
		}
	}
	parts := loadAll(t, a)
	assert.Nil(t, parts[0].Times)
}

// rewriteArray replaces part file name of dir by xs and updates META's
// file table, so that only the structural checks can catch the change.
func rewriteArray(t *testing.T, dir, name string, xs []int64) {
	m, err := LoadMeta(dir)
	require.NoError(t, err)
	aw, err := newArrayWriter(1)
	require.NoError(t, err)
	defer aw.close()
	fi, err := writeArrayFile(aw, filepath.Join(dir, name), xs)
	require.NoError(t, err)
	m.Files[name] = fi
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644))
}

func TestTimedCorrupt(t *testing.T) {
	d := timedCommunity(150, 6)
	src := filepath.Join(t.TempDir(), "src")
	_, err := WriteDataset(src, d, 2, Options{Method: MethodRandom, Time: true})
	require.NoError(t, err)
	parts := loadAll(t, src)
	// A row of part 0 with two entries of different times.
	row := -1
	for v := 0; v+1 < len(parts[0].Indptr); v++ {
		k := parts[0].Indptr[v]
		if parts[0].Indptr[v+1]-k >= 2 && parts[0].Times[k] != parts[0].Times[k+1] {
			row = v
			break
		}
	}
	require.GreaterOrEqual(t, row, 0)
	orig, err := os.ReadFile(filepath.Join(src, MetaFile))
	require.NoError(t, err)
	tests := []struct {
		name   string
		edit   func(dir string)
		errHas string
	}{
		{"rows out of time order", func(dir string) {
			ts := slices.Clone(parts[0].Times)
			k := parts[0].Indptr[row]
			ts[k], ts[k+1] = ts[k+1], ts[k]
			rewriteArray(t, dir, "part-0/times.bin", ts)
		}, "not in timed canonical order"},
		{"short times", func(dir string) {
			rewriteArray(t, dir, "part-0/times.bin", parts[0].Times[1:])
		}, "records int64"},
		{"time outside range", func(dir string) {
			ts := slices.Clone(parts[0].Times)
			ts[len(ts)-1] = 1 << 40
			rewriteArray(t, dir, "part-0/times.bin", ts)
		}, "outside META's range"},
		{"meta without time", func(dir string) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(orig, &m))
			delete(m, "time")
			b, _ := json.Marshal(m)
			require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644))
		}, "files lists"},
		{"time without files", func(dir string) {
			var m map[string]any
			require.NoError(t, json.Unmarshal(orig, &m))
			files := m["files"].(map[string]any)
			delete(files, "part-0/times.bin")
			delete(files, "part-1/times.bin")
			delete(files, "part-0/node_time.bin")
			delete(files, "part-1/node_time.bin")
			b, _ := json.Marshal(m)
			require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644))
		}, "files has no entry for part-0/times.bin"},
		{"bad kind", func(dir string) {
			b := bytes.Replace(orig, []byte(`"kind": "edge"`), []byte(`"kind": "week"`), 1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644))
		}, `time kind "week"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			tc.edit(dir)
			_, err := Load(dir, 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.errHas)
		})
	}
}

func TestTimedHeteroMovieLens(t *testing.T) {
	data := dataDir(t, "movielens100k")
	ro := graph.DefaultHeteroReadOptions()
	ro.Time = true
	d, err := graph.ReadOGBHetero(data, ro)
	require.NoError(t, err)
	R := int64(d.Schema.NumRels())
	want := map[int64][][2]int64{} // relation row -> (time, orig src)
	for row := int64(0); row < d.In.NumRows(); row++ {
		for k := d.In.Indptr[row]; k < d.In.Indptr[row+1]; k++ {
			want[row] = append(want[row], [2]int64{d.InTime[k], d.In.Indices[k]})
		}
	}
	for _, p := range []int{1, 3} {
		dir := filepath.Join(t.TempDir(), "p")
		m, err := WriteHeteroDataset(dir, d, p, Options{Method: MethodMetis, Seed: 1, Time: true})
		require.NoError(t, err)
		require.Equal(t, TimeMeta{Kind: graph.TimeKindEdge, Min: 874724710, Max: 893286638}, *m.Time)
		got := map[int64][][2]int64{}
		for _, pt := range loadAll(t, dir) {
			for i, o := range pt.Orig {
				for r := int64(0); r < R; r++ {
					row := int64(i)*R + r
					for k := pt.Indptr[row]; k < pt.Indptr[row+1]; k++ {
						got[o*R+r] = append(got[o*R+r], [2]int64{pt.Times[k], pt.IndicesOrig[k]})
					}
				}
			}
		}
		require.Equal(t, want, got, "P=%d", p)
	}
}

// eventRows gathers the timed adjacency of all parts as (src orig, dst
// orig, time) events.
func eventRows(t *testing.T, parts []*Part) [][3]int64 {
	var ev [][3]int64
	for _, pt := range parts {
		require.NotNil(t, pt.Times)
		for i, o := range pt.Orig {
			for k := pt.Indptr[i]; k < pt.Indptr[i+1]; k++ {
				ev = append(ev, [3]int64{pt.IndicesOrig[k], o, pt.Times[k]})
			}
		}
	}
	slices.SortFunc(ev, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
	return ev
}

// splitEvents lists the (distinct, self loops dropped) events of sets, with
// their reverses when undirected.
func splitEvents(undirected bool, sets ...graph.LinkSet) [][3]int64 {
	var ev [][3]int64
	for _, s := range sets {
		for i := range s.Src {
			if s.Src[i] == s.Dst[i] {
				continue
			}
			ev = append(ev, [3]int64{s.Src[i], s.Dst[i], s.Time[i]})
			if undirected {
				ev = append(ev, [3]int64{s.Dst[i], s.Src[i], s.Time[i]})
			}
		}
	}
	slices.SortFunc(ev, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
	return slices.Compact(ev)
}

func TestTimedLinkGraph(t *testing.T) {
	d := timeDataset()
	ls := d.LinkSplits["time"]
	tests := []struct {
		graph string
		want  [][3]int64
	}{
		{"", splitEvents(true, ls.Train)},
		{LinkGraphAll, splitEvents(true, ls.Train, ls.Valid, ls.Test)},
	}
	for _, tc := range tests {
		var ref [][3]int64
		for p := 1; p <= 4; p++ {
			dir := filepath.Join(t.TempDir(), "parts")
			m, err := WriteDataset(dir, d, p, Options{Seed: 3, Undirected: true, Method: MethodMetis, Time: true,
				Link: &LinkOptions{Split: "time", Pool: 5, NegsPerPos: 2, Graph: tc.graph}})
			require.NoError(t, err)
			assert.Equal(t, tc.graph, m.Link.Graph)
			assert.Equal(t, graph.TimeKindEdge, m.Time.Kind)
			got := eventRows(t, loadAll(t, dir))
			// The training events 0->1 at 2 and at 9 are both kept.
			require.Equal(t, tc.want, got, "graph %q P=%d", tc.graph, p)
			if ref == nil {
				ref = got
			}
		}
	}
	// "all" needs times.
	_, err := WriteDataset(filepath.Join(t.TempDir(), "x"), d, 2, Options{Link: &LinkOptions{Split: "time", Graph: LinkGraphAll}})
	require.ErrorContains(t, err, `Link.Graph all needs Time`)
	_, err = WriteDataset(filepath.Join(t.TempDir(), "y"), timedCommunity(60, 1), 2, Options{Time: true, Link: &LinkOptions{Split: "random:0.8,0.1,0.1", Graph: LinkGraphAll}})
	require.ErrorContains(t, err, `Link.Graph "all" needs a split whose rows have times`)
	_, err = WriteDataset(filepath.Join(t.TempDir(), "z"), d, 2, Options{Link: &LinkOptions{Split: "time", Graph: "future"}})
	require.ErrorContains(t, err, `Link.Graph "future"`)
}

func TestTimedLinkRandom(t *testing.T) {
	d := timedCommunity(200, 9)
	dir := filepath.Join(t.TempDir(), "parts")
	m, err := WriteDataset(dir, d, 3, Options{Seed: 1, Time: true, Link: &LinkOptions{Split: "random:0.8,0.1,0.1", Pool: 5}})
	require.NoError(t, err)
	parts := loadAll(t, dir)
	v := gatherLink(t, parts)
	train := map[[2]int64]bool{}
	for _, e := range v.sets[setTrain] {
		train[[2]int64{e.src, e.dst}] = true
	}
	// Every dataset event of a training pair, and nothing else, with its time.
	var want [][3]int64
	for w := int64(0); w < d.NumNodes; w++ {
		for k := d.In.Indptr[w]; k < d.In.Indptr[w+1]; k++ {
			u := d.In.Indices[k]
			if train[[2]int64{min(u, w), max(u, w)}] {
				want = append(want, [3]int64{u, w, d.InTime[k]})
			}
		}
	}
	slices.SortFunc(want, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
	assert.Equal(t, want, eventRows(t, parts))
	assert.True(t, m.Time.NodeTime)
}

func TestTimedLinkBitcoinAll(t *testing.T) {
	dir := dataDir(t, "bitcoinalpha")
	lo := LinkOptions{Split: "time", Graph: LinkGraphAll}
	ro := lo.ReadOptions(graph.ReadOptions{Dedup: true})
	ro.Time = true
	d, err := graph.ReadOGB(dir, ro)
	require.NoError(t, err)
	for p := 1; p <= 2; p++ {
		out := filepath.Join(t.TempDir(), "parts")
		m, err := WriteDataset(out, d, p, Options{Seed: 1, Time: true, Link: &lo})
		require.NoError(t, err)
		assert.Equal(t, int64(24186), m.NumEdges, "all rating events are in the adjacency")
		assert.Equal(t, TimeMeta{Kind: graph.TimeKindEdge, Min: 1289192400, Max: 1453438800}, *m.Time)
		assert.Equal(t, LinkGraphAll, m.Link.Graph)
		ls := d.LinkSplits["time"]
		assert.Equal(t, splitEvents(false, ls.Train, ls.Valid, ls.Test), eventRows(t, loadAll(t, out)))
	}
}

func TestTimedHeteroLink(t *testing.T) {
	data := dataDir(t, "movielens100k")
	ro := graph.DefaultHeteroReadOptions()
	ro.Time = true
	d, err := graph.ReadOGBHetero(data, ro)
	require.NoError(t, err)
	for _, g := range []string{"", LinkGraphAll} {
		lo := LinkOptions{Split: "time", Relation: "user___rates___movie", Graph: g}
		lo.Rows, err = lo.ReadHeteroSplit(data, d.Schema)
		require.NoError(t, err)
		out := filepath.Join(t.TempDir(), "parts")
		m, err := WriteHeteroDataset(out, d, 2, Options{Seed: 1, Time: true, Undirected: true, Link: &lo})
		require.NoError(t, err)
		if g == LinkGraphAll {
			assert.Equal(t, int64(200000), m.NumEdges)
		} else {
			assert.Equal(t, int64(2*79999), m.NumEdges, "training ratings and their reverses")
			for _, pt := range loadAll(t, out) {
				for _, x := range pt.Times {
					require.Less(t, x, int64(889237269), "no held-out rating in the adjacency")
				}
			}
		}
	}
}
