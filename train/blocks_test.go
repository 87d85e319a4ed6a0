package train

import (
	"math/rand/v2"
	"slices"

	"mpignn/sample"
)

// synthBlocks builds a valid block chain by hand (no sampler): level sizes
// sizes[0] >= sizes[1] >= ... >= sizes[L] (sizes[L] = seeds), block l has
// sizes[l] nodes and sizes[l+1] destinations, and destination i of block l
// draws fanout[l] sources uniformly from the block's nodes (with repeats
// allowed, as the mean is still well defined). Every zeroEvery-th destination
// gets no edges so the zero-vector path is exercised (0 disables). Original
// ids are a random injection into [0, 1e6) so they differ from local ids.
func synthBlocks(r *rand.Rand, sizes, fanout []int, zeroEvery int) []sample.Block {
	L := len(sizes) - 1
	orig := make([]int64, sizes[0])
	seen := map[int64]bool{}
	for i := range orig {
		for {
			o := r.Int64N(1_000_000)
			if !seen[o] {
				seen[o] = true
				orig[i] = o
				break
			}
		}
	}
	blocks := make([]sample.Block, L)
	for l := 0; l < L; l++ {
		ns, nd := sizes[l], sizes[l+1]
		b := sample.Block{NumDst: nd, Nodes: make([]int64, ns), Orig: slices.Clone(orig[:ns]), Indptr: make([]int32, nd+1)}
		for i := range b.Nodes {
			b.Nodes[i] = int64(i) + 10 // global ids are irrelevant to the model
		}
		for i := 0; i < nd; i++ {
			if zeroEvery == 0 || i%zeroEvery != zeroEvery-1 {
				for e := 0; e < fanout[l]; e++ {
					b.Indices = append(b.Indices, int32(r.IntN(ns)))
				}
			}
			b.Indptr[i+1] = int32(len(b.Indices))
		}
		blocks[l] = b
	}
	return blocks
}

// relabel returns an equivalent block chain whose nodes are listed in a
// different local order (as another partitioning would produce), with x
// permuted to match, plus the permuted labels. Destinations stay first in
// every block, edges keep their per-destination order (and their Etype).
func relabel(r *rand.Rand, blocks []sample.Block, x []float32, dim int, labels []int32) ([]sample.Block, []float32, []int32) {
	L := len(blocks)
	// perm[l][newPos] = oldPos for level l (level L = seeds).
	perm := make([][]int, L+1)
	perm[L] = r.Perm(blocks[L-1].NumDst)
	for l := L - 1; l >= 0; l-- {
		nd, ns := blocks[l].NumDst, blocks[l].NumSrc()
		p := slices.Clone(perm[l+1])
		for _, k := range r.Perm(ns - nd) {
			p = append(p, nd+k)
		}
		perm[l] = p
	}
	out := make([]sample.Block, L)
	for l, b := range blocks {
		inv := make([]int32, len(perm[l]))
		for nw, old := range perm[l] {
			inv[old] = int32(nw)
		}
		nb := sample.Block{NumDst: b.NumDst, Nodes: make([]int64, b.NumSrc()), Orig: make([]int64, b.NumSrc()), Indptr: []int32{0}}
		for nw, old := range perm[l] {
			nb.Nodes[nw] = b.Nodes[old]
			nb.Orig[nw] = b.Orig[old]
		}
		for nw := 0; nw < b.NumDst; nw++ {
			old := perm[l+1][nw]
			for _, j := range b.Indices[b.Indptr[old]:b.Indptr[old+1]] {
				nb.Indices = append(nb.Indices, inv[j])
			}
			if b.Etype != nil {
				nb.Etype = append(nb.Etype, b.Etype[b.Indptr[old]:b.Indptr[old+1]]...)
			}
			if d := b.EdgeFeatDim; d > 0 {
				nb.EdgeFeatDim = d
				nb.EdgeFeat = append(nb.EdgeFeat, b.EdgeFeat[int(b.Indptr[old])*d:int(b.Indptr[old+1])*d]...)
			}
			nb.Indptr = append(nb.Indptr, int32(len(nb.Indices)))
		}
		out[l] = nb
	}
	nx := make([]float32, len(x))
	for nw, old := range perm[0] {
		copy(nx[nw*dim:(nw+1)*dim], x[old*dim:(old+1)*dim])
	}
	nl := make([]int32, len(labels))
	for nw, old := range perm[L] {
		nl[nw] = labels[old]
	}
	return out, nx, nl
}

func randFeatures(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func randLabels(r *rand.Rand, n, classes int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(r.IntN(classes))
	}
	return y
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}
