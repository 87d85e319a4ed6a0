package graph

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func smallGen(seed uint64, workers int) GenOptions {
	return GenOptions{Nodes: 3000, AvgDegree: 12, Classes: 7, FeatDim: 16, Seed: seed, Workers: workers}
}

func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate(smallGen(5, 1))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(smallGen(5, 3))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Generate(smallGen(6, 2))
	if err != nil {
		t.Fatal(err)
	}
	same := func(x, y *Synthetic) bool {
		return slices.Equal(x.Pairs, y.Pairs) && slices.Equal(x.Data.Feat.Data, y.Data.Feat.Data) &&
			slices.Equal(x.Data.Labels, y.Data.Labels) &&
			slices.Equal(x.Data.Splits[GenSplitName].Train, y.Data.Splits[GenSplitName].Train) &&
			x.Stats == y.Stats
	}
	if !same(a, b) {
		t.Fatal("same seed with 1 and 3 workers gave different graphs")
	}
	if same(a, c) || slices.Equal(a.Pairs, c.Pairs) {
		t.Fatal("different seeds gave the same graph")
	}
}

func TestGenerateProperties(t *testing.T) {
	opt := smallGen(1, 0)
	s, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Data
	if want := int64(3000 * 12 / 2); int64(len(s.Pairs)) != want || s.Stats.Edges != want {
		t.Fatalf("%d edges, want exactly %d", len(s.Pairs), want)
	}
	for i, p := range s.Pairs {
		u, v := p>>32, p&0xffffffff
		if u >= v || v >= uint64(d.NumNodes) {
			t.Fatalf("pair %d = (%d,%d): want u < v < n", i, u, v)
		}
		if i > 0 && p <= s.Pairs[i-1] {
			t.Fatalf("pairs not strictly ascending at %d (duplicate edge?)", i)
		}
	}
	counts := make([]int, opt.Classes)
	for _, l := range d.Labels {
		counts[l]++
	}
	for c, k := range counts {
		if k < 2 {
			t.Errorf("class %d has %d nodes", c, k)
		}
	}
	if h := s.Stats.EdgeHomophily; h < 0.7 || h > 0.9 {
		t.Errorf("edge homophily %.3f, want about 0.8", h)
	}
	// Power law: the largest degree is far above the mean.
	if s.Stats.MaxDegree < 4*12 {
		t.Errorf("max degree %d: no heavy tail", s.Stats.MaxDegree)
	}
	sp := d.Splits[GenSplitName]
	if len(sp.Train) != 1800 || len(sp.Valid) != 600 || len(sp.Test) != 600 {
		t.Errorf("split %d/%d/%d, want 1800/600/600", len(sp.Train), len(sp.Valid), len(sp.Test))
	}
	if err := checkDisjoint(sp, d.NumNodes); err != nil {
		t.Error(err)
	}
	if !(s.Stats.FeatureOnlyAcc > 0.2 && s.Stats.FeatureOnlyAcc < 0.9 && s.Stats.OracleAcc > s.Stats.FeatureOnlyAcc+0.05) {
		t.Errorf("planted accuracies features-only %.3f oracle %.3f: want features to help only partly",
			s.Stats.FeatureOnlyAcc, s.Stats.OracleAcc)
	}
}

func TestGenerateSplitCounts(t *testing.T) {
	cases := []struct {
		name                string
		train, valid, test  int64
		tf, vf              float64
		wantT, wantV, wantS int
	}{
		{"counts like the peer comparison", 1000, 200, 800, 0, 0, 1000, 200, 800},
		{"counts, test is the rest", 500, 500, 0, 0, 0, 500, 500, 2000},
		{"counts leaving nodes out", 100, 100, 100, 0, 0, 100, 100, 100},
		{"fractions", 0, 0, 0, 0.5, 0.1, 1500, 300, 1200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := smallGen(2, 0)
			o.Train, o.Valid, o.Test, o.TrainFrac, o.ValidFrac = c.train, c.valid, c.test, c.tf, c.vf
			s, err := Generate(o)
			if err != nil {
				t.Fatal(err)
			}
			sp := s.Data.Splits[GenSplitName]
			if len(sp.Train) != c.wantT || len(sp.Valid) != c.wantV || len(sp.Test) != c.wantS {
				t.Errorf("split %d/%d/%d, want %d/%d/%d", len(sp.Train), len(sp.Valid), len(sp.Test), c.wantT, c.wantV, c.wantS)
			}
			if err := checkDisjoint(sp, s.Data.NumNodes); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestGenerateBadOptions(t *testing.T) {
	cases := []struct {
		name string
		mod  func(o *GenOptions)
		want string
	}{
		{"no classes", func(o *GenOptions) { o.Classes = 0 }, "classes"},
		{"too few nodes", func(o *GenOptions) { o.Nodes = 10 }, "too few"},
		{"no features", func(o *GenOptions) { o.FeatDim = 0 }, "feature dimension"},
		{"zero degree", func(o *GenOptions) { o.AvgDegree = 0 }, "average degree"},
		{"too dense", func(o *GenOptions) { o.AvgDegree = 2000 }, "too dense"},
		{"homophily above 1", func(o *GenOptions) { o.Homophily = 1.5 }, "homophily"},
		{"flat power law", func(o *GenOptions) { o.PowerLaw = 1.5 }, "power-law"},
		{"split too big", func(o *GenOptions) { o.Train, o.Valid, o.Test = 2000, 1000, 1000 }, "more than the 3000 nodes"},
		{"fractions above 1", func(o *GenOptions) { o.TrainFrac, o.ValidFrac = 0.8, 0.4 }, "fractions"},
		{"no test nodes", func(o *GenOptions) { o.Train = 3000 }, "at least one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := smallGen(1, 0)
			c.mod(&o)
			_, err := Generate(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, c.want)
			}
			if verr := o.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Fatalf("Validate = %v, want Generate's error %v", verr, err)
			}
		})
	}
}

