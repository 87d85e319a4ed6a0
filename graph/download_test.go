package graph

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// makeDatasetZip returns a zip laid out like the OGB ones: one top
// directory holding raw/ and split/, plus extra members.
func makeDatasetZip(t *testing.T, top string, files map[string]string, extra map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		var gz bytes.Buffer
		g := gzip.NewWriter(&gz)
		g.Write([]byte(files[p]))
		g.Close()
		w, err := zw.Create(top + p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(gz.Bytes())
	}
	for p, text := range extra {
		w, err := zw.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zipServer serves data; when cutFirst > 0 the first response sends only
// that many bytes of the full length and then drops the connection, like a
// network failure. It records the Range header of every request.
type zipServer struct {
	data     []byte
	cutFirst int
	mu       sync.Mutex
	ranges   []string
}

func (z *zipServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	z.mu.Lock()
	z.ranges = append(z.ranges, r.Header.Get("Range"))
	first := len(z.ranges) == 1
	z.mu.Unlock()
	if first && z.cutFirst > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(z.data)))
		w.WriteHeader(http.StatusOK)
		w.Write(z.data[:z.cutFirst])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	http.ServeContent(w, r, "d.zip", time.Unix(0, 0), bytes.NewReader(z.data))
}

func (z *zipServer) requests() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return append([]string(nil), z.ranges...)
}

func TestDownloadResume(t *testing.T) {
	data := makeDatasetZip(t, "tiny/", tinyFiles(), map[string]string{"tiny/RELEASE_v1.txt": "v1\n", "__MACOSX/tiny/._x": "junk"})
	zs := &zipServer{data: data, cutFirst: len(data) / 2}
	srv := httptest.NewServer(zs)
	defer srv.Close()
	root := t.TempDir()
	opt := DownloadOptions{URL: srv.URL + "/tiny.zip"}
	ctx := context.Background()

	// First attempt is cut off: an error, a partial file, no dataset.
	_, err := Download(ctx, "ogbn-tiny", root, opt)
	if err == nil || !strings.Contains(err.Error(), "rerun to resume") {
		t.Fatalf("interrupted download: err = %v, want a resumable failure", err)
	}
	part := filepath.Join(root, "ogbn-tiny.zip.part")
	st, err := os.Stat(part)
	if err != nil || st.Size() != int64(zs.cutFirst) {
		t.Fatalf("partial file after interruption: %v size %v, want %d bytes", err, st, zs.cutFirst)
	}
	if _, err := os.Stat(filepath.Join(root, "ogbn-tiny")); !os.IsNotExist(err) {
		t.Fatalf("dataset directory exists after a failed download: %v", err)
	}

	// Second attempt resumes with a Range request and completes.
	var progress bytes.Buffer
	opt.Progress = &progress
	dir, err := Download(ctx, "ogbn-tiny", root, opt)
	if err != nil {
		t.Fatal(err)
	}
	reqs := zs.requests()
	if len(reqs) != 2 || reqs[0] != "" || reqs[1] != "bytes="+strconv.Itoa(zs.cutFirst)+"-" {
		t.Fatalf("requests' Range headers %q, want none then bytes=%d-", reqs, zs.cutFirst)
	}
	if !strings.Contains(progress.String(), "resuming at byte") {
		t.Errorf("progress does not mention resuming: %q", progress.String())
	}
	d, err := ReadOGB(dir, UndirectedOptions())
	if err != nil {
		t.Fatal(err)
	}
	if d.NumNodes != 5 || d.Splits["s"] == nil {
		t.Fatalf("unpacked dataset: %d nodes, splits %v", d.NumNodes, d.Splits)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "RELEASE_v1.txt")); err != nil || string(b) != "v1\n" {
		t.Fatalf("extra member: %q %v", b, err)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 || ents[0].Name() != "ogbn-tiny" {
		t.Fatalf("root holds %v, want only the dataset (zip and part removed)", ents)
	}

	// A rerun is a no-op: no request at all.
	if _, err := Download(ctx, "ogbn-tiny", root, opt); err != nil {
		t.Fatal(err)
	}
	if n := len(zs.requests()); n != 2 {
		t.Fatalf("rerun made %d more requests", n-2)
	}
}

