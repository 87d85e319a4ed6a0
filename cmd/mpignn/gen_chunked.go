package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/graph/chunkgen"
	"mpignn/internal/osx"
	"mpignn/internal/tempout"
	"mpignn/internal/testhold"
	"mpignn/spmd"
)

// Output layouts of `mpignn gen --format`.
const (
	genFormatOGB     = "ogb"
	genFormatChunked = "chunked"
)

// interruptLinger bounds how long a rank other than 0 waits, after it
// removed its temporaries on SIGINT/SIGTERM, for the launcher to end it
// (tempout.Cleanup.Linger): rank 0, which writes the output, exits once
// its own removal is complete, and that ends the job. Were a rank without
// output to exit first, MPICH's Hydra would SIGKILL rank 0 in the middle
// of its removal.
const interruptLinger = 10 * time.Second

// genHoldChunks is the test hold every rank passes before it writes its
// chunks (after the temporary directory exists).
const genHoldChunks = "gen-chunks"

// newChunkGen checks a generator made from the command line (chunkgen.New
// or NewHetero) before MPI starts: every rank holds the same command line,
// so a mistake is one usage line from the first rank (see main), not one
// per rank.
func newChunkGen(g *chunkgen.Gen, err error) (*chunkgen.Gen, error) {
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	o := g.Options()
	need := g.ChunkMemory()
	if avail, ok := osx.FitsMemory(need); !ok {
		return nil, &usageError{fmt.Sprintf("--chunk-nodes %d --chunk-edges %d --feat-dim %d need ~%s per process to write one chunk but this machine has %s available; lower them",
			o.ChunkNodes, o.ChunkEdges, o.FeatDim, osx.FormatBytes(need), osx.FormatBytes(float64(avail)))}
	}
	return g, nil
}

// runGenChunked implements `gen --format chunked`: every rank of the job
// (one without mpirun) writes its share of the chunks (genJobs) into rank
// 0's temporary directory; once the
// ranks' counts add up to the whole graph, rank 0 writes metadata.json
// and renames the directory to out. The files do not depend on the number
// of ranks (chunkgen).
func runGenChunked(g *chunkgen.Gen, out string) error {
	if err := emptyOrMissing(out); err != nil {
		return &usageError{err.Error()} // every rank sees it: one line
	}
	spmd.Run(func(w *spmd.World) error {
		c, err := collectives.NewComm()
		if err != nil {
			return err
		}
		rank, size := c.Rank(), c.Size()
		// SIGINT/SIGTERM (mpirun forwards them to every rank) remove the
		// temporary directory; out appears only complete.
		cleanup := tempout.NewCleanup("mpignn gen")
		if rank != 0 {
			cleanup.Linger(interruptLinger)
		}
		defer cleanup.Listen()()
		t0 := time.Now()
		var name []byte
		var mkErr error
		if rank == 0 {
			tmp := tempout.Own(out)
			cleanup.Add(tmp)
			mkErr = makeGenTemp(out, tmp, g.Dirs())
			name = []byte(tmp)
		}
		name, err = collectives.BcastBytes(c, 0, name, mkErr)
		if err != nil {
			return err
		}
		tmp := string(name)
		if rank != 0 {
			cleanup.Add(tmp)
		} else {
			testhold.At("temp:" + filepath.Base(filepath.Clean(out)))
		}
		testhold.At(genHoldChunks)

		// counts: nodes, edges, same-class draws written by this rank.
		counts := make([]int64, 3)
		for _, j := range genJobs(g, rank, size) {
			if !j.edges {
				n, err := g.WriteNodeChunk(tmp, j.i, j.k)
				if err != nil {
					return fmt.Errorf("rank %d: node chunk %d: %w", rank, j.k, err)
				}
				counts[0] += n
				continue
			}
			m, same, err := g.WriteEdgeChunk(tmp, j.i, j.k)
			if err != nil {
				return fmt.Errorf("rank %d: edge chunk %d: %w", rank, j.k, err)
			}
			counts[1] += m
			counts[2] += same
		}
		if err := collectives.Allreduce(c, counts, collectives.Sum); err != nil {
			return err
		}
		if rank == 0 {
			if counts[0] != g.NumNodes() || counts[1] != g.NumEdges() {
				return fmt.Errorf("internal error: the ranks wrote %d nodes and %d edges of %d and %d", counts[0], counts[1], g.NumNodes(), g.NumEdges())
			}
			if err := finishGenChunked(g, tmp, out); err != nil {
				return err
			}
			o, sp := g.Options(), g.SplitCounts()
			shape := fmt.Sprintf("%d undirected pairs, both directions", g.NumEdges()/2)
			if g.Hetero() {
				shape = fmt.Sprintf("ogbn-mag-shaped, %d node types, %d relations", g.NumTypes(), g.NumRels())
			}
			fmt.Printf("wrote %s: chunked, %d nodes, %d edges (%s), %d classes, dim %d, split %q %d/%d/%d\n",
				out, g.NumNodes(), g.NumEdges(), shape, o.Classes, o.FeatDim, graph.GenSplitName, sp[0], sp[1], sp[2])
			var nc, ec int
			for t := range g.NumTypes() {
				nc += g.NumNodeChunks(t)
			}
			for r := range g.NumRels() {
				ec += g.NumEdgeChunks(r)
			}
			fmt.Printf("%d node chunks, %d edge chunks on %d ranks; edge homophily %.4f\n", nc, ec, size, float64(counts[2])/float64(g.NumDraws()))
			fmt.Printf("time: %.1fs\n", time.Since(t0).Seconds())
		}
		// The others return once out exists.
		return c.Barrier()
	})
	return nil
}

