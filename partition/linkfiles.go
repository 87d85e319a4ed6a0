package partition

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
)

// Link array files inside part-<p>/ (only in link partitions).
//
// A positive or pool edge set is one int64 file of 6 blocks of n values,
// src | dst | src_orig | dst_orig | id | time, so that one file (one
// checksum) holds a set. The negatives are one int64 file of 2 blocks of
// n*K values, new ids then original ids.
const (
	fileLinkTrain     = "link-train.bin"        // int64[6*train]
	fileLinkValid     = "link-valid.bin"        // int64[6*valid]
	fileLinkTest      = "link-test.bin"         // int64[6*test]
	fileLinkValidNeg  = "link-valid-neg.bin"    // int64[2*valid*K]
	fileLinkTestNeg   = "link-test-neg.bin"     // int64[2*test*K]
	fileLinkValidPool = "link-valid-pool.bin"   // int64[6*valid_pool]
	fileLinkTestPool  = "link-test-pool.bin"    // int64[6*test_pool]
	fileLinkVIndptr   = "link-vadj-indptr.bin"  // int64[nodes+1] (ValidAdj only)
	fileLinkVIndices  = "link-vadj-indices.bin" // int64[valid_adj_edges]
	fileLinkVIndOrig  = "link-vadj-orig.bin"    // int64[valid_adj_edges]
	fileLinkOrig2New  = "link-orig2new.bin"     // int64[OrigBlock size]
	// The positives' edge labels (Meta.Link.EdgeTargetDim > 0 only),
	// float32[edges*EdgeTargetDim] each, rows in the edge files' order.
	fileLinkTrainTargets = "link-train-targets.bin"
	fileLinkValidTargets = "link-valid-targets.bin"
	fileLinkTestTargets  = "link-test-targets.bin"
)

// edgeBlocks is the number of int64 blocks of a stored edge set.
const edgeBlocks = 6

// LinkCounts is one part's share of the link split (PartInfo.Link).
type LinkCounts struct {
	Train     int64 `json:"train"`
	Valid     int64 `json:"valid"`
	Test      int64 `json:"test"`
	ValidPool int64 `json:"valid_pool"`
	TestPool  int64 `json:"test_pool"`
	// ValidAdjEdges are the stored valid in-edges of owned nodes.
	ValidAdjEdges int64 `json:"valid_adj_edges"`
}

// linkFiles lists part p's link files with their lengths.
func (m *Meta) linkFiles(p int) []fileSpec {
	c := m.Parts[p].Link
	k := int64(m.Link.NegsPerPos)
	lo, hi := OrigBlock(m.NumNodes, m.NumParts, p)
	fs := []fileSpec{
		{fileLinkTrain, dtInt64, edgeBlocks * c.Train},
		{fileLinkValid, dtInt64, edgeBlocks * c.Valid},
		{fileLinkTest, dtInt64, edgeBlocks * c.Test},
		{fileLinkValidNeg, dtInt64, 2 * c.Valid * k},
		{fileLinkTestNeg, dtInt64, 2 * c.Test * k},
		{fileLinkValidPool, dtInt64, edgeBlocks * c.ValidPool},
		{fileLinkTestPool, dtInt64, edgeBlocks * c.TestPool},
	}
	if m.Link.ValidAdj {
		fs = append(fs,
			fileSpec{fileLinkVIndptr, dtInt64, m.Parts[p].Nodes*int64(m.NumRels()) + 1},
			fileSpec{fileLinkVIndices, dtInt64, c.ValidAdjEdges},
			fileSpec{fileLinkVIndOrig, dtInt64, c.ValidAdjEdges})
	}
	if d := int64(m.Link.EdgeTargetDim); d > 0 {
		fs = append(fs,
			fileSpec{fileLinkTrainTargets, dtFloat32, c.Train * d},
			fileSpec{fileLinkValidTargets, dtFloat32, c.Valid * d},
			fileSpec{fileLinkTestTargets, dtFloat32, c.Test * d})
	}
	return append(fs, fileSpec{fileLinkOrig2New, dtInt64, hi - lo})
}

