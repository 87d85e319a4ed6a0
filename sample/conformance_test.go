package sample_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"mpignn/sample"
	"mpignn/sample/sampletest"
)

// TestReferenceConformance runs the shared conformance test on the
// single-process sampler, once with a fresh Reference per call and once
// with one Reference reused across all cases (its scratch buffers must not
// leak between calls).
func TestReferenceConformance(t *testing.T) {
	d := sampletest.Dataset(400, nil)
	identity := func(v int64) int64 { return v }
	own := func(wanted []int64) (global, orig []int64) { return slices.Clone(wanted), slices.Clone(wanted) }
	cases := []struct {
		name    string
		sampler func() excluder
	}{
		{"reused", func() excluder { return &reference{sample.Reference{G: sample.CSRGraph{In: d.In}}} }},
		{"fresh per call", func() excluder { return &freshReference{g: sample.CSRGraph{In: d.In}} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.sampler()
			cov := sampletest.Conformance(t, d, sampletest.Subject{
				Sampler: s, NumNodes: d.NumNodes, Own: own, Orig: identity, Exclude: s.setExclude,
			})
			// One process sees every destination: all corner cases occur.
			assert.Positive(t, cov.Degree0, "no degree-0 destination was checked")
			assert.Positive(t, cov.Capped, "no destination had more neighbors than its fanout")
			assert.Greater(t, cov.Edges, int64(1000))
			assert.Positive(t, cov.Excluded, "no chosen edge was excluded")
		})
	}
}

// TestReferenceSeedEdgeExclusion: over many random link-prediction steps,
// no seed edge (either direction) is sampled, and the blocks equal the
// naive sampler's.
func TestReferenceSeedEdgeExclusion(t *testing.T) {
	d := sampletest.Dataset(400, nil)
	r := &reference{sample.Reference{G: sample.CSRGraph{In: d.In}}}
	cov := sampletest.SeedEdgeExclusion(t, d, sampletest.Subject{
		Sampler:  r,
		NumNodes: d.NumNodes,
		Own:      func(wanted []int64) (global, orig []int64) { return slices.Clone(wanted), slices.Clone(wanted) },
		Orig:     func(v int64) int64 { return v },
		Exclude:  r.setExclude,
	}, 60)
	assert.Positive(t, cov.Excluded, "no seed edge was ever chosen: the test proves nothing")
}

// excluder is a Sampler whose exclusion set can be changed.
type excluder interface {
	sample.Sampler
	setExclude(x *sample.EdgeSet)
}

// reference is one Reference reused across calls.
type reference struct{ sample.Reference }

func (r *reference) setExclude(x *sample.EdgeSet) { r.Exclude = x }

// freshReference samples with a new Reference per call (SampleBlocks when
// nothing is excluded).
type freshReference struct {
	g sample.Graph
	x *sample.EdgeSet
}

func (f *freshReference) setExclude(x *sample.EdgeSet) { f.x = x }

func (f *freshReference) Sample(seedsGlobal, seedsOrig []int64, fanouts []int, base sample.Key, replace bool) ([]sample.Block, error) {
	if f.x == nil {
		return sample.SampleBlocks(f.g, seedsGlobal, seedsOrig, fanouts, base, replace)
	}
	r := sample.Reference{G: f.g, Exclude: f.x}
	return r.Sample(seedsGlobal, seedsOrig, fanouts, base, replace)
}
