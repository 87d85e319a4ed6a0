package dtrain

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeEmbeddingRows: the parameters come back in row order without
// the optimizer state, and a truncated blob is refused.
func TestDecodeEmbeddingRows(t *testing.T) {
	h := embedHeader{dim: 2, stateWidth: 1, nodeType: "conference", opt: "adagrad", rows: 3}
	blob := h.encode()
	for i := range 3 {
		for _, v := range []float32{float32(i), float32(i) + 0.5, -9} { // two parameters, one state word
			blob = binary.LittleEndian.AppendUint32(blob, math.Float32bits(v))
		}
	}
	nt, dim, rows, p, err := decodeEmbeddingRows(blob)
	require.NoError(t, err)
	assert.Equal(t, "conference", nt)
	assert.Equal(t, 2, dim)
	assert.EqualValues(t, 3, rows)
	assert.Equal(t, []float32{0, 0.5, 1, 1.5, 2, 2.5}, p)

	_, _, _, _, err = decodeEmbeddingRows(blob[:len(blob)-4])
	require.ErrorContains(t, err, "header says 3 rows")

	// New parameters, the optimizer state word kept.
	nb, err := replaceEmbeddingRows(blob, []float32{7, 8, 9, 10, 11, 12})
	require.NoError(t, err)
	_, _, _, p, err = decodeEmbeddingRows(nb)
	require.NoError(t, err)
	assert.Equal(t, []float32{7, 8, 9, 10, 11, 12}, p)
	assert.Equal(t, blob[len(blob)-4:], nb[len(nb)-4:], "state word of the last row")
	_, err = replaceEmbeddingRows(blob, []float32{1})
	require.ErrorContains(t, err, "1 values for 3 rows of width 2")
}
