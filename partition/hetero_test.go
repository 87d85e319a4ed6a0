package partition

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
)

// heteroDataset builds a small ogbn-mag-like graph: author, paper and venue
// nodes; writes, cites (paper -> paper) and published_in with the reverses
// of writes and published_in; features on authors and papers; labels on
// papers (some unlabelled) with a "public" split. Paper ids cluster into
// two communities so that METIS has a cut to find.
func heteroDataset(t testing.TB, seed uint64) *graph.HeteroDataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 15))
	counts := map[string]int64{"author": 40, "paper": 60, "venue": 12}
	writes := graph.Relation{Src: "author", Name: "writes", Dst: "paper"}
	cites := graph.Relation{Src: "paper", Name: "cites", Dst: "paper"}
	pub := graph.Relation{Src: "paper", Name: "published_in", Dst: "venue"}
	rels := []graph.Relation{writes, writes.Reverse(), cites, pub, pub.Reverse()}
	s, err := graph.NewSchema(counts, rels)
	require.NoError(t, err)
	n, R := s.NumNodes(), int64(s.NumRels())
	rows := make([][]int64, n*R)
	add := func(rel graph.Relation, src, dst int64) {
		r := int64(s.RelIndex(rel.String()))
		u := s.NodeOrig[s.TypeIndex(rel.Src)] + src
		v := s.NodeOrig[s.TypeIndex(rel.Dst)] + dst
		rows[v*R+r] = append(rows[v*R+r], u)
	}
	// Same parity = same community, mostly.
	near := func(x, m int64) int64 { return (rng.Int64N(m/2)*2 + x%2) % m }
	for p := int64(0); p < 60; p++ {
		for k := 0; k < 2; k++ {
			a := near(p, 40)
			add(writes, a, p)
			add(writes.Reverse(), p, a)
		}
		for k := 0; k < 3; k++ {
			if q := near(p, 60); q != p {
				add(cites, q, p)
			}
		}
		v := near(p, 12)
		add(pub, p, v)
		add(pub.Reverse(), v, p)
	}
	in := &graph.CSR{Indptr: make([]int64, n*R+1)}
	for i, row := range rows {
		slices.Sort(row)
		row = slices.Compact(row)
		in.Indices = append(in.Indices, row...)
		in.Indptr[i+1] = int64(len(in.Indices))
	}
	feat := func(cnt int64, dim int, scale float32) *graph.Features {
		f := &graph.Features{Dim: dim, Data: make([]float32, cnt*int64(dim))}
		for i := range f.Data {
			f.Data[i] = scale * float32(i)
		}
		return f
	}
	labels := make([]int32, 60)
	for i := range labels {
		labels[i] = int32(i % 3)
		if i%7 == 6 {
			labels[i] = -1
		}
	}
	split := &graph.Split{}
	for i := int64(0); i < 60; i++ {
		switch {
		case i%7 == 6:
		case i%5 < 3:
			split.Train = append(split.Train, i)
		case i%5 == 3:
			split.Valid = append(split.Valid, i)
		default:
			split.Test = append(split.Test, i)
		}
	}
	return &graph.HeteroDataset{
		Name:       "toyhet",
		Schema:     s,
		In:         in,
		Feat:       map[string]*graph.Features{"author": feat(40, 3, 1), "paper": feat(60, 5, -0.5)},
		Labels:     map[string][]int32{"paper": labels},
		NumClasses: map[string]int{"paper": 3},
		Splits:     map[string]map[string]*graph.Split{"public": {"paper": split}},
	}
}

