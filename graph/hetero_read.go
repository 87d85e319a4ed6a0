package graph

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// HeteroReadOptions control how ReadOGBHetero turns OGB's heterogeneous raw
// files into a HeteroDataset. The zero value reads the relations exactly as
// stored (one direction each), every node split, on GOMAXPROCS workers;
// DefaultHeteroReadOptions is what the command line uses.
type HeteroReadOptions struct {
	// Splits names the node-split directories under split/ to read; nil
	// reads every node split found (link splits, whose rows are
	// "src,dst[,time,rating]", are skipped: read them with
	// ReadHeteroLinkSplit).
	Splits []string
	// Reverse adds, for every stored relation src___rel___dst, the relation
	// dst___rev_rel___src holding each edge reversed, as PyG's ToUndirected
	// does; a relation whose source and destination types are equal (such
	// as paper___cites___paper) gets its reversed edges added to itself
	// instead.
	Reverse bool
	// NoReverse lists canonical names of stored relations to leave
	// one-directional when Reverse is set.
	NoReverse []string
	// NormalizeFeatures divides every feature row by its sum when the sum
	// is positive.
	NormalizeFeatures bool
	// Workers is the parse parallelism; 0 means GOMAXPROCS.
	Workers int
	// Time reads edge times per relation (raw/relations/<rel>/edge_time.csv.gz)
	// and node times per type (raw/node_time/<type>/node_time.csv.gz or
	// raw/node_year/<type>/node_year.csv.gz) into InTime and NodeTime; In
	// is then timed (see HeteroDataset.InTime). A relation without edge
	// times takes its source nodes' times, which its source type must have.
	Time bool
	// EdgeFeat names per-edge attributes of the relations
	// (raw/relations/<rel>/edge_<name>.csv.gz, one value per edge line)
	// to read as edge-feature columns, in this order, into
	// HeteroDataset.EdgeFeat (see hetero_edgefeat.go); nil reads none.
	// Not with Time yet.
	EdgeFeat []string
}

// DefaultHeteroReadOptions returns the options the command line reads
// heterogeneous datasets with: reverse relations added, as a GNN over the
// stored directions alone could not send messages from papers to authors.
func DefaultHeteroReadOptions() HeteroReadOptions {
	return HeteroReadOptions{Reverse: true}
}

// IsHeteroLayout reports whether dir holds OGB's heterogeneous raw layout
// (raw/num-node-dict.csv.gz exists).
func IsHeteroLayout(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "raw", "num-node-dict.csv.gz"))
	return err == nil
}

// maxTypeNodes bounds the nodes of one type: the reader and the generator
// pack a (destination, source) pair of type-local ids into one uint64.
const maxTypeNodes = 1<<32 - 1

