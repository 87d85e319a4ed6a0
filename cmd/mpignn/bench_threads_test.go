package main

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchThreadsDefault: powers of two below the limit, then the limit.
func TestBenchThreadsDefault(t *testing.T) {
	tests := []struct {
		limit int
		want  []int
	}{
		{0, []int{1}},
		{1, []int{1}},
		{2, []int{1, 2}},
		{6, []int{1, 2, 4, 6}},
		{16, []int{1, 2, 4, 8, 16}},
		{24, []int{1, 2, 4, 8, 16, 24}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			assert.Equal(t, tc.want, benchThreadsDefault(tc.limit))
		})
	}
}

// TestParseThreadList: --threads takes distinct positive counts within
// checkThreads' bound; empty is the default list.
func TestParseThreadList(t *testing.T) {
	tooMany := fmt.Sprint(maxThreadsPerCore*runtime.NumCPU() + 1)
	tests := []struct {
		value string
		want  []int
		err   string
	}{
		{"", nil, ""},
		{"1,2,4", []int{1, 2, 4}, ""},
		{" 4, 1 ", []int{4, 1}, ""},
		{"1,0", nil, `"0" is not a positive thread count`},
		{"1,x", nil, `"x" is not a positive thread count`},
		{"2,2", nil, "2 is listed twice"},
		{"1," + tooMany, nil, "--threads " + tooMany + ": more than"},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			got, err := parseThreadList(tc.value)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
