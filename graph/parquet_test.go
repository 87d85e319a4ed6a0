package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// frame is a table as pandas hands one to pyarrow for DistDGL's parquet
// writer: column i named "i" in that order, nullable, one row per array
// row, the array shape as a Python tuple in the "shape" metadata.
type frame struct {
	cols  []any    // typed slices of equal length, one per column
	names []string // column names; nil for "0", "1", ...
	shape string   // "" writes no shape metadata
	nulls map[[2]int]bool
}

// frameWriting is how a frame's bytes are laid out: pyarrow's defaults
// (dictionary pages, snappy, one row group) or many small row groups and
// pages, or required (non-nullable) columns as other writers make them.
type frameWriting struct {
	name     string
	dict     bool
	required bool
	rowGroup int64
	pageSize int // bytes buffered per page; 0 for parquet-go's default
}

var frameWritings = []frameWriting{
	{name: "pyarrow-like", dict: true},
	{name: "small row groups", rowGroup: 7, pageSize: 64},
	{name: "required", required: true, rowGroup: 5},
}

// writeFrame writes fr to path with parquet-go. The schema is a struct
// type built at run time: its field order, unlike parquet.Group's sorted
// names, keeps "10" after "9", as pandas does.
func writeFrame(t testing.TB, path string, fr frame, how frameWriting) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, frameBytes(t, fr, how), 0o644))
}

// frameBytes returns fr as a parquet file's bytes.
func frameBytes(t testing.TB, fr frame, how frameWriting) []byte {
	t.Helper()
	fields := make([]reflect.StructField, len(fr.cols))
	for j, col := range fr.cols {
		tag := fmt.Sprint(j)
		if fr.names != nil {
			tag = fr.names[j]
		}
		if !how.required {
			tag += ",optional"
		}
		if how.dict {
			tag += ",dict"
		}
		fields[j] = reflect.StructField{Name: fmt.Sprint("C", j), Type: reflect.TypeOf(col).Elem(), Tag: reflect.StructTag(`parquet:"` + tag + `"`)}
	}
	schema := parquet.SchemaOf(reflect.New(reflect.StructOf(fields)).Elem().Interface())
	opts := []parquet.WriterOption{schema, parquet.Compression(&parquet.Snappy)}
	if how.pageSize > 0 {
		opts = append(opts, parquet.PageBufferSize(how.pageSize))
	}
	if fr.shape != "" {
		opts = append(opts, parquet.KeyValueMetadata(parquetShapeKey, fr.shape))
	}
	if how.rowGroup > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(how.rowGroup))
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, opts...)
	n := 0
	if len(fr.cols) > 0 {
		n = reflect.ValueOf(fr.cols[0]).Len()
	}
	def := 1
	if how.required {
		def = 0
	}
	for i := range n {
		row := make(parquet.Row, len(fr.cols))
		for j, col := range fr.cols {
			if fr.nulls[[2]int{i, j}] {
				row[j] = parquet.Value{}.Level(0, 0, j)
				continue
			}
			row[j] = parquet.ValueOf(reflect.ValueOf(col).Index(i).Interface()).Level(0, def, j)
		}
		_, err := w.WriteRows([]parquet.Row{row})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// pairCols splits (m,2) pairs into a frame's two columns.
func pairCols[T any](pairs [][2]T) []any {
	a, b := make([]T, len(pairs)), make([]T, len(pairs))
	for i, p := range pairs {
		a[i], b[i] = p[0], p[1]
	}
	return []any{a, b}
}

// rowCols splits rows into a frame's columns.
func rowCols[T any](rows [][]T) []any {
	cols := make([]any, len(rows[0]))
	for j := range cols {
		c := make([]T, len(rows))
		for i, r := range rows {
			c[i] = r[j]
		}
		cols[j] = c
	}
	return cols
}

func convertCol[T, U int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](xs []T) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = U(x)
	}
	return out
}

