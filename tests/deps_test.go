package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the module path of mpignn (go.mod).
const module = "mpignn"

// pkgDeps is one row of the import graph: the mpignn packages a package's
// non-test files may import, and the further ones its test files may.
type pkgDeps struct {
	imports []string
	test    []string
}

// allowedDeps is mpignn's import graph, written down: for every package
// (path under the module) the mpignn packages it may import. A new import
// between mpignn packages is a design decision; make it here, in review,
// not by accident in a file. The layers, bottom up:
//
//	internal/*           leaves (hashkey, intrange, par, prefetch: no imports at all), except
//	                     testhold (the launcher's rank, spmd/launched) and
//	                     osx (atomic files and memory, over tempout/testhold)
//	config               leaf: errors of options types naming fields
//	spmd/launched        the launcher's rank from the environment, no MPI
//	spmd                 the MPI runtime (cgo, mpi.h)
//	collectives          MPI operations over spmd (gompi, cgo)
//	graph                graphs and datasets, no MPI
//	graph/chunkgen       chunked graphs generated chunk by chunk, no MPI
//	partition            partitioning, the on-disk format, raw dataset -> partition, no MPI
//	sample               the pure sampling core, no MPI
//	train/kernels/simd   Go assembly kernels (no cgo: a cgo package cannot hold them)
//	train/kernels        dense and sparse products, all cgo BLAS, no MPI
//	train/optim          Adam and the sparse embedding optimizers
//	train/metrics        the metrics file and link-ranking figures
//	train                models and the training loop, no MPI
//	partition/dpartition distributed partitioning, a job's partition (MPI)
//	sample/dsample       distributed stores and sampler (MPI)
//	train/dtrain           distributed training (MPI)
//	cmd/mpignn           the binary
//
// It is a function, not a variable: the package keeps no mutable state.
func allowedDeps() map[string]pkgDeps {
	return map[string]pkgDeps{
		"internal/half":     {},
		"internal/hashkey":  {},
		"internal/intrange": {},
		"internal/par":      {},
		"internal/prefetch": {},
		"internal/tempout":  {},
		"internal/testhold": {imports: []string{"spmd/launched"}},
		"internal/osx":      {imports: []string{"internal/tempout", "internal/testhold"}},
		"internal/watchdog": {},
		"config":            {},

		"spmd":          {test: []string{"spmd/spmdtest"}},
		"spmd/launched": {},
		"spmd/spmdtest": {imports: []string{"spmd"}},
		"collectives": {
			imports: []string{"internal/par", "internal/watchdog", "spmd"},
			test:    []string{"spmd/spmdtest"},
		},

		"graph":          {imports: []string{"internal/hashkey", "internal/osx", "internal/tempout", "internal/testhold"}},
		"graph/chunkgen": {imports: []string{"graph", "internal/hashkey"}},
		"partition": {
			imports: []string{"config", "graph", "internal/half", "internal/hashkey", "internal/osx", "internal/tempout", "internal/testhold"},
		},
		"sample": {
			imports: []string{"graph", "internal/half", "internal/hashkey", "internal/par"},
			test:    []string{"sample/sampletest"},
		},
		"sample/sampletest":  {imports: []string{"graph", "sample"}},
		"train/kernels":      {imports: []string{"internal/half", "internal/par", "internal/prefetch", "train/kernels/simd"}},
		"train/kernels/simd": {},
		"train/optim":        {imports: []string{"internal/par"}},
		"train/metrics":      {imports: []string{"internal/intrange", "internal/osx"}},
		"train": {
			imports: []string{"config", "graph", "internal/half", "internal/osx", "internal/par", "internal/testhold", "sample", "train/kernels", "train/metrics", "train/optim"},
		},

		"partition/dpartition": {
			imports: []string{"collectives", "graph", "internal/half", "internal/hashkey", "internal/testhold", "partition"},
			test:    []string{"spmd", "spmd/spmdtest"},
		},
		"sample/dsample": {
			imports: []string{"collectives", "config", "graph", "internal/half", "internal/par", "internal/prefetch", "partition", "sample"},
			// No train: the layer-wise inference and the learnable
			// embeddings, whose tests built models, live in train/dtrain.
			test: []string{"internal/par", "sample/sampletest", "spmd", "spmd/spmdtest"},
		},
		"train/dtrain": {
			imports: []string{"collectives", "config", "graph", "internal/half", "internal/intrange", "internal/osx", "internal/testhold", "partition", "sample", "sample/dsample", "train", "train/kernels", "train/metrics", "train/optim"},
			test:    []string{"config", "sample/sampletest", "spmd", "spmd/spmdtest"},
		},

		"cmd/mpignn": {
			imports: []string{
				"collectives", "config", "graph", "graph/chunkgen", "internal/osx", "internal/tempout", "internal/testhold", "internal/watchdog",
				"partition", "partition/dpartition", "sample", "sample/dsample", "spmd", "spmd/launched", "train", "train/dtrain", "train/kernels", "train/metrics", "train/optim",
			},
			test: []string{"config"},
		},
		"tests": {test: []string{"graph", "internal/tempout", "internal/testhold", "partition", "train", "train/kernels", "train/metrics"}},
	}
}