// TestWriteSyntheticReadBack writes a generated graph and reads it with the
// project's loader settings: the graph, features, labels and split must be
// exactly what was generated.
func TestWriteSyntheticReadBack(t *testing.T) {
	s, err := Generate(smallGen(3, 0))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "syn")
	if err := WriteSynthetic(dir, s); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []ReadOptions{UndirectedOptions(), {}} {
		d, err := ReadOGB(dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		in := s.BuildIn()
		if !slices.Equal(d.In.Indptr, in.Indptr) || !slices.Equal(d.In.Indices, in.Indices) {
			t.Fatalf("options %+v: graph read back differs from the generated one", opt)
		}
		if !slices.Equal(d.Feat.Data, s.Data.Feat.Data) || !slices.Equal(d.Labels, s.Data.Labels) {
			t.Fatal("features or labels read back differ")
		}
		got, want := d.Splits[GenSplitName], s.Data.Splits[GenSplitName]
		if got == nil || !slices.Equal(got.Train, want.Train) || !slices.Equal(got.Valid, want.Valid) || !slices.Equal(got.Test, want.Test) {
			t.Fatal("split read back differs")
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.Contains(string(readme), "planted accuracy") {
		t.Fatalf("README.md: %v %q", err, readme)
	}
	ents, _ := os.ReadDir(filepath.Dir(dir))
	if len(ents) != 1 {
		t.Fatalf("temporary files left beside the output: %v", ents)
	}
}

// TestGeneratedGraphHelps checks the graph is worth learning from: a
// nearest-centroid classifier fitted on the training nodes does much better
// on test nodes when each node's features are averaged with its
// neighbours' (one mean-aggregation step, as in GraphSAGE) than on the raw
// features alone.
func TestGeneratedGraphHelps(t *testing.T) {
	s, err := Generate(smallGen(4, 0))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Data
	in := s.BuildIn()
	dim := d.Feat.Dim
	agg := make([]float32, len(d.Feat.Data))
	for v := int64(0); v < d.NumNodes; v++ {
		row := agg[v*int64(dim):][:dim]
		nb := in.Neighbors(v)
		for _, u := range nb {
			for j, x := range d.Feat.Row(u) {
				row[j] += x / float32(len(nb))
			}
		}
		for j, x := range d.Feat.Row(v) {
			row[j] = (row[j] + x) / 2
		}
	}
	sp := d.Splits[GenSplitName]
	acc := func(x []float32) float64 {
		k := d.NumClasses
		cen := make([]float64, k*dim)
		cnt := make([]float64, k)
		for _, v := range sp.Train {
			c := d.Labels[v]
			cnt[c]++
			for j := 0; j < dim; j++ {
				cen[int(c)*dim+j] += float64(x[v*int64(dim)+int64(j)])
			}
		}
		for c := 0; c < k; c++ {
			for j := 0; j < dim; j++ {
				cen[c*dim+j] /= max(cnt[c], 1)
			}
		}
		ok := 0
		for _, v := range sp.Test {
			best, bestD := -1, 0.0
			for c := 0; c < k; c++ {
				var dd float64
				for j := 0; j < dim; j++ {
					t := float64(x[v*int64(dim)+int64(j)]) - cen[c*dim+j]
					dd += t * t
				}
				if best < 0 || dd < bestD {
					best, bestD = c, dd
				}
			}
			if int32(best) == d.Labels[v] {
				ok++
			}
		}
		return float64(ok) / float64(len(sp.Test))
	}
	raw, withGraph := acc(d.Feat.Data), acc(agg)
	t.Logf("nearest centroid: raw features %.3f, with neighbour mean %.3f (planted: features-only %.3f, oracle %.3f)",
		raw, withGraph, s.Stats.FeatureOnlyAcc, s.Stats.OracleAcc)
	if withGraph < raw+0.15 {
		t.Fatalf("aggregating neighbours gives %.3f vs %.3f raw: the graph does not help enough", withGraph, raw)
	}
}
