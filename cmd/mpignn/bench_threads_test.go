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

// TestThreadsSameLine: the determinism check says "identical" only when
// every count has the first count's weights and inference rows, and names
// each count's digest otherwise.
func TestThreadsSameLine(t *testing.T) {
	run := func(threads int, weights, infer string, inferSame bool) threadsRun {
		return threadsRun{threads: threads, weights: weights, infer: infer, inferSame: inferSame}
	}
	tests := []struct {
		name string
		runs []threadsRun
		same bool
		line string
	}{
		{"identical", []threadsRun{run(1, "aa", "", true), run(2, "aa", "", true)}, true,
			"weights: identical for every thread count (aa)"},
		{"identical with inference", []threadsRun{run(1, "aa", "ii", true), run(2, "aa", "ii", true)}, true,
			"weights: identical for every thread count (aa); inference rows identical (rank 0: ii)"},
		{"weights differ", []threadsRun{run(1, "aa", "", true), run(2, "bb", "", true)}, false,
			"weights or inference rows DIFFER across thread counts (1: aa, 2: bb)"},
		{"inference differs on some rank", []threadsRun{run(1, "aa", "ii", true), run(4, "aa", "ii", false)}, false,
			"weights or inference rows DIFFER across thread counts (1: aa inference same, 4: aa inference differs)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			same := threadsSame(tc.runs)
			assert.Equal(t, tc.same, same)
			assert.Equal(t, tc.line, threadsSameLine(tc.runs, same))
		})
	}
}
