package collectives

// #include "shim.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Shared partitions: the ranks of one node (or of one part of a node) form a
// group that holds one partition in one copy. A DistArray of a shared Comm
// keeps a group's rows in one shared-memory segment of the node
// (MPI_Win_allocate_shared over the node's ranks): each rank still fills its
// own rows (its slice of its group's segment), reads every row of its node
// (its group's and those of the node's other groups) straight from memory
// with no MPI call, and reads the rows of other nodes with one-sided gets on
// a world window created over the segments (or with Alltoallv), one target
// rank per group. Ranks keep their own rows, so everything above DistArray
// sees a partition of P parts whose consecutive parts share memory.

// groups is the layout of a shared Comm.
type groups struct {
	// first[g] is the lowest world rank of group g; the group holds the
	// world ranks [first[g], first[g+1]).
	first []int
	of    []int // group of each world rank
	// The groups of this rank's node are [g0, g1); leader is the node's
	// lowest world rank; nodes is the job's node count.
	g0, g1, leader, nodes int
	leaders               []int      // NodeLeaders
	comm                  C.MPI_Comm // this rank's node
}

// SetNodeRanks makes the node layout (NodeLeaders) treat every n
// consecutive ranks as one node, so that shared partitions can be tested on
// one machine with several pretend nodes; 0 restores the real layout. A
// pretend node must lie within one real node (checked by NodeLeaders). It
// is not collective, but every rank must set the same value before
// NodeLeaders.
func (c *Comm) SetNodeRanks(n int) error {
	if n < 0 {
		return fmt.Errorf("node ranks %d: want >= 0", n)
	}
	c.nodeRanks = n
	return nil
}

// NodeLeaders returns, for every world rank, the lowest world rank on its
// node (MPI_COMM_TYPE_SHARED), or on its pretend node (SetNodeRanks). It
// fails where a pretend node spans two real nodes. It is collective.
func NodeLeaders(c *Comm) ([]int, error) {
	var leader C.int
	if err := c.call("MPI_Comm_split_type", gated, func() C.int { return C.shim_node_leader(&leader) }); err != nil {
		return nil, fmt.Errorf("node layout: %w", err)
	}
	all, err := Allgather(c, []int64{int64(leader), int64(c.nodeRanks)})
	if err != nil {
		return nil, fmt.Errorf("node layout: %w", err)
	}
	out := make([]int, c.size)
	for r := range out {
		if all[2*r+1] != int64(c.nodeRanks) {
			return nil, fmt.Errorf("node layout: rank %d groups %d ranks into a pretend node but rank %d %d", r, all[2*r+1], c.rank, c.nodeRanks)
		}
		out[r] = int(all[2*r])
		if n := c.nodeRanks; n > 0 {
			out[r] = r / n * n
			if all[2*r] != all[2*out[r]] {
				return nil, fmt.Errorf("node layout: pretend nodes of %d ranks: ranks %d and %d are on different machines", n, out[r], r)
			}
		}
	}
	return out, nil
}

// nodeStarts returns the runs of the nodes' ranks, node i holding ranks
// [starts[i], starts[i+1]), given every rank's node leader (NodeLeaders),
// or an error saying how to launch when a node's ranks are not
// consecutive.
func nodeStarts(leaders []int) ([]int, error) {
	var starts []int
	for r, l := range leaders {
		if r == 0 || l != leaders[r-1] {
			if l != r {
				return nil, fmt.Errorf("the ranks of a node are not consecutive (rank %d shares a node with rank %d): place ranks node by node (mpirun --map-by slot, srun --distribution=block)", r, l)
			}
			starts = append(starts, r)
		}
	}
	return append(starts, len(leaders)), nil
}

// GroupRanks cuts the ranks into parts groups of consecutive ranks within
// nodes, given every rank's node leader (NodeLeaders): one group per node
// when parts equals the node count, parts/nodes groups per node (as even as
// possible) when it is a multiple. The result is first (len parts+1): group
// g holds ranks [first[g], first[g+1]). It fails, saying how to launch,
// when the nodes' ranks are not consecutive or parts does not fit them.
func GroupRanks(leaders []int, parts int) ([]int, error) {
	P := len(leaders)
	starts, err := nodeStarts(leaders)
	if err != nil {
		return nil, err
	}
	nodes := len(starts) - 1
	if parts <= 0 || parts%nodes != 0 {
		return nil, fmt.Errorf("the partition has %d parts but the job's %d ranks run on %d nodes: partition into %d parts (one per node), a multiple of %d, or %d (one per rank)", parts, P, nodes, nodes, nodes, P)
	}
	per := parts / nodes
	first := make([]int, 0, parts+1)
	for i := range nodes {
		s := starts[i+1] - starts[i]
		if s < per {
			return nil, fmt.Errorf("the partition has %d parts, %d per node, but node %d runs only %d ranks: partition into %d parts (one per node)", parts, per, i, s, nodes)
		}
		for j := range per {
			first = append(first, starts[i]+s*j/per)
		}
	}
	return append(first, P), nil
}

