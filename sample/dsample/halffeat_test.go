package dsample

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/half"
	"mpignn/partition"
)

// TestGatherHalfFeatures: over a partition written with a 2-byte feature
// type, Gather of every node (local, halo, hot-cached and remote rows)
// returns exactly the float32 rows rounded through the type, on every
// transport, with half the bytes of a float32 fetch per remote row, and a
// hot cache of the same MiB holds twice the rows. The test graph's values
// (10v+j, up to ~4000) are not all representable, so the rounding shows.
func TestGatherHalfFeatures(t *testing.T) {
	for _, kind := range []half.Kind{half.BF16, half.FP16} {
		for _, halo := range []bool{true, false} {
			f := newFixtureWith(t, partition.Options{Method: partition.MethodRandom, HaloFeats: halo, FeatDType: kind.String()}, false)
			require.Equal(t, kind, f.part.Meta.FeatKind())
			require.Nil(t, f.part.Feat)
			f32 := newFixture(t, halo, false)
			for _, tr := range transports() {
				mb := float64(40*testDim*4) / (1 << 20) // 40 float32 rows
				s := f.openStore(t, tr, mb)
				s32 := f32.openStore(t, tr, mb)
				t.Run(fmt.Sprintf("%v/halo=%v/%s", kind, halo, tr), func(t *testing.T) {
					nodes := make([]int64, 0, testNodes)
					for g := int64(testNodes - 1); g >= 0; g-- {
						nodes = append(nodes, g)
					}
					var st GatherStats
					x, err := s.feat.Gather(NodeFeat(), nodes, nil, &st)
					require.NoError(t, err)
					bits := make([]uint16, testDim)
					want := make([]float32, testDim)
					bad := 0
					for i, g := range nodes {
						half.Narrow(kind, bits, f.d.Feat.Row(f.origOf(g)))
						half.Widen(kind, want, bits)
						if !slices.Equal(x[i*testDim:(i+1)*testDim], want) {
							if bad++; bad == 1 {
								t.Errorf("row of node %d: got %v want %v", g, x[i*testDim:(i+1)*testDim], want)
							}
						}
					}
					assert.Zero(t, bad, "rows differing from the rounded rows")
					// 2-byte rows have no float32 views, but views of
					// their bits, which widen to the gathered rows, with
					// the same counters.
					views, _, ok, err := s.feat.GatherViews(NodeFeat(), nodes, nil, nil, nil)
					require.NoError(t, err)
					assert.False(t, ok, "float32 views of a %v table", kind)
					assert.Empty(t, views)
					var vst GatherStats
					views16, buf16, vk, ok, err := s.feat.GatherHalfViews(NodeFeat(), nodes, nil, nil, &vst)
					require.NoError(t, err)
					require.True(t, ok)
					assert.Equal(t, kind, vk)
					require.Len(t, views16, len(nodes))
					for i := range nodes {
						half.Widen(kind, want, views16[i])
						if !slices.Equal(x[i*testDim:(i+1)*testDim], want) {
							t.Fatalf("view %d widens to %v, gathered %v", i, want, x[i*testDim:(i+1)*testDim])
						}
					}
					vst.Time, st.Time = 0, 0
					assert.Equal(t, st, vst)
					// In the node's memory (rma-node) remote rows are
					// viewed where they are, move no bytes and leave the
					// hot cache nothing to keep.
					node := nodeMemory(f.c, tr)
					fetched, moved := int(st.RemoteRows)*testDim, st.RemoteRows*testDim*2
					if node {
						fetched, moved = 0, 0
					}
					assert.Len(t, buf16, fetched)
					_, _, _, ok, err = s32.feat.GatherHalfViews(NodeFeat(), nodes, nil, nil, nil)
					require.NoError(t, err)
					assert.False(t, ok, "2-byte views of a float32 table")
					assert.Equal(t, int64(testNodes), st.Rows())
					assert.Equal(t, moved, st.Bytes, "bytes of %d remote rows", st.RemoteRows)
					if f.c.Size() > 1 {
						assert.Positive(t, st.RemoteRows)
						if node {
							assert.Zero(t, s.feat.HotCacheRows(NodeFeat()), "a hot cache of rows in memory")
							return
						}
						assert.Positive(t, st.CachedRows-st.HaloHits)
						if halo {
							assert.Positive(t, st.HaloHits)
						} else {
							// Without a halo cache there are remote
							// candidates enough to fill either cache.
							assert.Equal(t, 40, s32.feat.HotCacheRows(NodeFeat()))
							assert.Equal(t, 80, s.feat.HotCacheRows(NodeFeat()), "hot rows in the MiB of 40 float32 rows")
						}
					}
				})
			}
		}
	}
}