// ReadOGBHetero reads a heterogeneous dataset in OGB's raw layout, as
// ogbn-mag has it and OGB's read_csv_heterograph_raw reads it:
//
//	raw/num-node-dict.csv.gz        header line of node types, one line of counts
//	raw/triplet-type-list.csv.gz    "src_type,rel,dst_type" per line (else the
//	                                directories under raw/relations/ are used)
//	raw/relations/<src>___<rel>___<dst>/edge.csv.gz          "src,dst", type-local ids
//	raw/relations/<src>___<rel>___<dst>/num-edge-list.csv.gz one number: lines of edge.csv.gz
//	raw/nodetype-has-feat.csv.gz    header of types, True/False per type (optional:
//	raw/nodetype-has-label.csv.gz   without it a type has features/labels when its file exists)
//	raw/node-feat/<type>/node-feat.csv.gz    dense rows
//	raw/node-label/<type>/node-label.csv.gz  one integer per node ("nan" or -1: none)
//	split/<name>/nodetype-has-split.csv.gz   header of types, True/False (optional)
//	split/<name>/<type>/{train,valid,test}.csv.gz  type-local node ids
//
// Edge attribute files (edge_reltype, edge_time, ...) are ignored, except
// edge_time with Time (see HeteroReadOptions.Time). Untimed, every
// relation row of the result's In is sorted and without duplicates. Any
// malformed input gives one error naming the file and line.
func ReadOGBHetero(dir string, opt HeteroReadOptions) (*HeteroDataset, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	raw := filepath.Join(dir, "raw")
	if st, err := os.Stat(raw); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("read %s: missing directory %s (want the OGB raw layout)", dir, raw)
	}
	counts, types, err := readNodeDict(filepath.Join(raw, "num-node-dict.csv.gz"))
	if err != nil {
		return nil, err
	}
	stored, err := readTriplets(raw, counts)
	if err != nil {
		return nil, err
	}
	// Plan the relations: each stored one, plus its reverse unless it is a
	// self relation (symmetrized in place) or listed in NoReverse.
	all, noRev, err := PlanRelations(stored, opt.Reverse, opt.NoReverse)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	schema, err := NewSchema(counts, all)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	hasFeat, hasLabel, err := readFeatLabelFlags(raw, types)
	if err != nil {
		return nil, err
	}

	d := &HeteroDataset{
		Name:       filepath.Base(filepath.Clean(dir)),
		Schema:     schema,
		Feat:       map[string]*Features{},
		Labels:     map[string][]int32{},
		NumClasses: map[string]int{},
	}
	R := schema.NumRels()
	keys := make([][]uint64, R) // per relation: dstLocal<<32|srcLocal, sorted, distinct
	var mu sync.Mutex           // guards d's maps from the jobs below
	var jobs []func() error
	var timed *heteroTimes
	if opt.Time {
		if timed, err = readHeteroNodeTimes(raw, schema, opt.Workers); err != nil {
			return nil, err
		}
		timed.events = make([]relEvents, len(stored))
	}
	var edges []relEdges
	if len(opt.EdgeFeat) > 0 {
		edges = make([]relEdges, len(stored))
		d.EdgeFeatNames = slices.Clone(opt.EdgeFeat)
	}
	for i, rel := range stored {
		if edges != nil {
			jobs = append(jobs, func() error {
				ev, err := readRelationEdges(raw, rel, schema, opt.EdgeFeat, opt.Workers)
				edges[i] = ev
				return err
			})
			continue
		}
		if timed != nil {
			jobs = append(jobs, func() error {
				ev, err := readTimedRelation(raw, rel, schema, timed, opt.Workers)
				timed.events[i] = ev
				return err
			})
			continue
		}
		rf := schema.RelIndex(rel.String())
		rr := -1
		if opt.Reverse && !noRev[rel.String()] && rel.Src != rel.Dst {
			rr = schema.RelIndex(rel.Reverse().String())
		}
		symmetrize := opt.Reverse && !noRev[rel.String()] && rel.Src == rel.Dst
		jobs = append(jobs, func() error {
			fwd, rev, err := readRelation(raw, rel, counts, symmetrize, rr >= 0, opt.Workers)
			if err != nil {
				return err
			}
			keys[rf] = fwd
			if rr >= 0 {
				keys[rr] = rev
			}
			return nil
		})
	}
	for _, t := range types {
		n := counts[t]
		if hasFeat[t] {
			jobs = append(jobs, func() error {
				path := filepath.Join(raw, "node-feat", t, "node-feat.csv.gz")
				if err := checkPlausibleCount(path, "num-node-dict.csv.gz", n, 1); err != nil {
					return err
				}
				f, err := readFeatures(path, n, opt.Workers)
				if err != nil {
					return err
				}
				if opt.NormalizeFeatures {
					f.NormalizeRows(opt.Workers)
				}
				mu.Lock()
				d.Feat[t] = f
				mu.Unlock()
				return nil
			})
		}
		if hasLabel[t] {
			jobs = append(jobs, func() error {
				path := filepath.Join(raw, "node-label", t, "node-label.csv.gz")
				if err := checkPlausibleCount(path, "num-node-dict.csv.gz", n, 1); err != nil {
					return err
				}
				labels, classes, err := readLabelFile(path, n, 0, opt.Workers, true)
				if err != nil {
					return err
				}
				mu.Lock()
				d.Labels[t], d.NumClasses[t] = labels, classes
				mu.Unlock()
				return nil
			})
		}
	}
	jobs = append(jobs, func() error {
		s, err := readHeteroSplits(dir, opt.Splits, schema, opt.Workers)
		d.Splits = s
		return err
	})
	// The files are independent: read them concurrently so that the serial
	// gunzip of one overlaps the parsing of another. Errors are reported in
	// job order, whatever finishes first.
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = job()
		}()
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	if timed != nil {
		if d.In, d.InTime, d.TimeKind, err = timed.build(schema, stored, opt, noRev); err != nil {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
		d.NodeTime = timed.node
		return d, nil
	}
	if edges != nil {
		if d.In, d.EdgeFeat, err = buildEdgeFeat(schema, stored, edges, opt.EdgeFeat, opt, noRev); err != nil {
			return nil, fmt.Errorf("read %s: %w", dir, err)
		}
		return d, nil
	}
	d.In = buildRelIn(schema, keys, opt.Workers)
	return d, nil
}

