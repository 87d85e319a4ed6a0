package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
	"codeberg.org/sbinet/npyio/npz"
)

// OGB's binary layout (ogbn-papers100M):
//
//	raw/data.npz        edge_index int64 (2, m), node_feat float32 (n, dim),
//	                    node_year int64 (n, 1), num_nodes_list [n]
//	raw/node-label.npz  node_label float (n, 1), NaN where a node has no label
//	split/<name>/{train,valid,test}.csv.gz  as in the CSV layout
//
// convertNpz streams these arrays a chunk at a time from the (possibly
// deflated) zip entries: edge_index's two rows are read by two readers of
// the same entry, one skipped ahead to the destinations.

// npzArray is one array of an npz archive opened for streaming.
type npzArray struct {
	path, key string
	rc        io.ReadCloser
	hdr       npy.Header
	elem      int // bytes per element
	typ       string
}

func openNpzArray(z *npz.Reader, path, key string) (*npzArray, error) {
	name := key
	if !strings.HasSuffix(name, ".npy") {
		found := false
		for _, k := range z.Keys() {
			if k == key || k == key+".npy" {
				name, found = k, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no array %q (have %v)", path, key, z.Keys())
		}
	}
	rc, err := z.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := npy.NewReader(rc)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: array %s: %w", path, key, err)
	}
	a := &npzArray{path: path, key: key, rc: rc, hdr: r.Header, typ: strings.Trim(r.Header.Descr.Type, "'\"")}
	if r.Header.Descr.Fortran {
		rc.Close()
		return nil, fmt.Errorf("%s: array %s is in Fortran order (want C order)", path, key)
	}
	switch a.typ {
	case "<i8", "<f8":
		a.elem = 8
	case "<i4", "<f4":
		a.elem = 4
	default:
		rc.Close()
		return nil, fmt.Errorf("%s: array %s has dtype %s (want int32/int64/float32/float64)", path, key, a.typ)
	}
	return a, nil
}

func (a *npzArray) close() { a.rc.Close() }

// skip discards n elements.
func (a *npzArray) skip(n int64) error {
	if _, err := io.CopyN(io.Discard, a.rc, n*int64(a.elem)); err != nil {
		return fmt.Errorf("%s: array %s: %w", a.path, a.key, err)
	}
	return nil
}

// read reads len(buf) bytes worth of elements into raw little-endian buf.
func (a *npzArray) readRaw(buf []byte) error {
	if _, err := io.ReadFull(a.rc, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: array %s ends early (shape %v)", a.path, a.key, a.hdr.Descr.Shape)
		}
		return fmt.Errorf("%s: array %s: %w", a.path, a.key, err)
	}
	return nil
}

// ints reads n elements as int64 (integers; floats must be whole).
func (a *npzArray) ints(n int64) ([]int64, error) {
	buf := make([]byte, n*int64(a.elem))
	if err := a.readRaw(buf); err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for i := range out {
		switch a.typ {
		case "<i8":
			out[i] = int64(binary.LittleEndian.Uint64(buf[8*i:]))
		case "<i4":
			out[i] = int64(int32(binary.LittleEndian.Uint32(buf[4*i:])))
		default:
			return nil, fmt.Errorf("%s: array %s: dtype %s, want integers", a.path, a.key, a.typ)
		}
	}
	return out, nil
}

// floats reads n elements as float64 (any of the four dtypes).
func (a *npzArray) floats(n int64) ([]float64, error) {
	buf := make([]byte, n*int64(a.elem))
	if err := a.readRaw(buf); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		switch a.typ {
		case "<i8":
			out[i] = float64(int64(binary.LittleEndian.Uint64(buf[8*i:])))
		case "<i4":
			out[i] = float64(int32(binary.LittleEndian.Uint32(buf[4*i:])))
		case "<f8":
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
		case "<f4":
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])))
		}
	}
	return out, nil
}

// IsNpzLayout reports whether dir holds OGB's binary layout (raw/data.npz
// and no raw/edge.csv.gz).
func IsNpzLayout(dir string) bool {
	return fileExists(filepath.Join(dir, "raw", "data.npz")) && !fileExists(filepath.Join(dir, "raw", "edge.csv.gz"))
}

