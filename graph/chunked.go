package graph

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"mpignn/internal/osx"

	"codeberg.org/sbinet/npyio"
)

// The chunked graph format is DistDGL's input to its distributed
// partitioning pipeline ("chunked graph data format"), read as it is so
// that a DistDGL user brings the same files:
//
//	metadata.json
//	  graph_name           the dataset's name
//	  node_type            node type names; ["_N"] for a homogeneous graph
//	  num_nodes_per_chunk  per node type, the node count of each chunk
//	  edge_type            "src:rel:dst" names; ["_N:_E:_N"] homogeneous
//	  num_edges_per_chunk  per edge type, the edge count of each chunk
//	  edges                per edge type: format {"name": "csv", "delimiter": " "},
//	                       {"name": "numpy"} or {"name": "parquet"} and data,
//	                       one file per chunk (CSV "src dst" lines; numpy or
//	                       parquet int (m,2) arrays); ids are type-local
//	  node_data            per node type, per key: format {"name": "numpy"}
//	                       or {"name": "parquet"} and data, one file per node
//	                       chunk of that type
//	  edge_data            per edge type, per key: format as node_data, one
//	                       file per edge chunk of that type
//
// Node chunk c of a type holds the type-local ids that follow those of
// chunks 0..c-1. mpignn reads these node_data keys: "feat" (float32 or
// float64 rows), "label" (integers, -1 for none) and split masks
// "train_mask", "val_mask", "test_mask" (the split named "default") or
// "train_mask:NAME" etc. (split NAME), and "time" (integers, the node
// times of ReadOptions.Time); of edge_data it reads "time" (one integer
// per edge of the chunk, the edge times), "feat" (float32 or float64
// (edges, dim) rows, the edge features of raw/edge-feat.csv.gz, row i
// that of the chunk's edge i) and "label" (the edge task's labels of
// raw/edge-label.csv.gz: integer (edges,) classes, -1 unlabelled, or
// float (edges, K) real values, NaN unlabelled). Other keys are ignored. A
// parquet chunk is read as DistDGL reads it (parquet.go): a pandas table,
// one column per array column, reshaped by its "shape" metadata; the same
// checks then apply as to a numpy chunk, and a null value is an error.

// ChunkedMetaFile is the metadata file that marks a chunked dataset.
const ChunkedMetaFile = "metadata.json"

// Names DistDGL gives the one node and edge type of a homogeneous graph.
const (
	HomoNodeType = "_N"
	HomoEdgeType = "_N:_E:_N"
)

// Node data keys mpignn reads.
const (
	ChunkFeat  = "feat"
	ChunkLabel = "label"
	// ChunkTime is the time key of node_data (node times) and of
	// edge_data (edge times).
	ChunkTime = "time"
)

// Chunk formats.
const (
	FormatCSV     = "csv"
	FormatNumpy   = "numpy"
	FormatParquet = "parquet"
)

// ChunkFormat is the "format" object of a chunked file list.
type ChunkFormat struct {
	Name      string `json:"name"`
	Delimiter string `json:"delimiter,omitempty"`
}

// ChunkFiles is a list of chunk files with their format.
type ChunkFiles struct {
	Format ChunkFormat `json:"format"`
	Data   []string    `json:"data"`
}

// ChunkedMeta is metadata.json.
type ChunkedMeta struct {
	GraphName        string                           `json:"graph_name"`
	NodeType         []string                         `json:"node_type"`
	NumNodesPerChunk [][]int64                        `json:"num_nodes_per_chunk"`
	EdgeType         []string                         `json:"edge_type"`
	NumEdgesPerChunk [][]int64                        `json:"num_edges_per_chunk"`
	Edges            map[string]ChunkFiles            `json:"edges"`
	NodeData         map[string]map[string]ChunkFiles `json:"node_data,omitempty"`
	EdgeData         map[string]map[string]ChunkFiles `json:"edge_data,omitempty"`
}

// Chunked is an opened chunked dataset.
type Chunked struct {
	Dir  string
	Meta ChunkedMeta
	// Counts are the node counts per type (order of Meta.NodeType).
	Counts []int64
	// Rels are the edge types as relations (order of Meta.EdgeType).
	Rels []Relation
}

