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

// hubDataset is a ring of n nodes whose node 0 is also linked to nine
// other nodes in ten (not all: its fixed negatives need non-neighbours):
// the source (smaller original id) of most positives of a random link
// split, more than a share's even part of its part's.
func hubDataset(n int64) *graph.Dataset {
	var src, dst []int64
	for v := int64(1); v < n; v++ {
		src, dst = append(src, v), append(dst, (v+1)%n)
		if v%10 != 0 {
			src, dst = append(src, 0), append(dst, v)
		}
	}
	return &graph.Dataset{
		Name: "hub", NumNodes: n,
		In:   graph.BuildInCSR(n, src, dst, graph.BuildOptions{Undirected: true, DropSelfLoops: true, Dedup: true}),
		Feat: &graph.Features{Dim: 2, Data: make([]float32, 2*n)},
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

func TestShareView(t *testing.T) {
	m := &Meta{NumParts: 2, Offsets: []int64{0, 5, 9}, Parts: []PartInfo{{Nodes: 5}, {Nodes: 4}}}
	v := m.ShareView([]int{0, 2, 3}, []int64{0, 3, 5, 9})
	assert.Equal(t, 3, v.NumParts)
	assert.Equal(t, []int64{0, 3, 5, 9}, v.Offsets)
	assert.Nil(t, v.Parts)
	assert.Equal(t, &SharedView{Parts: 2, First: []int{0, 2, 3}, PartOf: []int64{0, 5, 9}, Infos: m.Parts}, v.Shared)
	assert.Equal(t, 2, m.NumParts, "the partition's own Meta is left as it was")
}

// TestLoadRangeLink: the shares of a link part tile its link data exactly:
// each holds the part's positives and pool pairs whose source it owns, in
// the part's order, their fixed negatives and the valid-edge rows of its
// nodes; the training positives are spread evenly over the shares; and the
// id-map blocks LoadOrigBlock reads for the ranks of the view (P blocks of
// [0,N) out of the K parts' files) are the partition's id map. Homogeneous
// (random and time splits, with and without the valid adjacency) and
// heterogeneous (random and named splits of a relation).
func TestLoadRangeLink(t *testing.T) {
	hetero := heteroDataset(t, 4)
	for _, tc := range []struct {
		name   string
		write  func(dir string) (*Meta, error)
		shares int
	}{
		{"random, 3 shares", func(dir string) (*Meta, error) {
			return WriteDataset(dir, communityDataset(900, 4, 5), 2, Options{Method: MethodRandom, Seed: 3,
				Link: &LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: 4, Pool: 60}})
		}, 3},
		{"random metis, 4 shares, no valid adjacency", func(dir string) (*Meta, error) {
			return WriteDataset(dir, communityDataset(700, 3, 2), 2, Options{Seed: 1,
				Link: &LinkOptions{Split: "random:0.7,0.1,0.2", NegsPerPos: 3, Pool: 40, NoValidAdj: true}})
		}, 4},
		{"hub, 4 shares", func(dir string) (*Meta, error) {
			return WriteDataset(dir, hubDataset(240), 2, Options{Method: MethodRandom, Seed: 4,
				Link: &LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: 2, Pool: 20}})
		}, 4},
		{"time, 2 shares", func(dir string) (*Meta, error) {
			return WriteDataset(dir, timeDataset(), 2, Options{Seed: 3, Undirected: true, Method: MethodRandom,
				Link: &LinkOptions{Split: "time", Pool: 5, NegsPerPos: 2}})
		}, 2},
		{"hetero random, 3 shares", func(dir string) (*Meta, error) {
			return WriteHeteroDataset(dir, hetero, 2, Options{Seed: 9, Undirected: true,
				Link: &LinkOptions{Split: "random:0.7,0.1,0.2", Relation: "author___writes___paper", NegsPerPos: 4, Pool: 30}})
		}, 3},
		{"hetero named, 2 shares", func(dir string) (*Meta, error) {
			return WriteHeteroDataset(dir, hetero, 2, Options{Seed: 9, Undirected: true,
				Link: &LinkOptions{Split: "time", Relation: "paper___cites___paper", NegsPerPos: 5, Pool: 25,
					Rows: heteroLinkRows(hetero, "paper___cites___paper", false)}})
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			m, err := tc.write(dir)
			require.NoError(t, err)
			require.NotNil(t, m.Link)
			R := int64(m.NumRels())
			k := m.Link.NegsPerPos
			first := []int{0, tc.shares, 2 * tc.shares}
			offsets := []int64{0}
			var got []*Part
			var fullMap []int64
			for p := range m.NumParts {
				full, err := LoadWithMeta(dir, m, p)
				require.NoError(t, err)
				fullMap = append(fullMap, full.Link.Orig2New...)
				b, err := ShareBounds(dir, m, p, tc.shares)
				require.NoError(t, err)
				for j := range tc.shares {
					assert.Less(t, b[j], b[j+1], "part %d: share %d has a node", p, j)
				}
				// Positives of a source, for the evenness bound below.
				perSource := map[int64]int{}
				for _, u := range full.Link.Train.Src {
					perSource[u]++
				}
				most := 0
				for _, c := range perSource {
					most = max(most, c)
				}
				total := [5]int{}
				for j := range tc.shares {
					s, err := LoadRange(dir, m, p, b[j], b[j+1])
					require.NoError(t, err)
					require.NotNil(t, s.Link)
					got = append(got, s)
					offsets = append(offsets, s.Hi)
					lp, fp := s.Link, full.Link
					for x, set := range []struct {
						name      string
						full, got *LinkEdges
					}{
						{"train", &fp.Train, &lp.Train}, {"valid", &fp.Valid, &lp.Valid}, {"test", &fp.Test, &lp.Test},
						{"valid pool", &fp.ValidPool, &lp.ValidPool}, {"test pool", &fp.TestPool, &lp.TestPool},
					} {
						want := LinkEdges{Src: []int64{}, Dst: []int64{}, SrcOrig: []int64{}, DstOrig: []int64{}, ID: []int64{}, Time: []int64{}}
						var negs, negsOrig []int64
						fneg, fnegOrig := fp.Negatives(set.name)
						for i := range set.full.Len() {
							if u := set.full.Src[i]; u < s.Lo || u >= s.Hi {
								continue
							}
							e := set.full
							want.Src, want.Dst = append(want.Src, e.Src[i]), append(want.Dst, e.Dst[i])
							want.SrcOrig, want.DstOrig = append(want.SrcOrig, e.SrcOrig[i]), append(want.DstOrig, e.DstOrig[i])
							want.ID, want.Time = append(want.ID, e.ID[i]), append(want.Time, e.Time[i])
							if fneg != nil {
								negs = append(negs, fneg[i*k:(i+1)*k]...)
								negsOrig = append(negsOrig, fnegOrig[i*k:(i+1)*k]...)
							}
						}
						assert.Equal(t, want, *set.got, "share %d of part %d: %s", j, p, set.name)
						if neg, negOrig := lp.Negatives(set.name); fneg != nil {
							assert.Equal(t, len(negs), len(neg), "share %d of part %d: %s negatives", j, p, set.name)
							if len(negs) > 0 {
								assert.Equal(t, negs, neg, "share %d of part %d: %s negatives", j, p, set.name)
								assert.Equal(t, negsOrig, negOrig, "share %d of part %d: %s negatives", j, p, set.name)
							}
						}
						total[x] += set.got.Len()
					}
					// The training positives fall evenly, up to one source's
					// (a heterogeneous part is cut at node quantiles).
					if T := float64(fp.Train.Len()); m.Hetero == nil && T >= float64(tc.shares) {
						assert.InDelta(t, T/float64(tc.shares), float64(lp.Train.Len()), float64(most)+1, "share %d of part %d", j, p)
					}
					if m.Link.ValidAdj {
						lo, hi := (s.Lo-full.Lo)*R, (s.Hi-full.Lo)*R
						e0, e1 := fp.ValidIndptr[lo], fp.ValidIndptr[hi]
						require.Len(t, lp.ValidIndptr, int(hi-lo+1))
						for i := range lp.ValidIndptr {
							require.Equal(t, fp.ValidIndptr[lo+int64(i)]-e0, lp.ValidIndptr[i])
						}
						assert.Equal(t, fp.ValidIndices[e0:e1], lp.ValidIndices)
						assert.Equal(t, fp.ValidIndicesOrig[e0:e1], lp.ValidIndicesOrig)
					} else {
						assert.Nil(t, lp.ValidIndptr)
					}
					assert.Empty(t, lp.Orig2New, "the id map waits for the view")
				}
				fp := full.Link
				assert.Equal(t, [5]int{fp.Train.Len(), fp.Valid.Len(), fp.Test.Len(), fp.ValidPool.Len(), fp.TestPool.Len()}, total,
					"part %d: the shares hold every edge once", p)
			}
			v := m.ShareView(first, offsets)
			P := v.NumParts
			var view []int64
			for r, s := range got {
				lo, hi := OrigBlock(m.NumNodes, P, r)
				require.NoError(t, s.LoadOrigBlock(dir, m, lo, hi))
				assert.Equal(t, lo, s.Link.OrigLo)
				assert.Equal(t, hi, s.Link.OrigHi)
				view = append(view, s.Link.Orig2New...)
			}
			assert.Equal(t, fullMap, view, "the view's blocks are the partition's id map")
			require.Error(t, got[0].LoadOrigBlock(dir, m, 3, 2))
			require.Error(t, got[0].LoadOrigBlock(dir, m, 0, m.NumNodes+1))
		})
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
