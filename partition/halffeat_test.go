package partition

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/internal/half"
)

// noisyDataset is communityDataset with 32 features of Gaussian noise
// around a class centroid, as gen's graphs have: values that do not
// compress away, so file sizes show the bytes per value.
func noisyDataset(n int64, seed uint64) *graph.Dataset {
	d := communityDataset(n, 4, seed)
	const dim = 32
	r := rand.New(rand.NewPCG(seed, 11))
	d.Feat = &graph.Features{Dim: dim, Data: make([]float32, n*dim)}
	for v := range n {
		for j := range int64(dim) {
			d.Feat.Data[v*dim+j] = float32(d.Labels[v]) + float32(r.NormFloat64())
		}
	}
	return d
}

// rounded returns xs rounded through kind and widened back.
func rounded(kind half.Kind, xs []float32) []float32 {
	bits := make([]uint16, len(xs))
	half.Narrow(kind, bits, xs)
	out := make([]float32, len(xs))
	half.Widen(kind, out, bits)
	return out
}

// TestHalfFeatRoundTrip: a bf16 or fp16 partition holds, owned and halo
// rows, exactly the float32 partition's rows of the same assignment
// rounded through the type (also when a share is loaded with LoadRange),
// its feature files hold half the bytes of values, and META names the type.
func TestHalfFeatRoundTrip(t *testing.T) {
	d := noisyDataset(600, 3)
	tests := []struct {
		name  string
		kind  half.Kind
		parts int
	}{
		{"bf16-1", half.BF16, 1},
		{"bf16-3", half.BF16, 3},
		{"fp16-2", half.FP16, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			opt := Options{Method: MethodRandom, Seed: 2, HaloFeats: true}
			m32, err := WriteDataset(filepath.Join(base, "fp32"), d, tc.parts, opt)
			require.NoError(t, err)
			opt.FeatDType = tc.kind.String()
			m16, err := WriteDataset(filepath.Join(base, "half"), d, tc.parts, opt)
			require.NoError(t, err)
			assert.Equal(t, tc.kind.String(), m16.FeatDType)
			assert.Equal(t, tc.kind, m16.FeatKind())
			assert.Equal(t, half.F32, m32.FeatKind())

			full, halfp := loadAll(t, filepath.Join(base, "fp32")), loadAll(t, filepath.Join(base, "half"))
			for p := range full {
				require.Nil(t, halfp[p].Feat)
				require.Nil(t, halfp[p].HaloFeat)
				got := make([]float32, len(halfp[p].Feat16))
				half.Widen(tc.kind, got, halfp[p].Feat16)
				assert.Equal(t, rounded(tc.kind, full[p].Feat), got, "part %d owned rows", p)
				gotHalo := make([]float32, len(halfp[p].HaloFeat16))
				half.Widen(tc.kind, gotHalo, halfp[p].HaloFeat16)
				assert.Equal(t, rounded(tc.kind, full[p].HaloFeat), gotHalo, "part %d halo rows", p)
				files := []string{fileFeat}
				if tc.parts > 1 {
					assert.NotEmpty(t, gotHalo)
					files = append(files, fileHaloFeat)
				}
				for _, name := range files {
					key := partDir(p) + "/" + name
					f32, f16 := m32.Files[key], m16.Files[key]
					assert.Equal(t, f32.Len, f16.Len, key)
					assert.Equal(t, map[half.Kind]string{half.BF16: "bfloat16", half.FP16: "float16"}[tc.kind], f16.DType)
					// The zstd payload: two bytes a value against four
					// (noise does not compress much either way).
					ratio := float64(f16.Bytes-arrayHeaderSize) / float64(f32.Bytes-arrayHeaderSize)
					assert.Less(t, ratio, 0.62, "%s: %d bytes against %d", key, f16.Bytes, f32.Bytes)
				}
				// A share of the part (LoadRange) holds the same rounded rows.
				lo, hi := int64(5), full[p].NumOwned()-7
				sh, err := LoadRange(filepath.Join(base, "half"), m16, p, lo, hi)
				require.NoError(t, err)
				dim := int64(d.Feat.Dim)
				assert.Equal(t, halfp[p].Feat16[lo*dim:hi*dim], sh.Feat16, "part %d share", p)
			}
		})
	}
}

