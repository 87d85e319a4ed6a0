package hashkey

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPinnedValues pins outputs that goldens under */testdata were made
// with (values taken from the code before it moved here). If this fails,
// the package changed behaviour: undo the change, do not update the pins.
func TestPinnedValues(t *testing.T) {
	tests := []struct {
		name string
		got  uint64
		want uint64
	}{
		{"Hash64()", Hash64(), 0xe9e0033e3badaf36},
		{"Hash64(0)", Hash64(0), 0x977cdbb4ff92fd47},
		{"Hash64(1,2,3)", Hash64(1, 2, 3), 0x3c5c0d5fb1cc1786},
		// The sampler's key of (seed 42, epoch 1, batch 2, layer 3, node 12345).
		{"Hash64(sample key)", Hash64(0x73616d706c65, 42, 1, 2, 3, 12345), 0xd4c25c99fa495f4b},
		{"Mix64", Mix64(0x0123456789abcdef), 0xb2c058e4ebb5112c},
		{"Step", Step(12345), 2454886589211414944},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got, "%#x", tt.got)
		})
	}
}

// TestStartWord: the split form used on hot paths is Hash64.
func TestStartWord(t *testing.T) {
	words := []uint64{7, 0, 1 << 63, 99}
	h := Start(len(words))
	for _, w := range words {
		h = Word(h, w)
	}
	assert.Equal(t, Hash64(words...), h)
}

// TestLengthAndOrderMatter: keys of different lengths or orders differ.
func TestLengthAndOrderMatter(t *testing.T) {
	assert.NotEqual(t, Hash64(0), Hash64(0, 0))
	assert.NotEqual(t, Hash64(), Hash64(0))
	assert.NotEqual(t, Hash64(1, 2), Hash64(2, 1))
}
