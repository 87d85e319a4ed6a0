package graph

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallMag is an ogbn-mag-shaped graph of a few thousand nodes.
func smallMag(seed uint64) HeteroGenOptions {
	return HeteroGenOptions{
		Papers: 4000, Authors: 6000, Institutions: 60, Fields: 400,
		Cites: 30000, Writes: 40000, Affiliations: 6000, Topics: 40000,
		Classes: 10, FeatDim: 16, FeatSep: 1, Seed: seed,
	}
}

func TestGenerateHeteroShape(t *testing.T) {
	d, st, err := GenerateHeteroStats(smallMag(1))
	require.NoError(t, err)
	s := d.Schema
	require.Equal(t, []string{"author", "field_of_study", "institution", "paper"}, s.NodeTypes)
	require.Equal(t, []int64{0, 6000, 6400, 6460, 10460}, s.NodeOrig)
	want := map[string]int64{
		"author___affiliated_with___institution": 6000, "author___writes___paper": 40000,
		"paper___cites___paper": 30000, "paper___has_topic___field_of_study": 40000,
	}
	require.Equal(t, want, st.Edges)
	R := int64(s.NumRels())
	require.EqualValues(t, 4, R)
	require.NoError(t, d.In.Validate(d.NumNodes()))
	got := map[string]int64{}
	for v := int64(0); v < d.NumNodes(); v++ {
		for r := int64(0); r < R; r++ {
			nb := d.In.Neighbors(v*R + r)
			if len(nb) == 0 {
				continue
			}
			got[s.Relations[r].String()] += int64(len(nb))
			require.Equal(t, s.DstType(int(r)), s.TypeOf(v), "row type")
			for i, u := range nb {
				require.Equal(t, s.SrcType(int(r)), s.TypeOf(u), "source type")
				if i > 0 {
					require.Less(t, nb[i-1], u, "ascending, distinct")
				}
				require.NotEqual(t, u, v, "no self citation")
			}
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, 16, d.Feat["paper"].Dim)
	require.Len(t, d.Feat, 1, "features on papers only")
	require.Len(t, d.Labels["paper"], 4000)
	require.Equal(t, 10, d.NumClasses["paper"])
	sp := d.Splits[GenSplitName]["paper"]
	require.NoError(t, checkDisjoint(sp, 4000))
	require.Equal(t, 4000, len(sp.Train)+len(sp.Valid)+len(sp.Test))
	require.InDelta(t, 0.855, float64(len(sp.Train))/4000, 0.001)
	// Planted communities: homophilous edges, features weak, graph strong.
	for name, h := range st.EdgeHomophily {
		assert.Greater(t, h, 0.6, name)
	}
	t.Logf("features-only %.3f, oracle %.3f, homophily %v", st.FeatureOnlyAcc, st.OracleAcc, st.EdgeHomophily)
	assert.Less(t, st.FeatureOnlyAcc, 0.6)
	assert.Greater(t, st.OracleAcc, st.FeatureOnlyAcc+0.3)
	// Power-law degrees: the most cited paper has many times the mean.
	var maxDeg int64
	cites := int64(s.RelIndex("paper___cites___paper"))
	for v := s.NodeOrig[3]; v < s.NodeOrig[4]; v++ {
		maxDeg = max(maxDeg, d.In.Degree(v*R+cites))
	}
	assert.Greater(t, maxDeg, int64(5*30000/4000))
}

func TestGenerateHeteroDeterministic(t *testing.T) {
	base, err := GenerateHetero(smallMag(7))
	require.NoError(t, err)
	tests := []struct {
		name     string
		procs    int
		workers  int
		seed     uint64
		wantSame bool
	}{
		{"same seed", 0, 0, 7, true},
		{"one proc", 1, 0, 7, true},
		{"three workers", 0, 3, 7, true},
		{"other seed", 0, 0, 8, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.procs > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			}
			o := smallMag(tc.seed)
			o.Workers = tc.workers
			d, err := GenerateHetero(o)
			require.NoError(t, err)
			if tc.wantSame {
				require.Equal(t, base, d)
			} else {
				require.NotEqual(t, base.In.Indices, d.In.Indices)
			}
		})
	}
}

func TestGenerateHeteroBadOptions(t *testing.T) {
	tests := []struct {
		name string
		edit func(o *HeteroGenOptions)
		want string
	}{
		{"too few papers", func(o *HeteroGenOptions) { o.Papers = 15 }, "too few for 10 classes"},
		{"negative authors", func(o *HeteroGenOptions) { o.Authors = -1 }, "-1 authors"},
		{"too dense", func(o *HeteroGenOptions) { o.Affiliations = 6000 * 60 }, "affiliated_with edges"},
		{"bad homophily", func(o *HeteroGenOptions) { o.Homophily = 2 }, "homophily"},
		{"bad split", func(o *HeteroGenOptions) { o.TrainFrac = 0.9; o.ValidFrac = 0.1 }, "split fractions"},
		{"bad power law", func(o *HeteroGenOptions) { o.PowerLaw = 1.5 }, "power-law"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := smallMag(1)
			tc.edit(&o)
			_, err := GenerateHetero(o)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestWriteHeteroRoundTrip(t *testing.T) {
	d, err := GenerateHetero(smallMag(3))
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "mag")
	require.NoError(t, WriteHetero(dir, d))
	require.True(t, IsHeteroLayout(dir))

	// As stored: exactly the generated dataset.
	back, err := ReadOGBHetero(dir, HeteroReadOptions{})
	require.NoError(t, err)
	back.Name = d.Name
	require.Equal(t, d, back)

	// With reverse relations: added on read, not written, so writing the
	// reversed dataset and reading it again gives it back.
	rev, err := ReadOGBHetero(dir, DefaultHeteroReadOptions())
	require.NoError(t, err)
	require.Equal(t, 7, rev.Schema.NumRels(), "4 stored + 3 reverses (cites is symmetrized)")
	dir2 := filepath.Join(t.TempDir(), "mag2")
	require.NoError(t, WriteHetero(dir2, rev))
	rev2, err := ReadOGBHetero(dir2, DefaultHeteroReadOptions())
	require.NoError(t, err)
	rev2.Name = rev.Name
	require.Equal(t, rev, rev2)
	stored, err := ReadOGBHetero(dir2, HeteroReadOptions{})
	require.NoError(t, err)
	require.Equal(t, 4, stored.Schema.NumRels(), "reverse relations were not written")

	// Refuses a non-empty directory.
	require.ErrorContains(t, WriteHetero(dir, d), "not empty")
}

// TestGenerateHeteroDeterministicLarge uses more than one sampling chunk
// (1<<20 edges) and the parallel sort, which the small graphs do not.
func TestGenerateHeteroDeterministicLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 1.3 M edges twice")
	}
	o := HeteroGenOptions{
		Papers: 40000, Authors: 60000, Institutions: 500, Fields: 3000,
		Cites: 100000, Writes: 1100000, Affiliations: 60000, Topics: 100000,
		Classes: 50, FeatDim: 4, Seed: 5,
	}
	var runs []*HeteroDataset
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		d, err := GenerateHetero(o)
		runtime.GOMAXPROCS(prev)
		require.NoError(t, err)
		runs = append(runs, d)
	}
	require.Equal(t, runs[0], runs[1])
}