// depRules are the rules beside the table.
type depRules struct {
	// mpiOwners are the only packages that may touch MPI: import gompi,
	// include mpi.h or link an MPI library through cgo.
	mpiOwners []string
	// pureCore must build and test without MPI: nothing they or their
	// tests link may reach an MPI owner.
	pureCore []string
	// stdlibOnly are leaves that import nothing outside the standard
	// library.
	stdlibOnly []string
}

func rules() depRules {
	return depRules{
		mpiOwners: []string{"spmd", "collectives"},
		pureCore: []string{"config", "graph", "graph/chunkgen", "partition", "sample", "sample/sampletest", "train", "train/kernels", "train/kernels/simd", "train/metrics", "train/optim",
			"internal/hashkey", "internal/osx", "internal/par", "internal/tempout", "internal/testhold", "internal/watchdog",
			"spmd/launched"},
		stdlibOnly: []string{"config", "internal/hashkey", "internal/intrange", "internal/par", "spmd/launched"},
	}
}

// gompi is the MPI binding only the MPI owners may import.
const gompi = "github.com/sbromberger/gompi"

// scannedPkg is what the source of one package directory imports.
type scannedPkg struct {
	imports map[string][]string // import path -> files (non-test)
	test    map[string][]string // import path -> test files
	mpiC    []string            // files whose C touches MPI
	goFiles int
}

var (
	cInclude = regexp.MustCompile(`#\s*include\s*[<"]([^>"]+)[>"]`)
	cgoMPI   = regexp.MustCompile(`#cgo\b.*(\bompi\b|\bmpich\b|-lmpi\b)`)
)

