package partition

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mpignn/graph"
)

// communityDataset builds a small undirected graph with `comm` planted
// communities (dense inside, sparse across), features, labels (= community)
// and a "public" split. Rows of In are canonical.
func communityDataset(n int64, comm int, seed uint64) *graph.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	var src, dst []int64
	for v := int64(0); v < n; v++ {
		for k := 0; k < 4; k++ {
			var u int64
			if rng.IntN(10) < 9 { // same community: ids congruent mod comm
				u = (rng.Int64N(n/int64(comm))*int64(comm) + v%int64(comm)) % n
			} else {
				u = rng.Int64N(n)
			}
			src = append(src, u)
			dst = append(dst, v)
		}
	}
	d := &graph.Dataset{
		Name:       "community",
		NumNodes:   n,
		In:         graph.BuildInCSR(n, src, dst, graph.BuildOptions{Undirected: true, DropSelfLoops: true, Dedup: true}),
		Feat:       &graph.Features{Dim: 3, Data: make([]float32, n*3)},
		Labels:     make([]int32, n),
		NumClasses: comm,
	}
	for v := int64(0); v < n; v++ {
		d.Labels[v] = int32(v % int64(comm))
		for j := 0; j < 3; j++ {
			d.Feat.Data[v*3+int64(j)] = float32(v) + float32(j)/4
		}
	}
	perm := rng.Perm(int(n))
	s := &graph.Split{}
	for i, v := range perm {
		switch {
		case i < int(n)*6/10:
			s.Train = append(s.Train, int64(v))
		case i < int(n)*8/10:
			s.Valid = append(s.Valid, int64(v))
		default:
			s.Test = append(s.Test, int64(v))
		}
	}
	for _, ids := range [][]int64{s.Train, s.Valid, s.Test} {
		slices.Sort(ids)
	}
	d.Splits = map[string]*graph.Split{"public": s}
	return d
}

// loadAll loads every part of dir.
func loadAll(t testing.TB, dir string) []*Part {
	t.Helper()
	m, err := LoadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([]*Part, m.NumParts)
	for p := range parts {
		if parts[p], err = LoadWithMeta(dir, m, p); err != nil {
			t.Fatal(err)
		}
	}
	return parts
}

// checkReconstructs verifies that the parts together give back d exactly
// (edges in canonical order, features, labels, splits, all via original
// ids), that every node is owned exactly once and that halos are exactly the
// non-owned in-neighbors.
func checkReconstructs(t *testing.T, d *graph.Dataset, parts []*Part) {
	t.Helper()
	n := d.NumNodes
	m := parts[0].Meta
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	newID := make([]int64, n)
	for _, pt := range parts {
		for i, o := range pt.Orig {
			if owner[o] != -1 {
				t.Fatalf("node %d owned by parts %d and %d", o, owner[o], pt.ID)
			}
			owner[o] = pt.ID
			newID[o] = pt.Lo + int64(i)
		}
	}
	for v, p := range owner {
		if p == -1 {
			t.Fatalf("node %d owned by no part", v)
		}
	}
	dim := int64(d.Feat.Dim)
	var edges int64
	for _, pt := range parts {
		if pt.Lo != m.Offsets[pt.ID] || pt.Hi != m.Offsets[pt.ID+1] || int64(len(pt.Orig)) != pt.Hi-pt.Lo {
			t.Fatalf("part %d: range [%d,%d) vs offsets %v", pt.ID, pt.Lo, pt.Hi, m.Offsets)
		}
		wantHalo := map[int64]bool{}
		for i, o := range pt.Orig {
			got := pt.IndicesOrig[pt.Indptr[i]:pt.Indptr[i+1]]
			if want := d.In.Neighbors(o); !slices.Equal(got, want) {
				t.Fatalf("part %d node orig %d: in-neighbors %v, want %v", pt.ID, o, got, want)
			}
			for k, u := range got {
				g := pt.Indices[pt.Indptr[i]+int64(k)]
				if g != newID[u] {
					t.Fatalf("part %d: neighbor orig %d has new id %d, want %d", pt.ID, u, g, newID[u])
				}
				if g < pt.Lo || g >= pt.Hi {
					wantHalo[g] = true
				}
			}
			if !slices.Equal(pt.Feat[int64(i)*dim:int64(i+1)*dim], d.Feat.Row(o)) {
				t.Fatalf("part %d node orig %d: features differ", pt.ID, o)
			}
			if pt.Labels[i] != d.Labels[o] {
				t.Fatalf("part %d node orig %d: label %d, want %d", pt.ID, o, pt.Labels[i], d.Labels[o])
			}
		}
		edges += int64(len(pt.Indices))
		if len(pt.Halo) != len(wantHalo) {
			t.Fatalf("part %d: %d halo nodes, want %d", pt.ID, len(pt.Halo), len(wantHalo))
		}
		for i, g := range pt.Halo {
			if !wantHalo[g] || pt.HaloOrig[i] != newToOrig(parts, g) {
				t.Fatalf("part %d: halo entry %d (%d, orig %d) wrong", pt.ID, i, g, pt.HaloOrig[i])
			}
			if m.HaloFeats && !slices.Equal(pt.HaloFeat[int64(i)*dim:int64(i+1)*dim], d.Feat.Row(pt.HaloOrig[i])) {
				t.Fatalf("part %d: halo features of orig %d differ", pt.ID, pt.HaloOrig[i])
			}
		}
		if !m.HaloFeats && pt.HaloFeat != nil {
			t.Fatalf("part %d: HaloFeat set without halo feats", pt.ID)
		}
	}
	if edges != d.In.NumEdges() || m.NumEdges != edges {
		t.Fatalf("parts hold %d edges (META %d), graph has %d", edges, m.NumEdges, d.In.NumEdges())
	}
	for name, s := range d.Splits {
		for _, set := range []struct {
			name string
			want []int64
			get  func(*graph.Split) []int64
		}{
			{"train", s.Train, func(x *graph.Split) []int64 { return x.Train }},
			{"valid", s.Valid, func(x *graph.Split) []int64 { return x.Valid }},
			{"test", s.Test, func(x *graph.Split) []int64 { return x.Test }},
		} {
			var got []int64
			for _, pt := range parts {
				for _, g := range set.get(pt.Splits[name]) {
					got = append(got, pt.Orig[g-pt.Lo])
				}
			}
			slices.Sort(got)
			want := slices.Clone(set.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("split %s/%s: parts give %d ids, want %d (or contents differ)", name, set.name, len(got), len(want))
			}
		}
	}
}

