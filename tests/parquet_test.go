package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// TestChunkedParquetPartition: a chunked dataset written once as numpy
// (`gen --format chunked`) and once with every chunk in parquet, laid out
// as DistDGL's pandas writer does, partitions under mpirun to the same
// bytes on every rank count.
func TestChunkedParquetPartition(t *testing.T) {
	bin, err := h.Mpignn()
	mustBuild(t, bin, err)
	dir := t.TempDir()
	np, pq := filepath.Join(dir, "np"), filepath.Join(dir, "pq")
	mustRun(t, bin, genChunkedArgs(np)...)
	chunkedToParquet(t, np, pq)
	for _, n := range h.Ranks {
		outs := map[string]string{}
		for name, data := range map[string]string{"numpy": np, "parquet": pq} {
			out := filepath.Join(dir, name+strconv.Itoa(n))
			args := []string{bin, "partition", "--data", data, "--parts", strconv.Itoa(n), "--method", "random", "--seed", "4", "--out", out}
			r := h.MPI(Job{Ranks: n, Args: args, Timeout: 2 * time.Minute})
			require.NoError(t, r.Err, "np=%d %s:\n%s", n, name, tail(r.Output, 20))
			outs[name] = out
		}
		files := treeFiles(t, outs["numpy"])
		require.ElementsMatch(t, files, treeFiles(t, outs["parquet"]), "np=%d", n)
		for _, f := range files {
			a, _ := os.ReadFile(filepath.Join(outs["numpy"], f))
			b, err := os.ReadFile(filepath.Join(outs["parquet"], f))
			require.NoError(t, err)
			require.True(t, bytes.Equal(a, b), "np=%d: %s differs between the numpy and parquet inputs", n, f)
		}
	}
}

// chunkedToParquet rewrites the chunked dataset src as dst with every
// chunk (edges, node and edge data) in parquet: one required column per
// array column, named "0", "1", ..., and the numpy shape in the "shape"
// metadata.
func chunkedToParquet(t *testing.T, src, dst string) {
	t.Helper()
	c, err := graph.OpenChunked(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dst, 0o755))
	meta := c.Meta
	rename := func(files *graph.ChunkFiles, write func(k int, path string)) {
		files.Format = graph.ChunkFormat{Name: graph.FormatParquet}
		for k, f := range files.Data {
			files.Data[k] = strings.ReplaceAll(strings.TrimSuffix(f, filepath.Ext(f)), string(filepath.Separator), "_") + ".parquet"
			write(k, filepath.Join(dst, files.Data[k]))
		}
	}
	for e, et := range meta.EdgeType {
		files := meta.Edges[et]
		files.Data = append([]string(nil), files.Data...)
		rename(&files, func(k int, path string) {
			s, d, err := c.ReadEdgeChunk(e, k)
			require.NoError(t, err)
			writeParquetTable(t, path, []any{s, d}, fmt.Sprintf("(%d, 2)", len(s)))
		})
		meta.Edges[et] = files
		for key, files := range meta.EdgeData[et] {
			files.Data = append([]string(nil), files.Data...)
			rename(&files, func(k int, path string) {
				xs, err := c.ReadEdgeInts(e, key, k)
				require.NoError(t, err)
				writeParquetTable(t, path, []any{xs}, fmt.Sprintf("(%d,)", len(xs)))
			})
			meta.EdgeData[et][key] = files
		}
	}
	for ti, typ := range meta.NodeType {
		for key, files := range meta.NodeData[typ] {
			files.Data = append([]string(nil), files.Data...)
			rename(&files, func(k int, path string) {
				if key == graph.ChunkFeat {
					f, err := c.ReadNodeFeat(ti, key, k)
					require.NoError(t, err)
					cols := make([]any, f.Dim)
					for j := range cols {
						col := make([]float32, len(f.Data)/f.Dim)
						for i := range col {
							col[i] = f.Data[i*f.Dim+j]
						}
						cols[j] = col
					}
					writeParquetTable(t, path, cols, fmt.Sprintf("(%d, %d)", len(f.Data)/f.Dim, f.Dim))
					return
				}
				xs, err := c.ReadNodeInts(ti, key, k)
				require.NoError(t, err)
				writeParquetTable(t, path, []any{xs}, fmt.Sprintf("(%d,)", len(xs)))
			})
			meta.NodeData[typ][key] = files
		}
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dst, graph.ChunkedMetaFile), b, 0o644))
}

// writeParquetTable writes cols ([]int64 or []float32 each, at most ten:
// parquet.Group orders its columns by name) as required columns "0", ....
func writeParquetTable(t *testing.T, path string, cols []any, shape string) {
	t.Helper()
	require.LessOrEqual(t, len(cols), 10)
	group := parquet.Group{}
	for j, col := range cols {
		typ := parquet.Type(parquet.Int64Type)
		if _, ok := col.([]float32); ok {
			typ = parquet.FloatType
		}
		group[strconv.Itoa(j)] = parquet.Leaf(typ)
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	w := parquet.NewWriter(f, parquet.NewSchema("frame", group), parquet.KeyValueMetadata("shape", shape))
	var rows []parquet.Row
	for i := range lenOf(cols[0]) {
		row := make(parquet.Row, len(cols))
		for j, col := range cols {
			switch c := col.(type) {
			case []int64:
				row[j] = parquet.Int64Value(c[i]).Level(0, 0, j)
			case []float32:
				row[j] = parquet.FloatValue(c[i]).Level(0, 0, j)
			}
		}
		rows = append(rows, row)
	}
	_, err = w.WriteRows(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

func lenOf(col any) int {
	switch c := col.(type) {
	case []int64:
		return len(c)
	case []float32:
		return len(c)
	}
	return 0
}
