package graph

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ConvertOptions control ConvertToChunked.
type ConvertOptions struct {
	// ChunkNodes and ChunkEdges bound the nodes and edges of one chunk
	// (and so the memory of the conversion); 0 picks AutoChunkNodes for
	// nodes and 8 M edges.
	ChunkNodes, ChunkEdges int64
	// Workers is the parse parallelism of the split files; 0 GOMAXPROCS.
	Workers int
	// EdgeLabels says how raw/edge-label.csv.gz is read, as partition's
	// --edge-labels says it for the raw layout: LabelsClasses, LabelsReal,
	// or LabelsAuto (classes when it has one column, real when several).
	EdgeLabels string
}

// AutoNodeChunks and MaxAutoChunkNodes size the default node chunks: the
// distributed partitioner gives every rank a run of whole chunks, and
// PT-Scotch needs a node on every rank, so a type of n nodes is cut into
// about AutoNodeChunks chunks (at least half as many; one per node when n
// is smaller) for the largest jobs likely to partition it, each of at most
// MaxAutoChunkNodes nodes (memory).
const (
	AutoNodeChunks    = 128
	MaxAutoChunkNodes = 1 << 20
)

// AutoChunkNodes returns the default nodes per chunk of a node type of n
// nodes: ceil(n / AutoNodeChunks), within [1, MaxAutoChunkNodes]. That
// gives at least AutoNodeChunks/2 chunks (64: every rank of a job of up to
// 64 ranks holds one) or one chunk per node, unless the cap makes them
// more.
func AutoChunkNodes(n int64) int64 {
	return min(MaxAutoChunkNodes, max(1, (n+AutoNodeChunks-1)/AutoNodeChunks))
}

// nodesPer returns the nodes per chunk of a node type of n nodes.
func (o ConvertOptions) nodesPer(n int64) int64 {
	if o.ChunkNodes > 0 {
		return o.ChunkNodes
	}
	return AutoChunkNodes(n)
}

// edgesPer returns the edges per edge chunk.
func (o ConvertOptions) edgesPer() int64 {
	if o.ChunkEdges > 0 {
		return o.ChunkEdges
	}
	return 8 << 20
}

// ConvertToChunked turns a dataset in the OGB raw layout (homogeneous or
// heterogeneous CSV files, or OGB's binary npz files, see npz.go) at src
// into the chunked format at out (see chunked.go):
// edges as numpy (m,2) int64 chunks of stored (type-local) edges exactly as
// the edge files list them, features as float32 chunks, labels as int64
// chunks (-1 for a missing label), every node split as uint8 masks, and
// the edge and node times (what ReadOGB and ReadOGBHetero read with Time)
// as int64 edge_data and node_data "time" chunks.
// Edge, feature and label files are streamed a chunk at a time; split ids
// are held (they are at most one per node). The output appears only when
// complete. Readers of the chunked format apply the same reverse-edge,
// self-loop and duplicate rules as ReadOGB and ReadOGBHetero.
func ConvertToChunked(src, out string, opt ConvertOptions) error {
	if err := opt.Validate(); err != nil {
		return fmt.Errorf("convert %s: %w", src, err)
	}
	raw := filepath.Join(src, "raw")
	if st, err := os.Stat(raw); err != nil || !st.IsDir() {
		return fmt.Errorf("convert %s: missing directory %s (want the OGB raw layout)", src, raw)
	}
	name := filepath.Base(filepath.Clean(src))
	return writeDirAtomic(out, func(tmp string) error {
		var m *ChunkedMeta
		var err error
		switch {
		case IsHeteroLayout(src):
			m, err = convertHetero(src, tmp, opt)
		case IsNpzLayout(src):
			m, err = convertNpz(src, tmp, opt)
		default:
			m, err = convertHomo(src, tmp, opt)
		}
		if err != nil {
			return err
		}
		m.GraphName = name
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, ChunkedMetaFile), append(b, '\n'), 0o644)
	})
}

// EdgeChunkFile is the path, relative to the dataset, of chunk k of edge
// type et: edges/<src>___<rel>___<dst>-k.npy.
func EdgeChunkFile(et string, k int) string {
	return filepath.Join("edges", fmt.Sprintf("%s-%d.npy", strings.ReplaceAll(et, ":", "___"), k))
}

