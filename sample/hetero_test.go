package sample_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// TestFanoutPlan: a fanout setting is parsed once (ParseFanoutPlan, which
// judges the values) and resolved against a schema (Resolve, which judges
// the relation names).
func TestFanoutPlan(t *testing.T) {
	d := sampletest.HeteroDataset()
	s := d.Schema
	// Relations sorted by canonical name:
	// 0 author___writes___paper, 1 paper___cites___paper,
	// 2 paper___published_in___venue, 3 paper___rev_writes___author,
	// 4 venue___rev_published_in___paper.
	require.Equal(t, "paper___cites___paper", s.Relations[1].String())
	cases := []struct {
		name     string
		in       string
		hops     []int
		want     sample.RelFanouts
		parseErr string
		err      string // of Resolve
	}{
		{"one list for all", "15,10", []int{15, 10}, sample.RelFanouts{{15, 15, 15, 15, 15}, {10, 10, 10, 10, 10}}, "", ""},
		{"one list, all neighbours", " 3, -1", []int{3, -1}, sample.RelFanouts{{3, 3, 3, 3, 3}, {-1, -1, -1, -1, -1}}, "", ""},
		{"per relation with default", "paper___cites___paper=15,10; writes=5,5;*=2,1", []int{15, 10},
			sample.RelFanouts{{5, 15, 2, 2, 2}, {5, 10, 1, 1, 1}}, "", ""},
		{"all named", "author___writes___paper=1;cites=2;published_in=3;rev_writes=4;rev_published_in=-1", []int{-1},
			sample.RelFanouts{{1, 2, 3, 4, -1}}, "", ""},
		{"zero for a relation", "cites=0,2;*=0,1", []int{1, 2}, sample.RelFanouts{{0, 0, 0, 0, 0}, {1, 2, 1, 1, 1}}, "", ""},
		{"missing relation without default", "cites=15,10", []int{15, 10}, nil, "", "relation author___writes___paper has no fanout"},
		{"unknown relation", "likes=1;*=2", []int{2}, nil, "", "relation likes is not in the graph"},
		{"same relation by two names", "cites=1;paper___cites___paper=2;*=1", []int{2}, nil, "", "relation paper___cites___paper given twice"},
		{"bad integer", "cites=1,x;*=2,2", nil, nil, "relation cites: \"x\" is not an integer", ""},
		{"below -1", "cites=-2;*=1", nil, nil, "relation cites: hop 0 has fanout -2", ""},
		{"lengths disagree", "cites=1,2;*=1", nil, nil, "relation *: 1 fanouts, want 2", ""},
		{"duplicate", "cites=1;cites=2;*=1", nil, nil, "relation cites given twice", ""},
		{"default twice", "*=1;*=2", nil, nil, "default * given twice", ""},
		{"no name", "=1", nil, nil, "entry 0 \"=1\" is not relation=fanouts", ""},
		{"plain zero", "5,0", nil, nil, "layer 1 has fanout 0", ""},
		{"plain too large", "1073741825", nil, nil, "layer 0 has fanout 1073741825", ""},
		{"plain not an integer", "10,,5", nil, nil, "\"\" is not an integer", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sample.ParseFanoutPlan(tc.in)
			if tc.parseErr != "" {
				require.ErrorContains(t, err, tc.parseErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.hops, p.Hops)
			assert.Equal(t, strings.Contains(tc.in, "="), p.PerRelation())
			got, err := p.Resolve(s)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.NoError(t, got.Check(s.NumRels()))
		})
	}
	empty, err := sample.ParseFanoutPlan(" ")
	require.NoError(t, err, "an empty setting is the caller's default")
	assert.Zero(t, empty)
	assert.ErrorContains(t, empty.Validate(), "needs at least one layer")
	assert.ErrorContains(t, sample.FanoutPlan{Hops: []int{3}, Rels: []sample.RelFanout{{Name: "*", Hops: []int{2}}}}.Validate(),
		"hop 0 has fanout 3, but its widest relation list has 2")
}