func convertNpz(src, tmp string, opt ConvertOptions) (*ChunkedMeta, error) {
	raw := filepath.Join(src, "raw")
	dataPath := filepath.Join(raw, "data.npz")
	z, err := npz.Open(dataPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dataPath, err)
	}
	defer z.Close()
	ei, err := openNpzArray(z, dataPath, "edge_index")
	if err != nil {
		return nil, err
	}
	defer ei.close()
	sh := ei.hdr.Descr.Shape
	if len(sh) != 2 || sh[0] != 2 {
		return nil, fmt.Errorf("%s: edge_index has shape %v, want (2, edges)", dataPath, sh)
	}
	m := int64(sh[1])
	n := int64(-1)
	if nl, err := openNpzArray(z, dataPath, "num_nodes_list"); err == nil {
		v, err := nl.ints(1)
		nl.close()
		if err != nil {
			return nil, err
		}
		n = v[0]
	}
	feat, err := openNpzArray(z, dataPath, "node_feat")
	if err == nil {
		defer feat.close()
		fs := feat.hdr.Descr.Shape
		if len(fs) != 2 || fs[1] < 1 || (n >= 0 && int64(fs[0]) != n) {
			return nil, fmt.Errorf("%s: node_feat has shape %v, want (%d nodes, dim)", dataPath, fs, n)
		}
		n = int64(fs[0])
	} else {
		feat = nil
	}
	if n <= 0 {
		return nil, fmt.Errorf("%s: no num_nodes_list or node_feat to count the nodes", dataPath)
	}
	cm := &ChunkedMeta{
		NodeType: []string{HomoNodeType}, EdgeType: []string{HomoEdgeType},
		Edges: map[string]ChunkFiles{}, NodeData: map[string]map[string]ChunkFiles{HomoNodeType: {}},
	}
	nodesPer, edgesPer := opt.nodesPer(n), opt.edgesPer()
	// Edges: a second reader of edge_index, skipped to the destinations.
	dst, err := openNpzArray(z, dataPath, "edge_index")
	if err != nil {
		return nil, err
	}
	defer dst.close()
	if err := dst.skip(m); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "edges"), 0o755); err != nil {
		return nil, err
	}
	files := ChunkFiles{Format: ChunkFormat{Name: FormatNumpy}}
	sizes := chunkSizes(m, edgesPer)
	at := int64(0)
	for k, size := range sizes {
		u, err := ei.ints(size)
		if err != nil {
			return nil, err
		}
		v, err := dst.ints(size)
		if err != nil {
			return nil, err
		}
		buf := make([][2]int64, size)
		for i := range buf {
			if u[i] < 0 || u[i] >= n || v[i] < 0 || v[i] >= n {
				return nil, fmt.Errorf("%s: edge_index column %d: edge %d,%d has an id outside [0,%d)", dataPath, at+int64(i), u[i], v[i], n)
			}
			buf[i] = [2]int64{u[i], v[i]}
		}
		at += size
		rel := filepath.Join("edges", fmt.Sprintf("_N____E____N-%d.npy", k))
		if err := WriteNpy(filepath.Join(tmp, rel), buf); err != nil {
			return nil, err
		}
		files.Data = append(files.Data, rel)
	}
	cm.Edges[HomoEdgeType] = files
	cm.NumEdgesPerChunk = [][]int64{sizes}

	nsizes := chunkSizes(n, nodesPer) // convertNodeData records them
	nd := cm.NodeData[HomoNodeType]
	if err := os.MkdirAll(filepath.Join(tmp, "node_data", HomoNodeType), 0o755); err != nil {
		return nil, err
	}
	add := func(key string, k int, xs any) error {
		rel := filepath.Join("node_data", HomoNodeType, fmt.Sprintf("%s-%d.npy", key, k))
		if err := WriteNpy(filepath.Join(tmp, rel), xs); err != nil {
			return err
		}
		f := nd[key]
		f.Format.Name = FormatNumpy
		f.Data = append(f.Data, rel)
		nd[key] = f
		return nil
	}
	if feat != nil {
		dim := int64(feat.hdr.Descr.Shape[1])
		for k, size := range nsizes {
			x, err := feat.floats(size * dim)
			if err != nil {
				return nil, err
			}
			rows := make([][]float32, size)
			data := make([]float32, len(x))
			for i, f := range x {
				data[i] = float32(f)
			}
			for i := range rows {
				rows[i] = data[int64(i)*dim : int64(i+1)*dim]
			}
			if err := add(ChunkFeat, k, rows); err != nil {
				return nil, err
			}
		}
	}
	if year, err := openNpzArray(z, dataPath, "node_year"); err == nil {
		defer year.close()
		for k, size := range nsizes {
			y, err := year.ints(size)
			if err != nil {
				return nil, err
			}
			if err := add("year", k, y); err != nil {
				return nil, err
			}
		}
	}
	labelPath := filepath.Join(raw, "node-label.npz")
	if fileExists(labelPath) {
		lz, err := npz.Open(labelPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", labelPath, err)
		}
		defer lz.Close()
		la, err := openNpzArray(lz, labelPath, "node_label")
		if err != nil {
			return nil, err
		}
		defer la.close()
		if s := la.hdr.Descr.Shape; len(s) == 0 || int64(s[0]) != n {
			return nil, fmt.Errorf("%s: node_label has shape %v, want (%d, 1)", labelPath, s, n)
		}
		for k, size := range nsizes {
			x, err := la.floats(size)
			if err != nil {
				return nil, err
			}
			l := make([]int64, size)
			for i, f := range x {
				switch {
				case math.IsNaN(f):
					l[i] = -1 // OGB marks unlabelled nodes with NaN
				case f < 0 || f != math.Trunc(f) || f > 1<<31-2:
					return nil, fmt.Errorf("%s: node %d: label %v is not a class number", labelPath, nsizes[0]*int64(k)+int64(i), f)
				default:
					l[i] = int64(f)
				}
			}
			if err := add(ChunkLabel, k, l); err != nil {
				return nil, err
			}
		}
	}
	splits, err := readSplits(filepath.Join(src, "split"), nil, nil, n, opt.Workers)
	if err != nil {
		return nil, err
	}
	return cm, convertNodeData(cm, tmp, HomoNodeType, n, "", "", false, splits, opt)
}