// EdgeDataChunkFile is the path, relative to the dataset, of chunk k of
// edge type et's data key: edge_data/<src>___<rel>___<dst>/<key>-k.npy.
func EdgeDataChunkFile(et, key string, k int) string {
	return filepath.Join("edge_data", strings.ReplaceAll(et, ":", "___"), fmt.Sprintf("%s-%d.npy", key, k))
}

// NodeChunkFile is the path, relative to the dataset, of chunk k of node
// type typ's data key: node_data/<type>/<key>-k.npy (':' in a split mask
// key becomes '-').
func NodeChunkFile(typ, key string, k int) string {
	return filepath.Join("node_data", typ, fmt.Sprintf("%s-%d.npy", strings.ReplaceAll(key, ":", "-"), k))
}

// ChunkSizes cuts n items into chunks of at most per (at least one chunk,
// possibly empty), as convert and the chunked generator lay them out.
func ChunkSizes(n, per int64) []int64 { return chunkSizes(n, per) }

// chunkSizes cuts n items into chunks of at most per (at least one chunk).
func chunkSizes(n, per int64) []int64 {
	var out []int64
	for lo := int64(0); lo < n; lo += per {
		out = append(out, min(per, n-lo))
	}
	if len(out) == 0 {
		out = []int64{0}
	}
	return out
}

func convertHomo(src, tmp string, opt ConvertOptions) (*ChunkedMeta, error) {
	raw := filepath.Join(src, "raw")
	n, m, err := readHomoCounts(raw)
	if err != nil {
		return nil, err
	}
	cm := &ChunkedMeta{
		NodeType: []string{HomoNodeType}, EdgeType: []string{HomoEdgeType},
		Edges: map[string]ChunkFiles{}, NodeData: map[string]map[string]ChunkFiles{HomoNodeType: {}},
	}
	nodeTypes := map[string]int64{HomoNodeType: n}
	if err := convertEdges(cm, tmp, filepath.Join(raw, "edge.csv.gz"), Relation{HomoNodeType, "_E", HomoNodeType}, HomoEdgeType, m, nodeTypes, opt); err != nil {
		return nil, err
	}
	var splits map[string]*Split
	if splits, err = readSplits(filepath.Join(src, "split"), nil, nil, n, opt.Workers); err != nil {
		return nil, err
	}
	feat := filepath.Join(raw, "node-feat.csv.gz")
	label := filepath.Join(raw, "node-label.csv.gz")
	edgeFeat := filepath.Join(raw, EdgeFeatFile)
	if !fileExists(feat) && fileExists(edgeFeat) {
		// An ogbn-proteins-shaped dataset: no node features of its own;
		// the partitioner derives them from the edge features
		// (--node-feat from-edges:mean|sum).
		feat = ""
	}
	if err := convertNodeData(cm, tmp, HomoNodeType, n, feat, label, false, splits, opt); err != nil {
		return nil, err
	}
	if fileExists(edgeFeat) {
		if err := convertEdgeFeat(cm, tmp, edgeFeat, m); err != nil {
			return nil, err
		}
	}
	if p := filepath.Join(raw, EdgeLabelFile); fileExists(p) {
		if err := convertEdgeLabels(cm, tmp, p, m, opt.EdgeLabels); err != nil {
			return nil, err
		}
	}
	return cm, convertHomoTimes(cm, tmp, raw)
}

// convertEdgeFeat streams raw/edge-feat.csv.gz (one float row per line of
// edge.csv.gz, as wide as the first) into edge_data "feat" chunks laid out
// as the edge chunks: chunk k holds the rows of edge chunk k's lines.
func convertEdgeFeat(cm *ChunkedMeta, tmp, path string, m int64) error {
	if m == 0 {
		return fmt.Errorf("%s: the graph has no edges, so its edge features have no width", path)
	}
	files, add := edgeDataWriter(tmp, ChunkFeat)
	if err := convertRows(path, "edge feature", "edge line", ChunkFeat, cm.NumEdgesPerChunk[0], m, parseFeatureLine, add); err != nil {
		return err
	}
	setEdgeData(cm, ChunkFeat, *files)
	return nil
}

// edgeDataWriter returns the chunk list of the homogeneous edge type's
// data key and convertRows' add function, which writes chunk k's array
// under tmp and appends it to the list.
func edgeDataWriter(tmp, key string) (*ChunkFiles, func(string, int, any) error) {
	files := &ChunkFiles{Format: ChunkFormat{Name: FormatNumpy}}
	return files, func(_ string, k int, rows any) error {
		rel := EdgeDataChunkFile(HomoEdgeType, key, k)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, rel)), 0o755); err != nil {
			return err
		}
		if err := WriteNpy(filepath.Join(tmp, rel), rows); err != nil {
			return err
		}
		files.Data = append(files.Data, rel)
		return nil
	}
}

