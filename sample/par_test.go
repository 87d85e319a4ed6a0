package sample

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"mpignn/internal/par"
)

// randomRows returns rows rows of random neighbors (ids below n, with
// repeats) laid out as AddRows takes them.
func randomRows(rng *rand.Rand, rows int, n int64) (dstOrig, offsets, srcG, srcO []int64) {
	offsets = []int64{0}
	for i := range rows {
		dstOrig = append(dstOrig, int64(i)*7%n)
		k := rng.IntN(20)
		for range k {
			g := rng.Int64N(n)
			srcG, srcO = append(srcG, g), append(srcO, g)
		}
		offsets = append(offsets, int64(len(srcG)))
	}
	return dstOrig, offsets, srcG, srcO
}

// TestExcluderThreads: the parallel exclusion drops what ExcludeRowsTimed
// drops, on any number of threads, for layers past par.MinWork.
func TestExcluderThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dstOrig, offsets, srcG, srcO := randomRows(rng, 20000, 5000)
	srcT := make([]int64, len(srcG))
	for i := range srcT {
		srcT[i] = int64(i)
	}
	require.Greater(t, len(srcG), par.MinWork)
	var a, b []int64
	for i := range 3000 {
		a, b = append(a, srcO[i*13]), append(b, dstOrig[i])
	}
	x := NewEdgeSet(a, b)
	wantOff := slices.Clone(offsets)
	wg, wo, wt, wd := ExcludeRowsTimed(x, dstOrig, wantOff, slices.Clone(srcG), slices.Clone(srcO), slices.Clone(srcT))
	require.Positive(t, wd)
	var xs Excluder
	for _, threads := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(threads)
		for range 2 { // the second call reuses swapped buffers
			off := slices.Clone(offsets)
			g, o, ts, d := xs.Exclude(x, dstOrig, off, slices.Clone(srcG), slices.Clone(srcO), slices.Clone(srcT))
			require.Equal(t, wd, d)
			require.Equal(t, wantOff, off)
			require.Equal(t, wg, g)
			require.Equal(t, wo, o)
			require.Equal(t, wt, ts)
		}
		runtime.GOMAXPROCS(prev)
	}
}

// indexModes are the id indexes of a builder whose ids lie in [0,n):
// the direct-mapped one and the bounded one (a window and a table) with
// a window of a sixth, none and all, which must build the same blocks with
// the same errors.
var indexModes = []struct {
	name string
	use  func(bb *BlockBuilder, n int64)
}{
	{"dense", (*BlockBuilder).UseDenseIDs},
	{"bounded", func(bb *BlockBuilder, n int64) { bb.UseBoundedIDs(n, n/3, n/2) }}, // a rank's share of 6
	{"table", func(bb *BlockBuilder, n int64) { bb.UseBoundedIDs(n, 0, 0) }},       // no window
	{"window", func(bb *BlockBuilder, n int64) { bb.UseBoundedIDs(n, 0, n) }},      // one rank
}

// TestBlockBuilderThreads: in dense and bounded mode, AddRows builds the
// block that AddNeighbors row by row builds (node order included), with its
// serial pass (1 thread) and its parallel one (4 threads), three times in
// a row on one builder (stale entries of a block must not leak into the
// next).
func TestBlockBuilderThreads(t *testing.T) {
	for _, m := range indexModes {
		t.Run(m.name, func(t *testing.T) { testBlockBuilderThreads(t, m.use) })
	}
}

func testBlockBuilderThreads(t *testing.T, use func(*BlockBuilder, int64)) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 30000
	build := func(threads int, bb *BlockBuilder, dst, offsets, srcG []int64) Block {
		prev := runtime.GOMAXPROCS(threads)
		defer runtime.GOMAXPROCS(prev)
		require.NoError(t, bb.Reset(dst, dst))
		require.NoError(t, bb.AddRows(offsets, srcG, srcG))
		return bb.Block()
	}
	var one, four, rowByRow BlockBuilder
	rowByRow.UseDenseIDs(n)
	use(&one, n)
	use(&four, n)
	for round := range 3 {
		rows := 8000 + 1000*round
		perm := rng.Perm(n)[:rows]
		dst := make([]int64, rows)
		for i, v := range perm {
			dst[i] = int64(v)
		}
		_, offsets, srcG, _ := randomRows(rng, rows, n)
		require.Greater(t, len(srcG), par.MinWork)
		// The general path, row by row, defines the block.
		require.NoError(t, rowByRow.Reset(dst, dst))
		for i := range rows {
			require.NoError(t, rowByRow.AddNeighbors(i, srcG[offsets[i]:offsets[i+1]], srcG[offsets[i]:offsets[i+1]]))
		}
		want := rowByRow.Block()
		require.Equal(t, want, build(1, &one, dst, offsets, srcG), "round %d, 1 thread", round)
		got := build(4, &four, dst, offsets, srcG)
		require.Equal(t, want, got, "round %d, 4 threads", round)
		require.NoError(t, got.Validate())
	}
}

