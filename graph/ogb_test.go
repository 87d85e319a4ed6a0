package graph

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dataRoot locates the shared real datasets: $MPIGNN_DATA, else
// ../shared/data relative to the repository root.
func dataRoot() string {
	if d := os.Getenv("MPIGNN_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "data")
}

// writeGz writes text gzip'd with the standard library (not this package's
// writer), so reader tests do not depend on the writer.
func writeGz(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyFiles is a 5-node ring with 2 classes, 3 features and one split
// "s"; keys are paths relative to the dataset directory.
func tinyFiles() map[string]string {
	return map[string]string{
		"raw/num-node-list.csv.gz": "5\n",
		"raw/num-edge-list.csv.gz": "5\n",
		"raw/edge.csv.gz":          "0,1\n1,2\n2,3\n3,4\n0,4\n",
		"raw/node-feat.csv.gz":     "1,0,0.5\n0,1,-2\n1,1,1e-3\n0,0,0\n0.25,0.75,3\n",
		"raw/node-label.csv.gz":    "0\n1\n0\n1\n1\n",
		"split/s/train.csv.gz":     "0\n1\n",
		"split/s/valid.csv.gz":     "2\n",
		"split/s/test.csv.gz":      "3\n4\n",
	}
}

func writeTiny(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, text := range files {
		writeGz(t, filepath.Join(dir, p), text)
	}
	return dir
}

func TestReadOGBTiny(t *testing.T) {
	dir := writeTiny(t, tinyFiles())
	for _, workers := range []int{1, 3} {
		opt := UndirectedOptions()
		opt.Workers = workers
		d, err := ReadOGB(dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		if d.NumNodes != 5 || d.NumClasses != 2 || d.Feat.Dim != 3 {
			t.Fatalf("nodes=%d classes=%d dim=%d, want 5 2 3", d.NumNodes, d.NumClasses, d.Feat.Dim)
		}
		wantIn := [][]int64{{1, 4}, {0, 2}, {1, 3}, {2, 4}, {0, 3}}
		for v, want := range wantIn {
			if got := d.In.Neighbors(int64(v)); !slices.Equal(got, want) {
				t.Errorf("workers=%d: in-neighbors of %d = %v, want %v", workers, v, got, want)
			}
		}
		wantFeat := []float32{1, 0, 0.5, 0, 1, -2, 1, 1, 1e-3, 0, 0, 0, 0.25, 0.75, 3}
		if !slices.Equal(d.Feat.Data, wantFeat) {
			t.Errorf("features %v, want %v", d.Feat.Data, wantFeat)
		}
		if !slices.Equal(d.Labels, []int32{0, 1, 0, 1, 1}) {
			t.Errorf("labels %v", d.Labels)
		}
		s := d.Splits["s"]
		if s == nil || !slices.Equal(s.Train, []int64{0, 1}) || !slices.Equal(s.Valid, []int64{2}) || !slices.Equal(s.Test, []int64{3, 4}) {
			t.Errorf("split s = %+v", s)
		}
	}
}

func TestReadOGBOptions(t *testing.T) {
	files := tinyFiles()
	files["raw/num-edge-list.csv.gz"] = "7\n"
	// A self loop and a duplicate (in both directions) on top of the ring.
	files["raw/edge.csv.gz"] = "0,1\n1,2\n2,3\n3,4\n0,4\n2,2\n1,0\n"
	dir := writeTiny(t, files)
	cases := []struct {
		name string
		opt  ReadOptions
		want [][]int64
	}{
		{"directed", ReadOptions{}, [][]int64{{1}, {0}, {1, 2}, {2}, {0, 3}}},
		{"undirected", ReadOptions{Undirected: true}, [][]int64{{1, 1, 4}, {0, 0, 2}, {1, 2, 2, 3}, {2, 4}, {0, 3}}},
		{"undirected-clean", UndirectedOptions(), [][]int64{{1, 4}, {0, 2}, {1, 3}, {2, 4}, {0, 3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := ReadOGB(dir, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			for v, want := range c.want {
				if got := d.In.Neighbors(int64(v)); !slices.Equal(got, want) {
					t.Errorf("in-neighbors of %d = %v, want %v", v, got, want)
				}
			}
		})
	}
	opt := UndirectedOptions()
	opt.NormalizeFeatures = true
	d, err := ReadOGB(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Feat.Row(0); !slices.Equal(got, []float32{1 / 1.5, 0, 0.5 / 1.5}) {
		t.Errorf("normalized row 0 = %v", got)
	}
	if got := d.Feat.Row(3); !slices.Equal(got, []float32{0, 0, 0}) {
		t.Errorf("all-zero row changed by normalization: %v", got)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	d, err := ReadOGB(writeTiny(t, tinyFiles()), UndirectedOptions())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy")
	if err := WriteOGBFromDataset(out, d); err != nil {
		t.Fatal(err)
	}
	e, err := ReadOGB(out, UndirectedOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.In.Indptr, e.In.Indptr) || !slices.Equal(d.In.Indices, e.In.Indices) ||
		!slices.Equal(d.Feat.Data, e.Feat.Data) || !slices.Equal(d.Labels, e.Labels) ||
		!slices.Equal(d.Splits["s"].Test, e.Splits["s"].Test) {
		t.Fatal("round trip changed the dataset")
	}
	if err := WriteOGBFromDataset(out, d); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("overwriting a dataset: err = %v, want a refusal", err)
	}
}

// TestReadOGBBadInput changes one file of the tiny dataset per case and
// wants one error that names the file and, where there is one, the line.
func TestReadOGBBadInput(t *testing.T) {
	cases := []struct {
		name   string
		file   string // relative path to replace ("" = delete `remove`)
		text   string
		remove string
		opt    ReadOptions
		want   []string // substrings of the error
	}{
		{name: "edge missing comma", file: "raw/edge.csv.gz", text: "0,1\n1 2\n2,3\n3,4\n0,4\n",
			want: []string{"edge.csv.gz line 2", "src,dst"}},
		{name: "edge extra field", file: "raw/edge.csv.gz", text: "0,1\n1,2\n2,3,9\n3,4\n0,4\n",
			want: []string{"edge.csv.gz line 3", "src,dst"}},
		{name: "edge not a number", file: "raw/edge.csv.gz", text: "0,1\n1,2\n2,3\n3,x\n0,4\n",
			want: []string{"edge.csv.gz line 4", "destination"}},
		{name: "edge negative id", file: "raw/edge.csv.gz", text: "0,1\n-1,2\n2,3\n3,4\n0,4\n",
			want: []string{"edge.csv.gz line 2", "outside [0,5)"}},
		{name: "edge id too large", file: "raw/edge.csv.gz", text: "0,1\n1,2\n2,3\n3,4\n0,5\n",
			want: []string{"edge.csv.gz line 5", "outside [0,5)"}},
		{name: "edge id overflow", file: "raw/edge.csv.gz", text: "0,1\n1,99999999999999999999\n2,3\n3,4\n0,4\n",
			want: []string{"edge.csv.gz line 2", "out of range"}},
		{name: "fewer edges than num-edge-list", file: "raw/edge.csv.gz", text: "0,1\n1,2\n2,3\n3,4\n",
			want: []string{"edge.csv.gz", "4 edge lines", "says 5"}},
		{name: "more edges than num-edge-list", file: "raw/edge.csv.gz", text: "0,1\n1,2\n2,3\n3,4\n0,4\n1,3\n",
			want: []string{"edge.csv.gz line 6", "num-edge-list"}},
		{name: "implausible edge count", file: "raw/num-edge-list.csv.gz", text: "999999999999\n",
			want: []string{"num-edge-list.csv.gz", "edge.csv.gz", "at most"}},
		{name: "node count not a number", file: "raw/num-node-list.csv.gz", text: "five\n",
			want: []string{"num-node-list.csv.gz line 1", "not an integer"}},
		{name: "two node counts", file: "raw/num-node-list.csv.gz", text: "5\n5\n",
			want: []string{"num-node-list.csv.gz", "exactly one"}},
		{name: "label outside classes", file: "raw/node-label.csv.gz", text: "0\n1\n2\n1\n1\n", opt: ReadOptions{NumClasses: 2},
			want: []string{"node-label.csv.gz line 3", "label 2 outside [0,2)"}},
		{name: "negative label", file: "raw/node-label.csv.gz", text: "0\n1\n0\n-1\n1\n",
			want: []string{"node-label.csv.gz line 4", "label -1"}},
		{name: "fewer labels than nodes", file: "raw/node-label.csv.gz", text: "0\n1\n0\n1\n",
			want: []string{"node-label.csv.gz", "4 labels", "(5)"}},
		{name: "more labels than nodes", file: "raw/node-label.csv.gz", text: "0\n1\n0\n1\n1\n0\n",
			want: []string{"node-label.csv.gz line 6", "more label lines"}},
		{name: "feature row too short", file: "raw/node-feat.csv.gz", text: "1,0,0.5\n0,1,-2\n1,1\n0,0,0\n0.25,0.75,3\n",
			want: []string{"node-feat.csv.gz line 3", "2 values, want 3"}},
		{name: "feature row too long", file: "raw/node-feat.csv.gz", text: "1,0,0.5\n0,1,-2\n1,1,1\n0,0,0,0\n0.25,0.75,3\n",
			want: []string{"node-feat.csv.gz line 4", "more than 3 values"}},
		{name: "feature not a number", file: "raw/node-feat.csv.gz", text: "1,0,0.5\n0,abc,-2\n1,1,1\n0,0,0\n0.25,0.75,3\n",
			want: []string{"node-feat.csv.gz line 2", "value 2", "abc"}},
		{name: "feature NaN", file: "raw/node-feat.csv.gz", text: "1,0,0.5\n0,1,-2\n1,1,1\n0,0,NaN\n0.25,0.75,3\n",
			want: []string{"node-feat.csv.gz line 4", "non-finite"}},
		{name: "fewer feature rows than nodes", file: "raw/node-feat.csv.gz", text: "1,0,0.5\n0,1,-2\n1,1,1\n",
			want: []string{"node-feat.csv.gz", "3 feature rows", "(5)"}},
		{name: "split id out of range", file: "split/s/valid.csv.gz", text: "7\n",
			want: []string{"valid.csv.gz line 1", "outside [0,5)"}},
		{name: "split ids overlap", file: "split/s/test.csv.gz", text: "3\n1\n",
			want: []string{"test.csv.gz", "line 2", "already in train"}},
		{name: "split file malformed", file: "split/s/train.csv.gz", text: "0\n1,2\n",
			want: []string{"train.csv.gz line 2", "not an integer"}},
		{name: "missing split file", remove: "split/s/test.csv.gz",
			want: []string{"missing file", "test.csv.gz"}},
		{name: "missing edge file", remove: "raw/edge.csv.gz",
			want: []string{"missing file", "edge.csv.gz"}},
		{name: "not gzip", file: "raw/node-label.csv.gz", text: "",
			want: []string{"node-label.csv.gz", "not a gzip file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeTiny(t, tinyFiles())
			switch {
			case c.remove != "":
				if err := os.Remove(filepath.Join(dir, c.remove)); err != nil {
					t.Fatal(err)
				}
			case c.name == "not gzip":
				if err := os.WriteFile(filepath.Join(dir, c.file), []byte("0\n1\n0\n1\n1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			default:
				writeGz(t, filepath.Join(dir, c.file), c.text)
			}
			opt := c.opt
			opt.Undirected = true
			d, err := ReadOGB(dir, opt)
			if err == nil {
				t.Fatalf("no error; read %d nodes", d.NumNodes)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			t.Log(err)
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

// TestReadRealDatasets reads the shared datasets and checks them against
// their own count files and the README's promises.
func TestReadRealDatasets(t *testing.T) {
	for _, name := range []string{"cora", "citeseer", "facebook"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(dataRoot(), name)
			if _, err := os.Stat(filepath.Join(dir, "raw")); err != nil {
				t.Skipf("dataset %s not present (%v); set MPIGNN_DATA", dir, err)
			}
			n, err := readSingleNumber(filepath.Join(dir, "raw", "num-node-list.csv.gz"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := readSingleNumber(filepath.Join(dir, "raw", "num-edge-list.csv.gz"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := ReadOGB(dir, UndirectedOptions())
			if err != nil {
				t.Fatal(err)
			}
			if d.NumNodes != n || d.In.NumRows() != n || d.Feat.NumRows() != n || int64(len(d.Labels)) != n {
				t.Fatalf("nodes: dataset %d, csr rows %d, feature rows %d, labels %d; num-node-list says %d",
					d.NumNodes, d.In.NumRows(), d.Feat.NumRows(), len(d.Labels), n)
			}
			// Every pair is stored once without loops or duplicates, so
			// the symmetric graph has exactly twice the lines.
			if d.In.NumEdges() != 2*m {
				t.Fatalf("%d in-edges, want 2 x %d (num-edge-list)", d.In.NumEdges(), m)
			}
			if err := d.In.Validate(n); err != nil {
				t.Fatal(err)
			}
			for v := int64(0); v < n; v++ {
				nb := d.In.Neighbors(v)
				for i := 1; i < len(nb); i++ {
					if nb[i] <= nb[i-1] {
						t.Fatalf("row %d not strictly ascending: %v", v, nb)
					}
				}
				for _, u := range nb {
					if _, ok := slices.BinarySearch(d.In.Neighbors(u), v); !ok {
						t.Fatalf("edge %d->%d has no reverse", u, v)
					}
				}
			}
			for v, l := range d.Labels {
				if l < 0 || int(l) >= d.NumClasses {
					t.Fatalf("node %d label %d outside [0,%d)", v, l, d.NumClasses)
				}
			}
			if len(d.Splits) == 0 {
				t.Fatal("no splits")
			}
			for sname, s := range d.Splits {
				seen := make(map[int64]string)
				for part, ids := range map[string][]int64{"train": s.Train, "valid": s.Valid, "test": s.Test} {
					if len(ids) == 0 {
						t.Errorf("split %s: empty %s", sname, part)
					}
					for _, v := range ids {
						if other, ok := seen[v]; ok {
							t.Fatalf("split %s: node %d in %s and %s", sname, v, other, part)
						}
						seen[v] = part
					}
				}
				t.Logf("%s split %s: %d/%d/%d", name, sname, len(s.Train), len(s.Valid), len(s.Test))
			}
			t.Logf("%s: %d nodes, %d edge lines, dim %d, %d classes", name, n, m, d.Feat.Dim, d.NumClasses)
		})
	}
}