// PlanRelations returns the relations a reader builds from the stored
// ones: each stored relation plus, with reverse, its reverse unless it is a
// self relation (symmetrized in place instead) or listed in noReverse
// (returned as a set).
func PlanRelations(stored []Relation, reverse bool, noReverse []string) ([]Relation, map[string]bool, error) {
	noRev := map[string]bool{}
	for _, name := range noReverse {
		if !slices.ContainsFunc(stored, func(r Relation) bool { return r.String() == name }) {
			return nil, nil, fmt.Errorf("NoReverse names %q, which is not a stored relation (have %s)", name, relNames(stored))
		}
		noRev[name] = true
	}
	all := slices.Clone(stored)
	for _, r := range stored {
		if !reverse || noRev[r.String()] || r.Src == r.Dst {
			continue
		}
		rev := r.Reverse()
		if slices.Contains(stored, rev) {
			return nil, nil, fmt.Errorf("relation %s is stored and is also the reverse of %s; leave one of them out with NoReverse", rev, r)
		}
		all = append(all, rev)
	}
	return all, noRev, nil
}

// firstError returns the first non-nil error, or nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func relNames(rels []Relation) string {
	names := make([]string, len(rels))
	for i, r := range rels {
		names[i] = r.String()
	}
	return strings.Join(names, ", ")
}

// readRelation reads one stored relation's edge file and returns its keys
// dst<<32|src (type-local ids), sorted and distinct; with symmetrize each
// edge's reverse is added to the same keys, with reverse the reversed edges
// come back as a second key list.
func readRelation(raw string, rel Relation, counts map[string]int64, symmetrize, reverse bool, workers int) (fwd, rev []uint64, err error) {
	rd := filepath.Join(raw, "relations", rel.String())
	countPath := filepath.Join(rd, "num-edge-list.csv.gz")
	m, err := readSingleNumber(countPath)
	if err != nil {
		return nil, nil, err
	}
	if m < 0 {
		return nil, nil, fmt.Errorf("%s line 1: edge count %d is negative", countPath, m)
	}
	edgePath := filepath.Join(rd, "edge.csv.gz")
	if err := checkPlausibleCount(edgePath, "num-edge-list.csv.gz", m, 3); err != nil {
		return nil, nil, err
	}
	total := m
	if symmetrize {
		total = 2 * m
	}
	fwd = make([]uint64, m, total)
	err = readEdgeLines(edgePath, counts[rel.Src], counts[rel.Dst], m, workers, func(idx, u, v int64) {
		fwd[idx] = uint64(v)<<32 | uint64(u)
	})
	if err != nil {
		return nil, nil, err
	}
	swap := func(k uint64) uint64 { return k<<32 | k>>32 }
	if symmetrize {
		for _, k := range fwd[:m] {
			fwd = append(fwd, swap(k))
		}
	}
	if reverse {
		rev = make([]uint64, m)
		for i, k := range fwd {
			rev[i] = swap(k)
		}
		parallelSort(rev, workers)
		rev = slices.Clip(slices.Compact(rev))
	}
	parallelSort(fwd, workers)
	return slices.Clip(slices.Compact(fwd)), rev, nil
}

