package partition

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMetisCSR: two triangles joined by a light edge split into the two
// triangles, with two constraints; inconsistent input is refused.
func TestMetisCSR(t *testing.T) {
	// Vertices 0-2 and 3-5 are triangles (edge weight 5), 2-3 weighs 1.
	xadj := []int64{0, 2, 4, 7, 10, 12, 14}
	adj := []int64{1, 2, 0, 2, 0, 1, 3, 2, 4, 5, 3, 5, 3, 4}
	ewgt := []int64{5, 5, 5, 5, 5, 5, 1, 1, 5, 5, 5, 5, 5, 5}
	vwgt := []int64{1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1}
	tests := []struct {
		name       string
		xadj, ewgt []int64
		err        string
	}{
		{name: "split", xadj: xadj, ewgt: ewgt},
		{name: "short edge weights", xadj: xadj, ewgt: ewgt[:3], err: "inconsistent graph"},
		{name: "bad offsets", xadj: []int64{0, 2, 4, 7, 10, 12, 13}, ewgt: ewgt, err: "inconsistent graph"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			part, err := MetisCSR(tt.xadj, adj, tt.ewgt, vwgt, 2, 2, 1.05, 1)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, part[0], part[1])
			require.Equal(t, part[0], part[2])
			require.Equal(t, part[3], part[4])
			require.Equal(t, part[3], part[5])
			require.NotEqual(t, part[0], part[3])
		})
	}
}
