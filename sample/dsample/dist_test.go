package dsample

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// wantedSeeds mixes degree-0 nodes (0..9), hubs (10..14) and ordinary ones.
func wantedSeeds() []int64 { return []int64{3, 12, 17, 42, 10, 250, 399, 0, 123} }

func TestDistributedEqualsReference(t *testing.T) {
	f := newFixture(t, false, false)
	cases := []struct {
		name    string
		fanouts []int
		replace bool
	}{
		{"fanout 3,2", []int{3, 2}, false},
		{"fanout 5,-1,4 replace", []int{5, -1, 4}, true},
		{"fanout -1,50 (above hub degree)", []int{-1, 70}, false},
	}
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0)
		for _, tc := range cases {
			t.Run(tr+"/"+tc.name, func(t *testing.T) {
				seedsG, seedsO := ownedSeeds(f.part, wantedSeeds())
				base := sample.Key{Seed: 7, Epoch: 2, Batch: 5}
				var st sample.SampleStats
				got, err := s.Sampler().Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: tc.fanouts, Key: base, Replace: tc.replace, Stats: &st})
				if err != nil {
					t.Fatal(err)
				}
				want, err := sample.ReferenceBlocks(f.d, seedsO, tc.fanouts, base, tc.replace)
				if err != nil {
					t.Fatal(err)
				}
				if err := sample.ValidateBlocks(got); err != nil {
					t.Fatal(err)
				}
				checkSameBlocks(t, f, got, want)
				// (errors are reported; the collectives below still run)

				// The canonical text of all ranks equals the reference on
				// all seeds at once, whatever the number of ranks.
				text, err := GatherText(f.c, got)
				if err != nil {
					t.Fatal(err)
				}
				all := slices.Sorted(slices.Values(wantedSeeds()))
				ref, err := sample.ReferenceBlocks(f.d, all, tc.fanouts, base, tc.replace)
				if err != nil {
					t.Fatal(err)
				}
				wantText, err := sample.CanonicalText(sample.EdgeRecords(ref, nil), len(ref))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(text, wantText) {
					t.Fatalf("canonical text differs from the reference:\n%s\nwant\n%s", text, wantText)
				}
				// With several ranks the remote path must have been used.
				remote, err := collectives.AllreduceScalar(f.c, st.RemoteEdges, collectives.Sum)
				if err != nil {
					t.Fatal(err)
				}
				if f.c.Size() > 1 && remote == 0 {
					t.Fatalf("no edge was sampled from a remote node on %d ranks", f.c.Size())
				}
				if st.Edges() != int64(sumEdges(got)) {
					t.Fatalf("stats count %d edges, blocks hold %d", st.Edges(), sumEdges(got))
				}
			})
		}
	}
}

func sumEdges(bs []sample.Block) int {
	n := 0
	for i := range bs {
		n += bs[i].NumEdges()
	}
	return n
}

// TestDistributedConformance runs the shared conformance test (the one the
// reference sampler passes) on the distributed sampler with each transport:
// every rank samples the seeds it owns.
func TestDistributedConformance(t *testing.T) {
	f := newFixture(t, false, false)
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0)
		t.Run(tr, func(t *testing.T) {
			ss := &statsSampler{s: s.Sampler()}
			cov := sampletest.Conformance(t, f.d, f.subject(s, ss))
			// Summed over the ranks, the corner cases must have occurred.
			sums := []int64{cov.Degree0, cov.Capped, cov.Edges, cov.Excluded}
			require.NoError(t, collectives.Allreduce(f.c, sums, collectives.Sum))
			assert.Positive(t, sums[0], "no degree-0 destination was checked")
			assert.Positive(t, sums[1], "no destination had more neighbors than its fanout")
			assert.Greater(t, sums[2], int64(1000))
			assert.Positive(t, sums[3], "no chosen edge was excluded")
			// Excluded edges are counted, and not as sampled edges.
			assert.Equal(t, cov.Excluded, ss.st.Excluded, "excluded edges counted on rank %d", f.c.Rank())
		})
	}
}

