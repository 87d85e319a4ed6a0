package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"

	"mpignn/graph"
	"mpignn/internal/osx"
	"mpignn/internal/tempout"
	"mpignn/internal/testhold"
)

// Partitioning methods accepted in Options.Method.
const (
	MethodMetis  = "metis"
	MethodRandom = "random"
)

// Options configures WriteDataset, Assign and Write.
type Options struct {
	// Method is MethodMetis (the default when empty) or MethodRandom.
	Method string
	// Seed makes METIS and random partitioning deterministic.
	Seed uint64
	// HaloFeats also stores the features of every part's 1-hop halo.
	HaloFeats bool
	// Split names the split whose train/valid/test masks steer METIS'
	// balance constraints and which META records as the default split.
	// "" picks "public" if present, else the alphabetically first split.
	Split string
	// Balance and Imbalance are passed to METIS (see MetisOptions).
	Balance   []string
	Imbalance float64
	// Undirected is only recorded in META (whether the reader added
	// reverse edges); the graph is written as given.
	Undirected bool
	// Overwrite replaces an existing partition directory at the output
	// path; without it an existing path is an error.
	Overwrite bool
	// Workers bounds parallelism; 0 means GOMAXPROCS.
	Workers int
	// LabelType names the labelled node type of a heterogeneous dataset
	// whose labels and splits the partition stores; "" picks the only
	// labelled type (several are an error then).
	LabelType string
	// Link, when set, makes a link-prediction partition: the split's
	// positives, fixed evaluation negatives and pools are stored with the
	// parts (see link.go), and the adjacency files, METIS' input and any
	// structural features come from the TRAINING edges only. For a time
	// split, Undirected also adds the reverse of every training event.
	Link *LinkOptions
	// Time writes the dataset's times (read with graph.ReadOptions.Time or
	// HeteroReadOptions.Time): times.bin per part, node_time.bin when
	// there are node times, and Meta.Time. The adjacency is then the timed
	// one (a temporal multigraph: rows by (time, original id)); METIS
	// still gets the deduplicated simple graph. Off, times in the dataset
	// are ignored and the partition is exactly the untimed one.
	Time bool
	// SparseFeatures stores the node features as CSR rows (see
	// sparsefeat.go): SparseOn, SparseAuto (when their density is below
	// SparseAutoDensity) or SparseOff ("" too). Heterogeneous partitions
	// keep their typed features dense.
	SparseFeatures string
	// EdgeFeat writes the dataset's edge features (Dataset.EdgeFeat, read
	// with graph.ReadOptions.EdgeFeat): edge_feat.bin per part, aligned
	// with its in-edges, and Meta.EdgeFeatDim. Off, edge features in the
	// dataset are ignored and the partition is exactly the one without.
	EdgeFeat bool
	// NodeFeat, graph.FromEdgesMean or FromEdgesSum, says that the node
	// features are derived from the edge features (ReadRaw reads the
	// dataset so, graph.ReadOptions.NodeFeatFromEdges); META records it.
	NodeFeat string
	// FeatDType is the type the node features are stored in: "" or "fp32"
	// (float32, as always), "bf16" or "fp16" (two bytes a value, rounded
	// to nearest even; fp16 refuses a value it cannot hold). META records
	// a 2-byte type as feat_dtype; feat.bin and halo_feat.bin then hold
	// bfloat16 or float16 arrays. Homogeneous dense features only.
	FeatDType string
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// ResolveSplit returns the split Options.Split designates for d: the named
// one (which must exist), or "public" if present, or the alphabetically
// first split, or "" when d has no splits.
func ResolveSplit(d *graph.Dataset, name string) (string, error) {
	if name != "" {
		if _, ok := d.Splits[name]; !ok {
			names := sortedSplitNames(d.Splits)
			return "", fmt.Errorf("split %q not found (dataset has %v)", name, names)
		}
		return name, nil
	}
	if _, ok := d.Splits["public"]; ok {
		return "public", nil
	}
	if names := sortedSplitNames(d.Splits); len(names) > 0 {
		return names[0], nil
	}
	return "", nil
}

func sortedSplitNames(s map[string]*graph.Split) []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Assign computes the part of every node with opt.Method. With opt.Link
// it partitions the training graph of the link split (held-out edges must
// not steer the partitioning either).
func Assign(d *graph.Dataset, nparts int, opt Options) ([]int32, error) {
	pr, err := Prepare(d, opt)
	if err != nil {
		return nil, err
	}
	return pr.Assign(nparts)
}

// Prepared is a dataset made ready for partitioning under some options:
// with a link split, the split is drawn once and the dataset is the
// training graph, which both METIS (Assign) and the writer (Write) use.
// Callers that assign and write separately (to time each step) prepare
// once instead of paying for the split twice through Assign and Write.
type Prepared struct {
	d   *graph.Dataset
	ld  *linkData
	opt Options
}

// Prepare checks d and, for opt.Link, draws the link split.
func Prepare(d *graph.Dataset, opt Options) (*Prepared, error) {
	if d == nil {
		return nil, errors.New("partition: nil dataset")
	}
	pr := &Prepared{d: d, opt: opt}
	if opt.Link != nil {
		var err error
		if pr.ld, err = buildLink(d, opt); err != nil {
			return nil, err
		}
		pr.d = pr.ld.ds
	}
	return pr, nil
}

// Dataset returns the dataset that is partitioned (the training graph of
// a link split).
func (pr *Prepared) Dataset() *graph.Dataset { return pr.d }

// Assign is Assign on the prepared dataset.
func (pr *Prepared) Assign(nparts int) ([]int32, error) { return assignGraph(pr.d, nparts, pr.opt) }

// Write is Write on the prepared dataset.
func (pr *Prepared) Write(outDir string, assign []int32, nparts int) (*Meta, error) {
	return write(outDir, pr.d, pr.ld, assign, nparts, pr.opt)
}

func assignGraph(d *graph.Dataset, nparts int, opt Options) ([]int32, error) {
	if err := CheckParts(d.NumNodes, nparts); err != nil {
		return nil, err
	}
	switch opt.Method {
	case "", MethodMetis:
		if opt.Time && d.InTime != nil {
			// METIS wants a simple graph: drop the repeats of a source
			// at different times (canonical sorts and deduplicates).
			simple := *d
			simple.In = canonical(d.In, opt.workers())
			d = &simple
		}
		split, err := ResolveSplit(d, opt.Split)
		if err != nil {
			return nil, err
		}
		bal := opt.Balance
		if bal == nil {
			bal = DefaultBalance()
			// Node splits say nothing about where a link task's seeds
			// (edges) are: balance nodes and (training) degree then.
			if split == "" || opt.Link != nil {
				bal = []string{BalanceNode, BalanceDegree}
			}
		}
		return Metis(d, nparts, MetisOptions{Seed: opt.Seed, Balance: bal, Split: split, Imbalance: opt.Imbalance, Workers: opt.Workers})
	case MethodRandom:
		return Random(d.NumNodes, nparts, opt.Seed), nil
	}
	return nil, opt.checkMethod()
}

// WriteDataset partitions d into nparts parts with opt.Method and writes the
// partition directory outDir (see Write). It is the one-call helper for
// tests and tools: WriteDataset(dir, d, 4, Options{Seed: 1}) then Load(dir, p).
func WriteDataset(outDir string, d *graph.Dataset, nparts int, opt Options) (*Meta, error) {
	pr, err := prepareOut(outDir, d, opt)
	if err != nil {
		return nil, err
	}
	assign, err := pr.Assign(nparts)
	if err != nil {
		return nil, err
	}
	return pr.Write(outDir, assign, nparts)
}

// checkOutDir fails early (before any expensive work) when outDir exists
// and may not be replaced.
func checkOutDir(outDir string, overwrite bool) error {
	if outDir == "" {
		return errors.New("partition: empty output directory")
	}
	st, err := os.Stat(outDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("output %s: %w", outDir, err)
	case !overwrite:
		return fmt.Errorf("output %s already exists (remove it or pass --force)", outDir)
	case !st.IsDir():
		return fmt.Errorf("output %s exists and is not a directory", outDir)
	}
	if _, err := os.Stat(filepath.Join(outDir, MetaFile)); err != nil {
		ents, _ := os.ReadDir(outDir)
		if len(ents) > 0 {
			return fmt.Errorf("output %s exists, is not empty and is not a partition directory (no %s); refusing to replace it", outDir, MetaFile)
		}
	}
	return nil
}

// Write relabels d by assign (node v goes to part assign[v]) and writes the
// partition directory outDir:
//
//	META.json                    Meta: version, offsets, counts, file table with sha256
//	part-<p>/indptr.bin          int64[nodes+1]  CSC offsets of owned nodes' in-edges
//	part-<p>/indices.bin         int64[edges]    new ids of sources, canonical order
//	part-<p>/indices_orig.bin    int64[edges]    original ids of sources
//	part-<p>/orig.bin            int64[nodes]    original id of owned node Lo+i
//	part-<p>/feat.bin            float32[nodes*dim]
//	part-<p>/labels.bin          int32[nodes]
//	part-<p>/halo.bin            int64[halo]     non-owned sources, new ids ascending
//	part-<p>/halo_orig.bin       int64[halo]
//	part-<p>/halo_feat.bin       float32[halo*dim] (only with HaloFeats)
//	part-<p>/split-<name>-{train,valid,test}.bin  int64, new ids ascending
//	part-<p>/times.bin           int64[edges]    edge times (only with Options.Time)
//	part-<p>/node_time.bin       int64[nodes]    node times (Options.Time, if the dataset has them)
//	part-<p>/edge_feat.bin       float32[edges*edge_feat_dim] edge features, aligned with indices.bin (only with Options.EdgeFeat)
//
// Every row is written in canonical order (ascending original source id,
// duplicates removed) whatever the order in d.In; timed rows are in
// (time, original id) order instead, exact repeats removed. The directory is built
// under a temporary name next to outDir and renamed at the end, so a failed
// or interrupted run leaves nothing at outDir. labels.bin is left out when
// the dataset has no labels (NumClasses 0). With opt.Link, the link files
// of writeLinkPart are added and the adjacency is the training graph's.
func Write(outDir string, d *graph.Dataset, assign []int32, nparts int, opt Options) (*Meta, error) {
	pr, err := prepareOut(outDir, d, opt)
	if err != nil {
		return nil, err
	}
	return pr.Write(outDir, assign, nparts)
}

func write(outDir string, d *graph.Dataset, ld *linkData, assign []int32, nparts int, opt Options) (*Meta, error) {
	if err := checkOutDir(outDir, opt.Overwrite); err != nil {
		return nil, err
	}
	if err := checkDataset(d); err != nil {
		return nil, fmt.Errorf("partition %s: %w", d.Name, err)
	}
	if err := CheckParts(d.NumNodes, nparts); err != nil {
		return nil, err
	}
	if int64(len(assign)) != d.NumNodes {
		return nil, fmt.Errorf("partition: assignment has %d entries for %d nodes", len(assign), d.NumNodes)
	}
	split, err := ResolveSplit(d, opt.Split)
	if err != nil {
		return nil, err
	}
	src := &source{
		name: d.Name, n: d.NumNodes, rels: 1, in: canonical(d.In, opt.workers()),
		feat: d.Feat, numClasses: d.NumClasses, targets: d.Targets, splits: d.Splits, split: split,
	}
	if d.NumClasses > 0 {
		src.label = func(v int64) int32 { return d.Labels[v] }
	}
	if opt.Time {
		if src.in, src.tm, err = newTimedSource(d.Name, d.In, d.InTime, d.NodeTime, d.TimeKind, d.NumNodes, opt.workers()); err != nil {
			return nil, err
		}
	}
	if opt.EdgeFeat {
		if ld != nil {
			return nil, fmt.Errorf("partition %s: edge features with a link split are not supported yet", d.Name)
		}
		if src.in, src.ef, err = edgeFeatSource(d, opt.Time, opt.workers()); err != nil {
			return nil, fmt.Errorf("partition %s: %w", d.Name, err)
		}
	}
	if d.Feat != nil {
		src.nodeFeatFrom = opt.NodeFeat
	}
	return writeSource(outDir, src, ld, assign, nparts, opt)
}

// source is a dataset as the writer sees it, homogeneous or heterogeneous
// (het set): nodes are the (homogenized) original ids [0,n), the
// in-adjacency has rels rows per node (row v*rels+r, canonical order) and
// the splits hold original ids. With rels == 1 and het nil it is exactly
// the homogeneous dataset, which keeps homogeneous partitions byte-identical.
type source struct {
	name       string
	n          int64
	rels       int
	in         *graph.CSR
	feat       *graph.Features     // feat.bin rows by original id; nil: empty feat.bin
	label      func(v int64) int32 // nil: no labels.bin
	numClasses int
	targets    *graph.Features // targets.bin rows by original id; nil: none
	splits     map[string]*graph.Split
	split      string // the default split ("" if none)
	het        *heteroSource
	tm         *timedSource // nil: untimed
	// ef holds the edge features aligned with in.Indices (nil: none
	// stored); nodeFeatFrom how feat was derived from them ("": read).
	ef           *graph.Features
	nodeFeatFrom string
}

// writeSource writes the partition directory of src under assign; the
// caller has validated src and assign.
func writeSource(outDir string, src *source, ld *linkData, assign []int32, nparts int, opt Options) (*Meta, error) {
	method := opt.Method
	if method == "" {
		method = MethodMetis
	}
	rl, err := Relabel(assign, nparts)
	if err != nil {
		return nil, err
	}
	in := src.in
	R := int64(src.rels)

	tmp, err := MakeTemp(outDir)
	if err != nil {
		return nil, err
	}
	testhold.At("temp:" + filepath.Base(filepath.Clean(outDir)))
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()

	dim := 0
	if src.feat != nil {
		dim = src.feat.Dim
	}
	sparse, err := opt.ResolveSparse(src.feat, src.het != nil, ld != nil)
	if err != nil {
		return nil, err
	}
	kind, _ := opt.featKind() // ResolveSparse checked it
	if kind.Half() && src.feat != nil && src.het == nil {
		if err := CheckFeatures(kind, src.feat, func(v int64) string {
			return fmt.Sprintf("dataset %s, node %d (line %d of raw/node-feat.csv.gz)", src.name, v, v+1)
		}); err != nil {
			return nil, err
		}
	}
	m := &Meta{
		FormatVersion: FormatVersion,
		Dataset:       src.name,
		NumParts:      nparts,
		Offsets:       rl.Offsets,
		NumNodes:      src.n,
		FeatDim:       dim,
		NumClasses:    src.numClasses,
		TargetDim:     targetDim(src.targets),
		Method:        method,
		Seed:          opt.Seed,
		Split:         src.split,
		Undirected:    opt.Undirected,
		HaloFeats:     opt.HaloFeats,
		SparseFeat:    sparse,
		FeatDType:     featDTypeName(kind, dim),
		Splits:        map[string]SplitCounts{},
		Parts:         make([]PartInfo, nparts),
		Files:         map[string]FileInfo{},
	}
	// Each split set in new ids, sorted: part p's share is then the
	// contiguous run of ids inside [Offsets[p], Offsets[p+1]).
	splitNames := sortedSplitNames(src.splits)
	type sets struct{ train, valid, test []int64 }
	newSplits := make(map[string]sets, len(splitNames))
	for _, name := range splitNames {
		s := src.splits[name]
		m.Splits[name] = SplitCounts{Train: int64(len(s.Train)), Valid: int64(len(s.Valid)), Test: int64(len(s.Test))}
		newSplits[name] = sets{toNewSorted(s.Train, rl.NewID), toNewSorted(s.Valid, rl.NewID), toNewSorted(s.Test, rl.NewID)}
	}

	var lb *linkBuckets
	if ld != nil {
		m.Link = &ld.meta
		if lb, err = bucketLink(ld, rl, nparts); err != nil {
			return nil, err
		}
	}
	if src.het != nil {
		m.FormatVersion = FormatVersionHetero
		m.Hetero = src.het.meta(assign, nparts)
	}
	if src.tm != nil {
		m.Time = src.tm.meta()
	}
	if src.ef != nil {
		m.EdgeFeatDim = src.ef.Dim
	}
	m.NodeFeatFrom = src.nodeFeatFrom

	aw, err := newArrayWriter(opt.workers())
	if err != nil {
		return nil, err
	}
	defer aw.close()
	mark := make([]int32, src.n) // mark[v] == p+1: v already in part p's halo
	for p := 0; p < nparts; p++ {
		lo, hi := rl.Offsets[p], rl.Offsets[p+1]
		nodes := hi - lo
		orig := rl.Orig[lo:hi]
		// Row i*R+r holds owned node Lo+i's in-edges of relation r (R == 1:
		// one row per node).
		indptr := make([]int64, nodes*R+1)
		for i, o := range orig {
			for r := int64(0); r < R; r++ {
				indptr[int64(i)*R+r+1] = indptr[int64(i)*R+r] + in.Degree(o*R+r)
			}
		}
		indOrig := make([]int64, indptr[nodes*R])
		var times []int64
		if src.tm != nil {
			times = make([]int64, len(indOrig))
		}
		var edgeFeat []float32
		if src.ef != nil {
			edgeFeat = make([]float32, int64(len(indOrig))*int64(src.ef.Dim))
		}
		for i, o := range orig {
			for r := int64(0); r < R; r++ {
				base := indptr[int64(i)*R+r]
				copy(indOrig[base:], in.Neighbors(o*R+r))
				if times != nil {
					copy(times[base:], src.tm.in[in.Indptr[o*R+r]:in.Indptr[o*R+r+1]])
				}
				if edgeFeat != nil {
					gatherEdgeRows(edgeFeat, base, src.ef, in.Indptr[o*R+r], in.Indptr[o*R+r+1])
				}
			}
		}
		pf := &PartFiles{
			P: p, Lo: lo, Hi: hi, Rels: R, Orig: orig, Indptr: indptr, IndOrig: indOrig, Times: times, EdgeFeat: edgeFeat,
			NewID: func(u int64) int64 { return rl.NewID[u] },
			FirstHalo: func(u int64) bool {
				if mark[u] == int32(p+1) {
					return false
				}
				mark[u] = int32(p + 1)
				return true
			},
			Feat: src.feat, FeatRow: func(_ int, o int64) int64 { return o },
			Splits: func(name string) (tr, va, te []int64) {
				s := newSplits[name]
				return idRange(s.train, lo, hi), idRange(s.valid, lo, hi), idRange(s.test, lo, hi)
			},
		}
		if src.label != nil {
			pf.Label = func(_ int, o int64) int32 { return src.label(o) }
		}
		pf.Targets = src.targets
		if src.het != nil {
			pf.HetFeat = src.het.feat
			pf.HetRow = func(t int, _ int64, o int64) int64 { return o - src.het.schema.NodeOrig[t] }
		}
		if src.tm != nil && src.tm.node != nil {
			pf.NodeTime = func(o int64) int64 { return src.tm.node[o] }
		}
		if ld != nil {
			pf.link = func(files map[string]FileInfo, aw *arrayWriter, pdir string) (*LinkCounts, error) {
				return writeLinkPart(files, aw, pdir, p, ld, lb, rl, lo, hi)
			}
		}
		pi, err := pf.write(tmp, m, aw, splitNames)
		if err != nil {
			return nil, err
		}
		m.Parts[p] = pi
		m.NumEdges += pi.Edges
		m.CutEdges += pi.CutEdges
	}
	if err := FinishMeta(tmp, outDir, m, opt.Overwrite); err != nil {
		return nil, err
	}
	ok = true
	return m, nil
}

// MakeTemp creates the temporary directory a partition of outDir is
// built in (tempout.Own: named by our PID, so the command registers it for
// removal on SIGINT/SIGTERM before it exists, and a later run removes it
// if we are killed), after removing stale ones.
func MakeTemp(outDir string) (string, error) {
	parent := filepath.Dir(filepath.Clean(outDir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("output %s: %w", outDir, err)
	}
	if _, err := tempout.RemoveStale(outDir); err != nil {
		return "", fmt.Errorf("output %s: %w", outDir, err)
	}
	tmp := tempout.Own(outDir)
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("output %s: %w", outDir, err)
	}
	// Mkdir, not MkdirTemp, so that the directory gets 0755 (less umask)
	// like every other output, not 0700.
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", fmt.Errorf("output %s: %w", outDir, err)
	}
	return tmp, nil
}