func newToOrig(parts []*Part, g int64) int64 {
	for _, pt := range parts {
		if g >= pt.Lo && g < pt.Hi {
			return pt.Orig[g-pt.Lo]
		}
	}
	return -1
}

func TestRelabel(t *testing.T) {
	r, err := Relabel([]int32{2, 0, 2, 1, 0}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 2, 3, 5, 5}; !slices.Equal(r.Offsets, want) {
		t.Errorf("offsets %v, want %v", r.Offsets, want)
	}
	if want := []int64{1, 4, 3, 0, 2}; !slices.Equal(r.Orig, want) {
		t.Errorf("orig %v, want %v", r.Orig, want)
	}
	for v, g := range r.NewID {
		if r.Orig[g] != int64(v) {
			t.Errorf("NewID/Orig not inverse at %d", v)
		}
	}
	if _, err := Relabel([]int32{0, 3}, 3); err == nil {
		t.Error("part 3 of 3 accepted")
	}
	if got := Owner(r.Offsets, 4); got != 2 {
		t.Errorf("owner of 4 = %d, want 2 (part 3 is empty)", got)
	}
	if got := Owner(r.Offsets, 5); got != -1 {
		t.Errorf("owner of 5 = %d, want -1", got)
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	d := communityDataset(600, 3, 1)
	for _, tc := range []struct {
		name   string
		parts  int
		method string
		halo   bool
	}{
		{"metis-1", 1, MethodMetis, false},
		{"metis-3-halo", 3, MethodMetis, true},
		{"random-4", 4, MethodRandom, false},
		{"random-5-halo", 5, MethodRandom, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "parts")
			m, err := WriteDataset(dir, d, tc.parts, Options{Method: tc.method, Seed: 3, HaloFeats: tc.halo})
			if err != nil {
				t.Fatal(err)
			}
			if m.Split != "public" || m.NumParts != tc.parts || m.Method != tc.method {
				t.Errorf("meta split %q parts %d method %q", m.Split, m.NumParts, m.Method)
			}
			checkReconstructs(t, d, loadAll(t, dir))
			if tc.parts == 1 && m.CutEdges != 0 {
				t.Errorf("one part cuts %d edges", m.CutEdges)
			}
		})
	}
}