// buildRelIn builds the relation-row in-adjacency of s from per-relation
// keys dstLocal<<32|srcLocal (sorted, distinct): row v*R+r lists the
// homogenized sources of r's edges into v, ascending. Each relation fills
// only its own rows, so relations run in parallel and the result does not
// depend on workers.
func buildRelIn(s *Schema, keys [][]uint64, workers int) *CSR {
	R := int64(s.NumRels())
	rows := s.NumNodes() * R
	ptr := make([]int64, rows+1)
	forEachChunk(workers, R, func(r int64) {
		dOff := s.NodeOrig[s.DstType(int(r))]
		for _, k := range keys[r] {
			ptr[(dOff+int64(k>>32))*R+r+1]++
		}
	})
	for i := int64(0); i < rows; i++ {
		ptr[i+1] += ptr[i]
	}
	idx := make([]int64, ptr[rows])
	forEachChunk(workers, R, func(r int64) {
		dOff := s.NodeOrig[s.DstType(int(r))]
		sOff := s.NodeOrig[s.SrcType(int(r))]
		row, pos := int64(-1), int64(0)
		for _, k := range keys[r] {
			if rr := (dOff+int64(k>>32))*R + r; rr != row {
				row, pos = rr, ptr[rr]
			}
			idx[pos] = sOff + int64(k&0xffffffff)
			pos++
		}
	})
	return &CSR{Indptr: ptr, Indices: idx}
}

// readSmallLines reads a small gzip'd text file (at most 1 MiB of text)
// into lines, without trailing empty lines.
func readSmallLines(path string) ([]string, error) {
	r, closeFn, err := openGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	lines := strings.Split(string(b), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, nil
}

// checkTypeName refuses names that cannot be a directory or a part of a
// canonical relation name.
func checkTypeName(name string) error {
	if name == "" || strings.Contains(name, RelationSep) || strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return fmt.Errorf("bad node type name %q", name)
	}
	return nil
}

// readNodeDict reads num-node-dict.csv.gz: a header line of node types and
// one line of counts. It returns the counts and the types in file order.
func readNodeDict(path string) (map[string]int64, []string, error) {
	lines, err := readSmallLines(path)
	if err != nil {
		return nil, nil, err
	}
	if len(lines) != 2 {
		return nil, nil, fmt.Errorf("%s: %d lines, want a header line of node types and one line of counts (multi-graph datasets are not supported)", path, len(lines))
	}
	types := strings.Split(lines[0], ",")
	vals := strings.Split(lines[1], ",")
	if len(vals) != len(types) {
		return nil, nil, fmt.Errorf("%s line 2: %d counts for the %d node types of the header", path, len(vals), len(types))
	}
	counts := make(map[string]int64, len(types))
	for i, t := range types {
		if err := checkTypeName(t); err != nil {
			return nil, nil, fmt.Errorf("%s line 1: %w", path, err)
		}
		if _, dup := counts[t]; dup {
			return nil, nil, fmt.Errorf("%s line 1: node type %q appears twice", path, t)
		}
		n, err := strconv.ParseInt(vals[i], 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line 2: count of %q: not an integer: %q", path, t, clip([]byte(vals[i])))
		}
		if n <= 0 || n > maxTypeNodes {
			return nil, nil, fmt.Errorf("%s line 2: count of %q is %d, want 1..%d", path, t, n, int64(maxTypeNodes))
		}
		counts[t] = n
	}
	return counts, types, nil
}

