package dsample

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	var path []byte
	var werr error
	if c.Rank() == 0 {
		dir := filepath.Join(t.TempDir(), "parts")
		_, werr = partition.Write(dir, d, assign, P, opt)
		path = []byte(dir)
	}
	n, err := collectives.AllreduceScalar(c, int64(len(path)), collectives.Max)
	if err != nil {
		t.Fatal(err)
	}
	path = append(path, make([]byte, int(n)-len(path))...)
	if err := collectives.Bcast(c, path, 0); err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatalf("write partitions: %v", werr) // rank 0 only; others fail loading
	}
	f := &fixture{d: d, c: c}
	m, err := partition.LoadMeta(string(path))
	if err == nil {
		f.parts = make([]*partition.Part, P)
		for p := range P {
			if f.parts[p], err = partition.LoadWithMeta(string(path), m, p); err != nil {
				break
			}
		}
	}
	// Rank 0's temp dir is removed when its test ends: agree that every
	// rank has read it first.
	if berr := c.Barrier(); berr != nil {
		t.Fatal(berr)
	}
	if err != nil {
		t.Fatal(err)
	}
	f.part = f.parts[c.Rank()]
	return f
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
	transport, fetch := strings.CutSuffix(name, "-fetch")
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
	s, err := OpenStore(f.c, &pc, StoreOptions{Transport: tr, CacheMB: cacheMB, ReleasePart: true, DegreeTableMB: table})
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
// must run the collectives in the same order).
func transports() []string { return []string{"rma", "rma-fetch", "alltoallv"} }

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
// It reports with t.Errorf and returns false rather than stopping the test,
// because the caller's later collectives must still run on every rank.
func checkSameBlocks(t *testing.T, f *fixture, got, want []sample.Block) bool {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d blocks, want %d", len(got), len(want))
		return false
	}
	for l := range got {
		g, w := &got[l], &want[l]
		if g.NumDst != w.NumDst || !slices.Equal(g.Orig, w.Orig) || !slices.Equal(g.Indptr, w.Indptr) || !slices.Equal(g.Indices, w.Indices) {
			t.Errorf("rank %d layer %d: distributed block differs from the reference:\n got  dst %d orig %v indptr %v indices %v\n want dst %d orig %v indptr %v indices %v",
				f.c.Rank(), l, g.NumDst, g.Orig, g.Indptr, g.Indices, w.NumDst, w.Orig, w.Indptr, w.Indices)
			return false
		}
		for i, v := range g.Nodes {
			if o := f.origOf(v); o != g.Orig[i] {
				t.Errorf("layer %d node %d: new id %d is original %d, block says %d", l, i, v, o, g.Orig[i])
				return false
			}
		}
	}
	return true
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
