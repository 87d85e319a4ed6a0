package partition

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCacheName: the cache names are those train --data always wrote, so
// existing caches stay reused; each option that changes a partition
// changes its name.
func TestCacheName(t *testing.T) {
	link := &LinkOptions{Split: "random:0.85,0.05,0.10"}
	tests := []struct {
		name string
		o    CacheOptions
		want string
	}{
		{"node", CacheOptions{Data: "/d/cora/", Parts: 2, Options: Options{Method: MethodMetis, Seed: 1, Split: "public"}}, "cora-public-parts-2-metis-seed1"},
		{"time and sparse", CacheOptions{Data: "cora", Parts: 4, Options: Options{Method: MethodRandom, Seed: 3, Split: "s", Time: true, SparseFeatures: SparseOn}}, "cora-s-parts-4-random-seed3-time-sparse"},
		{"dense is unmarked", CacheOptions{Data: "cora", Parts: 1, Options: Options{Method: MethodMetis, Seed: 1, Split: "s", SparseFeatures: SparseOff}}, "cora-s-parts-1-metis-seed1"},
		{"link", CacheOptions{Data: "cora", Parts: 2, Options: Options{Method: MethodMetis, Seed: 1, Split: "public", Link: link}}, "cora-" + link.Key() + "-parts-2-metis-seed1"},
		{"chunked", CacheOptions{Data: "big", Parts: 2, Chunked: true, Options: Options{Method: "parmetis", Seed: 1, SparseFeatures: SparseAuto}}, "big-auto-parts-2-parmetis-seed1-auto"},
		{"chunked split", CacheOptions{Data: "big", Parts: 2, Chunked: true, Options: Options{Method: MethodRandom, Seed: 2, Split: "x", SparseFeatures: SparseOff}}, "big-x-parts-2-random-seed2-off"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.o.Name()) })
	}
}

// TestCacheFallsBack: a read-only dataset parent (like ../shared/data) is
// skipped in favour of the user cache directory; Dir is the only place
// looked at when given.
func TestCacheFallsBack(t *testing.T) {
	root := t.TempDir()
	ro := filepath.Join(root, "ro")
	require.NoError(t, os.MkdirAll(filepath.Join(ro, "cora"), 0o755))
	require.NoError(t, os.Chmod(ro, 0o555))
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	o := CacheOptions{Data: filepath.Join(ro, "cora"), Parts: 2, Options: Options{Method: MethodMetis, Seed: 1, Split: "s"}}
	name := o.Name()
	require.Equal(t, []string{filepath.Join(ro, name), filepath.Join(root, "cache", "mpignn", name)}, o.Dirs())
	dir, reuse, err := o.Pick()
	require.NoError(t, err)
	assert.False(t, reuse)
	assert.Equal(t, filepath.Join(root, "cache", "mpignn", name), dir, "the read-only parent is skipped")
	mine := o
	mine.Dir = filepath.Join(root, "mine")
	require.Equal(t, []string{filepath.Join(root, "mine", name)}, mine.Dirs(), "Dir is the only place looked at")
	require.ErrorContains(t, parentUsable(filepath.Join(ro, name)), "read-only")
	require.NoError(t, parentUsable(filepath.Join(root, "x", name)))
}

// TestCacheOptionsValidate: cache options without a dataset or with no
// parts are refused by Validate and by each door (Pick, Cached,
// CachedRaw) before any place is made or any dataset read.
func TestCacheOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    CacheOptions
		want string
	}{
		{"valid", CacheOptions{Data: "cora", Parts: 1}, ""},
		{"valid chunked, method of dpartition", CacheOptions{Data: "big", Parts: 3, Chunked: true, Options: Options{Method: "ml"}}, ""},
		{"no data", CacheOptions{Parts: 2}, "Data: no dataset directory"},
		{"zero parts", CacheOptions{Data: "cora"}, "Parts 0: want at least 1"},
		{"negative parts", CacheOptions{Data: "cora", Parts: -4}, "Parts -4: want at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				require.NoError(t, tc.o.Validate())
				return
			}
			require.EqualError(t, tc.o.Validate(), tc.want)
			o := tc.o
			o.Dir = filepath.Join(t.TempDir(), "caches")
			_, _, err := o.Pick()
			require.EqualError(t, err, tc.want)
			_, err = Cached(o, io.Discard, func(string) error { t.Fatal("written"); return nil })
			require.EqualError(t, err, tc.want)
			_, err = CachedRaw(o, io.Discard)
			require.EqualError(t, err, tc.want)
			require.NoDirExists(t, o.Dir)
		})
	}
}

// TestValidateOptions: an unknown method or sparse mode names its field.
func TestValidateOptions(t *testing.T) {
	require.NoError(t, Options{}.Validate())
	require.NoError(t, Options{Method: MethodRandom, SparseFeatures: SparseOn}.Validate())
	require.EqualError(t, Options{Method: "spectral"}.Validate(), `Method "spectral": want metis or random`)
	require.EqualError(t, Options{SparseFeatures: "yes"}.Validate(), `SparseFeatures "yes": want auto, on or off`)
	require.ErrorContains(t, Options{Link: &LinkOptions{Split: "random:2,0,0"}}.Validate(), "Link.Split: ")
}