// TestDistributedSeedEdgeExclusion: over many random link-prediction
// steps (a global set of seed edges, the seeds split by owner), no seed edge
// is ever sampled in either direction, with every transport, and the blocks
// equal the naive single-process sampler's with the same set.
func TestDistributedSeedEdgeExclusion(t *testing.T) {
	f := newFixture(t, false, false)
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0)
		t.Run(tr, func(t *testing.T) {
			ss := &statsSampler{s: s.Sampler()}
			cov := sampletest.SeedEdgeExclusion(t, f.d, f.subject(s, ss), 40)
			assert.Equal(t, cov.Excluded, ss.st.Excluded, "excluded edges counted on rank %d", f.c.Rank())
			assert.Equal(t, cov.Edges, ss.st.Edges(), "sampled edges counted on rank %d", f.c.Rank())
			sums := []int64{cov.Excluded, ss.st.RemoteEdges}
			require.NoError(t, collectives.Allreduce(f.c, sums, collectives.Sum))
			assert.Positive(t, sums[0], "no seed edge was ever chosen: the test proves nothing")
			if f.c.Size() > 1 {
				assert.Positive(t, sums[1], "no edge was sampled from a remote node on %d ranks", f.c.Size())
			}
		})
	}
}

// subject is the conformance subject of store s sampling through ss: each
// rank samples the seeds it owns; the exclusion set goes to the store's sampler.
func (f *fixture) subject(s *Store, ss *statsSampler) sampletest.Subject {
	return sampletest.Subject{
		Sampler:  ss,
		NumNodes: s.part.Meta.NumNodes,
		Own:      func(wanted []int64) (global, orig []int64) { return ownedSeeds(f.part, wanted) },
		Orig:     f.origOf,
		Exclude:  s.sampler.SetExclude,
	}
}

// statsSampler is a sample.Sampler over the distributed Sampler that sums
// the counters of its calls.
type statsSampler struct {
	s  *Sampler
	st sample.SampleStats
}

func (ss *statsSampler) Sample(seedsGlobal, seedsOrig []int64, fanouts []int, base sample.Key, replace bool) ([]sample.Block, error) {
	return ss.s.Sample(Request{Seeds: seedsGlobal, SeedsOrig: seedsOrig, Fanouts: fanouts, Key: base, Replace: replace, Stats: &ss.st})
}

// TestGatherFeatures gathers every node of the graph (so local, halo,
// hot-cached and remote rows all occur) and compares with the original
// feature rows.
func TestGatherFeatures(t *testing.T) {
	for _, halo := range []bool{true, false} {
		f := newFixture(t, halo, false)
		for _, tr := range transports() {
			// 40 rows of hot cache.
			s := f.openStore(t, tr, float64(40*testDim*4)/(1<<20))
			// Both cache lookups: the slot map, and the binary search used
			// without one.
			for _, slots := range []bool{true, false} {
				if !slots {
					s.feat.tables[0].cacheSlot = nil
				} else if s.feat.tables[0].cacheSlot == nil && f.c.Size() > 1 && !nodeMemory(f.c, tr) {
					t.Fatal("no cache slot map on a small graph with cached rows")
				}
				t.Run(fmt.Sprintf("halo=%v/%s/slots=%v", halo, tr, slots), func(t *testing.T) {
					nodes := make([]int64, 0, testNodes)
					for g := int64(testNodes - 1); g >= 0; g-- {
						nodes = append(nodes, g)
					}
					var st GatherStats
					x, err := s.feat.Gather(NodeFeat(), nodes, nil, &st)
					if err != nil {
						t.Fatal(err)
					}
					for i, g := range nodes {
						o := f.origOf(g)
						if !slices.Equal(x[i*testDim:(i+1)*testDim], f.d.Feat.Row(o)) {
							t.Errorf("row of node %d (original %d): got %v want %v", g, o, x[i*testDim:(i+1)*testDim], f.d.Feat.Row(o))
							break
						}
					}
					if st.Rows() != testNodes || st.LocalRows != f.part.NumOwned() {
						t.Errorf("stats %+v: rows %d (want %d), local %d (want %d)", st, st.Rows(), testNodes, st.LocalRows, f.part.NumOwned())
					}
					node := nodeMemory(f.c, tr)
					if f.c.Size() > 1 {
						// In the node's memory every row is at hand: no
						// hot cache, and remote rows move no bytes.
						hot := st.CachedRows - st.HaloHits
						if st.RemoteRows == 0 || hot != int64(s.feat.HotCacheRows(NodeFeat())) || (hot == 0) != node || (halo && st.HaloHits == 0) {
							t.Errorf("stats %+v with %d hot rows: want remote, hot (none in node memory) and (with halo) halo rows", st, s.feat.HotCacheRows(NodeFeat()))
						}
						if want := st.RemoteRows * testDim * 4; st.Bytes != want && !(node && st.Bytes == 0) {
							t.Errorf("moved %d bytes for %d remote rows", st.Bytes, st.RemoteRows)
						}
					}
					// The same rows as views, with the same counters.
					var vst GatherStats
					views, buf, ok, err := s.feat.GatherViews(NodeFeat(), nodes, nil, nil, &vst)
					if err != nil || !ok {
						t.Fatalf("views: ok %v, error %v", ok, err)
					}
					if len(views) != len(nodes) || vst.Time <= 0 {
						t.Fatalf("%d views of %d nodes, time %v", len(views), len(nodes), vst.Time)
					}
					for i := range nodes {
						if !slices.Equal(views[i], x[i*testDim:(i+1)*testDim]) {
							t.Fatalf("view %d: %v, gathered %v", i, views[i], x[i*testDim:(i+1)*testDim])
						}
					}
					vst.Time, st.Time = 0, 0
					fetched := int(st.RemoteRows) * testDim
					if node {
						fetched = 0 // viewed in the node's memory
					}
					if vst != st || len(buf) != fetched {
						t.Errorf("views: stats %+v and %d fetched values, gather %+v", vst, len(buf), st)
					}
					// A bad node id is an error, but every rank still takes part
					// in the collective fetch.
					bad := []int64{0}
					if f.c.Rank() == 0 {
						bad = []int64{testNodes + 5}
					}
					_, err = s.feat.Gather(NodeFeat(), bad, nil, nil)
					if (err != nil) != (f.c.Rank() == 0) {
						t.Fatalf("gather of %v: error %v", bad, err)
					}
					_, _, _, err = s.feat.GatherViews(NodeFeat(), bad, views, buf, nil)
					if (err != nil) != (f.c.Rank() == 0) {
						t.Fatalf("views of %v: error %v", bad, err)
					}
				})
			}
		}
	}
}

