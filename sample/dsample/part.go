package dsample

import (
	"fmt"
	"runtime/debug"

	"mpignn/collectives"
	"mpignn/partition"
)

// OpenPart loads this rank's partition of the directory dir and decides the
// job's layout:
//   - a part per rank (the partition's part count equals the ranks'): rank
//     r loads part r, and where a node runs several ranks c becomes shared
//     with a group per rank (collectives.Comm.ShareRanks), so that the
//     stores opened afterwards read the parts of the node's other ranks from
//     memory;
//   - otherwise parts shared by the ranks of a node: with one part per
//     node (or a multiple of the node count, parts of a node), the ranks of
//     a part cut it into shares of consecutive nodes (partition.ShareBounds),
//     each loads its share (partition.LoadRange), and c becomes shared
//     (collectives.Comm.ShareGroups), so the stores opened afterwards keep
//     one copy of the part in the node's memory; in a link partition each
//     rank also reads the id-map block of its rank in the view.
//
// The Part returned is seen as one of P parts either way (Meta.Shared tells
// a share). It is collective; every failure is every rank's.
func OpenPart(c *collectives.Comm, dir string) (*partition.Part, error) {
	m, err := partition.LoadMeta(dir)
	if err = collectives.Agree(c, rankErr(c, err)); err != nil {
		return nil, err
	}
	if m.NumParts >= c.Size() {
		// More parts than ranks is refused here, with how to launch.
		p, err := partition.LoadRank(dir, c.Rank(), c.Size())
		if err = collectives.Agree(c, rankErr(c, err)); err != nil {
			return nil, err
		}
		// Ranks of one node read each other's parts from memory.
		leaders, err := collectives.NodeLeaders(c)
		if err == nil {
			_, err = c.ShareRanks(leaders)
		}
		if err != nil {
			return nil, fmt.Errorf("partition %s: %w", dir, err)
		}
		return p, nil
	}
	leaders, err := collectives.NodeLeaders(c)
	var first []int
	if err == nil {
		first, err = collectives.GroupRanks(leaders, m.NumParts)
	}
	if err != nil {
		err = fmt.Errorf("partition %s: %w", dir, err)
	}
	// Every rank computed the same layout, so mostly the same error: one
	// line for the job.
	if err := collectives.Agree(c, err); err != nil {
		return nil, err
	}
	if err := c.ShareGroups(leaders, first); err != nil {
		return nil, err
	}
	_, g := c.Groups()
	j, n := c.Rank()-first[g], first[g+1]-first[g]
	var part *partition.Part
	bounds, err := partition.ShareBounds(dir, m, g, n)
	if err == nil {
		part, err = partition.LoadRange(dir, m, g, bounds[j], bounds[j+1])
	}
	if err = collectives.Agree(c, rankErr(c, err)); err != nil {
		return nil, err
	}
	// The shares' ranges, in rank order, tile the graph: they are the
	// offsets of the view with one part per rank.
	ranges, err := collectives.Allgather(c, []int64{part.Lo, part.Hi})
	if err != nil {
		return nil, fmt.Errorf("open partition %s: %w", dir, err)
	}
	offsets := make([]int64, c.Size()+1)
	for r := range c.Size() {
		if ranges[2*r] != offsets[r] {
			return nil, fmt.Errorf("open partition %s: rank %d holds nodes from %d, not %d: ranks cut their parts differently", dir, r, ranges[2*r], offsets[r])
		}
		offsets[r+1] = ranges[2*r+1]
	}
	part.Meta = m.ShareView(first, offsets)
	part.ID = c.Rank()
	if m.Link != nil {
		// The id map's block of rank r is that of part r of the view (see
		// partition.LoadOrigBlock): the parts on disk cut [0,N) into K
		// blocks, the view into P.
		lo, hi := partition.OrigBlock(m.NumNodes, c.Size(), c.Rank())
		err := part.LoadOrigBlock(dir, m, lo, hi)
		if err = collectives.Agree(c, rankErr(c, err)); err != nil {
			return nil, err
		}
	}
	// Each rank streamed its part's whole files to keep its share: hand the
	// decoders' garbage back now, or every rank of a node holds a heap
	// grown to the part's size for the rest of the job.
	debug.FreeOSMemory()
	return part, nil
}

func rankErr(c *collectives.Comm, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("rank %d: %w", c.Rank(), err)
}
