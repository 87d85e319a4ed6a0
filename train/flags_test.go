package train

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStepFlagsExactAtScale sums the flags of P ranks as a step's
// Allreduce does (float32 additions, in rank order and as a binary tree,
// the orders MPI's reductions use) and reads them back: every count is
// exact at P = 1024, 4096 and 65536, where the flags once shared one
// element and 1024 stopping ranks read as "a checkpoint is due".
func TestStepFlagsExactAtScale(t *testing.T) {
	for _, p := range []int{1024, 4096, 65536} {
		for _, tc := range []struct {
			name string
			rank func(r int) stepFlags
			want stepFlags
		}{
			{"every rank stops", func(int) stepFlags { return stepFlags{stops: 1} }, stepFlags{stops: p}},
			{"every rank stops, checkpoint due", func(r int) stepFlags {
				f := stepFlags{stops: 1}
				if r == 0 {
					f.due = 1
				}
				return f
			}, stepFlags{stops: p, due: 1}},
			{"every rank failed", func(int) stepFlags { return stepFlags{failed: 1} }, stepFlags{failed: p}},
			{"one rank failed, the rest stop", func(r int) stepFlags {
				if r == p-1 {
					return stepFlags{failed: 1}
				}
				return stepFlags{stops: 1}
			}, stepFlags{failed: 1, stops: p - 1}},
			{"half stop, every third failed", func(r int) stepFlags {
				return stepFlags{failed: b2i(r%3 == 0), stops: b2i(r%2 == 0)}
			}, stepFlags{failed: (p + 2) / 3, stops: p / 2}},
			{"nothing", func(int) stepFlags { return stepFlags{} }, stepFlags{}},
		} {
			t.Run(fmt.Sprintf("P=%d/%s", p, tc.name), func(t *testing.T) {
				tails := make([][]float32, p)
				for r := range tails {
					tails[r] = make([]float32, tailLen)
					tc.rank(r).put(tails[r])
				}
				assert.Equal(t, tc.want, readFlags(sumInOrder(tails)), "rank order")
				assert.Equal(t, tc.want, readFlags(sumAsTree(tails)), "binary tree")
			})
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sumInOrder adds the ranks' tails in rank order, in float32.
func sumInOrder(tails [][]float32) []float32 {
	out := make([]float32, tailLen)
	for _, tl := range tails {
		for i, v := range tl {
			out[i] += v
		}
	}
	return out
}

// sumAsTree adds the ranks' tails pairwise, as recursive doubling does.
func sumAsTree(tails [][]float32) []float32 {
	if len(tails) == 1 {
		return tails[0]
	}
	h := len(tails) / 2
	a, b := sumAsTree(tails[:h]), sumAsTree(tails[h:])
	out := make([]float32, tailLen)
	for i := range out {
		out[i] = a[i] + b[i]
	}
	return out
}
