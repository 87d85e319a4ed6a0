package dsample

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
)

// TestGraphStoreNeighbors reads the in-neighbors of nodes owned anywhere
// through the graph store's collective batch read and compares them, in
// original ids and canonical order, with the unpartitioned graph. Every
// rank asks for a different slice of the nodes, so ranks read each other's
// rows; a bad id fails on the asking rank only, and no rank hangs.
func TestGraphStoreNeighbors(t *testing.T) {
	f := newFixture(t, false, false)
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0)
		g := s.Graph()
		cases := []struct {
			name  string
			nodes func(rank int) []int64
			bad   bool
		}{
			{"every node, rank-dependent order", func(rank int) []int64 {
				nodes := make([]int64, testNodes)
				for i := range nodes {
					nodes[i] = (int64(i) + int64(97*rank)) % testNodes
				}
				return nodes
			}, false},
			{"none on odd ranks", func(rank int) []int64 {
				if rank%2 == 1 {
					return nil
				}
				return []int64{0, 10, testNodes - 1}
			}, false},
			{"out of range on rank 0", func(rank int) []int64 {
				if rank == 0 {
					return []int64{1, testNodes}
				}
				return []int64{2}
			}, true},
		}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s", tr, tc.name), func(t *testing.T) {
				nodes := tc.nodes(f.c.Rank())
				off, global, orig, err := g.Neighbors(nodes)
				if tc.bad && f.c.Rank() == 0 {
					require.Error(t, err)
					assert.Contains(t, err.Error(), "outside [0,400)")
					return
				}
				require.NoError(t, err)
				require.Len(t, off, len(nodes)+1)
				for i, v := range nodes {
					want := f.d.In.Neighbors(f.origOf(v))
					got := orig[off[i]:off[i+1]]
					require.Equal(t, want, got, "in-neighbors of node %d (original %d)", v, f.origOf(v))
					for j := off[i]; j < off[i+1]; j++ {
						assert.Equal(t, orig[j], f.origOf(global[j]), "neighbor %d of node %d: new id and original id disagree", j, v)
					}
				}
			})
		}
	}
}

// TestFeatureStoreKeys: the feature store serves the partition's node
// features under NodeFeat, and an unknown key is an error on every rank
// (with no rank left waiting in a fetch).
func TestFeatureStoreKeys(t *testing.T) {
	f := newFixture(t, true, false)
	for _, tr := range transports() {
		t.Run(tr, func(t *testing.T) {
			s := f.openStore(t, tr, 0)
			fs := s.Features()
			assert.Equal(t, []FeatureKey{{NodeType: "_N", Name: "feat"}}, fs.Keys())
			dim, err := fs.Dim(NodeFeat())
			require.NoError(t, err)
			assert.Equal(t, testDim, dim)
			_, err = fs.Dim(FeatureKey{NodeType: "_N", Name: "emb"})
			assert.ErrorContains(t, err, "no table _N/emb")

			nodes := []int64{testNodes - 1, 0, int64(f.c.Rank())}
			x, err := fs.Gather(NodeFeat(), nodes, nil, nil)
			require.NoError(t, err)
			for i, v := range nodes {
				assert.Equal(t, f.d.Feat.Row(f.origOf(v)), x[i*testDim:(i+1)*testDim], "row of node %d", v)
			}
			_, err = fs.Gather(FeatureKey{NodeType: "paper", Name: "feat"}, nodes, nil, nil)
			assert.ErrorContains(t, err, "no table paper/feat")
			// The store still works after the refused key: the next
			// collective fetch pairs up on every rank.
			var st GatherStats
			_, err = fs.Gather(NodeFeat(), nodes, nil, &st)
			require.NoError(t, err)
			assert.Equal(t, int64(len(nodes)), st.Rows())
			fetched := fs.FetchStats()
			calls, err := collectives.AllreduceScalar(f.c, fetched.Calls, collectives.Max)
			require.NoError(t, err)
			assert.Equal(t, fetched.Calls, calls, "ranks made different numbers of feature fetches")
		})
	}
}

// TestGraphStoreDegreeTable: the replicated table holds, for every node,
// the same {first edge, degree} the owner's rows hold.
func TestGraphStoreDegreeTable(t *testing.T) {
	f := newFixture(t, false, false)
	s := f.openStore(t, "rma", 0)
	g := s.Graph()
	require.True(t, g.HasDegreeTable())
	for v := range int64(testNodes) {
		require.Equal(t, int64(len(f.d.In.Neighbors(f.origOf(v)))), g.allNodes[2*v+1], "degree of node %d", v)
	}
	require.Equal(t, g.localNodes, g.allNodes[2*g.lo:2*g.hi])
	require.True(t, slices.IsSorted(g.offsets))
}
