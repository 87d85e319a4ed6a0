package partition

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// encodeForTest returns the array-file bytes of xs.
func encodeForTest[T elem](t testing.TB, xs []T) []byte {
	t.Helper()
	aw, err := newArrayWriter(1)
	if err != nil {
		t.Fatal(err)
	}
	defer aw.close()
	var b bytes.Buffer
	if err := encodeArray(aw, &b, xs, dtypeOf[T]()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func addArraySeeds(f *testing.F) {
	f.Add(encodeForTest(f, []int64{}))
	f.Add(encodeForTest(f, []int64{0, 1, 2, -5, math.MaxInt64}))
	f.Add(encodeForTest(f, []float32{1.5, float32(math.Inf(-1)), 0}))
	f.Add(encodeForTest(f, []int32{7, -7}))
	f.Add([]byte("MGA1\x01\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\x7f"))
	f.Add([]byte{})
}

// roundTrip decodes data as []T; when that succeeds, re-encoding and
// decoding must give the same elements bit for bit.
func roundTrip[T elem](t *testing.T, data []byte) {
	xs, err := decodeArray[T](bytes.NewReader(data), -1, 1<<16)
	if err != nil {
		return
	}
	again, err := decodeArray[T](bytes.NewReader(encodeForTest(t, xs)), int64(len(xs)), 0)
	if err != nil {
		t.Fatalf("re-decoding %d %T elements: %v", len(xs), xs, err)
	}
	if len(again) != len(xs) {
		t.Fatalf("round trip changed length %d -> %d", len(xs), len(again))
	}
	for i := range xs {
		if !sameBits(xs[i], again[i]) {
			t.Fatalf("round trip changed element %d", i)
		}
	}
}

func sameBits[T elem](a, b T) bool {
	switch x := any(a).(type) {
	case float32:
		return math.Float32bits(x) == math.Float32bits(any(b).(float32))
	}
	return a == b
}

// FuzzDecodeArray feeds arbitrary bytes to the array decoder: it must
// return an error or a value, never panic or allocate without bound.
func FuzzDecodeArray(f *testing.F) {
	addArraySeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip[int64](t, data)
		roundTrip[float32](t, data)
		roundTrip[int32](t, data)
	})
}

// FuzzArrayFile exercises the file-level reader with a META entry whose
// size and checksum match the bytes (so decoding, not the checksum, is
// what gets tested) and a fuzzed expected length.
func FuzzArrayFile(f *testing.F) {
	f.Add(encodeForTest(f, []int64{3, 1, 4, 1, 5}), int64(5))
	f.Add(encodeForTest(f, []int64{3, 1, 4, 1, 5}), int64(4))
	f.Add(encodeForTest(f, []int64{}), int64(0))
	f.Add([]byte("MGA1"), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		n = max(n, -n) % (1 << 16)
		path := filepath.Join(t.TempDir(), "a.bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		fi := fileInfo{Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), DType: "int64", Len: n}
		xs, err := readArrayFile[int64](path, fi)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte(path)) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if int64(len(xs)) != n {
			t.Fatalf("read %d elements, META says %d", len(xs), n)
		}
		if len(data) < arrayHeaderSize {
			t.Fatalf("accepted a %d-byte file, shorter than the header", len(data))
		}
	})
}

// FuzzLoadMeta feeds arbitrary META.json contents to LoadMeta: errors
// only, never a panic.
func FuzzLoadMeta(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "p")
	if _, err := WriteDataset(dir, communityDataset(30, 2, 1), 2, Options{Method: MethodRandom}); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format_version": 1, "num_parts": 1, "offsets": [0, 5], "num_nodes": 5}`))
	f.Add([]byte(`{"format_version": 1, "num_parts": 2, "offsets": [0, 9, 5], "num_nodes": 5, "parts": [{}, {}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, MetaFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadMeta(d)
		if err != nil {
			return
		}
		_ = m.Stats()
		for p := 0; p < m.NumParts && p < 4; p++ {
			_, _ = LoadWithMeta(d, m, p) // files are absent: must error, not panic
		}
	})
}
