package train

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPyGEdgeDim: the spec of a model that reads edge features carries
// their width as PyG's edge_dim kwarg (and a note on edge_attr); one that
// reads none, or an architecture that reads none, gets neither.
func TestPyGEdgeDim(t *testing.T) {
	edgeArch := gatArch()
	edgeArch.EdgeFeatures = true
	for _, tc := range []struct {
		name    string
		arch    Arch
		edgeDim int
		want    any // nil: no edge_dim
	}{
		{"reads 8", edgeArch, 8, 8},
		{"reads none", edgeArch, 0, nil},
		{"arch reads none", gatArch(), 8, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := PyGModelSpec{Kwargs: map[string]any{"in_channels": 4}}
			pygEdgeDim(Config{Arch: tc.arch.Name, EdgeDim: tc.edgeDim}, tc.arch, &s)
			got, ok := s.Kwargs["edge_dim"]
			if tc.want == nil {
				assert.False(t, ok, "no edge_dim: %v", s.Kwargs)
				assert.Empty(t, s.Notes)
				return
			}
			assert.Equal(t, tc.want, got)
			require.Len(t, s.Notes, 1)
			assert.Contains(t, s.Notes[0], "edge_attr=E")
		})
	}
	// A built-in model without edge features exports as before.
	s, err := PyGSpec(Config{Arch: ArchGAT, InDim: 4, Hidden: 8, Classes: 3, Layers: 2, Opts: GATOpts(2, 0)}, nil)
	require.NoError(t, err)
	assert.NotContains(t, s.Kwargs, "edge_dim")
}

// TestEdgeArchNames: the architectures that take EdgeDim are listed by
// name, once, in table order; the message names "none yet" where none
// does, and a model of one that reads none refuses EdgeDim with the list.
func TestEdgeArchNames(t *testing.T) {
	gat, sage := gatArch(), sageArch()
	edgeGAT := gat
	edgeGAT.EdgeFeatures = true
	for _, tc := range []struct {
		name  string
		table archTable
		names []string
		msg   string
	}{
		{"none", archTable{sage, gat}, nil, "none yet"},
		{"one", archTable{edgeGAT, sage, gat}, []string{ArchGAT}, ArchGAT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.names, tc.table.edgeNames())
			err := Config{Arch: ArchSAGE, Hidden: 4, EdgeDim: 3}.validateSettings(tc.table)
			require.Error(t, err)
			assert.Equal(t, "EdgeDim 3: sage reads no edge features ("+tc.msg+" do)", err.Error())
		})
	}
	assert.Equal(t, builtinArchs().edgeNames(), EdgeArchs())
}