// readTriplets returns the stored relations, from triplet-type-list.csv.gz
// or, when that file is absent, from the directories under relations/.
func readTriplets(raw string, counts map[string]int64) ([]Relation, error) {
	path := filepath.Join(raw, "triplet-type-list.csv.gz")
	var rels []Relation
	if fileExists(path) {
		lines, err := readSmallLines(path)
		if err != nil {
			return nil, err
		}
		for i, line := range lines {
			f := strings.Split(line, ",")
			if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" || strings.Contains(f[1], RelationSep) || strings.ContainsAny(f[1], "/\\") {
				return nil, fmt.Errorf("%s line %d: want \"src_type,relation,dst_type\", got %q", path, i+1, clip([]byte(line)))
			}
			r := Relation{Src: f[0], Name: f[1], Dst: f[2]}
			for _, t := range []string{r.Src, r.Dst} {
				if _, ok := counts[t]; !ok {
					return nil, fmt.Errorf("%s line %d: node type %q is not in num-node-dict.csv.gz", path, i+1, t)
				}
			}
			if slices.Contains(rels, r) {
				return nil, fmt.Errorf("%s line %d: relation %s appears twice", path, i+1, r)
			}
			rels = append(rels, r)
		}
	} else {
		rd := filepath.Join(raw, "relations")
		ents, err := os.ReadDir(rd)
		if err != nil {
			return nil, fmt.Errorf("read relations: neither %s nor the directory %s: %w", path, rd, err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			r, err := ParseRelation(e.Name())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(rd, e.Name()), err)
			}
			for _, t := range []string{r.Src, r.Dst} {
				if _, ok := counts[t]; !ok {
					return nil, fmt.Errorf("%s: node type %q is not in num-node-dict.csv.gz", filepath.Join(rd, e.Name()), t)
				}
			}
			rels = append(rels, r)
		}
	}
	if len(rels) == 0 {
		return nil, fmt.Errorf("read %s: no relations", raw)
	}
	return rels, nil
}

// readTypeFlags reads a nodetype-has-*.csv.gz file (a header line of
// types, then True/False per type). Types absent from the header are
// false. Without the file, a type's flag is whether file(type) exists.
func readTypeFlags(path string, types []string, file func(t string) string) (map[string]bool, error) {
	flags := map[string]bool{}
	if !fileExists(path) {
		for _, t := range types {
			flags[t] = fileExists(file(t))
		}
		return flags, nil
	}
	lines, err := readSmallLines(path)
	if err != nil {
		return nil, err
	}
	if len(lines) != 2 {
		return nil, fmt.Errorf("%s: %d lines, want a header line of node types and one line of True/False", path, len(lines))
	}
	head, vals := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	if len(vals) != len(head) {
		return nil, fmt.Errorf("%s line 2: %d values for the %d node types of the header", path, len(vals), len(head))
	}
	for i, t := range head {
		if !slices.Contains(types, t) {
			return nil, fmt.Errorf("%s line 1: node type %q is not in num-node-dict.csv.gz", path, t)
		}
		switch vals[i] {
		case "True", "true", "1":
			flags[t] = true
		case "False", "false", "0":
		default:
			return nil, fmt.Errorf("%s line 2: value %q for %q, want True or False", path, clip([]byte(vals[i])), t)
		}
	}
	return flags, nil
}

// isLinkSplitDir reports whether split directory sd holds link rows
// (train.csv.gz directly inside) rather than per-type node splits.
func isLinkSplitDir(sd string) bool {
	return fileExists(filepath.Join(sd, "train.csv.gz"))
}

