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
	// A time split does not take edge labels: one line that says which
	// split does.
	_, err := WriteDataset(filepath.Join(t.TempDir(), "p"), withTimeSplit(d), 1, Options{Seed: 5, Link: &LinkOptions{Split: "time"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "edge labels (edge-label.csv.gz) are attached to a random split's pairs only")
}

func assertSameRow(t *testing.T, want, got []float32) {
	t.Helper()
	for j := range want {
		assert.True(t, math.Float32bits(want[j]) == math.Float32bits(got[j]) || (want[j] != want[j] && got[j] != got[j]), "want %v got %v", want, got)
	}
}

// withTimeSplit gives d (edge labels kept) the time split of timeDataset's
// shape over its own nodes.
func withTimeSplit(d *graph.Dataset) *graph.Dataset {
	dd := *d
	ls := &graph.LinkSplit{HasTime: true}
	ls.Train = graph.LinkSet{Src: []int64{0, 1, 2}, Dst: []int64{1, 2, 3}, Time: []int64{1, 2, 3}}
	ls.Valid = graph.LinkSet{Src: []int64{3}, Dst: []int64{4}, Time: []int64{4}}
	ls.Test = graph.LinkSet{Src: []int64{4}, Dst: []int64{5}, Time: []int64{5}}
	dd.LinkSplits = map[string]*graph.LinkSplit{LinkSplitTime: ls}
	return &dd
}
