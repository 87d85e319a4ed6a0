package partition

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"mpignn/config"
	"mpignn/graph"
)

// Link prediction on one relation of a heterogeneous graph.
//
// LinkOptions.Relation names the relation r (canonical src___rel___dst);
// its edges are the positives. Everything is as in link.go, with these
// differences:
//
//   - Units. A random split draws over the relation's stored edges u -r-> v
//     (source of type src, destination of type dst), directed (Directed is
//     set) unless src and dst are the same type, where the units are the
//     distinct unordered pairs as for a homogeneous graph. A named split
//     ("time", "u1", any split/<name>/ directory) takes the rows that
//     LinkOptions.Rows holds (graph.ReadHeteroLinkSplit via
//     LinkOptions.ReadHeteroSplit) as directed events; a missing valid file
//     gives an empty valid set.
//   - Message passing. The adjacency is the dataset's, minus every
//     held-out (valid or test) positive in BOTH directions: u in row
//     v*R+r and, when the reverse relation (rev_<rel>, or <rel> for a
//     relation named rev_<rel>) is in the schema, v in row u*R+rev. For a
//     same-type relation without a reverse relation whose edges were
//     symmetrised into itself (Options.Undirected, or always for a random
//     split's unordered pairs) v is also removed from row u*R+r. Edges of
//     the relation that are in no split (a named split that does not cover
//     the relation) stay. METIS runs on this training graph.
//   - Negatives. Fixed evaluation negatives keep the positive's source and
//     draw the destination uniformly over the DESTINATION TYPE: negative j
//     of positive i is NodeOrig[dst] + Hash(seed, split, i, j) mod
//     Count(dst). Pool pairs draw the source over the source type and the
//     destination over the destination type.
//   - The valid adjacency (ValidAdj) has relation rows like indptr.bin
//     (NumOwned*R+1 offsets): the valid positives in r and, when present,
//     their reverses, minus the training rows.
//   - No structural features (featureless types get learnable embeddings).
//
// An empty valid split (MovieLens u1 has none) gives Valid = 0: no valid
// positives, no valid negatives, and the valid pool is still drawn. A
// trainer cannot select epochs on validation MRR/AUC then; it must train
// for the given number of epochs and report the final model's test
// figures (the partitioner does not carve a validation set out of the
// official training rows, which would change the published split).

// LinkRelations returns the index of the relation with canonical name
// relation in s and of its reverse (rev_<rel>, or <rel> for a relation named
// rev_<rel>; -1 when the schema has none), the two relations a link split
// removes held-out edges from.
func LinkRelations(s *graph.Schema, relation string) (r, rev int, err error) {
	r = s.RelIndex(relation)
	if r < 0 {
		names := make([]string, len(s.Relations))
		for i, rel := range s.Relations {
			names[i] = rel.String()
		}
		return -1, -1, fmt.Errorf("link relation %q is not in the dataset (have %s)", relation, strings.Join(names, ", "))
	}
	rel := s.Relations[r]
	rev = s.RelIndex(rel.Reverse().String())
	if name, ok := strings.CutPrefix(rel.Name, graph.ReversePrefix); ok && rev < 0 {
		rev = s.RelIndex(graph.Relation{Src: rel.Dst, Name: name, Dst: rel.Src}.String())
	}
	return r, rev, nil
}

