package partition

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// sparseDataset is communityDataset with wide features, about 3 % nonzero
// (some rows empty), as bag-of-words datasets have.
func sparseDataset(n int64, seed uint64) *graph.Dataset {
	d := communityDataset(n, 3, seed)
	const dim = 40
	r := rand.New(rand.NewPCG(seed, 9))
	d.Feat = &graph.Features{Dim: dim, Data: make([]float32, n*dim)}
	for i := range d.Feat.Data {
		if r.Float64() < 0.03 {
			d.Feat.Data[i] = float32(1 + r.IntN(3))
		}
	}
	return d
}

// TestSparseRoundTrip: a sparse partition holds exactly the rows of the
// dense partition of the same assignment (owned and halo), and a dense
// partition's META does not mention sparse features.
func TestSparseRoundTrip(t *testing.T) {
	d := sparseDataset(500, 1)
	for _, tc := range []struct {
		name  string
		parts int
		halo  bool
		mode  string
	}{
		{"1-on", 1, false, SparseOn},
		{"3-halo-auto", 3, true, SparseAuto},
		{"4-random-on", 4, false, SparseOn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			opt := Options{Method: MethodRandom, Seed: 2, HaloFeats: tc.halo}
			md, err := WriteDataset(filepath.Join(base, "dense"), d, tc.parts, opt)
			require.NoError(t, err)
			require.False(t, md.SparseFeat)
			raw, err := os.ReadFile(filepath.Join(base, "dense", MetaFile))
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "sparse_feat")
			assert.NotContains(t, string(raw), "feat_nnz")

			opt.SparseFeatures = tc.mode
			ms, err := WriteDataset(filepath.Join(base, "sparse"), d, tc.parts, opt)
			require.NoError(t, err)
			require.True(t, ms.SparseFeat)
			dense, sparse := loadAll(t, filepath.Join(base, "dense")), loadAll(t, filepath.Join(base, "sparse"))
			var nnz int64
			for p := range dense {
				require.Nil(t, sparse[p].Feat)
				require.NotNil(t, sparse[p].FeatCSR)
				assert.Equal(t, dense[p].Feat, sparse[p].FeatCSR.Dense(d.Feat.Dim), "part %d owned rows", p)
				assert.Equal(t, dense[p].Orig, sparse[p].Orig)
				nnz += sparse[p].FeatCSR.NNZ()
				assert.Equal(t, ms.Parts[p].FeatNNZ, sparse[p].FeatCSR.NNZ())
				if tc.halo {
					assert.Equal(t, dense[p].HaloFeat, sparse[p].HaloFeatCSR.Dense(d.Feat.Dim), "part %d halo rows", p)
				} else {
					assert.Nil(t, sparse[p].HaloFeatCSR)
				}
			}
			assert.InDelta(t, Density(d.Feat), float64(nnz)/float64(len(d.Feat.Data)), 1e-12)
			assert.True(t, ms.Stats().SparseFeat)
		})
	}
}

// TestSparseDecision: auto stores dense features dense, and bad modes or
// unsupported combinations are one clear error.
func TestSparseDecision(t *testing.T) {
	dense := communityDataset(100, 2, 3).Feat
	sparse := sparseDataset(100, 3).Feat
	for _, tc := range []struct {
		name         string
		mode         string
		f            *graph.Features
		hetero, link bool
		want         bool
		err          string
	}{
		{"off", SparseOff, sparse, false, false, false, ""},
		{"empty is off", "", sparse, false, false, false, ""},
		{"auto sparse", SparseAuto, sparse, false, false, true, ""},
		{"auto dense", SparseAuto, dense, false, false, false, ""},
		{"auto link", SparseAuto, sparse, false, true, false, ""},
		{"auto hetero", SparseAuto, nil, true, false, false, ""},
		{"on dense", SparseOn, dense, false, false, true, ""},
		{"on link", SparseOn, sparse, false, true, true, ""},
		{"on hetero", SparseOn, nil, true, false, false, "heterogeneous"},
		{"on featureless", SparseOn, nil, false, false, false, "no node features"},
		{"bad mode", "yes", sparse, false, false, false, `"yes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UseSparse(tc.mode, tc.f, tc.hetero, tc.link)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestSparseLoadValidates: structurally bad CSR files (with matching
// checksums) are refused with an error naming the file.
func TestSparseLoadValidates(t *testing.T) {
	d := sparseDataset(200, 4)
	src := filepath.Join(t.TempDir(), "src")
	_, err := WriteDataset(src, d, 2, Options{Method: MethodRandom, SparseFeatures: SparseOn})
	require.NoError(t, err)
	good, err := Load(src, 0)
	require.NoError(t, err)
	c := good.FeatCSR
	row := -1 // a row with two or more entries
	for i := range c.Rows() {
		if c.Indptr[i+1]-c.Indptr[i] >= 2 {
			row = i
			break
		}
	}
	require.GreaterOrEqual(t, row, 0)
	e := c.Indptr[row]
	for _, tc := range []struct {
		name    string
		file    string
		indptr  func([]int64)
		indices func([]int32)
		want    string
	}{
		{"column out of range", fileFeatIndices, nil, func(x []int32) { x[e] = 40 }, "outside [0,40)"},
		{"columns unsorted", fileFeatIndices, nil, func(x []int32) { x[e], x[e+1] = x[e+1], x[e] }, "not ascending"},
		{"offsets decrease", fileFeatIndptr, func(x []int64) { x[row+1] = x[row] - 1 }, nil, "decrease"},
		{"offsets end", fileFeatIndptr, func(x []int64) { x[len(x)-1]-- }, nil, "offsets run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			m, err := LoadMeta(dir)
			require.NoError(t, err)
			aw, err := newArrayWriter(1)
			require.NoError(t, err)
			defer aw.close()
			pdir := filepath.Join(dir, partDir(0))
			if tc.indptr != nil {
				x := append([]int64(nil), c.Indptr...)
				tc.indptr(x)
				require.NoError(t, putArray(m.Files, aw, pdir, 0, tc.file, x))
			} else {
				x := append([]int32(nil), c.Indices...)
				tc.indices(x)
				require.NoError(t, putArray(m.Files, aw, pdir, 0, tc.file, x))
			}
			b, err := json.MarshalIndent(m, "", "  ")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644))
			_, err = Load(dir, 0)
			require.ErrorContains(t, err, filepath.Join(pdir, tc.file))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
