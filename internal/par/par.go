package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// MinWork is the amount of scalar work (elements touched) below which a
// loop stays on the calling goroutine: starting goroutines and waiting for
// them costs a few microseconds, about what 64 k simple operations take.
const MinWork = 1 << 16

// Threads returns the number of goroutines a loop may use: GOMAXPROCS.
func Threads() int { return runtime.GOMAXPROCS(0) }

// Range runs f over [0,n) cut into at most Threads() contiguous chunks, one
// goroutine each, when the loop's work (about n times the work per index)
// is at least MinWork; otherwise it calls f(0, n) on the calling
// goroutine. f must write only what its indices own.
func Range(n, work int, f func(lo, hi int)) {
	p := Threads()
	if work < MinWork || p == 1 || n < 2*p {
		if n > 0 {
			f(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// Blocks runs f over [0,n) cut into blocks of size block (the last one
// shorter), which idle goroutines take in turn: for loops whose indices
// cost unevenly. The cut depends only on n and block, never on the thread
// count, so f may also keep per-block results (indexed by lo/block) that
// the caller combines in block order.
func Blocks(n, block, work int, f func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if block <= 0 {
		block = n
	}
	blocks := (n + block - 1) / block
	p := min(Threads(), blocks)
	if work < MinWork || p == 1 {
		for lo := 0; lo < n; lo += block {
			f(lo, min(lo+block, n))
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1) - 1)
				if b >= blocks {
					return
				}
				lo := b * block
				f(lo, min(lo+block, n))
			}
		}()
	}
	wg.Wait()
}

// NumBlocks returns the number of blocks Blocks cuts [0,n) into.
func NumBlocks(n, block int) int {
	if n <= 0 {
		return 0
	}
	if block <= 0 {
		return 1
	}
	return (n + block - 1) / block
}

// Offsets turns counts into exclusive prefix sums in place and returns the
// total: counts[i] becomes the sum of the counts before i. It is the
// step between a parallel count and a parallel fill.
func Offsets(counts []int) int {
	t := 0
	for i, c := range counts {
		counts[i] = t
		t += c
	}
	return t
}
