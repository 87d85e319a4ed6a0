package graph

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// ReadOptions control how ReadOGB turns the raw files into a Dataset.
type ReadOptions struct {
	// Splits names the split directories to read; nil reads every directory
	// found under split/.
	Splits []string
	// Undirected adds the reverse of every edge line.
	Undirected bool
	// DropSelfLoops removes edges v->v.
	DropSelfLoops bool
	// Dedup keeps one copy of repeated edges.
	Dedup bool
	// NormalizeFeatures divides every feature row by its sum when the sum
	// is positive.
	NormalizeFeatures bool
	// NumClasses fixes the class count (labels >= it are errors); 0 infers
	// max label + 1.
	NumClasses int
	// Workers is the parse parallelism; 0 means GOMAXPROCS.
	Workers int
	// Labels says how raw/node-label.csv.gz is read: LabelsAuto (""),
	// LabelsClasses or LabelsReal (into Dataset.Targets).
	Labels string
	// OptionalFeatures and OptionalLabels accept a dataset without
	// raw/node-feat.csv.gz or raw/node-label.csv.gz (such as bitcoin-alpha,
	// which has neither): Feat or Labels is then nil and NumClasses 0. Off,
	// a missing file is an error, as a node-classification dataset needs
	// both.
	OptionalFeatures, OptionalLabels bool
	// LinkSplits names link-prediction splits to read with ReadLinkSplit
	// into Dataset.LinkSplits. Their directories are not node splits, so
	// they are left out when Splits is nil and split/ is listed.
	LinkSplits []string
	// Time also reads raw/edge_time.csv.gz (one integer per edge line) and
	// the node times raw/node_time.csv.gz or OGB's raw/node_year.csv.gz
	// (one integer per node) into Dataset.InTime and Dataset.NodeTime; In
	// is then a timed adjacency (BuildInCSRTimed). At least one of the
	// files must exist.
	Time bool
	// EdgeFeat also reads raw/edge-feat.csv.gz (one float row per edge
	// line) into Dataset.EdgeFeat, aligned with In.
	EdgeFeat bool
	// NodeFeatFromEdges (FromEdgesMean or FromEdgesSum) makes the node
	// features of a dataset without raw/node-feat.csv.gz: each node's row
	// is the mean or sum of its stored in-edges' feature rows
	// (NodeFeatFromEdges). It reads raw/edge-feat.csv.gz, which is kept in
	// Dataset.EdgeFeat only with EdgeFeat. A dataset that has node
	// features is refused, so that the flag never silently replaces them.
	NodeFeatFromEdges string
	// EdgeLabels also reads raw/edge-label.csv.gz (EdgeLabelFile, one row
	// per edge line) into Dataset.EdgeTargets, as EdgeLabelKind says:
	// LabelsAuto (one column: classes, several: real values),
	// LabelsClasses or LabelsReal.
	EdgeLabels    bool
	EdgeLabelKind string
}

// UndirectedOptions returns the options for the datasets of this project,
// whose edge files store each undirected pair once: add reverse edges, drop
// self loops and duplicates.
func UndirectedOptions() ReadOptions {
	return ReadOptions{Undirected: true, DropSelfLoops: true, Dedup: true}
}

