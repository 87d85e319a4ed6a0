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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(t, runDownload([]string{"ogbn-arxiv", "--root", root, "--url", srv.URL + "/arxiv.zip", "--quiet"}))
	}
	require.Equal(t, int32(1), requests.Load(), "requests")
	d, err := graph.ReadOGB(filepath.Join(root, "ogbn-arxiv"), graph.UndirectedOptions())
	require.NoError(t, err)
	require.Equal(t, int64(3), d.NumNodes)
	require.NotNil(t, d.Splits["time"], "splits %v", d.Splits)
	for _, args := range [][]string{{}, {"ogbn-nope", "--root", root}, {"a", "b"}} {
		assert.Error(t, runDownload(args), "runDownload(%q)", args)
	}
}