func TestFanoutPlanAmbiguousName(t *testing.T) {
	s, err := graph.NewSchema(map[string]int64{"a": 1, "b": 1}, []graph.Relation{{Src: "a", Name: "x", Dst: "b"}, {Src: "b", Name: "x", Dst: "a"}})
	require.NoError(t, err)
	p, err := sample.ParseFanoutPlan("x=1")
	require.NoError(t, err)
	_, err = p.Resolve(s)
	require.ErrorContains(t, err, "relation x is ambiguous")
	_, err = sample.UniformPlan([]int{1}).Resolve(nil)
	require.ErrorContains(t, err, "no graph schema")
}

func TestRelFanoutsCheck(t *testing.T) {
	cases := []struct {
		name string
		f    sample.RelFanouts
		err  string
	}{
		{"ok", sample.RelFanouts{{1, 0, -1}}, ""},
		{"no hops", nil, "no hops"},
		{"short hop", sample.RelFanouts{{1, 2, 3}, {1}}, "hop 1 has 1 fanouts for 3 relations"},
		{"bad value", sample.RelFanouts{{1, -3, 0}}, "hop 0 relation 1 has fanout -3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f.Check(3)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

// TestHeteroReferenceReducesToReference: over a homogeneous graph (one
// relation, no schema) the typed sampler draws Reference's blocks exactly,
// Etype nil, with and without exclusion, and passes the shared conformance
// test.
func TestHeteroReferenceReducesToReference(t *testing.T) {
	d := sampletest.Dataset(400, nil)
	g := sample.CSRGraph{In: d.In}
	all := make([]int64, d.NumNodes)
	for v := range all {
		all[v] = int64(v)
	}
	excl := sample.NewEdgeSet([]int64{12, 17, 42, 250}, []int64{3, 100, 17, 10})
	cases := []struct {
		name    string
		seeds   []int64
		fanouts []int
		replace bool
		x       *sample.EdgeSet
	}{
		{"3,2", []int64{3, 12, 17, 42, 10, 250, 399, 0, 123}, []int{3, 2}, false, nil},
		{"5,-1,4 replace", []int64{3, 12, 17, 42, 10, 250}, []int{5, -1, 4}, true, nil},
		{"all nodes 4,3 excluded", all, []int{4, 3}, false, excl},
		{"no seeds", nil, []int{2}, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := sample.Key{Seed: 9, Epoch: 1, Batch: 3}
			ref := sample.Reference{G: g, Exclude: tc.x}
			want, err := ref.Sample(tc.seeds, tc.seeds, tc.fanouts, key, tc.replace)
			require.NoError(t, err)
			h := sample.HeteroReference{G: sample.HomoRel{G: g}, Exclude: tc.x}
			got, err := h.SampleRel(tc.seeds, tc.seeds, sample.UniformRelFanouts(tc.fanouts, 1), key, tc.replace)
			require.NoError(t, err)
			require.Equal(t, want, got)
			for l := range got {
				assert.Nil(t, got[l].Etype)
			}
		})
	}
	t.Run("conformance", func(t *testing.T) {
		h := &heteroRef{sample.HeteroReference{G: sample.HomoRel{G: g}}}
		cov := sampletest.Conformance(t, d, sampletest.Subject{
			Sampler: h, NumNodes: d.NumNodes,
			Own:     func(w []int64) (global, orig []int64) { return slices.Clone(w), slices.Clone(w) },
			Orig:    func(v int64) int64 { return v },
			Exclude: func(x *sample.EdgeSet) { h.Exclude = x },
		})
		assert.Positive(t, cov.Excluded)
	})
}

type heteroRef struct{ sample.HeteroReference }

// TestHeteroReference checks the typed reference's blocks against the
// heterogeneous graph: they validate with edge types; every edge exists in
// its relation's row; each (destination, relation) row holds exactly the
// fanout's number of edges (all for -1 or small rows, none for 0) and
// equals the positions that ChoosePositions picks under the row key
// orig*R+r; only relations into the destination's type appear.
func TestHeteroReference(t *testing.T) {
	d := sampletest.HeteroDataset()
	s := d.Schema
	R := int64(s.NumRels())
	all := make([]int64, d.NumNodes())
	for v := range all {
		all[v] = int64(v)
	}
	seeds := []int64{70, 3, 150, 61, 0, 155, 64, 100}
	for _, tc := range sampletest.HeteroCases() {
		for _, sd := range [][]int64{seeds, all} {
			t.Run(fmt.Sprintf("%s/%d seeds", tc.Name, len(sd)), func(t *testing.T) {
				key := sample.Key{Seed: 5, Epoch: 2, Batch: 1}
				blocks, err := sample.HeteroReferenceBlocks(d, sd, tc.Fanouts, key, tc.Replace)
				require.NoError(t, err)
				require.NoError(t, sample.ValidateBlocks(blocks))
				L := len(blocks)
				var edges int
				for l := range blocks {
					b := &blocks[l]
					require.NoError(t, b.ValidateRel(s.NumRels()))
					fan := tc.Fanouts[L-1-l]
					for i := range b.NumDst {
						v := b.Orig[i]
						byRel := map[int32][]int64{}
						for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
							byRel[b.Etype[e]] = append(byRel[b.Etype[e]], b.Orig[b.Indices[e]])
						}
						for r := range s.NumRels() {
							row := d.In.Neighbors(v*R + int64(r))
							got := byRel[int32(r)]
							if s.DstType(r) != s.TypeOf(v) {
								require.Empty(t, got, "relation %d into node %d of another type", r, v)
								continue
							}
							k := key
							k.Layer, k.Node = l, v*R+int64(r)
							var want []int64
							for _, p := range sample.ChoosePositions(k, int64(len(row)), fan[r], tc.Replace, nil) {
								want = append(want, row[p])
							}
							require.Equal(t, want, got, "layer %d node %d relation %d", l, v, r)
							switch {
							case fan[r] == 0 || len(row) == 0:
								require.Empty(t, got)
							case fan[r] < 0 || (!tc.Replace && fan[r] >= len(row)):
								require.Equal(t, row, got)
							default:
								require.Len(t, got, fan[r])
							}
							edges += len(got)
						}
					}
				}
				if tc.Name != "none" && len(sd) == len(all) {
					assert.Greater(t, edges, 500)
				}
			})
		}
	}
}

func TestHeteroReferenceErrors(t *testing.T) {
	d := sampletest.HeteroDataset()
	key := sample.Key{Seed: 1}
	_, err := sample.HeteroReferenceBlocks(d, []int64{d.NumNodes()}, sample.UniformRelFanouts([]int{2}, 5), key, false)
	assert.ErrorContains(t, err, "outside [0,156)")
	_, err = sample.HeteroReferenceBlocks(d, []int64{1}, sample.UniformRelFanouts([]int{2}, 4), key, false)
	assert.ErrorContains(t, err, "hop 0 has 4 fanouts for 5 relations")
	h := sample.HeteroReference{G: sample.HeteroCSR{D: d}}
	_, err = h.SampleRel([]int64{1}, nil, sample.UniformRelFanouts([]int{2}, 5), key, false)
	assert.ErrorContains(t, err, "1 seed ids but 0 original ids")
	_, err = h.SampleRel([]int64{1, 1}, []int64{1, 1}, sample.UniformRelFanouts([]int{2}, 5), key, false)
	assert.ErrorContains(t, err, "repeats destination")
}

func TestBlockBuilderTyped(t *testing.T) {
	var bb sample.BlockBuilder
	bb.SetTyped(true)
	require.NoError(t, bb.Reset([]int64{10, 20}, []int64{1, 2}))
	require.NoError(t, bb.AddNeighborsRel(0, 1, []int64{30, 20}, []int64{3, 2}))
	require.NoError(t, bb.AddNeighborsRel(0, 1, []int64{40}, []int64{4}))
	require.NoError(t, bb.AddNeighborsRel(0, 3, []int64{30}, []int64{3}))
	require.NoError(t, bb.AddNeighborsRel(1, 0, []int64{10}, []int64{1})) // a new destination restarts the order
	b := bb.Block()
	require.NoError(t, b.ValidateRel(4))
	assert.Equal(t, []int64{10, 20, 30, 40}, b.Nodes)
	assert.Equal(t, []int32{0, 4, 5}, b.Indptr)
	assert.Equal(t, []int32{2, 1, 3, 2, 0}, b.Indices)
	assert.Equal(t, []int32{1, 1, 1, 3, 0}, b.Etype)
	assert.ErrorContains(t, b.ValidateRel(3), "relation 3 outside [0,3)")

	// A typed block without edges still says it is typed.
	require.NoError(t, bb.Reset([]int64{1}, []int64{1}))
	assert.NotNil(t, bb.Block().Etype)

	require.NoError(t, bb.Reset([]int64{10, 20}, []int64{1, 2}))
	require.NoError(t, bb.AddNeighborsRel(0, 2, []int64{30}, []int64{3}))
	assert.ErrorContains(t, bb.AddNeighborsRel(0, 1, []int64{40}, []int64{4}), "relation 1 after relation 2")
	assert.ErrorContains(t, bb.AddNeighborsRel(1, -1, nil, nil), "relation -1 < 0")
	assert.ErrorContains(t, bb.AddNeighborsRel(1, 0, []int64{1}, nil), "1 neighbor ids but 0 original ids")
	assert.ErrorContains(t, bb.AddNeighbors(1, nil, nil), "untyped edges added to a typed block")

	bb.SetTyped(false)
	require.NoError(t, bb.Reset([]int64{10}, []int64{1}))
	assert.ErrorContains(t, bb.AddNeighborsRel(0, 0, nil, nil), "typed edges added to an untyped block")
	require.NoError(t, bb.AddNeighbors(0, []int64{5}, []int64{5}))
	assert.Nil(t, bb.Block().Etype)
}

func TestBlockValidateEtype(t *testing.T) {
	base := func() sample.Block {
		return sample.Block{NumDst: 2, Nodes: []int64{1, 2, 3}, Orig: []int64{1, 2, 3},
			Indptr: []int32{0, 2, 3}, Indices: []int32{1, 2, 0}, Etype: []int32{0, 2, 1}}
	}
	cases := []struct {
		name   string
		mutate func(b *sample.Block)
		err    string
	}{
		{"ok", func(*sample.Block) {}, ""},
		{"untyped", func(b *sample.Block) { b.Etype = nil }, ""},
		{"length", func(b *sample.Block) { b.Etype = b.Etype[:2] }, "2 edge types for 3 edges"},
		{"negative", func(b *sample.Block) { b.Etype[2] = -1 }, "relation -1"},
		{"not grouped", func(b *sample.Block) { b.Etype[0] = 3 }, "destination 0: relation 2 after relation 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			tc.mutate(&b)
			if tc.err == "" {
				assert.NoError(t, b.Validate())
			} else {
				assert.ErrorContains(t, b.Validate(), tc.err)
			}
		})
	}
	b := base()
	b.Etype = nil
	assert.ErrorContains(t, b.ValidateRel(3), "no edge types")
}

