package graph

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkFiles is a featureless, unlabelled 5-node event graph with a time
// split whose rows carry an ignored fourth column (like bitcoin-alpha's
// rating).
func linkFiles() map[string]string {
	return map[string]string{
		"raw/num-node-list.csv.gz": "5\n",
		"raw/num-edge-list.csv.gz": "5\n",
		"raw/edge.csv.gz":          "0,1\n1,2\n2,3\n3,4\n4,0\n",
		"split/time/train.csv.gz":  "0,1,10,5\n1,2,11,-3\n2,3,12,1\n",
		"split/time/valid.csv.gz":  "3,4,20,2\n",
		"split/time/test.csv.gz":   "4,0,30,1\n",
	}
}

func TestReadOGBOptionalFeaturesLabels(t *testing.T) {
	dir := writeTiny(t, linkFiles())
	// Node-classification defaults still require both files.
	_, err := ReadOGB(dir, UndirectedOptions())
	require.Error(t, err)

	opt := UndirectedOptions()
	opt.OptionalFeatures, opt.OptionalLabels = true, true
	opt.LinkSplits = []string{"time"}
	d, err := ReadOGB(dir, opt)
	require.NoError(t, err)
	assert.Nil(t, d.Feat)
	assert.Nil(t, d.Labels)
	assert.Equal(t, 0, d.NumClasses)
	assert.Empty(t, d.Splits, "split/time is a link split, not a node split")
	ls := d.LinkSplits["time"]
	require.NotNil(t, ls)
	assert.True(t, ls.HasTime)
	assert.Equal(t, LinkSet{Src: []int64{0, 1, 2}, Dst: []int64{1, 2, 3}, Time: []int64{10, 11, 12}}, ls.Train)
	assert.Equal(t, LinkSet{Src: []int64{3}, Dst: []int64{4}, Time: []int64{20}}, ls.Valid)
	assert.Equal(t, LinkSet{Src: []int64{4}, Dst: []int64{0}, Time: []int64{30}}, ls.Test)

	// Optional files that do exist are read as usual.
	d, err = ReadOGB(writeTiny(t, tinyFiles()), opt2(UndirectedOptions()))
	require.NoError(t, err)
	assert.Equal(t, 3, d.Feat.Dim)
	assert.Equal(t, 2, d.NumClasses)
}

func opt2(o ReadOptions) ReadOptions {
	o.OptionalFeatures, o.OptionalLabels = true, true
	return o
}

func TestReadLinkSplitNoTime(t *testing.T) {
	files := linkFiles()
	files["split/r/train.csv.gz"] = "0,1\n1,2\n"
	files["split/r/valid.csv.gz"] = ""
	files["split/r/test.csv.gz"] = "3,4\n"
	dir := writeTiny(t, files)
	ls, err := ReadLinkSplit(dir, "r", 5, 2)
	require.NoError(t, err)
	assert.False(t, ls.HasTime)
	assert.Nil(t, ls.Train.Time)
	assert.Equal(t, []int64{0, 1}, ls.Train.Src)
	assert.Equal(t, 0, ls.Valid.Len())
}

func TestReadLinkSplitBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"malformed", "train.csv.gz", "0,1,10\n1;2,11\n", "train.csv.gz line 2"},
		{"missing dst", "valid.csv.gz", "3\n", "valid.csv.gz line 1"},
		{"bad time", "test.csv.gz", "4,0,x\n", "test.csv.gz line 1: bad time"},
		{"out of range", "train.csv.gz", "0,1,1\n0,5,2\n", "train.csv.gz line 2: edge 0,5 has an id outside [0,5)"},
		{"negative", "train.csv.gz", "-1,1,1\n", "outside [0,5)"},
		{"empty line", "train.csv.gz", "0,1,1\n\n2,3,4\n", "train.csv.gz line 2: empty line"},
		{"shape within file", "train.csv.gz", "0,1,1\n1,2\n", "train.csv.gz line 2: src,dst columns"},
		{"shape across files", "valid.csv.gz", "3,4\n", "valid.csv.gz line 1: src,dst columns, earlier rows have src,dst,time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := linkFiles()
			files["split/time/"+tc.file] = tc.text
			dir := writeTiny(t, files)
			_, err := ReadLinkSplit(dir, "time", 5, 1)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, filepath.Join(dir, "split", "time", tc.file))
		})
	}
	t.Run("missing file", func(t *testing.T) {
		files := linkFiles()
		delete(files, "split/time/test.csv.gz")
		dir := writeTiny(t, files)
		_, err := ReadLinkSplit(dir, "time", 5, 1)
		require.ErrorContains(t, err, "missing file "+filepath.Join(dir, "split", "time", "test.csv.gz"))
	})
	t.Run("missing split", func(t *testing.T) {
		_, err := ReadLinkSplit(writeTiny(t, linkFiles()), "nope", 5, 1)
		require.ErrorContains(t, err, "missing directory")
	})
}

func TestReadLinkSplitBitcoin(t *testing.T) {
	dir := filepath.Join(dataRoot(), "bitcoinalpha")
	if !fileExists(dir) {
		t.Skipf("dataset bitcoinalpha not available at %s; set MPIGNN_DATA", dir)
	}
	ls, err := ReadLinkSplit(dir, "time", 3783, 2)
	require.NoError(t, err)
	assert.True(t, ls.HasTime)
	assert.Equal(t, [3]int{19339, 2419, 2428}, [3]int{ls.Train.Len(), ls.Valid.Len(), ls.Test.Len()})
}

// FuzzParseLinkRow: no input makes the row parser panic, and a row it
// accepts has the shape it reports.
func FuzzParseLinkRow(f *testing.F) {
	for _, s := range []string{"0,1", "0,1,2", "0,1,2,3", "-1,2,x", "1,", ",", "9223372036854775808,1", "1,2,3,4,5"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		_, _, tm, cols, err := parseLinkRow(line)
		if err != nil {
			return
		}
		if cols != 2 && cols != 3 {
			t.Fatalf("%q: %d columns", line, cols)
		}
		if cols == 2 && tm != 0 {
			t.Fatalf("%q: time %d without a time column", line, tm)
		}
	})
}