// writeChunkedMeta writes a homogeneous one-chunk dataset's metadata.json:
// n nodes, m edges in file edges, node and edge data keys in files, all
// in format.
func writeChunkedMeta(t testing.TB, dir, format string, n, m int64, edges string, node, edge map[string]string) {
	t.Helper()
	files := func(f string) ChunkFiles { return ChunkFiles{Format: ChunkFormat{Name: format}, Data: []string{f}} }
	meta := ChunkedMeta{
		GraphName: "g", NodeType: []string{HomoNodeType}, NumNodesPerChunk: [][]int64{{n}},
		EdgeType: []string{HomoEdgeType}, NumEdgesPerChunk: [][]int64{{m}},
		Edges:    map[string]ChunkFiles{HomoEdgeType: files(edges)},
		NodeData: map[string]map[string]ChunkFiles{HomoNodeType: {}},
		EdgeData: map[string]map[string]ChunkFiles{HomoEdgeType: {}},
	}
	for k, f := range node {
		meta.NodeData[HomoNodeType][k] = files(f)
	}
	for k, f := range edge {
		meta.EdgeData[HomoEdgeType][k] = files(f)
	}
	b, err := json.Marshal(meta)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ChunkedMetaFile), b, 0o644))
}

// TestParquetChunksMatchNumpy: each kind of chunk, written as DistDGL's
// parquet writer would and as numpy, reads back the same through the
// Chunked readers, whatever the page and row group layout.
func TestParquetChunksMatchNumpy(t *testing.T) {
	const n, m = 23, 31
	pairs := make([][2]int64, m)
	for i := range pairs {
		pairs[i] = [2]int64{int64(i * 7 % n), int64(i * 5 % n)}
	}
	rows32 := make([][]float32, n) // 12 columns: "10" and "11" must follow "9"
	rows64 := make([][]float64, n)
	labels, times := make([]int64, n), make([]int64, n)
	masks, bools := make([]uint8, n), make([]bool, n)
	etimes := make([]int64, m)
	for v := range n {
		rows32[v], rows64[v] = make([]float32, 12), make([]float64, 3)
		for j := range rows32[v] {
			rows32[v][j] = float32(v)*0.5 - float32(j)*1.25
		}
		for j := range rows64[v] {
			rows64[v][j] = float64(v)/3 + float64(j) // rounds to float32 as numpy's <f8 does
		}
		labels[v], times[v] = int64(v%5)-1, int64(1e12)+int64(v)*3
		masks[v], bools[v] = uint8(v%3/2), v%4 == 1
	}
	times32 := convertCol[int64, uint32](times) // wrapped past 2^32, as numpy's astype would
	for i := range etimes {
		etimes[i] = int64(i) - 10
	}

	type read func(c *Chunked) (any, error)
	edgeChunk := func(c *Chunked) (any, error) {
		s, d, err := c.ReadEdgeChunk(0, 0)
		return [2][]int64{s, d}, err
	}
	nodeInts := func(key string) read {
		return func(c *Chunked) (any, error) { return c.ReadNodeInts(0, key, 0) }
	}
	feat := func(c *Chunked) (any, error) {
		dim, err := c.NodeFeatDim(0, ChunkFeat, 0)
		if err != nil {
			return nil, err
		}
		f, err := c.ReadNodeFeat(0, ChunkFeat, 0)
		return []any{dim, f}, err
	}
	edgeTime := func(c *Chunked) (any, error) { return c.ReadEdgeInts(0, ChunkTime, 0) }
	rowsOf := func(xs []int64) [][]int64 { // (n,1): a label column with no shape metadata
		out := make([][]int64, len(xs))
		for i, x := range xs {
			out[i] = []int64{x}
		}
		return out
	}

	for _, tc := range []struct {
		name string
		key  string // node_data key; "" for the edges, ChunkTime+"@e" for edge times
		npy  any
		pq   frame
		read read
	}{
		{"edges int64 with shape", "", pairs, frame{cols: pairCols(pairs), shape: fmt.Sprintf("(%d, 2)", m)}, edgeChunk},
		{"edges int32 without shape", "", pairs, frame{cols: []any{convertCol[int64, int32](pairCols(pairs)[0].([]int64)), convertCol[int64, int32](pairCols(pairs)[1].([]int64))}}, edgeChunk},
		{"feat float32 12 columns", ChunkFeat, rows32, frame{cols: rowCols(rows32), shape: fmt.Sprintf("(%d, 12)", n)}, feat},
		{"feat float64 without shape", ChunkFeat, rows64, frame{cols: rowCols(rows64)}, feat},
		{"label int64 (n,)", ChunkLabel, labels, frame{cols: []any{labels}, shape: fmt.Sprintf("(%d,)", n)}, nodeInts(ChunkLabel)},
		{"label int64 (n,1) without shape", ChunkLabel, rowsOf(labels), frame{cols: []any{labels}}, nodeInts(ChunkLabel)},
		{"label int8", ChunkLabel, labels, frame{cols: []any{convertCol[int64, int8](labels)}, shape: fmt.Sprintf("(%d,)", n)}, nodeInts(ChunkLabel)},
		{"label int16", ChunkLabel, labels, frame{cols: []any{convertCol[int64, int16](labels)}}, nodeInts(ChunkLabel)},
		{"label with a pandas index", ChunkLabel, labels, frame{cols: []any{labels, convertCol[int64, int64](labels)}, names: []string{"0", "__index_level_0__"}}, nodeInts(ChunkLabel)},
		{"mask uint8", "train_mask", masks, frame{cols: []any{masks}, shape: fmt.Sprintf("(%d,)", n)}, nodeInts("train_mask")},
		{"mask uint16", "train_mask", masks, frame{cols: []any{convertCol[uint8, uint16](masks)}}, nodeInts("train_mask")},
		{"mask bool", "train_mask", bools, frame{cols: []any{bools}, shape: fmt.Sprintf("(%d,)", n)}, nodeInts("train_mask")},
		{"time uint32", ChunkTime, convertCol[uint32, int64](times32), frame{cols: []any{times32}}, nodeInts(ChunkTime)},
		{"time uint64", ChunkTime, times, frame{cols: []any{convertCol[int64, uint64](times)}, shape: fmt.Sprintf("(%d,)", n)}, nodeInts(ChunkTime)},
		{"edge time int64", ChunkTime + "@e", etimes, frame{cols: []any{etimes}, shape: fmt.Sprintf("(%d,)", m)}, edgeTime},
	} {
		for _, how := range frameWritings {
			t.Run(tc.name+"/"+how.name, func(t *testing.T) {
				dir := t.TempDir()
				npDir, pqDir := filepath.Join(dir, "np"), filepath.Join(dir, "pq")
				require.NoError(t, os.MkdirAll(npDir, 0o755))
				require.NoError(t, os.MkdirAll(pqDir, 0o755))
				edgesNp, edgesPq := "e.npy", "e.parquet"
				node, edge := map[string]string{}, map[string]string{}
				switch {
				case tc.key == "":
					require.NoError(t, WriteNpy(filepath.Join(npDir, edgesNp), tc.npy))
					writeFrame(t, filepath.Join(pqDir, edgesPq), tc.pq, how)
				case strings.HasSuffix(tc.key, "@e"):
					edge[ChunkTime] = "x"
				default:
					node[tc.key] = "x"
				}
				if tc.key != "" {
					require.NoError(t, WriteNpy(filepath.Join(npDir, edgesNp), pairs))
					require.NoError(t, WriteNpy(filepath.Join(npDir, "x.npy"), tc.npy))
					writeFrame(t, filepath.Join(pqDir, edgesPq), frame{cols: pairCols(pairs)}, how)
					writeFrame(t, filepath.Join(pqDir, "x.parquet"), tc.pq, how)
				}
				ext := func(files map[string]string, e string) map[string]string {
					out := map[string]string{}
					for k, f := range files {
						out[k] = f + e
					}
					return out
				}
				writeChunkedMeta(t, npDir, FormatNumpy, n, m, edgesNp, ext(node, ".npy"), ext(edge, ".npy"))
				writeChunkedMeta(t, pqDir, FormatParquet, n, m, edgesPq, ext(node, ".parquet"), ext(edge, ".parquet"))
				cn, err := OpenChunked(npDir)
				require.NoError(t, err)
				cp, err := OpenChunked(pqDir)
				require.NoError(t, err)
				want, err := tc.read(cn)
				require.NoError(t, err)
				got, err := tc.read(cp)
				require.NoError(t, err)
				require.Equal(t, want, got)
			})
		}
	}
}