// ShareGroups makes c's distributed arrays share each group's rows in
// memory (see the comment at the top of this file); leaders is NodeLeaders'
// result and first GroupRanks', the same on every rank. Arrays created
// before keep their layout. It is collective.
func (c *Comm) ShareGroups(leaders, first []int) error {
	if c.shared != nil {
		return errors.New("share groups: already shared")
	}
	if len(leaders) != c.size || len(first) < 2 || first[0] != 0 || first[len(first)-1] != c.size {
		return fmt.Errorf("share groups: groups %v do not cover %d ranks", first, c.size)
	}
	g := &groups{first: append([]int(nil), first...), of: make([]int, c.size), leader: leaders[c.rank], g0: -1, leaders: append([]int(nil), leaders...)}
	for k := range len(first) - 1 {
		if first[k+1] <= first[k] {
			return fmt.Errorf("share groups: group %d is empty", k)
		}
		for r := first[k]; r < first[k+1]; r++ {
			g.of[r] = k
			if leaders[r] != leaders[first[k]] {
				return fmt.Errorf("share groups: group %d spans two nodes (ranks %d and %d)", k, first[k], r)
			}
		}
		if leaders[first[k]] == g.leader {
			if g.g0 < 0 {
				g.g0 = k
			}
			g.g1 = k + 1
		}
		if k == 0 || leaders[first[k]] != leaders[first[k-1]] {
			g.nodes++
		}
	}
	if err := c.call("MPI_Comm_split", gated, func() C.int { return C.shim_comm_split(C.int(g.leader), &g.comm) }); err != nil {
		return fmt.Errorf("share groups: %w", err)
	}
	c.shared = g
	return nil
}

// ShareRanks makes c shared with a group of one rank per rank (ShareGroups
// with leaders, NodeLeaders' result): a layout of a part per rank whose
// ranks still read the rows of the other ranks of their node straight from
// memory, with no MPI call, as DistDGL's trainers read the partitions of
// their machine's servers. A DistArray then keeps each rank's rows in a
// segment of its node's shared memory; rows of other nodes move as before.
//
// It leaves c unshared and returns false where sharing gains nothing or
// cannot work: every node runs one rank; the ranks of a node are not
// consecutive (the node's segments are found by a rank's place on its
// node); or MPI cannot map memory shared by a node's ranks on some rank
// (OpenMPI with only its osc/rdma component, for one). A Comm shared by
// ShareRanks before stays as it is (a job that opens partitions again);
// one shared with groups of several ranks is refused. It is collective.
func (c *Comm) ShareRanks(leaders []int) (bool, error) {
	if sh := c.shared; sh != nil {
		if len(sh.first) != c.size+1 {
			return false, errors.New("share ranks: already shared by groups of several ranks")
		}
		return true, nil
	}
	if len(leaders) != c.size {
		return false, fmt.Errorf("share ranks: %d node leaders for %d ranks", len(leaders), c.size)
	}
	// Every rank sees the same leaders, so every rank declines alike.
	if starts, err := nodeStarts(leaders); err != nil || len(starts)-1 == c.size {
		return false, nil // not consecutive, or a node per rank
	}
	ok, err := c.canShareMemory(leaders[c.rank])
	if err != nil || !ok {
		return false, err
	}
	first := make([]int, c.size+1)
	for r := range first {
		first[r] = r
	}
	return true, c.ShareGroups(leaders, first)
}

// canShareMemory reports whether every rank can allocate memory shared by
// the ranks of its node (a small MPI_Win_allocate_shared over a node
// communicator split by leader). It is collective.
func (c *Comm) canShareMemory(leader int) (bool, error) {
	var node C.MPI_Comm
	if err := c.call("MPI_Comm_split", gated, func() C.int { return C.shim_comm_split(C.int(leader), &node) }); err != nil {
		return false, fmt.Errorf("share ranks: %w", err)
	}
	var win C.MPI_Win
	local := int64(0)
	// A failure is an answer (this rank cannot share), not an error; a
	// stalled job fails in the Allreduce below.
	if c.call("MPI_Win_allocate_shared", chained, func() C.int { return C.shim_win_allocate_shared(node, winAlign, &win) }) == nil {
		local = 1
		if err := c.call("MPI_Win_free", false, func() C.int { return C.shim_win_free(&win) }); err != nil {
			return false, fmt.Errorf("share ranks: %w", err)
		}
	}
	if err := c.call("MPI_Comm_free", false, func() C.int { return C.shim_comm_free(&node) }); err != nil {
		return false, fmt.Errorf("share ranks: %w", err)
	}
	all, err := AllreduceScalar(c, local, Min)
	if err != nil {
		return false, fmt.Errorf("share ranks: %w", err)
	}
	return all == 1, nil
}

