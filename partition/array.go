package partition

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"

	"mpignn/internal/osx"

	"github.com/klauspost/compress/zstd"
)

// An array file holds one little-endian numeric array. Layout:
//
//	bytes 0..3   magic "MGA1"
//	byte  4      dtype (1 int64, 2 float32, 3 int32, 4 bfloat16, 5 float16)
//	bytes 5..7   zero
//	bytes 8..15  element count, uint64 little endian
//	bytes 16..   one zstd stream holding count*elemSize bytes
//
// The header stays uncompressed so that a reader can reject a wrong type or
// length before decompressing anything. Integrity of the whole file is
// checked separately through the SHA-256 recorded in META.json.

const arrayMagic = "MGA1"

const arrayHeaderSize = 16

// dtype identifies the element type of an array file.
type dtype uint8

const (
	dtInt64   dtype = 1
	dtFloat32 dtype = 2
	dtInt32   dtype = 3
	// The 16-bit floats of features stored at half the bytes
	// (Meta.FeatDType), held in memory as their raw bits (uint16).
	dtBF16 dtype = 4
	dtFP16 dtype = 5
)

func (d dtype) String() string {
	switch d {
	case dtInt64:
		return "int64"
	case dtFloat32:
		return "float32"
	case dtInt32:
		return "int32"
	case dtBF16:
		return "bfloat16"
	case dtFP16:
		return "float16"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

func (d dtype) size() int {
	switch d {
	case dtInt64:
		return 8
	case dtFloat32, dtInt32:
		return 4
	case dtBF16, dtFP16:
		return 2
	}
	return 0
}

// half reports whether d is one of the 16-bit float types.
func (d dtype) half() bool { return d == dtBF16 || d == dtFP16 }

// elem is the set of element types an array file can hold; uint16 holds
// the bits of either 16-bit float type (the file's dtype says which).
type elem interface {
	int64 | float32 | int32 | uint16
}

func dtypeOf[T elem]() dtype {
	var z T
	switch any(z).(type) {
	case int64:
		return dtInt64
	case float32:
		return dtFloat32
	case uint16:
		return dtBF16 // or dtFP16: readers of uint16 accept either
	default:
		return dtInt32
	}
}

// chunkElems is how many elements are converted per buffer; big enough to
// keep the zstd encoder busy, small enough to stay in cache.
const chunkElems = 1 << 16

// encoderWindow is the zstd window the writer uses (4 MiB); readers accept
// windows up to twice that.
const encoderWindow = 1 << 22

// putLE writes xs little endian into buf (len(buf) >= len(xs)*size).
func putLE[T elem](buf []byte, xs []T) {
	switch v := any(xs).(type) {
	case []int64:
		for i, x := range v {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(x))
		}
	case []float32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
	case []int32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(x))
		}
	case []uint16:
		for i, x := range v {
			binary.LittleEndian.PutUint16(buf[2*i:], x)
		}
	}
}

// getLE decodes len(xs) little-endian elements from buf into xs.
func getLE[T elem](xs []T, buf []byte) {
	switch v := any(xs).(type) {
	case []int64:
		for i := range v {
			v[i] = int64(binary.LittleEndian.Uint64(buf[8*i:]))
		}
	case []float32:
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
	case []int32:
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(buf[4*i:]))
		}
	case []uint16:
		for i := range v {
			v[i] = binary.LittleEndian.Uint16(buf[2*i:])
		}
	}
}

// countingHash tracks the SHA-256 and byte count of everything written
// through it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	return len(p), nil
}

func (c *countingHash) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// arrayWriter encodes arrays; it reuses one zstd encoder across files.
type arrayWriter struct {
	enc *zstd.Encoder
	buf []byte
}

func newArrayWriter(concurrency int) (*arrayWriter, error) {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithWindowSize(encoderWindow),
		zstd.WithEncoderConcurrency(concurrency))
	if err != nil {
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	return &arrayWriter{enc: enc, buf: make([]byte, chunkElems*8)}, nil
}

func (aw *arrayWriter) close() { aw.enc.Close() }

// encodeArray writes the array file for xs to w and returns nothing else;
// callers hash/count through w. dt is T's dtype, or for uint16 the 16-bit
// float type whose bits xs holds.
func encodeArray[T elem](aw *arrayWriter, w io.Writer, xs []T, dt dtype) error {
	var hdr [arrayHeaderSize]byte
	copy(hdr[:4], arrayMagic)
	hdr[4] = byte(dt)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(xs)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	aw.enc.Reset(w)
	sz := dt.size()
	for len(xs) > 0 {
		n := min(len(xs), chunkElems)
		putLE(aw.buf, xs[:n])
		if _, err := aw.enc.Write(aw.buf[:n*sz]); err != nil {
			return err
		}
		xs = xs[n:]
	}
	return aw.enc.Close()
}

// fileInfo is what META.json records about one array file.
type fileInfo struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	DType  string `json:"dtype"`
	Len    int64  `json:"len"`
}

// writeArrayFile writes xs to path (synced) and returns its size and digest.
func writeArrayFile[T elem](aw *arrayWriter, path string, xs []T) (fileInfo, error) {
	return writeArrayFileAs(aw, path, xs, dtypeOf[T]())
}

// writeArrayFileAs is writeArrayFile with the file's dtype given (dtBF16 or
// dtFP16 for the bits of 16-bit floats).
func writeArrayFileAs[T elem](aw *arrayWriter, path string, xs []T, dt dtype) (fileInfo, error) {
	f, err := os.Create(path)
	if err != nil {
		return fileInfo{}, err
	}
	ch := &countingHash{h: sha256.New()}
	bw := bufio.NewWriterSize(io.MultiWriter(f, ch), 1<<20)
	err = encodeArray(aw, bw, xs, dt)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fileInfo{}, fmt.Errorf("write %s: %w", path, osx.Pathless(err))
	}
	return fileInfo{Bytes: ch.n, SHA256: ch.sum(), DType: dt.String(), Len: int64(len(xs))}, nil
}