func TestCanonicalTextRel(t *testing.T) {
	d := sampletest.HeteroDataset()
	names := make([]string, d.Schema.NumRels())
	for r, rel := range d.Schema.Relations {
		names[r] = rel.String()
	}
	f := sample.RelFanouts{{2, 3, 1, 2, 2}, {-1, 1, 1, 1, 1}}
	key := sample.Key{Seed: 3}
	all, err := sample.HeteroReferenceBlocks(d, []int64{70, 3, 150, 61}, f, key, false)
	require.NoError(t, err)
	want, err := sample.CanonicalTextRel(sample.EdgeRecordsRel(all, nil), 2, names)
	require.NoError(t, err)
	// Sampled in two halves, the records merge to the same text.
	a, err := sample.HeteroReferenceBlocks(d, []int64{70, 3}, f, key, false)
	require.NoError(t, err)
	b, err := sample.HeteroReferenceBlocks(d, []int64{150, 61}, f, key, false)
	require.NoError(t, err)
	got, err := sample.CanonicalTextRel(sample.EdgeRecordsRel(b, sample.EdgeRecordsRel(a, nil)), 2, names)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	lines := strings.Split(string(want), "\n")
	require.True(t, strings.HasPrefix(lines[0], "layer 0 dst "))
	assert.Regexp(t, `^\d+ \d+ \w+___\w+___\w+$`, lines[1])

	// A record of an untyped block, or a relation outside the names, is an error.
	_, err = sample.CanonicalTextRel([]int64{0, 5, 1, 7, -1}, 1, names)
	assert.ErrorContains(t, err, "relation -1 outside [0,5)")
	_, err = sample.CanonicalTextRel([]int64{0, 5, 2, 7, 1}, 1, names)
	assert.ErrorContains(t, err, "bad record")

	// Small exact example.
	txt, err := sample.CanonicalTextRel([]int64{0, 5, 3, 9, 1, 7, 1, 8, 0}, 1, []string{"a___x___b", "a___y___b"})
	require.NoError(t, err)
	assert.Equal(t, "layer 0 dst 1 edges 3\n5 8 a___x___b\n5 7 a___y___b\n5 9 a___y___b\n", string(txt))
}

