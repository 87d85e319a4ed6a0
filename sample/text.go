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
	return canonicalText(records, numLayers, nil)
}

// EdgeRecordsRel is EdgeRecords for typed blocks: records
// [layer, dst orig id, n, (src orig id, relation) × n] per destination.
func EdgeRecordsRel(blocks []Block, dst []int64) []int64 {
	for l := range blocks {
		b := &blocks[l]
		for i := range b.NumDst {
			lo, hi := b.Indptr[i], b.Indptr[i+1]
			dst = append(dst, int64(l), b.Orig[i], int64(hi-lo))
			for e := lo; e < hi; e++ {
				r := int64(-1) // an untyped block: CanonicalTextRel reports it
				if b.Etype != nil {
					r = int64(b.Etype[e])
				}
				dst = append(dst, b.Orig[b.Indices[e]], r)
			}
		}
	}
	return dst
}

// CanonicalTextRel formats merged EdgeRecordsRel records like CanonicalText,
// with the relation of every edge: "dst src relation" lines sorted by
// destination, relation, source, where relation is relNames[r] (the
// canonical src___rel___dst names of the schema, in relation order).
func CanonicalTextRel(records []int64, numLayers int, relNames []string) ([]byte, error) {
	if relNames == nil {
		relNames = []string{}
	}
	return canonicalText(records, numLayers, relNames)
}

// canonicalText is CanonicalText (relNames nil: records without relations)
// and CanonicalTextRel.
func canonicalText(records []int64, numLayers int, relNames []string) ([]byte, error) {
	type edge struct{ dst, rel, src int64 }
	stride := int64(1)
	if relNames != nil {
		stride = 2
	}
	layers := make([][]edge, numLayers)
	dsts := make([]int, numLayers)
	type key struct{ l, v int64 }
	seen := map[key]bool{}
	for i := 0; i < len(records); {
		if i+3 > len(records) {
			return nil, fmt.Errorf("canonical text: truncated record at %d", i)
		}
		l, v, n := records[i], records[i+1], records[i+2]
		if l < 0 || l >= int64(numLayers) || n < 0 || n > int64(len(records)) || i+3+int(stride*n) > len(records) {
			return nil, fmt.Errorf("canonical text: bad record at %d (layer %d, %d edges)", i, l, n)
		}
		srcs := records[i+3 : i+3+int(stride*n)]
		i += 3 + int(stride*n)
		if seen[key{l, v}] {
			continue
		}
		seen[key{l, v}] = true
		dsts[l]++
		for j := int64(0); j < int64(len(srcs)); j += stride {
			e := edge{dst: v, src: srcs[j]}
			if stride == 2 {
				e.rel = srcs[j+1]
				if e.rel < 0 || e.rel >= int64(len(relNames)) {
					return nil, fmt.Errorf("canonical text: layer %d destination %d: relation %d outside [0,%d)", l, v, e.rel, len(relNames))
				}
			}
			layers[l] = append(layers[l], e)
		}
	}
	var buf bytes.Buffer
	for l, es := range layers {
		// rel is 0 for untyped records, so this is the (dst, src) order.
		slices.SortFunc(es, func(a, b edge) int {
			if c := cmp.Compare(a.dst, b.dst); c != 0 {
				return c
			}
			if c := cmp.Compare(a.rel, b.rel); c != 0 {
				return c
			}
			return cmp.Compare(a.src, b.src)
		})
		fmt.Fprintf(&buf, "layer %d dst %d edges %d\n", l, dsts[l], len(es))
		for _, e := range es {
			if relNames != nil {
				fmt.Fprintf(&buf, "%d %d %s\n", e.dst, e.src, relNames[e.rel])
			} else {
				fmt.Fprintf(&buf, "%d %d\n", e.dst, e.src)
			}
		}
	}
	return buf.Bytes(), nil
}

// EdgeRecordsAt is EdgeRecordsRel for temporal blocks: records
// [layer, dst orig id, dst time, n, (src orig id, relation, edge time) × n]
// per destination; the relation is -1 in an untyped block.
func EdgeRecordsAt(blocks []Block, dst []int64) []int64 {
	for l := range blocks {
		b := &blocks[l]
		for i := range b.NumDst {
			lo, hi := b.Indptr[i], b.Indptr[i+1]
			dst = append(dst, int64(l), b.Orig[i], b.Time[i], int64(hi-lo))
			for e := lo; e < hi; e++ {
				r := int64(-1)
				if b.Etype != nil {
					r = int64(b.Etype[e])
				}
				dst = append(dst, b.Orig[b.Indices[e]], r, b.EdgeTime[e])
			}
		}
	}
	return dst
}

// CanonicalTextAt formats merged EdgeRecordsAt records: per layer the
// distinct (destination, time) count and every sampled edge as
// "dst@seedtime src@edgetime" (then the relation name when relNames is not
// nil), sorted by destination, seed time, relation, source and edge time.
// Every edge line so shows what a leakage check needs: the edge's time
// against the time its destination was expanded at.
func CanonicalTextAt(records []int64, numLayers int, relNames []string) ([]byte, error) {
	type edge struct{ dst, t, rel, src, et int64 }
	layers := make([][]edge, numLayers)
	dsts := make([]int, numLayers)
	type key struct{ l, v, t int64 }
	seen := map[key]bool{}
	for i := 0; i < len(records); {
		if i+4 > len(records) {
			return nil, fmt.Errorf("canonical text: truncated record at %d", i)
		}
		l, v, t, n := records[i], records[i+1], records[i+2], records[i+3]
		if l < 0 || l >= int64(numLayers) || n < 0 || n > int64(len(records)) || i+4+int(3*n) > len(records) {
			return nil, fmt.Errorf("canonical text: bad record at %d (layer %d, %d edges)", i, l, n)
		}
		srcs := records[i+4 : i+4+int(3*n)]
		i += 4 + int(3*n)
		if seen[key{l, v, t}] {
			continue
		}
		seen[key{l, v, t}] = true
		dsts[l]++
		for j := 0; j < len(srcs); j += 3 {
			e := edge{dst: v, t: t, src: srcs[j], rel: srcs[j+1], et: srcs[j+2]}
			if relNames != nil && (e.rel < 0 || e.rel >= int64(len(relNames))) {
				return nil, fmt.Errorf("canonical text: layer %d destination %d: relation %d outside [0,%d)", l, v, e.rel, len(relNames))
			}
			layers[l] = append(layers[l], e)
		}
	}
	var buf bytes.Buffer
	for l, es := range layers {
		slices.SortFunc(es, func(a, b edge) int {
			return cmp.Or(cmp.Compare(a.dst, b.dst), cmp.Compare(a.t, b.t), cmp.Compare(a.rel, b.rel), cmp.Compare(a.src, b.src), cmp.Compare(a.et, b.et))
		})
		fmt.Fprintf(&buf, "layer %d dst %d edges %d\n", l, dsts[l], len(es))
		for _, e := range es {
			if relNames != nil {
				fmt.Fprintf(&buf, "%d@%d %d@%d %s\n", e.dst, e.t, e.src, e.et, relNames[e.rel])
			} else {
				fmt.Fprintf(&buf, "%d@%d %d@%d\n", e.dst, e.t, e.src, e.et)
			}
		}
	}
	return buf.Bytes(), nil
}
