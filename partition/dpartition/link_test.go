package dpartition

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"testing"

	"mpignn/graph"
	"mpignn/partition"
)

// TestLinkMatchesSingleProcess: with Options.Link the distributed
// partition of a chunked dataset is byte-identical to partition.Write with
// the same link options and assignment (random, and an assignment file) on
// any rank count: the split, canonical ids, fixed negatives and pools
// (which do not depend on the parts), the training adjacency, the valid
// adjacency and structural features; and the negatives and pools, keyed
// by canonical id, have a pinned digest whatever the rank count.
func TestLinkMatchesSingleProcess(t *testing.T) {
	c := comm(t)
	P := c.Size()
	dir := sharedDir(t, c)
	src, chunked := filepath.Join(dir, "g"), filepath.Join(dir, "chunked")
	for _, tc := range []struct {
		name   string
		method string
		link   partition.LinkOptions
		halo   bool
	}{
		{"random", partition.MethodRandom, partition.LinkOptions{Split: "random:0.8,0.1,0.1", NegsPerPos: 7, Pool: 300}, false},
		{"assignment-struct", MethodAssignment, partition.LinkOptions{Split: "random:0.7,0.2,0.1", NegsPerPos: 3, Pool: 101, StructFeats: 6}, true},
		{"no-valid-adj", partition.MethodRandom, partition.LinkOptions{Split: "random:0.9,0.05,0.05", NoValidAdj: true, Pool: 50}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			single, dist := filepath.Join(dir, "single-"+tc.name), filepath.Join(dir, "dist-"+tc.name)
			assignDir := filepath.Join(dir, "assign-"+tc.name)
			var err error
			if c.Rank() == 0 {
				err = func() error {
					if !graph.IsChunkedLayout(chunked) {
						if err := genChunked(src, chunked, graph.GenOptions{Nodes: 523, AvgDegree: 6, Classes: 4, FeatDim: 5, Seed: 8, Workers: 1}, graph.ConvertOptions{ChunkNodes: 40, ChunkEdges: 300}); err != nil {
							return err
						}
					}
					lo := tc.link
					d, err := graph.ReadOGB(src, lo.ReadOptions(graph.UndirectedOptions()))
					if err != nil {
						return err
					}
					assign := partition.Random(d.NumNodes, P, 5)
					if tc.method == MethodAssignment {
						for v := range assign {
							assign[v] = int32((v * 7 / 3) % P)
						}
						if err := writeAssign(assignDir, []string{graph.HomoNodeType}, []int64{0, d.NumNodes}, assign); err != nil {
							return err
						}
					}
					_, err = partition.Write(single, d, assign, P, partition.Options{
						Method: tc.method, Seed: 5, Undirected: true, Workers: 1, HaloFeats: tc.halo, Link: &lo,
					})
					return err
				}()
			}
			agree(t, c, err)
			lo := tc.link
			_, err = Run(c, Options{
				Data: chunked, Out: dist, Parts: P, Method: tc.method, AssignmentDir: assignDir, Seed: 5,
				Undirected: true, HaloFeats: tc.halo, Link: &lo, Workers: 1, RoundIDs: 29, RoundEdges: 90,
			})
			agree(t, c, err)
			if c.Rank() == 0 {
				err = sameTree(single, dist)
				if err == nil && tc.name == "random" {
					var digest string
					digest, err = linkDigest(dist)
					if err == nil && digest != "1d3883d28f706775" {
						err = fmt.Errorf("negatives and pools digest %s on %d ranks, want the pinned one", digest, P)
					}
				}
			}
			agree(t, c, err)
		})
	}
}

// linkDigest hashes the valid and test positives (by canonical id) with
// their fixed negatives and the pools (by pool index), in original ids,
// over every part of the partition in dir.
func linkDigest(dir string) (string, error) {
	m, err := partition.LoadMeta(dir)
	if err != nil {
		return "", err
	}
	type row struct{ u, v int64 }
	neg := [2]map[int64][]int64{{}, {}}
	pos := [2]map[int64]row{{}, {}}
	pool := [2]map[int64]row{{}, {}}
	for p := range m.NumParts {
		pt, err := partition.Load(dir, p)
		if err != nil {
			return "", err
		}
		lp := pt.Link
		for s, set := range []string{"valid", "test"} {
			e := lp.Positives(set)
			_, negOrig := lp.Negatives(set)
			k := len(negOrig) / max(e.Len(), 1)
			for i, id := range e.ID {
				pos[s][id] = row{e.SrcOrig[i], e.DstOrig[i]}
				neg[s][id] = negOrig[i*k : (i+1)*k]
			}
			pl := lp.NegPool(set)
			for i, id := range pl.ID {
				pool[s][id] = row{pl.SrcOrig[i], pl.DstOrig[i]}
			}
		}
	}
	h := fnv.New64a()
	for s := range 2 {
		for id := int64(0); id < int64(len(pos[s])); id++ {
			fmt.Fprintln(h, s, id, pos[s][id], neg[s][id])
		}
		for id := int64(0); id < int64(len(pool[s])); id++ {
			fmt.Fprintln(h, s, id, pool[s][id])
		}
	}
	return fmt.Sprintf("%016x", h.Sum64()), nil
}