// validateLink checks the link section against the per-part counts.
func (m *Meta) validateLink() error {
	l := m.Link
	if l == nil {
		for i, pi := range m.Parts {
			if pi.Link != nil {
				return fmt.Errorf("part %d has link counts but META has no link section", i)
			}
		}
		return nil
	}
	if l.Kind != LinkSplitRandom && l.Kind != LinkSplitTime && (l.Kind != LinkSplitNamed || l.Relation == "") {
		return fmt.Errorf("link: kind %q, want %s or %s (or %s for a relation)", l.Kind, LinkSplitRandom, LinkSplitTime, LinkSplitNamed)
	}
	if (l.Relation != "") != (m.Hetero != nil) {
		return fmt.Errorf("link: relation %q: a heterogeneous partition's link split needs one, a homogeneous one has none", l.Relation)
	}
	if l.EdgeTargetDim < 0 || l.EdgeTargetDim > maxStruct || l.EdgeClasses < 0 || l.EdgeClasses > 1<<24 || (l.EdgeClasses > 0 && l.EdgeTargetDim != 1) {
		return fmt.Errorf("link: edge_target_dim %d or edge_classes %d out of range (classes are one column)", l.EdgeTargetDim, l.EdgeClasses)
	}
	if l.NegsPerPos < 0 || l.NegsPerPos > maxNegsPerPos || l.Pool < 0 || l.Pool > maxPool || l.StructFeats < 0 || l.StructFeats > maxStruct {
		return fmt.Errorf("link: negs_per_pos %d, pool %d or struct_feats %d out of range", l.NegsPerPos, l.Pool, l.StructFeats)
	}
	if l.Train < 0 || l.Valid < 0 || l.Test < 0 || l.Train > 1<<44 || l.Valid > 1<<36 || l.Test > 1<<36 {
		return fmt.Errorf("link: bad counts train %d, valid %d, test %d", l.Train, l.Valid, l.Test)
	}
	var sum LinkCounts
	for i, pi := range m.Parts {
		c := pi.Link
		if c == nil {
			return fmt.Errorf("part %d has no link counts", i)
		}
		if c.Train < 0 || c.Valid < 0 || c.Test < 0 || c.ValidPool < 0 || c.TestPool < 0 || c.ValidAdjEdges < 0 {
			return fmt.Errorf("part %d: negative link counts %+v", i, *c)
		}
		if !l.ValidAdj && c.ValidAdjEdges != 0 {
			return fmt.Errorf("part %d: %d valid adjacency edges but valid_adj is off", i, c.ValidAdjEdges)
		}
		// Each valid edge gives at most two adjacency entries (both
		// directions); the bound also keeps a forged count from sizing
		// a huge read.
		if c.ValidAdjEdges > 2*l.Valid {
			return fmt.Errorf("part %d: %d valid adjacency edges for %d valid edges", i, c.ValidAdjEdges, l.Valid)
		}
		sum.Train += c.Train
		sum.Valid += c.Valid
		sum.Test += c.Test
		sum.ValidPool += c.ValidPool
		sum.TestPool += c.TestPool
	}
	if sum.Train != l.Train || sum.Valid != l.Valid || sum.Test != l.Test {
		return fmt.Errorf("link: parts hold %d/%d/%d positives, META says %d/%d/%d", sum.Train, sum.Valid, sum.Test, l.Train, l.Valid, l.Test)
	}
	if l.TestPool < 0 || l.TestPool > maxPool || (l.TestPool != 0 && !l.StoredPool) {
		return fmt.Errorf("link: test_pool %d out of range or without stored_pool", l.TestPool)
	}
	if sum.ValidPool != l.PoolSize("valid") || sum.TestPool != l.PoolSize("test") {
		return fmt.Errorf("link: parts hold %d valid and %d test pool pairs, pools are %d and %d", sum.ValidPool, sum.TestPool, l.PoolSize("valid"), l.PoolSize("test"))
	}
	return nil
}

// linkBuckets are the link edges of every part: for each split, the
// canonical ids of the positives whose source the part owns (ascending),
// and the pool pairs (original ids) with their owners.
type linkBuckets struct {
	pos          [3][][]int64 // [set][part] -> canonical ids
	poolU, poolW [2][]int64   // [valid/test][k]
	pool         [2][][]int64 // [valid/test][part] -> pool indices
	// edges are the pairs of all splits, which negatives avoid.
	edges *edgeSet
}

