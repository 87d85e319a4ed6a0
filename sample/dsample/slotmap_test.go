package dsample

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlotMap: the cache slot map answers what the per-node array it
// replaced answered (the last value put, 0 for an id never put), through
// collisions and a full half of its slots, and is sized by its ids, not by
// the largest id.
func TestSlotMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []int64
	}{
		{"one", []int64{0}},
		{"consecutive", []int64{10, 11, 12, 13, 14, 15, 16, 17}},
		{"strided", []int64{0, 1 << 20, 2 << 20, 3 << 20, 4 << 20, 5 << 20, 6 << 20, 7 << 20, 8 << 20}},
		{"huge ids", []int64{1<<40 + 3, 1<<50 + 5, 1 << 62}},
		{"many", func() []int64 {
			var ids []int64
			for i := range int64(5000) {
				ids = append(ids, i*i%100003)
			}
			return ids
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSlotMap(len(tc.ids))
			want := map[int64]int32{}
			for j, v := range tc.ids {
				val := int32(j) + 1
				if j%2 == 1 {
					val = -val // halo rows are negative
				}
				m.put(v, val)
				want[v] = val
			}
			for v, val := range want {
				assert.Equal(t, val, m.get(v), "id %d", v)
			}
			for _, v := range []int64{1, 9, 100004, 1<<40 + 4} {
				if _, ok := want[v]; !ok {
					assert.Zero(t, m.get(v), "id %d never put", v)
				}
			}
			require.LessOrEqual(t, m.bytes(), int64(12*max(64, 4*len(tc.ids))))
		})
	}
}
