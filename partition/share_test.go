package partition

import (
	"path/filepath"
	"slices"
	"strconv"
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
	assert.Equal(t, &SharedView{Parts: 2, First: []int{0, 2, 3}, PartOf: []int64{0, 5, 9}, Infos: m.Parts}, v.Shared)
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
		{"hetero", Meta{Hetero: &HeteroMeta{}}, ""},
	} {
		assert.Equal(t, tc.why, tc.m.SupportsShares(), tc.name)
	}
}

// TestLoadRangeHetero: the shares of a heterogeneous part hold the part's
// (node, relation) rows of their nodes, ids, labels, splits, the typed
// ranges (TypeLo) and typed features of their nodes, and edge times in a
// timed partition; ShareView's type offsets give every rank's share its
// own type ranges, type-local ids those of the partition.
func TestLoadRangeHetero(t *testing.T) {
	type dataset struct {
		name string
		d    func(t *testing.T) *graph.HeteroDataset
		opt  Options
	}
	sets := []dataset{
		{"generated", func(t *testing.T) *graph.HeteroDataset { return heteroDataset(t, 3) }, Options{Method: MethodMetis, Seed: 1}},
		{"generated random", func(t *testing.T) *graph.HeteroDataset { return heteroDataset(t, 4) }, Options{Method: MethodRandom, Seed: 2}},
		{"movielens timed", func(t *testing.T) *graph.HeteroDataset {
			ro := graph.DefaultHeteroReadOptions()
			ro.Time = true
			d, err := graph.ReadOGBHetero(dataDir(t, "movielens100k"), ro)
			require.NoError(t, err)
			return d
		}, Options{Method: MethodMetis, Seed: 1, Time: true}},
	}
	for _, ds := range sets {
		for _, shares := range []int{2, 3, 5} {
			t.Run(ds.name+"/"+strconv.Itoa(shares), func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "p")
				m, err := WriteHeteroDataset(dir, ds.d(t), 2, ds.opt)
				require.NoError(t, err)
				h := m.Hetero
				R := int64(m.NumRels())
				first := []int{0, shares, 2 * shares}
				offsets := []int64{0}
				var got []*Part
				for p := range m.NumParts {
					full, err := LoadWithMeta(dir, m, p)
					require.NoError(t, err)
					b, err := ShareBounds(dir, m, p, shares)
					require.NoError(t, err)
					for j := range shares {
						lo, hi := b[j], b[j+1]
						s, err := LoadRange(dir, m, p, lo, hi)
						require.NoError(t, err)
						got = append(got, s)
						offsets = append(offsets, s.Hi)
						e0, e1 := full.Indptr[lo*R], full.Indptr[hi*R]
						require.Len(t, s.Indptr, int((hi-lo)*R+1))
						for i := range s.Indptr {
							require.Equal(t, full.Indptr[lo*R+int64(i)]-e0, s.Indptr[i])
						}
						assert.Equal(t, full.Indices[e0:e1], s.Indices)
						assert.Equal(t, full.IndicesOrig[e0:e1], s.IndicesOrig)
						assert.Equal(t, full.Orig[lo:hi], s.Orig)
						if full.Labels != nil {
							assert.Equal(t, full.Labels[lo:hi], s.Labels)
						}
						if m.Time != nil {
							assert.Equal(t, full.Times[e0:e1], s.Times)
						}
						for name, sp := range full.Splits {
							for _, set := range []struct{ want, got []int64 }{
								{sp.Train, s.Splits[name].Train}, {sp.Valid, s.Splits[name].Valid}, {sp.Test, s.Splits[name].Test},
							} {
								want := []int64{}
								for _, v := range set.want {
									if v >= s.Lo && v < s.Hi {
										want = append(want, v)
									}
								}
								assert.Equal(t, want, set.got, "split %s", name)
							}
						}
						require.Len(t, s.TypeLo, len(h.NodeTypes)+1)
						for ty, typ := range h.NodeTypes {
							a := min(max(full.TypeLo[ty], s.Lo), s.Hi)
							z := min(max(full.TypeLo[ty+1], s.Lo), s.Hi)
							assert.Equal(t, a, s.TypeLo[ty], "type %s", typ)
							assert.Equal(t, z, s.TypeLo[ty+1], "type %s", typ)
							if d, ok := h.FeatDims[typ]; ok {
								// The type's rows that the share owns, if any.
								x0, x1 := max(full.TypeLo[ty], s.Lo), min(full.TypeLo[ty+1], s.Hi)
								x1 = max(x1, x0)
								k0, k1 := (x0-full.TypeLo[ty])*int64(d), (x1-full.TypeLo[ty])*int64(d)
								if k0 == k1 {
									k0, k1 = 0, 0
								}
								assert.Equal(t, full.TypeFeat[typ][k0:k1], s.TypeFeat[typ], "type %s", typ)
							}
						}
						for i, v := range s.Halo {
							k, ok := slices.BinarySearch(full.Halo, v)
							require.True(t, ok, "share halo node %d is in the part's halo", v)
							assert.Equal(t, full.HaloOrig[k], s.HaloOrig[i])
						}
					}
				}
				v := m.ShareView(first, offsets)
				assert.Equal(t, 2, m.NumParts)
				assert.Len(t, m.Hetero.TypeOffsets[0], 3, "the partition's own type offsets are left as they were")
				for r, s := range got {
					g := r / shares
					for ty := range h.NodeTypes {
						assert.Equal(t, s.TypeLo[ty], v.Hetero.TypeStart(ty, r, v.Offsets[r]), "rank %d type %d", r, ty)
						assert.Equal(t, s.TypeLo[ty+1]-s.TypeLo[ty], v.Hetero.TypeCount(ty, r), "rank %d type %d", r, ty)
						// The share's first node of the type keeps its type-local
						// id (with none, the share sits between the type's ids).
						before := s.TypeLo[ty] - h.TypeStart(ty, g, m.Offsets[g])
						full := h.TypeOffsets[ty][g] + min(max(before, 0), h.TypeCount(ty, g))
						assert.Equal(t, full, v.Hetero.TypeOffsets[ty][r], "rank %d type %d", r, ty)
					}
				}
				for ty := range h.NodeTypes {
					assert.Equal(t, h.TypeOffsets[ty][2], v.Hetero.TypeOffsets[ty][len(got)])
				}
			})
		}
	}
}
