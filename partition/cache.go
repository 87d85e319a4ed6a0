package partition

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"mpignn/config"
	"mpignn/internal/half"
)

// CacheOptions name one partition of a dataset kept for reuse (mpignn
// train --data): the dataset, the number of parts and the partitioning
// Options. Everything that changes the partition is in its directory name
// (Name), so runs with different options never share a cache, and in the
// META a cached partition is checked against before it is reused.
type CacheOptions struct {
	// Data is the dataset directory.
	Data string
	// Dir is where caches go: "" = beside the dataset (in its parent
	// directory), then $XDG_CACHE_HOME/mpignn or ~/.cache/mpignn (the
	// dataset's directory may be read-only); else under Dir only.
	Dir   string
	Parts int
	// Options as the partition is written: Method, Seed, Split (resolved;
	// "" for a link partition), Link, Time and SparseFeatures (SparseOn or
	// SparseOff as resolved for the dataset; for a chunked dataset the
	// mode as given).
	Options
	// Chunked is a chunked dataset partitioned by every rank (package
	// dpartition): its caches have names of their own, and Split ""
	// accepts the partitioner's default split.
	Chunked bool
}

// Validate reports cache options that name no partition, naming the field
// at fault (config.FieldError): no Data (the cache's name and places come
// from it) or Parts below 1. The partitioning options are the
// partitioner's to check when the cache is written (Options.Validate, or
// dpartition's for a Chunked one, whose methods this package does not
// know); a cache found by them was written by it. Pick, Cached and
// CachedRaw call it.
func (o CacheOptions) Validate() error {
	switch {
	case o.Data == "":
		return config.Errorf("{Data}: no dataset directory")
	case o.Parts < 1:
		return config.Errorf("{Parts} %d: want at least 1", o.Parts)
	}
	return nil
}

// Name is the cache's directory name.
func (o CacheOptions) Name() string {
	base := filepath.Base(filepath.Clean(o.Data))
	if o.Chunked {
		split := o.Split
		if split == "" {
			split = "auto"
		}
		if o.Link != nil {
			split = o.Link.Key()
		}
		name := fmt.Sprintf("%s-%s-parts-%d-%s-seed%d-%s", base, split, o.Parts, o.Method, o.Seed, o.SparseFeatures)
		if o.Time {
			name += "-time" // untimed caches keep their names
		}
		return name + o.featSuffix()
	}
	what := o.Split
	if o.Link != nil {
		// Everything that changes a link partition is in its key.
		what = o.Link.Key()
	}
	name := fmt.Sprintf("%s-%s-parts-%d-%s-seed%d", base, what, o.Parts, o.Method, o.Seed)
	if o.Time {
		name += "-time" // untimed caches keep their names
	}
	if o.SparseFeatures == SparseOn {
		name += "-sparse" // dense caches keep their names
	}
	// Caches without edge features keep their names.
	if _, mode, ok := strings.Cut(o.NodeFeat, ":"); ok {
		name += "-nf" + mode // -nfmean, -nfsum
	}
	if o.EdgeFeat {
		name += "-ef"
	}
	return name + o.featSuffix()
}

// featSuffix names a 2-byte feature type in a cache's name ("-bf16",
// "-fp16"); float32 caches keep their names.
func (o CacheOptions) featSuffix() string {
	if k, err := half.Parse(o.FeatDType); err == nil && k.Half() {
		return "-" + k.String()
	}
	return ""
}

// Dirs lists the places the cache may be, in order of preference.
func (o CacheOptions) Dirs() []string {
	name := o.Name()
	if o.Dir != "" {
		return []string{filepath.Join(o.Dir, name)}
	}
	abs, err := filepath.Abs(o.Data)
	if err != nil {
		abs = o.Data
	}
	dirs := []string{filepath.Join(filepath.Dir(abs), name)}
	if base := os.Getenv("XDG_CACHE_HOME"); base != "" {
		dirs = append(dirs, filepath.Join(base, "mpignn", name))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache", "mpignn", name))
	}
	return dirs
}

// Reusable reports whether dir holds the partition o names, with every
// part file matching its META.json checksums: a damaged cache (a truncated
// or flipped file) is rebuilt, not handed to every rank to fail on.
func (o CacheOptions) Reusable(dir string) bool {
	m, err := LoadMeta(dir)
	if err != nil || m.NumParts != o.Parts || m.Method != o.Method {
		return false
	}
	if (m.EdgeFeatDim > 0) != o.EdgeFeat || m.NodeFeatFrom != o.NodeFeat {
		return false
	}
	if k, err := half.Parse(o.FeatDType); err != nil || (m.FeatDim > 0 && m.FeatKind() != k) {
		return false
	}
	if (m.Time != nil) != o.Time || (m.Link != nil) != (o.Link != nil) || (o.Link != nil && !o.Link.Matches(m.Link, o.Seed)) {
		return false
	}
	if o.Chunked {
		if m.Seed != o.Seed || (o.Split != "" && m.Split != o.Split) {
			return false
		}
		return VerifyFiles(dir, m) == nil
	}
	if m.SparseFeat != (o.SparseFeatures == SparseOn) {
		return false
	}
	if _, ok := m.Splits[o.Split]; !ok && o.Link == nil {
		return false
	}
	return VerifyFiles(dir, m) == nil
}

// Pick returns the first of Dirs that holds a reusable partition (reuse
// set), else the first whose parent can be written, to write it into (for
// a caller that writes it itself, such as every rank of a distributed
// partitioner); the error says why no place would do.
func (o CacheOptions) Pick() (dir string, reuse bool, err error) {
	if err := o.Validate(); err != nil {
		return "", false, err
	}
	return o.find(nil)
}

// Cached returns the directory of the cached partition o names, reused
// when one is found, else written with write into the first place that
// takes it (a place where writing fails is skipped for the next). It
// prints which to out.
func Cached(o CacheOptions, out io.Writer, write func(dir string) error) (string, error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	return cached(o, out, write)
}

// cached is Cached for options validated by the caller.
func cached(o CacheOptions, out io.Writer, write func(dir string) error) (string, error) {
	dir, reuse, err := o.find(write)
	switch {
	case err != nil:
		return "", err
	case reuse:
		fmt.Fprintf(out, "partition: reusing %s\n", dir)
	default:
		fmt.Fprintf(out, "partition: wrote %d parts (%s) to %s\n", o.Parts, o.Method, dir)
	}
	return dir, nil
}

// find walks Dirs: the first reusable one is returned with reuse set;
// else the first whose parent can be written and, with write, where write
// succeeds.
func (o CacheOptions) find(write func(dir string) error) (string, bool, error) {
	var errs []error
	for _, dir := range o.Dirs() {
		if o.Reusable(dir) {
			return dir, true, nil
		}
		if err := parentUsable(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		if write != nil {
			if err := write(dir); err != nil {
				errs = append(errs, fmt.Errorf("partition into %s: %w", dir, err))
				continue
			}
		}
		return dir, false, nil
	}
	return "", false, errors.Join(errs...)
}

// parentUsable makes the parent of the cache directory dir and says why
// it cannot take the cache (it cannot be made, or is read-only), so that
// the next place is tried. The permission bits are checked rather than
// attempting a write, because root may write into directories marked
// read-only (such as shared datasets).
func parentUsable(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if st, err := os.Stat(parent); err != nil || !st.IsDir() || st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s is read-only", parent)
	}
	return nil
}