// checkHeteroParts checks that parts hold exactly d: relation rows, types,
// features, labels, splits and the per-relation counts of META.
func checkHeteroParts(t *testing.T, d *graph.HeteroDataset, assign []int32, parts []*Part) {
	t.Helper()
	s := d.Schema
	n, R := s.NumNodes(), int64(s.NumRels())
	m := parts[0].Meta
	require.NotNil(t, m.Hetero)
	assert.Equal(t, FormatVersionHetero, m.FormatVersion)
	assert.Equal(t, s.NodeTypes, m.Hetero.NodeTypes)
	assert.Equal(t, "paper", m.Hetero.LabelType)
	assert.Equal(t, map[string]int{"author": 3, "paper": 5}, m.Hetero.FeatDims)
	assert.Equal(t, 0, m.FeatDim)
	newToOrig := map[int64]int64{}
	seen := make([]bool, n)
	var relEdges, relCut = make([]int64, R), make([]int64, R)
	public := d.Splits["public"]["paper"]
	var train, valid, test []int64
	paperLo := s.NodeOrig[s.TypeIndex("paper")]
	for p, pt := range parts {
		require.Len(t, pt.Indptr, int(pt.NumOwned()*R+1))
		require.Len(t, pt.TypeLo, s.NumTypes()+1)
		assert.Equal(t, pt.Lo, pt.TypeLo[0])
		assert.Equal(t, pt.Hi, pt.TypeLo[s.NumTypes()])
		for ty, typ := range s.NodeTypes {
			var want int64
			for v := s.NodeOrig[ty]; v < s.NodeOrig[ty+1]; v++ {
				if assign[v] == int32(p) {
					want++
				}
			}
			assert.Equal(t, want, m.Hetero.TypeCount(ty, p), "part %d type %s", p, typ)
			assert.Equal(t, want, pt.TypeLo[ty+1]-pt.TypeLo[ty])
			for g := pt.TypeLo[ty]; g < pt.TypeLo[ty+1]; g++ {
				o := pt.Orig[g-pt.Lo]
				assert.Equal(t, ty, s.TypeOf(o), "new id %d", g)
				if f := d.Feat[typ]; f != nil {
					dim := int64(f.Dim)
					i := g - pt.TypeLo[ty]
					assert.Equal(t, f.Row(o-s.NodeOrig[ty]), pt.TypeFeat[typ][i*dim:(i+1)*dim])
				}
			}
			if d.Feat[typ] == nil {
				assert.NotContains(t, pt.TypeFeat, typ)
			}
		}
		for i, o := range pt.Orig {
			require.False(t, seen[o], "node %d owned twice", o)
			seen[o] = true
			assert.Equal(t, int32(p), assign[o])
			newToOrig[pt.Lo+int64(i)] = o
			want := int32(-1)
			if s.TypeOf(o) == s.TypeIndex("paper") {
				want = d.Labels["paper"][o-paperLo]
			}
			assert.Equal(t, want, pt.Labels[i], "label of %d", o)
		}
		sp := pt.Splits["public"]
		train, valid, test = append(train, sp.Train...), append(valid, sp.Valid...), append(test, sp.Test...)
	}
	for v := range seen {
		require.True(t, seen[v], "node %d owned by no part", v)
	}
	for p, pt := range parts {
		for i, o := range pt.Orig {
			for r := int64(0); r < R; r++ {
				a, b := pt.Indptr[int64(i)*R+r], pt.Indptr[int64(i)*R+r+1]
				want := d.In.Neighbors(o*R + r)
				require.Equal(t, want, pt.IndicesOrig[a:b], "row (%d,%d)", o, r)
				for k := a; k < b; k++ {
					require.Equal(t, pt.IndicesOrig[k], newToOrig[pt.Indices[k]])
					if assign[pt.IndicesOrig[k]] != int32(p) {
						relCut[r]++
					}
				}
				relEdges[r] += b - a
			}
		}
	}
	assert.Equal(t, relEdges, m.Hetero.RelEdges)
	assert.Equal(t, relCut, m.Hetero.RelCut)
	toLocal := func(ids []int64) []int64 {
		out := make([]int64, len(ids))
		for i, g := range ids {
			out[i] = newToOrig[g] - paperLo
		}
		slices.Sort(out)
		return out
	}
	assert.Equal(t, public.Train, toLocal(train))
	assert.Equal(t, public.Valid, toLocal(valid))
	assert.Equal(t, public.Test, toLocal(test))
}