// errChecksum marks a file whose bytes do not match META.json.
var errChecksum = errors.New("checksum mismatch")

// decodeArray reads one array file from r. If want >= 0 the header must
// announce exactly want elements; otherwise at most maxLen elements are
// accepted and memory grows only as data actually decompresses, so a forged
// header cannot force a huge allocation.
func decodeArray[T elem](r io.Reader, want, maxLen int64) ([]T, error) {
	var out []T
	if want >= 0 {
		out = make([]T, 0, want)
	}
	if _, err := decodeArrayEach(r, want, maxLen, func(_ int64, xs []T) { out = append(out, xs...) }); err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// decodeArrayEach is decodeArray handing the elements to visit chunk by
// chunk (start is the index of xs[0]; xs is reused after visit returns)
// instead of keeping them: the way to keep a part of a file without holding
// all of it. It returns the element count.
func decodeArrayEach[T elem](r io.Reader, want, maxLen int64, visit func(start int64, xs []T)) (int64, error) {
	var hdr [arrayHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, fmt.Errorf("header: %w", err)
	}
	if string(hdr[:4]) != arrayMagic {
		return 0, fmt.Errorf("bad magic %q", hdr[:4])
	}
	dt := dtypeOf[T]()
	got := dtype(hdr[4])
	if got != dt && !(got.half() && dt.half()) {
		return 0, fmt.Errorf("dtype %v, want %v", got, dt)
	}
	if hdr[5] != 0 || hdr[6] != 0 || hdr[7] != 0 {
		return 0, fmt.Errorf("reserved header bytes not zero")
	}
	n64 := binary.LittleEndian.Uint64(hdr[8:])
	if n64 > math.MaxInt64/8 {
		return 0, fmt.Errorf("length %d too large", n64)
	}
	n := int64(n64)
	if want >= 0 && n != want {
		return 0, fmt.Errorf("length %d, want %d", n, want)
	}
	if want < 0 && n > maxLen {
		return 0, fmt.Errorf("length %d exceeds limit %d", n, maxLen)
	}
	// The window limit keeps a forged frame header from making the
	// decoder allocate a huge history buffer; the writer never uses more.
	dec, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(2*encoderWindow), zstd.WithDecoderMaxMemory(1<<40))
	if err != nil {
		return 0, fmt.Errorf("zstd: %w", err)
	}
	defer dec.Close()
	sz := int64(dt.size())
	buf := make([]byte, chunkElems*sz)
	tmp := make([]T, chunkElems)
	for left := n; left > 0; {
		k := min(left, chunkElems)
		if _, err := io.ReadFull(dec, buf[:k*sz]); err != nil {
			return 0, fmt.Errorf("data at element %d of %d: %w", n-left, n, err)
		}
		getLE(tmp[:k], buf[:k*sz])
		visit(n-left, tmp[:k])
		left -= k
	}
	var one [1]byte
	if m, err := dec.Read(one[:]); m != 0 || err != io.EOF {
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("after %d elements: %w", n, err)
		}
		return 0, fmt.Errorf("extra data after %d elements", n)
	}
	return n, nil
}

// readArrayFile reads and verifies one array file against its META entry.
// The file's SHA-256 is computed while it streams through the decoder; when
// decoding fails the rest of the file is still hashed so that a corrupted
// file is reported as a checksum mismatch (the root cause) rather than as
// whatever the decoder tripped over.
func readArrayFile[T elem](path string, fi fileInfo) ([]T, error) {
	var xs []T
	err := readArrayEach[T](path, fi, func(r io.Reader) error {
		var derr error
		xs, derr = decodeArray[T](r, fi.Len, 0)
		return derr
	})
	if err != nil {
		return nil, err
	}
	return xs, nil
}

// readArrayVisit reads and verifies one array file like readArrayFile,
// handing its elements to visit chunk by chunk (see decodeArrayEach).
func readArrayVisit[T elem](path string, fi fileInfo, visit func(start int64, xs []T)) error {
	return readArrayEach[T](path, fi, func(r io.Reader) error {
		_, err := decodeArrayEach(r, fi.Len, 0, visit)
		return err
	})
}

// readArrayEach opens path, checks its dtype (T's) and size against fi, runs
// decode over the stream and checks the stream's SHA-256 (the whole file is
// hashed even when decode fails, so that a corrupted file is reported as a
// checksum mismatch).
func readArrayEach[T elem](path string, fi fileInfo, decode func(io.Reader) error) error {
	if want := dtypeOf[T](); fi.DType != want.String() && !(want.half() && (fi.DType == dtBF16.String() || fi.DType == dtFP16.String())) {
		return fmt.Errorf("read %s: META.json records dtype %q, want %q", path, fi.DType, want)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if st.Size() != fi.Bytes {
		return fmt.Errorf("read %s: size %d bytes, META.json records %d (truncated or replaced file)", path, st.Size(), fi.Bytes)
	}
	ch := &countingHash{h: sha256.New()}
	tr := io.TeeReader(bufio.NewReaderSize(f, 1<<20), ch)
	derr := decode(tr)
	if _, err := io.Copy(io.Discard, tr); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if sum := ch.sum(); sum != fi.SHA256 {
		return fmt.Errorf("read %s: %w (sha256 %s, META.json records %s)", path, errChecksum, sum, fi.SHA256)
	}
	if derr != nil {
		return fmt.Errorf("read %s: %w", path, derr)
	}
	return nil
}
