package sample

import (
	"fmt"
	"slices"

	"mpignn/internal/hashkey"
)

// Global batching.
//
// An epoch visits the N training nodes in a pseudo-random order that depends
// only on (seed, epoch, N) and cuts it into steps of exactly G nodes (the
// last step holds the rest), like a shuffling DataLoader with
// drop_last=false. G is P*B for a per-rank batch B, so a P-rank run takes
// exactly the same global batches, in the same steps, as a 1-rank run with
// batch P*B; or G is given as it is (train --global-batch), the same on
// any number of ranks, which then need not divide it.
//
// The order is a keyed bijection (a Feistel network with cycle walking, see
// Permutation) applied to each node's CANONICAL INDEX: its rank among all
// training nodes sorted by original id. A node's step is then
// Permutation.At(index) / G, which a rank computes for its own nodes without
// seeing any other rank's nodes: each rank needs only N, G and the canonical
// indices of its own training nodes. Those indices are static (they do not
// change between epochs), so they can be computed once: from the global
// training list with CanonicalIndex, or stored by the partitioner.
//
// Every rank derives the same step count, NumSteps(N, G), so ranks stay in
// lockstep; a rank with no training nodes in a step (or none at all) gets an
// empty seed list for it. The per-rank share of a step is not exactly B: it
// is how many of the step's G nodes that rank owns.

// feistelRounds is the number of Feistel rounds. With a strongly mixing round
// function four already give a pseudo-random permutation (Luby-Rackoff); six
// leave a margin for the small domains used here.
const feistelRounds = 6

// Permutation is a keyed pseudo-random bijection on [0,N) that can be
// evaluated at any point in O(1) expected time without materializing it.
type Permutation struct {
	n    uint64
	half uint   // bits per Feistel half
	mask uint64 // (1<<half)-1
	keys [feistelRounds]uint64
}

// NewPermutation returns the epoch's permutation of [0,n).
func NewPermutation(seed uint64, epoch int, n int64) Permutation {
	p := Permutation{n: uint64(max(n, 0))}
	// The Feistel domain is 2^(2*half) >= n, and < 4n, so cycle walking
	// needs fewer than 4 rounds on average.
	bitsNeeded := uint(0)
	for m := p.n - min(p.n, 1); m > 0; m >>= 1 {
		bitsNeeded++
	}
	p.half = max((bitsNeeded+1)/2, 1)
	p.mask = 1<<p.half - 1
	for r := range p.keys {
		p.keys[r] = Hash64(tagBatch, seed, uint64(epoch), p.n, uint64(r))
	}
	return p
}

// At returns the image of i, for 0 <= i < N.
func (p *Permutation) At(i int64) int64 {
	x := uint64(i)
	for {
		x = p.feistel(x)
		if x < p.n {
			return int64(x)
		}
	}
}

func (p *Permutation) feistel(x uint64) uint64 {
	l, r := x>>p.half, x&p.mask
	for _, k := range p.keys {
		l, r = r, l^(hashkey.Word(k, r)&p.mask)
	}
	return l<<p.half | r
}

// NumSteps returns the number of steps of an epoch over numTrain nodes with
// global batch size globalBatch: ceil(numTrain/globalBatch).
func NumSteps(numTrain int64, globalBatch int) int {
	if numTrain <= 0 || globalBatch <= 0 {
		return 0
	}
	g := int64(globalBatch)
	return int((numTrain + g - 1) / g)
}

// EpochBatches returns the global batches of one epoch, the single-process
// reference of the scheme above: train holds the original ids of all
// training nodes (distinct, any order) and the result holds, per step, the
// original ids of that step's seeds in permutation order. The batches are
// sub-slices of one array.
func EpochBatches(seed uint64, epoch int, train []int64, globalBatch int) ([][]int64, error) {
	if globalBatch <= 0 {
		return nil, fmt.Errorf("epoch batches: global batch size %d, want > 0", globalBatch)
	}
	sorted := slices.Clone(train)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return nil, fmt.Errorf("epoch batches: training node %d listed twice", sorted[i])
		}
	}
	n := int64(len(sorted))
	perm := NewPermutation(seed, epoch, n)
	order := make([]int64, n)
	for i, v := range sorted {
		order[perm.At(int64(i))] = v
	}
	steps := NumSteps(n, globalBatch)
	out := make([][]int64, steps)
	for s := range steps {
		lo := s * globalBatch
		hi := min(lo+globalBatch, int(n))
		out[s] = order[lo:hi:hi]
	}
	return out, nil
}

// CanonicalIndex returns, for each original id in mine, its index in
// sortedTrain: the original ids of ALL training nodes, strictly ascending.
// It fails if an id of mine is not a training node.
func CanonicalIndex(sortedTrain, mine []int64) ([]int64, error) {
	for i := 1; i < len(sortedTrain); i++ {
		if sortedTrain[i] <= sortedTrain[i-1] {
			return nil, fmt.Errorf("canonical index: training list not strictly ascending at position %d (%d after %d)", i, sortedTrain[i], sortedTrain[i-1])
		}
	}
	idx := make([]int64, len(mine))
	for j, v := range mine {
		i, ok := slices.BinarySearch(sortedTrain, v)
		if !ok {
			return nil, fmt.Errorf("canonical index: node %d (local training node %d) is not in the training list", v, j)
		}
		idx[j] = int64(i)
	}
	return idx, nil
}

// RankSteps is the per-rank form of EpochBatches. index holds the canonical
// indices of the rank's own training nodes (see CanonicalIndex), numTrain is
// the GLOBAL number of training nodes and globalBatch is G (P*B, or a
// global batch given as such). The result has NumSteps(numTrain,
// globalBatch) entries on every rank; entry s lists positions into index
// (and so into the rank's parallel arrays of global and original ids) of
// the rank's seeds in step s, in permutation order. Merging
// all ranks' step s by permutation order gives exactly EpochBatches' step s.
func RankSteps(seed uint64, epoch int, numTrain int64, globalBatch int, index []int64) ([][]int, error) {
	if globalBatch <= 0 {
		return nil, fmt.Errorf("rank steps: global batch size %d, want > 0", globalBatch)
	}
	if numTrain < int64(len(index)) {
		return nil, fmt.Errorf("rank steps: %d local training nodes but only %d globally", len(index), numTrain)
	}
	perm := NewPermutation(seed, epoch, numTrain)
	type item struct {
		pos   int64
		local int
	}
	items := make([]item, len(index))
	for j, c := range index {
		if c < 0 || c >= numTrain {
			return nil, fmt.Errorf("rank steps: local training node %d has canonical index %d outside [0,%d)", j, c, numTrain)
		}
		items[j] = item{pos: perm.At(c), local: j}
	}
	slices.SortFunc(items, func(a, b item) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	for k := 1; k < len(items); k++ {
		if items[k].pos == items[k-1].pos {
			return nil, fmt.Errorf("rank steps: local training nodes %d and %d share canonical index", items[k-1].local, items[k].local)
		}
	}
	steps := NumSteps(numTrain, globalBatch)
	locals := make([]int, len(items))
	out := make([][]int, steps)
	g := int64(globalBatch)
	k := 0
	for s := range steps {
		lo := k
		for k < len(items) && items[k].pos/g == int64(s) {
			locals[k] = items[k].local
			k++
		}
		out[s] = locals[lo:k:k]
	}
	return out, nil
}
