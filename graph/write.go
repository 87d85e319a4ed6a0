package graph

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/klauspost/compress/gzip"

	"mpignn/internal/osx"
	"mpignn/internal/tempout"
	"mpignn/internal/testhold"
)

// WriteOGB writes d in the OGB raw layout under dir: the edge lines
// src[i],dst[i] (d.In is not used), d.Feat (no node-feat.csv.gz when nil,
// as ogbn-proteins has none), d.EdgeFeat as edge-feat.csv.gz (then one row
// per edge line, row i for line i, not aligned with d.In), d.Labels, and
// every split in d.Splits as split/<name>/. dir must not exist or be an empty directory; the
// files are written to a temporary sibling directory that is renamed to dir
// at the end, so a failure leaves nothing half-written.
//
// Floats are written in the shortest form that parses back to the same
// float32, so ReadOGB returns exactly d.Feat.
func WriteOGB(dir string, d *Dataset, src, dst []int64) error {
	if len(src) != len(dst) {
		return fmt.Errorf("write %s: %d sources but %d destinations", dir, len(src), len(dst))
	}
	if err := checkWritable(dir, d, int64(len(src))); err != nil {
		return err
	}
	for i := range src {
		if src[i] < 0 || src[i] >= d.NumNodes || dst[i] < 0 || dst[i] >= d.NumNodes {
			return fmt.Errorf("write %s: edge %d (%d,%d) outside [0,%d)", dir, i, src[i], dst[i], d.NumNodes)
		}
	}
	return writeOGB(dir, d, int64(len(src)), func(i int64) (int64, int64) { return src[i], dst[i] }, nil)
}

// writeOGB writes d's features, labels and splits with the m edge lines
// edge(0..m-1) under dir, atomically. extra, if not nil, may add files to
// the temporary directory before it is renamed.
func writeOGB(dir string, d *Dataset, m int64, edge func(i int64) (int64, int64), extra func(tmp string) error) error {
	if err := checkWritable(dir, d, m); err != nil {
		return err
	}
	return writeDirAtomic(dir, func(tmp string) error {
		raw := filepath.Join(tmp, "raw")
		if err := os.MkdirAll(raw, 0o755); err != nil {
			return err
		}
		workers := runtime.GOMAXPROCS(0)
		if err := writeSmallGzip(filepath.Join(raw, "num-node-list.csv.gz"), strconv.FormatInt(d.NumNodes, 10)+"\n"); err != nil {
			return err
		}
		if err := writeSmallGzip(filepath.Join(raw, "num-edge-list.csv.gz"), strconv.FormatInt(m, 10)+"\n"); err != nil {
			return err
		}
		const edgeRows = 1 << 20
		err := writeGzipChunks(filepath.Join(raw, "edge.csv.gz"), workers, chunksOf(m, edgeRows), func(c int, b []byte) []byte {
			for i := int64(c) * edgeRows; i < min(m, int64(c+1)*edgeRows); i++ {
				u, v := edge(i)
				b = strconv.AppendInt(b, u, 10)
				b = append(b, ',')
				b = strconv.AppendInt(b, v, 10)
				b = append(b, '\n')
			}
			return b
		})
		if err != nil {
			return err
		}
		labelPath := filepath.Join(raw, "node-label.csv.gz")
		if d.Targets != nil {
			// One row of targets per node; NaN (unlabelled) is written
			// "NaN", which the reader takes back as NaN.
			err = writeFeatures(labelPath, d.Targets, workers)
		} else {
			err = writeLabels(labelPath, d.Labels, workers)
		}
		if err != nil {
			return err
		}
		if d.Feat != nil {
			if err := writeFeatures(filepath.Join(raw, "node-feat.csv.gz"), d.Feat, workers); err != nil {
				return err
			}
		}
		if d.EdgeFeat != nil {
			if err := writeFeatures(filepath.Join(raw, EdgeFeatFile), d.EdgeFeat, workers); err != nil {
				return err
			}
		}
		if d.EdgeTargets != nil {
			// One row per edge line; NaN (unlabelled) is written "NaN".
			if err := writeFeatures(filepath.Join(raw, EdgeLabelFile), d.EdgeTargets.Values, workers); err != nil {
				return err
			}
		}
		for name, s := range d.Splits {
			sd := filepath.Join(tmp, "split", name)
			if err := os.MkdirAll(sd, 0o755); err != nil {
				return err
			}
			for _, p := range []struct {
				file string
				ids  []int64
			}{{"train.csv.gz", s.Train}, {"valid.csv.gz", s.Valid}, {"test.csv.gz", s.Test}} {
				if err := writeIDs(filepath.Join(sd, p.file), p.ids, d.NumNodes, workers); err != nil {
					return fmt.Errorf("split %q: %w", name, err)
				}
			}
		}
		if extra != nil {
			return extra(tmp)
		}
		return nil
	})
}

