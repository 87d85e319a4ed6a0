package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/partition/dpartition"
	"mpignn/spmd"
	"mpignn/train/dist"
)

// chunkedMethod picks the distributed method for a chunked dataset: an
// assignment directory, random, or PT-Scotch (--method parmetis, and what
// metis, the default, means for a chunked dataset, whose graph no single
// process holds). Without PT-Scotch in the build (MPICH) a requested
// parmetis or metis is refused; the default falls back to random.
func chunkedMethod(method string, methodSet bool, assignment string) (string, error) {
	switch {
	case assignment != "":
		if methodSet {
			return "", errors.New("--assignment DIR gives the assignment; leave out --method")
		}
		return dpartition.MethodAssignment, nil
	case method == partition.MethodRandom:
		return method, nil
	case (method == partition.MethodMetis || method == dpartition.MethodParMetis) && dpartition.ParMetisAvailable:
		return dpartition.MethodParMetis, nil
	case method == partition.MethodMetis && !methodSet:
		return partition.MethodRandom, nil
	case method == partition.MethodMetis || method == dpartition.MethodParMetis:
		return "", fmt.Errorf("--method %s: a chunked dataset is partitioned by all ranks with PT-Scotch, which is not available in this build (MPICH; Debian builds PT-Scotch against OpenMPI only); use --method random or --assignment DIR", method)
	}
	return "", fmt.Errorf("--method %q: want parmetis, random or --assignment DIR for a chunked dataset", method)
}

// refuseForChunked names the first flag the distributed partitioner does
// not support.
func (c partitionConfig) refuseForChunked() error {
	switch {
	case c.link != nil:
		return errors.New("--link-split: link splits of a chunked dataset are not supported yet (partition the OGB layout instead)")
	case c.time:
		return errors.New("--time: times of a chunked dataset are not supported yet (partition the OGB layout instead)")
	case c.haloFeats:
		return errors.New("--halo-feats: not supported for a chunked dataset yet")
	case c.balance != "" || c.imbalance != 0:
		return errors.New("--balance/--imbalance steer METIS, which a chunked dataset does not use")
	}
	return nil
}

// partitionChunked runs `mpignn partition --data CHUNKED` on every rank of
// the job: one part per rank (--parts must equal the rank count).
func partitionChunked(w io.Writer, c partitionConfig) error {
	if err := c.refuseForChunked(); err != nil {
		return err
	}
	method, err := chunkedMethod(c.method, c.methodSet, c.assignment)
	if err != nil {
		return err
	}
	var noRev []string
	if c.noReverse != "" && c.noReverse != "all" {
		for _, r := range strings.Split(c.noReverse, ",") {
			noRev = append(noRev, strings.TrimSpace(r))
		}
	}
	opt := dpartition.Options{
		Data: c.data, Out: c.out, Parts: c.parts, Method: method, AssignmentDir: c.assignment, Seed: c.seed,
		Split: c.split, LabelType: c.labelType, Undirected: c.undirected, Reverse: c.undirected && c.noReverse != "all",
		NoReverse: noRev, NormalizeFeatures: c.normalize, SparseFeatures: c.sparse, Overwrite: c.force, Workers: c.workers,
	}
	spmd.Run(func(world *spmd.World) error {
		comm, err := collectives.NewComm()
		if err != nil {
			return err
		}
		var phases []string
		opt.Phase = func(name string, d time.Duration) {
			phases = append(phases, fmt.Sprintf("%s %.1fs", name, d.Seconds()))
		}
		t0 := time.Now()
		m, err := dpartition.Run(comm, opt)
		if err != nil {
			return err
		}
		if comm.Rank() == 0 {
			fmt.Fprintf(w, "partitioned %s on %d ranks (%s) and wrote %s in %.1fs\n", c.data, comm.Size(), method, c.out, time.Since(t0).Seconds())
			fmt.Fprintf(w, "rank 0 steps: %s\n", strings.Join(phases, ", "))
			return m.Stats().WriteText(w)
		}
		return nil
	})
	return nil
}

// prepareChunkedParts is prepareParts for a chunked dataset: every rank
// partitions (one part per rank; --method metis means PT-Scotch here) into
// the cache, unless rank 0 finds a complete cached partition there.
func prepareChunkedParts(c *collectives.Comm, data, split, method string, seed uint64, link *partition.LinkOptions, timed bool, sparse, cacheDir string, out *os.File) (string, error) {
	switch {
	case link != nil:
		return "", fmt.Errorf("train --data %s: link prediction on a chunked dataset is not supported yet", data)
	case timed:
		return "", fmt.Errorf("train --data %s: temporal sampling on a chunked dataset is not supported yet", data)
	}
	method, err := chunkedMethod(method, true, "")
	if err != nil {
		return "", fmt.Errorf("train --data %s: %w", data, err)
	}
	splitName := split
	if splitName == "" {
		splitName = "auto"
	}
	name := fmt.Sprintf("%s-%s-parts-%d-%s-seed%d-%s", filepath.Base(filepath.Clean(data)), splitName, c.Size(), method, seed, sparse)
	// Rank 0 picks the directory: "+dir" to reuse it, "-dir" to write it.
	var pick string
	if c.Rank() == 0 {
		pick, err = pickChunkedCache(data, name, cacheDir, c.Size(), method, split, seed)
	}
	b, err := dist.BcastBytes(c, 0, []byte(pick), err)
	if err != nil {
		return "", fmt.Errorf("train --data %s: %w", data, err)
	}
	pick = string(b)
	dir := pick[1:]
	if pick[0] == '+' {
		if c.Rank() == 0 {
			fmt.Fprintf(out, "partition: reusing %s\n", dir)
		}
		return dir, nil
	}
	if _, err := dpartition.Run(c, dpartition.Options{
		Data: data, Out: dir, Parts: c.Size(), Method: method, Seed: seed, Split: split,
		Undirected: true, Reverse: true, SparseFeatures: sparse, Overwrite: true,
	}); err != nil {
		return "", fmt.Errorf("train --data %s: partition into %s: %w", data, dir, err)
	}
	if c.Rank() == 0 {
		fmt.Fprintf(out, "partition: wrote %d parts (%s, all ranks) to %s\n", c.Size(), method, dir)
	}
	return dir, nil
}

// pickChunkedCache returns "+dir" for a complete cached partition named
// name, else "-dir" for the first cache directory that can be written.
func pickChunkedCache(data, name, cacheDir string, parts int, method, split string, seed uint64) (string, error) {
	var errs []error
	for _, dir := range partsCacheDirs(data, name, cacheDir) {
		if m, err := partition.LoadMeta(dir); err == nil && m.NumParts == parts && m.Method == method && m.Seed == seed &&
			(split == "" || m.Split == split) && partition.VerifyFiles(dir, m) == nil {
			return "+" + dir, nil
		}
		if err := cacheParentUsable(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		return "-" + dir, nil
	}
	return "", errors.Join(errs...)
}

// isChunked reports whether --data names a chunked dataset.
func isChunked(data string) bool { return graph.IsChunkedLayout(data) }