// TestLoadRank: a job must have one rank per part; otherwise the error
// says how to launch or repartition.
func TestLoadRank(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parts")
	if _, err := WriteDataset(dir, communityDataset(300, 3, 1), 3, Options{Method: MethodRandom, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rank, ranks int
		want        string // "" = success
	}{
		{0, 3, ""},
		{2, 3, ""},
		{0, 2, "has 3 parts but the job runs 2 ranks: run with -n 3, or repartition into 2 parts"},
		{3, 4, "has 3 parts but the job runs 4 ranks"},
	} {
		p, err := LoadRank(dir, tc.rank, tc.ranks)
		switch {
		case tc.want == "" && (err != nil || p.ID != tc.rank):
			t.Errorf("LoadRank(%d of %d): %v", tc.rank, tc.ranks, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("LoadRank(%d of %d): error %v, want %q", tc.rank, tc.ranks, err, tc.want)
		}
	}
}

// A non-canonical input graph (unsorted rows with duplicates) is written
// canonically.
func TestWriteCanonicalizes(t *testing.T) {
	d := communityDataset(50, 2, 2)
	want := d.In
	messy := &graph.CSR{Indptr: make([]int64, d.NumNodes+1)}
	for v := int64(0); v < d.NumNodes; v++ {
		row := slices.Clone(want.Neighbors(v))
		slices.Reverse(row)
		if len(row) > 0 {
			row = append(row, row[0])
		}
		messy.Indices = append(messy.Indices, row...)
		messy.Indptr[v+1] = int64(len(messy.Indices))
	}
	d2 := *d
	d2.In = messy
	dir := filepath.Join(t.TempDir(), "p")
	if _, err := WriteDataset(dir, &d2, 2, Options{Method: MethodRandom}); err != nil {
		t.Fatal(err)
	}
	checkReconstructs(t, d, loadAll(t, dir))
}

func TestMetisDeterministic(t *testing.T) {
	d := communityDataset(2000, 4, 5)
	a, err := Assign(d, 4, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Assign(d, 4, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different METIS partitions")
	}
	// Both written directories must be byte-identical too.
	root := t.TempDir()
	var metas [2][]byte
	for i := range metas {
		dir := filepath.Join(root, string(rune('a'+i)))
		if _, err := WriteDataset(dir, d, 4, Options{Seed: 9}); err != nil {
			t.Fatal(err)
		}
		if metas[i], err = os.ReadFile(filepath.Join(dir, MetaFile)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(metas[0], metas[1]) {
		t.Error("same seed gave different META.json (checksums differ)")
	}
	r1 := Random(1000, 3, 1)
	r2 := Random(1000, 3, 1)
	r3 := Random(1000, 3, 2)
	if !slices.Equal(r1, r2) || slices.Equal(r1, r3) {
		t.Error("Random not determined by its seed")
	}
}

func TestBadInput(t *testing.T) {
	good := communityDataset(40, 2, 3)
	mod := func(f func(d *graph.Dataset)) *graph.Dataset {
		d := *good
		d.Labels = slices.Clone(good.Labels)
		d.Splits = map[string]*graph.Split{"public": {Train: slices.Clone(good.Splits["public"].Train)}}
		f(&d)
		return &d
	}
	for _, tc := range []struct {
		name  string
		d     *graph.Dataset
		parts int
		opt   Options
		want  string
	}{
		{"zero parts", good, 0, Options{}, "at least 1"},
		{"nil dataset", nil, 2, Options{}, "nil dataset"},
		{"no graph", &graph.Dataset{NumNodes: 4}, 2, Options{Method: MethodRandom}, "no graph"},
		{"negative parts", good, -2, Options{Method: MethodRandom}, "at least 1"},
		{"more parts than nodes", good, 41, Options{}, "exceeds the number of nodes 40"},
		{"unknown method", good, 2, Options{Method: "spectral"}, `Method "spectral": want metis or random`},
		{"missing split", good, 2, Options{Split: "nope"}, `split "nope" not found`},
		{"label out of range", mod(func(d *graph.Dataset) { d.Labels[7] = 5 }), 2, Options{}, "node 7: label 5 outside [0,2)"},
		{"split id out of range", mod(func(d *graph.Dataset) { d.Splits["public"].Train[0] = 40 }), 2, Options{Method: MethodRandom}, "node 40 outside [0,40)"},
		{"duplicate split id", mod(func(d *graph.Dataset) {
			d.Splits["public"].Train = append(d.Splits["public"].Train, d.Splits["public"].Train[0])
		}), 2, Options{Method: MethodRandom}, "listed twice"},
		{"bad split name", mod(func(d *graph.Dataset) { d.Splits["../x"] = &graph.Split{} }), 2, Options{Method: MethodRandom}, `split name "../x"`},
		{"short labels", mod(func(d *graph.Dataset) { d.Labels = d.Labels[:3] }), 2, Options{Method: MethodRandom}, "3 labels for 40 nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			_, err := WriteDataset(dir, tc.d, tc.parts, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Errorf("failed run left %d entries in the output's parent (first %s)", len(ents), ents[0].Name())
			}
		})
	}
}

func TestOutputExists(t *testing.T) {
	d := communityDataset(60, 2, 4)
	dir := filepath.Join(t.TempDir(), "p")
	if _, err := WriteDataset(dir, d, 2, Options{Method: MethodRandom, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteDataset(dir, d, 3, Options{Method: MethodRandom}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second write: %v, want already exists", err)
	}
	m, err := WriteDataset(dir, d, 3, Options{Method: MethodRandom, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := LoadMeta(dir); err != nil || got.NumParts != 3 || m.NumParts != 3 {
		t.Fatalf("after overwrite: %v parts, err %v", got, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(dir))
	if len(ents) != 1 {
		t.Errorf("overwrite left %d entries next to the output", len(ents))
	}
	other := filepath.Join(t.TempDir(), "notparts")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "keep.txt"), []byte("x"), 0o644)
	if _, err := WriteDataset(other, d, 2, Options{Method: MethodRandom, Overwrite: true}); err == nil || !strings.Contains(err.Error(), "not a partition directory") {
		t.Fatalf("overwrite of a foreign dir: %v", err)
	}
}

// TestCorruptPartDir damages one file of a written partition in several
// ways; Load must refuse with an error naming the file.
func TestCorruptPartDir(t *testing.T) {
	d := communityDataset(300, 3, 6)
	src := filepath.Join(t.TempDir(), "src")
	if _, err := WriteDataset(src, d, 3, Options{Method: MethodRandom, HaloFeats: true}); err != nil {
		t.Fatal(err)
	}
	flip := func(off int64) func(b []byte) []byte {
		return func(b []byte) []byte {
			if off < 0 {
				off += int64(len(b))
			}
			b[off] ^= 0x40
			return b
		}
	}
	for _, tc := range []struct {
		name   string
		file   string
		damage func([]byte) []byte
		want   string
	}{
		{"flip data byte", "part-1/indices.bin", flip(-5), "checksum mismatch"},
		{"flip header byte", "part-1/feat.bin", flip(9), "checksum mismatch"},
		{"flip magic", "part-2/labels.bin", flip(0), "checksum mismatch"},
		{"truncate", "part-1/orig.bin", func(b []byte) []byte { return b[:len(b)-3] }, "truncated"},
		{"truncate to header", "part-1/halo_feat.bin", func(b []byte) []byte { return b[:10] }, "truncated"},
		{"append", "part-1/split-public-train.bin", func(b []byte) []byte { return append(b, 0) }, "size"},
		{"remove", "part-1/indptr.bin", nil, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.file)
			if tc.damage == nil {
				os.Remove(path)
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.damage(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			part := int(tc.file[5] - '0')
			_, err := Load(dir, part)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v\nwant an error naming %s and containing %q", err, path, tc.want)
			}
			// The other parts are still readable.
			if _, err := Load(dir, (part+1)%3); err != nil {
				t.Errorf("undamaged part: %v", err)
			}
		})
	}
}

func TestBadMeta(t *testing.T) {
	d := communityDataset(100, 2, 7)
	src := filepath.Join(t.TempDir(), "src")
	if _, err := WriteDataset(src, d, 2, Options{Method: MethodRandom}); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(src, MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"newer version", `"format_version": 1`, `"format_version": 3`, "format_version 3, this build reads versions 1 and 2"},
		{"version 2 without hetero", `"format_version": 1`, `"format_version": 2`, "format_version 2 without its hetero section"},
		{"no version", `"format_version": 1,`, ``, "no format_version"},
		{"not json", `{`, `[`, "META.json"},
		{"offsets", `"offsets": [`, `"offsets": [1, `, "offsets has 4 entries"},
		{"edge total", `"num_edges": `, `"num_edges": 1`, "edges"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			b := bytes.Replace(orig, []byte(tc.old), []byte(tc.new), 1)
			if bytes.Equal(b, orig) {
				t.Fatalf("edit %q not applied", tc.old)
			}
			path := filepath.Join(dir, MetaFile)
			os.WriteFile(path, b, 0o644)
			_, err := Load(dir, 0)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v\nwant an error naming %s containing %q", err, path, tc.want)
			}
		})
	}
	if _, err := Load(src, 2); err == nil || !strings.Contains(err.Error(), "part 2 does not exist") {
		t.Errorf("Load part 2 of 2: %v", err)
	}
	if _, err := Load(filepath.Join(src, "nope"), 0); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Load missing dir: %v", err)
	}
}

func TestWriteBadAssignment(t *testing.T) {
	d := communityDataset(20, 2, 8)
	for _, tc := range []struct {
		name   string
		d      *graph.Dataset
		assign []int32
		want   string
	}{
		{"nil dataset", nil, make([]int32, 20), "nil dataset"},
		{"short", d, make([]int32, 19), "assignment has 19 entries for 20 nodes"},
		{"out of range", d, append(make([]int32, 19), 2), "node 19 assigned to part 2 outside [0,2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			_, err := Write(filepath.Join(root, "o"), tc.d, tc.assign, 2, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 0 {
				t.Errorf("failed write left %s", ents[0].Name())
			}
		})
	}
}
