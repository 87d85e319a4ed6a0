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
	"mpignn/partition/dpartition"
	"mpignn/spmd"
)

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
	method := c.chunkedMethod // parsePartition chose it and refused what does not apply
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
		EdgeFeat: c.edgeFeat, NodeFeat: c.nodeFeat, FeatDType: c.featDType,
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

// isChunked reports whether --data names a chunked dataset.
func isChunked(data string) bool { return graph.IsChunkedLayout(data) }