// CheckOutDir fails early (before any expensive work) when outDir exists
// and may not be replaced.
func CheckOutDir(outDir string, overwrite bool) error { return checkOutDir(outDir, overwrite) }

// FinishMeta validates m, writes it as META.json into the finished
// temporary directory tmp and renames tmp to outDir (see replaceDir).
func FinishMeta(tmp, outDir string, m *Meta, overwrite bool) error {
	if err := m.validate(); err != nil {
		return fmt.Errorf("partition: internal error, written META does not validate: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", MetaFile, err)
	}
	if err := writeFileSync(filepath.Join(tmp, MetaFile), append(b, '\n')); err != nil {
		return err
	}
	if err := osx.SyncDir(tmp); err != nil {
		return err
	}
	return replaceDir(tmp, outDir, overwrite)
}

// putArray writes part p's array file name and records it in files.
func putArray[T elem](files map[string]FileInfo, aw *arrayWriter, pdir string, p int, name string, xs []T) error {
	fi, err := writeArrayFile(aw, filepath.Join(pdir, name), xs)
	if err != nil {
		return err
	}
	files[partDir(p)+"/"+name] = fi
	return nil
}

// checkDataset validates what Write relies on, so that bad input gives one
// error rather than a panic or a silently wrong partition.
func checkDataset(d *graph.Dataset) error {
	if d == nil || d.In == nil {
		return errors.New("dataset has no graph")
	}
	n := d.NumNodes
	if n < 1 {
		return fmt.Errorf("dataset has %d nodes", n)
	}
	if err := d.In.Validate(n); err != nil {
		return err
	}
	if d.In.NumRows() != n {
		return fmt.Errorf("graph has %d rows, dataset %d nodes", d.In.NumRows(), n)
	}
	if d.Feat != nil {
		if d.Feat.Dim < 0 || int64(len(d.Feat.Data)) != n*int64(d.Feat.Dim) {
			return fmt.Errorf("features hold %d values, want nodes %d x dim %d", len(d.Feat.Data), n, d.Feat.Dim)
		}
	}
	if d.NumClasses == 0 && len(d.Labels) == 0 {
		// An unlabelled dataset (link prediction): no labels file.
	} else if int64(len(d.Labels)) != n {
		return fmt.Errorf("%d labels for %d nodes", len(d.Labels), n)
	}
	for v, l := range d.Labels {
		if l < 0 || int(l) >= d.NumClasses {
			return fmt.Errorf("node %d: label %d outside [0,%d)", v, l, d.NumClasses)
		}
	}
	if d.Targets != nil && d.NumClasses > 0 {
		return fmt.Errorf("dataset has both %d classes and real targets", d.NumClasses)
	}
	if err := graph.CheckTargets(d.Targets, n); err != nil {
		return err
	}
	for _, name := range sortedSplitNames(d.Splits) {
		if !validSplitName(name) {
			return fmt.Errorf("split name %q: use letters, digits, '_', '.', '-'", name)
		}
		s := d.Splits[name]
		if s == nil {
			return fmt.Errorf("split %q is nil", name)
		}
		if err := checkSplitIDs(name, s, n); err != nil {
			return err
		}
	}
	return nil
}

