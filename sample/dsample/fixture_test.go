package dsample

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/collectives"
	"mpignn/graph"
	"mpignn/partition"
	"mpignn/sample"
	"mpignn/sample/sampletest"
	"mpignn/spmd"
	"mpignn/spmd/spmdtest"
)

var world *spmd.World

func TestMain(m *testing.M) { spmdtest.Main(m, &world) }

// testDim is the feature width of the test graph.
const testDim = sampletest.FeatDim

// testAssign spreads nodes over P parts pseudo-randomly (so most
// neighbors are remote) and unevenly: part p gets weight p+1.
func testAssign(n int64, P int) []int32 {
	a := make([]int32, n)
	total := P * (P + 1) / 2
	for v := range n {
		h := int(sample.Hash64(99, uint64(v)) % uint64(total))
		p, acc := 0, 1
		for h >= acc {
			p++
			acc += p + 1
		}
		a[v] = int32(p)
	}
	return a
}

// fixture is a graph partitioned over the world and loaded on every rank.
type fixture struct {
	d     *graph.Dataset
	c     *collectives.Comm
	part  *partition.Part
	parts []*partition.Part // every part, to map ids in checks
}

const testNodes = 400

// newFixture writes the test graph partitioned world-size ways (rank 0
// writes, the path is broadcast) and loads this rank's part. With
// zeroTrainLast, the last part owns no training node (when P > 1).
func newFixture(t *testing.T, haloFeats, zeroTrainLast bool) *fixture {
	t.Helper()
	return newFixtureWith(t, partition.Options{Method: partition.MethodRandom, HaloFeats: haloFeats}, zeroTrainLast)
}

// newFixtureWith is newFixture with the partitioner's options.
func newFixtureWith(t *testing.T, opt partition.Options, zeroTrainLast bool) *fixture {
	t.Helper()
	c, err := collectives.NewComm()
	if err != nil {
		t.Fatal(err)
	}
	P := c.Size()
	assign := testAssign(testNodes, P)
	var excl func(int64) bool
	if zeroTrainLast && P > 1 {
		excl = func(v int64) bool { return v%3 == 0 && assign[v] == int32(P-1) }
	}
	d := sampletest.Dataset(testNodes, excl)
	parts := writeParts(t, c, func(dir string) error {
		_, err := partition.Write(dir, d, assign, P, opt)
		return err
	})
	return &fixture{d: d, c: c, parts: parts, part: parts[c.Rank()]}
}