// IsChunkedLayout reports whether dir holds a chunked dataset.
func IsChunkedLayout(dir string) bool { return fileExists(filepath.Join(dir, ChunkedMetaFile)) }

// ParseEdgeType parses DistDGL's "src:rel:dst".
func ParseEdgeType(s string) (Relation, error) {
	p := strings.Split(s, ":")
	if len(p) != 3 || p[0] == "" || p[1] == "" || p[2] == "" {
		return Relation{}, fmt.Errorf("edge type %q: want src:rel:dst", s)
	}
	return Relation{Src: p[0], Name: p[1], Dst: p[2]}, nil
}

// EdgeTypeOf returns DistDGL's "src:rel:dst" name of r.
func EdgeTypeOf(r Relation) string { return r.Src + ":" + r.Name + ":" + r.Dst }

// OpenChunked reads and checks dir/metadata.json: consistent types and
// chunk counts, a file per chunk, known formats.
func OpenChunked(dir string) (*Chunked, error) {
	path := filepath.Join(dir, ChunkedMetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read chunked dataset %s: %w", dir, err)
	}
	c := &Chunked{Dir: dir}
	if err := json.Unmarshal(b, &c.Meta); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c *Chunked) check() error {
	m := &c.Meta
	if len(m.NodeType) == 0 {
		return errors.New("node_type is empty")
	}
	if len(m.NumNodesPerChunk) != len(m.NodeType) {
		return fmt.Errorf("num_nodes_per_chunk has %d entries for %d node types", len(m.NumNodesPerChunk), len(m.NodeType))
	}
	seen := map[string]bool{}
	for t, typ := range m.NodeType {
		if err := checkTypeName(typ); err != nil && typ != HomoNodeType {
			return err
		}
		if seen[typ] {
			return fmt.Errorf("node type %q listed twice", typ)
		}
		seen[typ] = true
		var n int64
		for k, x := range m.NumNodesPerChunk[t] {
			if x < 0 {
				return fmt.Errorf("num_nodes_per_chunk[%s][%d] = %d is negative", typ, k, x)
			}
			n += x
		}
		if len(m.NumNodesPerChunk[t]) == 0 {
			return fmt.Errorf("node type %q has no chunks", typ)
		}
		c.Counts = append(c.Counts, n)
		for key, files := range m.NodeData[typ] {
			if err := checkChunkFiles(files, len(m.NumNodesPerChunk[t]), "node_data "+typ+"/"+key, false); err != nil {
				return err
			}
		}
	}
	for typ := range m.NodeData {
		if !seen[typ] {
			return fmt.Errorf("node_data names node type %q, which is not in node_type", typ)
		}
	}
	if len(m.NumEdgesPerChunk) != len(m.EdgeType) {
		return fmt.Errorf("num_edges_per_chunk has %d entries for %d edge types", len(m.NumEdgesPerChunk), len(m.EdgeType))
	}
	for e, et := range m.EdgeType {
		r, err := ParseEdgeType(et)
		if err != nil {
			return err
		}
		if !seen[r.Src] || !seen[r.Dst] {
			return fmt.Errorf("edge type %q names a node type not in node_type", et)
		}
		for k, x := range m.NumEdgesPerChunk[e] {
			if x < 0 {
				return fmt.Errorf("num_edges_per_chunk[%s][%d] = %d is negative", et, k, x)
			}
		}
		files, ok := m.Edges[et]
		if !ok {
			return fmt.Errorf("edges has no entry for edge type %q", et)
		}
		if err := checkChunkFiles(files, len(m.NumEdgesPerChunk[e]), "edges "+et, true); err != nil {
			return err
		}
		for key, files := range m.EdgeData[et] {
			if err := checkChunkFiles(files, len(m.NumEdgesPerChunk[e]), "edge_data "+et+"/"+key, false); err != nil {
				return err
			}
		}
		c.Rels = append(c.Rels, r)
	}
	for et := range m.EdgeData {
		if !slices.Contains(m.EdgeType, et) {
			return fmt.Errorf("edge_data names edge type %q, which is not in edge_type", et)
		}
	}
	return nil
}

