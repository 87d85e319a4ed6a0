package dsample

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// sparsifyFeat zeroes most feature entries of d (about two in three, and
// every entry of each seventh node), keyed by node and column so every
// rank computes the same dataset.
func sparsifyFeat(d *graph.Dataset) {
	dim := int64(d.Feat.Dim)
	for v := range d.NumNodes {
		for j := range dim {
			if v%7 == 3 || sample.Hash64(5, uint64(v), uint64(j))%3 != 0 {
				d.Feat.Data[v*dim+j] = 0
			}
		}
	}
}

// sparseFixtures partitions the same sparse-valued dataset with the same
// assignment twice, dense and CSR, so both give every node the same new id.
func sparseFixtures(t *testing.T, halo bool) (dense, sparse *fixture) {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	P := c.Size()
	assign := testAssign(testNodes, P)
	d := sampletest.Dataset(testNodes, nil)
	sparsifyFeat(d)
	mk := func(mode string) *fixture {
		opt := partition.Options{Method: partition.MethodRandom, HaloFeats: halo, SparseFeatures: mode}
		parts := writeParts(t, c, func(dir string) error {
			_, err := partition.Write(dir, d, assign, P, opt)
			return err
		})
		return &fixture{d: d, c: c, parts: parts, part: parts[c.Rank()]}
	}
	return mk(partition.SparseOff), mk(partition.SparseOn)
}

// TestGatherSparseFeatures: a sparse feature store returns the dense
// store's rows, as CSR (GatherSparse) and dense (Gather), from owned,
// halo, hot-cached and remote nodes, on every transport; remote rows move
// as fixed-capacity rows.
func TestGatherSparseFeatures(t *testing.T) {
	for _, halo := range []bool{false, true} {
		df, sf := sparseFixtures(t, halo)
		require.True(t, sf.part.Meta.SparseFeat)
		for _, tr := range transports() {
			cache := float64(40*testDim*4) / (1 << 20)
			ds := df.openStore(t, tr, cache)
			ss := sf.openStore(t, tr, cache)
			require.True(t, ss.feat.Sparse(NodeFeat()))
			require.False(t, ds.feat.Sparse(NodeFeat()))
			t.Run(fmt.Sprintf("halo=%v/%s", halo, tr), func(t *testing.T) {
				nodes := make([]int64, 0, testNodes+3)
				for g := int64(testNodes - 1); g >= 0; g-- {
					nodes = append(nodes, g)
				}
				nodes = append(nodes, 5, 5, 0) // repeats
				want, err := ds.feat.Gather(NodeFeat(), nodes, nil, nil)
				require.NoError(t, err)
				var st GatherStats
				var xs sample.SparseRows
				require.NoError(t, ss.feat.GatherSparse(NodeFeat(), nodes, &xs, &st))
				require.NoError(t, xs.Check())
				require.Equal(t, len(nodes), xs.Rows())
				require.Equal(t, want, xs.Dense())
				for _, v := range xs.Values {
					require.NotZero(t, v, "a stored entry is zero")
				}
				got, err := ss.feat.Gather(NodeFeat(), nodes, []float32{9, 9}, nil)
				require.NoError(t, err)
				require.Equal(t, want, got)
				require.Equal(t, int64(len(nodes)), st.Rows())
				if sf.c.Size() > 1 {
					sp := ss.feat.tables[0].sp
					require.Positive(t, st.RemoteRows)
					require.Less(t, sp.cap, testDim+1)
					if nodeMemory(sf.c, tr) {
						// Remote rows in the node's memory: no bytes
						// moved, nothing for the hot cache.
						require.Zero(t, st.Bytes)
						require.Zero(t, st.CachedRows-st.HaloHits)
					} else {
						require.Positive(t, st.CachedRows)
						require.Equal(t, st.RemoteRows*int64(4*sp.rowWords()), st.Bytes)
					}
				}
				// A bad node id is an error on its rank only; every rank
				// still takes part in the fetch.
				bad := []int64{0}
				if sf.c.Rank() == 0 {
					bad = []int64{testNodes + 5}
				}
				err = ss.feat.GatherSparse(NodeFeat(), bad, &xs, nil)
				require.Equal(t, sf.c.Rank() == 0, err != nil, "gather of %v: %v", bad, err)
			})
		}
	}
}

// TestLoaderSparseBatches: the node loader over a sparse partition fills
// Batch.XS (and no X) with exactly the dense loader's input rows, with the
// same blocks and labels.
func TestLoaderSparseBatches(t *testing.T) {
	df, sf := sparseFixtures(t, false)
	for _, tr := range []string{"rma", "alltoallv"} {
		ds, ss := df.openStore(t, tr, 0), sf.openStore(t, tr, 0)
		opt := LoaderOptions{Fanouts: []int{3, 2}, Batch: 16, Seed: 4}
		ld, err := NewLoader(ds, opt)
		require.NoError(t, err)
		ls, err := NewLoader(ss, opt)
		require.NoError(t, err)
		steps, err := ld.Steps("train", 0)
		require.NoError(t, err)
		var bd, bs sample.Batch
		for step := range steps {
			require.NoError(t, ld.Batch("train", 0, step, &bd))
			require.NoError(t, ls.Batch("train", 0, step, &bs))
			require.Nil(t, bd.XS)
			require.NotNil(t, bs.XS)
			require.Empty(t, bs.X)
			require.Equal(t, bd.Labels, bs.Labels)
			require.Equal(t, len(bd.Blocks), len(bs.Blocks))
			require.Equal(t, bd.Blocks[0].Nodes, bs.Blocks[0].Nodes)
			require.Equal(t, bd.X, bs.XS.Dense(), "%s step %d", tr, step)
		}
	}
}
