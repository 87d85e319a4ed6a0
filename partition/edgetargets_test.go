package partition

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// edgeLabelled is communityDataset with planted edge labels on its pairs
// listed as lines (u<v then v>u), k columns, the first value of a few
// lines NaN (unlabelled).
func edgeLabelled(t *testing.T, k int) *graph.Dataset {
	d := communityDataset(300, 3, 4)
	var src, dst []int64
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			src, dst = append(src, u), append(dst, v)
		}
	}
	et, err := graph.PlantedEdgeTargets(src, dst, d.Labels, d.NumClasses, graph.EdgeLabelsRegression, k, 3)
	require.NoError(t, err)
	for i := 0; i < et.Len(); i += 17 {
		et.Values.Row(int64(i))[0] = float32(math.NaN())
	}
	d.EdgeTargets = et
	return d
}

// TestLinkEdgeTargets: every positive of every split carries the label of
// its pair's first line, on any part count, whole or in shares.
func TestLinkEdgeTargets(t *testing.T) {
	d := edgeLabelled(t, 2)
	et := d.EdgeTargets
	first := map[[2]int64]int{}
	for i := range et.Src {
		p := [2]int64{min(et.Src[i], et.Dst[i]), max(et.Src[i], et.Dst[i])}
		if _, ok := first[p]; !ok {
			first[p] = i
		}
	}
	for p := 1; p <= 3; p++ {
		t.Run(fmt.Sprintf("P%d", p), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "parts")
			m, err := WriteDataset(dir, d, p, Options{Seed: 5, Link: &LinkOptions{Split: "random:0.7,0.1,0.2", NegsPerPos: 3, Pool: 20}})
			require.NoError(t, err)
			require.NoError(t, VerifyFiles(dir, m))
			assert.Equal(t, 2, m.Link.EdgeTargetDim)
			assert.Zero(t, m.Link.EdgeClasses)
			seen := 0
			for _, pt := range loadAll(t, dir) {
				for _, set := range []string{"train", "valid", "test"} {
					e := pt.Link.Positives(set)
					require.Len(t, e.Targets, 2*e.Len())
					for i := range e.Len() {
						line := first[[2]int64{e.SrcOrig[i], e.DstOrig[i]}]
						assertSameRow(t, et.Values.Row(int64(line)), e.Targets[2*i:2*i+2])
						seen++
					}
				}
				// The part's shares hold their positives' rows, in order.
				b, err := ShareBounds(dir, m, pt.ID, 2)
				require.NoError(t, err)
				for _, set := range []string{"train", "valid", "test"} {
					var got []float32
					for j := range 2 {
						sh, err := LoadRange(dir, m, pt.ID, b[j], b[j+1])
						require.NoError(t, err)
						e := sh.Link.Positives(set)
						require.Len(t, e.Targets, 2*e.Len())
						got = append(got, e.Targets...)
					}
					assertSameRow(t, pt.Link.Positives(set).Targets, got)
				}
			}
			assert.Equal(t, int(m.Link.Train+m.Link.Valid+m.Link.Test), seen)
		})
	}
	// A time split's events take the label of the first line listing
	// their direction, else their reverse; an event no line lists is
	// unlabelled.
	dir := filepath.Join(t.TempDir(), "p")
	m, err := WriteDataset(dir, withTimeSplit(d), 2, Options{Seed: 5, Undirected: true, Link: &LinkOptions{Split: "time", NegsPerPos: 2, Pool: 5}})
	require.NoError(t, err)
	require.Equal(t, 2, m.Link.EdgeTargetDim)
	lineOf := func(u, v int64) int {
		for _, q := range [][2]int64{{u, v}, {v, u}} {
			for i := range et.Src {
				if et.Src[i] == q[0] && et.Dst[i] == q[1] {
					return i
				}
			}
		}
		return -1
	}
	labelled := 0
	for _, pt := range loadAll(t, dir) {
		for _, set := range []string{"train", "valid", "test"} {
			e := pt.Link.Positives(set)
			for i := range e.Len() {
				line := lineOf(e.SrcOrig[i], e.DstOrig[i])
				if line < 0 {
					assert.True(t, math.IsNaN(float64(e.Targets[2*i])) && math.IsNaN(float64(e.Targets[2*i+1])), "event (%d,%d) has no line", e.SrcOrig[i], e.DstOrig[i])
					continue
				}
				labelled++
				assertSameRow(t, et.Values.Row(int64(line)), e.Targets[2*i:2*i+2])
			}
		}
	}
	assert.Positive(t, labelled, "some events are edges of the file")
}

func assertSameRow(t *testing.T, want, got []float32) {
	t.Helper()
	for j := range want {
		assert.True(t, math.Float32bits(want[j]) == math.Float32bits(got[j]) || (want[j] != want[j] && got[j] != got[j]), "want %v got %v", want, got)
	}
}

// withTimeSplit gives d (edge labels kept) a time split whose events are
// the first listed edges of every node (in either direction) and a few
// pairs that may be no edge.
func withTimeSplit(d *graph.Dataset) *graph.Dataset {
	dd := *d
	ls := &graph.LinkSplit{HasTime: true}
	sets := []*graph.LinkSet{&ls.Train, &ls.Train, &ls.Train, &ls.Valid, &ls.Test}
	for v := range int64(60) {
		nb := d.In.Neighbors(v)
		if len(nb) == 0 {
			continue
		}
		set := sets[v%5]
		u, w := nb[0], v
		if v%2 == 1 {
			u, w = w, u
		}
		set.Src, set.Dst, set.Time = append(set.Src, u, v), append(set.Dst, w, (v+7)%d.NumNodes), append(set.Time, v, v)
	}
	dd.LinkSplits = map[string]*graph.LinkSplit{LinkSplitTime: ls}
	return &dd
}
