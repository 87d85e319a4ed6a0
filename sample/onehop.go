package sample

import "slices"

// floydMax is the largest sample size drawn with Floyd's algorithm and sorted
// insertion (quadratic in the sample size, but branch-light and with no
// scratch memory, which wins for the fanouts GNNs use: 5..50).
const floydMax = 48

// ChoosePositions appends to dst the positions, in [0,deg), of the in-neighbors
// picked for the node and layer described by k, and returns the extended
// slice. Positions index the node's CANONICAL neighbor list (ascending
// original source id), so the same positions mean the same neighbors on any
// number of ranks.
//
// Rules (fanout f):
//   - deg <= 0 or f == 0: nothing is appended.
//   - f < 0 ("all"), or f >= deg without replacement: every position
//     0..deg-1.
//   - without replacement, 0 < f < deg: a uniform random f-subset.
//   - with replacement, f > 0: f independent uniform draws (repeats allowed).
//
// The appended positions are in ascending order, so the output is canonical
// and neighbor lists are read front to back. The result depends only on
// (k, deg, fanout, replace). ChoosePositions does not allocate when dst has
// room for the result.
func ChoosePositions(k Key, deg int64, fanout int, replace bool, dst []int64) []int64 {
	if deg <= 0 || fanout == 0 {
		return dst
	}
	f := int64(fanout)
	if fanout < 0 || (!replace && f >= deg) {
		return appendRange(dst, deg)
	}
	r := k.Stream()
	if replace {
		return drawWithReplacement(&r, deg, f, dst)
	}
	return chooseSubset(&r, deg, f, dst)
}

// appendRange appends 0..n-1.
func appendRange(dst []int64, n int64) []int64 {
	start := len(dst)
	dst = slices.Grow(dst, int(n))[:start+int(n)]
	for i := range n {
		dst[start+int(i)] = i
	}
	return dst
}

func drawWithReplacement(r *Stream, deg, f int64, dst []int64) []int64 {
	start := len(dst)
	dst = slices.Grow(dst, int(f))
	for range f {
		dst = append(dst, int64(r.Uint64n(uint64(deg))))
	}
	sortSmall(dst[start:])
	return dst
}

// chooseSubset appends a uniform random f-subset of [0,deg) in ascending
// order, for 0 < f < deg.
func chooseSubset(r *Stream, deg, f int64, dst []int64) []int64 {
	switch {
	case f <= floydMax:
		return floydSorted(r, deg, f, dst)
	case 2*f > deg:
		// Most positions are kept: choose the deg-f excluded ones (a smaller
		// problem with 2*(deg-f) < deg, so this never recurses twice) and emit
		// their complement. The excluded set is parked past the output area.
		start := len(dst)
		e := deg - f
		dst = slices.Grow(dst, int(f+e))
		excl := chooseSubset(r, deg, e, dst[start+int(f):start+int(f)])
		out := dst[start : start+int(f)]
		j, w := 0, 0
		for p := range deg {
			if j < len(excl) && excl[j] == p {
				j++
				continue
			}
			out[w] = p
			w++
		}
		return dst[:start+int(f)]
	default:
		return rejectionSorted(r, deg, f, dst)
	}
}

// floydSorted is Floyd's algorithm: for j = deg-f .. deg-1 draw t in [0,j]
// and add t, or j if t is already taken. Every f-subset is equally likely.
// The set is kept sorted; because all members are < j when j is added, a
// collision appends j at the end, and otherwise t is inserted in place.
func floydSorted(r *Stream, deg, f int64, dst []int64) []int64 {
	start := len(dst)
	dst = slices.Grow(dst, int(f))
	for j := deg - f; j < deg; j++ {
		t := int64(r.Uint64n(uint64(j + 1)))
		set := dst[start:]
		// Find the insertion point of t (sets are small: linear scan from the
		// back is cheaper than binary search here).
		i := len(set)
		for i > 0 && set[i-1] > t {
			i--
		}
		if i > 0 && set[i-1] == t {
			dst = append(dst, j)
			continue
		}
		dst = append(dst, 0)
		set = dst[start:]
		copy(set[i+1:], set[i:len(set)-1])
		set[i] = t
	}
	return dst
}

// rejectionSorted draws f distinct positions when f is large and at most half
// of deg: it draws the missing count uniformly, sorts, removes duplicates and
// repeats until f distinct positions remain. The result is the set of
// distinct values of an i.i.d. uniform sequence stopped when it first holds f
// distinct values, which is a uniform f-subset by exchangeability. Expected
// draws are below 1.4*f because deg >= 2*f.
func rejectionSorted(r *Stream, deg, f int64, dst []int64) []int64 {
	start := len(dst)
	dst = slices.Grow(dst, int(f))
	for int64(len(dst)-start) < f {
		need := f - int64(len(dst)-start)
		for range need {
			dst = append(dst, int64(r.Uint64n(uint64(deg))))
		}
		set := dst[start:]
		slices.Sort(set)
		set = slices.Compact(set)
		dst = dst[:start+len(set)]
	}
	return dst
}

// sortSmall sorts ascending, using insertion sort for fanout-sized inputs.
func sortSmall(a []int64) {
	if len(a) > 32 {
		slices.Sort(a)
		return
	}
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for j > 0 && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}

// NumChoices returns how many positions ChoosePositions appends for a row
// of degree deg: it depends on (deg, fanout, replace) only, never on the
// key, so a layer's rows can be counted, laid out at prefix-sum offsets and
// then chosen in parallel, each straight into its own range.
func NumChoices(deg int64, fanout int, replace bool) int64 {
	if deg <= 0 || fanout == 0 {
		return 0
	}
	f := int64(fanout)
	if fanout < 0 || (!replace && f >= deg) {
		return deg
	}
	return f
}

// ChooseRoom returns the room ChoosePositions needs past the end of dst to
// choose without allocating: NumChoices, except when most of a long row is
// kept, where the excluded positions are drawn past the output first. A
// caller writing rows side by side passes dst with exactly this capacity
// left, or a spare buffer when it exceeds the row's own range.
func ChooseRoom(deg int64, fanout int, replace bool) int64 {
	n := NumChoices(deg, fanout, replace)
	if f := int64(fanout); !replace && f > floydMax && f < deg && 2*f > deg {
		return deg // f kept + (deg-f) excluded
	}
	return n
}

// ChooseInto chooses the positions of one row straight into dst, whose
// length must be NumChoices(deg, fanout, replace): the rows of a layer are
// laid out side by side and chosen in parallel, and no row may spill into
// the next. When ChooseRoom exceeds len(dst) the choice is made in spare
// (grown if needed, and returned for reuse) and copied. The positions are
// those ChoosePositions appends.
func ChooseInto(k Key, deg int64, fanout int, replace bool, dst, spare []int64) []int64 {
	if ChooseRoom(deg, fanout, replace) > int64(len(dst)) {
		spare = ChoosePositions(k, deg, fanout, replace, spare[:0])
		copy(dst, spare)
		return spare
	}
	ChoosePositions(k, deg, fanout, replace, dst[:0:len(dst)])
	return spare
}
