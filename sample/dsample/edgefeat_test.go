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

// efRow is the feature row the edge-feature fixture gives edge u -> v
// (original ids): a function of the edge, so every block's rows can be
// checked on any rank count.
func efRow(u, v int64) []float32 { return []float32{float32(u), float32(v) + 0.5, float32(u ^ v)} }

// newEdgeFeatFixture is newFixture's graph with edge features (efRow),
// partitioned with them.
func newEdgeFeatFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	P := c.Size()
	d := sampletest.Dataset(testNodes, nil)
	d.EdgeFeat = &graph.Features{Dim: 3}
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			d.EdgeFeat.Data = append(d.EdgeFeat.Data, efRow(u, v)...)
		}
	}
	parts := writeParts(t, c, func(dir string) error {
		_, err := partition.Write(dir, d, testAssign(testNodes, P), P, partition.Options{Method: partition.MethodRandom, EdgeFeat: true})
		return err
	})
	return &fixture{d: d, c: c, parts: parts, part: parts[c.Rank()]}
}

// checkEdgeFeat checks that every edge of every block carries its efRow.
func checkEdgeFeat(t *testing.T, rank int, bs []sample.Block) {
	t.Helper()
	for l, b := range bs {
		require.Equal(t, 3, b.EdgeFeatDim, "rank %d layer %d", rank, l)
		require.Len(t, b.EdgeFeat, 3*b.NumEdges(), "rank %d layer %d", rank, l)
		for i := range b.NumDst {
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				u, v := b.Orig[b.Indices[e]], b.Orig[i]
				if !slices.Equal(efRow(u, v), b.EdgeFeat[3*e:3*e+3]) {
					t.Errorf("rank %d layer %d: edge %d -> %d carries %v, want %v", rank, l, u, v, b.EdgeFeat[3*e:3*e+3], efRow(u, v))
					return
				}
			}
		}
	}
}

// TestEdgeFeatSampling: on every transport, the blocks sampled over a
// partition with edge features are the reference's, and every sampled
// edge, own or remote, carries its own feature row; with seed edges
// excluded and with temporal sampling too.
func TestEdgeFeatSampling(t *testing.T) {
	f := newEdgeFeatFixture(t)
	rank := f.c.Rank()
	base := sample.Key{Seed: 3, Epoch: 1, Batch: 2}
	for _, tr := range transports() {
		g, err := openGraphNamed(f.c, f.part, tr)
		require.NoError(t, err)
		require.Equal(t, 3, g.EdgeFeatDim())
		s := NewSampler(g)
		seedsG, seedsO := ownedSeeds(f.part, wantedSeeds())
		for _, tc := range []struct {
			fanouts []int
			replace bool
		}{{[]int{3, 2}, false}, {[]int{5, -1, 4}, true}, {[]int{-1, 70}, false}} {
			t.Run(fmt.Sprintf("%s/%v/replace=%t", tr, tc.fanouts, tc.replace), func(t *testing.T) {
				var st sample.SampleStats
				got, err := s.Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: tc.fanouts, Key: base, Replace: tc.replace, Stats: &st})
				require.NoError(t, err)
				want, err := sample.ReferenceBlocks(f.d, seedsO, tc.fanouts, base, tc.replace)
				require.NoError(t, err)
				sameBlocks(t, rank, f.origOf, got, want)
				checkEdgeFeat(t, rank, got)
				require.NoError(t, sample.ValidateBlocks(got))
				remote, err := collectives.AllreduceScalar(f.c, st.RemoteEdges, collectives.Sum)
				require.NoError(t, err)
				if f.c.Size() > 1 {
					assert.Positive(t, remote, "no remote edge: the remote rows' features were not tested")
				}
			})
		}
		t.Run(tr+"/excluded seed edges", func(t *testing.T) {
			// Every seed's first in-edges are kept out (all ranks pass the
			// same set): the kept edges must keep their own rows.
			var xs, xd []int64
			for _, v := range wantedSeeds() {
				nb := f.d.In.Neighbors(v)
				for _, u := range nb[:min(len(nb), 2)] {
					xs, xd = append(xs, u), append(xd, v)
				}
			}
			x := sample.NewEdgeSet(xs, xd)
			s.SetExclude(x)
			defer s.SetExclude(nil)
			var st sample.SampleStats
			got, err := s.Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: []int{-1, 4}, Key: base, Stats: &st})
			require.NoError(t, err)
			ref := &sample.Reference{G: sample.CSRGraph{In: f.d.In}, Exclude: x}
			want, err := ref.Sample(seedsO, seedsO, []int{-1, 4}, base, false)
			require.NoError(t, err)
			sameBlocks(t, rank, f.origOf, got, want)
			checkEdgeFeat(t, rank, got)
			n, err := collectives.AllreduceScalar(f.c, st.Excluded, collectives.Sum)
			require.NoError(t, err)
			assert.Positive(t, n, "nothing was excluded: the test proves nothing")
		})
		require.NoError(t, g.Close())
	}
}

