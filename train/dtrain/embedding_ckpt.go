package dtrain

import (
	"encoding/binary"
	"fmt"
	"math"

	"mpignn/collectives"
)

// Checkpoints of embedding tables: the parameters and optimizer state of
// every row, keyed by type-local ORIGINAL id, so that a checkpoint written
// with one partition layout (or rank count) resumes with another.
//
// Blob layout (little endian): the magic "MPGNEMB1"; uint32 Dim; uint32
// StateWidth; uint32 length and bytes of the node type; uint32 length and
// bytes of the optimizer name; uint64 row count N; then N rows in
// type-local original id order, each Dim parameters followed by StateWidth
// optimizer state words, as float32 bits.

const embedCkptMagic = "MPGNEMB1"

type embedHeader struct {
	dim, stateWidth int
	nodeType, opt   string
	rows            int64
}

func (h embedHeader) encode() []byte {
	b := []byte(embedCkptMagic)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.stateWidth))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.nodeType)))
	b = append(b, h.nodeType...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.opt)))
	b = append(b, h.opt...)
	return binary.LittleEndian.AppendUint64(b, uint64(h.rows))
}

// decodeEmbedHeader parses a blob's header and returns the rest.
func decodeEmbedHeader(b []byte) (embedHeader, []byte, error) {
	var h embedHeader
	if len(b) < len(embedCkptMagic) || string(b[:len(embedCkptMagic)]) != embedCkptMagic {
		return h, nil, fmt.Errorf("not an embedding checkpoint (no %s magic)", embedCkptMagic)
	}
	b = b[len(embedCkptMagic):]
	u32 := func() (uint32, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(b)
		b = b[4:]
		return v, true
	}
	str := func() (string, bool) {
		n, ok := u32()
		if !ok || uint64(n) > uint64(len(b)) {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
		return s, true
	}
	dim, ok1 := u32()
	sw, ok2 := u32()
	nt, ok3 := str()
	opt, ok4 := str()
	if !ok1 || !ok2 || !ok3 || !ok4 || len(b) < 8 {
		return h, nil, fmt.Errorf("embedding checkpoint: truncated header")
	}
	rows := binary.LittleEndian.Uint64(b)
	b = b[8:]
	h = embedHeader{dim: int(dim), stateWidth: int(sw), nodeType: nt, opt: opt, rows: int64(rows)}
	if rows > math.MaxInt64/4 || (dim+sw) == 0 || uint64(len(b)) != rows*uint64(dim+sw)*4 {
		return h, nil, fmt.Errorf("embedding checkpoint: %d bytes of rows, header says %d rows of %d+%d words", len(b), rows, dim, sw)
	}
	return h, b, nil
}

func (e *embeddingTable) header(rows int64) embedHeader {
	return embedHeader{dim: e.dim, stateWidth: e.opt.StateWidth(), nodeType: e.m.NodeType(), opt: e.opt.Name(), rows: rows}
}

// Export returns, on rank 0, the checkpoint blob of the table (see the
// layout above); other ranks get nil. It is collective: every rank sends its
// rows to rank 0 (Alltoallv, which splits messages beyond an MPI count).
func (e *embeddingTable) Export() ([]byte, error) {
	n := e.m.Owned()
	w := e.dim + e.opt.StateWidth()
	data := make([]float32, n*int64(w))
	all := make([]int64, n)
	for i := range all {
		all[i] = int64(i)
	}
	state := make([]float32, n*int64(e.opt.StateWidth()))
	e.opt.ExportState(all, state)
	sw := e.opt.StateWidth()
	for i := range n {
		row := data[i*int64(w) : (i+1)*int64(w)]
		copy(row, e.params[i*int64(e.dim):(i+1)*int64(e.dim)])
		copy(row[e.dim:], state[i*int64(sw):(i+1)*int64(sw)])
	}
	size := e.c.Size()
	toRoot := func(k int64) []int64 {
		c := make([]int64, size)
		c[0] = k
		return c
	}
	ids, _, err := collectives.Alltoallv(e.c, e.orig, toRoot(n))
	if err != nil {
		return nil, fmt.Errorf("export embedding %s: %w", e.m.NodeType(), err)
	}
	vals, _, err := collectives.Alltoallv(e.c, data, toRoot(int64(len(data))))
	if err != nil {
		return nil, fmt.Errorf("export embedding %s: %w", e.m.NodeType(), err)
	}
	if e.c.Rank() != 0 {
		return nil, nil
	}
	total := e.m.Count()
	if int64(len(ids)) != total {
		return nil, fmt.Errorf("export embedding %s: ranks hold %d rows of %d", e.m.NodeType(), len(ids), total)
	}
	blob := e.header(total).encode()
	start := len(blob)
	blob = append(blob, make([]byte, total*int64(w)*4)...)
	seen := make([]bool, total)
	for j, id := range ids {
		if id < 0 || id >= total || seen[id] {
			return nil, fmt.Errorf("export embedding %s: original id %d is out of range or owned twice", e.m.NodeType(), id)
		}
		seen[id] = true
		out := blob[start+int(id)*w*4:]
		for k, x := range vals[j*w : (j+1)*w] {
			binary.LittleEndian.PutUint32(out[4*k:], math.Float32bits(x))
		}
	}
	return blob, nil
}

// Import sets every row's parameters and optimizer state from a blob that
// Export wrote (with any rank count). Only rank 0's blob is read; other
// ranks may pass nil. It is collective, and fails on every rank if the blob
// does not fit the table (width, node type, optimizer, row count).
func (e *embeddingTable) Import(blob []byte) error {
	var why string
	var rows []byte
	w := e.dim + e.opt.StateWidth()
	if e.c.Rank() == 0 {
		h, rest, err := decodeEmbedHeader(blob)
		want := e.header(e.m.Count())
		switch {
		case err != nil:
			why = err.Error()
		case h != want:
			why = fmt.Sprintf("checkpoint holds %d rows of type %q, width %d, optimizer %s (%d state words); the table has %d rows of type %q, width %d, optimizer %s (%d)",
				h.rows, h.nodeType, h.dim, h.opt, h.stateWidth, want.rows, want.nodeType, want.dim, want.opt, want.stateWidth)
		}
		rows = rest
	}
	// Only rank 0 judges the blob: send its verdict to every rank, so that
	// all fail with the same message.
	n0, err := collectives.AllreduceScalar(e.c, int64(len(why)), collectives.Max)
	if err != nil {
		return fmt.Errorf("import embedding %s: %w", e.m.NodeType(), err)
	}
	if n0 > 0 {
		msg := make([]byte, n0)
		copy(msg, why)
		if err := collectives.Bcast(e.c, msg, 0); err != nil {
			return fmt.Errorf("import embedding %s: %w", e.m.NodeType(), err)
		}
		return fmt.Errorf("import embedding %s on rank %d: %s", e.m.NodeType(), e.c.Rank(), msg)
	}
	size := e.c.Size()
	n := e.m.Owned()
	send := make([]int64, size)
	send[0] = n
	ids, idCounts, err := collectives.Alltoallv(e.c, e.orig, send)
	if err != nil {
		return fmt.Errorf("import embedding %s: %w", e.m.NodeType(), err)
	}
	var out []float32
	outCounts := make([]int64, size)
	if e.c.Rank() == 0 {
		out = make([]float32, int64(len(ids))*int64(w))
		for j, id := range ids {
			in := rows[id*int64(w)*4:]
			for k := range w {
				out[j*w+k] = math.Float32frombits(binary.LittleEndian.Uint32(in[4*k:]))
			}
		}
		for p, c := range idCounts {
			outCounts[p] = c * int64(w)
		}
	}
	data, _, err := collectives.Alltoallv(e.c, out, outCounts)
	if err != nil {
		return fmt.Errorf("import embedding %s: %w", e.m.NodeType(), err)
	}
	sw := e.opt.StateWidth()
	state := make([]float32, n*int64(sw))
	all := make([]int64, n)
	for i := range n {
		all[i] = i
		row := data[i*int64(w) : (i+1)*int64(w)]
		copy(e.params[i*int64(e.dim):(i+1)*int64(e.dim)], row[:e.dim])
		copy(state[i*int64(sw):(i+1)*int64(sw)], row[e.dim:])
	}
	e.opt.ImportState(all, state)
	return e.arr.Seal()
}

// decodeEmbeddingRows parses an embedding table's checkpoint blob (the
// layout above) and returns its node type, width and parameters: rows x dim
// float32 in type-local original id order, without the optimizer state.
// It needs no MPI (mpignn export reads checkpoints with it).
func decodeEmbeddingRows(blob []byte) (nodeType string, dim int, rows int64, params []float32, err error) {
	h, b, err := decodeEmbedHeader(blob)
	if err != nil {
		return "", 0, 0, nil, err
	}
	w := h.dim + h.stateWidth
	params = make([]float32, h.rows*int64(h.dim))
	for i := int64(0); i < h.rows; i++ {
		row := b[i*int64(w)*4:]
		for k := 0; k < h.dim; k++ {
			params[i*int64(h.dim)+int64(k)] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*k:]))
		}
	}
	return h.nodeType, h.dim, h.rows, params, nil
}

// replaceEmbeddingRows returns a copy of an embedding table's checkpoint
// blob with its parameters replaced by params (rows x dim, type-local
// original id order) and its optimizer state kept: train --init-from puts
// imported embeddings into a fresh table this way.
func replaceEmbeddingRows(blob []byte, params []float32) ([]byte, error) {
	h, rows, err := decodeEmbedHeader(blob)
	if err != nil {
		return nil, err
	}
	if int64(len(params)) != h.rows*int64(h.dim) {
		return nil, fmt.Errorf("embedding %s: %d values for %d rows of width %d", h.nodeType, len(params), h.rows, h.dim)
	}
	out := append([]byte(nil), blob[:len(blob)-len(rows)]...)
	w := h.dim + h.stateWidth
	for i := int64(0); i < h.rows; i++ {
		for k := 0; k < h.dim; k++ {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(params[i*int64(h.dim)+int64(k)]))
		}
		out = append(out, rows[(i*int64(w)+int64(h.dim))*4:(i+1)*int64(w)*4]...)
	}
	return out, nil
}
