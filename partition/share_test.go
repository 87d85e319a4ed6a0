package partition

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadRange: the shares of a part, loaded on their own, are the part's
// rows cut at ShareBounds: the same adjacency (offsets rebased), ids,
// features, labels and split entries, and as halo exactly the sources
// outside the part with their halo feature rows.
func TestLoadRange(t *testing.T) {
	d := communityDataset(900, 4, 5)
	for _, tc := range []struct {
		name   string
		halo   bool
		shares int
	}{{"2 shares", false, 2}, {"3 shares, halo features", true, 3}, {"7 shares, halo features", true, 7}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			m, err := WriteDataset(dir, d, 2, Options{Method: MethodRandom, Seed: 3, HaloFeats: tc.halo})
			require.NoError(t, err)
			for p := range m.NumParts {
				full, err := LoadWithMeta(dir, m, p)
				require.NoError(t, err)
				b, err := ShareBounds(dir, m, p, tc.shares)
				require.NoError(t, err)
				require.Len(t, b, tc.shares+1)
				assert.Equal(t, int64(0), b[0])
				assert.Equal(t, full.NumOwned(), b[tc.shares])
				train := full.Splits[m.Split].Train
				for j := range tc.shares {
					lo, hi := b[j], b[j+1]
					s, err := LoadRange(dir, m, p, lo, hi)
					require.NoError(t, err)
					e0, e1 := full.Indptr[lo], full.Indptr[hi]
					for i := range s.Indptr {
						require.Equal(t, full.Indptr[lo+int64(i)]-e0, s.Indptr[i])
					}
					assert.Equal(t, full.Indices[e0:e1], s.Indices)
					assert.Equal(t, full.IndicesOrig[e0:e1], s.IndicesOrig)
					assert.Equal(t, full.Orig[lo:hi], s.Orig)
					assert.Equal(t, full.Feat[lo*3:hi*3], s.Feat)
					assert.Equal(t, full.Labels[lo:hi], s.Labels)
					var wantTrain []int64
					for _, v := range train {
						if v >= s.Lo && v < s.Hi {
							wantTrain = append(wantTrain, v)
						}
					}
					assert.Equal(t, len(wantTrain), len(s.Splits[m.Split].Train))
					// Shares split the training nodes evenly.
					assert.InDelta(t, float64(len(train))/float64(tc.shares), float64(len(wantTrain)), 1)
					var halo []int64
					for _, v := range s.Indices {
						if v < full.Lo || v >= full.Hi {
							halo = append(halo, v)
						}
					}
					slices.Sort(halo)
					halo = slices.Compact(halo)
					assert.Equal(t, len(halo), len(s.Halo))
					for i, v := range s.Halo {
						k, ok := slices.BinarySearch(full.Halo, v)
						require.True(t, ok, "share halo node %d is in the part's halo", v)
						assert.Equal(t, full.HaloOrig[k], s.HaloOrig[i])
						if tc.halo {
							assert.Equal(t, full.HaloFeat[int64(k)*3:int64(k+1)*3], s.HaloFeat[i*3:(i+1)*3])
						}
					}
				}
			}
		})
	}
}

func TestShareViewAndRefusals(t *testing.T) {
	m := &Meta{NumParts: 2, Offsets: []int64{0, 5, 9}, Parts: []PartInfo{{Nodes: 5}, {Nodes: 4}}}
	v := m.ShareView([]int{0, 2, 3}, []int64{0, 3, 5, 9})
	assert.Equal(t, 3, v.NumParts)
	assert.Equal(t, []int64{0, 3, 5, 9}, v.Offsets)
	assert.Nil(t, v.Parts)
	assert.Equal(t, &SharedView{Parts: 2, First: []int{0, 2, 3}, PartOf: []int64{0, 5, 9}}, v.Shared)
	assert.Equal(t, 2, m.NumParts, "the partition's own Meta is left as it was")
	for _, tc := range []struct {
		name string
		m    Meta
		why  string
	}{
		{"homogeneous", Meta{}, ""},
		{"link", Meta{Link: &LinkMeta{}}, "a partition with a link split"},
		{"timed", Meta{Time: &TimeMeta{}}, "a timed partition"},
		{"sparse", Meta{SparseFeat: true}, "a partition with sparse features"},
		{"hetero", Meta{Hetero: &HeteroMeta{}}, "a heterogeneous partition"},
	} {
		assert.Equal(t, tc.why, tc.m.SupportsShares(), tc.name)
	}
}