// TestEdgeFeatTemporal: temporal sampling over a partition with edge
// features carries them as well, on every transport.
func TestEdgeFeatTemporal(t *testing.T) {
	f := newEdgeFeatFixture(t)
	ts := withSynthTimes(f.parts, f.d.In, 1)
	ref := &sample.HeteroReference{G: sample.TimedCSR{In: f.d.In, Time: ts}}
	newID := func(o int64) int64 {
		for _, p := range f.parts {
			if i := slices.Index(p.Orig, o); i >= 0 {
				return p.Lo + int64(i)
			}
		}
		return -1
	}
	tp := sample.Temporal{Strategy: sample.TemporalUniform}
	ref.Temporal = tp
	fan := sample.RelFanouts{{4}, {-1}}
	base := sample.Key{Seed: 5, Epoch: 1, Batch: 3}
	for _, tr := range transports() {
		g, err := openGraphNamed(f.c, f.part, tr)
		require.NoError(t, err)
		s := NewSampler(g)
		require.NoError(t, s.SetTemporal(tp))
		t.Run(tr, func(t *testing.T) {
			sg, so, st := temporalSeeds(newID, f.part.Lo, f.part.Hi, wantedSeeds())
			got, err := s.Sample(Request{Seeds: sg, SeedsOrig: so, Times: st, Rel: fan, Key: base})
			require.NoError(t, err)
			want, err := ref.SampleRelAt(so, so, st, fan, base, false)
			require.NoError(t, err)
			sameBlocks(t, f.c.Rank(), f.origOf, got, want)
			sameTimes(t, f.c.Rank(), got, want)
			checkEdgeFeat(t, f.c.Rank(), got)
			require.NoError(t, sample.ValidateBlocks(got))
		})
		require.NoError(t, g.Close())
	}
}