// TestParquetChunkErrors: each bad parquet chunk gives one error naming
// the file and what is wrong with it (the column, the row).
func TestParquetChunkErrors(t *testing.T) {
	const n, m = 6, 4
	pairs := [][2]int64{{0, 1}, {1, 2}, {2, 3}, {3, 4}}
	f32 := []float32{1, 2, 3, 4, 5, 6}
	i64 := []int64{0, 1, 0, 1, 0, 1}
	readEdges := func(c *Chunked) error { _, _, err := c.ReadEdgeChunk(0, 0); return err }
	readFeat := func(c *Chunked) error { _, err := c.ReadNodeFeat(0, ChunkFeat, 0); return err }
	readDim := func(c *Chunked) error { _, err := c.NodeFeatDim(0, ChunkFeat, 0); return err }
	readLabel := func(c *Chunked) error { _, err := c.ReadNodeInts(0, ChunkLabel, 0); return err }
	readETime := func(c *Chunked) error { _, err := c.ReadEdgeInts(0, ChunkTime, 0); return err }
	for _, tc := range []struct {
		name string
		key  string // the file under test: "" the edges, else a node_data key or "time@e"
		fr   frame
		// damage rewrites the written file's bytes; nil keeps them.
		damage func([]byte) []byte
		read   func(*Chunked) error
		want   []string
	}{
		{name: "truncated", fr: frame{cols: pairCols(pairs)}, damage: func(b []byte) []byte { return b[:len(b)/2] },
			read: readEdges, want: []string{"e.parquet: not a readable parquet file"}},
		{name: "not parquet", fr: frame{cols: pairCols(pairs)}, damage: func([]byte) []byte { return []byte("\x93NUMPY not this") },
			read: readEdges, want: []string{"e.parquet: not a readable parquet file"}},
		{name: "edges with three columns", fr: frame{cols: append(pairCols(pairs), []int64{0, 0, 0, 0})},
			read: readEdges, want: []string{"e.parquet: shape [4 3], want (4, 2)"}},
		{name: "edges with too few rows", fr: frame{cols: pairCols(pairs[:3])},
			read: readEdges, want: []string{"e.parquet: shape [3 2], want (4, 2) (metadata.json's edge count"}},
		{name: "edges null", fr: frame{cols: pairCols(pairs), nulls: map[[2]int]bool{{2, 1}: true}},
			read: readEdges, want: []string{"e.parquet: column \"1\": row 2 is null"}},
		{name: "edges float", fr: frame{cols: []any{[]float64{0, 1, 2, 3}, []float64{1, 2, 3, 4}}},
			read: readEdges, want: []string{"e.parquet: column \"0\" is DOUBLE: want an integer or bool column"}},
		{name: "edges string", fr: frame{cols: []any{[]string{"0", "1", "2", "3"}, []int64{1, 2, 3, 4}}},
			read: readEdges, want: []string{"e.parquet:", "column \"0\" is STRING: want integers, booleans or floats"}},
		{name: "edges shape disagrees", fr: frame{cols: pairCols(pairs), shape: "(8, 1)"},
			read: readEdges, want: []string{"e.parquet: metadata \"shape\" is (8, 1), the table has 4 rows x 2 columns"}},
		{name: "shape not a tuple", fr: frame{cols: pairCols(pairs), shape: "4x2"},
			read: readEdges, want: []string{"e.parquet: metadata \"shape\": \"4x2\": want a tuple like (1000, 2)"}},
		{name: "uint64 past int64", key: "time@e", fr: frame{cols: []any{[]uint64{1, 1 << 63, 2, 3}}},
			read: readETime, want: []string{"x.parquet: column \"0\": row 1: 9223372036854775808 does not fit int64"}},
		{name: "edge time two columns", key: "time@e", fr: frame{cols: pairCols(pairs)},
			read: readETime, want: []string{"x.parquet: shape [4 2], want (4,) (one value per edge"}},
		{name: "feat ints", key: ChunkFeat, fr: frame{cols: []any{i64, i64}},
			read: readFeat, want: []string{"x.parquet: column \"0\" is INT(64,true): want float32 or float64"}},
		{name: "feat 1-D", key: ChunkFeat, fr: frame{cols: []any{f32}, shape: "(6,)"},
			read: readFeat, want: []string{"x.parquet: shape [6], want (6, dim)"}},
		{name: "feat dim of 1-D", key: ChunkFeat, fr: frame{cols: []any{f32}, shape: "(6,)"},
			read: readDim, want: []string{"x.parquet: shape [6], want (nodes, dim)"}},
		{name: "feat 3-D", key: ChunkFeat, fr: frame{cols: []any{f32, f32, f32, f32}, shape: "(6, 2, 2)"},
			read: readFeat, want: []string{"x.parquet: shape [6 2 2], want (6, dim)"}},
		{name: "feat null", key: ChunkFeat, fr: frame{cols: []any{f32, f32}, nulls: map[[2]int]bool{{5, 0}: true}},
			read: readFeat, want: []string{"x.parquet: column \"0\": row 5 is null"}},
		{name: "label too many rows", key: ChunkLabel, fr: frame{cols: []any{append(i64, 1)}},
			read: readLabel, want: []string{"x.parquet: shape [7 1], want (6,) (one value per node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			node, edge := map[string]string{}, map[string]string{}
			file := filepath.Join(dir, "x.parquet")
			switch {
			case tc.key == "":
				file = filepath.Join(dir, "e.parquet")
			case tc.key == "time@e":
				edge[ChunkTime] = "x.parquet"
			default:
				node[tc.key] = "x.parquet"
			}
			if tc.key != "" {
				writeFrame(t, filepath.Join(dir, "e.parquet"), frame{cols: pairCols(pairs)}, frameWritings[0])
			}
			writeFrame(t, file, tc.fr, frameWritings[0])
			if tc.damage != nil {
				b, err := os.ReadFile(file)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(file, tc.damage(b), 0o644))
			}
			writeChunkedMeta(t, dir, FormatParquet, n, m, "e.parquet", node, edge)
			c, err := OpenChunked(dir)
			require.NoError(t, err)
			err = tc.read(c)
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			require.Equal(t, 1, strings.Count(err.Error(), file), "one error naming the file once: %v", err)
		})
	}
}

