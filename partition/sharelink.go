package partition

import (
	"fmt"
	"path/filepath"
)

// Shares of a link partition. A share keeps what its part's files hold
// for its own nodes, by the rule the partitioner used to give parts their
// link data (bucketLink): a positive or pool pair belongs to the owner of
// its SOURCE. So a share holds the positives and pool pairs whose source
// it owns, in the part's order (ascending ID, as the sampler's global
// batching and the evaluator expect), the K fixed negatives of each of its
// valid and test positives, and the valid-edge rows of its nodes. The id
// map is another matter: its block is a range of ORIGINAL ids, which has
// nothing to do with a share's nodes, and under a ShareView rank r is
// asked for OrigBlock(N, P, r), a range that may straddle the blocks of
// two parts on disk. LoadRange therefore leaves it empty, and the caller
// fills it once the view is known (Part.LoadOrigBlock).

// linkShareBounds returns the cuts of part p into n shares at quantiles of
// the sources of its training positives (the seeds of a link step), or nil
// when the part has fewer training positives than shares. It counts the
// positives of each owned node (one counter per node, not a sorted copy of
// the sources) while it streams the file's source block.
func linkShareBounds(dir string, m *Meta, p, n int) ([]int64, error) {
	T := m.Parts[p].Link.Train
	if T < int64(n) {
		return nil, nil
	}
	pLo, pHi := m.Offsets[p], m.Offsets[p+1]
	count := make([]int64, pHi-pLo)
	name := partDir(p) + "/" + fileLinkTrain
	path := filepath.Join(dir, name)
	bad := int64(-1)
	err := readArrayVisit(path, m.Files[name], func(start int64, xs []int64) {
		for i, v := range xs {
			if start+int64(i) >= T {
				return // past the source block
			}
			if v < pLo || v >= pHi {
				bad = v
				continue
			}
			count[v-pLo]++
		}
	})
	if err != nil {
		return nil, err
	}
	if bad >= 0 {
		return nil, fmt.Errorf("load %s: source %d of a training positive is not a node of part %d", path, bad, p)
	}
	// Share j starts at the node of the (T·j/n)-th positive in source
	// order, as the node split's cuts start at its (T·j/n)-th training node.
	b := make([]int64, n+1)
	b[n] = pHi - pLo
	j, seen := 1, int64(0)
	for x, k := range count {
		for j < n && T*int64(j)/int64(n) < seen+k {
			b[j] = int64(x)
			j++
		}
		seen += k
	}
	// Unlike training nodes, sources repeat: a source with more positives
	// than a share would leave the shares between two equal cuts without
	// a node. Keep every share at least one node where the part has one
	// per share, moving such cuts by as little as that takes.
	if owned := b[n]; owned >= int64(n) {
		for j := 1; j < n; j++ {
			b[j] = min(max(b[j], b[j-1]+1), owned-int64(n-j))
		}
	}
	return b, nil
}

// loadLinkRange reads the share [pt.Lo, pt.Hi) (owned positions [lo, hi)
// of part p) of the part's link files into pt.Link: see the comment at the
// top of this file. Every file is read whole and checked against its
// checksum; only the share is kept.
func loadLinkRange(file func(string) (string, fileInfo), m *Meta, pt *Part, lo, hi int64) error {
	c := m.Parts[pt.ID].Link
	if c == nil {
		path, _ := file(fileLinkTrain)
		return fmt.Errorf("load %s: part %d has no link counts", path, pt.ID)
	}
	k := int64(m.Link.NegsPerPos)
	lp := &LinkPart{Orig2New: []int64{}}
	td := int64(m.Link.EdgeTargetDim)
	for _, f := range []struct {
		name string
		dst  *LinkEdges
		n    int64
		neg  string
		negs [2]*[]int64
		targ string
	}{
		{name: fileLinkTrain, dst: &lp.Train, n: c.Train, targ: fileLinkTrainTargets},
		{fileLinkValid, &lp.Valid, c.Valid, fileLinkValidNeg, [2]*[]int64{&lp.ValidNeg, &lp.ValidNegOrig}, fileLinkValidTargets},
		{fileLinkTest, &lp.Test, c.Test, fileLinkTestNeg, [2]*[]int64{&lp.TestNeg, &lp.TestNegOrig}, fileLinkTestTargets},
		{name: fileLinkValidPool, dst: &lp.ValidPool, n: c.ValidPool},
		{name: fileLinkTestPool, dst: &lp.TestPool, n: c.TestPool},
	} {
		pos, err := readEdgeShare(file, f.name, f.n, pt.Lo, pt.Hi, f.dst)
		if err != nil {
			return err
		}
		if f.targ != "" && td > 0 {
			// The share's positives' label rows.
			ranges := make([][2]int64, len(pos))
			for j, i := range pos {
				ranges[j] = [2]int64{i * td, (i + 1) * td}
			}
			if f.dst.Targets, err = readRanges[float32](file, f.targ, ranges); err != nil {
				return err
			}
		}
		if f.neg == "" {
			continue
		}
		// Negatives are 2 blocks of n·K, K per positive row-major: the
		// share's positives' rows of each block.
		ranges := make([][2]int64, 0, 2*len(pos))
		for b := range int64(2) {
			for _, i := range pos {
				ranges = append(ranges, [2]int64{b*f.n*k + i*k, b*f.n*k + (i+1)*k})
			}
		}
		xs, err := readRanges[int64](file, f.neg, ranges)
		if err != nil {
			return err
		}
		nk := int64(len(pos)) * k
		*f.negs[0], *f.negs[1] = xs[:nk:nk], xs[nk:]
	}
	if m.Link.ValidAdj {
		R := int64(m.NumRels())
		var err error
		if lp.ValidIndptr, err = readRange[int64](file, fileLinkVIndptr, lo*R, hi*R+1); err != nil {
			return err
		}
		e0, e1 := lp.ValidIndptr[0], lp.ValidIndptr[(hi-lo)*R]
		if e1 < e0 {
			path, _ := file(fileLinkVIndptr)
			return fmt.Errorf("load %s: offsets decrease within rows [%d,%d]", path, lo*R, hi*R)
		}
		for i := range lp.ValidIndptr {
			lp.ValidIndptr[i] -= e0
		}
		if lp.ValidIndices, err = readRange[int64](file, fileLinkVIndices, e0, e1); err != nil {
			return err
		}
		if lp.ValidIndicesOrig, err = readRange[int64](file, fileLinkVIndOrig, e0, e1); err != nil {
			return err
		}
	}
	pt.Link = lp
	return nil
}

