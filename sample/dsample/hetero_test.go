package dsample

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// openGraph opens the fixture's graph store with a transport named as in
// transports().
func (f *heteroFixture) openGraph(t *testing.T, p *partition.Part, name string) *GraphStore {
	t.Helper()
	g, err := openGraphNamed(f.c, p, name)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Close()) })
	return g
}

func openGraphNamed(c *collectives.Comm, p *partition.Part, name string) (*GraphStore, error) {
	c, transport, err := commNamed(c, name)
	if err != nil {
		return nil, err
	}
	transport, fetch := strings.CutSuffix(transport, "-fetch")
	tr, err := collectives.ParseTransport(transport)
	if err != nil {
		return nil, err
	}
	table := 0.0
	if fetch {
		table = -1
	}
	return OpenGraphStore(c, p, GraphOptions{Transport: tr, DegreeTableMB: table})
}

// owned returns this rank's nodes among the wanted original ids, in the
// order of wanted.
func (f *heteroFixture) owned(wanted []int64) (global, orig []int64) {
	for _, o := range wanted {
		if g := f.newID[o]; g >= f.part.Lo && g < f.part.Hi {
			global = append(global, g)
			orig = append(orig, o)
		}
	}
	return global, orig
}

// sameBlocks is sameBlocks of the fixture.
func (f *heteroFixture) sameBlocks(t *testing.T, got, want []sample.Block) bool {
	t.Helper()
	return sameBlocks(t, f.c.Rank(), f.origOf, got, want)
}

func heteroWanted(d *graph.HeteroDataset) [][]int64 {
	all := make([]int64, d.NumNodes())
	for v := range all {
		all[v] = int64(v)
	}
	// authors (0..59), papers (60..149), venues (150..155), unsorted,
	// including rows with no edges (author 0, paper 60).
	return [][]int64{{70, 3, 150, 61, 0, 155, 64, 100, 60}, all}
}

// TestHeteroDistributedEqualsReference: on every transport the typed
// distributed sampler draws, on each rank, the blocks of
// sample.HeteroReference for the rank's seeds (node for node, Etype
// included), the canonical text of all ranks equals the reference's for
// all seeds, remote rows are really read, and the counters add up.
func TestHeteroDistributedEqualsReference(t *testing.T) {
	f := newHeteroFixture(t)
	for _, tr := range transports() {
		g := f.openGraph(t, f.part, tr)
		require.Equal(t, 5, g.NumRels())
		s := NewSampler(g)
		for _, tc := range sampletest.HeteroCases() {
			for _, wanted := range heteroWanted(f.d) {
				t.Run(fmt.Sprintf("%s/%s/%d seeds", tr, tc.Name, len(wanted)), func(t *testing.T) {
					seedsG, seedsO := f.owned(wanted)
					base := sample.Key{Seed: 7, Epoch: 2, Batch: 5}
					var st sample.SampleStats
					got, err := s.Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Rel: tc.Fanouts, Key: base, Replace: tc.Replace, Stats: &st})
					require.NoError(t, err)
					want, err := sample.HeteroReferenceBlocks(f.d, seedsO, tc.Fanouts, base, tc.Replace)
					require.NoError(t, err)
					for l := range got {
						assert.NoError(t, got[l].ValidateRel(5))
					}
					f.sameBlocks(t, got, want)
					assert.Equal(t, int64(sumEdges(got)), st.Edges())

					text, err := GatherTextRel(f.c, got, g.Schema())
					require.NoError(t, err)
					ref, err := sample.HeteroReferenceBlocks(f.d, slices.Sorted(slices.Values(wanted)), tc.Fanouts, base, tc.Replace)
					require.NoError(t, err)
					wantText, err := GatherTextRel(f.c, ref, g.Schema()) // every rank adds the same records: deduplicated
					require.NoError(t, err)
					assert.True(t, bytes.Equal(text, wantText), "canonical text differs:\n%s\nwant\n%s", text, wantText)
					sums := []int64{st.RemoteEdges, st.Edges()}
					require.NoError(t, collectives.Allreduce(f.c, sums, collectives.Sum))
					if tc.Name != "none" {
						assert.Greater(t, sums[1], int64(0))
						if f.c.Size() > 1 {
							assert.Positive(t, sums[0], "no edge of a remote row on %d ranks", f.c.Size())
						}
					}
				})
			}
		}
	}
}

// TestHeteroDistributedExclude: excluded pairs are dropped per relation row
// as HeteroReference.Exclude drops them, on every transport.
func TestHeteroDistributedExclude(t *testing.T) {
	f := newHeteroFixture(t)
	R := int64(f.d.Schema.NumRels())
	// Exclude the first edge of every fourth non-empty row: plenty of hits.
	var src, dst []int64
	for row := range f.d.In.NumRows() {
		if nb := f.d.In.Neighbors(row); len(nb) > 0 && row%4 == 0 {
			src, dst = append(src, nb[0]), append(dst, row/R)
		}
	}
	x := sample.NewEdgeSet(src, dst)
	fan := sample.RelFanouts{{-1, 3, -1, 2, 5}, {4, -1, 1, -1, 3}}
	wanted := heteroWanted(f.d)[1]
	for _, tr := range transports() {
		g := f.openGraph(t, f.part, tr)
		s := NewSampler(g)
		s.SetExclude(x)
		t.Run(tr, func(t *testing.T) {
			seedsG, seedsO := f.owned(wanted)
			base := sample.Key{Seed: 3}
			var st sample.SampleStats
			got, err := s.Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Rel: fan, Key: base, Stats: &st})
			require.NoError(t, err)
			ref := sample.HeteroReference{G: sample.HeteroCSR{D: f.d}, Exclude: x}
			want, err := ref.SampleRel(seedsO, seedsO, fan, base, false)
			require.NoError(t, err)
			f.sameBlocks(t, got, want)
			excl, err := collectives.AllreduceScalar(f.c, st.Excluded, collectives.Sum)
			require.NoError(t, err)
			assert.Positive(t, excl, "no chosen edge was excluded")
		})
	}
}

