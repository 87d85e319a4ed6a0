package graph

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// torchPython returns /usr/bin/python3 when it imports torch (Debian's
// python3-torch; a pyenv python3 earlier on PATH would hide it), or skips.
func torchPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import torch (scripts/deps.sh installs python3-torch): OGB's .pt split files are not written with real PyTorch here")
	}
	return py
}

// savePT writes each file of files (path relative to dir -> Python
// expression) with torch.save, in one Python process (importing torch
// takes seconds). An expression may use torch and the helper ids(list),
// a torch.long tensor.
func savePT(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	py := torchPython(t)
	var b strings.Builder
	b.WriteString("import torch\nids = lambda xs: torch.tensor(xs, dtype=torch.long)\n")
	for rel, expr := range files {
		path := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		legacy := ""
		if strings.HasPrefix(expr, "LEGACY ") {
			// torch's pre-1.6 format, which older OGB files may use.
			expr, legacy = strings.TrimPrefix(expr, "LEGACY "), ", _use_new_zipfile_serialization=False"
		}
		fmt.Fprintf(&b, "torch.save(%s, %q%s)\n", expr, path, legacy)
	}
	out, err := exec.Command(py, "-c", b.String()).CombinedOutput()
	require.NoError(t, err, "python: %s", out)
}

