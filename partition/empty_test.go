package partition

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// pathWithIsolated is a 3-node path 0-1-2 followed by n-3 isolated nodes:
// with node balance only, libmetis leaves parts empty for some part counts.
func pathWithIsolated(n int64) *graph.Dataset {
	return &graph.Dataset{
		Name: "path", NumNodes: n,
		In:     graph.BuildInCSR(n, []int64{0, 1}, []int64{1, 2}, graph.BuildOptions{Undirected: true}),
		Feat:   &graph.Features{Dim: 1, Data: make([]float32, n)},
		Labels: make([]int32, n), NumClasses: 1,
	}
}

// TestMetisEmptyPart: an empty part from real libmetis is refused with the
// part sizes and balance, and nothing is written; partitions without empty
// parts pass.
func TestMetisEmptyPart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes int64
		parts int
		want  []string // nil = no empty part
	}{
		{"5 nodes into 4", 5, 4, []string{"metis: 1 of 4 parts are empty (part 0; sizes 0/3/1/1, balance 2.40)", "fewer --parts"}},
		{"5 nodes into 5", 5, 5, []string{"2 of 5 parts are empty (parts 2, 3; sizes 1/1/0/0/3, balance 3.00)"}},
		{"8 nodes into 5", 8, 5, []string{"1 of 5 parts are empty"}},
		{"5 nodes into 2", 5, 2, nil},
		{"12 nodes into 5", 12, 5, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := pathWithIsolated(tc.nodes)
			out := filepath.Join(t.TempDir(), "parts")
			_, err := WriteDataset(out, d, tc.parts, Options{Seed: 1, Balance: []string{BalanceNode}})
			if tc.want == nil {
				require.NoError(t, err)
				m, err := LoadMeta(out)
				require.NoError(t, err)
				for p, pi := range m.Parts {
					assert.Positive(t, pi.Nodes, "part %d", p)
				}
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NoDirExists(t, out)
		})
	}
}

func TestCheckNoEmptyPart(t *testing.T) {
	assign := make([]int32, 40)
	for i := range assign {
		assign[i] = int32(i % 20 / 2 * 2) // parts 0, 2, ..., 18 of 20: odd ones empty
	}
	err := checkNoEmptyPart(assign, 20)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "10 of 20 parts are empty (parts 1, 3, 5, 7, 9, 11, 13, 15, 17, 19; largest part 4 nodes, balance 2.00)")
	assert.NoError(t, checkNoEmptyPart([]int32{0, 1, 2, 1}, 3))
}
