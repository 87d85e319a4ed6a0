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
		sampler func() sample.Sampler
	}{
		{"reused", func() sample.Sampler { return &sample.Reference{G: sample.CSRGraph{In: d.In}} }},
		{"fresh per call", func() sample.Sampler { return freshReference{g: sample.CSRGraph{In: d.In}} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cov := sampletest.Conformance(t, d, sampletest.Subject{
				Sampler: tc.sampler(), NumNodes: d.NumNodes, Own: own, Orig: identity,
			})
			// One process sees every destination: all corner cases occur.
			assert.Positive(t, cov.Degree0, "no degree-0 destination was checked")
			assert.Positive(t, cov.Capped, "no destination had more neighbors than its fanout")
			assert.Greater(t, cov.Edges, int64(1000))
		})
	}
}

// freshReference samples with SampleBlocks, a new Reference per call.
type freshReference struct{ g sample.Graph }

func (f freshReference) Sample(seedsGlobal, seedsOrig []int64, fanouts []int, base sample.Key, replace bool) ([]sample.Block, error) {
	return sample.SampleBlocks(f.g, seedsGlobal, seedsOrig, fanouts, base, replace)
}