// readHeteroSplits reads the node splits split/<name>/<type>/ of dir.
func readHeteroSplits(dir string, names []string, s *Schema, workers int) (map[string]map[string]*Split, error) {
	root := filepath.Join(dir, "split")
	if names == nil {
		ents, err := os.ReadDir(root)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read splits: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() && !isLinkSplitDir(filepath.Join(root, e.Name())) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
	}
	out := make(map[string]map[string]*Split, len(names))
	for _, name := range names {
		sd := filepath.Join(root, name)
		if st, err := os.Stat(sd); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("split %q: missing directory %s", name, sd)
		}
		if isLinkSplitDir(sd) {
			return nil, fmt.Errorf("split %q: %s holds link rows (train.csv.gz directly inside), not a node split; read it with ReadHeteroLinkSplit", name, sd)
		}
		var types []string
		if flagPath := filepath.Join(sd, "nodetype-has-split.csv.gz"); fileExists(flagPath) {
			flags, err := readTypeFlags(flagPath, s.NodeTypes, nil)
			if err != nil {
				return nil, err
			}
			for _, t := range s.NodeTypes {
				if flags[t] {
					types = append(types, t)
				}
			}
		} else {
			ents, err := os.ReadDir(sd)
			if err != nil {
				return nil, fmt.Errorf("split %q: %w", name, err)
			}
			for _, e := range ents {
				if !e.IsDir() {
					continue
				}
				if s.TypeIndex(e.Name()) < 0 {
					return nil, fmt.Errorf("split %q: directory %s names no node type (have %s)", name, filepath.Join(sd, e.Name()), strings.Join(s.NodeTypes, ", "))
				}
				types = append(types, e.Name())
			}
		}
		if len(types) == 0 {
			return nil, fmt.Errorf("split %q: %s has no node type directories", name, sd)
		}
		byType := map[string]*Split{}
		for _, t := range types {
			n := s.Count(s.TypeIndex(t))
			td := filepath.Join(sd, t)
			sp := &Split{}
			for _, p := range []struct {
				file string
				dst  *[]int64
			}{{"train.csv.gz", &sp.Train}, {"valid.csv.gz", &sp.Valid}, {"test.csv.gz", &sp.Test}} {
				ids, err := readIDs(filepath.Join(td, p.file), n, workers)
				if err != nil {
					return nil, fmt.Errorf("split %q: %w", name, err)
				}
				*p.dst = ids
			}
			if err := checkDisjoint(sp, n); err != nil {
				return nil, fmt.Errorf("split %q (%s): %w", name, td, err)
			}
			byType[t] = sp
		}
		out[name] = byType
	}
	return out, nil
}

// ReadHeteroLinkSplit reads the link split dir/split/<name>/ of a
// heterogeneous dataset whose rows "src,dst[,time,...]" are edges of the
// relation with canonical name relation, in the type-local ids of its source
// and destination types (MovieLens' split/time and split/u1). The returned
// ids are HOMOGENIZED original ids (type-local id + s.NodeOrig of the
// type). A missing valid.csv.gz gives an empty Valid set, as GroupLens'
// u1..u5 splits have only train and test.
func ReadHeteroLinkSplit(dir, name string, s *Schema, relation string) (*LinkSplit, error) {
	r := s.RelIndex(relation)
	if r < 0 {
		names := make([]string, len(s.Relations))
		for i, rel := range s.Relations {
			names[i] = rel.String()
		}
		return nil, fmt.Errorf("link split %q: relation %q is not in the dataset (have %s)", name, relation, strings.Join(names, ", "))
	}
	st, dt := s.SrcType(r), s.DstType(r)
	ls, err := readLinkSplit(dir, name, s.Count(st), s.Count(dt), true, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, err
	}
	for _, set := range []*LinkSet{&ls.Train, &ls.Valid, &ls.Test} {
		for i := range set.Src {
			set.Src[i] += s.NodeOrig[st]
			set.Dst[i] += s.NodeOrig[dt]
		}
	}
	return ls, nil
}

// readFeatLabelFlags reads which node types of raw have features and
// labels (nodetype-has-feat/label.csv.gz, or the presence of each type's
// file where those are missing; see readTypeFlags).
func readFeatLabelFlags(raw string, types []string) (hasFeat, hasLabel map[string]bool, err error) {
	hasFeat, err = readTypeFlags(filepath.Join(raw, "nodetype-has-feat.csv.gz"), types, func(t string) string {
		return filepath.Join(raw, "node-feat", t, "node-feat.csv.gz")
	})
	if err != nil {
		return nil, nil, err
	}
	hasLabel, err = readTypeFlags(filepath.Join(raw, "nodetype-has-label.csv.gz"), types, func(t string) string {
		return filepath.Join(raw, "node-label", t, "node-label.csv.gz")
	})
	if err != nil {
		return nil, nil, err
	}
	return hasFeat, hasLabel, nil
}