// ReadOGB reads a node-classification dataset in the OGB raw layout:
//
//	raw/edge.csv.gz           "src,dst" per line
//	raw/node-feat.csv.gz      comma-separated floats, one row per node
//	raw/node-label.csv.gz     one integer per line
//	raw/num-node-list.csv.gz  one number: nodes
//	raw/num-edge-list.csv.gz  one number: lines of edge.csv.gz
//	split/<name>/{train,valid,test}.csv.gz  node ids, one per line
//
// The returned Dataset.In lists, for each node v, the sources of the edges
// into v sorted ascending (the canonical order the sampler relies on). Any
// malformed input gives one error naming the file and line.
func ReadOGB(dir string, opt ReadOptions) (*Dataset, error) {
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
	if _, err := os.Stat(filepath.Join(raw, "edge.csv.gz")); errors.Is(err, os.ErrNotExist) {
		if _, err2 := os.Stat(filepath.Join(raw, "data.npz")); err2 == nil {
			return nil, fmt.Errorf("read %s: raw/data.npz found but the npz (binary numpy) layout, as used by ogbn-papers100M, is not read here; convert it with `mpignn convert --data %s --out DIR` and partition DIR under mpirun (all ranks)", dir, dir)
		}
	}
	n, m, err := readHomoCounts(raw)
	if err != nil {
		return nil, err
	}
	// A corrupted count must not make us allocate terabytes: deflate expands
	// at most ~1032x, and every label line is at least one byte and every
	// edge line at least three ("0,1"), so larger counts cannot be right.
	labelPath, featPath := filepath.Join(raw, "node-label.csv.gz"), filepath.Join(raw, "node-feat.csv.gz")
	haveLabels := !opt.OptionalLabels || fileExists(labelPath)
	haveFeat := !opt.OptionalFeatures || fileExists(featPath)
	readEdgeFeat := opt.EdgeFeat || opt.NodeFeatFromEdges != ""
	if opt.NodeFeatFromEdges != "" {
		if fileExists(featPath) {
			return nil, fmt.Errorf("read %s: node features %s, but the dataset has its own (%s); leave out --node-feat", dir, opt.NodeFeatFromEdges, featPath)
		}
		if !fileExists(filepath.Join(raw, EdgeFeatFile)) {
			return nil, fmt.Errorf("read %s: node features %s, but the dataset has no edge features (%s is missing)", dir, opt.NodeFeatFromEdges, filepath.Join(raw, EdgeFeatFile))
		}
		haveFeat = false
	}
	if haveFeat && !fileExists(featPath) && fileExists(filepath.Join(raw, EdgeFeatFile)) {
		// The shape of ogbn-proteins: say how to read it rather than only
		// what is missing.
		return nil, fmt.Errorf("missing file %s; the dataset has edge features (%s): --node-feat %s (or %s) makes node features from them", featPath, EdgeFeatFile, FromEdgesMean, FromEdgesSum)
	}
	if haveLabels {
		if err := checkPlausibleCount(labelPath, "num-node-list.csv.gz", n, 1); err != nil {
			return nil, err
		}
	}
	if err := checkPlausibleCount(filepath.Join(raw, "edge.csv.gz"), "num-edge-list.csv.gz", m, 3); err != nil {
		return nil, err
	}
	d := &Dataset{Name: filepath.Base(filepath.Clean(dir)), NumNodes: n}
	realTargets := opt.Labels == LabelsReal
	if haveLabels && opt.Labels == LabelsAuto {
		// Several columns are several targets per node: they cannot be
		// one class, so the file is read as real targets.
		dim, err := featureDim(labelPath)
		if err != nil {
			return nil, err
		}
		realTargets = dim > 1
	}

	// The four inputs are independent: read them concurrently so that the
	// (serial) gunzip of one file overlaps the parsing of another. Errors
	// are reported in a fixed file order, whatever finishes first.
	var (
		src, dst []int64
		lineFeat *Features // edge features by line of edge.csv.gz
		errs     [5]error
		wg       sync.WaitGroup
	)
	wg.Add(5)
	go func() {
		defer wg.Done()
		src, dst, errs[0] = readEdges(filepath.Join(raw, "edge.csv.gz"), n, m, opt.Workers)
	}()
	go func() {
		defer wg.Done()
		switch {
		case haveLabels && realTargets:
			d.Targets, errs[1] = readTargets(labelPath, n, opt.Workers)
		case haveLabels:
			d.Labels, d.NumClasses, errs[1] = readLabels(labelPath, n, opt.NumClasses, opt.Workers)
		}
	}()
	go func() {
		defer wg.Done()
		if haveFeat {
			d.Feat, errs[2] = readFeatures(featPath, n, opt.Workers)
		}
	}()
	go func() {
		defer wg.Done()
		d.Splits, errs[3] = readSplits(filepath.Join(dir, "split"), opt.Splits, opt.LinkSplits, n, opt.Workers)
	}()
	go func() {
		defer wg.Done()
		if readEdgeFeat {
			lineFeat, errs[4] = readEdgeFeatures(raw, m, opt.Workers)
		}
	}()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if opt.EdgeLabels {
		// The lines' endpoints are kept as listed (the builders below may
		// reuse src and dst): a label belongs to its line's pair.
		if d.EdgeTargets, err = readEdgeTargets(raw, slices.Clone(src), slices.Clone(dst), opt.EdgeLabelKind, opt.Workers); err != nil {
			return nil, err
		}
	}
	bo := BuildOptions{Undirected: opt.Undirected, DropSelfLoops: opt.DropSelfLoops, Dedup: opt.Dedup, Workers: opt.Workers}
	// ids maps each stored in-edge to its line of edge.csv.gz when edge
	// features are read (the builders that know no lines are cheaper).
	var ids []int64
	if opt.Time {
		edgeTime, nodeTime, err := readTimes(raw, n, m, opt.Workers)
		if err != nil {
			return nil, err
		}
		d.TimeKind = TimeKindEdge
		lines := int64(len(src))
		if edgeTime == nil {
			// An edge's time is its source's node time, so a reverse edge
			// gets the other end's time: add the reverses here, each with
			// its own source, instead of letting the builder copy times.
			d.TimeKind = TimeKindNode
			if bo.Undirected {
				src, dst = slices.Concat(src, dst), slices.Concat(dst, src)
				bo.Undirected = false
			}
			edgeTime = EdgeTimesFromNodes(src, nodeTime)
		}
		if readEdgeFeat {
			d.In, d.InTime, ids = BuildInCSREdgeIDs(n, src, dst, edgeTime, bo)
			for k, i := range ids {
				ids[k] = i % lines // a reverse added above is line i-lines
			}
		} else {
			d.In, d.InTime = BuildInCSRTimed(n, src, dst, edgeTime, bo)
		}
		d.NodeTime = nodeTime
	} else if readEdgeFeat {
		d.In, _, ids = BuildInCSREdgeIDs(n, src, dst, nil, bo)
	} else {
		d.In = BuildInCSR(n, src, dst, bo)
	}
	if readEdgeFeat {
		ef := GatherRows(lineFeat, ids, opt.Workers)
		lineFeat, ids = nil, nil
		if opt.NodeFeatFromEdges != "" {
			var err error
			if d.Feat, err = NodeFeatFromEdges(d.In, ef, opt.NodeFeatFromEdges, opt.Workers); err != nil {
				return nil, fmt.Errorf("read %s: %w", dir, err)
			}
		}
		if opt.EdgeFeat {
			d.EdgeFeat = ef
		}
	}
	if opt.NormalizeFeatures && d.Feat != nil {
		d.Feat.NormalizeRows(opt.Workers)
	}
	for _, name := range opt.LinkSplits {
		ls, err := ReadLinkSplit(dir, name, n, opt.Workers)
		if err != nil {
			return nil, err
		}
		if d.LinkSplits == nil {
			d.LinkSplits = map[string]*LinkSplit{}
		}
		d.LinkSplits[name] = ls
	}
	return d, nil
}