// setEdgeData records files as the homogeneous edge type's data key.
func setEdgeData(cm *ChunkedMeta, key string, files ChunkFiles) {
	if cm.EdgeData == nil {
		cm.EdgeData = map[string]map[string]ChunkFiles{}
	}
	if cm.EdgeData[HomoEdgeType] == nil {
		cm.EdgeData[HomoEdgeType] = map[string]ChunkFiles{}
	}
	cm.EdgeData[HomoEdgeType][key] = files
}

// convertEdgeLabels streams raw/edge-label.csv.gz (the edge task's labels,
// one row per line of edge.csv.gz) into edge_data "label" chunks laid out
// as the edge chunks, read as graph.ReadOGB reads it for a partition with
// a link split (kind: LabelsClasses, LabelsReal, or LabelsAuto by the
// first row's width): classes as int64 (edges,) with -1 for an unlabelled
// line, real values as float32 (edges, K) with NaN. Classes stay integers
// so that the partitioner can tell the kinds apart by shape, as it does
// node labels.
func convertEdgeLabels(cm *ChunkedMeta, tmp, path string, m int64, kind string) error {
	if m == 0 {
		return fmt.Errorf("%s: the graph has no edges, so its edge labels have no width", path)
	}
	dim, err := featureDim(path)
	if err != nil {
		return err
	}
	files, add := edgeDataWriter(tmp, ChunkLabel)
	sizes := cm.NumEdgesPerChunk[0]
	if kind == LabelsReal || (kind == LabelsAuto && dim > 1) {
		if err := convertRows(path, "edge label", "edge line", ChunkLabel, sizes, m, parseTargetLine, add); err != nil {
			return err
		}
		setEdgeData(cm, ChunkLabel, *files)
		return nil
	}
	if dim != 1 {
		// readEdgeTargets' refusal.
		return fmt.Errorf("%s: %d columns, but edge classes are one integer per line (use --edge-labels real for real values)", path, dim)
	}
	ls, err := newLineScanner(path)
	if err != nil {
		return err
	}
	defer ls.close()
	var row [1]float32
	for k, size := range sizes {
		labels := make([]int64, size)
		for i := range labels {
			line, ok := ls.next()
			if !ok {
				if err := ls.err(); err != nil {
					return err
				}
				return fmt.Errorf("%s: %d edge label rows, want one per edge line (%d)", path, ls.line, m)
			}
			if err := parseTargetLine(line, row[:]); err != nil {
				return &lineError{path, ls.line, err}
			}
			v := row[0]
			switch {
			case v != v:
				labels[i] = -1
				continue
			case !isEdgeClass(v):
				return &lineError{path, ls.line, fmt.Errorf("class %v is not an integer in [0,2^24) (use --edge-labels real for a real value)", v)}
			}
			labels[i] = int64(v)
		}
		if err := add(ChunkLabel, k, labels); err != nil {
			return err
		}
	}
	if _, more := ls.next(); more {
		return &lineError{path, ls.line, fmt.Errorf("more edge label rows than the %d edge lines", m)}
	}
	if err := ls.err(); err != nil {
		return err
	}
	setEdgeData(cm, ChunkLabel, *files)
	return nil
}

// convertHomoTimes streams the times ReadOGB reads with ReadOptions.Time
// (raw/edge_time.csv.gz, raw/node_time.csv.gz or else
// raw/node_year.csv.gz), when present, into edge_data and node_data
// "time" chunks laid out as the edges and nodes.
func convertHomoTimes(cm *ChunkedMeta, tmp, raw string) error {
	if p := filepath.Join(raw, "edge_time.csv.gz"); fileExists(p) {
		files, err := convertIntColumn(p, cm.NumEdgesPerChunk[0], "edges of edge.csv.gz", tmp, func(k int) string {
			return EdgeDataChunkFile(HomoEdgeType, ChunkTime, k)
		})
		if err != nil {
			return err
		}
		if cm.EdgeData == nil {
			cm.EdgeData = map[string]map[string]ChunkFiles{}
		}
		if cm.EdgeData[HomoEdgeType] == nil {
			cm.EdgeData[HomoEdgeType] = map[string]ChunkFiles{}
		}
		cm.EdgeData[HomoEdgeType][ChunkTime] = files
	}
	for _, f := range []string{"node_time.csv.gz", "node_year.csv.gz"} { // ReadOGB's preference
		if p := filepath.Join(raw, f); fileExists(p) {
			files, err := convertIntColumn(p, cm.NumNodesPerChunk[0], "nodes", tmp, func(k int) string {
				return NodeChunkFile(HomoNodeType, ChunkTime, k)
			})
			if err != nil {
				return err
			}
			cm.NodeData[HomoNodeType][ChunkTime] = files
			break
		}
	}
	return nil
}

