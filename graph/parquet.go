package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// DistDGL writes an array as parquet through pandas: pd.DataFrame(arr)
// becomes a table with one column per array column ("0", "1", ...) and one
// row per array row, and the array's shape goes into the key-value
// metadata as the Python tuple str(arr.shape). Its reader takes the columns
// in file order and reshapes by "shape" when present (2-D rows x columns
// otherwise); a parquetArray reads the same files the same way.

// parquetShapeKey is the key-value metadata entry holding the array shape.
const parquetShapeKey = "shape"

// pandasIndexPrefix names the column pandas writes for a DataFrame index
// other than the default range; DataFrame.to_numpy, as DistDGL calls it,
// leaves it out, so the reader does too.
const pandasIndexPrefix = "__index_level_"

// parquetArray is an opened parquet chunk: the footer read, the columns
// checked, the data not yet read.
type parquetArray struct {
	path  string
	r     io.ReaderAt
	close func() error
	pf    *parquet.File
	cols  []parquetColumn
	shape []int
}

// parquetColumn is one array column: its leaf index in the file and how
// its physical values read.
type parquetColumn struct {
	name     string
	leaf     int
	kind     parquet.Kind
	unsigned bool
	typ      string // for messages: the parquet type as the schema prints it
}

func openParquetArray(path string) (*parquetArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read chunk: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read chunk: %w", err)
	}
	a, err := newParquetArray(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	a.close = f.Close
	return a, nil
}

// newParquetArray reads the footer of the parquet file of size bytes in r;
// path names it in errors.
func newParquetArray(path string, r io.ReaderAt, size int64) (*parquetArray, error) {
	a := &parquetArray{path: path, r: r, close: func() error { return nil }}
	if err := a.open(size); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

func (a *parquetArray) open(size int64) (err error) {
	// The decoder trusts the footer's offsets and lengths; a damaged file
	// must give an error naming it, not take the process down.
	defer recoverParquet(&err)
	if err := checkParquetFooter(a.r, size); err != nil {
		return err
	}
	a.pf, err = parquet.OpenFile(a.r, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true),
		parquet.ReadBufferSize(1<<20))
	if err != nil {
		return fmt.Errorf("not a readable parquet file: %w", err)
	}
	leaf := 0
	for _, fld := range a.pf.Schema().Fields() {
		if !fld.Leaf() || fld.Repeated() {
			return fmt.Errorf("column %q is nested or repeated: want one number per row in each column", fld.Name())
		}
		c := parquetColumn{name: fld.Name(), leaf: leaf, kind: fld.Type().Kind(), typ: fld.Type().String()}
		leaf++
		if strings.HasPrefix(c.name, pandasIndexPrefix) {
			continue
		}
		// pandas marks int8/int16 and the unsigned widths with an integer
		// logical type; any other (timestamps, decimals, strings) is no
		// number mpignn reads.
		if lt := fld.Type().LogicalType(); lt != nil && lt.Value != nil {
			it, ok := lt.Value.(*format.IntType)
			if !ok || (c.kind != parquet.Int32 && c.kind != parquet.Int64) {
				return fmt.Errorf("column %q is %s: want integers, booleans or floats", c.name, c.typ)
			}
			c.unsigned = !it.IsSigned
		}
		switch c.kind {
		case parquet.Boolean, parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
		default:
			return fmt.Errorf("column %q is %s: want integers, booleans or floats", c.name, c.typ)
		}
		a.cols = append(a.cols, c)
	}
	if len(a.cols) == 0 {
		return errors.New("no data columns")
	}
	rows := a.pf.NumRows()
	if rows < 0 || rows > math.MaxInt/int64(len(a.cols)) {
		return fmt.Errorf("footer says %d rows", rows)
	}
	var inGroups int64
	for _, rg := range a.pf.RowGroups() {
		inGroups += rg.NumRows()
	}
	if inGroups != rows {
		return fmt.Errorf("row groups hold %d rows, the footer says %d", inGroups, rows)
	}
	for g, rg := range a.pf.Metadata().RowGroups {
		for _, c := range a.cols {
			if c.leaf >= len(rg.Columns) {
				return fmt.Errorf("row group %d has %d columns, the schema %d", g, len(rg.Columns), c.leaf+1)
			}
			if err := checkPageHeaders(a.r, size, &rg.Columns[c.leaf].MetaData); err != nil {
				return fmt.Errorf("column %q, row group %d: %w", c.name, g, err)
			}
		}
	}
	a.shape = []int{int(rows), len(a.cols)}
	if s, ok := a.pf.Lookup(parquetShapeKey); ok {
		sh, err := parseShapeTuple(s)
		if err != nil {
			return fmt.Errorf("metadata %q: %w", parquetShapeKey, err)
		}
		n := int64(1)
		for _, d := range sh[1:] {
			if n = n * int64(d); n > int64(len(a.cols)) {
				break // and cannot overflow
			}
		}
		if len(sh) == 0 || int64(sh[0]) != rows || n != int64(len(a.cols)) {
			return fmt.Errorf("metadata %q is %s, the table has %d rows x %d columns", parquetShapeKey, s, rows, len(a.cols))
		}
		a.shape = sh
	}
	return nil
}

