package graph

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// chunkSize is the size of the text pieces handed to parser goroutines:
// big enough that per-chunk overhead vanishes, small enough that a few of
// them in flight cost little memory.
const chunkSize = 4 << 20

// lineError is a parse error at a known line (1-based) of a file.
type lineError struct {
	file string
	line int64
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("%s line %d: %v", e.file, e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

// textChunk is a run of whole lines of a file.
type textChunk struct {
	seq       int
	data      []byte // whole lines; the last one may lack its '\n' at EOF
	firstLine int64  // 0-based index of the first line in data
	buf       []byte // backing buffer to recycle
}

// forEachLine calls fn for every line of chunk with its 0-based index,
// stripping '\n' and a trailing '\r'. It stops at the first error.
func forEachLine(data []byte, firstLine int64, fn func(line []byte, idx int64) error) error {
	idx := firstLine
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		if err := fn(trimCR(line), idx); err != nil {
			return err
		}
		idx++
	}
	return nil
}

// scanChunks reads r (uncompressed text) on one goroutine, cuts it into
// chunks at line boundaries, and runs fn on the chunks on `workers`
// goroutines. fn receives the 0-based index of the chunk's first line, so
// results can be written straight to their final place. It returns the
// number of lines; on failure it returns the error of the earliest chunk
// that failed, so the reported line does not depend on scheduling.
func scanChunks(r io.Reader, workers int, fn func(c *textChunk) error) (int64, error) {
	return scanChunksSize(r, workers, chunkSize, fn)
}

// scanChunksSize is scanChunks with a given initial chunk size (tests use
// tiny ones to exercise the boundaries).
func scanChunksSize(r io.Reader, workers, size int, fn func(c *textChunk) error) (int64, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size = max(size, 1)
	pool := make(chan []byte, workers+2)
	for i := 0; i < workers+2; i++ {
		pool <- make([]byte, size)
	}
	jobs := make(chan *textChunk, workers)
	done := make(chan struct{})
	var (
		mu       sync.Mutex
		firstErr error
		errSeq   = -1
	)
	fail := func(seq int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errSeq < 0 || seq < errSeq {
			if errSeq < 0 {
				close(done)
			}
			firstErr, errSeq = err, seq
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				if err := fn(c); err != nil {
					fail(c.seq, err)
				}
				pool <- c.buf
			}
		}()
	}

	var lines int64
	var readErr error
	carry := make([]byte, 0, 64<<10)
	seq := 0
loop:
	for {
		var buf []byte
		select {
		case buf = <-pool:
		case <-done:
			break loop
		}
		buf = buf[:cap(buf)]
		n := copy(buf, carry)
		if n < len(carry) { // a line longer than the buffer: grow
			buf = append(buf[:n], carry[n:]...)
			buf = buf[:cap(buf)]
			n = len(carry)
		}
		eof := false
		var data []byte
		for {
			m, err := io.ReadFull(r, buf[n:])
			n += m
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				eof = true
			} else if err != nil {
				readErr = err
				break loop
			}
			data = buf[:n]
			if eof || bytes.IndexByte(data[n-m:], '\n') >= 0 || (m == 0 && n == 0) {
				break
			}
			// No line end in a full buffer: double it and keep reading.
			nb := make([]byte, 2*len(buf))
			copy(nb, buf[:n])
			buf = nb
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
		}
		carry = append(carry[:0], data[cut:]...)
		data = data[:cut]
		nl := int64(bytes.Count(data, []byte{'\n'}))
		if eof && len(data) > 0 && data[len(data)-1] != '\n' {
			nl++
		}
		if len(data) > 0 {
			jobs <- &textChunk{seq: seq, data: data, firstLine: lines, buf: buf}
			seq++
		} else {
			pool <- buf
		}
		lines += nl
		if eof {
			break
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	if readErr != nil {
		return 0, readErr
	}
	return lines, nil
}

// openGzip opens a gzip'd text file. The reader accepts concatenated gzip
// members (the writer in this package produces them).
func openGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("missing file %s", path)
		}
		return nil, nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a gzip file: %w", path, err)
	}
	return zr, func() error { zr.Close(); return f.Close() }, nil
}

// scanGzip runs scanChunks over a gzip'd file, naming the file in errors
// coming from decompression.
func scanGzip(path string, workers int, fn func(c *textChunk) error) (int64, error) {
	r, closeFn, err := openGzip(path)
	if err != nil {
		return 0, err
	}
	defer closeFn()
	n, err := scanChunks(r, workers, fn)
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return 0, err
		}
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	return n, nil
}