// writeParts has rank 0 write a partition directory with the real writer
// (write), shares its path with every rank and loads every part on every
// rank (the checks map ids through all parts). It is collective.
func writeParts(tb testing.TB, c *collectives.Comm, write func(dir string) error) []*partition.Part {
	tb.Helper()
	P := c.Size()
	var path []byte
	var werr error
	if c.Rank() == 0 {
		dir := filepath.Join(tb.TempDir(), "parts")
		werr = write(dir)
		path = []byte(dir)
	}
	n, err := collectives.AllreduceScalar(c, int64(len(path)), collectives.Max)
	if err != nil {
		tb.Fatal(err)
	}
	path = append(path, make([]byte, int(n)-len(path))...)
	if err := collectives.Bcast(c, path, 0); err != nil {
		tb.Fatal(err)
	}
	if werr != nil {
		tb.Fatalf("write partitions: %v", werr) // rank 0 only; others fail loading
	}
	var parts []*partition.Part
	m, err := partition.LoadMeta(string(path))
	if err == nil {
		parts = make([]*partition.Part, P)
		for p := range P {
			if parts[p], err = partition.LoadWithMeta(string(path), m, p); err != nil {
				break
			}
		}
	}
	// Rank 0's temp dir is removed when its test ends: agree that every
	// rank has read it first.
	if berr := c.Barrier(); berr != nil {
		tb.Fatal(berr)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return parts
}

// origOf maps a new global id to its original id.
func (f *fixture) origOf(g int64) int64 {
	p := partition.Owner(f.parts[0].Meta.Offsets, g)
	return f.parts[p].Orig[g-f.parts[p].Lo]
}

// openStore opens a store on the fixture with the named transport:
// "rma" (with the replicated degree table), "rma-fetch" (without it, so
// remote degrees are read one-sidedly) or "alltoallv" (owner-side sampling).
func (f *fixture) openStore(t *testing.T, name string, cacheMB float64) *Store {
	t.Helper()
	c, transport, err := commNamed(f.c, name)
	if err != nil {
		t.Fatal(err)
	}
	transport, fetch := strings.CutSuffix(transport, "-fetch")
	table := 0.0
	if fetch {
		table = -1
	}
	tr, err := collectives.ParseTransport(transport)
	if err != nil {
		t.Fatal(err)
	}
	// A shallow copy, so that ReleasePart (exercised by every test) drops
	// the copy's arrays and not the fixture's.
	pc := *f.part
	s, err := OpenStore(c, &pc, StoreOptions{Transport: tr, CacheMB: cacheMB, ReleasePart: true, DegreeTableMB: table})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if pc.Indices != nil || pc.Feat != nil {
		t.Fatal("ReleasePart kept the partition's arrays")
	}
	if s.Transport().String() != transport || s.Graph().HasDegreeTable() != (transport == "rma" && !fetch) {
		t.Fatalf("store transport %v (degree table %v), want %s", s.Transport(), s.Graph().HasDegreeTable(), name)
	}
	return s
}

// transports are the two concrete transports, in a fixed order (every rank
// must run the collectives in the same order): "rma" with and without the
// degree table, "alltoallv", and "rma-node", RMA on a Comm whose ranks
// read their node's rows from its shared memory (ShareRanks, the layout
// OpenPart gives a part per rank on one machine).
func transports() []string { return []string{"rma", "rma-fetch", "alltoallv", "rma-node"} }

// commNamed returns the Comm a store named as in transports() runs on and
// the name without its "-node" suffix: c itself, or for "-node" a new Comm
// over the same ranks, shared by ShareRanks (a Comm is shared once). On a
// machine of one rank ShareRanks declines and the Comm stays unshared.
func commNamed(c *collectives.Comm, name string) (*collectives.Comm, string, error) {
	rest, node := strings.CutSuffix(name, "-node")
	if !node {
		return c, rest, nil
	}
	c, err := collectives.NewComm()
	if err != nil {
		return nil, "", err
	}
	leaders, err := collectives.NodeLeaders(c)
	if err != nil {
		return nil, "", err
	}
	if _, err := c.ShareRanks(leaders); err != nil {
		return nil, "", err
	}
	return c, rest, nil
}

// nodeMemory reports whether a store named as in transports() reads the
// rows of other ranks from memory (the "-node" form on more than one rank):
// its fetches count remote rows but move no bytes, and a hot cache has
// nothing to keep.
func nodeMemory(c *collectives.Comm, name string) bool {
	return strings.HasSuffix(name, "-node") && c.Size() > 1
}

// ownedSeeds returns this rank's nodes among the original ids wanted, in the
// order of wanted.
func ownedSeeds(p *partition.Part, wanted []int64) (global, orig []int64) {
	for _, w := range wanted {
		for i, o := range p.Orig {
			if o == w {
				global = append(global, p.Lo+int64(i))
				orig = append(orig, o)
			}
		}
	}
	return global, orig
}

// checkSameBlocks compares distributed blocks with reference blocks (built
// on the original graph) and checks the new ids against the original ids.
func checkSameBlocks(t *testing.T, f *fixture, got, want []sample.Block) bool {
	t.Helper()
	return sameBlocks(t, f.c.Rank(), f.origOf, got, want)
}

// sameBlocks reports whether distributed blocks equal the reference's in
// original ids and edge types (typed or not), with new ids that map
// (origOf) to the original ids. It reports with t.Errorf and returns false
// rather than stopping the test, because the caller's later collectives
// must still run on every rank.
func sameBlocks(t *testing.T, rank int, origOf func(int64) int64, got, want []sample.Block) bool {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("rank %d: %d blocks, want %d", rank, len(got), len(want))
		return false
	}
	for l := range got {
		g, w := &got[l], &want[l]
		if g.NumDst != w.NumDst || !slices.Equal(g.Orig, w.Orig) || !slices.Equal(g.Indptr, w.Indptr) ||
			!slices.Equal(g.Indices, w.Indices) || !slices.Equal(g.Etype, w.Etype) || (g.Etype == nil) != (w.Etype == nil) {
			t.Errorf("rank %d layer %d: distributed block differs from the reference:\n got  dst %d orig %v indptr %v indices %v etype %v\n want dst %d orig %v indptr %v indices %v etype %v",
				rank, l, g.NumDst, g.Orig, g.Indptr, g.Indices, g.Etype, w.NumDst, w.Orig, w.Indptr, w.Indices, w.Etype)
			return false
		}
		for i, v := range g.Nodes {
			if o := origOf(v); o != g.Orig[i] {
				t.Errorf("rank %d layer %d node %d: new id %d is original %d, block says %d", rank, l, i, v, o, g.Orig[i])
				return false
			}
		}
	}
	return true
}