// scanModule parses every Go file under root (every build tag: the MPICH,
// OpenBLAS and oneDNN variants count as much as the default build) and the
// C sources beside them, keyed by package path under the module.
func scanModule(t *testing.T, root string) map[string]*scannedPkg {
	t.Helper()
	pkgs := map[string]*scannedPkg{}
	get := func(dir string) *scannedPkg {
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &scannedPkg{imports: map[string][]string{}, test: map[string][]string{}}
			pkgs[rel] = p
		}
		return p
	}
	err := filepath.WalkDir(root, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// Go ignores testdata and names starting with . or _; bin and
			// demo hold build and run outputs.
			if file != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "bin" || name == "demo") {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(file)
		switch filepath.Ext(name) {
		case ".c", ".h", ".cc":
			if touchesMPI(t, dir, file, false) {
				p := get(dir)
				p.mpiC = append(p.mpiC, name)
			}
		case ".go":
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly|parser.ParseComments)
			require.NoError(t, err)
			p := get(dir)
			p.goFiles++
			into := p.imports
			if strings.HasSuffix(name, "_test.go") {
				into = p.test
			}
			for _, spec := range f.Imports {
				ip, err := strconv.Unquote(spec.Path.Value)
				require.NoError(t, err)
				into[ip] = append(into[ip], name)
				if ip == "C" && cgoTouchesMPI(t, dir, f, spec) {
					p.mpiC = append(p.mpiC, name)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return pkgs
}

// cgoTouchesMPI reports whether the cgo preamble of spec (import "C")
// includes mpi.h, a local header that does, or links an MPI library.
func cgoTouchesMPI(t *testing.T, dir string, f *ast.File, spec *ast.ImportSpec) bool {
	var pre strings.Builder
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || !slices.Contains(g.Specs, ast.Spec(spec)) {
			continue
		}
		if g.Doc != nil {
			pre.WriteString(g.Doc.Text())
		}
		if spec.Doc != nil {
			pre.WriteString(spec.Doc.Text())
		}
	}
	return cgoMPI.MatchString(pre.String()) || includesMPI(t, dir, pre.String(), true)
}

// touchesMPI reports whether the C file includes mpi.h (directly, or
// through a header of the same directory when follow is set).
func touchesMPI(t *testing.T, dir, file string, follow bool) bool {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	return includesMPI(t, dir, string(b), follow)
}

// includesMPI reports whether C source src includes mpi.h, or (follow) a
// header in dir that does.
func includesMPI(t *testing.T, dir, src string, follow bool) bool {
	for _, m := range cInclude.FindAllStringSubmatch(src, -1) {
		if m[1] == "mpi.h" {
			return true
		}
		if local := filepath.Join(dir, m[1]); follow && fileExists(local) && touchesMPI(t, dir, local, false) {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// mpignnDeps returns the mpignn packages among imports, as paths under the
// module, sorted.
func mpignnDeps(imports map[string][]string) []string {
	var out []string
	for ip := range imports {
		if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// TestDeps checks the import graph of the source against allowedDeps: no
// edge the table does not allow, no allowed edge that no file uses (so the
// table stays the true graph), no package missing from the table; only the
// MPI owners touch MPI; the pure core cannot reach MPI through any chain of
// imports; hashkey stays a leaf.
func TestDeps(t *testing.T) {
	table, rules := allowedDeps(), rules()
	pkgs := scanModule(t, h.Root)
	require.Contains(t, pkgs, "graph", "the scan found no packages: is h.Root the repository?")

	for rel, p := range pkgs {
		if p.goFiles == 0 {
			continue // a directory of C sources only
		}
		row, ok := table[rel]
		if !assert.True(t, ok, "package %s is not in allowedDeps (tests/deps_test.go): add its row", rel) {
			continue
		}
		for _, dep := range mpignnDeps(p.imports) {
			assert.True(t, slices.Contains(row.imports, dep),
				"new import %s -> %s (%s): not in allowedDeps; if the design wants it, add it there",
				rel, dep, strings.Join(p.imports[module+"/"+dep], ", "))
		}
		for _, dep := range mpignnDeps(p.test) {
			if dep == rel {
				continue // an external test package imports the package under test
			}
			assert.True(t, slices.Contains(row.imports, dep) || slices.Contains(row.test, dep),
				"new test import %s -> %s (%s): not in allowedDeps; if the design wants it, add it there",
				rel, dep, strings.Join(p.test[module+"/"+dep], ", "))
		}
		for _, dep := range row.imports {
			_, used := p.imports[module+"/"+dep]
			assert.True(t, used, "allowedDeps lets %s import %s, but no file does: remove it from the table", rel, dep)
		}
		for _, dep := range row.test {
			_, used := p.test[module+"/"+dep]
			assert.True(t, used, "allowedDeps lets the tests of %s import %s, but no test file does: remove it from the table", rel, dep)
		}
	}
	for rel := range table {
		_, ok := pkgs[rel]
		assert.True(t, ok, "allowedDeps has a row for %s, which does not exist: remove it", rel)
	}

	t.Run("MPI only in spmd and collectives", func(t *testing.T) {
		for rel, p := range pkgs {
			if ownsMPI(rules.mpiOwners, rel) {
				continue
			}
			_, imp := p.imports[gompi]
			_, timp := p.test[gompi]
			assert.False(t, imp || timp, "%s imports %s: only %v may", rel, gompi, rules.mpiOwners)
			assert.Empty(t, p.mpiC, "%s: C code that includes mpi.h or links MPI: only %v may", rel, rules.mpiOwners)
		}
		// The check must be able to see MPI where it is.
		assert.NotEmpty(t, pkgs["spmd"].mpiC, "found no MPI C code in spmd: is the check still looking at the right names?")
		assert.Contains(t, pkgs["collectives"].imports, gompi, "collectives no longer imports gompi: is the check still right?")
	})

	t.Run("pure core reaches no MPI", func(t *testing.T) {
		for _, rel := range rules.pureCore {
			// What `go test rel` links: the package and its tests' imports,
			// then the non-test imports of everything they reach.
			row := table[rel]
			reach := closure(table, append(slices.Clone(row.imports), row.test...))
			for _, owner := range rules.mpiOwners {
				assert.NotContains(t, reach, owner, "%s (or its tests) reaches %s: the pure core must build without MPI", rel, owner)
			}
		}
		assert.Contains(t, closure(table, table["train/dtrain"].imports), "spmd", "train/dtrain should reach spmd: is closure right?")
	})

	t.Run("stdlib-only leaves", func(t *testing.T) {
		for _, rel := range rules.stdlibOnly {
			for ip := range pkgs[rel].imports {
				assert.NotContains(t, strings.SplitN(ip, "/", 2)[0], ".", "%s imports %s: it must import only the standard library", rel, ip)
				assert.False(t, ip == module || strings.HasPrefix(ip, module+"/"), "%s imports %s: it must stay a leaf", rel, ip)
			}
		}
	})
}

// ownsMPI reports whether rel is one of owners or inside one.
func ownsMPI(owners []string, rel string) bool {
	for _, o := range owners {
		if rel == o || strings.HasPrefix(rel, o+"/") {
			return true
		}
	}
	return false
}

// closure returns every package reachable from roots through the non-test
// imports of the table (roots included), sorted.
func closure(table map[string]pkgDeps, roots []string) []string {
	seen := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, d := range table[p].imports {
			visit(d)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
