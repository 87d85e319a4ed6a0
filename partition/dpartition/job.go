package dpartition

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/half"
	"mpignn/partition"
)

// ChooseMethod picks the distributed method for a chunked dataset: an
// assignment directory, random, label propagation (lp), multilevel (ml),
// or PT-Scotch (parmetis). Without a method (named false) it is ml, which
// met METIS' cut and every balance constraint where it was measured
// (BENCHMARKS.md, "Multilevel against label propagation and METIS") and,
// unlike PT-Scotch, needs no library that MPICH builds lack. A method the user
// named is honoured or refused, never swapped: METIS needs the whole graph
// in one process, which a chunked dataset is made to avoid, so metis is
// refused with the methods that do apply, as is parmetis without
// PT-Scotch.
func ChooseMethod(method string, named bool, assignmentDir string) (string, error) {
	switch {
	case assignmentDir != "":
		if named {
			return "", errors.New("--assignment DIR gives the assignment; leave out --method")
		}
		return MethodAssignment, nil
	case !named:
		return MethodML, nil
	case method == partition.MethodRandom || method == MethodLP || method == MethodML:
		return method, nil
	case method == MethodParMetis && ParMetisAvailable:
		return MethodParMetis, nil
	case method == MethodParMetis:
		return "", fmt.Errorf("--method %s: PT-Scotch is not available in this build (MPICH; Debian builds PT-Scotch against OpenMPI only); use --method lp, ml or random, or --assignment DIR", method)
	case method == partition.MethodMetis:
		return "", fmt.Errorf("--method metis: METIS needs the whole graph in one process, and a chunked dataset is partitioned by all ranks; use --method ml (the default here), lp, parmetis or random, or partition the OGB layout")
	}
	return "", fmt.Errorf("--method %q: want parmetis, lp, ml, random or --assignment DIR for a chunked dataset", method)
}

// Validate reports options no partitioning can use, before any dataset
// is read: what needs the dataset (its node types, the number of ranks)
// Run checks after. Run calls it.
func (o Options) Validate() error {
	switch {
	case o.Data == "":
		return errors.New("no chunked dataset directory")
	case o.Out == "":
		return errors.New("no output directory")
	case o.Parts < 1:
		return fmt.Errorf("--parts %d: want at least 1", o.Parts)
	case o.Method == MethodAssignment && o.AssignmentDir == "":
		return fmt.Errorf("method %s needs the directory of the assignment files (AssignmentDir, --assignment)", o.Method)
	}
	switch o.Method {
	case partition.MethodRandom, MethodAssignment, MethodParMetis, MethodLP, MethodML:
	default:
		return fmt.Errorf("method %q: the distributed partitioner supports %s, %s, %s, %s and --assignment", o.Method, MethodParMetis, MethodLP, MethodML, partition.MethodRandom)
	}
	if err := graph.CheckNodeFeatFrom(o.NodeFeat); err != nil {
		return err
	}
	if o.EdgeFeat && o.Link != nil {
		// The single-process writer's refusal (partition.Write); node
		// features from edges are derived before the split, as there.
		return errors.New("edge features with a link split are not supported yet")
	}
	switch o.SparseFeatures {
	case "", partition.SparseAuto, partition.SparseOn, partition.SparseOff:
	default:
		return fmt.Errorf("sparse features %q: want %s, %s or %s", o.SparseFeatures, partition.SparseAuto, partition.SparseOn, partition.SparseOff)
	}
	fk, err := half.Parse(o.FeatDType)
	switch {
	case err != nil:
		return err
	case fk.Half() && o.Link != nil:
		return fmt.Errorf("feature type %s with a link split: not supported yet (link partitions store float32 features)", fk)
	case fk.Half() && o.SparseFeatures == partition.SparseOn:
		return fmt.Errorf("feature type %s with sparse features %s: sparse rows store float32 values (use %s or %s)", fk, partition.SparseOn, partition.SparseAuto, partition.SparseOff)
	}
	lo := o.Link
	if lo == nil {
		return nil
	}
	if err := lo.Validate(); err != nil {
		return fmt.Errorf("link split: %w", err)
	}
	kind, _, err := partition.ParseLinkSplit(lo.Split)
	switch {
	case lo.Relation != "":
		return errors.New("--link-split: heterogeneous link splits (--relation) of a chunked dataset are not supported (partition the OGB layout instead)")
	case err != nil || kind != partition.LinkSplitRandom:
		return fmt.Errorf("--link-split %s: a chunked dataset takes random:TRAIN,VALID,TEST splits only (it has no split/time files)", lo.Split)
	case !o.Undirected:
		return errors.New("--link-split on a chunked dataset needs --undirected (the default): its pairs are the undirected graph's")
	case o.Time:
		return errors.New("--link-split with --time on a chunked dataset is not supported (partition the OGB layout instead)")
	case o.Split != "":
		return fmt.Errorf("--split %q names a node split, which a link partition does not use", o.Split)
	case lo.Graph == partition.LinkGraphAll:
		return fmt.Errorf("--link-graph %s needs --time", lo.Graph)
	}
	return nil
}