// fileExists reports whether path names an existing file (an unreadable
// one counts as existing, so that reading it reports the real error).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// maxDeflateRatio bounds how much a deflate stream can expand.
const maxDeflateRatio = 1032

// checkPlausibleCount refuses a count of lines that the compressed size of
// path cannot hold, given lines of at least minBytes bytes.
func checkPlausibleCount(path, countFile string, count, minBytes int64) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("missing file %s", path)
		}
		return err
	}
	if limit := st.Size()*maxDeflateRatio/minBytes + 1; count > limit {
		return fmt.Errorf("%s says %d lines but %s (%d bytes compressed) can hold at most %d", countFile, count, path, st.Size(), limit)
	}
	return nil
}

// readSingleNumber reads a file holding one non-negative integer.
func readSingleNumber(path string) (int64, error) {
	r, closeFn, err := openGzip(path)
	if err != nil {
		return 0, err
	}
	defer closeFn()
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	var vals []int64
	err = forEachLine(b, 0, func(line []byte, idx int64) error {
		if len(line) == 0 {
			return nil // tolerate blank trailing lines
		}
		v, err := parseIntLine(line)
		if err != nil {
			return &lineError{path, idx + 1, err}
		}
		vals = append(vals, v)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(vals) != 1 {
		return 0, fmt.Errorf("%s: %d numbers, want exactly one (multi-graph datasets are not supported)", path, len(vals))
	}
	return vals[0], nil
}

func readEdges(path string, n, m int64, workers int) (src, dst []int64, err error) {
	src = make([]int64, m)
	dst = make([]int64, m)
	err = readEdgeLines(path, n, n, m, workers, func(idx, u, v int64) { src[idx], dst[idx] = u, v })
	if err != nil {
		return nil, nil, err
	}
	return src, dst, nil
}

// readEdgeLines parses the m lines "src,dst" of path with sources in
// [0,nSrc) and destinations in [0,nDst) (a heterogeneous relation's two
// node types), handing each edge to store with its 0-based line index.
// store runs on several goroutines, for distinct indices.
func readEdgeLines(path string, nSrc, nDst, m int64, workers int, store func(idx, u, v int64)) error {
	lines, err := scanGzip(path, workers, func(c *textChunk) error {
		return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if idx >= m {
				return &lineError{path, idx + 1, fmt.Errorf("more edge lines than the %d in num-edge-list.csv.gz", m)}
			}
			u, v, err := parseEdgeLine(line)
			if err != nil {
				return &lineError{path, idx + 1, err}
			}
			if u < 0 || u >= nSrc || v < 0 || v >= nDst {
				if nSrc == nDst {
					return &lineError{path, idx + 1, fmt.Errorf("edge %d,%d has an id outside [0,%d)", u, v, nSrc)}
				}
				return &lineError{path, idx + 1, fmt.Errorf("edge %d,%d has an id outside [0,%d) x [0,%d)", u, v, nSrc, nDst)}
			}
			store(idx, u, v)
			return nil
		})
	})
	if err != nil {
		return err
	}
	if lines != m {
		return fmt.Errorf("%s: %d edge lines, but num-edge-list.csv.gz says %d", path, lines, m)
	}
	return nil
}

