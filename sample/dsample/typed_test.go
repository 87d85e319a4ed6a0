package dsample

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/sample/sampletest"
)

// TestTypedGather: a typed feature table returns every node's row of its
// type, own or remote, with repeats, and refuses a node of another type on
// the rank that asks it.
func TestTypedGather(t *testing.T) {
	c, err := collectives.NewComm()
	require.NoError(t, err)
	d, assign, err := sampletest.EmbedDataset([]int64{30, 50, 7}, c.Size())
	require.NoError(t, err)
	f := writeHeteroFixture(t, c, d, assign, partition.Options{})
	for _, tr := range []collectives.Transport{collectives.TransportRMA, collectives.TransportAlltoallv} {
		t.Run(tr.String(), func(t *testing.T) {
			if tr == collectives.TransportRMA {
				if r, _ := collectives.ResolveTransport(f.c, collectives.TransportAuto); r != collectives.TransportRMA {
					t.Skip("one-sided MPI unavailable")
				}
			}
			fs, err := OpenFeatureStore(f.c, f.part, FeatureOptions{Transport: tr})
			require.NoError(t, err)
			defer fs.Close()
			key := FeatureKey{NodeType: "paper", Name: FeatName}
			assert.Equal(t, []FeatureKey{key}, fs.Keys())
			rng := rand.New(rand.NewPCG(uint64(f.c.Rank()), 3))
			ids := make([]int64, 60)
			var gids []int64
			for j := range ids {
				ids[j] = rng.Int64N(50)
				if j%7 == 6 {
					ids[j] = ids[j-1]
				}
				gids = append(gids, f.gid[1][ids[j]])
			}
			got, err := fs.Gather(key, gids, nil, nil)
			require.NoError(t, err)
			for j, i := range ids {
				for k := range sampletest.EmbedFeatDim {
					assert.Equal(t, sampletest.EmbedFeat(i, k), got[j*sampletest.EmbedFeatDim+k], "paper %d col %d", i, k)
				}
			}
			// An author id in a paper gather fails on the rank that asks,
			// after the collective fetch.
			_, err = fs.Gather(key, []int64{gids[0], f.gid[0][3]}, nil, nil)
			assert.ErrorContains(t, err, `not of node type "paper"`)
		})
	}
}
