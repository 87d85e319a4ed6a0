package graph

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// refInCSR is the obvious construction: collect, sort, optionally dedup.
func refInCSR(n int64, src, dst []int64, opt BuildOptions) [][]int64 {
	rows := make([][]int64, n)
	for i := range src {
		u, v := src[i], dst[i]
		if opt.DropSelfLoops && u == v {
			continue
		}
		rows[v] = append(rows[v], u)
		if opt.Undirected {
			rows[u] = append(rows[u], v)
		}
	}
	for v := range rows {
		slices.Sort(rows[v])
		if opt.Dedup {
			rows[v] = slices.Compact(rows[v])
		}
	}
	return rows
}

func TestBuildInCSRMatchesReference(t *testing.T) {
	cases := []struct {
		name string
		n, m int64
	}{
		{"tiny", 5, 12},
		{"sparse", 1000, 3000},
		{"parallel sized", 5000, 300000}, // above the one-worker cut-off
		{"isolated nodes", 100000, 200000},
	}
	opts := []BuildOptions{{}, {Undirected: true}, {DropSelfLoops: true, Dedup: true}, {Undirected: true, DropSelfLoops: true, Dedup: true}}
	for _, c := range cases {
		r := rand.New(rand.NewPCG(uint64(c.n), uint64(c.m)))
		src := make([]int64, c.m)
		dst := make([]int64, c.m)
		for i := range src {
			// A skewed source distribution makes the source ranges of the
			// second pass uneven.
			src[i] = int64(float64(c.n) * r.Float64() * r.Float64())
			dst[i] = r.Int64N(c.n)
		}
		for _, o := range opts {
			want := refInCSR(c.n, src, dst, o)
			for _, w := range []int{1, 2, 3, 7} {
				o.Workers = w
				g := BuildInCSR(c.n, src, dst, o)
				if err := g.Validate(c.n); err != nil {
					t.Fatalf("%s %+v: %v", c.name, o, err)
				}
				for v := int64(0); v < c.n; v++ {
					if got := g.Neighbors(v); !slices.Equal(got, want[v]) && !(len(got) == 0 && len(want[v]) == 0) {
						t.Fatalf("%s %+v: row %d = %v, want %v", c.name, o, v, got, want[v])
					}
				}
			}
		}
	}
}
