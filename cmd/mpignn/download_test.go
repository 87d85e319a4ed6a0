package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"mpignn/graph"
)

func TestDownloadCLI(t *testing.T) {
	files := map[string]string{
		"raw/num-node-list.csv.gz": "3\n", "raw/num-edge-list.csv.gz": "2\n", "raw/edge.csv.gz": "0,1\n1,2\n",
		"raw/node-feat.csv.gz": "1,0\n0,1\n1,1\n", "raw/node-label.csv.gz": "0\n1\n0\n",
		"split/time/train.csv.gz": "0\n", "split/time/valid.csv.gz": "1\n", "split/time/test.csv.gz": "2\n",
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for p, text := range files {
		var gz bytes.Buffer
		g := gzip.NewWriter(&gz)
		g.Write([]byte(text))
		g.Close()
		w, _ := zw.Create("arxiv/" + p)
		w.Write(gz.Bytes())
	}
	zw.Close()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.ServeContent(w, r, "arxiv.zip", time.Unix(0, 0), bytes.NewReader(zb.Bytes()))
	}))
	defer srv.Close()
	root := t.TempDir()
	for i := 0; i < 2; i++ { // the second run is a no-op
		if err := runDownload([]string{"ogbn-arxiv", "--root", root, "--url", srv.URL + "/arxiv.zip", "--quiet"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	d, err := graph.ReadOGB(filepath.Join(root, "ogbn-arxiv"), graph.UndirectedOptions())
	if err != nil {
		t.Fatal(err)
	}
	if d.NumNodes != 3 || d.Splits["time"] == nil {
		t.Fatalf("downloaded dataset: %d nodes, splits %v", d.NumNodes, d.Splits)
	}
	for _, args := range [][]string{{}, {"ogbn-nope", "--root", root}, {"a", "b"}} {
		if err := runDownload(args); err == nil {
			t.Errorf("runDownload(%q) succeeded", args)
		}
	}
}