// BenchmarkTypedVsHomogenized samples all nodes of the typed test graph
// with fanout 5,5 per relation, and the same graph homogenized (a node's
// relation rows merged) with 5,5 per node, reporting sampled edges/s.
func BenchmarkTypedVsHomogenized(b *testing.B) {
	d := sampletest.HeteroDataset()
	R := int64(d.Schema.NumRels())
	n := d.NumNodes()
	homo := &graph.CSR{Indptr: []int64{0}}
	for v := range n {
		var row []int64
		for r := range R {
			row = append(row, d.In.Neighbors(v*R+r)...)
		}
		slices.Sort(row)
		homo.Indices = append(homo.Indices, slices.Compact(row)...)
		homo.Indptr = append(homo.Indptr, int64(len(homo.Indices)))
	}
	all := make([]int64, n)
	for v := range all {
		all[v] = int64(v)
	}
	run := func(b *testing.B, draw func(k sample.Key) ([]sample.Block, error)) {
		edges := 0
		for i := range b.N {
			blocks, err := draw(sample.Key{Seed: 1, Batch: i})
			if err != nil {
				b.Fatal(err)
			}
			for l := range blocks {
				edges += blocks[l].NumEdges()
			}
		}
		b.ReportMetric(float64(edges)/b.Elapsed().Seconds(), "edges/s")
	}
	b.Run("typed", func(b *testing.B) {
		h := sample.HeteroReference{G: sample.HeteroCSR{D: d}}
		f := sample.UniformRelFanouts([]int{5, 5}, int(R))
		run(b, func(k sample.Key) ([]sample.Block, error) { return h.SampleRel(all, all, f, k, false) })
	})
	b.Run("homogenized", func(b *testing.B) {
		r := sample.Reference{G: sample.CSRGraph{In: homo}}
		run(b, func(k sample.Key) ([]sample.Block, error) { return r.Sample(all, all, []int{5, 5}, k, false) })
	})
}