func TestHeteroWriteLoad(t *testing.T) {
	d := heteroDataset(t, 1)
	for _, method := range []string{MethodMetis, MethodRandom} {
		for nparts := 1; nparts <= 4; nparts++ {
			t.Run(method+"/"+string(rune('0'+nparts)), func(t *testing.T) {
				opt := Options{Method: method, Seed: 3, Undirected: true}
				assign, err := AssignHetero(d, nparts, opt)
				require.NoError(t, err)
				dir := filepath.Join(t.TempDir(), "p")
				m, err := WriteHetero(dir, d, assign, nparts, opt)
				require.NoError(t, err)
				assert.True(t, m.Hetero.Reverse)
				assert.Equal(t, "public", m.Split)
				checkHeteroParts(t, d, assign, loadAll(t, dir))
				if method != MethodMetis {
					return
				}
				// Every type (and the training papers) spread evenly.
				for ty, typ := range d.Schema.NodeTypes {
					mean := float64(d.Schema.Count(ty)) / float64(nparts)
					for p := 0; p < nparts; p++ {
						assert.LessOrEqual(t, float64(m.Hetero.TypeCount(ty, p)), 1.3*mean+1, "type %s part %d: %v", typ, p, m.Hetero.TypeOffsets[ty])
					}
				}
				tr := float64(len(d.Splits["public"]["paper"].Train)) / float64(nparts)
				for p, pi := range m.Parts {
					assert.LessOrEqual(t, float64(pi.Splits["public"].Train), 1.3*tr+1, "train nodes of part %d", p)
				}
			})
		}
	}
}

// readTree returns every file under dir by relative path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return err
	}))
	return out
}

func TestHeteroDeterministic(t *testing.T) {
	d := heteroDataset(t, 2)
	for _, method := range []string{MethodMetis, MethodRandom} {
		t.Run(method, func(t *testing.T) {
			root := t.TempDir()
			var trees []map[string][]byte
			for _, w := range []int{1, 4, 1} {
				dir := filepath.Join(root, "p")
				_, err := WriteHeteroDataset(dir, d, 3, Options{Method: method, Seed: 5, Workers: w, Overwrite: true})
				require.NoError(t, err)
				trees = append(trees, readTree(t, dir))
			}
			assert.Contains(t, trees[0], "part-0/feat-author.bin")
			assert.NotContains(t, trees[0], "part-0/feat-venue.bin")
			assert.Equal(t, trees[0], trees[1])
			assert.Equal(t, trees[0], trees[2])
		})
	}
}

func TestHeteroBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(d *graph.HeteroDataset, o *Options)
		want string
	}{
		{"two labelled types", func(d *graph.HeteroDataset, o *Options) {
			d.Labels["author"] = make([]int32, 40)
			d.NumClasses["author"] = 2
		}, "labels for node types [author paper]: choose one"},
		{"unknown label type", func(d *graph.HeteroDataset, o *Options) { o.LabelType = "venue" }, `label type "venue"`},
		{"halo feats", func(d *graph.HeteroDataset, o *Options) { o.HaloFeats = true }, "halo features are not supported"},
		{"wrong source type", func(d *graph.HeteroDataset, o *Options) {
			d.In.Indices[0] = d.Schema.NumNodes() - 1 // a venue, first non-empty row is not a venue row
		}, "is not of type"},
		{"row count", func(d *graph.HeteroDataset, o *Options) { d.In.Indptr = d.In.Indptr[:10] }, "relation rows"},
		{"feature size", func(d *graph.HeteroDataset, o *Options) { d.Feat["paper"].Data = d.Feat["paper"].Data[1:] }, `features of node type "paper"`},
		{"label range", func(d *graph.HeteroDataset, o *Options) { d.Labels["paper"][3] = 3 }, "label 3 outside [-1,3)"},
		{"split range", func(d *graph.HeteroDataset, o *Options) {
			d.Splits["public"]["paper"].Test = append(d.Splits["public"]["paper"].Test, 60)
		}, `split "public/paper" test: node 60 outside [0,60)`},
		{"nil", func(d *graph.HeteroDataset, o *Options) { *d = graph.HeteroDataset{} }, "no graph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := heteroDataset(t, 3)
			opt := Options{Method: MethodRandom}
			tc.edit(d, &opt)
			root := t.TempDir()
			_, err := WriteHeteroDataset(filepath.Join(root, "o"), d, 2, opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			ents, _ := os.ReadDir(root)
			assert.Empty(t, ents, "failed write left files")
		})
	}
	d := heteroDataset(t, 3)
	_, err := WriteHetero(filepath.Join(t.TempDir(), "o"), d, make([]int32, 5), 2, Options{})
	assert.ErrorContains(t, err, "assignment has 5 entries for 112 nodes")
}

