package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// refEdgeLine is the obvious strconv-based parser of "src,dst".
func refEdgeLine(line string) (int64, int64, bool) {
	a, b, ok := strings.Cut(line, ",")
	if !ok {
		return 0, 0, false
	}
	u, err1 := strconv.ParseInt(a, 10, 64)
	v, err2 := strconv.ParseInt(b, 10, 64)
	// The fast parser does not accept MinInt64, which no node id can be.
	if err1 != nil || err2 != nil || u == math.MinInt64 || v == math.MinInt64 {
		return 0, 0, false
	}
	return u, v, true
}

func FuzzParseEdgeLine(f *testing.F) {
	for _, s := range []string{"0,1", "12,-3", "+4,5", "1,2,3", "1 2", "", ",", "99999999999999999999,1", "9223372036854775807,0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		u, v, err := parseEdgeLine(line)
		ru, rv, ok := refEdgeLine(string(line))
		if (err == nil) != ok {
			t.Fatalf("parseEdgeLine(%q) err = %v, reference ok = %v", line, err, ok)
		}
		if ok && (u != ru || v != rv) {
			t.Fatalf("parseEdgeLine(%q) = %d,%d, want %d,%d", line, u, v, ru, rv)
		}
	})
}

// refFeatureLine parses with strconv; ok is false when the line is not
// exactly dim finite float32 values.
func refFeatureLine(line string, dim int) ([]float32, bool) {
	fields := strings.Split(line, ",")
	if len(fields) != dim {
		return nil, false
	}
	out := make([]float32, dim)
	for i, s := range fields {
		x, err := strconv.ParseFloat(s, 32)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		out[i] = float32(x)
	}
	return out, true
}

func FuzzParseFeatureLine(f *testing.F) {
	for _, s := range []struct {
		line string
		dim  uint8
	}{
		{"0,1,0", 3}, {"1.5,-2.25,3e2", 3}, {"0.1234,1e-10,16777216", 3}, {"16777217,1e11", 2},
		{"NaN,1", 2}, {"1,,2", 3}, {".5,5.", 2}, {"-0", 1}, {"0x1p-2", 1}, {"1e", 1}, {"3.4e38,1e39", 2},
	} {
		f.Add([]byte(s.line), s.dim)
	}
	f.Fuzz(func(t *testing.T, line []byte, dim uint8) {
		if dim == 0 {
			return
		}
		out := make([]float32, dim)
		err := parseFeatureLine(line, out)
		want, ok := refFeatureLine(string(line), int(dim))
		if (err == nil) != ok {
			t.Fatalf("parseFeatureLine(%q, dim %d) err = %v, reference ok = %v", line, dim, err, ok)
		}
		if ok {
			for i := range want {
				if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
					t.Fatalf("parseFeatureLine(%q) value %d = %v, strconv says %v", line, i+1, out[i], want[i])
				}
			}
		}
	})
}

