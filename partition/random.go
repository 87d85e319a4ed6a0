package partition

import (
	"fmt"
	"math/rand/v2"
)

// Random assigns n nodes to nparts parts uniformly at random and balanced:
// it is a random permutation of the nodes cut into nparts chunks whose sizes
// differ by at most one. The result depends only on (n, nparts, seed).
// Callers validate nparts with CheckParts first; Random panics on nparts < 1
// as that is a programming error.
func Random(n int64, nparts int, seed uint64) []int32 {
	if nparts < 1 {
		panic("partition.Random: nparts < 1")
	}
	assign := make([]int32, n)
	// Chunk labels in order, then shuffled: the same distribution as cutting
	// a shuffled permutation, without holding the permutation.
	for i := range assign {
		assign[i] = int32(int64(i) * int64(nparts) / n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d7069676e6e2d72)) // stream constant "mpignn-r"
	for i := n - 1; i > 0; i-- {
		j := rng.Int64N(i + 1)
		assign[i], assign[j] = assign[j], assign[i]
	}
	return assign
}

// CheckParts validates a requested part count against the node count.
func CheckParts(numNodes int64, nparts int) error {
	if nparts < 1 {
		return fmt.Errorf("number of parts %d: must be at least 1", nparts)
	}
	if int64(nparts) > numNodes {
		return fmt.Errorf("number of parts %d exceeds the number of nodes %d", nparts, numNodes)
	}
	if nparts > 1<<20 {
		return fmt.Errorf("number of parts %d: too many (limit %d)", nparts, 1<<20)
	}
	return nil
}