func TestDownloadKeepZipAndReuse(t *testing.T) {
	data := makeDatasetZip(t, "tiny/", tinyFiles(), nil)
	zs := &zipServer{data: data}
	srv := httptest.NewServer(zs)
	defer srv.Close()
	root := t.TempDir()
	opt := DownloadOptions{URL: srv.URL, KeepZip: true}
	dir, err := Download(context.Background(), "ogbn-tiny", root, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "ogbn-tiny.zip")); err != nil {
		t.Fatalf("zip not kept: %v", err)
	}
	// Unpacking again from the kept zip needs no request.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Download(context.Background(), "ogbn-tiny", root, opt); err != nil {
		t.Fatal(err)
	}
	if n := len(zs.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	if _, err := ReadOGB(dir, UndirectedOptions()); err != nil {
		t.Fatal(err)
	}
}

func TestDownloadBad(t *testing.T) {
	good := makeDatasetZip(t, "tiny/", tinyFiles(), nil)
	corrupt := bytes.Clone(good)
	// Flip bytes inside the first member's data: the CRC check must catch it.
	corrupt[60] ^= 0xff
	corrupt[61] ^= 0xff
	cases := []struct {
		name    string
		data    []byte
		status  int
		want    string
		partsOK bool // a .part file may remain (resumable)
	}{
		{name: "not found", status: http.StatusNotFound, want: "404"},
		{name: "not a zip", data: []byte("<html>mirror error</html>"), want: "not a valid zip"},
		{name: "corrupt member", data: corrupt, want: "unpack"},
		{name: "zip slip", data: makeDatasetZip(t, "", nil, map[string]string{"raw/x": "1", "../evil": "x"}), want: "unsafe path"},
		{name: "no raw dir", data: makeDatasetZip(t, "", nil, map[string]string{"data/x": "1"}), want: "no raw/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.status != 0 {
					http.Error(w, "nope", c.status)
					return
				}
				http.ServeContent(w, r, "d.zip", time.Unix(0, 0), bytes.NewReader(c.data))
			}))
			defer srv.Close()
			root := t.TempDir()
			_, err := Download(context.Background(), "ogbn-x", root, DownloadOptions{URL: srv.URL})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			t.Log(err)
			ents, _ := os.ReadDir(root)
			for _, e := range ents {
				if e.Name() == "ogbn-x" || strings.Contains(e.Name(), ".tmp-") {
					t.Fatalf("left %s behind after a failure", e.Name())
				}
			}
		})
	}
	if _, err := Download(context.Background(), "ogbn-nope", t.TempDir(), DownloadOptions{}); err == nil || !strings.Contains(err.Error(), "unknown dataset") {
		t.Fatalf("unknown name: err = %v", err)
	}
}

func TestOGBURL(t *testing.T) {
	for name, want := range map[string]string{
		"ogbn-arxiv":      "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip",
		"ogbn-products":   "http://snap.stanford.edu/ogb/data/nodeproppred/products.zip",
		"ogbn-papers100M": "http://snap.stanford.edu/ogb/data/nodeproppred/papers100M.zip",
		"ogbn-proteins":   "http://snap.stanford.edu/ogb/data/nodeproppred/proteins.zip",
		"ogbn-mag":        "http://snap.stanford.edu/ogb/data/nodeproppred/mag.zip",
		"ogbl-collab":     "http://snap.stanford.edu/ogb/data/linkproppred/collab.zip",
		"ogbl-citation2":  "http://snap.stanford.edu/ogb/data/linkproppred/citation-v2.zip",
	} {
		if got, err := OGBURL(name); err != nil || got != want {
			t.Errorf("OGBURL(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	cases := []struct {
		in               string
		start, end, size int64
		ok               bool
	}{
		{"bytes 10-99/100", 10, 99, 100, true},
		{"bytes 0-0/*", 0, 0, -1, true},
		{"bytes */100", -1, -1, 100, true},
		{"bytes 5-4/100", 0, 0, 0, false},
		{"bits 0-1/2", 0, 0, 0, false},
		{"bytes 0-1", 0, 0, 0, false},
	}
	for _, c := range cases {
		s, e, z, err := parseContentRange(c.in)
		if (err == nil) != c.ok || (c.ok && (s != c.start || e != c.end || z != c.size)) {
			t.Errorf("parseContentRange(%q) = %d %d %d %v", c.in, s, e, z, err)
		}
	}
}
