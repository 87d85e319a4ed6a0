package collectives

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushContribution is what rank q sends in a push test: n rows (with
// repeats, and none at all on rank 1 when size > 2) and w float32 values per
// row, small integers so that every sum is exact in any order.
func pushContribution(q, size int, total int64, n, w int) ([]int64, []float32) {
	if size > 2 && q == 1 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(uint64(q), 77))
	rows := make([]int64, n)
	vals := make([]float32, n*w)
	for i := range rows {
		rows[i] = rng.Int64N(total)
		if i%5 == 4 {
			rows[i] = rows[i-3] // a repeat within this rank
		}
		for k := range w {
			vals[i*w+k] = float32(rng.IntN(17) - 8)
		}
	}
	return rows, vals
}

func f32Bytes(xs []float32) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), 4*len(xs))
}

func bytesF32(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// pushLocalRows gives ranks uneven row counts, one of them none when size > 2.
func pushLocalRows(me, size int) int64 {
	if size > 2 && me == 2 {
		return 0
	}
	return int64(23 + 9*me)
}

func TestPushRows(t *testing.T) {
	for _, nc := range comms(t) {
		c := nc.c
		me, size := c.Rank(), c.Size()
		for _, n := range []int{0, 1, 40, 300} {
			t.Run(fmt.Sprintf("%s/n=%d", nc.name, n), func(t *testing.T) {
				const w = 3
				a, err := NewDistArray(c, pushLocalRows(me, size), 4*w, TransportAlltoallv)
				require.NoError(t, err)
				defer a.Free()
				total := a.Offsets()[size]
				rows, vals := pushContribution(me, size, total, n, w)
				gotRows, gotVals, err := a.PushRows(rows, f32Bytes(vals))
				require.NoError(t, err)
				// Expected: every source's pairs owned here, sources in
				// rank order, each in its own order.
				var wantRows []int64
				var wantVals []float32
				lo, hi := a.Offsets()[me], a.Offsets()[me+1]
				for q := range size {
					qr, qv := pushContribution(q, size, total, n, w)
					for i, r := range qr {
						if r >= lo && r < hi {
							wantRows = append(wantRows, r)
							wantVals = append(wantVals, qv[i*w:(i+1)*w]...)
						}
					}
				}
				// append to nil: an empty result compares equal to no result.
				assert.Equal(t, wantRows, append([]int64(nil), gotRows...))
				assert.Equal(t, wantVals, append([]float32(nil), bytesF32(gotVals)...))
			})
		}
	}
}

func TestAccumulate(t *testing.T) {
	base, err := NewComm()
	require.NoError(t, err)
	tr, err := ResolveTransport(base, TransportAuto)
	require.NoError(t, err)
	if tr != TransportRMA {
		a, err := NewDistArray(base, 4, 8, TransportAlltoallv)
		require.NoError(t, err)
		defer a.Free()
		assert.ErrorContains(t, a.Accumulate([]int64{0}, make([]byte, 8)), "needs rma")
		t.Skip("one-sided MPI unavailable here; Accumulate is only checked to refuse")
	}
	for _, nc := range comms(t) {
		c := nc.c
		me, size := c.Rank(), c.Size()
		for _, n := range []int{0, 1, 40, 300} {
			t.Run(fmt.Sprintf("%s/n=%d", nc.name, n), func(t *testing.T) {
				const w = 5
				a, err := NewDistArray(c, pushLocalRows(me, size), 4*w, TransportRMA)
				require.NoError(t, err)
				defer a.Free()
				local := bytesF32(a.Local())
				for i := range local {
					local[i] = 1 // a base the sums add to
				}
				require.NoError(t, a.Seal())
				total := a.Offsets()[size]
				// Two rounds: the second adds to the first's result.
				for round := range 2 {
					rows, vals := pushContribution(me, size, total, n, w)
					require.NoError(t, a.Accumulate(rows, f32Bytes(vals)))
					require.NoError(t, a.Settle())
					lo := a.Offsets()[me]
					var want []float32 // nil on a rank without rows, as local
					for range local {
						want = append(want, 1)
					}
					for q := range size {
						qr, qv := pushContribution(q, size, total, n, w)
						for i, r := range qr {
							if r >= lo && r < a.Offsets()[me+1] {
								for k := range w {
									want[(r-lo)*w+int64(k)] += float32(round+1) * qv[i*w+k]
								}
							}
						}
					}
					// Exact: the values are small integers. assert, not
					// require: the next collectives must run on every rank.
					assert.Equal(t, want, append([]float32(nil), local...), "round %d", round)
					require.NoError(t, c.Barrier()) // nobody accumulates while others compare
				}
			})
		}
	}
}

func TestAccumulateRejects(t *testing.T) {
	c, err := NewComm()
	require.NoError(t, err)
	tr, err := ResolveTransport(c, TransportAuto)
	require.NoError(t, err)
	if tr != TransportRMA {
		t.Skip("one-sided MPI unavailable here")
	}
	a, err := NewDistArray(c, 2, 8, TransportRMA)
	require.NoError(t, err)
	defer a.Free()
	total := a.Offsets()[c.Size()]
	tests := []struct {
		name string
		rows []int64
		src  []byte
		want string
	}{
		{"negative row", []int64{-1}, make([]byte, 8), "outside"},
		{"row past the end", []int64{total}, make([]byte, 8), "outside"},
		{"short src", []int64{0, 1}, make([]byte, 8), "src holds 8 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, a.Accumulate(tc.rows, tc.src), tc.want)
		})
	}
	b, err := NewDistArray(c, 2, 6, TransportRMA)
	require.NoError(t, err)
	defer b.Free()
	assert.ErrorContains(t, b.Accumulate([]int64{0}, make([]byte, 6)), "not float32 rows")
}

// TestSumRows: repeated rows are summed in the order they appear (float32
// sums that depend on the order show it), distinct rows come out
// ascending, and a width of dim+1 marks every output row with a 1.
func TestSumRows(t *testing.T) {
	big := float32(1 << 24)
	tests := []struct {
		name     string
		rows     []int64
		vals     []float32
		dim, w   int
		wantRows []int64
		wantSums []float32
	}{
		{"empty", nil, nil, 2, 2, nil, []float32{}},
		{"distinct unsorted", []int64{5, 1}, []float32{1, 2, 3, 4}, 2, 2, []int64{1, 5}, []float32{3, 4, 1, 2}},
		{"repeats in order", []int64{3, 0, 3, 3}, []float32{big, 7, 1, 1}, 1, 1, []int64{0, 3}, []float32{7, big + 1 + 1}},
		{"marker column", []int64{2, 2, 9}, []float32{1, 2, 3, 4, 5, 6}, 2, 3, []int64{2, 9}, []float32{4, 6, 1, 5, 6, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, sums := SumRows(tc.rows, tc.vals, tc.dim, tc.w)
			assert.Equal(t, tc.wantRows, rows)
			assert.Equal(t, tc.wantSums, sums)
		})
	}
}