func checkChunkFiles(f ChunkFiles, chunks int, what string, csvOK bool) error {
	switch f.Format.Name {
	case FormatNumpy, FormatParquet:
	case FormatCSV:
		if !csvOK {
			return fmt.Errorf("%s: format csv is not supported for node data (use numpy or parquet)", what)
		}
	default:
		return fmt.Errorf("%s: unknown format %q (want numpy, parquet or csv)", what, f.Format.Name)
	}
	if len(f.Data) != chunks {
		return fmt.Errorf("%s: %d files for %d chunks", what, len(f.Data), chunks)
	}
	return nil
}

// Homogeneous reports whether the dataset is DistDGL's homogeneous form
// (one node type _N, one edge type _N:_E:_N).
func (c *Chunked) Homogeneous() bool {
	return len(c.Meta.NodeType) == 1 && c.Meta.NodeType[0] == HomoNodeType &&
		len(c.Meta.EdgeType) == 1 && c.Meta.EdgeType[0] == HomoEdgeType
}

// NumNodeChunks returns the chunk count of node type t.
func (c *Chunked) NumNodeChunks(t int) int { return len(c.Meta.NumNodesPerChunk[t]) }

// NumEdgeChunks returns the chunk count of edge type e.
func (c *Chunked) NumEdgeChunks(e int) int { return len(c.Meta.NumEdgesPerChunk[e]) }

// NodeChunkStart returns the first type-local id of node chunk k of type t
// (k == NumNodeChunks(t) gives the type's count).
func (c *Chunked) NodeChunkStart(t, k int) int64 {
	var s int64
	for _, x := range c.Meta.NumNodesPerChunk[t][:k] {
		s += x
	}
	return s
}

// ChunkRange returns the chunks [lo,hi) of k that rank r of size reads:
// consecutive runs as even as possible, so a rank's node chunks are one
// contiguous id range.
func ChunkRange(k, size, r int) (lo, hi int) {
	return int(int64(k) * int64(r) / int64(size)), int(int64(k) * int64(r+1) / int64(size))
}

func (c *Chunked) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// HasNodeData reports whether node type typ has data key.
func (c *Chunked) HasNodeData(typ, key string) bool {
	_, ok := c.Meta.NodeData[typ][key]
	return ok
}

// NodeDataKeys returns the keys of node type typ.
func (c *Chunked) NodeDataKeys(typ string) []string {
	return slices.Sorted(maps.Keys(c.Meta.NodeData[typ]))
}

// ReadEdgeChunk reads chunk k of edge type e: type-local sources and
// destinations, checked against the chunk's edge count and the node counts.
func (c *Chunked) ReadEdgeChunk(e, k int) (src, dst []int64, err error) {
	et := c.Meta.EdgeType[e]
	f := c.Meta.Edges[et]
	path := c.path(f.Data[k])
	want := c.Meta.NumEdgesPerChunk[e][k]
	nSrc, nDst := c.Counts[c.typeIndex(c.Rels[e].Src)], c.Counts[c.typeIndex(c.Rels[e].Dst)]
	if f.Format.Name == FormatCSV {
		src, dst, err = readEdgeCSV(path, f.Format.Delimiter, want)
	} else {
		src, dst, err = readEdgeArray(f.Format, path, want)
	}
	if err != nil {
		return nil, nil, err
	}
	for i := range src {
		if src[i] < 0 || src[i] >= nSrc || dst[i] < 0 || dst[i] >= nDst {
			return nil, nil, fmt.Errorf("%s: edge %d (%d,%d) has an id outside [0,%d) x [0,%d)", path, i, src[i], dst[i], nSrc, nDst)
		}
	}
	return src, dst, nil
}

// TypeIndex returns the index of node type typ in Meta.NodeType, or -1.
func (c *Chunked) TypeIndex(typ string) int { return c.typeIndex(typ) }

func (c *Chunked) typeIndex(typ string) int {
	for t, x := range c.Meta.NodeType {
		if x == typ {
			return t
		}
	}
	return -1
}