// checkSplitIDs checks that every set of split name holds distinct ids in
// [0,n).
func checkSplitIDs(name string, s *graph.Split, n int64) error {
	for _, set := range []struct {
		name string
		ids  []int64
	}{{"train", s.Train}, {"valid", s.Valid}, {"test", s.Test}} {
		ids := slices.Clone(set.ids)
		slices.Sort(ids)
		for i, v := range ids {
			if v < 0 || v >= n {
				return fmt.Errorf("split %q %s: node %d outside [0,%d)", name, set.name, v, n)
			}
			if i > 0 && ids[i-1] == v {
				return fmt.Errorf("split %q %s: node %d listed twice", name, set.name, v)
			}
		}
	}
	return nil
}

// strictRows reports whether every row of in is strictly ascending (the
// canonical order), checking the rows in parallel.
func strictRows(in *graph.CSR, workers int) bool {
	n := in.NumRows()
	var bad atomic.Bool
	parallelRanges(n, workers, func(lo, hi int64) {
		for v := lo; v < hi && !bad.Load(); v++ {
			row := in.Neighbors(v)
			for i := 1; i < len(row); i++ {
				if row[i] <= row[i-1] {
					bad.Store(true)
					return
				}
			}
		}
	})
	return !bad.Load()
}

// canonical returns in itself when every row is strictly ascending (the
// canonical order: ascending original id, no duplicates), else a sorted,
// deduplicated copy.
func canonical(in *graph.CSR, workers int) *graph.CSR {
	n := in.NumRows()
	if strictRows(in, workers) {
		return in
	}
	out := &graph.CSR{Indptr: make([]int64, n+1), Indices: make([]int64, 0, len(in.Indices))}
	for v := int64(0); v < n; v++ {
		row := slices.Clone(in.Neighbors(v))
		slices.Sort(row)
		row = slices.Compact(row)
		out.Indices = append(out.Indices, row...)
		out.Indptr[v+1] = int64(len(out.Indices))
	}
	return out
}