// buildHeteroLink derives the link split opt.Link on a relation of d. It
// returns the split and a shallow copy of d whose In is the training graph.
func buildHeteroLink(d *graph.HeteroDataset, opt Options) (*linkData, *graph.HeteroDataset, error) {
	lo, err := opt.Link.resolved()
	if err != nil {
		return nil, nil, config.In("Link", err)
	}
	if lo.Relation == "" {
		return nil, nil, config.Errorf("link split of heterogeneous dataset %s: name the relation ({Link.Relation}, src___rel___dst)", heteroName(d))
	}
	kind, frac, _ := lo.linkKind()
	s := d.Schema
	r, rev, err := LinkRelations(s, lo.Relation)
	if err != nil {
		return nil, nil, err
	}
	st, dt := s.SrcType(r), s.DstType(r)
	n, R := d.NumNodes(), int64(s.NumRels())
	in := canonical(d.In, opt.workers())
	ld := &linkData{meta: LinkMeta{
		Split: lo.Split, Kind: kind, Seed: opt.Seed, NegsPerPos: lo.NegsPerPos,
		Pool: lo.Pool, ValidAdj: !lo.NoValidAdj, Relation: s.Relations[r].String(),
	}, n: n, rels: int(R),
		negLo: s.NodeOrig[dt], negN: s.Count(dt), srcLo: s.NodeOrig[st], srcN: s.Count(st)}
	if ld.negN == 0 || ld.srcN == 0 {
		return nil, nil, fmt.Errorf("link relation %s: node type %s or %s has no nodes", ld.meta.Relation, s.NodeTypes[st], s.NodeTypes[dt])
	}
	sameType := st == dt
	// both: a held-out pair also leaves relation r's row of its source.
	both := sameType && rev < 0 && opt.Undirected
	switch kind {
	case LinkSplitRandom:
		var pairs []linkPair
		for v := s.NodeOrig[dt]; v < s.NodeOrig[dt+1]; v++ {
			for _, u := range in.Neighbors(v*R + int64(r)) {
				switch {
				case !sameType:
					pairs = append(pairs, linkPair{u, v})
				case u != v:
					pairs = append(pairs, linkPair{min(u, v), max(u, v)})
				}
			}
		}
		ld.sets = splitPairs(pairs, frac, opt.Seed)
		ld.meta.Directed = !sameType
		both = both || (sameType && rev < 0)
	default:
		ls := lo.Rows
		if ls == nil {
			return nil, nil, fmt.Errorf("link split %q of relation %s: no rows given (read them with LinkOptions.ReadHeteroSplit into LinkOptions.Rows)", lo.Split, ld.meta.Relation)
		}
		for i, set := range []*graph.LinkSet{&ls.Train, &ls.Valid, &ls.Test} {
			if len(set.Dst) != len(set.Src) || (set.Time != nil && len(set.Time) != len(set.Src)) {
				return nil, nil, fmt.Errorf("link split %s %s: ragged arrays", lo.Split, setNames[i])
			}
			for k := range set.Src {
				u, v := set.Src[k], set.Dst[k]
				if u < s.NodeOrig[st] || u >= s.NodeOrig[st+1] || v < s.NodeOrig[dt] || v >= s.NodeOrig[dt+1] {
					return nil, nil, fmt.Errorf("link split %s %s: edge %d (%d,%d) is not %s -> %s (original ids [%d,%d) -> [%d,%d))",
						lo.Split, setNames[i], k, u, v, s.NodeTypes[st], s.NodeTypes[dt], s.NodeOrig[st], s.NodeOrig[st+1], s.NodeOrig[dt], s.NodeOrig[dt+1])
				}
			}
			ld.sets[i] = canonicalEvents(set)
		}
		ld.meta.Directed, ld.meta.HasTime = true, ls.HasTime
	}
	ld.meta.Train, ld.meta.Valid, ld.meta.Test = int64(ld.sets[0].len()), int64(ld.sets[1].len()), int64(ld.sets[2].len())
	if ld.meta.Graph, err = lo.checkGraph(opt.Time, ld.meta.HasTime); err != nil {
		return nil, nil, err
	}

	// entries lists the relation-row entries (row, source) of edge sets.
	entries := func(sets ...*edgeList) (rows, cols []int64) {
		for _, e := range sets {
			for i := range e.src {
				u, v := e.src[i], e.dst[i]
				rows, cols = append(rows, v*R+int64(r)), append(cols, u)
				if rev >= 0 {
					rows, cols = append(rows, u*R+int64(rev)), append(cols, v)
				}
				if both {
					rows, cols = append(rows, u*R+int64(r)), append(cols, v)
				}
			}
		}
		return rows, cols
	}
	bo := graph.BuildOptions{Dedup: true, Workers: opt.Workers}
	// Rows are relation rows (n*R of them), so build over n*R "nodes";
	// the sources are node ids < n <= n*R.
	hrows, hcols := entries(&ld.sets[setValid], &ld.sets[setTest])
	held := graph.BuildInCSR(n*R, hcols, hrows, bo)
	ds := *d
	simple := func() *graph.CSR { return ds.In } // the training adjacency as a simple graph
	if opt.Time {
		if d.InTime == nil {
			return nil, nil, fmt.Errorf("link split %s of relation %s: times requested but the dataset has no edge or node times", lo.Split, ld.meta.Relation)
		}
		if ld.meta.Graph != LinkGraphAll {
			// Held-out events leave the timed adjacency: an event of a
			// split with times only at its own time, so that the same
			// pair's other (training) events stay.
			var heldTime []int64
			if ld.meta.HasTime {
				var ts []int64
				for _, e := range []*edgeList{&ld.sets[setValid], &ld.sets[setTest]} {
					for i := range e.src {
						ts = append(ts, e.time[i])
						if rev >= 0 {
							ts = append(ts, e.time[i])
						}
						if both {
							ts = append(ts, e.time[i])
						}
					}
				}
				held, heldTime = graph.BuildInCSRTimed(n*R, hcols, hrows, ts, bo)
			}
			ds.In, ds.InTime = subtractTimedRows(d.In, d.InTime, held, heldTime)
		}
		simple = func() *graph.CSR { return canonical(ds.In, opt.workers()) }
	} else {
		ds.In = subtractRows(in, held)
	}
	if ld.meta.ValidAdj {
		vrows, vcols := entries(&ld.sets[setValid])
		ld.validIn = subtractRows(graph.BuildInCSR(n*R, vcols, vrows, bo), simple())
	}
	return ld, &ds, nil
}