// TestEdgeFeatShared: on shared partitions (partition.LoadRange: the
// ranks of a pretend node each hold a share of its part), every sampled
// edge carries its own row too: rows of the node's part from the shared
// memory, the others through the transport. On 4 ranks or more (even) the
// parts are those of 2-rank nodes, so both kinds occur; on 2 or 3 ranks one
// part is shared by all. It needs 2 ranks or more.
func TestEdgeFeatShared(t *testing.T) {
	c, err := collectives.NewComm()
	require.NoError(t, err)
	P := c.Size()
	if P < 2 {
		t.Skip("a shared partition needs 2 ranks or more")
	}
	parts, nodeRanks := 1, P
	if P >= 4 && P%2 == 0 {
		parts, nodeRanks = P/2, 2
	}
	require.NoError(t, c.SetNodeRanks(nodeRanks))
	d := sampletest.Dataset(testNodes, nil)
	d.EdgeFeat = &graph.Features{Dim: 3}
	for v := range d.NumNodes {
		for _, u := range d.In.Neighbors(v) {
			d.EdgeFeat.Data = append(d.EdgeFeat.Data, efRow(u, v)...)
		}
	}
	var dir []byte
	if c.Rank() == 0 {
		p := t.TempDir() + "/parts"
		_, werr := partition.Write(p, d, testAssign(testNodes, parts), parts, partition.Options{Method: partition.MethodRandom, EdgeFeat: true})
		require.NoError(t, werr)
		dir = []byte(p)
	}
	n, err := collectives.AllreduceScalar(c, int64(len(dir)), collectives.Max)
	require.NoError(t, err)
	dir = append(dir, make([]byte, int(n)-len(dir))...)
	require.NoError(t, collectives.Bcast(c, dir, 0))
	m, err := partition.LoadMeta(string(dir))
	require.NoError(t, err)
	newID := make(map[int64]int64)
	orig := make([]int64, testNodes)
	for q := range parts {
		w, err := partition.LoadWithMeta(string(dir), m, q)
		require.NoError(t, err)
		for i, o := range w.Orig {
			newID[o], orig[w.Lo+int64(i)] = w.Lo+int64(i), o
		}
	}
	part, err := OpenPart(c, string(dir))
	require.NoError(t, err)
	require.NotNil(t, part.Meta.Shared)
	var seedsG, seedsO []int64
	for _, o := range wantedSeeds() {
		if g := newID[o]; g >= part.Lo && g < part.Hi {
			seedsG, seedsO = append(seedsG, g), append(seedsO, o)
		}
	}
	base := sample.Key{Seed: 9, Epoch: 1, Batch: 1}
	for _, tr := range transports() {
		g, err := openGraphNamed(c, part, tr)
		require.NoError(t, err)
		t.Run(tr, func(t *testing.T) {
			var st sample.SampleStats
			got, err := NewSampler(g).Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: []int{4, -1}, Key: base, Stats: &st})
			require.NoError(t, err)
			want, err := sample.ReferenceBlocks(d, seedsO, []int{4, -1}, base, false)
			require.NoError(t, err)
			sameBlocks(t, c.Rank(), func(g int64) int64 { return orig[g] }, got, want)
			checkEdgeFeat(t, c.Rank(), got)
			remote, err := collectives.AllreduceScalar(c, st.RemoteEdges, collectives.Sum)
			require.NoError(t, err)
			if parts > 1 {
				assert.Positive(t, remote, "no edge from another node: the transport's rows were not tested")
			}
		})
		require.NoError(t, g.Close())
	}
	require.NoError(t, c.Barrier()) // rank 0's directory outlives every rank's reads
}

// TestNoEdgeFeat: a store opened with NoEdgeFeat over a partition with
// edge features serves none (no array, no fetch: fewer bytes read) and
// samples the same blocks otherwise, on every transport; ReleasePart drops
// the partition's copy of the features either way.
func TestNoEdgeFeat(t *testing.T) {
	f := newEdgeFeatFixture(t)
	rank := f.c.Rank()
	seedsG, seedsO := ownedSeeds(f.part, wantedSeeds())
	key := sample.Key{Seed: 5, Epoch: 2, Batch: 1}
	for _, tr := range []collectives.Transport{collectives.TransportAuto, collectives.TransportAlltoallv} {
		t.Run(tr.String(), func(t *testing.T) {
			var blocks [2][]sample.Block
			var bytes [2]int64
			for i, skip := range []bool{false, true} {
				p := *f.part // ReleasePart clears the copy's fields only
				s, err := OpenStore(f.c, &p, StoreOptions{Transport: tr, NoEdgeFeat: skip, ReleasePart: true})
				require.NoError(t, err)
				assert.Nil(t, p.EdgeFeat, "released")
				want := 3
				if skip {
					want = 0
				}
				require.Equal(t, want, s.Graph().EdgeFeatDim())
				var st sample.SampleStats
				blocks[i], err = s.Sampler().Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: []int{4, -1}, Key: key, Stats: &st})
				require.NoError(t, err)
				bytes[i] = st.Bytes
				require.NoError(t, s.Close())
			}
			checkEdgeFeat(t, rank, blocks[0])
			total := func(v int64) int64 {
				s, err := collectives.AllreduceScalar(f.c, v, collectives.Sum)
				require.NoError(t, err)
				return s
			}
			if f.c.Size() > 1 {
				assert.Less(t, total(bytes[1]), total(bytes[0]), "no edge feature rows read")
			}
			require.Len(t, blocks[1], len(blocks[0]))
			for l := range blocks[0] {
				with, without := blocks[0][l], blocks[1][l]
				assert.Nil(t, without.EdgeFeat, "layer %d", l)
				assert.Zero(t, without.EdgeFeatDim, "layer %d", l)
				with.EdgeFeat, with.EdgeFeatDim = nil, 0
				assert.Equal(t, with, without, "rank %d layer %d", rank, l)
			}
		})
	}
}
