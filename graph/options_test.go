package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOptionsValidate: each options type refuses what its door cannot use,
// and its door (ReadOGB, ReadOGBHetero, ConvertToChunked, Download) refuses
// it before touching the disk or the network.
func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    interface{ Validate() error }
		want string // "" = valid
	}{
		{"read ok", ReadOptions{Splits: []string{"time"}, LinkSplits: []string{"edges"}}, ""},
		{"read classes", ReadOptions{NumClasses: -1}, "NumClasses -1 must not be negative"},
		{"read split path", ReadOptions{Splits: []string{"../x"}}, `Splits names "../x"`},
		{"read empty link split", ReadOptions{LinkSplits: []string{""}}, `LinkSplits names ""`},
		{"read split twice", ReadOptions{Splits: []string{"a"}, LinkSplits: []string{"a"}}, `split "a" is in Splits and LinkSplits`},
		{"hetero read ok", HeteroReadOptions{Reverse: true, NoReverse: []string{"a___r___b"}}, ""},
		{"hetero no reverse alone", HeteroReadOptions{NoReverse: []string{"a___r___b"}}, "without Reverse has no effect"},
		{"hetero split path", HeteroReadOptions{Splits: []string{"a/b"}}, `Splits names "a/b"`},
		{"convert ok", ConvertOptions{}, ""},
		{"convert negative", ConvertOptions{ChunkEdges: -1}, "chunk sizes 0 nodes and -1 edges must not be negative"},
		{"download default", DownloadOptions{}, ""},
		{"download mirror", DownloadOptions{URL: "https://example.org/x.zip"}, ""},
		{"download no scheme", DownloadOptions{URL: "example.org/x.zip"}, "want an http:// or https:// address"},
		{"gen defaults", DefaultGenOptions(), ""},
		{"gen zero sizes", GenOptions{}, "classes 0 must be at least 1"},
		{"hetero gen defaults", HeteroGenOptions{}, ""},
		{"hetero gen classes", HeteroGenOptions{Classes: -1}, "classes -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.Validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
	_, err := ReadOGB(t.TempDir(), ReadOptions{NumClasses: -1})
	assert.ErrorContains(t, err, "NumClasses -1", "ReadOGB validates before it looks at the directory")
	_, err = ReadOGBHetero(t.TempDir(), HeteroReadOptions{NoReverse: []string{"x"}})
	assert.ErrorContains(t, err, "without Reverse")
	assert.ErrorContains(t, ConvertToChunked(t.TempDir(), t.TempDir(), ConvertOptions{ChunkNodes: -2}), "must not be negative")
}

// TestDefaultGenOptionsAreGenerates: the defaults Generate fills in are
// DefaultGenOptions' (one source for the library and the gen flags).
func TestDefaultGenOptionsAreGenerates(t *testing.T) {
	d := DefaultGenOptions()
	o := GenOptions{Nodes: 1000, AvgDegree: 4, Classes: 3, FeatDim: 2}
	require.NoError(t, o.Fill())
	assert.Equal(t, []float64{d.Homophily, d.FeatSep, d.PowerLaw}, []float64{o.Homophily, o.FeatSep, o.PowerLaw})
	assert.Equal(t, [3]int64{600, 200, 200}, [3]int64{o.Train, o.Valid, o.Test}, "the default fractions 0.6 and 0.2")
	dh := DefaultHeteroGenOptions()
	h := HeteroGenOptions{Papers: 100, Authors: 100, Institutions: 10, Fields: 10, Cites: 200, Writes: 200, Affiliations: 50, Topics: 100, Classes: 5}
	require.NoError(t, h.Fill())
	assert.Equal(t, []float64{dh.Homophily, dh.FeatSep, dh.PowerLaw, dh.TrainFrac, dh.ValidFrac}, []float64{h.Homophily, h.FeatSep, h.PowerLaw, h.TrainFrac, h.ValidFrac})
	assert.Equal(t, dh.FeatDim, h.FeatDim)
	assert.Equal(t, MagClasses, dh.Classes)
}
