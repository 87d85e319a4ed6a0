package dsample

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/sample"
)

// TestHotThreshold: the distributed search returns, on every rank, the
// prefix of its list that belongs to the best `want` candidates of all
// ranks, as a sort of every rank's list (gathered here, not by the search)
// says: with ties in degree across ranks, a want beyond every list, a want
// of one, and ranks with empty lists.
func TestHotThreshold(t *testing.T) {
	c, err := collectives.NewComm()
	require.NoError(t, err)
	P, rank := c.Size(), c.Rank()
	const nodes = 1000
	for _, tc := range []struct {
		name   string
		per    int   // candidates per rank
		maxDeg int64 // degrees drawn from [0, maxDeg]: small means many ties
		want   int64
	}{
		{"many ties", 40, 3, 25},
		{"distinct degrees", 40, 1 << 20, 25},
		{"one", 40, 5, 1},
		{"all", 40, 5, 40 * 4},
		{"more than all", 10, 5, 10000},
		{"empty lists", 0, 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Rank r owns the ids r, r+P, r+2P, ...: distinct across ranks.
			var mine []hotCand
			for i := range tc.per {
				id := int64(rank + i*P)
				if id >= nodes {
					break
				}
				deg := int64(sample.Hash64(uint64(len(tc.name)), uint64(id)) % uint64(tc.maxDeg+1))
				mine = append(mine, hotCand{id, deg})
			}
			slices.SortFunc(mine, hotBetter)
			n, err := hotThreshold(c, mine, tc.want, nodes)
			require.NoError(t, err)

			flat := make([]int64, 0, 2*len(mine))
			for _, x := range mine {
				flat = append(flat, x.id, x.deg)
			}
			all, _, err := collectives.Allgatherv(c, flat)
			require.NoError(t, err)
			var every []hotCand
			for i := 0; i < len(all); i += 2 {
				every = append(every, hotCand{all[i], all[i+1]})
			}
			slices.SortFunc(every, hotBetter)
			best := every[:min(int(tc.want), len(every))]
			wantN := 0
			for _, x := range mine {
				if slices.Contains(best, x) {
					wantN++
				}
			}
			assert.Equal(t, wantN, n, "rank %d", rank)
			for _, x := range mine[:n] {
				assert.Contains(t, best, x, "rank %d", rank)
			}
		})
	}
}