// pyList spells xs as a Python list.
func pyList(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// pyRows spells xs (row-major, k columns) as a Python list of lists.
func pyRows(xs []int64, k int) string {
	var rows []string
	for i := 0; i < len(xs); i += k {
		rows = append(rows, pyList(xs[i:i+k]))
	}
	return "[" + strings.Join(rows, ",") + "]"
}

// ptCitationSet and ptCollabSet spell a LinkSet in OGB's two layouts.
func ptCitationSet(s LinkSet) string {
	d := fmt.Sprintf("{'source_node': ids(%s), 'target_node': ids(%s)", pyList(s.Src), pyList(s.Dst))
	if s.NegK > 0 {
		// Saved transposed and back: a non-contiguous tensor, whose
		// strides the reader must follow.
		d += fmt.Sprintf(", 'target_node_neg': ids(%s).t().contiguous().t()", pyRows(s.NegDst, s.NegK))
	}
	return d + "}"
}

func ptCollabSet(s LinkSet) string {
	pairs := make([]int64, 0, 2*len(s.Src))
	for i := range s.Src {
		pairs = append(pairs, s.Src[i], s.Dst[i])
	}
	d := fmt.Sprintf("{'edge': ids(%s), 'weight': torch.ones(%d, dtype=torch.long), 'year': ids(%s)", pyRows(pairs, 2), len(s.Src), pyList(s.Time))
	if s.SharedNegSrc != nil {
		neg := make([]int64, 0, 2*len(s.SharedNegSrc))
		for i := range s.SharedNegSrc {
			neg = append(neg, s.SharedNegSrc[i], s.SharedNegDst[i])
		}
		d += fmt.Sprintf(", 'edge_neg': ids(%s)", pyRows(neg, 2))
	}
	return d + "}"
}

func TestReadLinkSplitPT(t *testing.T) {
	const n = 40
	citation := LinkSplit{
		Train: LinkSet{Src: []int64{0, 1, 2, 3, 39}, Dst: []int64{5, 6, 7, 8, 0}},
		Valid: LinkSet{Src: []int64{4, 9}, Dst: []int64{10, 11}, NegDst: []int64{1, 2, 3, 12, 13, 14}, NegK: 3},
		Test:  LinkSet{Src: []int64{7}, Dst: []int64{30}, NegDst: []int64{31, 32, 33}, NegK: 3},
	}
	collab := LinkSplit{
		Train:   LinkSet{Src: []int64{0, 2, 2}, Dst: []int64{1, 3, 3}, Time: []int64{2001, 2002, 2004}},
		Valid:   LinkSet{Src: []int64{5}, Dst: []int64{6}, Time: []int64{2018}, SharedNegSrc: []int64{7, 8}, SharedNegDst: []int64{9, 10}},
		Test:    LinkSet{Src: []int64{11, 12}, Dst: []int64{13, 14}, Time: []int64{2019, 2019}, SharedNegSrc: []int64{15, 16, 17}, SharedNegDst: []int64{18, 19, 39}},
		HasTime: true,
	}
	noYear := collab
	noYear.HasTime = false
	noYear.Train.Time, noYear.Valid.Time, noYear.Test.Time = nil, nil, nil
	cases := []struct {
		name  string
		files map[string]string
		want  *LinkSplit
	}{
		{"citation2", map[string]string{
			"train.pt": ptCitationSet(citation.Train), "valid.pt": ptCitationSet(citation.Valid), "test.pt": ptCitationSet(citation.Test),
		}, &citation},
		{"citation2-views", map[string]string{
			// Slices of larger tensors: torch.save stores the whole
			// storage with an offset, which the reader must honour.
			"train.pt": fmt.Sprintf("{'source_node': ids(%s)[1:], 'target_node': ids(%s)[:-1]}",
				pyList(append([]int64{39}, citation.Train.Src...)), pyList(append(slices.Clone(citation.Train.Dst), 39))),
			"valid.pt": ptCitationSet(citation.Valid), "test.pt": ptCitationSet(citation.Test),
		}, &citation},
		{"collab", map[string]string{
			"train.pt": ptCollabSet(collab.Train), "valid.pt": ptCollabSet(collab.Valid), "test.pt": ptCollabSet(collab.Test),
		}, &collab},
		{"collab-legacy-format", map[string]string{
			"train.pt": "LEGACY " + ptCollabSet(collab.Train), "valid.pt": "LEGACY " + ptCollabSet(collab.Valid), "test.pt": "LEGACY " + ptCollabSet(collab.Test),
		}, &collab},
		{"collab-year-in-train-only", map[string]string{
			// ppa/ddi have no year at all; a year in some files only is
			// no time column (the CSV rule: all rows or none).
			"train.pt": ptCollabSet(collab.Train),
			"valid.pt": strings.Replace(ptCollabSet(collab.Valid), "'year'", "'other'", 1),
			"test.pt":  ptCollabSet(collab.Test),
		}, &noYear},
	}
	// One Python process writes every case's files (importing torch takes
	// seconds).
	root := t.TempDir()
	all := map[string]string{}
	for _, tc := range cases {
		for f, e := range tc.files {
			all[filepath.Join(tc.name, "split", "time", f)] = e
		}
	}
	savePT(t, root, all)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadLinkSplit(filepath.Join(root, tc.name), "time", n, 2)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadLinkSplitPTBad(t *testing.T) {
	good := map[string]string{
		"train.pt": "{'source_node': ids([0, 1]), 'target_node': ids([2, 3])}",
		"valid.pt": "{'source_node': ids([4]), 'target_node': ids([5]), 'target_node_neg': ids([[6, 7]])}",
		"test.pt":  "{'source_node': ids([8]), 'target_node': ids([9]), 'target_node_neg': ids([[1, 2]])}",
	}
	cases := []struct {
		name, file, expr, want string
	}{
		{"list-not-dict", "train.pt", "[ids([0, 1]), ids([2, 3])]", "holds a list, want a dict of tensors"},
		{"missing-key", "valid.pt", "{'source_node': ids([4]), 'target_node': ids([5])}", `missing key "target_node_neg"`},
		{"neg-1d", "test.pt", "{'source_node': ids([8]), 'target_node': ids([9]), 'target_node_neg': ids([1, 2])}", `key "target_node_neg": has 1 dimensions [2], want 2`},
		{"neg-rows", "test.pt", "{'source_node': ids([8]), 'target_node': ids([9]), 'target_node_neg': ids([[1, 2], [3, 4]])}", "shape [2 2], want [1 K]"},
		{"float-ids", "train.pt", "{'source_node': torch.tensor([0.0, 1.0]), 'target_node': ids([2, 3])}", "dtype float32, want int64"},
		{"int32-ids", "train.pt", "{'source_node': torch.tensor([0, 1], dtype=torch.int32), 'target_node': ids([2, 3])}", "dtype int32, want int64"},
		{"id-out-of-range", "train.pt", "{'source_node': ids([0, 10]), 'target_node': ids([2, 3])}", "node id 10 (entry 1) outside [0,10)"},
		{"negative-id", "valid.pt", "{'source_node': ids([4]), 'target_node': ids([5]), 'target_node_neg': ids([[6, -1]])}", "node id -1 (entry 1) outside [0,10)"},
		{"ragged", "train.pt", "{'source_node': ids([0, 1, 2]), 'target_node': ids([2, 3])}", "3 source nodes but 2 target nodes"},
		{"no-layout", "train.pt", "{'src': ids([0])}", `missing key "source_node" or "edge"`},
		{"mixed-layouts", "test.pt", "{'edge': ids([[0, 1]]), 'edge_neg': ids([[1, 2]])}", "but train.pt has the source_node"},
		{"edge-3-columns", "train.pt", "{'edge': ids([[0, 1, 2]])}", `key "edge" has shape [1 3], want [E 2]`},
		{"not-torch", "train.pt", "NOTTORCH", "not a readable torch.save file"},
	}
	// One Python process writes every case's files; "good" is the good
	// files alone, which read, so each case fails for its own reason.
	root := t.TempDir()
	all := map[string]string{}
	for f, e := range good {
		all[filepath.Join("good", "split", "time", f)] = e
	}
	for _, tc := range cases {
		for f, e := range good {
			if f == tc.file {
				e = tc.expr
			}
			if e != "NOTTORCH" {
				all[filepath.Join(tc.name, "split", "time", f)] = e
			}
		}
	}
	savePT(t, root, all)
	_, err := ReadLinkSplit(filepath.Join(root, "good"), "time", 10, 1)
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(root, tc.name, "split", "time", tc.file)
			if tc.expr == "NOTTORCH" {
				require.NoError(t, os.WriteFile(path, []byte("PK\x03\x04 not a zip"), 0o644))
			}
			_, err := ReadLinkSplit(filepath.Join(root, tc.name), "time", 10, 1)
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, path, "the error names the file")
			assert.Contains(t, msg, tc.want)
			assert.NotContains(t, msg, "\n", "one line")
		})
	}
}