func readEdgeCSV(path, delim string, want int64) (src, dst []int64, err error) {
	if delim == "" {
		delim = " "
	}
	if len(delim) != 1 {
		return nil, nil, fmt.Errorf("%s: csv delimiter %q: want one character", path, delim)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read edge chunk: %w", err)
	}
	defer f.Close()
	src = make([]int64, 0, want)
	dst = make([]int64, 0, want)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := int64(0)
	for sc.Scan() {
		line++
		b := trimCR(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		u, rest, err := parseInt(b)
		if err == nil && (len(rest) == 0 || rest[0] != delim[0]) {
			err = fmt.Errorf("want two ids separated by %q", delim)
		}
		var v int64
		if err == nil {
			v, rest, err = parseInt(rest[1:])
		}
		if err == nil && len(rest) > 0 {
			err = fmt.Errorf("trailing text %q", clip(rest))
		}
		if err != nil {
			return nil, nil, &lineError{path, line, err}
		}
		src, dst = append(src, u), append(dst, v)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(src)) != want {
		return nil, nil, fmt.Errorf("%s: %d edges, metadata.json says %d", path, len(src), want)
	}
	return src, dst, nil
}

// chunkArray is an opened numpy or parquet chunk: its shape, known from the
// header (footer) alone, then its values row-major.
type chunkArray interface {
	Shape() []int
	// Ints reads integers (or bools as 0/1) of any width.
	Ints() ([]int64, error)
	// Floats reads float32 or float64 values as float32.
	Floats() ([]float32, error)
	Close() error
}

// openChunkArray opens path, a numpy or parquet chunk as format says.
func openChunkArray(format ChunkFormat, path string) (chunkArray, error) {
	if format.Name == FormatParquet {
		return openParquetArray(path)
	}
	f, r, err := npyOpen(path)
	if err != nil {
		return nil, err
	}
	return &npyArray{path: path, f: f, r: r}, nil
}

// npyArray is an opened .npy chunk, its reader at the data.
type npyArray struct {
	path string
	f    *os.File
	r    *npyio.Reader
}

func (a *npyArray) Shape() []int { return a.r.Header.Descr.Shape }

func (a *npyArray) Close() error { return a.f.Close() }

func (a *npyArray) Ints() ([]int64, error) { return readNpyInts(a.r, a.path) }

func (a *npyArray) Floats() ([]float32, error) {
	var out []float32
	var err error
	switch typ := strings.Trim(a.r.Header.Descr.Type, "'\""); typ {
	case "<f4":
		err = a.r.Read(&out)
	case "<f8":
		var xs []float64
		if err = a.r.Read(&xs); err == nil || errors.Is(err, io.EOF) {
			err = nil
			out = make([]float32, len(xs))
			for i, x := range xs {
				out[i] = float32(x)
			}
		}
	default:
		return nil, fmt.Errorf("%s: dtype %s: want float32 or float64", a.path, typ)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", a.path, err)
	}
	return out, nil
}

// npyOpen opens path and returns its reader positioned at the data.
func npyOpen(path string) (*os.File, *npyio.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read chunk: %w", err)
	}
	r, err := npyio.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Header.Descr.Fortran {
		f.Close()
		return nil, nil, fmt.Errorf("%s: Fortran-order arrays are not supported (save C-order)", path)
	}
	return f, r, nil
}