// TestLoaderGlobalBatches: uneven training counts with one rank holding no
// training node still give the same step count everywhere, every step
// completes, and the union of the ranks' seeds of step k is step k of the
// one-process epoch with batch P·B, or with the options' GlobalBatch
// (17: divisible by no rank count above 1, so ranks' shares differ by
// more than the order of the seeds). Blocks, features and labels are
// checked against the unpartitioned graph.
func TestLoaderGlobalBatches(t *testing.T) {
	f := newFixture(t, false, true)
	P := f.c.Size()
	const B = 7
	sp := f.d.Splits["public"]
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0.001)
		for _, o := range []LoaderOptions{
			{Fanouts: []int{3, 2}, EvalFanouts: []int{-1, 2}, Batch: B, Seed: 5},
			{Fanouts: []int{3, 2}, EvalFanouts: []int{-1, 2}, GlobalBatch: 17, Seed: 5},
		} {
			G := o.GlobalSize(P)
			ld, err := NewLoader(s, o)
			if err != nil {
				t.Fatal(err)
			}
			if ld.GlobalBatch() != G {
				t.Fatalf("global batch %d, want %d", ld.GlobalBatch(), G)
			}
			for _, sc := range []struct {
				split string
				ids   []int64
				fan   []int
			}{{SplitTrain, sp.Train, o.Fanouts}, {SplitValid, sp.Valid, o.EvalFanouts}} {
				for epoch := range 2 {
					t.Run(fmt.Sprintf("%s/G=%d/%s/epoch%d", tr, G, sc.split, epoch), func(t *testing.T) {
						steps, err := ld.Steps(sc.split, epoch)
						if err != nil {
							t.Fatal(err)
						}
						all, err := collectives.Allgather(f.c, []int64{int64(steps)})
						if err != nil {
							t.Fatal(err)
						}
						want, err := sample.EpochBatches(o.Seed, epoch, sc.ids, G)
						if err != nil {
							t.Fatal(err)
						}
						for r, n := range all {
							if int(n) != len(want) {
								t.Fatalf("rank %d has %d steps, want %d", r, n, len(want))
							}
						}
						var out sample.Batch
						// Report, never stop: the remaining steps are collective.
						failed := false
						fail := func(format string, args ...any) {
							if !failed {
								t.Errorf(format, args...)
							}
							failed = true
						}
						for k := range steps {
							if err := ld.Batch(sc.split, epoch, k, &out); err != nil {
								t.Fatal(err)
							}
							got, _, err := collectives.Allgatherv(f.c, out.SeedsOrig)
							if err != nil {
								t.Fatal(err)
							}
							slices.Sort(got)
							w := slices.Sorted(slices.Values(want[k]))
							if !slices.Equal(got, w) || out.GlobalSeeds != len(w) {
								fail("step %d: seeds %v (global %d), want %v", k, got, out.GlobalSeeds, w)
							}
							ref, err := sample.ReferenceBlocks(f.d, out.SeedsOrig, sc.fan, sample.Key{Seed: o.Seed, Epoch: epoch, Batch: k}, false)
							if err != nil {
								fail("reference: %v", err)
								continue
							}
							if !failed && !checkSameBlocks(t, f, out.Blocks, ref) {
								failed = true
							}
							b0 := &out.Blocks[0]
							if len(out.X) != len(b0.Nodes)*testDim {
								fail("step %d: %d features for %d nodes", k, len(out.X), len(b0.Nodes))
								continue
							}
							if len(out.Labels) != len(out.SeedsOrig) {
								fail("step %d: %d labels for %d seeds", k, len(out.Labels), len(out.SeedsOrig))
								continue
							}
							for i, v := range b0.Orig {
								if !slices.Equal(out.X[i*testDim:(i+1)*testDim], f.d.Feat.Row(v)) {
									fail("step %d: features of node %d wrong", k, v)
								}
							}
							for i, v := range out.SeedsOrig {
								if out.Labels[i] != f.d.Labels[v] {
									fail("step %d: label of node %d is %d, want %d", k, v, out.Labels[i], f.d.Labels[v])
								}
							}
						}
					})
				}
			}
			if P > 1 && f.c.Rank() == P-1 {
				if n, _, _ := ld.StepSeeds(SplitTrain, 0, 0); len(n) != 0 {
					t.Fatalf("last rank has training seeds %v, fixture wants none", n)
				}
			}
		}
	}
}