// checkWritable refuses what the writers cannot write: node features that
// are not one row of positive width per node (none is fine), edge features
// that are not one row per edge line, labels that are not one per node.
func checkWritable(dir string, d *Dataset, lines int64) error {
	if d.Feat != nil && (d.Feat.Dim <= 0 || d.Feat.NumRows() != d.NumNodes) {
		return fmt.Errorf("write %s: need a feature row of positive dimension per node", dir)
	}
	if d.EdgeFeat != nil && (d.EdgeFeat.Dim <= 0 || d.EdgeFeat.NumRows() != lines) {
		return fmt.Errorf("write %s: %d edge feature rows of width %d, want one of positive width per edge line (%d)", dir, d.EdgeFeat.NumRows(), d.EdgeFeat.Dim, lines)
	}
	if e := d.EdgeTargets; e != nil && (e.Values == nil || e.Values.Dim <= 0 || e.Values.NumRows() != lines) {
		return fmt.Errorf("write %s: edge labels do not hold one row of positive width per edge line (%d)", dir, lines)
	}
	return checkWriteLabels(dir, d)
}

// WriteOGBFromDataset writes d with one edge line "u,v" per stored in-edge
// u->v of d.In (so an undirected graph stored symmetrically gets both
// directions as lines), and d.EdgeFeat's rows, aligned with d.In, as the
// lines' edge features. ReadOGB(dir, ReadOptions{}) — no Undirected, no
// DropSelfLoops, no Dedup — returns d exactly (given sorted rows, as every
// Dataset of this package has); for a symmetric d.In without duplicates,
// UndirectedOptions() does too.
func WriteOGBFromDataset(dir string, d *Dataset) error {
	if d.In == nil || d.In.NumRows() != d.NumNodes {
		return fmt.Errorf("write %s: need an in-adjacency with one row per node", dir)
	}
	m := d.In.NumEdges()
	src := make([]int64, m)
	dst := make([]int64, m)
	for v := int64(0); v < d.NumNodes; v++ {
		for i := d.In.Indptr[v]; i < d.In.Indptr[v+1]; i++ {
			src[i], dst[i] = d.In.Indices[i], v
		}
	}
	return WriteOGB(dir, d, src, dst)
}

// appendFloat32 formats x so that parseFloat32 gives back the same bits.
// Values on a 1e-4 grid (the generator's, and 0/1 bag-of-words) take a fast
// exact path: x == float32(k)/1e4 with |k| <= 2^24 means the decimal k*1e-4
// parses to x through the same single correctly rounded division.
func appendFloat32(b []byte, x float32) []byte {
	k := math.Round(float64(x) * 1e4)
	if k >= -(1<<24) && k <= 1<<24 && float32(k)/1e4 == x && !(x == 0 && math.Signbit(float64(x))) {
		ki := int64(k)
		if ki < 0 {
			b = append(b, '-')
			ki = -ki
		}
		ip, fp := ki/10000, ki%10000
		b = strconv.AppendInt(b, ip, 10)
		if fp != 0 {
			var frac [5]byte
			frac[0] = '.'
			for i := 4; i >= 1; i-- {
				frac[i] = byte('0' + fp%10)
				fp /= 10
			}
			e := 5
			for frac[e-1] == '0' {
				e--
			}
			b = append(b, frac[:e]...)
		}
		return b
	}
	return strconv.AppendFloat(b, float64(x), 'g', -1, 32)
}

// writeFeatures writes one comma-separated row per row of f.
func writeFeatures(path string, f *Features, workers int) error {
	// About 4 MB of text per chunk whatever the dimension.
	n := f.NumRows()
	rowsPer := max(1, int64(1<<20)/int64(f.Dim))
	return writeGzipChunks(path, workers, chunksOf(n, rowsPer), func(c int, b []byte) []byte {
		for v := int64(c) * rowsPer; v < min(n, int64(c+1)*rowsPer); v++ {
			for k, x := range f.Row(v) {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendFloat32(b, x)
			}
			b = append(b, '\n')
		}
		return b
	})
}