// Groups returns the group layout of a shared Comm (first, as given to
// ShareGroups) and this rank's group; nil and -1 for an unshared one.
func (c *Comm) Groups() (first []int, mine int) {
	if c.shared == nil {
		return nil, -1
	}
	return c.shared.first, c.shared.of[c.rank]
}

// sharedSegment holds the rows of a DistArray's groups on one node: a
// shared-memory window on the node where each group's first rank
// allocates its group's rows, every group's rows as mapped in this process,
// and, for one-sided reads by other nodes, a world window over this rank's
// group's rows.
type sharedSegment struct {
	c     *Comm
	shm   C.MPI_Win
	world C.MPI_Win
	rma   bool
	// groups[g-g0] are the rows of the node's group g; bytes this rank's
	// group's.
	groups [][]byte
	bytes  []byte
}

// newSharedSegment allocates the node's groups' rows (groupBytes: the bytes
// of every group, indexed by group) and, with rma, the world window. It is
// collective.
func newSharedSegment(c *Comm, groupBytes []int64, rma bool) (*sharedSegment, error) {
	sh := c.shared
	// With one node every row is in memory: no rank reads with MPI.
	s := &sharedSegment{c: c, rma: rma && sh.nodes > 1}
	my := sh.of[c.rank]
	var mine int64
	if c.rank == sh.first[my] {
		mine = (groupBytes[my] + winAlign - 1) / winAlign * winAlign
	}
	if err := c.call("MPI_Win_allocate_shared", gated, func() C.int {
		return C.shim_win_allocate_shared(sh.comm, C.int64_t(mine), &s.shm)
	}); err != nil {
		return nil, err
	}
	s.groups = make([][]byte, sh.g1-sh.g0)
	for g := sh.g0; g < sh.g1; g++ {
		var base unsafe.Pointer
		// Ranks of a node are consecutive: a rank's place on its node is
		// its distance from the node's first.
		if err := c.call("MPI_Win_shared_query", false, func() C.int {
			return C.shim_win_shared_query(s.shm, C.int(sh.first[g]-sh.leader), &base)
		}); err != nil {
			c.call("MPI_Win_free", false, func() C.int { return C.shim_win_free(&s.shm) })
			return nil, err
		}
		if groupBytes[g] > 0 {
			s.groups[g-sh.g0] = unsafe.Slice((*byte)(base), groupBytes[g])
		}
	}
	s.bytes = s.groups[my-sh.g0]
	if s.rma {
		var base unsafe.Pointer
		if len(s.bytes) > 0 {
			base = unsafe.Pointer(&s.bytes[0])
		}
		if err := c.call("MPI_Win_create", gated, func() C.int { return C.shim_win_create(base, C.int64_t(len(s.bytes)), &s.world) }); err != nil {
			c.call("MPI_Win_free", false, func() C.int { return C.shim_win_free(&s.shm) })
			return nil, err
		}
	}
	return s, nil
}

// expose publishes this rank's stores to its group and to the other
// groups' gets. It is collective.
func (s *sharedSegment) expose() error {
	if err := s.c.call("MPI_Win_sync", false, func() C.int { return C.shim_win_sync(s.shm) }); err != nil {
		return err
	}
	if s.rma {
		if err := s.c.call("MPI_Win_sync", false, func() C.int { return C.shim_win_sync(s.world) }); err != nil {
			return err
		}
	}
	return s.c.Barrier()
}

// getRows reads rows of other groups' segments (see Window.getRows).
func (s *sharedSegment) getRows(ranks []C.int, counts []C.int, tdisp, odisp []C.MPI_Aint, rowBytes int, dst []byte) error {
	if len(ranks) == 0 {
		return nil
	}
	return s.c.call("MPI_Get(rows)", false, func() C.int {
		return C.shim_get_rows(s.world, C.int(len(ranks)), &ranks[0], &counts[0], &tdisp[0], &odisp[0], C.int(rowBytes), ptr(dst))
	})
}