// genJob is one chunk to write: chunk k of node type i, or of relation i.
type genJob struct {
	edges bool
	i, k  int
}

// genJobs returns rank's chunks: every type's node chunks, then every
// relation's edge chunks, dealt round-robin, so that each rank gets its
// share of the edges even when a relation has fewer chunks than ranks.
func genJobs(g *chunkgen.Gen, rank, size int) []genJob {
	var all []genJob
	for t := range g.NumTypes() {
		for k := range g.NumNodeChunks(t) {
			all = append(all, genJob{false, t, k})
		}
	}
	for r := range g.NumRels() {
		for k := range g.NumEdgeChunks(r) {
			all = append(all, genJob{true, r, k})
		}
	}
	var mine []genJob
	for j := rank; j < len(all); j += size {
		mine = append(mine, all[j])
	}
	return mine
}

// makeGenTemp creates tmp, the temporary directory of out, with the chunk
// directories inside (rank 0 makes them, so that a rank writing after the
// directory was removed on a signal fails rather than recreating it).
func makeGenTemp(out, tmp string, dirs []string) error {
	if err := emptyOrMissing(out); err != nil {
		return err
	}
	if _, err := tempout.RemoveStale(out); err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(out)), 0o755); err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			return fmt.Errorf("output %s: %w", out, err)
		}
	}
	return nil
}

// finishGenChunked writes README.md and metadata.json into the complete
// temporary directory and renames it to out (an empty out is replaced).
func finishGenChunked(g *chunkgen.Gen, tmp, out string) error {
	meta, err := chunkgen.MetaJSON(g.Meta())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "README.md"), []byte(g.Describe()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, graph.ChunkedMetaFile), meta, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := emptyOrMissing(out); err != nil {
		return err
	}
	if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// emptyOrMissing refuses an out that is a file or a directory with
// entries: only a missing or empty directory is replaced.
func emptyOrMissing(out string) error {
	ents, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("write %s: %w", out, err)
	case len(ents) > 0:
		return fmt.Errorf("write %s: directory exists and is not empty", out)
	}
	return nil
}
