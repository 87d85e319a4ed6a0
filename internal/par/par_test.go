package par

import (
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryIndexOnce checks that Range and Blocks hand every index of the
// range to f exactly once, on one thread and on several, for loops both
// below and above MinWork.
func TestEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 3, 8} {
		prev := runtime.GOMAXPROCS(threads)
		for _, tc := range []struct {
			name     string
			n, work  int
			block    int
			useBlock bool
		}{
			{"range small", 10, 10, 0, false},
			{"range large", 10007, MinWork * 4, 0, false},
			{"range empty", 0, MinWork, 0, false},
			{"blocks small", 100, 100, 7, true},
			{"blocks large", 10007, MinWork * 4, 64, true},
			{"blocks one", 5, MinWork, 0, true},
		} {
			seen := make([]atomic.Int32, tc.n)
			f := func(lo, hi int) {
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			}
			if tc.useBlock {
				Blocks(tc.n, tc.block, tc.work, f)
			} else {
				Range(tc.n, tc.work, f)
			}
			for i := range seen {
				if !assert.EqualValues(t, 1, seen[i].Load(), "%s, %d threads: index %d", tc.name, threads, i) {
					break
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestBlocksCut checks that the blocks Blocks hands out depend on n and
// block only: the same list on any thread count.
func TestBlocksCut(t *testing.T) {
	cut := func(threads int) map[[2]int]bool {
		prev := runtime.GOMAXPROCS(threads)
		defer runtime.GOMAXPROCS(prev)
		got := make([][2]int, NumBlocks(1000, 64))
		Blocks(1000, 64, MinWork, func(lo, hi int) { got[lo/64] = [2]int{lo, hi} })
		m := map[[2]int]bool{}
		for _, b := range got {
			m[b] = true
		}
		return m
	}
	assert.Equal(t, cut(1), cut(6))
	assert.Len(t, cut(1), 16)
}

func TestOffsets(t *testing.T) {
	for _, tc := range []struct {
		in, want []int
		total    int
	}{
		{[]int{3, 0, 2, 5}, []int{0, 3, 3, 5}, 10},
		{nil, nil, 0},
	} {
		total := Offsets(tc.in)
		assert.Equal(t, tc.total, total)
		assert.Equal(t, tc.want, tc.in)
	}
}