func TestHeteroBadMeta(t *testing.T) {
	d := heteroDataset(t, 4)
	src := filepath.Join(t.TempDir(), "src")
	_, err := WriteHeteroDataset(src, d, 2, Options{Method: MethodRandom, Seed: 1})
	require.NoError(t, err)
	orig, err := os.ReadFile(filepath.Join(src, MetaFile))
	require.NoError(t, err)
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"newer version", `"format_version": 2`, `"format_version": 3`, "format_version 3, this build reads versions 1 and 2"},
		{"version 1 with hetero", `"format_version": 2`, `"format_version": 1`, "format_version 1 with a hetero section"},
		{"no hetero", `"hetero": {`, `"xhetero": {`, "format_version 2 without its hetero section"},
		{"relation", `"author___writes___paper"`, `"author__writes___paper"`, "want src___name___dst"},
		{"unknown type", `"author___writes___paper"`, `"author___writes___papers"`, "unknown node type"},
		{"type offsets", `"type_offsets": [
      [
        0,`, `"type_offsets": [
      [
        1,`, "type_offsets of \"author\""},
		{"feat dim", `"author": 3`, `"author": 0`, "feat_dims[author] = 0"},
		{"label type", `"label_type": "paper"`, `"label_type": "papers"`, `label_type "papers" is not a node type`},
		{"rel edges", `"rel_edges": [`, `"rel_edges": [1, `, "rel_edges and rel_cut need 5 entries"},
		{"file table", `"part-1/feat-author.bin"`, `"part-1/feat-authors.bin"`, "files has no entry for part-1/feat-author.bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			b := bytes.Replace(orig, []byte(tc.old), []byte(tc.new), 1)
			require.NotEqual(t, orig, b, "edit %q not applied", tc.old)
			path := filepath.Join(dir, MetaFile)
			require.NoError(t, os.WriteFile(path, b, 0o644))
			_, err := Load(dir, 0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestHeteroStats(t *testing.T) {
	d := heteroDataset(t, 5)
	dir := filepath.Join(t.TempDir(), "p")
	m, err := WriteHeteroDataset(dir, d, 2, Options{Seed: 1})
	require.NoError(t, err)
	s := m.Stats()
	require.NotNil(t, s.Hetero)
	assert.Len(t, s.Hetero.Relations, 5)
	var b strings.Builder
	require.NoError(t, s.WriteText(&b))
	for _, want := range []string{"author", "venue", "paper___cites___paper", "cut_fraction"} {
		assert.Contains(t, b.String(), want)
	}
}

// TestHeteroPartCheck damages loaded parts in memory (files are guarded by
// checksums; check catches writer bugs and hand-edited META) and expects
// the typed structure checks to name the problem.
func TestHeteroPartCheck(t *testing.T) {
	d := heteroDataset(t, 6)
	dir := filepath.Join(t.TempDir(), "p")
	_, err := WriteHeteroDataset(dir, d, 2, Options{Method: MethodRandom, Seed: 2})
	require.NoError(t, err)
	s := d.Schema
	R := int64(s.NumRels())
	cites := int64(s.RelIndex("paper___cites___paper"))
	for _, tc := range []struct {
		name string
		edit func(pt *Part)
		want string
	}{
		{"source type by original id", func(pt *Part) {
			k := pt.Indptr[(pt.TypeLo[s.TypeIndex("paper")]-pt.Lo)*R+cites]
			pt.IndicesOrig[k] = 0 // an author
		}, "source of relation paper___cites___paper is not of type paper"},
		{"source type by new id", func(pt *Part) {
			k := pt.Indptr[(pt.TypeLo[s.TypeIndex("paper")]-pt.Lo)*R+cites]
			pt.Indices[k] = pt.TypeLo[0] // an author
		}, "is not of type paper"},
		{"owned node type", func(pt *Part) { pt.Orig[0] = s.NodeOrig[2] }, "is not of type author"},
		{"label on other type", func(pt *Part) { pt.Labels[0] = 1 }, "node of type author has label 1"},
		{"split of other type", func(pt *Part) { pt.Splits["public"].Train[0] = pt.Lo }, "not of the label type paper"},
		{"label range", func(pt *Part) { pt.Labels[0] = -2 }, "label -2 outside [-1,3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt, err := Load(dir, 0)
			require.NoError(t, err)
			// Make sure the edited row exists.
			require.Greater(t, pt.TypeLo[s.TypeIndex("paper")+1], pt.TypeLo[s.TypeIndex("paper")])
			tc.edit(pt)
			err = pt.check(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