// readNpyInts reads an integer (or bool) array of any width as int64.
func readNpyInts(r *npyio.Reader, path string) ([]int64, error) {
	var out []int64
	var err error
	switch typ := strings.Trim(r.Header.Descr.Type, "'\""); typ {
	case "<i8":
		err = r.Read(&out)
	case "<i4":
		out, err = readConv[int32](r)
	case "<i2":
		out, err = readConv[int16](r)
	case "|i1":
		out, err = readConv[int8](r)
	case "|u1":
		out, err = readConv[uint8](r)
	case "<u4":
		out, err = readConv[uint32](r)
	case "|b1":
		var bs []bool
		if err = r.Read(&bs); err == nil {
			out = make([]int64, len(bs))
			for i, b := range bs {
				if b {
					out[i] = 1
				}
			}
		}
	default:
		return nil, fmt.Errorf("%s: dtype %s: want an integer or bool array", path, typ)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func readConv[T int8 | int16 | int32 | uint8 | uint32](r *npyio.Reader) ([]int64, error) {
	var xs []T
	if err := r.Read(&xs); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out, nil
}

func readEdgeArray(format ChunkFormat, path string, want int64) (src, dst []int64, err error) {
	a, err := openChunkArray(format, path)
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	if sh := a.Shape(); len(sh) != 2 || sh[1] != 2 || int64(sh[0]) != want {
		return nil, nil, fmt.Errorf("%s: shape %v, want (%d, 2) (metadata.json's edge count, src and dst)", path, sh, want)
	}
	xs, err := a.Ints()
	if err != nil {
		return nil, nil, err
	}
	src, dst = make([]int64, want), make([]int64, want)
	for i := range src {
		src[i], dst[i] = xs[2*i], xs[2*i+1]
	}
	return src, dst, nil
}

// HasEdgeData reports whether edge type et has data key.
func (c *Chunked) HasEdgeData(et, key string) bool {
	_, ok := c.Meta.EdgeData[et][key]
	return ok
}

// ReadEdgeInts reads chunk k of edge type e's data key as integers (edge
// times): one per edge of the chunk, in the order of its edges.
func (c *Chunked) ReadEdgeInts(e int, key string, k int) ([]int64, error) {
	et := c.Meta.EdgeType[e]
	files := c.Meta.EdgeData[et][key]
	path := c.path(files.Data[k])
	a, err := openChunkArray(files.Format, path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	want := c.Meta.NumEdgesPerChunk[e][k]
	if sh := a.Shape(); len(sh) == 0 || int64(sh[0]) != want || (len(sh) == 2 && sh[1] != 1) || len(sh) > 2 {
		return nil, fmt.Errorf("%s: shape %v, want (%d,) (one value per edge of the chunk)", path, sh, want)
	}
	return a.Ints()
}

// ReadEdgeFeat reads chunk k of edge type e's data key as float32 rows
// (edge features): a 2-D (edges, dim) array, row i that of the chunk's
// edge i.
func (c *Chunked) ReadEdgeFeat(e int, key string, k int) (*Features, error) {
	a, path, err := c.openEdgeArray(e, key, k)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return readRows(a, path, c.Meta.NumEdgesPerChunk[e][k], "edge")
}

// readRows reads a chunk array of want float rows (one per node or edge,
// what names which), checking its shape.
func readRows(a chunkArray, path string, want int64, what string) (*Features, error) {
	sh := a.Shape()
	if len(sh) != 2 || int64(sh[0]) != want || sh[1] < 1 {
		return nil, fmt.Errorf("%s: shape %v, want (%d, dim) (one row per %s of the chunk)", path, sh, want, what)
	}
	out := &Features{Dim: sh[1]}
	var err error
	if out.Data, err = a.Floats(); err != nil {
		return nil, err
	}
	if int64(len(out.Data)) != want*int64(out.Dim) {
		return nil, fmt.Errorf("%s: %d values, want %d x %d", path, len(out.Data), want, out.Dim)
	}
	return out, nil
}

// ReadEdgeLabels reads chunk k of edge type e's edge_data "label" (the
// edge task's labels, as convert writes them) as float32 rows: a 1-D
// (edges,) integer array holds one class per edge (classes true; -1, an
// unlabelled edge, becomes NaN), a 2-D (edges, K) float array K real
// values per edge (NaN unlabelled). Row i is that of the chunk's edge i.
// A class outside [-1,2^24) is an error naming the file and edge.
func (c *Chunked) ReadEdgeLabels(e, k int) (rows *Features, classes bool, err error) {
	a, path, err := c.openEdgeArray(e, ChunkLabel, k)
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	want := c.Meta.NumEdgesPerChunk[e][k]
	sh := a.Shape()
	switch {
	case len(sh) == 1 && int64(sh[0]) == want:
		xs, err := a.Ints()
		if err != nil {
			return nil, false, err
		}
		if int64(len(xs)) != want {
			return nil, false, fmt.Errorf("%s: %d values, want %d", path, len(xs), want)
		}
		out := &Features{Dim: 1, Data: make([]float32, len(xs))}
		for i, l := range xs {
			switch {
			case l == -1:
				out.Data[i] = float32(math.NaN())
			case l < 0 || l >= 1<<24:
				return nil, false, fmt.Errorf("%s: edge %d: class %d outside [-1,2^24) (-1: unlabelled)", path, i, l)
			default:
				out.Data[i] = float32(l)
			}
		}
		return out, true, nil
	case len(sh) == 2 && int64(sh[0]) == want && sh[1] >= 1:
		out := &Features{Dim: sh[1]}
		if out.Data, err = a.Floats(); err != nil {
			return nil, false, err
		}
		if int64(len(out.Data)) != want*int64(out.Dim) {
			return nil, false, fmt.Errorf("%s: %d values, want %d x %d", path, len(out.Data), want, out.Dim)
		}
		return out, false, nil
	}
	return nil, false, fmt.Errorf("%s: shape %v, want (%d,) classes or (%d, K) real values (one row per edge of the chunk)", path, sh, want, want)
}

// EdgeFeatDim returns the row width of chunk k of edge type e's data key
// from its header alone: dim of a 2-D (edges, dim) array.
func (c *Chunked) EdgeFeatDim(e int, key string, k int) (int, error) {
	a, path, err := c.openEdgeArray(e, key, k)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	sh := a.Shape()
	if len(sh) != 2 || sh[1] < 1 {
		return 0, fmt.Errorf("%s: shape %v, want (edges, dim)", path, sh)
	}
	return sh[1], nil
}

// openEdgeArray opens chunk k of edge type e's data key.
func (c *Chunked) openEdgeArray(e int, key string, k int) (chunkArray, string, error) {
	files := c.Meta.EdgeData[c.Meta.EdgeType[e]][key]
	path := c.path(files.Data[k])
	a, err := openChunkArray(files.Format, path)
	return a, path, err
}

// ReadNodeInts reads chunk k of node type t's data key as integers (labels,
// masks): one per node of the chunk.
func (c *Chunked) ReadNodeInts(t int, key string, k int) ([]int64, error) {
	a, path, err := c.openNodeArray(t, key, k)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	want := c.Meta.NumNodesPerChunk[t][k]
	if sh := a.Shape(); len(sh) == 0 || int64(sh[0]) != want || (len(sh) == 2 && sh[1] != 1) || len(sh) > 2 {
		return nil, fmt.Errorf("%s: shape %v, want (%d,) (one value per node of the chunk)", path, sh, want)
	}
	return a.Ints()
}

// ReadNodeFeat reads chunk k of node type t's data key as float32 rows.
func (c *Chunked) ReadNodeFeat(t int, key string, k int) (*Features, error) {
	a, path, err := c.openNodeArray(t, key, k)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return readRows(a, path, c.Meta.NumNodesPerChunk[t][k], "node")
}

// NodeDataWidth returns the row width of chunk k of node type t's data
// key from its header alone: 1 for one value per node ((nodes,) or
// (nodes, 1)), K for (nodes, K).
func (c *Chunked) NodeDataWidth(t int, key string, k int) (int, error) {
	a, path, err := c.openNodeArray(t, key, k)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	switch sh := a.Shape(); {
	case len(sh) == 1:
		return 1, nil
	case len(sh) == 2 && sh[1] >= 1:
		return sh[1], nil
	default:
		return 0, fmt.Errorf("%s: shape %v, want (nodes,) or (nodes, K)", path, sh)
	}
}

// NodeFeatDim returns the row width of chunk k of node type t's data key
// from its header alone.
func (c *Chunked) NodeFeatDim(t int, key string, k int) (int, error) {
	a, path, err := c.openNodeArray(t, key, k)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	sh := a.Shape()
	if len(sh) != 2 || sh[1] < 1 {
		return 0, fmt.Errorf("%s: shape %v, want (nodes, dim)", path, sh)
	}
	return sh[1], nil
}

// openNodeArray opens chunk k of node type t's data key.
func (c *Chunked) openNodeArray(t int, key string, k int) (chunkArray, string, error) {
	files := c.Meta.NodeData[c.Meta.NodeType[t]][key]
	path := c.path(files.Data[k])
	a, err := openChunkArray(files.Format, path)
	return a, path, err
}

// SplitNames maps the split mask keys of node type typ to split names:
// train_mask/val_mask/test_mask are the split "default", and
// train_mask:NAME etc. the split NAME. It returns the split names, sorted.
func (c *Chunked) SplitNames(typ string) []string {
	seen := map[string]bool{}
	for key := range c.Meta.NodeData[typ] {
		if name, _, ok := ParseMaskKey(key); ok {
			seen[name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Split mask sets, in the order of Split's fields.
var maskSets = [3]string{"train_mask", "val_mask", "test_mask"}

// DefaultSplitName is the split that DistDGL's unnamed masks form.
const DefaultSplitName = "default"

// ParseMaskKey parses a split mask key into its split name and set (0
// train, 1 valid, 2 test).
func ParseMaskKey(key string) (name string, set int, ok bool) {
	base, name, named := strings.Cut(key, ":")
	if !named {
		name = DefaultSplitName
	}
	for i, s := range maskSets {
		if base == s && name != "" {
			return name, i, true
		}
	}
	return "", 0, false
}

// MaskKey returns the node data key of split name's set (0 train, 1
// valid, 2 test).
func MaskKey(name string, set int) string {
	if name == DefaultSplitName {
		return maskSets[set]
	}
	return maskSets[set] + ":" + name
}

// WriteNpy writes xs (a slice, or [][]float32 rows, or [][2]int64 pairs)
// as path in the numpy format.
func WriteNpy(path string, xs any) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write chunk: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fast, err := writeNpyFast(w, xs)
	if !fast && err == nil {
		err = npyio.Write(w, xs)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, osx.Pathless(err))
	}
	return nil
}

// writeNpyFast writes the array types the chunk writers use (edge pairs,
// feature rows, labels, masks) with the bytes npyio.Write gives them, and
// reports false for anything else. npyio walks every element through
// reflection: measured, 3.5 s per 1 M-edge chunk, most of a chunked
// graph's writing time; here the data are copied as they lie in memory
// (little-endian hosts only, the layout numpy's '<' types name).
func writeNpyFast(w io.Writer, xs any) (bool, error) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return false, nil
	}
	var descr string
	var shape []int
	var data [][]byte
	switch v := xs.(type) {
	case [][2]int64:
		descr, shape = "<i8", []int{len(v), 2}
		data = append(data, sliceBytes(v))
	case []int64:
		descr, shape = "<i8", []int{len(v)}
		data = append(data, sliceBytes(v))
	case []uint8:
		descr, shape = "|u1", []int{len(v)}
		data = append(data, v)
	case [][]float32:
		if len(v) == 0 {
			return false, nil
		}
		descr, shape = "<f4", []int{len(v), len(v[0])}
		for _, row := range v {
			if len(row) != len(v[0]) {
				return false, nil
			}
			data = append(data, sliceBytes(row))
		}
	default:
		return false, nil
	}
	if err := writeNpyHeader(w, descr, shape); err != nil {
		return true, err
	}
	for _, b := range data {
		if _, err := w.Write(b); err != nil {
			return true, err
		}
	}
	return true, nil
}

// sliceBytes views a slice of fixed-size values as its bytes.
func sliceBytes[T any](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(xs[0])))
}

// writeNpyHeader writes the header npyio writes (format version 2.0, its
// padding) for a C-order array of descr and shape.
func writeNpyHeader(w io.Writer, descr string, shape []int) error {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	sh := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		sh = "(" + dims[0] + ",)"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, sh)
	const prefix = 6 + 6 // magic, version, uint32 length
	dict += strings.Repeat(" ", (prefix+len(dict)+1)%16) + "\n"
	head := append([]byte("\x93NUMPY\x02\x00"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(head[8:], uint32(len(dict)))
	_, err := w.Write(append(head, dict...))
	return err
}
