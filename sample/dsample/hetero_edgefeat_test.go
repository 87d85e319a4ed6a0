package dsample

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// hetRow is the relation edge-feature row the fixture gives edge u -r-> v
// (original ids): a function of the typed edge, so every block's rows can
// be checked on any rank count.
func hetRow(u, v int64, r int32) []float32 {
	return []float32{float32(u), float32(v) + 0.5, float32(r)}
}

// TestHeteroEdgeFeatSampling: on every transport, the typed blocks sampled
// over a heterogeneous partition with relation edge features are the
// reference's, and every edge, own or remote, carries the row of its own
// (source, destination, relation).
func TestHeteroEdgeFeatSampling(t *testing.T) {
	c, err := collectives.NewComm()
	require.NoError(t, err)
	d := sampletest.HeteroDataset()
	R := int64(d.Schema.NumRels())
	d.EdgeFeat, d.EdgeFeatNames = &graph.Features{Dim: 3}, []string{"u", "v", "r"}
	for v := range d.NumNodes() {
		for r := range R {
			for _, u := range d.In.Neighbors(v*R + r) {
				d.EdgeFeat.Data = append(d.EdgeFeat.Data, hetRow(u, v, int32(r))...)
			}
		}
	}
	f := writeHeteroFixture(t, c, d, testAssign(d.NumNodes(), c.Size()), partition.Options{EdgeFeat: true})
	for _, tr := range transports() {
		g := f.openGraph(t, f.part, tr)
		require.Equal(t, 3, g.EdgeFeatDim())
		s := NewSampler(g)
		for _, tc := range sampletest.HeteroCases() {
			t.Run(fmt.Sprintf("%s/%s", tr, tc.Name), func(t *testing.T) {
				seedsG, seedsO := f.owned(heteroWanted(d)[1])
				base := sample.Key{Seed: 7, Epoch: 2, Batch: 5}
				var st sample.SampleStats
				got, err := s.Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Rel: tc.Fanouts, Key: base, Replace: tc.Replace, Stats: &st})
				require.NoError(t, err)
				want, err := sample.HeteroReferenceBlocks(d, seedsO, tc.Fanouts, base, tc.Replace)
				require.NoError(t, err)
				f.sameBlocks(t, got, want)
				for l, b := range got {
					require.Equal(t, 3, b.EdgeFeatDim)
					require.Len(t, b.EdgeFeat, 3*b.NumEdges())
					for i := range b.NumDst {
						for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
							u, v := b.Orig[b.Indices[e]], b.Orig[i]
							if w := hetRow(u, v, b.Etype[e]); !slices.Equal(w, b.EdgeFeat[3*e:3*e+3]) {
								require.Failf(t, "wrong edge row", "rank %d layer %d: edge %d -%d-> %d carries %v, want %v", c.Rank(), l, u, b.Etype[e], v, b.EdgeFeat[3*e:3*e+3], w)
							}
						}
					}
				}
				remote, err := collectives.AllreduceScalar(c, st.RemoteEdges, collectives.Sum)
				require.NoError(t, err)
				if c.Size() > 1 && tc.Name != "none" {
					assert.Positive(t, remote, "no remote edge: the remote rows' features were not tested")
				}
			})
		}
		require.NoError(t, g.Close())
	}
}
