package dtrain

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"mpignn/internal/half"
)

// TestRowNormalize16: a row stored at two bytes a value normalises to the
// float32 normalisation of its widened values, rounded back (so a 2-byte
// table stays at two bytes); a zero row stays zero. The rows' sums (3, 7,
// 0.1) give quotients float16 and bfloat16 cannot hold exactly.
func TestRowNormalize16(t *testing.T) {
	rows := []float32{1, -2, 0, 1, 2, 4, 0, 0, 0, 0.05, 0.025, 0.025}
	for _, kind := range []half.Kind{half.BF16, half.FP16} {
		t.Run(kind.String(), func(t *testing.T) {
			bits := make([]uint16, len(rows))
			half.Narrow(kind, bits, rows)
			wide := make([]float32, len(rows))
			half.Widen(kind, wide, bits)
			RowNormalize(wide, 3)
			want := make([]uint16, len(rows))
			half.Narrow(kind, want, wide)

			RowNormalize16(kind, bits, 3)
			assert.Equal(t, want, bits)
			got := make([]float32, len(rows))
			half.Widen(kind, got, bits)
			assert.Equal(t, []float32{0, 0, 0}, got[6:9], "zero row")
			assert.InDelta(t, 1.0/3, got[0], 2e-3)
			assert.NotEqual(t, float32(1.0/3), got[0], "1/3 is not a 2-byte value")
		})
	}
}