// TestHeteroUntypedAPI: a Request with one fanout list on a heterogeneous
// store samples with that list for every relation; Neighbors returns a
// node's relation rows concatenated.
func TestHeteroUntypedAPI(t *testing.T) {
	f := newHeteroFixture(t)
	R := int64(f.d.Schema.NumRels())
	for _, tr := range transports() {
		g := f.openGraph(t, f.part, tr)
		s := NewSampler(g)
		t.Run(tr, func(t *testing.T) {
			seedsG, seedsO := f.owned(heteroWanted(f.d)[0])
			base := sample.Key{Seed: 4}
			got, err := s.Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: []int{3, 2}, Key: base})
			require.NoError(t, err)
			want, err := sample.HeteroReferenceBlocks(f.d, seedsO, sample.UniformRelFanouts([]int{3, 2}, int(R)), base, false)
			require.NoError(t, err)
			f.sameBlocks(t, got, want)

			nodes := []int64{f.newID[70], f.newID[0], f.newID[152]}
			off, glob, orig, err := g.Neighbors(nodes)
			require.NoError(t, err)
			for i, v := range []int64{70, 0, 152} {
				var wantO []int64
				for r := range R {
					wantO = append(wantO, f.d.In.Neighbors(v*R+r)...)
				}
				gotO := orig[off[i]:off[i+1]]
				assert.Equal(t, len(wantO), len(gotO), "node %d", v)
				assert.True(t, slices.Equal(wantO, gotO), "node %d: %v want %v", v, gotO, wantO)
				for j, u := range glob[off[i]:off[i+1]] {
					assert.Equal(t, f.origOf(u), gotO[j])
				}
			}
		})
	}
}

// TestHomogeneousSampleRelEqualsSample: on a homogeneous store a Request
// with a one-relation plan draws exactly the blocks of the same fanouts
// (Etype nil), on every transport: the typed layer loop reduces to the
// node loop for R = 1.
func TestHomogeneousSampleRelEqualsSample(t *testing.T) {
	f := newFixture(t, false, false)
	x := sample.NewEdgeSet([]int64{12, 17, 42, 250}, []int64{3, 100, 17, 10})
	all := make([]int64, testNodes)
	for v := range all {
		all[v] = int64(v)
	}
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0)
		for _, ex := range []*sample.EdgeSet{nil, x} {
			t.Run(fmt.Sprintf("%s/exclude %d", tr, ex.Len()), func(t *testing.T) {
				s.sampler.SetExclude(ex)
				defer s.sampler.SetExclude(nil)
				seedsG, seedsO := ownedSeeds(f.part, all)
				base := sample.Key{Seed: 7, Epoch: 1, Batch: 2}
				var st1, st2 sample.SampleStats
				want, err := s.Sampler().Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: []int{4, -1, 3}, Key: base, Replace: true, Stats: &st1})
				require.NoError(t, err)
				got, err := s.Sampler().Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Rel: sample.UniformRelFanouts([]int{4, -1, 3}, 1), Key: base, Replace: true, Stats: &st2})
				require.NoError(t, err)
				require.Equal(t, len(want), len(got))
				for l := range got {
					assert.Nil(t, got[l].Etype)
					assert.Equal(t, want[l], got[l], "layer %d", l)
				}
				assert.Equal(t, st1.Edges(), st2.Edges())
				assert.Equal(t, st1.Excluded, st2.Excluded)
			})
		}
	}
}

// TestHeteroBadInput: bad fanouts and bad seeds are one clear error on the
// rank that has them, and the other ranks do not hang; a heterogeneous
// part with node-sized adjacency rows does not open.
func TestHeteroBadInput(t *testing.T) {
	f := newHeteroFixture(t)
	for _, tr := range transports() {
		g := f.openGraph(t, f.part, tr)
		s := NewSampler(g)
		t.Run(tr, func(t *testing.T) {
			_, err := s.Sample(Request{Rel: sample.UniformRelFanouts([]int{2}, 4)})
			assert.ErrorContains(t, err, "hop 0 has 4 fanouts for 5 relations")
			// Only the last rank passes a bad seed; everyone still returns.
			var seeds []int64
			if f.c.Rank() == f.c.Size()-1 {
				seeds = []int64{f.d.NumNodes()}
			}
			_, err = s.Sample(Request{Seeds: seeds, SeedsOrig: seeds, Rel: sample.UniformRelFanouts([]int{2, 2}, 5)})
			if seeds != nil {
				assert.ErrorContains(t, err, "outside [0,156)")
			} else {
				assert.NoError(t, err)
			}
		})
	}
	bad := *f.part
	if f.c.Rank() == 0 {
		bad.Indptr = bad.Indptr[:bad.NumOwned()+1]
	}
	_, err := openGraphNamed(f.c, &bad, "rma")
	if f.c.Rank() == 0 {
		assert.ErrorContains(t, err, "x 5 relations")
	} else {
		assert.ErrorContains(t, err, "another rank could not open")
	}
	badMeta := *f.part.Meta
	badMeta.Hetero = &partition.HeteroMeta{NodeTypes: []string{"b", "a"}, NodeOrig: []int64{0, 1, 2}, Relations: []string{"a___x___b"}}
	bad = *f.part
	bad.Meta = &badMeta
	_, err = openGraphNamed(f.c, &bad, "alltoallv")
	assert.ErrorContains(t, err, "hetero meta")
}