// heteroFixture is a heterogeneous graph partitioned world-size ways with
// the real writer (partition.WriteHetero) and loaded on every rank, all
// parts (the fixture's origOf, openStore work on it).
type heteroFixture struct {
	*fixture
	d     *graph.HeteroDataset
	newID []int64   // original -> new id
	gid   [][]int64 // gid[t][i]: new id of type t's node i (type-local); aliases newID
}

// newHeteroFixture partitions sampletest.HeteroDataset world-size ways by
// testAssign.
func newHeteroFixture(t *testing.T) *heteroFixture {
	t.Helper()
	c, err := collectives.NewComm()
	require.NoError(t, err)
	d := sampletest.HeteroDataset()
	return writeHeteroFixture(t, c, d, testAssign(d.NumNodes(), c.Size()), partition.Options{})
}

// writeHeteroFixture partitions d world-size ways by assign (nil: by
// opt.Method, partition.WriteHeteroDataset). It is collective.
func writeHeteroFixture(tb testing.TB, c *collectives.Comm, d *graph.HeteroDataset, assign []int32, opt partition.Options) *heteroFixture {
	tb.Helper()
	parts := writeParts(tb, c, func(dir string) error {
		var err error
		if assign == nil {
			_, err = partition.WriteHeteroDataset(dir, d, c.Size(), opt)
		} else {
			_, err = partition.WriteHetero(dir, d, assign, c.Size(), opt)
		}
		return err
	})
	f := &heteroFixture{fixture: &fixture{c: c, parts: parts, part: parts[c.Rank()]}, d: d, newID: make([]int64, d.NumNodes())}
	for _, p := range parts {
		for i, o := range p.Orig {
			f.newID[o] = p.Lo + int64(i)
		}
	}
	for t := range d.Schema.NumTypes() {
		f.gid = append(f.gid, f.newID[d.Schema.NodeOrig[t]:d.Schema.NodeOrig[t+1]])
	}
	return f
}

func TestFixtureCoversGraph(t *testing.T) {
	f := newFixture(t, false, true)
	total := int64(0)
	for _, p := range f.parts {
		total += p.NumOwned()
	}
	if total != testNodes {
		t.Fatalf("parts own %d nodes, want %d", total, testNodes)
	}
	if P := f.c.Size(); P > 1 && len(f.parts[P-1].Splits["public"].Train) != 0 {
		t.Fatalf("last part owns %d training nodes, want 0", len(f.parts[P-1].Splits["public"].Train))
	}
}

// partitionCopy is a shallow copy of the fixture's part with its own Meta,
// for tests that damage it.
type partitionCopy struct {
	part *partition.Part
	meta *partition.Meta
}

func copyPart(f *fixture) *partitionCopy {
	p := *f.part
	m := *p.Meta
	p.Meta = &m
	return &partitionCopy{part: &p, meta: &m}
}