// checkWriteLabels checks that d has a label or a row of targets per node.
func checkWriteLabels(dir string, d *Dataset) error {
	if d.Targets != nil {
		if err := CheckTargets(d.Targets, d.NumNodes); err != nil {
			return fmt.Errorf("write %s: %w", dir, err)
		}
		return nil
	}
	if int64(len(d.Labels)) != d.NumNodes {
		return fmt.Errorf("write %s: %d labels for %d nodes", dir, len(d.Labels), d.NumNodes)
	}
	return nil
}

func writeLabels(path string, labels []int32, workers int) error {
	const per = 1 << 20
	n := int64(len(labels))
	return writeGzipChunks(path, workers, chunksOf(n, per), func(c int, b []byte) []byte {
		for i := int64(c) * per; i < min(n, int64(c+1)*per); i++ {
			b = strconv.AppendInt(b, int64(labels[i]), 10)
			b = append(b, '\n')
		}
		return b
	})
}

func writeIDs(path string, ids []int64, n int64, workers int) error {
	for i, v := range ids {
		if v < 0 || v >= n {
			return fmt.Errorf("%s: id %d at position %d outside [0,%d)", path, v, i, n)
		}
	}
	const per = 1 << 20
	m := int64(len(ids))
	return writeGzipChunks(path, workers, chunksOf(m, per), func(c int, b []byte) []byte {
		for i := int64(c) * per; i < min(m, int64(c+1)*per); i++ {
			b = strconv.AppendInt(b, ids[i], 10)
			b = append(b, '\n')
		}
		return b
	})
}

func chunksOf(n, per int64) int { return int((n + per - 1) / per) }

func writeSmallGzip(path, text string) error {
	return writeGzipChunks(path, 1, 1, func(_ int, b []byte) []byte { return append(b, text...) })
}

// writeGzipChunks writes a gzip file made of nChunks concatenated gzip
// members: chunk c's text comes from fill(c, buf) and is formatted and
// compressed on one of `workers` goroutines, while a single writer puts the
// members in order. At most 2*workers chunks are in memory at once. Gzip
// readers (klauspost's and the standard library's) read all members as one
// stream. A file with zero chunks still gets one empty member.
func writeGzipChunks(path string, workers, nChunks int, fill func(c int, buf []byte) []byte) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if nChunks == 0 {
		zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
		if err := zw.Close(); err != nil {
			f.Close()
			return err
		}
		if err := bw.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	results := make([]chan []byte, nChunks)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	tokens := make(chan struct{}, 2*workers)
	jobs := make(chan int)
	go func() {
		for c := 0; c < nChunks; c++ {
			tokens <- struct{}{}
			jobs <- c
		}
		close(jobs)
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var text []byte
			var out bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
			for c := range jobs {
				text = fill(c, text[:0])
				out.Reset()
				zw.Reset(&out)
				zw.Write(text) // writes to a bytes.Buffer cannot fail
				zw.Close()
				results[c] <- bytes.Clone(out.Bytes())
			}
		}()
	}
	var werr error
	for c := 0; c < nChunks; c++ {
		b := <-results[c]
		if werr == nil {
			_, werr = bw.Write(b)
		}
		<-tokens
	}
	wg.Wait()
	if werr == nil {
		werr = bw.Flush()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", path, osx.Pathless(werr))
	}
	return nil
}

// writeDirAtomic runs fill on a fresh temporary directory beside dir
// (tempout.Own(dir)) and renames it to dir on success; on failure the
// temporary directory is removed. dir may exist only as an empty directory.
func writeDirAtomic(dir string, fill func(tmp string) error) error {
	dir = filepath.Clean(dir)
	if ents, err := os.ReadDir(dir); err == nil {
		if len(ents) > 0 {
			return fmt.Errorf("write %s: directory exists and is not empty", dir)
		}
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("write %s: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	// A killed earlier writer may have left its temporary; ours is named by
	// our PID (see tempout), so a command can register it for removal on
	// SIGINT/SIGTERM before it exists.
	if _, err := tempout.RemoveStale(dir); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	tmp := tempout.Own(dir)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	testhold.At("temp:" + filepath.Base(dir))
	if err := fill(tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return nil
}
