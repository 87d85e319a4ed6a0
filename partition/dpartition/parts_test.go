package dpartition

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
)

// TestPartsNotRanks: any number of parts K from P ranks (rank q mod P
// writes part q, so a rank writes several parts, or none): the directory
// is byte-identical to the single-process K-part one for the same
// assignment (which a K-rank run also gives), homogeneous with halo
// features, timed, and heterogeneous; label propagation into K parts
// writes a partition that loads.
func TestPartsNotRanks(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	for _, tc := range []struct {
		name   string
		K      int
		hetero bool
		time   bool
		halo   bool
	}{
		{"one", 1, false, false, true},
		{"more", P + 1, false, false, true},
		{"many", 2*P + 1, false, false, false},
		{"time", P + 2, false, true, false},
		{"hetero", 2*P + 1, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, chunked := filepath.Join(dir, "g-"+tc.name), filepath.Join(dir, "chunked-"+tc.name)
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			assignDir := filepath.Join(dir, "assign-"+tc.name)
			method := partition.MethodRandom
			if tc.hetero {
				method = MethodAssignment
			}
			var err error
			if c.Rank() == 0 {
				err = func() error {
					if tc.hetero {
						d, err := graph.GenerateHetero(graph.HeteroGenOptions{
							Papers: 200, Authors: 260, Institutions: 9, Fields: 20,
							Cites: 1200, Writes: 1500, Affiliations: 250, Topics: 900,
							Classes: 3, FeatDim: 3, FeatSep: 1, Seed: 2,
						})
						if err != nil {
							return err
						}
						if err := graph.WriteHetero(src, d); err != nil {
							return err
						}
						if err := graph.ConvertToChunked(src, chunked, graph.ConvertOptions{ChunkNodes: 50, ChunkEdges: 400}); err != nil {
							return err
						}
						if d, err = graph.ReadOGBHetero(src, graph.DefaultHeteroReadOptions()); err != nil {
							return err
						}
						assign := make([]int32, d.NumNodes())
						for v := range assign {
							assign[v] = int32((v * 5 / 2) % tc.K)
						}
						if err := writeAssign(assignDir, d.Schema.NodeTypes, d.Schema.NodeOrig, assign); err != nil {
							return err
						}
						_, err = partition.WriteHetero(single, d, assign, tc.K, partition.Options{Method: method, Seed: 3, Undirected: true, Workers: 1})
						return err
					}
					if err := genChunked(src, chunked, graph.GenOptions{Nodes: 389, AvgDegree: 6, Classes: 3, FeatDim: 4, Seed: 6, Workers: 1,
						EdgeTime: tc.time, NodeTime: tc.time}, graph.ConvertOptions{ChunkNodes: 30, ChunkEdges: 250}); err != nil {
						return err
					}
					ro := graph.UndirectedOptions()
					ro.Time = tc.time
					d, err := graph.ReadOGB(src, ro)
					if err != nil {
						return err
					}
					_, err = partition.Write(single, d, partition.Random(d.NumNodes, tc.K, 3), tc.K, partition.Options{
						Method: method, Seed: 3, Undirected: true, Workers: 1, Time: tc.time, HaloFeats: tc.halo,
					})
					return err
				}()
			}
			agree(t, c, err)
			_, err = Run(c, Options{
				Data: chunked, Out: dist, Parts: tc.K, Method: method, AssignmentDir: assignDir, Seed: 3,
				Undirected: true, Reverse: true, Time: tc.time, HaloFeats: tc.halo, Workers: 1, RoundIDs: 31, RoundEdges: 120,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				err = sameTree(single, dist)
			}
			agree(t, c, err)
		})
	}
	// ml into 3 parts whatever the rank count: the written tree is the
	// same on 1-4 ranks (digest pinned; the binary runs with each).
	t.Run("ml", func(t *testing.T) {
		const K = 3
		out := filepath.Join(dir, "ml")
		_, err := Run(c, Options{Data: filepath.Join(dir, "chunked-more"), Out: out, Parts: K, Method: MethodML, Seed: 3, Undirected: true, Workers: 1})
		agree(t, c, err)
		if c.Rank() == 0 {
			d, err := treeDigest(out)
			require.NoError(t, err)
			require.Equal(t, uint64(0xe9f9a025e761364b), d, "ml into %d parts on %d ranks differs from the pinned tree", K, P)
		}
	})
	t.Run("lp", func(t *testing.T) {
		K := P + 1
		out := filepath.Join(dir, "lp")
		m, err := Run(c, Options{Data: filepath.Join(dir, "chunked-more"), Out: out, Parts: K, Method: MethodLP, Seed: 3, Undirected: true, Workers: 1})
		agree(t, c, err)
		if c.Rank() == 0 {
			require.Equal(t, K, m.NumParts)
			for q := range K {
				pt, err := partition.Load(out, q)
				require.NoError(t, err, fmt.Sprintf("part %d", q))
				require.Positive(t, pt.Hi-pt.Lo, "part %d is empty", q)
			}
		}
	})
}

// treeDigest hashes every file of a directory tree (relative name and
// contents, in name order), to pin a partition written on any rank count.
func treeDigest(dir string) (uint64, error) {
	h := fnv.New64a()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		return nil
	})
	return h.Sum64(), err
}
