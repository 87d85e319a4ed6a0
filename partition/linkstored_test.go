package partition

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/graph"
)

// storedDataset is timeDataset with negatives stored in its split, as
// graph.ReadLinkSplit reads them from OGB's .pt files: K = 3 negatives per
// valid/test edge (ogbl-citation2), and shared negative pairs (ogbl-collab:
// 4 valid, 2 test pairs, sizes that differ as ogbl-ddi's do). The valid
// edges are listed out of canonical order, so their negatives must move
// with them.
func storedDataset(perEdge, shared bool) *graph.Dataset {
	d := timeDataset()
	ls := *d.LinkSplits["time"]
	if perEdge {
		// Negatives include a positive pair (4->3's own destination) and
		// a self pair: OGB's are used as they are, unfiltered.
		ls.Valid.NegDst, ls.Valid.NegK = []int64{0, 3, 4, 5, 6, 7, 1, 2, 5}, 3
		ls.Test.NegDst, ls.Test.NegK = []int64{1, 2, 3, 7, 0, 1}, 3
	}
	if shared {
		ls.Valid.SharedNegSrc, ls.Valid.SharedNegDst = []int64{0, 7, 3, 1}, []int64{5, 1, 2, 6}
		ls.Test.SharedNegSrc, ls.Test.SharedNegDst = []int64{6, 2}, []int64{4, 0}
	}
	d.LinkSplits = map[string]*graph.LinkSplit{"time": &ls}
	return d
}

// TestLinkStoredNegatives: a split's own negatives are stored as they are,
// each with its positive (in original ids, for any number of parts), K is
// their width and the pools are the stored pairs; an option contradicting
// them is refused, naming it.
func TestLinkStoredNegatives(t *testing.T) {
	d := storedDataset(true, true)
	ls := d.LinkSplits["time"]
	// want[set][src,dst] = the negatives stored with that positive.
	want := [2]map[[2]int64][]int64{{}, {}}
	for s, set := range []*graph.LinkSet{&ls.Valid, &ls.Test} {
		for i := range set.Src {
			want[s][[2]int64{set.Src[i], set.Dst[i]}] = set.NegDst[i*3 : (i+1)*3]
		}
	}
	var ref *linkView
	for p := 1; p <= 3; p++ {
		dir := filepath.Join(t.TempDir(), "parts")
		m, err := WriteDataset(dir, d, p, Options{Seed: 3, Method: MethodRandom, Link: &LinkOptions{Split: "time"}})
		require.NoError(t, err)
		require.True(t, m.Link.StoredNegs && m.Link.StoredPool)
		require.Equal(t, 3, m.Link.NegsPerPos)
		require.Equal(t, [2]int64{4, 2}, [2]int64{m.Link.PoolSize("valid"), m.Link.PoolSize("test")})
		v := gatherLink(t, loadAll(t, dir))
		for s := range 2 {
			got := map[[2]int64][]int64{}
			for _, e := range v.sets[setValid+s] {
				got[[2]int64{e.src, e.dst}] = v.negs[s][e.id]
			}
			assert.Equal(t, want[s], got, "%s negatives, %d parts", setNames[setValid+s], p)
		}
		for q, set := range []*graph.LinkSet{&ls.Valid, &ls.Test} {
			var pairs [][2]int64
			for _, e := range v.pools[q] {
				pairs = append(pairs, [2]int64{e.src, e.dst})
			}
			var wantPairs [][2]int64
			for i := range set.SharedNegSrc {
				wantPairs = append(wantPairs, [2]int64{set.SharedNegSrc[i], set.SharedNegDst[i]})
			}
			assert.Equal(t, wantPairs, pairs, "%s pool in stored order, %d parts", setNames[setValid+q], p)
		}
		if ref == nil {
			ref = v
		} else {
			require.Equal(t, ref.comparable(), v.comparable(), "P=%d", p)
		}
	}

	// Per-edge negatives alone keep the drawn pools; shared ones alone
	// keep the drawn K negatives.
	dir := filepath.Join(t.TempDir(), "parts")
	m, err := WriteDataset(dir, storedDataset(true, false), 2, Options{Seed: 3, Method: MethodRandom, Link: &LinkOptions{Split: "time", Pool: 7}})
	require.NoError(t, err)
	assert.True(t, m.Link.StoredNegs)
	assert.False(t, m.Link.StoredPool)
	assert.Equal(t, [2]int64{7, 7}, [2]int64{m.Link.PoolSize("valid"), m.Link.PoolSize("test")})
	dir = filepath.Join(t.TempDir(), "parts")
	m, err = WriteDataset(dir, storedDataset(false, true), 2, Options{Seed: 3, Method: MethodRandom, Link: &LinkOptions{Split: "time", NegsPerPos: 2}})
	require.NoError(t, err)
	assert.False(t, m.Link.StoredNegs)
	assert.Equal(t, 2, m.Link.NegsPerPos)
	drawnDir := filepath.Join(t.TempDir(), "parts")
	_, err = WriteDataset(drawnDir, storedDataset(false, false), 2, Options{Seed: 3, Method: MethodRandom, Link: &LinkOptions{Split: "time", NegsPerPos: 2}})
	require.NoError(t, err)
	assert.Equal(t, gatherLink(t, loadAll(t, drawnDir)).negs, gatherLink(t, loadAll(t, dir)).negs, "K negatives drawn as without stored pools")

	// Matches (the train --data cache) takes unset options as the stored
	// ones, and a typed one as a mismatch.
	assert.True(t, (&LinkOptions{Split: "time"}).Matches(&LinkMeta{Split: "time", Seed: 3, NegsPerPos: 3, Pool: 4, TestPool: 2, StoredNegs: true, StoredPool: true, ValidAdj: true}, 3))
	assert.False(t, (&LinkOptions{Split: "time", NegsPerPos: 5}).Matches(&LinkMeta{Split: "time", Seed: 3, NegsPerPos: 3, Pool: 4, TestPool: 2, StoredNegs: true, StoredPool: true, ValidAdj: true}, 3))

	for _, tc := range []struct {
		name  string
		opt   LinkOptions
		field string
		want  string
	}{
		{"negs", LinkOptions{Split: "time", NegsPerPos: 100}, "Link.NegsPerPos", "stores its own 3 negatives per valid/test edge"},
		{"pool", LinkOptions{Split: "time", Pool: 10000}, "Link.Pool", "stores its own shared negatives (4 valid, 2 test pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WriteDataset(filepath.Join(t.TempDir(), "parts"), storedDataset(true, true), 2, Options{Seed: 3, Method: MethodRandom, Link: &tc.opt})
			require.Error(t, err)
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Contains(t, fe.Fields(), tc.field)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}

	// Bad stored negatives: one error each.
	bad := storedDataset(true, true)
	bad.LinkSplits["time"].Test.NegDst = slices.Clone(bad.LinkSplits["time"].Test.NegDst)
	bad.LinkSplits["time"].Test.NegDst[4] = 99
	_, err = WriteDataset(filepath.Join(t.TempDir(), "parts"), bad, 2, Options{Seed: 3, Method: MethodRandom, Link: &LinkOptions{Split: "time"}})
	require.ErrorContains(t, err, "link split time test: stored negative 4 (99) outside [0,8)")
	bad = storedDataset(true, true)
	bad.LinkSplits["time"].Test.NegK = 2
	_, err = WriteDataset(filepath.Join(t.TempDir(), "parts"), bad, 2, Options{Seed: 3, Method: MethodRandom, Link: &LinkOptions{Split: "time"}})
	require.ErrorContains(t, err, "3 stored negatives per valid edge but 2 per test edge")
}