// JobParts returns, on every rank of c, the partition of o.Data for this
// job, one part per rank, reused from the cache when a complete one
// matches (partition.CacheOptions): a chunked dataset is partitioned by
// every rank with o.Method (ChooseMethod's) into the directory rank 0
// picks, which it sends as "+dir" to reuse or "-dir" to write; a raw one
// by rank 0 (partition.CachedRaw), the others waiting for the directory
// or rank 0's error, which explain (if set) rewrites for the user first.
// What was done is printed to out on rank 0. It is collective.
func JobParts(c *collectives.Comm, o partition.CacheOptions, out io.Writer, explain func(error) error) (string, error) {
	o.Parts = c.Size()
	if !graph.IsChunkedLayout(o.Data) {
		// Partitioning a large dataset takes rank 0 minutes, during which
		// the others wait in the broadcast below by design.
		defer c.Untimed("partition --data on rank 0")()
		var dir string
		var err error
		if c.Rank() == 0 {
			dir, err = partition.CachedRaw(o, out)
			if err != nil && explain != nil {
				// The other ranks get the message only (as text).
				err = explain(err)
			}
		}
		b, err := collectives.BcastBytes(c, 0, []byte(dir), err)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	// Every rank partitions: ranks that wait for a slower one's chunk (or
	// PT-Scotch) may wait long, as in mpignn partition.
	defer c.Untimed("partition --data on every rank")()
	o.Chunked = true
	var pick string
	var err error
	if c.Rank() == 0 {
		dir, reuse, perr := o.Pick()
		pick, err = "-"+dir, perr
		if reuse {
			pick = "+" + dir
		}
	}
	b, err := collectives.BcastBytes(c, 0, []byte(pick), err)
	if err != nil {
		return "", err
	}
	pick = string(b)
	dir := pick[1:]
	if pick[0] == '+' {
		if c.Rank() == 0 {
			fmt.Fprintf(out, "partition: reusing %s\n", dir)
		}
		return dir, nil
	}
	if _, err := Run(c, Options{
		Data: o.Data, Out: dir, Parts: o.Parts, Method: o.Method, Seed: o.Seed, Split: o.Split,
		Undirected: true, Reverse: true, SparseFeatures: o.SparseFeatures, Time: o.Time, Link: o.Link, Overwrite: true,
		EdgeFeat: o.EdgeFeat, NodeFeat: o.NodeFeat, FeatDType: o.FeatDType,
	}); err != nil {
		return "", fmt.Errorf("partition into %s: %w", dir, err)
	}
	if c.Rank() == 0 {
		fmt.Fprintf(out, "partition: wrote %d parts (%s, all ranks) to %s\n", o.Parts, o.Method, dir)
	}
	return dir, nil
}

// MetaFields describes the partition directory every rank will load, for
// collectives.AgreeFields: the properties that size its arrays and
// messages, by name (so a mismatch names feat_dim rather than a digest),
// then the digest of META.json, which lists the checksum of every file. A
// META.json that cannot be read is a field too: ranks that all fail agree
// and then report the load error; a rank that alone fails is named.
func MetaFields(dir string) []collectives.Field {
	path := filepath.Join(dir, partition.MetaFile)
	raw, err := os.ReadFile(path)
	var m *partition.Meta
	if err == nil {
		m, err = partition.LoadMeta(dir)
	}
	if err != nil {
		return []collectives.Field{{Name: partition.MetaFile, Value: "unreadable", Source: path}}
	}
	offsets := make([]string, len(m.Offsets))
	for i, o := range m.Offsets {
		offsets[i] = strconv.FormatInt(o, 10)
	}
	sum := sha256.Sum256(raw)
	f := func(name, value string) collectives.Field {
		return collectives.Field{Name: name, Value: value, Source: path}
	}
	return []collectives.Field{
		f(partition.MetaFile, "readable"),
		f("format_version", strconv.Itoa(m.FormatVersion)),
		f("num_parts", strconv.Itoa(m.NumParts)),
		f("num_nodes", strconv.FormatInt(m.NumNodes, 10)),
		f("num_edges", strconv.FormatInt(m.NumEdges, 10)),
		f("feat_dim", strconv.Itoa(m.FeatDim)),
		f("num_classes", strconv.Itoa(m.NumClasses)),
		f("dataset", m.Dataset),
		f("method", m.Method),
		f("partition seed", strconv.FormatUint(m.Seed, 10)),
		f("default split", m.Split),
		f("offsets", strings.Join(offsets, ",")),
		f("halo_feats", strconv.FormatBool(m.HaloFeats)),
		f("META.json sha256", hex.EncodeToString(sum[:])),
	}
}