// TestHalfFeatFP32Unchanged: --feat-dtype fp32 writes the very partition
// of no option (META without feat_dtype, the same digests), so float32
// partitions and their goldens are those of earlier builds.
func TestHalfFeatFP32Unchanged(t *testing.T) {
	d := noisyDataset(300, 4)
	base := t.TempDir()
	ma, err := WriteDataset(filepath.Join(base, "a"), d, 2, Options{Method: MethodRandom})
	require.NoError(t, err)
	mb, err := WriteDataset(filepath.Join(base, "b"), d, 2, Options{Method: MethodRandom, FeatDType: "fp32"})
	require.NoError(t, err)
	assert.Equal(t, ma.Files, mb.Files)
	a, err := os.ReadFile(filepath.Join(base, "a", MetaFile))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(base, "b", MetaFile))
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.NotContains(t, string(a), "feat_dtype")
}

// TestHalfFeatRefused: what a 2-byte type cannot store is one error naming
// the option, and nothing is left at the output path.
func TestHalfFeatRefused(t *testing.T) {
	big := noisyDataset(200, 5)
	big.Feat.Data[17*32+9] = 70000
	nan := noisyDataset(200, 5)
	nan.Feat.Data[3*32+1] = float32(math.NaN())
	tests := []struct {
		name string
		d    *graph.Dataset
		opt  Options
		err  string
	}{
		{"fp16 overflow", big, Options{FeatDType: "fp16"},
			"FeatDType fp16: dataset community, node 17 (line 18 of raw/node-feat.csv.gz), column 9: value 70000 is not finite or beyond float16's range (|x| <= 65504)"},
		{"fp16 NaN", nan, Options{FeatDType: "fp16"},
			"FeatDType fp16: dataset community, node 3 (line 4 of raw/node-feat.csv.gz), column 1: value NaN is not finite or beyond float16's range (|x| <= 65504)"},
		{"sparse on", noisyDataset(100, 1), Options{FeatDType: "bf16", SparseFeatures: SparseOn},
			"FeatDType bf16 with SparseFeatures on: sparse rows store float32 values (use auto or off)"},
		{"unknown type", noisyDataset(100, 1), Options{FeatDType: "fp8"},
			`FeatDType: feature type "fp8": want fp32, bf16 or fp16`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			tc.opt.Method = MethodRandom
			_, err := WriteDataset(out, tc.d, 2, tc.opt)
			require.EqualError(t, err, tc.err)
			_, serr := os.Stat(out)
			assert.True(t, os.IsNotExist(serr), "output left behind")
			entries, err := os.ReadDir(filepath.Dir(out))
			require.NoError(t, err)
			assert.Empty(t, entries, "temporary output left behind")
		})
	}
	// bf16 takes the same values: 70000 and NaN round to bfloat16.
	_, err := WriteDataset(filepath.Join(t.TempDir(), "out"), big, 2, Options{Method: MethodRandom, FeatDType: "bf16"})
	require.NoError(t, err)
	// Options.Validate refuses a link split with a 2-byte type up front.
	err = Options{FeatDType: "bf16", Link: &LinkOptions{Split: "random:0.8,0.1,0.1"}}.Validate()
	require.EqualError(t, err, "FeatDType bf16 with a link split (Link): not supported yet (link partitions store float32 features)")
}

// TestHalfFeatHeteroRefused: heterogeneous typed features stay float32.
func TestHalfFeatHeteroRefused(t *testing.T) {
	_, err := WriteHeteroDataset(filepath.Join(t.TempDir(), "out"), heteroDataset(t, 1), 2, Options{Method: MethodRandom, FeatDType: "bf16"})
	require.EqualError(t, err, "FeatDType bf16: heterogeneous partitions store their typed features as float32 (use fp32)")
}

// TestHalfFeatMetaChecked: a META whose feat_dtype contradicts its files or
// other fields is refused at load.
func TestHalfFeatMetaChecked(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m *Meta)
		wants string
	}{
		{"unknown", func(m *Meta) { m.FeatDType = "fp8" }, `feat_dtype: feature type "fp8"`},
		{"fp32 spelled", func(m *Meta) { m.FeatDType = "fp32" }, `feat_dtype "fp32": float32 partitions leave feat_dtype out`},
		{"files say float32", func(m *Meta) { m.FeatDType = "bf16" }, "records float32"},
		{"other half type", func(m *Meta) { m.FeatDType = "fp16" }, "records bfloat16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind := "bf16"
			if tc.name == "files say float32" {
				kind = ""
			}
			m, err := WriteDataset(filepath.Join(t.TempDir(), "p"), noisyDataset(100, 2), 1, Options{Method: MethodRandom, FeatDType: kind})
			require.NoError(t, err)
			tc.edit(m)
			err = m.validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wants)
		})
	}
}
