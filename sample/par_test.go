package sample

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

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

// TestBlockBuilderThreads: in dense mode, AddRows builds the block the
// serial path builds (node order included) on any number of threads,
// twice in a row on one builder (stale dense entries of the first block
// must not leak into the second).
func TestBlockBuilderThreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 30000
	build := func(threads int, bb *BlockBuilder, dst, offsets, srcG []int64) Block {
		prev := runtime.GOMAXPROCS(threads)
		defer runtime.GOMAXPROCS(prev)
		require.NoError(t, bb.Reset(dst, dst))
		require.NoError(t, bb.AddRows(offsets, srcG, srcG))
		return bb.Block()
	}
	var one, four BlockBuilder
	one.UseDenseIDs(n)
	four.UseDenseIDs(n)
	for round := range 3 {
		rows := 8000 + 1000*round
		perm := rng.Perm(n)[:rows]
		dst := make([]int64, rows)
		for i, v := range perm {
			dst[i] = int64(v)
		}
		_, offsets, srcG, _ := randomRows(rng, rows, n)
		require.Greater(t, len(srcG), par.MinWork)
		want := build(1, &one, dst, offsets, srcG)
		got := build(4, &four, dst, offsets, srcG)
		require.Equal(t, want, got, "round %d", round)
		require.NoError(t, got.Validate())
	}
}