// BenchmarkAddRowsDense measures AddRows with the dense index and the
// bounded table on 1, 2 and 4 threads (the serial path and the parallel
// one): 8192 destinations with about 40
// random neighbors each among 200k nodes, the layer-wise inference shape.
//
//	go test -run '^$' -bench AddRowsDense ./sample/
func BenchmarkAddRowsDense(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, rows = 200000, 8192
	perm := rng.Perm(n)[:rows]
	dst := make([]int64, rows)
	for i, v := range perm {
		dst[i] = int64(v)
	}
	offsets := []int64{0}
	var srcG []int64
	for range rows {
		for range 40 {
			srcG = append(srcG, rng.Int64N(n))
		}
		offsets = append(offsets, int64(len(srcG)))
	}
	for _, m := range indexModes {
		for _, c := range []struct {
			name    string
			threads int
			perRow  bool // AddNeighbors row by row (the general path)
		}{{"rows", 1, true}, {"threads=1", 1, false}, {"threads=2", 2, false}, {"threads=4", 4, false}} {
			benchAddRows(b, m.name+"/"+c.name, m.use, c.threads, c.perRow, n, dst, offsets, srcG)
		}
	}
}

// benchAddRows is one case of BenchmarkAddRowsDense: use picks the index,
// perRow adds the rows one by one (the general path).
func benchAddRows(b *testing.B, name string, use func(*BlockBuilder, int64), threads int, perRow bool, n int64, dst, offsets, srcG []int64) {
	b.Run(name, func(b *testing.B) {
		prev := runtime.GOMAXPROCS(threads)
		defer runtime.GOMAXPROCS(prev)
		var bb BlockBuilder
		use(&bb, n)
		var out Block
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			if err := bb.Reset(dst, dst); err != nil {
				b.Fatal(err)
			}
			if perRow {
				for i := range dst {
					if err := bb.AddNeighbors(i, srcG[offsets[i]:offsets[i+1]], srcG[offsets[i]:offsets[i+1]]); err != nil {
						b.Fatal(err)
					}
				}
			} else if err := bb.AddRows(offsets, srcG, srcG); err != nil {
				b.Fatal(err)
			}
			bb.BlockInto(&out)
		}
		b.ReportMetric(float64(len(srcG))*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		b.ReportMetric(float64(len(srcG))*float64(b.N)/(cpuTime()-cpu0).Seconds(), "edges/cpu-s")
	})
}

// cpuTime is the process's user+system CPU time: the machine the
// benchmarks run on may be shared, and CPU time shows the work done.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestAddRowsDenseErrors: bad rows get the same errors from the serial and
// the parallel de-duplication, small layers and large.
func TestAddRowsDenseErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 30000
	for _, rows := range []int{10, 9000} {
		dst := make([]int64, rows)
		for i := range dst {
			dst[i] = int64(i)
		}
		_, offsets, srcG, _ := randomRows(rng, rows, n)
		for _, tc := range []struct {
			name  string
			spoil func(offsets, srcG []int64)
			want  string
		}{
			{"decreasing offsets", func(o, _ []int64) { o[rows/2] = o[rows/2+1] + 1 }, "row offsets decrease at destination"},
			{"id too large", func(_, s []int64) { s[len(s)/2] = n }, "source id 30000 outside [0,30000)"},
			{"negative id", func(_, s []int64) { s[len(s)-1] = -4 }, "source id -4 outside [0,30000)"},
		} {
			for _, m := range indexModes {
				for _, threads := range []int{1, 4} {
					o, s := slices.Clone(offsets), slices.Clone(srcG)
					tc.spoil(o, s)
					prev := runtime.GOMAXPROCS(threads)
					var bb BlockBuilder
					m.use(&bb, n)
					require.NoError(t, bb.Reset(dst, dst))
					err := bb.AddRows(o, s, s)
					runtime.GOMAXPROCS(prev)
					require.ErrorContains(t, err, tc.want, "%s, %s, %d rows, %d threads", m.name, tc.name, rows, threads)
				}
			}
		}
	}
}

// TestResetDenseErrors: large destination lists get the serial loop's
// errors from the parallel Reset: the first bad destination in order,
// out of range or repeated (naming the first one it repeats).
func TestResetDenseErrors(t *testing.T) {
	const n, rows = 300000, 100000
	for _, tc := range []struct {
		name  string
		spoil func(d []int64)
		want  string
	}{
		{"fine", func([]int64) {}, ""},
		{"repeat", func(d []int64) { d[70000] = d[400]; d[90000] = d[5] }, "destination 70000 (global id 400) repeats destination 400"},
		{"repeat before out of range", func(d []int64) { d[50000] = d[7]; d[60000] = n }, "destination 50000 (global id 7) repeats destination 7"},
		{"out of range first", func(d []int64) { d[50000] = -1; d[60000] = d[7] }, "destination 50000 has id -1 outside [0,300000)"},
	} {
		for _, m := range indexModes {
			for _, threads := range []int{1, 4} {
				d := make([]int64, rows)
				for i := range d {
					d[i] = int64(i)
				}
				tc.spoil(d)
				prev := runtime.GOMAXPROCS(threads)
				var bb BlockBuilder
				m.use(&bb, n)
				err := bb.Reset(d, d)
				if err == nil {
					// A fine list is usable: destinations keep their indices.
					require.NoError(t, bb.AddRows(make([]int64, rows+1), []int64{}, []int64{}))
				}
				runtime.GOMAXPROCS(prev)
				if tc.want == "" {
					require.NoError(t, err, "%s, %s, %d threads", m.name, tc.name, threads)
					require.Equal(t, d, bb.Block().Nodes)
					continue
				}
				require.EqualError(t, err, "block builder: "+tc.want, "%s, %s, %d threads", m.name, tc.name, threads)
			}
		}
	}
}
