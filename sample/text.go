package sample

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// The canonical text form of a sample lists, per layer (forward order), the
// distinct destination count and every sampled edge as "dst src" in ORIGINAL
// ids, sorted. It depends neither on the number of ranks nor on how the
// seeds are spread over them: a node's choices are keyed by its original id,
// so the union of all ranks' blocks is the sample of all seeds together.

// EdgeRecords flattens blocks into records
// [layer, dst orig id, n, src orig id × n] per destination, the unit that
// ranks exchange to build the canonical text.
func EdgeRecords(blocks []Block, dst []int64) []int64 {
	for l := range blocks {
		b := &blocks[l]
		for i := range b.NumDst {
			lo, hi := b.Indptr[i], b.Indptr[i+1]
			dst = append(dst, int64(l), b.Orig[i], int64(hi-lo))
			for _, j := range b.Indices[lo:hi] {
				dst = append(dst, b.Orig[j])
			}
		}
	}
	return dst
}

// CanonicalText formats merged edge records (of any number of ranks,
// concatenated). A destination listed by several ranks was sampled
// identically by each (same key), so its first record is kept.
func CanonicalText(records []int64, numLayers int) ([]byte, error) {
	type edge struct{ dst, src int64 }
	layers := make([][]edge, numLayers)
	dsts := make([]int, numLayers)
	type key struct{ l, v int64 }
	seen := map[key]bool{}
	for i := 0; i < len(records); {
		if i+3 > len(records) {
			return nil, fmt.Errorf("canonical text: truncated record at %d", i)
		}
		l, v, n := records[i], records[i+1], records[i+2]
		if l < 0 || l >= int64(numLayers) || n < 0 || i+3+int(n) > len(records) {
			return nil, fmt.Errorf("canonical text: bad record at %d (layer %d, %d edges)", i, l, n)
		}
		srcs := records[i+3 : i+3+int(n)]
		i += 3 + int(n)
		if seen[key{l, v}] {
			continue
		}
		seen[key{l, v}] = true
		dsts[l]++
		for _, u := range srcs {
			layers[l] = append(layers[l], edge{v, u})
		}
	}
	var buf bytes.Buffer
	for l, es := range layers {
		slices.SortFunc(es, func(a, b edge) int {
			if c := cmp.Compare(a.dst, b.dst); c != 0 {
				return c
			}
			return cmp.Compare(a.src, b.src)
		})
		fmt.Fprintf(&buf, "layer %d dst %d edges %d\n", l, dsts[l], len(es))
		for _, e := range es {
			fmt.Fprintf(&buf, "%d %d\n", e.dst, e.src)
		}
	}
	return buf.Bytes(), nil
}
