package partition

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// TestLoadRange: the shares of a part, loaded on their own, are the part's
// rows cut at ShareBounds: the same adjacency (offsets rebased), ids,
// features (dense or CSR), labels, edge and node times and split entries,
// and as halo exactly the sources outside the part with their halo feature
// rows.
func TestLoadRange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      *graph.Dataset
		opt    Options
		shares int
	}{
		{"2 shares", communityDataset(900, 4, 5), Options{}, 2},
		{"3 shares, halo features", communityDataset(900, 4, 5), Options{HaloFeats: true}, 3},
		{"7 shares, halo features", communityDataset(900, 4, 5), Options{HaloFeats: true}, 7},
		{"timed, 3 shares", timedCommunity(600, 2), Options{Time: true}, 3},
		{"timed without node times, 2 shares", untimedNodes(timedCommunity(600, 3)), Options{Time: true, HaloFeats: true}, 2},
		{"sparse, 3 shares", sparseDataset(700, 4), Options{SparseFeatures: SparseOn}, 3},
		{"sparse, 5 shares, halo features", sparseDataset(700, 4), Options{SparseFeatures: SparseOn, HaloFeats: true}, 5},
		{"sparse timed, 2 shares, halo features", sparseTimed(500, 6), Options{SparseFeatures: SparseOn, HaloFeats: true, Time: true}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			opt := tc.opt
			opt.Method, opt.Seed = MethodRandom, 3
			m, err := WriteDataset(dir, tc.d, 2, opt)
			require.NoError(t, err)
			require.Equal(t, tc.opt.Time, m.Time != nil)
			require.Equal(t, tc.opt.SparseFeatures == SparseOn, m.SparseFeat)
			dim := int64(m.FeatDim)
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
					if m.SparseFeat {
						assert.Nil(t, s.Feat)
						require.NotNil(t, s.FeatCSR)
						require.Equal(t, int(hi-lo), s.FeatCSR.Rows())
						assert.Equal(t, full.FeatCSR.Dense(m.FeatDim)[lo*dim:hi*dim], s.FeatCSR.Dense(m.FeatDim))
						for i := range s.FeatCSR.Rows() {
							wc, wv := full.FeatCSR.Row(int(lo) + i)
							gc, gv := s.FeatCSR.Row(i)
							assert.Equal(t, wc, gc)
							assert.Equal(t, wv, gv)
						}
					} else {
						assert.Nil(t, s.FeatCSR)
						assert.Equal(t, full.Feat[lo*dim:hi*dim], s.Feat)
					}
					assert.Equal(t, full.Labels[lo:hi], s.Labels)
					if m.Time != nil {
						assert.Equal(t, full.Times[e0:e1], s.Times)
						if m.Time.NodeTime {
							assert.Equal(t, full.NodeTime[lo:hi], s.NodeTime)
						} else {
							assert.Nil(t, s.NodeTime)
						}
					} else {
						assert.Nil(t, s.Times)
						assert.Nil(t, s.NodeTime)
					}
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
					assert.Equal(t, halo, s.Halo)
					if m.HaloFeats && m.SparseFeat {
						require.NotNil(t, s.HaloFeatCSR)
						require.Equal(t, len(s.Halo), s.HaloFeatCSR.Rows())
					}
					for i, v := range s.Halo {
						k, ok := slices.BinarySearch(full.Halo, v)
						require.True(t, ok, "share halo node %d is in the part's halo", v)
						assert.Equal(t, full.HaloOrig[k], s.HaloOrig[i])
						switch {
						case m.HaloFeats && m.SparseFeat:
							wc, wv := full.HaloFeatCSR.Row(k)
							gc, gv := s.HaloFeatCSR.Row(i)
							assert.Equal(t, wc, gc)
							assert.Equal(t, wv, gv)
						case m.HaloFeats:
							assert.Equal(t, full.HaloFeat[int64(k)*dim:int64(k+1)*dim], s.HaloFeat[int64(i)*dim:int64(i+1)*dim])
						}
					}
					if !m.HaloFeats {
						assert.Nil(t, s.HaloFeat)
						assert.Nil(t, s.HaloFeatCSR)
					}
				}
			}
		})
	}
}

// untimedNodes drops a timed dataset's node times.
func untimedNodes(d *graph.Dataset) *graph.Dataset {
	d.NodeTime = nil
	return d
}

// sparseTimed is timedCommunity with sparseDataset's wide features.
func sparseTimed(n int64, seed uint64) *graph.Dataset {
	d := timedCommunity(n, seed)
	d.Feat = sparseDataset(n, seed).Feat
	return d
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
		{"timed", Meta{Time: &TimeMeta{}}, ""},
		{"sparse", Meta{SparseFeat: true}, ""},
		{"hetero", Meta{Hetero: &HeteroMeta{}}, "a heterogeneous partition"},
	} {
		assert.Equal(t, tc.why, tc.m.SupportsShares(), tc.name)
	}
}