func readLabels(path string, n int64, classes, workers int) ([]int32, int, error) {
	return readLabelFile(path, n, classes, workers, false)
}

// readLabelFile is readLabels; with allowMissing, a line "nan" (how OGB's
// pandas writes a missing label), "-1" or an empty line gives the label -1
// (heterogeneous datasets, whose Labels use -1 for "none").
func readLabelFile(path string, n int64, classes, workers int, allowMissing bool) ([]int32, int, error) {
	labels := make([]int32, n)
	limit := int64(math.MaxInt32)
	if classes > 0 {
		limit = int64(classes)
	}
	lines, err := scanGzip(path, workers, func(c *textChunk) error {
		return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if idx >= n {
				return &lineError{path, idx + 1, fmt.Errorf("more label lines than the %d nodes", n)}
			}
			if allowMissing && isMissingLabel(line) {
				labels[idx] = -1
				return nil
			}
			v, err := parseIntLine(line)
			if err != nil {
				return &lineError{path, idx + 1, fmt.Errorf("label: %w", err)}
			}
			if v < 0 || v >= limit {
				if classes > 0 {
					return &lineError{path, idx + 1, fmt.Errorf("label %d outside [0,%d)", v, classes)}
				}
				return &lineError{path, idx + 1, fmt.Errorf("label %d is negative or too large", v)}
			}
			labels[idx] = int32(v)
			return nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	if lines != n {
		return nil, 0, fmt.Errorf("%s: %d labels, want one per node (%d)", path, lines, n)
	}
	if classes == 0 {
		for _, l := range labels { // -1 (missing) never raises the count
			if int(l) >= classes {
				classes = int(l) + 1
			}
		}
	}
	return labels, classes, nil
}

// isMissingLabel reports whether a label line stands for "no label".
func isMissingLabel(line []byte) bool {
	switch string(line) {
	case "", "-1", "nan", "NaN", "-1.0":
		return true
	}
	return false
}

// featureDim reads the first line of the feature file to size the matrix.
func featureDim(path string) (int, error) {
	r, closeFn, err := openGzip(path)
	if err != nil {
		return 0, err
	}
	defer closeFn()
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 64<<10)
	for {
		k, err := r.Read(tmp)
		for _, c := range tmp[:k] {
			if c == '\n' {
				return countFields(trimCR(buf)), nil
			}
			buf = append(buf, c)
		}
		if err == io.EOF {
			if len(buf) == 0 {
				return 0, fmt.Errorf("%s: empty file, want one feature row per node", path)
			}
			return countFields(trimCR(buf)), nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

func readFeatures(path string, n int64, workers int) (*Features, error) {
	dim, err := featureDim(path)
	if err != nil {
		return nil, err
	}
	if int64(dim) > (1<<62)/n {
		return nil, fmt.Errorf("%s: %d x %d features do not fit in memory", path, n, dim)
	}
	f := &Features{Dim: dim, Data: make([]float32, n*int64(dim))}
	lines, err := scanGzip(path, workers, func(c *textChunk) error {
		return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if idx >= n {
				return &lineError{path, idx + 1, fmt.Errorf("more feature rows than the %d nodes", n)}
			}
			if err := parseFeatureLine(line, f.Row(idx)); err != nil {
				return &lineError{path, idx + 1, err}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if lines != n {
		return nil, fmt.Errorf("%s: %d feature rows, want one per node (%d)", path, lines, n)
	}
	return f, nil
}

// readIDs reads a file of node ids, one per line, each in [0,n).
func readIDs(path string, n int64, workers int) ([]int64, error) {
	var mu sync.Mutex
	parts := map[int][]int64{}
	_, err := scanGzip(path, workers, func(c *textChunk) error {
		var ids []int64
		err := forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			v, err := parseIntLine(line)
			if err != nil {
				return &lineError{path, idx + 1, fmt.Errorf("node id: %w", err)}
			}
			if v < 0 || v >= n {
				return &lineError{path, idx + 1, fmt.Errorf("node id %d outside [0,%d)", v, n)}
			}
			ids = append(ids, v)
			return nil
		})
		mu.Lock()
		parts[c.seq] = ids
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []int64
	for i := 0; i < len(parts); i++ {
		out = append(out, parts[i]...)
	}
	if out == nil {
		out = []int64{}
	}
	return out, nil
}

func readSplits(dir string, names, linkNames []string, n int64, workers int) (map[string]*Split, error) {
	if names == nil {
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read splits: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() && !slices.Contains(linkNames, e.Name()) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
	}
	splits := make(map[string]*Split, len(names))
	for _, name := range names {
		sd := filepath.Join(dir, name)
		if st, err := os.Stat(sd); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("split %q: missing directory %s", name, sd)
		}
		if hasPTSplit(sd) {
			// An ogbl dataset's split/time: say what it is rather than
			// "missing train.csv.gz".
			return nil, fmt.Errorf("split %q: %s holds OGB's link split files (train.pt, ...), not a node split; use it as a link split (partition --link-split %s)", name, sd, name)
		}
		s := &Split{}
		for _, p := range []struct {
			file string
			dst  *[]int64
		}{{"train.csv.gz", &s.Train}, {"valid.csv.gz", &s.Valid}, {"test.csv.gz", &s.Test}} {
			ids, err := readIDs(filepath.Join(sd, p.file), n, workers)
			if err != nil {
				return nil, fmt.Errorf("split %q: %w", name, err)
			}
			*p.dst = ids
		}
		if err := checkDisjoint(s, n); err != nil {
			return nil, fmt.Errorf("split %q (%s): %w", name, sd, err)
		}
		splits[name] = s
	}
	return splits, nil
}

// checkDisjoint refuses a node listed twice or in two parts of a split:
// that would leak evaluation nodes into training.
func checkDisjoint(s *Split, n int64) error {
	seen := make([]uint8, n)
	for k, ids := range [][]int64{s.Train, s.Valid, s.Test} {
		part := [...]string{"train", "valid", "test"}[k]
		for i, v := range ids {
			if seen[v] != 0 {
				return fmt.Errorf("node %d (line %d of %s.csv.gz) is already in %s", v, i+1, part, [...]string{"", "train", "valid", "test"}[seen[v]])
			}
			seen[v] = uint8(k + 1)
		}
	}
	return nil
}

// readHomoCounts reads the node and edge counts of a homogeneous raw
// layout (num-node-list.csv.gz, num-edge-list.csv.gz): at least one node,
// no negative edge count.
func readHomoCounts(raw string) (n, m int64, err error) {
	n, err = readSingleNumber(filepath.Join(raw, "num-node-list.csv.gz"))
	if err != nil {
		return 0, 0, err
	}
	if n <= 0 {
		return 0, 0, fmt.Errorf("%s: node count %d must be positive", filepath.Join(raw, "num-node-list.csv.gz"), n)
	}
	m, err = readSingleNumber(filepath.Join(raw, "num-edge-list.csv.gz"))
	if err != nil {
		return 0, 0, err
	}
	if m < 0 {
		return 0, 0, fmt.Errorf("%s: edge count %d is negative", filepath.Join(raw, "num-edge-list.csv.gz"), m)
	}
	return n, m, nil
}