func bucketLink(ld *linkData, rl *Relabeling, nparts int) (*linkBuckets, error) {
	lb := &linkBuckets{edges: newEdgeSet(ld)}
	owner := func(orig int64) int { return Owner(rl.Offsets, rl.NewID[orig]) }
	for s := range ld.sets {
		lb.pos[s] = make([][]int64, nparts)
		for i, u := range ld.sets[s].src {
			p := owner(u)
			lb.pos[s][p] = append(lb.pos[s][p], int64(i))
		}
	}
	for q := 0; q < 2; q++ {
		size := ld.meta.PoolSize(setNames[setValid+q])
		lb.pool[q] = make([][]int64, nparts)
		lb.poolU[q] = make([]int64, size)
		lb.poolW[q] = make([]int64, size)
		for k := int64(0); k < size; k++ {
			if ld.meta.StoredPool {
				// The split's own shared negatives, as they are (OGB
				// does not filter them either).
				u := ld.pools[q].src[k]
				lb.poolU[q][k], lb.poolW[q][k] = u, ld.pools[q].dst[k]
				p := owner(u)
				lb.pool[q][p] = append(lb.pool[q][p], k)
				continue
			}
			u, w, err := lb.edges.poolPair(ld.meta.Seed, setValid+q, k, ld.srcLo, ld.srcN, ld.negLo, ld.negN)
			if err != nil {
				return nil, err
			}
			lb.poolU[q][k], lb.poolW[q][k] = u, w
			p := owner(u)
			lb.pool[q][p] = append(lb.pool[q][p], k)
		}
	}
	return lb, nil
}

// writeLinkPart writes part p's link files (see the file constants) and
// returns its counts.
func writeLinkPart(files map[string]FileInfo, aw *arrayWriter, pdir string, p int, ld *linkData, lb *linkBuckets, rl *Relabeling, lo, hi int64) (*LinkCounts, error) {
	lp, err := linkPartOf(p, ld, lb, rl, lo, hi)
	if err != nil {
		return nil, err
	}
	return lp.write(files, aw, pdir, p, ld.meta.ValidAdj)
}

// edgesOf returns the edges ids of e (original ids src, dst) as LinkEdges.
func edgesOf(ids, src, dst, tm []int64, newID []int64) LinkEdges {
	e := LinkEdges{Src: make([]int64, len(ids)), Dst: make([]int64, len(ids)), SrcOrig: src, DstOrig: dst, ID: ids, Time: tm}
	for i := range ids {
		e.Src[i], e.Dst[i] = newID[src[i]], newID[dst[i]]
	}
	return e
}

// linkPartOf builds part p's share of the link split.
func linkPartOf(p int, ld *linkData, lb *linkBuckets, rl *Relabeling, lo, hi int64) (*LinkPart, error) {
	seed, k := ld.meta.Seed, ld.meta.NegsPerPos
	lp := &LinkPart{}
	sets := [3]*LinkEdges{&lp.Train, &lp.Valid, &lp.Test}
	negs := [3][2]*[]int64{{}, {&lp.ValidNeg, &lp.ValidNegOrig}, {&lp.TestNeg, &lp.TestNegOrig}}
	for s := range ld.sets {
		ids := lb.pos[s][p]
		e := &ld.sets[s]
		src, dst, tm := make([]int64, len(ids)), make([]int64, len(ids)), make([]int64, len(ids))
		for i, id := range ids {
			src[i], dst[i], tm[i] = e.src[id], e.dst[id], e.time[id]
		}
		*sets[s] = edgesOf(ids, src, dst, tm, rl.NewID)
		if k := ld.meta.EdgeTargetDim; k > 0 {
			targ := make([]float32, len(ids)*k)
			for i, id := range ids {
				copy(targ[i*k:(i+1)*k], e.targ[int(id)*k:(int(id)+1)*k])
			}
			sets[s].Targets = targ
		}
		if s == setTrain {
			continue
		}
		nk := len(ids) * k
		neg, negOrig := make([]int64, nk), make([]int64, nk)
		for i, id := range ids {
			if e.neg != nil {
				// The split's own negatives (OGB's), as they are.
				for j, w := range e.neg[int(id)*k : (int(id)+1)*k] {
					neg[i*k+j], negOrig[i*k+j] = rl.NewID[w], w
				}
				continue
			}
			for j := 0; j < k; j++ {
				w, err := lb.edges.evalNegative(seed, s, id, j, e.src[id], ld.negLo, ld.negN)
				if err != nil {
					return nil, err
				}
				neg[i*k+j], negOrig[i*k+j] = rl.NewID[w], w
			}
		}
		*negs[s][0], *negs[s][1] = neg, negOrig
	}
	for q, pool := range []*LinkEdges{&lp.ValidPool, &lp.TestPool} {
		ks := lb.pool[q][p]
		src, dst, tm := make([]int64, len(ks)), make([]int64, len(ks)), make([]int64, len(ks))
		for i, kk := range ks {
			src[i], dst[i] = lb.poolU[q][kk], lb.poolW[q][kk]
		}
		*pool = edgesOf(ks, src, dst, tm, rl.NewID)
	}
	if ld.validIn != nil {
		orig := rl.Orig[lo:hi]
		R := int64(ld.rels)
		indptr := make([]int64, int64(len(orig))*R+1)
		var ind, indOrig []int64
		for i, o := range orig {
			for r := int64(0); r < R; r++ {
				row := ld.validIn.Neighbors(o*R + r)
				for _, u := range row {
					ind = append(ind, rl.NewID[u])
				}
				indOrig = append(indOrig, row...)
				indptr[int64(i)*R+r+1] = int64(len(indOrig))
			}
		}
		if ind == nil {
			ind, indOrig = []int64{}, []int64{}
		}
		lp.ValidIndptr, lp.ValidIndices, lp.ValidIndicesOrig = indptr, ind, indOrig
	}
	lp.OrigLo, lp.OrigHi = OrigBlock(ld.n, len(rl.Offsets)-1, p)
	lp.Orig2New = rl.NewID[lp.OrigLo:lp.OrigHi]
	return lp, nil
}