// TestOpenStoreRejects: a bad partition on one rank (or a part count that
// does not match the world) fails OpenStore on EVERY rank, with no hang.
func TestOpenStoreRejects(t *testing.T) {
	f := newFixture(t, false, false)
	for _, tc := range []struct {
		name string
		edit func(p *partitionCopy)
	}{
		{"part count", func(p *partitionCopy) { p.meta.NumParts++ }},
		{"short features on rank 0", func(p *partitionCopy) {
			if f.c.Rank() == 0 {
				p.part.Feat = p.part.Feat[:len(p.part.Feat)-1]
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := copyPart(f)
			tc.edit(pc)
			s, err := OpenStore(f.c, pc.part, StoreOptions{Transport: collectives.TransportAlltoallv})
			if err == nil {
				s.Close()
				t.Fatal("bad partition accepted")
			}
		})
	}
}

// TestSampleBadSeedsNoHang: bad seeds on rank 0 (out of range, or repeated)
// fail there, while the other ranks finish normally: the failing rank still
// makes every transport call.
func TestSampleBadSeedsNoHang(t *testing.T) {
	f := newFixture(t, false, false)
	p := f.part
	for _, tr := range transports() {
		s := f.openStore(t, tr, 0)
		for _, bad := range [][]int64{{testNodes + 3}, {p.Lo, p.Lo}} {
			t.Run(fmt.Sprintf("%s/%v", tr, bad), func(t *testing.T) {
				seedsG := []int64{p.Lo}
				if f.c.Rank() == 0 {
					seedsG = bad
				}
				seedsO := make([]int64, len(seedsG))
				for i, g := range seedsG {
					if g < testNodes {
						seedsO[i] = f.origOf(g)
					}
				}
				_, err := s.Sampler().Sample(Request{Seeds: seedsG, SeedsOrig: seedsO, Fanouts: []int{2, 2}, Key: sample.Key{Seed: 1}})
				if (err != nil) != (f.c.Rank() == 0) {
					t.Fatalf("rank %d: error %v", f.c.Rank(), err)
				}
			})
		}
	}
}