// checkParquetFooter checks the file's tail: the magic and a footer length
// that fits in the file. parquet-go allocates the length it reads there
// before it looks further, up to 4 GiB for a damaged file.
func checkParquetFooter(r io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("not a readable parquet file: %d bytes", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return fmt.Errorf("read footer: %w", err)
	}
	if string(tail[4:]) != "PAR1" {
		return fmt.Errorf("not a readable parquet file: tail %q, want the magic PAR1", tail[4:])
	}
	if n := int64(binary.LittleEndian.Uint32(tail[:4])); n > size-12 {
		return fmt.Errorf("not a readable parquet file: footer of %d bytes in a file of %d", n, size)
	}
	return nil
}

// A numeric column's page header holds sizes, counts and min/max
// statistics of a few bytes each: it is read in pageHeaderRead bytes, or
// in maxPageHeader when that is not enough.
const (
	pageHeaderRead = 1 << 10
	maxPageHeader  = 64 << 10
)

// checkPageHeaders walks the page headers of one column chunk and checks
// what parquet-go trusts: each page lies within the chunk and inflates to
// no more than its values can take (8 bytes each, with their levels).
// parquet-go allocates both sizes before it reads a byte of the page, up
// to 2 GiB each for a damaged header.
func checkPageHeaders(r io.ReaderAt, size int64, md *format.ColumnMetaData) error {
	start := md.DataPageOffset
	if md.DictionaryPageOffset != 0 {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	if start < 4 || md.TotalCompressedSize < 0 || end > size-8 || end < start {
		return fmt.Errorf("pages at bytes %d..%d, outside the file's %d", start, end, size)
	}
	buf := make([]byte, min(maxPageHeader, end-start))
	for pos := start; pos < end; {
		h, n, err := readPageHeader(r, pos, buf[:min(pageHeaderRead, int64(len(buf)), end-pos)])
		if err != nil && int64(len(buf)) > pageHeaderRead && end-pos > pageHeaderRead {
			h, n, err = readPageHeader(r, pos, buf[:min(int64(len(buf)), end-pos)])
		}
		if err != nil {
			return fmt.Errorf("page header at byte %d: %w", pos, err)
		}
		pos += n
		var values int64
		switch {
		case h.DataPageHeader.Valid:
			values = int64(h.DataPageHeader.V.NumValues)
		case h.DataPageHeaderV2.Valid:
			values = int64(h.DataPageHeaderV2.V.NumValues)
		case h.DictionaryPageHeader.Valid:
			values = int64(h.DictionaryPageHeader.V.NumValues)
		}
		if h.CompressedPageSize < 0 || int64(h.CompressedPageSize) > end-pos {
			return fmt.Errorf("page at byte %d: %d bytes, %d left in the column chunk", pos, h.CompressedPageSize, end-pos)
		}
		if values < 0 || values > md.NumValues || int64(h.UncompressedPageSize) > 16*values+4096 || h.UncompressedPageSize < 0 {
			return fmt.Errorf("page at byte %d: %d values in %d bytes (the column chunk holds %d values)", pos, values, h.UncompressedPageSize, md.NumValues)
		}
		pos += int64(h.CompressedPageSize)
	}
	return nil
}

// readPageHeader decodes the page header at pos from the len(buf) bytes
// there and returns its length.
func readPageHeader(r io.ReaderAt, pos int64, buf []byte) (*format.PageHeader, int64, error) {
	if _, err := r.ReadAt(buf, pos); err != nil {
		return nil, 0, err
	}
	br := bytes.NewReader(buf)
	var proto thrift.CompactProtocol
	h := new(format.PageHeader)
	if err := thrift.NewDecoder(proto.NewReader(br)).Decode(h); err != nil {
		return nil, 0, err
	}
	return h, int64(len(buf) - br.Len()), nil
}

// recoverParquet turns a panic in the parquet decoder into an error.
func recoverParquet(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("damaged parquet file: %v", r)
	}
}