// edgeFile lays out e in the edgeBlocks format.
func edgeFile(e *LinkEdges) []int64 {
	k := int64(e.Len())
	out := make([]int64, edgeBlocks*k)
	for j, xs := range [][]int64{e.Src, e.Dst, e.SrcOrig, e.DstOrig, e.ID, e.Time} {
		copy(out[int64(j)*k:], xs)
	}
	return out
}

// write writes lp as part p's link files (see the file constants; the
// valid adjacency with validAdj) and returns its counts. The single-process
// writer and the distributed one (PartFiles.Link) both write through it.
func (lp *LinkPart) write(files map[string]FileInfo, aw *arrayWriter, pdir string, p int, validAdj bool) (*LinkCounts, error) {
	c := &LinkCounts{
		Train: int64(lp.Train.Len()), Valid: int64(lp.Valid.Len()), Test: int64(lp.Test.Len()),
		ValidPool: int64(lp.ValidPool.Len()), TestPool: int64(lp.TestPool.Len()),
	}
	type file struct {
		name string
		xs   []int64
	}
	fs := []file{
		{fileLinkTrain, edgeFile(&lp.Train)}, {fileLinkValid, edgeFile(&lp.Valid)}, {fileLinkTest, edgeFile(&lp.Test)},
		{fileLinkValidNeg, append(slices.Clip(lp.ValidNeg), lp.ValidNegOrig...)},
		{fileLinkTestNeg, append(slices.Clip(lp.TestNeg), lp.TestNegOrig...)},
		{fileLinkValidPool, edgeFile(&lp.ValidPool)}, {fileLinkTestPool, edgeFile(&lp.TestPool)},
	}
	if validAdj {
		c.ValidAdjEdges = int64(len(lp.ValidIndices))
		fs = append(fs, file{fileLinkVIndptr, lp.ValidIndptr}, file{fileLinkVIndices, lp.ValidIndices}, file{fileLinkVIndOrig, lp.ValidIndicesOrig})
	}
	fs = append(fs, file{fileLinkOrig2New, lp.Orig2New})
	for _, f := range fs {
		if f.xs == nil {
			f.xs = []int64{}
		}
		if err := putArray(files, aw, pdir, p, f.name, f.xs); err != nil {
			return nil, err
		}
	}
	if lp.Train.Targets != nil {
		for _, f := range []struct {
			name string
			xs   []float32
		}{{fileLinkTrainTargets, lp.Train.Targets}, {fileLinkValidTargets, lp.Valid.Targets}, {fileLinkTestTargets, lp.Test.Targets}} {
			if f.xs == nil {
				f.xs = []float32{}
			}
			if err := putArray(files, aw, pdir, p, f.name, f.xs); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// loadLink reads part p's link files into pt.Link and checks them.
func (pt *Part) loadLink(dir string) error {
	m, p := pt.Meta, pt.ID
	c := m.Parts[p].Link
	k := int64(m.Link.NegsPerPos)
	lp := &LinkPart{}
	read := func(name string) ([]int64, error) { return readPartArray[int64](dir, m, p, name) }
	for _, f := range []struct {
		name string
		dst  *LinkEdges
		n    int64
	}{
		{fileLinkTrain, &lp.Train, c.Train}, {fileLinkValid, &lp.Valid, c.Valid}, {fileLinkTest, &lp.Test, c.Test},
		{fileLinkValidPool, &lp.ValidPool, c.ValidPool}, {fileLinkTestPool, &lp.TestPool, c.TestPool},
	} {
		xs, err := read(f.name)
		if err != nil {
			return err
		}
		n := f.n
		*f.dst = LinkEdges{Src: xs[:n:n], Dst: xs[n : 2*n : 2*n], SrcOrig: xs[2*n : 3*n : 3*n],
			DstOrig: xs[3*n : 4*n : 4*n], ID: xs[4*n : 5*n : 5*n], Time: xs[5*n : 6*n : 6*n]}
	}
	for _, f := range []struct {
		name      string
		neg, orig *[]int64
		n         int64
	}{{fileLinkValidNeg, &lp.ValidNeg, &lp.ValidNegOrig, c.Valid * k}, {fileLinkTestNeg, &lp.TestNeg, &lp.TestNegOrig, c.Test * k}} {
		xs, err := read(f.name)
		if err != nil {
			return err
		}
		*f.neg, *f.orig = xs[:f.n:f.n], xs[f.n:]
	}
	if m.Link.ValidAdj {
		var err error
		if lp.ValidIndptr, err = read(fileLinkVIndptr); err != nil {
			return err
		}
		if lp.ValidIndices, err = read(fileLinkVIndices); err != nil {
			return err
		}
		if lp.ValidIndicesOrig, err = read(fileLinkVIndOrig); err != nil {
			return err
		}
	}
	if m.Link.EdgeTargetDim > 0 {
		for _, f := range []struct {
			name string
			e    *LinkEdges
		}{{fileLinkTrainTargets, &lp.Train}, {fileLinkValidTargets, &lp.Valid}, {fileLinkTestTargets, &lp.Test}} {
			xs, err := readPartArray[float32](dir, m, p, f.name)
			if err != nil {
				return err
			}
			f.e.Targets = xs
		}
	}
	var err error
	if lp.Orig2New, err = read(fileLinkOrig2New); err != nil {
		return err
	}
	lp.OrigLo, lp.OrigHi = OrigBlock(m.NumNodes, m.NumParts, p)
	pt.Link = lp
	return pt.checkLink(dir)
}

// checkLink verifies what the link loader and evaluation rely on: ids in
// range, edges sorted by id, sources owned, new and original ids agreeing
// wherever this part can tell (owned nodes, its Orig2New block).
func (pt *Part) checkLink(dir string) error {
	m, lp := pt.Meta, pt.Link
	n := m.NumNodes
	file := func(name string) string { return filepath.Join(dir, partDir(pt.ID), name) }
	// consistent reports whether new id g and original id o can be the
	// same node as far as this part knows.
	consistent := func(g, o int64) bool {
		if g < 0 || g >= n || o < 0 || o >= n {
			return false
		}
		if g >= pt.Lo && g < pt.Hi && pt.Orig[g-pt.Lo] != o {
			return false
		}
		if o >= lp.OrigLo && o < lp.OrigHi && lp.Orig2New[o-lp.OrigLo] != g {
			return false
		}
		return true
	}
	for i, g := range lp.Orig2New {
		if g < 0 || g >= n {
			return fmt.Errorf("load %s: entry %d: id %d outside [0,%d)", file(fileLinkOrig2New), i, g, n)
		}
	}
	for i, o := range pt.Orig {
		if o >= lp.OrigLo && o < lp.OrigHi && lp.Orig2New[o-lp.OrigLo] != pt.Lo+int64(i) {
			return fmt.Errorf("load %s: original id %d maps to %d, but part %d owns it as %d", file(fileLinkOrig2New), o, lp.Orig2New[o-lp.OrigLo], pt.ID, pt.Lo+int64(i))
		}
	}
	l := m.Link
	for _, f := range []struct {
		name  string
		e     *LinkEdges
		total int64
	}{
		{fileLinkTrain, &lp.Train, l.Train}, {fileLinkValid, &lp.Valid, l.Valid}, {fileLinkTest, &lp.Test, l.Test},
		{fileLinkValidPool, &lp.ValidPool, l.PoolSize("valid")}, {fileLinkTestPool, &lp.TestPool, l.PoolSize("test")},
	} {
		e := f.e
		for i, id := range e.ID {
			if id < 0 || id >= f.total || (i > 0 && id <= e.ID[i-1]) {
				return fmt.Errorf("load %s: edge %d: id %d out of [0,%d) or not ascending", file(f.name), i, id, f.total)
			}
			if e.Src[i] < pt.Lo || e.Src[i] >= pt.Hi {
				return fmt.Errorf("load %s: edge %d: source %d not owned by part %d", file(f.name), i, e.Src[i], pt.ID)
			}
			if !consistent(e.Src[i], e.SrcOrig[i]) || !consistent(e.Dst[i], e.DstOrig[i]) {
				return fmt.Errorf("load %s: edge %d: ids (%d,%d) / original (%d,%d) out of range or inconsistent", file(f.name), i, e.Src[i], e.Dst[i], e.SrcOrig[i], e.DstOrig[i])
			}
		}
	}
	for _, f := range []struct {
		name      string
		neg, orig []int64
	}{{fileLinkValidNeg, lp.ValidNeg, lp.ValidNegOrig}, {fileLinkTestNeg, lp.TestNeg, lp.TestNegOrig}} {
		for i := range f.neg {
			if !consistent(f.neg[i], f.orig[i]) {
				return fmt.Errorf("load %s: entry %d: id %d / original %d out of range or inconsistent", file(f.name), i, f.neg[i], f.orig[i])
			}
		}
	}
	if l.ValidAdj {
		ptr := lp.ValidIndptr
		if ptr[0] != 0 || ptr[len(ptr)-1] != int64(len(lp.ValidIndices)) {
			return fmt.Errorf("load %s: offsets run from %d to %d, want 0 to %d", file(fileLinkVIndptr), ptr[0], ptr[len(ptr)-1], len(lp.ValidIndices))
		}
		for v := 0; v+1 < len(ptr); v++ {
			if ptr[v+1] < ptr[v] {
				return fmt.Errorf("load %s: offsets decrease at row %d", file(fileLinkVIndptr), v)
			}
			for j := ptr[v]; j < ptr[v+1]; j++ {
				if !consistent(lp.ValidIndices[j], lp.ValidIndicesOrig[j]) || (j > ptr[v] && lp.ValidIndicesOrig[j] <= lp.ValidIndicesOrig[j-1]) {
					return fmt.Errorf("load %s: row %d: entry %d out of range, inconsistent or not in canonical order", file(fileLinkVIndOrig), v, j)
				}
			}
		}
	}
	if err := checkEdgeTargets(l, lp, file); err != nil {
		return err
	}
	if m.Hetero != nil {
		return pt.checkHeteroLink(file)
	}
	return nil
}

// checkEdgeTargets verifies the positives' edge labels: one row per
// positive, finite or NaN, and classes whole numbers in range.
func checkEdgeTargets(l *LinkMeta, lp *LinkPart, file func(string) string) error {
	k := l.EdgeTargetDim
	for _, f := range []struct {
		name string
		e    *LinkEdges
	}{{fileLinkTrainTargets, &lp.Train}, {fileLinkValidTargets, &lp.Valid}, {fileLinkTestTargets, &lp.Test}} {
		if k == 0 {
			if f.e.Targets != nil {
				return fmt.Errorf("load %s: edge labels but META has no edge_target_dim", file(f.name))
			}
			continue
		}
		if len(f.e.Targets) != f.e.Len()*k {
			return fmt.Errorf("load %s: %d values for %d edges of width %d", file(f.name), len(f.e.Targets), f.e.Len(), k)
		}
		for i, y := range f.e.Targets {
			bad := math.IsInf(float64(y), 0)
			if l.EdgeClasses > 0 && y == y {
				bad = bad || y < 0 || int(y) >= l.EdgeClasses || y != float32(int(y))
			}
			if bad {
				return fmt.Errorf("load %s: edge %d: label %v is infinite or not a class in [0,%d)", file(f.name), i/k, y, l.EdgeClasses)
			}
		}
	}
	return nil
}

// MergedValidAdjacency returns the in-adjacency of the owned nodes with the
// valid edges added to the training edges (for test-time inference with
// --use-valid-edges, the OGB collab rule): offsets, new ids and original
// ids of the sources, every row in canonical order (ascending original id).
// The stored valid rows exclude training pairs, so the merge has no
// duplicates. It fails when the partition was written without ValidAdj.
func (pt *Part) MergedValidAdjacency() (indptr, indices, indicesOrig []int64, err error) {
	if pt.Link == nil || pt.Meta.Link == nil || !pt.Meta.Link.ValidAdj {
		return nil, nil, nil, fmt.Errorf("part %d: no valid-edge adjacency stored (not a link partition, or written without it)", pt.ID)
	}
	lp := pt.Link
	rows := len(pt.Indptr) - 1
	tPtr, tInd, tOrig := pt.Indptr, pt.Indices, pt.IndicesOrig
	if pt.Times != nil {
		// Timed rows are ordered by time and may repeat a source; the
		// merge wants the simple graph in canonical order.
		tPtr, tInd, tOrig = simpleRows(pt.Indptr, pt.Indices, pt.IndicesOrig)
	}
	total := int64(len(tInd) + len(lp.ValidIndices))
	indptr = make([]int64, rows+1)
	indices = make([]int64, 0, total)
	indicesOrig = make([]int64, 0, total)
	for v := 0; v < rows; v++ {
		a, b := tPtr[v], tPtr[v+1]
		c, d := lp.ValidIndptr[v], lp.ValidIndptr[v+1]
		for a < b || c < d {
			if c >= d || (a < b && tOrig[a] < lp.ValidIndicesOrig[c]) {
				indices = append(indices, tInd[a])
				indicesOrig = append(indicesOrig, tOrig[a])
				a++
			} else {
				indices = append(indices, lp.ValidIndices[c])
				indicesOrig = append(indicesOrig, lp.ValidIndicesOrig[c])
				c++
			}
		}
		indptr[v+1] = int64(len(indices))
	}
	return indptr, indices, indicesOrig, nil
}

// simpleRows returns the rows of a timed adjacency in canonical order
// (ascending original id, each source once).
func simpleRows(ptr, ind, orig []int64) (sPtr, sInd, sOrig []int64) {
	sPtr = make([]int64, len(ptr))
	sInd, sOrig = make([]int64, 0, len(ind)), make([]int64, 0, len(orig))
	for v := 0; v+1 < len(ptr); v++ {
		row := make([][2]int64, 0, ptr[v+1]-ptr[v])
		for k := ptr[v]; k < ptr[v+1]; k++ {
			row = append(row, [2]int64{orig[k], ind[k]})
		}
		slices.SortFunc(row, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
		row = slices.Compact(row)
		for _, e := range row {
			sOrig, sInd = append(sOrig, e[0]), append(sInd, e[1])
		}
		sPtr[v+1] = int64(len(sInd))
	}
	return sPtr, sInd, sOrig
}

// Positives returns the part's positive edges of split set ("train",
// "valid" or "test"), or nil for another name.
func (lp *LinkPart) Positives(set string) *LinkEdges {
	switch set {
	case "train":
		return &lp.Train
	case "valid":
		return &lp.Valid
	case "test":
		return &lp.Test
	}
	return nil
}

// Negatives returns the fixed negatives of split set ("valid" or "test"):
// K destinations per positive of Positives(set), row-major, as new and
// original ids; nil for another name.
func (lp *LinkPart) Negatives(set string) (neg, negOrig []int64) {
	switch set {
	case "valid":
		return lp.ValidNeg, lp.ValidNegOrig
	case "test":
		return lp.TestNeg, lp.TestNegOrig
	}
	return nil, nil
}

// NegPool returns the negative pool of split set ("valid" or "test"), or
// nil for another name.
func (lp *LinkPart) NegPool(set string) *LinkEdges {
	switch set {
	case "valid":
		return &lp.ValidPool
	case "test":
		return &lp.TestPool
	}
	return nil
}
