package collectives

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/spmd"
	"mpignn/spmd/spmdtest"
)

var world *spmd.World

func TestMain(m *testing.M) { spmdtest.Main(m, &world) }

type namedComm struct {
	name string
	c    *Comm
}

// comms returns the world communicator three times: as is, with MPI counts
// limited to 3 elements so every message takes the split path, and watched
// (every collective behind the stall watchdog's gate, see Watch).
// The result is a slice, not a map: every rank must run the collectives in
// the same order, and map iteration order differs between processes.
func comms(t *testing.T) []namedComm {
	t.Helper()
	c, err := NewComm()
	if err != nil {
		t.Fatal(err)
	}
	return []namedComm{{"plain", c}, {"split", withMaxCount(c, 3)}, {"watched", watched(t)}}
}

// watched returns a world communicator with a stall watchdog of a minute.
func watched(tb testing.TB) *Comm {
	tb.Helper()
	c, err := NewComm()
	if err == nil {
		err = c.Watch(world, time.Minute)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// BenchmarkGate measures what the stall watchdog adds to a collective: an
// 8-byte Allreduce with and without Watch. Under mpirun every rank must run
// the same number of iterations, so give a count:
//
//	mpirun -n 2 ./collectives.test -test.run '^$' -test.bench Gate -test.benchtime 20000x
func BenchmarkGate(b *testing.B) {
	plain, err := NewComm()
	if err != nil {
		b.Fatal(err)
	}
	for _, nc := range []namedComm{{"plain", plain}, {"watched", watched(b)}} {
		b.Run(nc.name, func(b *testing.B) {
			for range b.N {
				if _, err := AllreduceScalar(nc.c, int64(1), Sum); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// value is the i-th element rank r contributes; every rank can compute what
// every other rank sent.
func value(r, i int) int64 { return int64(r*1000003+i*7919) % 1000 }

func TestAllreduce(t *testing.T) {
	for _, nc := range comms(t) {
		name, c := nc.name, nc.c
		for _, op := range []Op{Sum, Max, Min} {
			for _, n := range []int{0, 1, 10, 1000} {
				t.Run(fmt.Sprintf("%s/%v/n=%d", name, op, n), func(t *testing.T) {
					i64 := make([]int64, n)
					f32 := make([]float32, n)
					f64 := make([]float64, n)
					for i := range n {
						v := value(c.Rank(), i)
						i64[i], f32[i], f64[i] = v, float32(v)/4, float64(v)/8
					}
					for _, err := range []error{Allreduce(c, i64, op), Allreduce(c, f32, op), Allreduce(c, f64, op)} {
						if err != nil {
							t.Fatal(err)
						}
					}
					for i := range n {
						want := value(0, i)
						for r := 1; r < c.Size(); r++ {
							v := value(r, i)
							switch op {
							case Sum:
								want += v
							case Max:
								want = max(want, v)
							case Min:
								want = min(want, v)
							}
						}
						// Values are multiples of 1/8 below 2^20: exact in float32 and float64.
						if i64[i] != want || f32[i] != float32(want)/4 || f64[i] != float64(want)/8 {
							t.Fatalf("element %d: got %d %v %v, want %d", i, i64[i], f32[i], f64[i], want)
						}
					}
				})
			}
		}
	}
}

func TestBcast(t *testing.T) {
	for _, nc := range comms(t) {
		name, c := nc.name, nc.c
		for root := 0; root < c.Size(); root++ {
			t.Run(fmt.Sprintf("%s/root=%d", name, root), func(t *testing.T) {
				buf := make([]float32, 17)
				for i := range buf {
					buf[i] = float32(value(c.Rank(), i))
				}
				if err := Bcast(c, buf, root); err != nil {
					t.Fatal(err)
				}
				for i := range buf {
					if buf[i] != float32(value(root, i)) {
						t.Fatalf("element %d = %v, want %v", i, buf[i], value(root, i))
					}
				}
			})
		}
	}
	c := comms(t)[0].c
	if err := Bcast(c, []byte{1}, c.Size()); err == nil {
		t.Fatal("bcast from a root outside the world did not fail")
	}
}

// contribution is rank r's Allgatherv input: uneven, and empty on rank 0
// and every third rank.
func contribution(r int) []int64 {
	n := (r % 3) * (r + 2)
	out := make([]int64, n)
	for i := range out {
		out[i] = value(r, i)
	}
	return out
}

func TestAllgather(t *testing.T) {
	for _, nc := range comms(t) {
		name, c := nc.name, nc.c
		t.Run(name, func(t *testing.T) {
			got, err := Allgather(c, []int64{value(c.Rank(), 0), value(c.Rank(), 1)})
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < c.Size(); r++ {
				if got[2*r] != value(r, 0) || got[2*r+1] != value(r, 1) {
					t.Fatalf("rank %d's pair = %v", r, got[2*r:2*r+2])
				}
			}
			all, counts, err := Allgatherv(c, contribution(c.Rank()))
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for r := 0; r < c.Size(); r++ {
				want = append(want, contribution(r)...)
				if counts[r] != int64(len(contribution(r))) {
					t.Fatalf("count of rank %d = %d, want %d", r, counts[r], len(contribution(r)))
				}
			}
			if fmt.Sprint(all) != fmt.Sprint(want) {
				t.Fatalf("allgatherv = %v, want %v", all, want)
			}
		})
	}
}

// sendCount is how many elements rank r sends rank p: uneven, often zero.
func sendCount(r, p int) int { return (r*7 + p*3) % 5 }

func payload(r, p, j int) int64 { return int64(r*10000 + p*100 + j) }

func TestAlltoallv(t *testing.T) {
	for _, nc := range comms(t) {
		name, c := nc.name, nc.c
		t.Run(name, func(t *testing.T) {
			size, me := c.Size(), c.Rank()
			var i64 []int64
			var f32 []float32
			var b []byte
			counts := make([]int64, size)
			for p := 0; p < size; p++ {
				counts[p] = int64(sendCount(me, p))
				for j := 0; j < sendCount(me, p); j++ {
					v := payload(me, p, j)
					i64, f32, b = append(i64, v), append(f32, float32(v)), append(b, byte(v))
				}
			}
			gi, ci, err := Alltoallv(c, i64, counts)
			if err != nil {
				t.Fatal(err)
			}
			gf, _, err := Alltoallv(c, f32, counts)
			if err != nil {
				t.Fatal(err)
			}
			gb, _, err := Alltoallv(c, b, counts)
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			for r := 0; r < size; r++ {
				if ci[r] != int64(sendCount(r, me)) {
					t.Fatalf("received %d from rank %d, want %d", ci[r], r, sendCount(r, me))
				}
				for j := 0; j < sendCount(r, me); j++ {
					v := payload(r, me, j)
					if gi[k] != v || gf[k] != float32(v) || gb[k] != byte(v) {
						t.Fatalf("element %d from rank %d: %d %v %d, want %d", j, r, gi[k], gf[k], gb[k], v)
					}
					k++
				}
			}
			if k != len(gi) {
				t.Fatalf("received %d elements, want %d", len(gi), k)
			}
			// The same exchange with the segments apart.
			segs := make([][]int64, size)
			for p := range size {
				for j := range sendCount(me, p) {
					segs[p] = append(segs[p], payload(me, p, j))
				}
			}
			gs, err := AlltoallvSegments(c, segs)
			if err != nil {
				t.Fatal(err)
			}
			for r := range size {
				want := make([]int64, 0, sendCount(r, me))
				for j := range sendCount(r, me) {
					want = append(want, payload(r, me, j))
				}
				if !slices.Equal(gs[r], want) {
					t.Fatalf("segment from rank %d: %v, want %v", r, gs[r], want)
				}
			}
		})
	}
	c := comms(t)[0].c
	if _, _, err := Alltoallv(c, []int64{1}, make([]int64, c.Size())); err == nil {
		t.Fatal("counts that disagree with the buffer were accepted")
	}
}

// rowOf is the content of global row g: every byte depends on g.
func rowOf(g int64, rb int) []byte {
	out := make([]byte, rb)
	for i := range out {
		out[i] = byte(g*131 + int64(i)*7 + g>>8)
	}
	return out
}

func TestDistArrayTransportsAgree(t *testing.T) {
	base, err := NewComm()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ResolveTransport(base, TransportAuto)
	if err != nil {
		t.Fatal(err)
	}
	transports := []Transport{TransportAlltoallv}
	if tr == TransportRMA {
		transports = append(transports, TransportRMA)
	} else {
		t.Logf("one-sided MPI unavailable here; testing the Alltoallv path only")
	}
	me, size := base.Rank(), base.Size()
	// Uneven ownership, including a rank with no rows when size > 2.
	localRows := int64(37 + 11*me)
	if size > 2 && me == 1 {
		localRows = 0
	}
	for _, rb := range []int{8, 512, 13} {
		for _, nc := range comms(t) {
			name, c := nc.name, nc.c
			results := map[Transport][][]byte{}
			for _, tp := range transports {
				a, err := NewDistArray(c, localRows, rb, tp)
				if err != nil {
					t.Fatal(err)
				}
				lo := a.Offsets()[me]
				for i := int64(0); i < localRows; i++ {
					copy(a.Local()[i*int64(rb):], rowOf(lo+i, rb))
				}
				if err := a.Seal(); err != nil {
					t.Fatal(err)
				}
				total := a.Offsets()[size]
				rng := rand.New(rand.NewPCG(uint64(me), 9))
				for round, n := range []int{0, 1, 50, 300} {
					rows := make([]int64, n)
					for i := range rows {
						rows[i] = rng.Int64N(total)
					}
					if n > 2 {
						rows[1] = rows[0] // a duplicate
						if localRows > 0 {
							rows[2] = lo // an own row
						}
					}
					dst := make([]byte, n*rb)
					if err := a.Fetch(rows, dst); err != nil {
						t.Fatal(err)
					}
					for i, g := range rows {
						if !bytes.Equal(dst[i*rb:(i+1)*rb], rowOf(g, rb)) {
							t.Fatalf("%v/%s rb=%d round %d: row %d (global %d) is wrong: got %v want %v (rank %d offsets %v)", tp, name, rb, round, i, g, dst[i*rb:(i+1)*rb], rowOf(g, rb), me, a.Offsets())
						}
					}
					results[tp] = append(results[tp], dst)
				}
				if err := a.Free(); err != nil {
					t.Fatal(err)
				}
			}
			if len(transports) == 2 {
				for i := range results[TransportRMA] {
					if !bytes.Equal(results[TransportRMA][i], results[TransportAlltoallv][i]) {
						t.Fatalf("rb=%d %s round %d: rma and alltoallv bytes differ", rb, name, i)
					}
				}
			}
		}
	}
}

func TestDistArrayRejectsBadRows(t *testing.T) {
	c, err := NewComm()
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewDistArray(c, 4, 8, TransportAlltoallv)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	total := a.Offsets()[c.Size()]
	for _, r := range []int64{-1, total} {
		if err := a.Fetch([]int64{r}, make([]byte, 8)); err == nil {
			t.Fatalf("row %d was accepted", r)
		}
	}
	if err := a.Fetch([]int64{0, 1}, make([]byte, 8)); err == nil {
		t.Fatal("a too small dst was accepted")
	}
}

func TestParseTransport(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Transport
		ok   bool
	}{{"auto", TransportAuto, true}, {"RMA", TransportRMA, true}, {"alltoallv", TransportAlltoallv, true}, {"tcp", 0, false}} {
		got, err := ParseTransport(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseTransport(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// TestAgree: an error on the last rank only makes every rank fail: that
// rank with its own error, the others with an *OthersFailedError counting
// it, and every rank learns which rank failed first and why (a
// *JobFailure, so that the command prints one line). Without errors every
// rank gets nil.
func TestAgree(t *testing.T) {
	for _, nc := range comms(t) {
		t.Run(nc.name, func(t *testing.T) {
			c := nc.c
			require.NoError(t, Agree(c, nil))
			var local error
			if c.Rank() == c.Size()-1 {
				local = fmt.Errorf("injected on rank %d", c.Rank())
			}
			err := Agree(c, local)
			require.Error(t, err)
			var jf *JobFailure
			require.ErrorAs(t, err, &jf)
			assert.Equal(t, c.Size()-1, jf.First)
			assert.Equal(t, fmt.Sprintf("injected on rank %d", c.Size()-1), jf.Msg)
			if local != nil {
				assert.ErrorIs(t, err, local, "the failing rank gets its own error")
				assert.EqualError(t, err, local.Error())
				return
			}
			var others *OthersFailedError
			require.ErrorAs(t, err, &others)
			assert.Equal(t, int64(1), others.Failed)
			assert.EqualError(t, err, "1 other rank(s) failed (see their errors)")
		})
	}
}

// TestSharedDistArray reads rows of arrays whose groups of ranks share their
// rows in memory (ShareGroups): all ranks in one group, one node of two
// groups, pretend nodes of two ranks, and one rank per node. Every row must
// come back right on both transports, and only rows of other nodes may
// count as remote.
func TestSharedDistArray(t *testing.T) {
	probe, err := NewComm()
	require.NoError(t, err)
	tr, err := ResolveTransport(probe, TransportAuto)
	require.NoError(t, err)
	transports := []Transport{TransportAlltoallv}
	if tr == TransportRMA {
		transports = append(transports, TransportRMA)
	}
	size := probe.Size()
	for _, tc := range []struct {
		name      string
		nodeRanks int
		perNode   int  // groups per node
		perRank   bool // a group per rank, by ShareRanks (a part per rank)
	}{{"one node", size, 1, false}, {"one node, two groups", size, 2, false}, {"pretend nodes of 2", 2, 1, false}, {"a node per rank", 1, 1, false},
		{"one node, a group per rank", size, size, true}, {"pretend nodes of 2, a group per rank", 2, 2, true}} {
		if tc.perNode > size || (tc.perRank && size < 2) {
			continue // ShareRanks declines a node of one rank (TestShareRanksDeclines)
		}
		c, err := NewComm()
		require.NoError(t, err)
		require.NoError(t, c.SetNodeRanks(tc.nodeRanks))
		leaders, err := NodeLeaders(c)
		require.NoError(t, err)
		if tc.perRank {
			shared, err := c.ShareRanks(leaders)
			require.NoError(t, err)
			require.True(t, shared, "%s: ranks of a node share their rows", tc.name)
			first, mine := c.Groups()
			require.Len(t, first, size+1)
			require.Equal(t, c.Rank(), mine, "%s: a group per rank", tc.name)
		} else {
			nodes := 0
			for r, l := range leaders {
				if l == r {
					nodes++
				}
			}
			first, err := GroupRanks(leaders, nodes*tc.perNode)
			require.NoError(t, err)
			require.NoError(t, c.ShareGroups(leaders, first))
		}
		// The node's ranks: those with this rank's leader.
		nodeLo, nodeHi := leaders[c.Rank()], leaders[c.Rank()]
		for nodeHi < size && leaders[nodeHi] == leaders[c.Rank()] {
			nodeHi++
		}
		me := c.Rank()
		localRows := int64(29 + 7*me)
		if size > 2 && me == 1 {
			localRows = 0
		}
		for _, tp := range transports {
			for _, rb := range []int{8, 13} {
				a, err := NewDistArray(c, localRows, rb, tp)
				require.NoError(t, err)
				lo := a.Offsets()[me]
				for i := range localRows {
					copy(a.Local()[i*int64(rb):], rowOf(lo+i, rb))
				}
				require.NoError(t, a.Seal())
				total := a.Offsets()[size]
				gLo, gHi := a.Offsets()[nodeLo], a.Offsets()[nodeHi]
				rng := rand.New(rand.NewPCG(uint64(me), 5))
				rows := make([]int64, 200)
				var wantRemote int64
				for i := range rows {
					rows[i] = rng.Int64N(total)
					if rows[i] < gLo || rows[i] >= gHi {
						wantRemote++
					}
				}
				dst := make([]byte, len(rows)*rb)
				require.NoError(t, a.Fetch(rows, dst))
				for i, g := range rows {
					require.Equal(t, rowOf(g, rb), dst[i*rb:(i+1)*rb], "%s %v rb=%d: row %d (global %d)", tc.name, tp, rb, i, g)
				}
				assert.Equal(t, wantRemote, a.Stats().RemoteRows, "%s %v: rows of other nodes", tc.name, tp)
				lo, hi := a.MemoryRows()
				assert.Equal(t, [2]int64{gLo, gHi}, [2]int64{lo, hi}, "%s: the node's rows are read from memory", tc.name)
				require.NoError(t, a.Free())
			}
		}
	}
}

// TestShareRanksDeclines: ShareRanks leaves the Comm unshared, without an
// error, where every node runs one rank (pretend nodes of one) and where a
// node's ranks are not consecutive (leaders as round-robin placement gives
// them, which no rank's node segments could be found by); a Comm it
// shared stays shared when asked again, and one shared by groups of
// several ranks is refused.
func TestShareRanksDeclines(t *testing.T) {
	c, err := NewComm()
	require.NoError(t, err)
	require.NoError(t, c.SetNodeRanks(1))
	leaders, err := NodeLeaders(c)
	require.NoError(t, err)
	shared, err := c.ShareRanks(leaders)
	require.NoError(t, err)
	assert.False(t, shared, "a node per rank")
	first, mine := c.Groups()
	assert.Nil(t, first)
	assert.Equal(t, -1, mine)
	if c.Size() >= 3 {
		roundRobin := make([]int, c.Size())
		for r := range roundRobin {
			roundRobin[r] = r % 2 // nodes {0, 2, ...} and {1, 3, ...}
		}
		shared, err = c.ShareRanks(roundRobin)
		require.NoError(t, err)
		assert.False(t, shared, "ranks of a node not consecutive")
	}
	if c.Size() >= 2 {
		c, err := NewComm()
		require.NoError(t, err)
		leaders, err := NodeLeaders(c)
		require.NoError(t, err)
		shared, err := c.ShareRanks(leaders)
		require.NoError(t, err)
		require.True(t, shared)
		shared, err = c.ShareRanks(leaders)
		require.NoError(t, err)
		require.True(t, shared, "asked again")
		first, _ := c.Groups()
		require.Len(t, first, c.Size()+1)

		g, err := NewComm()
		require.NoError(t, err)
		require.NoError(t, g.ShareGroups(leaders, []int{0, c.Size()}))
		_, err = g.ShareRanks(leaders)
		require.ErrorContains(t, err, "already shared by groups of several ranks")
	}
}

// TestSharedBuffer: a buffer is one copy per node on a shared Comm and on
// an unshared one (a part per rank), with real and pretend nodes: what the
// node's first rank writes, every rank of its node reads, and
// FewestNodeRanks is the smallest node's rank count on every rank.
func TestSharedBuffer(t *testing.T) {
	size := func() int {
		c, err := NewComm()
		require.NoError(t, err)
		return c.Size()
	}()
	for _, tc := range []struct {
		name      string
		nodeRanks int // 0: the real nodes
		share     bool
	}{{"real node", 0, false}, {"pretend nodes of 2", 2, false}, {"a node per rank", 1, false}, {"shared, pretend nodes of 2", 2, true}, {"shared, real node", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewComm()
			require.NoError(t, err)
			require.NoError(t, c.SetNodeRanks(tc.nodeRanks))
			leaders, err := NodeLeaders(c)
			require.NoError(t, err)
			if tc.share {
				nodes := 0
				for r, l := range leaders {
					if l == r {
						nodes++
					}
				}
				first, err := GroupRanks(leaders, nodes)
				require.NoError(t, err)
				require.NoError(t, c.ShareGroups(leaders, first))
			}
			me, leader := c.Rank(), leaders[c.Rank()]
			b, err := NewSharedBuffer(c, 24)
			require.NoError(t, err)
			assert.Equal(t, me == leader, b.Filler())
			if b.Filler() {
				copy(b.Bytes(), rowOf(int64(leader), 24))
			}
			require.NoError(t, b.Expose())
			assert.Equal(t, rowOf(int64(leader), 24), b.Bytes(), "rank %d reads its node's (leader %d) copy", me, leader)
			// Every rank agrees before the buffer is gone.
			require.NoError(t, c.Barrier())
			require.NoError(t, b.Free())
			require.NoError(t, b.Free(), "a second Free is a no-op")

			fewest, err := FewestNodeRanks(c)
			require.NoError(t, err)
			want := size
			if tc.nodeRanks > 0 {
				want = min(tc.nodeRanks, size)
				if size%tc.nodeRanks != 0 {
					want = size % tc.nodeRanks
				}
			}
			assert.Equal(t, want, fewest)
		})
	}
}

func TestGroupRanks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		leaders []int
		parts   int
		want    []int
		err     string
	}{
		{"a part per node", []int{0, 0, 2, 2, 2}, 2, []int{0, 2, 5}, ""},
		{"two parts per node", []int{0, 0, 0, 0, 4, 4, 4, 4, 4}, 4, []int{0, 2, 4, 6, 9}, ""},
		{"one node", []int{0, 0, 0}, 1, []int{0, 3}, ""},
		{"a part per rank", []int{0, 1, 2}, 3, []int{0, 1, 2, 3}, ""},
		{"not a multiple", []int{0, 0, 2, 2}, 3, nil, "the partition has 3 parts but the job's 4 ranks run on 2 nodes"},
		{"more parts than ranks", []int{0, 0, 2}, 4, nil, "node 1 runs only 1 ranks"},
		{"round robin", []int{0, 1, 0, 1}, 2, nil, "not consecutive (rank 2 shares a node with rank 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GroupRanks(tc.leaders, tc.parts)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