// subtractTimedRows returns the timed adjacency (a, at) without the
// entries of b: with bt (rows of b by (time, source)) an entry goes when b's
// row has the same (time, source); without bt, when b's row (ascending
// sources) has its source at any time.
func subtractTimedRows(a *graph.CSR, at []int64, b *graph.CSR, bt []int64) (*graph.CSR, []int64) {
	n := a.NumRows()
	out := &graph.CSR{Indptr: make([]int64, n+1), Indices: make([]int64, 0, len(a.Indices))}
	times := make([]int64, 0, len(at))
	for v := int64(0); v < n; v++ {
		lo, hi := b.Indptr[v], b.Indptr[v+1]
		for k := a.Indptr[v]; k < a.Indptr[v+1]; k++ {
			u, t := a.Indices[k], at[k]
			var found bool
			if bt != nil {
				j := lo + int64(sort.Search(int(hi-lo), func(i int) bool {
					x := lo + int64(i)
					return bt[x] > t || (bt[x] == t && b.Indices[x] >= u)
				}))
				found = j < hi && bt[j] == t && b.Indices[j] == u
			} else {
				_, found = slices.BinarySearch(b.Indices[lo:hi], u)
			}
			if !found {
				out.Indices = append(out.Indices, u)
				times = append(times, t)
			}
		}
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out, times
}

// checkHeteroLink checks the types of a heterogeneous part's link arrays:
// positives and pool pairs go from the relation's source type to its
// destination type, negatives are of the destination type (original ids;
// checkLink has checked their range and agreement with the new ids).
func (pt *Part) checkHeteroLink(file func(string) string) error {
	s, err := pt.Meta.Hetero.Schema()
	if err != nil {
		return fmt.Errorf("load %s: %w", file(fileLinkTrain), err)
	}
	r := s.RelIndex(pt.Meta.Link.Relation)
	if r < 0 {
		return fmt.Errorf("load %s: link relation %q is not in the schema", file(fileLinkTrain), pt.Meta.Link.Relation)
	}
	st, dt := s.SrcType(r), s.DstType(r)
	of := func(t int, o int64) bool { return o >= s.NodeOrig[t] && o < s.NodeOrig[t+1] }
	lp := pt.Link
	for _, f := range []struct {
		name string
		e    *LinkEdges
	}{
		{fileLinkTrain, &lp.Train}, {fileLinkValid, &lp.Valid}, {fileLinkTest, &lp.Test},
		{fileLinkValidPool, &lp.ValidPool}, {fileLinkTestPool, &lp.TestPool},
	} {
		for i := range f.e.ID {
			if !of(st, f.e.SrcOrig[i]) || !of(dt, f.e.DstOrig[i]) {
				return fmt.Errorf("load %s: edge %d (%d,%d) is not %s -> %s", file(f.name), i, f.e.SrcOrig[i], f.e.DstOrig[i], s.NodeTypes[st], s.NodeTypes[dt])
			}
		}
	}
	for _, f := range []struct {
		name string
		orig []int64
	}{{fileLinkValidNeg, lp.ValidNegOrig}, {fileLinkTestNeg, lp.TestNegOrig}} {
		for i, o := range f.orig {
			if !of(dt, o) {
				return fmt.Errorf("load %s: entry %d: negative %d is not of type %s", file(f.name), i, o, s.NodeTypes[dt])
			}
		}
	}
	return nil
}