// free releases both windows. It is collective.
func (s *sharedSegment) free() error {
	s.bytes = nil
	var first error
	if s.rma {
		s.rma = false
		first = s.c.call("MPI_Win_free", gated, func() C.int { return C.shim_win_free(&s.world) })
	}
	if err := s.c.call("MPI_Win_free", gated, func() C.int { return C.shim_win_free(&s.shm) }); err != nil && first == nil {
		first = err
	}
	return first
}

// SharedBuffer is memory held once per node (or pretend node, SetNodeRanks)
// and mapped by all of the node's ranks: the node's first rank (Filler)
// fills it, Expose publishes it, and then every rank of the node reads it.
// It works on any Comm: a shared Comm lends its node communicator, an
// unshared one (a part per rank) gets a node communicator of its own for
// the buffer's life.
type SharedBuffer struct {
	c       *Comm
	comm    C.MPI_Comm // the node's ranks
	ownComm bool       // comm was split for this buffer and is freed with it
	win     C.MPI_Win
	live    bool
	bytes   []byte
	filler  bool
}

// NewSharedBuffer allocates bytes bytes once per node; every rank must pass
// the same size. It is collective.
func NewSharedBuffer(c *Comm, bytes int64) (*SharedBuffer, error) {
	if bytes < 0 {
		return nil, fmt.Errorf("shared buffer: negative size %d", bytes)
	}
	b := &SharedBuffer{c: c}
	var leader int
	if sh := c.shared; sh != nil {
		b.comm, leader = sh.comm, sh.leader
	} else {
		leaders, err := NodeLeaders(c)
		if err != nil {
			return nil, fmt.Errorf("shared buffer: %w", err)
		}
		leader = leaders[c.rank]
		if err := c.call("MPI_Comm_split", gated, func() C.int { return C.shim_comm_split(C.int(leader), &b.comm) }); err != nil {
			return nil, fmt.Errorf("shared buffer: %w", err)
		}
		b.ownComm = true
	}
	b.filler = c.rank == leader
	var mine int64
	if b.filler {
		mine = (bytes + winAlign - 1) / winAlign * winAlign
	}
	if err := c.call("MPI_Win_allocate_shared", gated, func() C.int {
		return C.shim_win_allocate_shared(b.comm, C.int64_t(mine), &b.win)
	}); err != nil {
		b.freeComm()
		return nil, fmt.Errorf("shared buffer: %w", err)
	}
	b.live = true
	// The node communicator ranks its members by world rank, so the
	// leader is its rank 0.
	var base unsafe.Pointer
	if err := c.call("MPI_Win_shared_query", false, func() C.int { return C.shim_win_shared_query(b.win, 0, &base) }); err != nil {
		b.Free()
		return nil, fmt.Errorf("shared buffer: %w", err)
	}
	if bytes > 0 {
		b.bytes = unsafe.Slice((*byte)(base), bytes)
	}
	return b, nil
}

// Bytes returns the node's buffer.
func (b *SharedBuffer) Bytes() []byte { return b.bytes }

// Filler reports whether this rank fills the buffer (its node's first).
func (b *SharedBuffer) Filler() bool { return b.filler }

// Expose makes the filler's stores visible to the node's ranks. It is
// collective.
func (b *SharedBuffer) Expose() error {
	if err := b.c.call("MPI_Win_sync", false, func() C.int { return C.shim_win_sync(b.win) }); err != nil {
		return fmt.Errorf("shared buffer: %w", err)
	}
	return b.c.Barrier()
}

// Free releases the buffer (and the node communicator it split). It is
// collective.
func (b *SharedBuffer) Free() error {
	if b == nil || !b.live {
		return nil
	}
	b.live, b.bytes = false, nil
	err := b.c.call("MPI_Win_free", gated, func() C.int { return C.shim_win_free(&b.win) })
	if ferr := b.freeComm(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("shared buffer: %w", err)
	}
	return nil
}

func (b *SharedBuffer) freeComm() error {
	if !b.ownComm {
		return nil
	}
	b.ownComm = false
	return b.c.call("MPI_Comm_free", gated, func() C.int { return C.shim_comm_free(&b.comm) })
}

// FewestNodeRanks returns the fewest ranks that any node (or pretend node)
// of the job runs, the same on every rank: a buffer held once per node
// costs each rank at most its size over this. It is collective.
func FewestNodeRanks(c *Comm) (int, error) {
	leaders, err := NodeLeaders(c)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range leaders {
		if l == leaders[c.rank] {
			n++
		}
	}
	fewest, err := AllreduceScalar(c, int64(n), Min)
	if err != nil {
		return 0, fmt.Errorf("node layout: %w", err)
	}
	return int(fewest), nil
}
