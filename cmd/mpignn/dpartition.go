package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/internal/tempout"
	"mpignn/partition"
	"mpignn/partition/dpartition"
	"mpignn/spmd"
)

// chunkedMethod picks the distributed method for a chunked dataset: an
// assignment directory, random, label propagation (lp), multilevel (ml),
// or PT-Scotch
// (parmetis). Without --method (methodSet false) it is PT-Scotch, or random
// where the build has no PT-Scotch (MPICH). A method the user named is
// honoured or refused, never swapped: METIS needs the whole graph in one
// process, which a chunked dataset is made to avoid, so --method metis is
// refused with the methods that do apply, as is parmetis without PT-Scotch.
func chunkedMethod(method string, methodSet bool, assignment string) (string, error) {
	switch {
	case assignment != "":
		if methodSet {
			return "", errors.New("--assignment DIR gives the assignment; leave out --method")
		}
		return dpartition.MethodAssignment, nil
	case !methodSet && dpartition.ParMetisAvailable:
		return dpartition.MethodParMetis, nil
	case !methodSet:
		return partition.MethodRandom, nil
	case method == partition.MethodRandom || method == dpartition.MethodLP || method == dpartition.MethodML:
		return method, nil
	case method == dpartition.MethodParMetis && dpartition.ParMetisAvailable:
		return dpartition.MethodParMetis, nil
	case method == dpartition.MethodParMetis:
		return "", fmt.Errorf("--method %s: PT-Scotch is not available in this build (MPICH; Debian builds PT-Scotch against OpenMPI only); use --method lp, ml or random, or --assignment DIR", method)
	case method == partition.MethodMetis:
		return "", fmt.Errorf("--method metis: METIS needs the whole graph in one process, and a chunked dataset is partitioned by all ranks; use --method parmetis (PT-Scotch, the default here), lp, ml or random, or partition the OGB layout")
	}
	return "", fmt.Errorf("--method %q: want parmetis, lp, ml, random or --assignment DIR for a chunked dataset", method)
}

// refuseForChunked names the first flag the distributed partitioner does
// not support.
func (c partitionConfig) refuseForChunked() error {
	switch {
	case c.balance != "" || c.imbalance != 0:
		return errors.New("--balance/--imbalance steer METIS, which a chunked dataset does not use")
	}
	return nil
}

// partitionChunked runs `mpignn partition --data CHUNKED` on every rank of
// the job: any number of parts, part q written by rank q mod ranks. cleanup
// (listening since before MPI started) removes rank 0's temporary output
// on SIGINT/SIGTERM.
func partitionChunked(w io.Writer, c partitionConfig, cleanup *tempout.Cleanup) error {
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
		NoReverse: noRev, NormalizeFeatures: c.normalize, SparseFeatures: c.sparse, HaloFeats: c.haloFeats, Time: c.time, Link: c.link, Overwrite: c.force, Workers: c.workers,
	}
	runWorld(func(world *spmd.World) error {
		if world.Rank() != 0 {
			cleanup.Linger(interruptLinger) // rank 0 writes the output
		}
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
			fmt.Fprintf(w, "partitioned %s into %d parts on %d ranks (%s) and wrote %s in %.1fs\n", c.data, c.parts, comm.Size(), method, c.out, time.Since(t0).Seconds())
			fmt.Fprintf(w, "rank 0 steps: %s\n", strings.Join(phases, ", "))
			return m.Stats().WriteText(w)
		}
		return nil
	})
	return nil
}

// prepareChunkedParts is prepareParts for a chunked dataset: every rank
// partitions (one part per rank, with o.Method as chunkedMethod resolved
// it, trainFlags.cacheOptions) into the cache, unless rank 0 finds a
// complete cached partition there.
func prepareChunkedParts(c *collectives.Comm, o partition.CacheOptions, out io.Writer) (string, error) {
	method, err := chunkedMethod(o.Method, true, "")
	if err != nil {
		return "", fmt.Errorf("train --data %s: %w", o.Data, err)
	}
	o.Method, o.Parts, o.Chunked = method, c.Size(), true
	// Rank 0 picks the directory: "+dir" to reuse it, "-dir" to write it.
	var pick string
	if c.Rank() == 0 {
		dir, reuse, perr := o.Pick()
		pick, err = "-"+dir, perr
		if reuse {
			pick = "+" + dir
		}
	}
	b, err := collectives.BcastBytes(c, 0, []byte(pick), err)
	if err != nil {
		return "", fmt.Errorf("train --data %s: %w", o.Data, err)
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
		Data: o.Data, Out: dir, Parts: o.Parts, Method: method, Seed: o.Seed, Split: o.Split,
		Undirected: true, Reverse: true, SparseFeatures: o.SparseFeatures, Time: o.Time, Link: o.Link, Overwrite: true,
	}); err != nil {
		return "", fmt.Errorf("train --data %s: partition into %s: %w", o.Data, dir, err)
	}
	if c.Rank() == 0 {
		fmt.Fprintf(out, "partition: wrote %d parts (%s, all ranks) to %s\n", o.Parts, method, dir)
	}
	return dir, nil
}

// isChunked reports whether --data names a chunked dataset.
func isChunked(data string) bool { return graph.IsChunkedLayout(data) }
