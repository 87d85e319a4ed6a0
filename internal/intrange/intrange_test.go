package intrange

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCompact(t *testing.T) {
	for _, tc := range []struct {
		xs   []int
		want string
	}{
		{nil, ""},
		{[]int{4}, "4"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{1, 2, 3, 7}, "1-3, 7"},
		{[]int{0, 2, 3, 5}, "0, 2-3, 5"},
	} {
		assert.Equal(t, tc.want, Compact(tc.xs), "%v", tc.xs)
	}
}