// FuzzScanChunks checks the parallel line splitter: whatever the text,
// chunk size and worker count, every line reaches fn exactly once with its
// correct index, and the count matches.
func FuzzScanChunks(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), uint8(1), uint8(1))
	f.Add([]byte("0,1\r\n1,2\r\n"), uint8(3), uint8(2))
	f.Add([]byte("no newline at all"), uint8(2), uint8(3))
	f.Add([]byte("\n\n\n"), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, text []byte, size, workers uint8) {
		want := strings.Split(string(text), "\n")
		if len(text) == 0 || text[len(text)-1] == '\n' {
			want = want[:len(want)-1]
		}
		for i := range want {
			want[i] = strings.TrimSuffix(want[i], "\r")
		}
		got := make([]string, len(want))
		seen := make([]bool, len(want))
		var mu sync.Mutex
		lines, err := scanChunksSize(bytes.NewReader(text), int(workers%4)+1, int(size%16)+1, func(c *textChunk) error {
			return forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
				mu.Lock()
				defer mu.Unlock()
				if idx < 0 || idx >= int64(len(want)) || seen[idx] {
					return errors.New("bad or repeated line index " + strconv.FormatInt(idx, 10))
				}
				seen[idx] = true
				got[idx] = string(line)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if lines != int64(len(want)) {
			t.Fatalf("%d lines, want %d", lines, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("line %d = %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// FuzzReadEdgeFile runs the whole edge-file path (gzip, chunking, parsing,
// range checks) on arbitrary text: it must either succeed with exactly the
// reference result or fail with an error naming the file.
func FuzzReadEdgeFile(f *testing.F) {
	f.Add([]byte("0,1\n1,2\n"), uint8(3))
	f.Add([]byte("0,1\n1,x\n"), uint8(3))
	f.Add([]byte("0,5\n"), uint8(5))
	f.Add([]byte("0,1"), uint8(2))
	f.Fuzz(func(t *testing.T, text []byte, n uint8) {
		if n == 0 {
			return
		}
		path := filepath.Join(t.TempDir(), "edge.csv.gz")
		writeGz(t, path, string(text))
		lines := strings.Split(string(text), "\n")
		if len(text) == 0 || text[len(text)-1] == '\n' {
			lines = lines[:len(lines)-1]
		}
		m := int64(len(lines))
		src, dst, err := readEdges(path, int64(n), m, 2)
		ok := true
		for i, l := range lines {
			u, v, good := refEdgeLine(strings.TrimSuffix(l, "\r"))
			if !good || u < 0 || v < 0 || u >= int64(n) || v >= int64(n) {
				ok = false
				break
			}
			if err == nil && (src[i] != u || dst[i] != v) {
				t.Fatalf("line %d: got %d,%d want %d,%d", i+1, src[i], dst[i], u, v)
			}
		}
		if (err == nil) != ok {
			t.Fatalf("err = %v, reference ok = %v", err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

// TestFuzzCorpusPresent keeps the committed seed corpora from going missing.
func TestFuzzCorpusPresent(t *testing.T) {
	for _, name := range []string{"FuzzParseEdgeLine", "FuzzParseFeatureLine", "FuzzScanChunks", "FuzzReadEdgeFile"} {
		ents, err := os.ReadDir(filepath.Join("testdata", "fuzz", name))
		if err != nil || len(ents) == 0 {
			t.Errorf("seed corpus testdata/fuzz/%s missing or empty (%v)", name, err)
		}
	}
}

// FuzzParquetFile feeds the parquet chunk reader damaged files (valid
// DataFrame-shaped files as seeds, mutated): it must never panic, and must
// either read as many values as the shape it reports or fail with an error
// naming the file.
func FuzzParquetFile(f *testing.F) {
	for _, how := range frameWritings {
		for _, fr := range []frame{
			{cols: []any{[]int64{0, 1, 2, 3, 4}, []int64{5, 6, 7, 8, 9}}, shape: "(5, 2)"},
			{cols: []any{[]float32{1, 2, 3}, []float64{4, 5, 6}, []bool{true, false, true}}},
			{cols: []any{[]int8{-1, 0, 1, 2}, []uint32{1, 2, 3, 1 << 31}}, nulls: map[[2]int]bool{{1, 1}: true}},
		} {
			f.Add(frameBytes(f, fr, how))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "x.parquet"
		a, err := newParquetArray(path, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		defer a.Close()
		size := int64(1)
		for _, d := range a.Shape() {
			size *= int64(d)
		}
		if size > 1<<16 {
			return // a footer may claim any row count; the callers check it against metadata.json first
		}
		ints, ierr := a.Ints()
		floats, ferr := a.Floats()
		for _, r := range []struct {
			n   int
			err error
		}{{len(ints), ierr}, {len(floats), ferr}} {
			if r.err != nil && !strings.Contains(r.err.Error(), path) {
				t.Fatalf("error %q does not name the file", r.err)
			}
			if r.err == nil && int64(r.n) != size {
				t.Fatalf("%d values for shape %v", r.n, a.Shape())
			}
		}
	})
}

// FuzzParquetRoundTrip writes arbitrary int64 tables (a column count, the
// values, maybe one null) as DataFrame-shaped parquet and reads them back:
// the same values row-major, or for a null the error naming its row and
// column.
func FuzzParquetRoundTrip(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint8(2), int16(-1), uint8(0))
	f.Add([]byte{255, 0, 255, 0, 1, 1, 1, 1}, uint8(1), int16(3), uint8(1))
	f.Add(make([]byte, 8*24), uint8(12), int16(5), uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, ncols uint8, null int16, how uint8) {
		cols := int(ncols%16) + 1
		vals := make([]int64, len(raw)/8)
		for i := range vals {
			vals[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		rows := len(vals) / cols
		vals = vals[:rows*cols]
		fr := frame{cols: make([]any, cols)}
		for j := range cols {
			c := make([]int64, rows)
			for i := range c {
				c[i] = vals[i*cols+j]
			}
			fr.cols[j] = c
		}
		wr := frameWritings[int(how)%len(frameWritings)]
		nullRow, nullCol := -1, 0
		if null >= 0 && rows > 0 && !wr.required {
			nullRow, nullCol = int(null)%rows, int(null)%cols
			fr.nulls = map[[2]int]bool{{nullRow, nullCol}: true}
		}
		const path = "x.parquet"
		data := frameBytes(t, fr, wr)
		a, err := newParquetArray(path, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if !slices.Equal(a.Shape(), []int{rows, cols}) {
			t.Fatalf("shape %v, want [%d %d]", a.Shape(), rows, cols)
		}
		got, err := a.Ints()
		if nullRow >= 0 {
			want := fmt.Sprintf("%s: column \"%d\": row %d is null", path, nullCol, nullRow)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, vals) {
			t.Fatalf("read %v, wrote %v", got, vals)
		}
	})
}