// TestDownloadLinkDataset: `download ogbl-collab` unpacks a zip laid out as
// OGB publishes collab.zip (collab/raw/*.csv.gz, collab/split/time/*.pt;
// here small and generated, as the network is not reachable in tests), and
// the result reads as a link dataset with OGB's stored negatives.
func TestDownloadLinkDataset(t *testing.T) {
	src := t.TempDir()
	collab := LinkSplit{
		Train: LinkSet{Src: []int64{0, 1}, Dst: []int64{1, 2}, Time: []int64{2010, 2011}},
		Valid: LinkSet{Src: []int64{2}, Dst: []int64{3}, Time: []int64{2018}, SharedNegSrc: []int64{0}, SharedNegDst: []int64{3}},
		Test:  LinkSet{Src: []int64{3}, Dst: []int64{0}, Time: []int64{2019}, SharedNegSrc: []int64{1, 2}, SharedNegDst: []int64{3, 0}},
	}
	savePT(t, src, map[string]string{"train.pt": ptCollabSet(collab.Train), "valid.pt": ptCollabSet(collab.Valid), "test.pt": ptCollabSet(collab.Test)})
	pts := map[string]string{}
	for _, f := range []string{"train.pt", "valid.pt", "test.pt"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		pts["collab/split/time/"+f] = string(b)
	}
	zipped := makeDatasetZip(t, "collab/", map[string]string{
		"raw/edge.csv.gz": "0,1\n1,2\n", "raw/num-node-list.csv.gz": "4\n", "raw/num-edge-list.csv.gz": "2\n",
		"raw/node-feat.csv.gz": "1,0\n0,1\n1,1\n0,0\n", "raw/edge_year.csv.gz": "2010\n2011\n", "raw/edge_weight.csv.gz": "1\n1\n",
	}, pts)
	srv := httptest.NewServer(&zipServer{data: zipped})
	defer srv.Close()
	root := t.TempDir()
	dir, err := Download(t.Context(), "ogbl-collab", root, DownloadOptions{URL: srv.URL + "/collab.zip"})
	require.NoError(t, err)
	opt := UndirectedOptions()
	opt.OptionalLabels, opt.Splits, opt.LinkSplits = true, []string{}, []string{"time"}
	d, err := ReadOGB(dir, opt)
	require.NoError(t, err)
	collab.HasTime = true
	assert.Equal(t, &collab, d.LinkSplits["time"])

	// Read as a node dataset, its split/time is named for what it is.
	opt = UndirectedOptions()
	opt.OptionalLabels = true
	_, err = ReadOGB(dir, opt)
	require.ErrorContains(t, err, "holds OGB's link split files (train.pt, ...), not a node split; use it as a link split (partition --link-split time)")
}
