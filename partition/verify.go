package partition

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// VerifyFiles checks every file META.json lists under dir against its
// recorded size and SHA-256, streaming each file through the hash without
// decoding it (memory stays small however large the parts are). It returns
// the first mismatch, naming the file. Callers that reuse a partition
// directory (train --data's cache) call it so that a damaged part is
// rebuilt instead of failing later on every rank.
func VerifyFiles(dir string, m *Meta) error {
	keys := make([]string, 0, len(m.Files))
	for k := range m.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a deterministic first error
	for _, k := range keys {
		if err := verifyFile(filepath.Join(dir, filepath.FromSlash(k)), m.Files[k]); err != nil {
			return err
		}
	}
	return nil
}

func verifyFile(path string, fi FileInfo) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	defer f.Close()
	ch := &countingHash{h: sha256.New()}
	if _, err := io.Copy(ch, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	if ch.n != fi.Bytes {
		return fmt.Errorf("verify %s: size %d bytes, META.json records %d (truncated or replaced file)", path, ch.n, fi.Bytes)
	}
	if sum := ch.sum(); sum != fi.SHA256 {
		return fmt.Errorf("verify %s: %w (sha256 %s, META.json records %s)", path, errChecksum, sum, fi.SHA256)
	}
	return nil
}