// parseShapeTuple parses Python's str of a shape tuple: "(1000, 2)",
// "(1000,)".
func parseShapeTuple(s string) ([]int, error) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '(' || t[len(t)-1] != ')' {
		return nil, fmt.Errorf("%q: want a tuple like (1000, 2)", s)
	}
	parts := strings.Split(t[1:len(t)-1], ",")
	if len(parts) > 1 && strings.TrimSpace(parts[len(parts)-1]) == "" {
		parts = parts[:len(parts)-1]
	}
	sh := make([]int, len(parts))
	for i, p := range parts {
		d, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q: want a tuple of non-negative integers", s)
		}
		sh[i] = d
	}
	return sh, nil
}

func (a *parquetArray) Shape() []int { return a.shape }

func (a *parquetArray) Close() error { return a.close() }

// Ints reads the array row-major as int64: integer columns of any width
// and sign, booleans as 0/1.
func (a *parquetArray) Ints() ([]int64, error) {
	for _, c := range a.cols {
		if c.kind == parquet.Float || c.kind == parquet.Double {
			return nil, fmt.Errorf("%s: column %q is %s: want an integer or bool column", a.path, c.name, c.typ)
		}
	}
	out := make([]int64, len(a.cols)*int(a.pf.NumRows()))
	err := a.read(func(c parquetColumn, vs []parquet.Value, row int64, at, stride int) error {
		for i, v := range vs {
			var x int64
			switch {
			case c.kind == parquet.Boolean:
				if v.Boolean() {
					x = 1
				}
			case c.kind == parquet.Int32 && c.unsigned:
				x = int64(v.Uint32())
			case c.kind == parquet.Int32:
				x = int64(v.Int32())
			case c.unsigned:
				if x = int64(v.Uint64()); x < 0 {
					return fmt.Errorf("row %d: %d does not fit int64", row+int64(i), v.Uint64())
				}
			default:
				x = v.Int64()
			}
			out[at+i*stride] = x
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Floats reads the array row-major as float32 (float64 columns rounded).
func (a *parquetArray) Floats() ([]float32, error) {
	for _, c := range a.cols {
		if c.kind != parquet.Float && c.kind != parquet.Double {
			return nil, fmt.Errorf("%s: column %q is %s: want float32 or float64", a.path, c.name, c.typ)
		}
	}
	out := make([]float32, len(a.cols)*int(a.pf.NumRows()))
	err := a.read(func(c parquetColumn, vs []parquet.Value, _ int64, at, stride int) error {
		if c.kind == parquet.Float {
			for i, v := range vs {
				out[at+i*stride] = v.Float()
			}
		} else {
			for i, v := range vs {
				out[at+i*stride] = float32(v.Double())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// read walks every column, row group by row group and page by page, and
// hands put runs of non-null values with the row of their first one, its
// index in the row-major output and the distance between rows. The value buffer is
// reused: no allocation per value, whatever the chunk's size.
func (a *parquetArray) read(put func(c parquetColumn, vs []parquet.Value, row int64, at, stride int) error) (err error) {
	defer recoverParquet(&err)
	buf := make([]parquet.Value, 4096)
	stride := len(a.cols)
	for j, c := range a.cols {
		var row int64
		for _, rg := range a.pf.RowGroups() {
			end := row + rg.NumRows()
			if err := readColumnChunk(rg.ColumnChunks()[c.leaf], buf, func(vs []parquet.Value) error {
				if int64(len(vs)) > end-row {
					return fmt.Errorf("more values than its row group's %d rows", rg.NumRows())
				}
				for i, v := range vs {
					if v.IsNull() {
						return fmt.Errorf("row %d is null (nulls are not supported)", row+int64(i))
					}
				}
				if err := put(c, vs, row, int(row)*stride+j, stride); err != nil {
					return err
				}
				row += int64(len(vs))
				return nil
			}); err != nil {
				return fmt.Errorf("%s: column %q: %w", a.path, c.name, err)
			}
			if row != end {
				return fmt.Errorf("%s: column %q: %d values in a row group of %d rows", a.path, c.name, row-(end-rg.NumRows()), rg.NumRows())
			}
		}
	}
	return nil
}

func readColumnChunk(cc parquet.ColumnChunk, buf []parquet.Value, put func([]parquet.Value) error) error {
	pages := cc.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = readPage(p, buf, put)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}

func readPage(p parquet.Page, buf []parquet.Value, put func([]parquet.Value) error) error {
	vr := p.Values()
	for {
		n, err := vr.ReadValues(buf)
		if n > 0 {
			if perr := put(buf[:n]); perr != nil {
				return perr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