func toNewSorted(ids, newID []int64) []int64 {
	out := make([]int64, len(ids))
	for i, v := range ids {
		out[i] = newID[v]
	}
	slices.Sort(out)
	return out
}

// idRange returns the sub-slice of sorted ids inside [lo,hi).
func idRange(ids []int64, lo, hi int64) []int64 {
	a, _ := slices.BinarySearch(ids, lo)
	b, _ := slices.BinarySearch(ids, hi)
	return ids[a:b]
}

// gatherRows copies the feature rows of nodes (original ids).
// targetDim is the width of real targets (0 for none).
func targetDim(t *graph.Features) int {
	if t == nil {
		return 0
	}
	return t.Dim
}

func gatherRows(f *graph.Features, nodes []int64) []float32 {
	if f == nil || f.Dim == 0 {
		return []float32{}
	}
	d := int64(f.Dim)
	out := make([]float32, int64(len(nodes))*d)
	for i, v := range nodes {
		copy(out[int64(i)*d:], f.Data[v*d:(v+1)*d])
	}
	return out
}

func writeFileSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, osx.Pathless(err))
	}
	return nil
}

// replaceDir renames the finished tmp directory to dst. With overwrite an
// existing dst is first moved aside and removed only after the rename
// succeeded, so dst always holds a complete partition or nothing.
func replaceDir(tmp, dst string, overwrite bool) error {
	var old string
	if _, err := os.Stat(dst); err == nil {
		if !overwrite {
			return fmt.Errorf("output %s appeared while partitioning; not replacing it", dst)
		}
		old = tmp + ".old"
		if err := os.Rename(dst, old); err != nil {
			return fmt.Errorf("move old %s aside: %w", dst, err)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		if old != "" {
			os.Rename(old, dst)
		}
		return fmt.Errorf("rename %s to %s: %w", tmp, dst, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove old partition %s: %w", old, err)
		}
	}
	return osx.SyncDir(filepath.Dir(filepath.Clean(dst)))
}

// prepareOut refuses an existing output directory before the (possibly
// long) link split is drawn, then prepares d.
func prepareOut(outDir string, d *graph.Dataset, opt Options) (*Prepared, error) {
	if err := checkOutDir(outDir, opt.Overwrite); err != nil {
		return nil, err
	}
	return Prepare(d, opt)
}