// convertIntColumn streams a file of one integer per line into int64
// numpy chunks of the given sizes, chunk k at file(k) under tmp.
func convertIntColumn(path string, sizes []int64, what, tmp string, file func(k int) string) (ChunkFiles, error) {
	files := ChunkFiles{Format: ChunkFormat{Name: FormatNumpy}}
	ls, err := newLineScanner(path)
	if err != nil {
		return files, err
	}
	defer ls.close()
	var total int64
	for _, x := range sizes {
		total += x
	}
	for k, size := range sizes {
		xs := make([]int64, size)
		for i := range xs {
			line, ok := ls.next()
			if !ok {
				if err := ls.err(); err != nil {
					return files, err
				}
				return files, fmt.Errorf("%s: %d lines, want one per %s (%d)", path, ls.line, what, total)
			}
			if xs[i], err = parseIntLine(trimCR(line)); err != nil {
				return files, &lineError{path, ls.line, err}
			}
		}
		rel := file(k)
		if err := os.MkdirAll(filepath.Dir(filepath.Join(tmp, rel)), 0o755); err != nil {
			return files, err
		}
		if err := WriteNpy(filepath.Join(tmp, rel), xs); err != nil {
			return files, err
		}
		files.Data = append(files.Data, rel)
	}
	if _, more := ls.next(); more {
		return files, &lineError{path, ls.line, fmt.Errorf("more lines than the %d %s", total, what)}
	}
	return files, ls.err()
}

func convertHetero(src, tmp string, opt ConvertOptions) (*ChunkedMeta, error) {
	raw := filepath.Join(src, "raw")
	counts, types, err := readNodeDict(filepath.Join(raw, "num-node-dict.csv.gz"))
	if err != nil {
		return nil, err
	}
	rels, err := readTriplets(raw, counts)
	if err != nil {
		return nil, err
	}
	schema, err := NewSchema(counts, rels)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", src, err)
	}
	sort.Strings(types)
	cm := &ChunkedMeta{NodeType: types, Edges: map[string]ChunkFiles{}, NodeData: map[string]map[string]ChunkFiles{}}
	for _, r := range schema.Relations {
		for _, x := range []string{r.Src, r.Name, r.Dst} {
			if strings.Contains(x, ":") {
				return nil, fmt.Errorf("convert %s: relation %s: names with ':' cannot be a chunked edge type", src, r)
			}
		}
		rd := filepath.Join(raw, "relations", r.String())
		m, err := readSingleNumber(filepath.Join(rd, "num-edge-list.csv.gz"))
		if err != nil {
			return nil, err
		}
		et := EdgeTypeOf(r)
		cm.EdgeType = append(cm.EdgeType, et)
		if err := convertEdges(cm, tmp, filepath.Join(rd, "edge.csv.gz"), r, et, m, counts, opt); err != nil {
			return nil, err
		}
		if p := filepath.Join(rd, "edge_time.csv.gz"); fileExists(p) {
			files, err := convertIntColumn(p, cm.NumEdgesPerChunk[len(cm.NumEdgesPerChunk)-1], "edges of edge.csv.gz", tmp, func(k int) string {
				return EdgeDataChunkFile(et, ChunkTime, k)
			})
			if err != nil {
				return nil, err
			}
			if cm.EdgeData == nil {
				cm.EdgeData = map[string]map[string]ChunkFiles{}
			}
			cm.EdgeData[et] = map[string]ChunkFiles{ChunkTime: files}
		}
	}
	hasFeat, hasLabel, err := readFeatLabelFlags(raw, types)
	if err != nil {
		return nil, err
	}
	splits, err := readHeteroSplits(src, nil, schema, opt.Workers)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		cm.NodeData[t] = map[string]ChunkFiles{}
		feat, label := "", ""
		if hasFeat[t] {
			feat = filepath.Join(raw, "node-feat", t, "node-feat.csv.gz")
		}
		if hasLabel[t] {
			label = filepath.Join(raw, "node-label", t, "node-label.csv.gz")
		}
		ts := map[string]*Split{}
		for name, byType := range splits {
			if s := byType[t]; s != nil {
				ts[name] = s
			}
		}
		if err := convertNodeData(cm, tmp, t, counts[t], feat, label, true, ts, opt); err != nil {
			return nil, err
		}
		for _, base := range []string{"node_time", "node_year"} { // ReadOGBHetero's preference
			if p := filepath.Join(raw, base, t, base+".csv.gz"); fileExists(p) {
				files, err := convertIntColumn(p, cm.NumNodesPerChunk[len(cm.NumNodesPerChunk)-1], "nodes of type "+t, tmp, func(k int) string {
					return NodeChunkFile(t, ChunkTime, k)
				})
				if err != nil {
					return nil, err
				}
				cm.NodeData[t][ChunkTime] = files
				break
			}
		}
		if len(cm.NodeData[t]) == 0 {
			delete(cm.NodeData, t)
		}
	}
	return cm, nil
}