// readEdgeShare reads the edge set file name of n edges (edgeBlocks blocks
// of n, the source block first) into dst, keeping the edges whose source
// is in [from, to) in file order, and returns their positions in the file's
// set. One pass: the source block, which decides, comes before the blocks
// it selects from.
func readEdgeShare(file func(string) (string, fileInfo), name string, n, from, to int64, dst *LinkEdges) ([]int64, error) {
	path, fi := file(name)
	if fi.Len != edgeBlocks*n {
		return nil, fmt.Errorf("load %s: %d elements, want %d blocks of %d edges", path, fi.Len, edgeBlocks, n)
	}
	var pos []int64
	var blocks [edgeBlocks][]int64
	block, next := int64(-1), 0 // the block being read, and the next of pos in it
	err := readArrayVisit(path, fi, func(start int64, xs []int64) {
		for len(xs) > 0 {
			b, j := start/n, start%n
			seg := xs[:min(int64(len(xs)), n-j)]
			if b != block {
				block, next = b, 0
			}
			if b == 0 {
				for i, v := range seg {
					if v >= from && v < to {
						pos = append(pos, j+int64(i))
						blocks[0] = append(blocks[0], v)
					}
				}
			} else {
				for end := j + int64(len(seg)); next < len(pos) && pos[next] < end; next++ {
					blocks[b] = append(blocks[b], seg[pos[next]-j])
				}
			}
			start += int64(len(seg))
			xs = xs[len(seg):]
		}
	})
	if err != nil {
		return nil, err
	}
	for b := range blocks {
		if len(blocks[b]) != len(pos) {
			return nil, fmt.Errorf("load %s: block %d holds %d of the share's %d edges", path, b, len(blocks[b]), len(pos))
		}
		if blocks[b] == nil {
			blocks[b] = []int64{}
		}
	}
	*dst = LinkEdges{Src: blocks[0], Dst: blocks[1], SrcOrig: blocks[2], DstOrig: blocks[3], ID: blocks[4], Time: blocks[5]}
	if pos == nil {
		pos = []int64{}
	}
	return pos, nil
}

// LoadOrigBlock fills the id-map block of a share (pt.Link, from
// LoadRange) with the new ids of the original ids [lo, hi): under a
// ShareView, rank r's block is OrigBlock(N, P, r) of the view's P parts,
// which IDMap readers expect. The parts on disk (m, the partition's own
// Meta) store the blocks OrigBlock(N, K, q) of their K parts, so it reads
// the pieces of every part whose block overlaps [lo, hi) (each file read
// whole and checked against its checksum) and checks them against the
// share's own nodes as Load checks a part's block.
func (pt *Part) LoadOrigBlock(dir string, m *Meta, lo, hi int64) error {
	if pt.Link == nil || m.Link == nil {
		return fmt.Errorf("load %s: part %d has no link split, so no id map", dir, pt.ID)
	}
	n := m.NumNodes
	if lo < 0 || lo > hi || hi > n {
		return fmt.Errorf("load %s: id map block [%d,%d) outside [0,%d)", dir, lo, hi, n)
	}
	block := make([]int64, 0, hi-lo)
	for q := range m.NumParts {
		qlo, qhi := OrigBlock(n, m.NumParts, q)
		a, b := max(lo, qlo), min(hi, qhi)
		if a >= b {
			continue
		}
		file := func(name string) (string, fileInfo) {
			return filepath.Join(dir, partDir(q), name), m.Files[partDir(q)+"/"+name]
		}
		xs, err := readRange[int64](file, fileLinkOrig2New, a-qlo, b-qlo)
		if err != nil {
			return err
		}
		for i, g := range xs {
			if g < 0 || g >= n {
				path, _ := file(fileLinkOrig2New)
				return fmt.Errorf("load %s: entry %d: id %d outside [0,%d)", path, a-qlo+int64(i), g, n)
			}
		}
		block = append(block, xs...)
	}
	if int64(len(block)) != hi-lo {
		return fmt.Errorf("load %s: the parts' id map blocks cover %d of the original ids [%d,%d)", dir, len(block), lo, hi)
	}
	for i, o := range pt.Orig {
		if o >= lo && o < hi && block[o-lo] != pt.Lo+int64(i) {
			return fmt.Errorf("load %s: original id %d maps to %d in the id map, but the share of nodes [%d,%d) owns it as %d", dir, o, block[o-lo], pt.Lo, pt.Hi, pt.Lo+int64(i))
		}
	}
	pt.Link.OrigLo, pt.Link.OrigHi, pt.Link.Orig2New = lo, hi, block
	return nil
}
