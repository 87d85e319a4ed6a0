package partition

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// TestTargetsRoundTrip: a dataset's real targets come back with their
// nodes from every part, whole and in shares, NaN included.
func TestTargetsRoundTrip(t *testing.T) {
	s, err := graph.Generate(graph.GenOptions{Nodes: 300, AvgDegree: 6, Classes: 3, FeatDim: 4, Seed: 2})
	require.NoError(t, err)
	d := s.Data
	d.In = s.BuildIn()
	const dim = 3
	d.Targets = &graph.Features{Dim: dim, Data: make([]float32, d.NumNodes*dim)}
	for i := range d.Targets.Data {
		d.Targets.Data[i] = float32(i%7) - 2.5
		if i%11 == 0 {
			d.Targets.Data[i] = float32(math.NaN())
		}
	}
	d.Labels, d.NumClasses = nil, 0
	for _, parts := range []int{1, 3} {
		out := filepath.Join(t.TempDir(), "p")
		m, err := WriteDataset(out, d, parts, Options{Method: MethodRandom, Seed: 1})
		require.NoError(t, err)
		require.Equal(t, dim, m.TargetDim)
		require.Zero(t, m.NumClasses)
		check := func(pt *Part) {
			require.Len(t, pt.Targets, len(pt.Orig)*dim)
			assert.Nil(t, pt.Labels)
			for i, o := range pt.Orig {
				for k := range dim {
					want, got := d.Targets.Data[o*dim+int64(k)], pt.Targets[i*dim+k]
					assert.True(t, math.Float32bits(want) == math.Float32bits(got), "node %d target %d: want %v, got %v", o, k, want, got)
				}
			}
		}
		for p := range parts {
			pt, err := Load(out, p)
			require.NoError(t, err)
			check(pt)
			b, err := ShareBounds(out, m, p, 2)
			require.NoError(t, err)
			for j := range 2 {
				sh, err := LoadRange(out, m, p, b[j], b[j+1])
				require.NoError(t, err)
				check(sh)
			}
		}
	}
}