// BenchmarkChunkRead reads a 1 M-edge chunk and a 200 k x 32 feature
// chunk from parquet (nullable columns, snappy, as pandas writes them) and
// from numpy: allocations stay per page, not per value.
func BenchmarkChunkRead(b *testing.B) {
	const m, n, dim = 1 << 20, 200_000, 32
	dir := b.TempDir()
	pairs := make([][2]int64, m)
	for i := range pairs {
		pairs[i] = [2]int64{int64(i*7919) % n, int64(i*104729) % n}
	}
	rows := make([][]float32, n)
	for v := range rows {
		rows[v] = make([]float32, dim)
		for j := range rows[v] {
			rows[v][j] = float32(v*dim+j) * 1e-3
		}
	}
	how := frameWriting{name: "pandas", rowGroup: 1 << 20}
	writeFrame(b, filepath.Join(dir, "e.parquet"), frame{cols: pairCols(pairs), shape: fmt.Sprintf("(%d, 2)", m)}, how)
	writeFrame(b, filepath.Join(dir, "f.parquet"), frame{cols: rowCols(rows), shape: fmt.Sprintf("(%d, %d)", n, dim)}, how)
	require.NoError(b, WriteNpy(filepath.Join(dir, "e.npy"), pairs))
	require.NoError(b, WriteNpy(filepath.Join(dir, "f.npy"), rows))
	for _, format := range []string{FormatParquet, FormatNumpy} {
		ext := ".parquet"
		if format == FormatNumpy {
			ext = ".npy"
		}
		b.Run("edges/"+format, func(b *testing.B) {
			b.SetBytes(m * 2 * 8)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := readEdgeArray(ChunkFormat{Name: format}, filepath.Join(dir, "e"+ext), m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("feat/"+format, func(b *testing.B) {
			b.SetBytes(n * dim * 4)
			b.ReportAllocs()
			for b.Loop() {
				a, err := openChunkArray(ChunkFormat{Name: format}, filepath.Join(dir, "f"+ext))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Floats(); err != nil {
					b.Fatal(err)
				}
				a.Close()
			}
		})
	}
}