// lineScanner streams the lines of a gzip'd text file in order.
type lineScanner struct {
	path  string
	sc    *bufio.Scanner
	close func() error
	line  int64
}

func newLineScanner(path string) (*lineScanner, error) {
	r, closeFn, err := openGzip(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	return &lineScanner{path: path, sc: sc, close: closeFn}, nil
}

// next returns the next line (nil, false at the end).
func (s *lineScanner) next() ([]byte, bool) {
	if !s.sc.Scan() {
		return nil, false
	}
	s.line++
	return trimCR(s.sc.Bytes()), true
}

func (s *lineScanner) err() error {
	if err := s.sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	return nil
}

// convertEdges streams the m lines of an edge file into numpy chunks.
func convertEdges(cm *ChunkedMeta, tmp, path string, r Relation, et string, m int64, counts map[string]int64, opt ConvertOptions) error {
	per := opt.edgesPer()
	if m < 0 {
		return fmt.Errorf("%s: edge count %d is negative", path, m)
	}
	sizes := chunkSizes(m, per)
	files := ChunkFiles{Format: ChunkFormat{Name: FormatNumpy}}
	dir := filepath.Join(tmp, "edges")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ls, err := newLineScanner(path)
	if err != nil {
		return err
	}
	defer ls.close()
	nSrc, nDst := counts[r.Src], counts[r.Dst]
	for k, size := range sizes {
		buf := make([][2]int64, size)
		for i := range buf {
			line, ok := ls.next()
			if !ok {
				if err := ls.err(); err != nil {
					return err
				}
				return fmt.Errorf("%s: %d edge lines, but num-edge-list.csv.gz says %d", path, ls.line, m)
			}
			u, v, err := parseEdgeLine(line)
			if err != nil {
				return &lineError{path, ls.line, err}
			}
			if u < 0 || u >= nSrc || v < 0 || v >= nDst {
				return &lineError{path, ls.line, fmt.Errorf("edge %d,%d has an id outside [0,%d) x [0,%d)", u, v, nSrc, nDst)}
			}
			buf[i] = [2]int64{u, v}
		}
		rel := EdgeChunkFile(et, k)
		if err := WriteNpy(filepath.Join(tmp, rel), buf); err != nil {
			return err
		}
		files.Data = append(files.Data, rel)
	}
	if _, more := ls.next(); more {
		return &lineError{path, ls.line, fmt.Errorf("more edge lines than the %d in num-edge-list.csv.gz", m)}
	}
	if err := ls.err(); err != nil {
		return err
	}
	cm.Edges[et] = files
	cm.NumEdgesPerChunk = append(cm.NumEdgesPerChunk, sizes)
	return nil
}

// convertRows writes the comma-separated float rows of path (one per
// unit, a node or an edge line, as wide as the first) as chunks of key,
// parsing each line with parse; what names the rows in errors.
func convertRows(path, what, unit, key string, sizes []int64, n int64, parse func([]byte, []float32) error, add func(string, int, any) error) error {
	dim, err := featureDim(path)
	if err != nil {
		return err
	}
	ls, err := newLineScanner(path)
	if err != nil {
		return err
	}
	defer ls.close()
	for k, size := range sizes {
		data := make([]float32, size*int64(dim))
		rows := make([][]float32, size)
		for i := range rows {
			line, ok := ls.next()
			if !ok {
				if err := ls.err(); err != nil {
					return err
				}
				return fmt.Errorf("%s: %d %s rows, want one per %s (%d)", path, ls.line, what, unit, n)
			}
			rows[i] = data[int64(i)*int64(dim) : int64(i+1)*int64(dim)]
			if err := parse(line, rows[i]); err != nil {
				return &lineError{path, ls.line, err}
			}
		}
		if err := add(key, k, rows); err != nil {
			return err
		}
	}
	if _, more := ls.next(); more {
		return &lineError{path, ls.line, fmt.Errorf("more %s rows than the %d %ss", what, n, unit)}
	}
	return ls.err()
}

// convertRowsThenSplits writes real targets as "label" chunks, then the
// split masks (what convertNodeData does after class labels).
func convertRowsThenSplits(labelPath string, sizes []int64, n int64, splits map[string]*Split, add func(string, int, any) error) error {
	if err := convertRows(labelPath, "label", "node", ChunkLabel, sizes, n, parseTargetLine, add); err != nil {
		return err
	}
	return convertMasks(sizes, n, splits, add)
}

// convertNodeData writes node type typ's chunks: features and labels
// streamed from their files ("" when absent), split masks from splits.
func convertNodeData(cm *ChunkedMeta, tmp, typ string, n int64, featPath, labelPath string, allowMissing bool, splits map[string]*Split, opt ConvertOptions) error {
	sizes := chunkSizes(n, opt.nodesPer(n))
	cm.NumNodesPerChunk = append(cm.NumNodesPerChunk, sizes)
	nd := cm.NodeData[typ]
	dir := filepath.Join(tmp, "node_data", typ)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	add := func(key string, k int, xs any) error {
		rel := NodeChunkFile(typ, key, k)
		if err := WriteNpy(filepath.Join(tmp, rel), xs); err != nil {
			return err
		}
		f := nd[key]
		f.Format.Name = FormatNumpy
		f.Data = append(f.Data, rel)
		nd[key] = f
		return nil
	}
	if featPath != "" {
		if err := convertRows(featPath, "feature", "node", ChunkFeat, sizes, n, parseFeatureLine, add); err != nil {
			return err
		}
	}
	if labelPath != "" && !allowMissing {
		// A label file of several columns holds real targets (ogbn-proteins'
		// 112 tasks): "label" chunks of (nodes, K) floats, NaN unlabelled,
		// which the distributed partitioner reads as targets.
		dim, err := featureDim(labelPath)
		if err != nil {
			return err
		}
		if dim > 1 {
			return convertRowsThenSplits(labelPath, sizes, n, splits, add)
		}
	}
	if labelPath != "" {
		ls, err := newLineScanner(labelPath)
		if err != nil {
			return err
		}
		defer ls.close()
		for k, size := range sizes {
			labels := make([]int64, size)
			for i := range labels {
				line, ok := ls.next()
				if !ok {
					if err := ls.err(); err != nil {
						return err
					}
					return fmt.Errorf("%s: %d labels, want one per node (%d)", labelPath, ls.line, n)
				}
				if allowMissing && isMissingLabel(line) {
					labels[i] = -1
					continue
				}
				l, err := parseIntLine(line)
				if err == nil && (l < 0 || l > 1<<31-2) {
					err = fmt.Errorf("label %d outside [0,%d]", l, 1<<31-2)
				}
				if err != nil {
					return &lineError{labelPath, ls.line, err}
				}
				labels[i] = l
			}
			if err := add(ChunkLabel, k, labels); err != nil {
				return err
			}
		}
		if _, more := ls.next(); more {
			return &lineError{labelPath, ls.line, fmt.Errorf("more labels than the %d nodes", n)}
		}
		if err := ls.err(); err != nil {
			return err
		}
	}
	return convertMasks(sizes, n, splits, add)
}

// convertMasks writes every split of splits as uint8 mask chunks.
func convertMasks(sizes []int64, n int64, splits map[string]*Split, add func(string, int, any) error) error {
	for _, name := range slices.Sorted(maps.Keys(splits)) {
		if strings.ContainsAny(name, ":/") {
			return fmt.Errorf("split %q: a name with ':' or '/' cannot be a node data key", name)
		}
		s := splits[name]
		for set, ids := range [][]int64{s.Train, s.Valid, s.Test} {
			mask := make([]uint8, n)
			for _, v := range ids {
				mask[v] = 1
			}
			lo := int64(0)
			for k, size := range sizes {
				if err := add(MaskKey(name, set), k, mask[lo:lo+size]); err != nil {
					return err
				}
				lo += size
			}
		}
	}
	return nil
}
