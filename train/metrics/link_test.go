package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAUC(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name     string
		pos, neg []float32
		want     float64
	}{
		{"perfect", []float32{3, 4}, []float32{1, 2}, 1},
		{"inverted", []float32{1}, []float32{2, 3}, 0},
		{"all tied", []float32{1, 1}, []float32{1, 1, 1}, 0.5},
		// pairs: 0.5>0.2 yes, 0.5 vs 0.5 half, 0.5<0.9; 0.9>0.2, 0.9=0.9 half, 0.9>0.5
		{"ties half", []float32{0.5, 0.9}, []float32{0.2, 0.5, 0.9}, (1 + 0.5 + 0 + 1 + 0.5 + 1) / 6},
		{"nan lowest", []float32{nan, 1}, []float32{0}, 0.5},
		{"empty neg", []float32{1}, nil, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AUC(tc.pos, tc.neg)
			if math.IsNaN(tc.want) {
				assert.True(t, math.IsNaN(got))
				return
			}
			assert.InDelta(t, tc.want, got, 1e-12)
			assert.InDelta(t, bruteAUC(tc.pos, tc.neg), got, 1e-12)
		})
	}
	// Random scores with many ties against the quadratic definition.
	r := rand.New(rand.NewPCG(1, 2))
	pos, neg := make([]float32, 300), make([]float32, 500)
	for i := range pos {
		pos[i] = float32(r.IntN(20))
	}
	for i := range neg {
		neg[i] = float32(r.IntN(15))
	}
	assert.InDelta(t, bruteAUC(pos, neg), AUC(pos, neg), 1e-12)
}

// bruteAUC is the O(n·m) definition (NaN below every number).
func bruteAUC(pos, neg []float32) float64 {
	less := func(a, b float32) bool { return (a != a && b == b) || a < b }
	s := 0.0
	for _, p := range pos {
		for _, q := range neg {
			switch {
			case less(q, p):
				s++
			case !less(p, q):
				s += 0.5
			}
		}
	}
	return s / float64(len(pos)*len(neg))
}

func TestMRR(t *testing.T) {
	// k = 3. pos 5 vs {1,2,3}: rank 1. pos 2 vs {2,3,1}: opt 1, pess 2,
	// rank 2.5. pos 0 vs {4,4,4}: rank 4. pos 7 vs {7,7,7}: opt 0, pess 3,
	// rank 2.5.
	pos := []float32{5, 2, 0, 7}
	neg := []float32{1, 2, 3, 2, 3, 1, 4, 4, 4, 7, 7, 7}
	got, err := MRR(pos, neg, 3)
	require.NoError(t, err)
	ranks := []float64{1, 2.5, 4, 2.5}
	mrr := 0.0
	for _, r := range ranks {
		mrr += 1 / r
	}
	assert.InDelta(t, mrr/4, got.MRR, 1e-12)
	// Hits@1: only rank 1; Hits@3: ranks <= 3 (1, 2.5, 2.5); Hits@10+: all.
	assert.Equal(t, [NumHitsK]float64{0.25, 0.75, 1, 1, 1}, got.Hits)

	for _, tc := range []struct {
		name string
		pos  []float32
		neg  []float32
		k    int
		want string
	}{
		{"no positives", nil, nil, 3, "no positive"},
		{"k zero", []float32{1}, []float32{}, 0, "at least 1"},
		{"length", []float32{1, 2}, []float32{1, 2, 3}, 2, "3 negative scores for 2 positives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MRR(tc.pos, tc.neg, tc.k)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestHitsAtK(t *testing.T) {
	pool := []float32{0.9, 0.1, 0.5, 0.7, 0.3}
	for _, tc := range []struct {
		name string
		pos  []float32
		k    int
		want float64
	}{
		{"k1 strictly above max", []float32{0.95, 0.9, 0.2}, 1, 1.0 / 3}, // kth = 0.9; a tie is a miss
		{"k3", []float32{0.6, 0.5, 0.51, 0.2}, 3, 2.0 / 4},               // kth = 0.5
		{"k5 smallest", []float32{0.1, 0.11}, 5, 0.5},                    // kth = 0.1
		{"pool shorter than k", []float32{0}, 6, 1},                      // OGB returns 1
		{"invalid k", []float32{1}, 0, math.NaN()},
		{"no positives", nil, 1, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HitsAtK(tc.pos, pool, tc.k)
			if math.IsNaN(tc.want) {
				assert.True(t, math.IsNaN(got))
				return
			}
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
	assert.Equal(t, []float32{0.9, 0.1, 0.5, 0.7, 0.3}, pool, "the pool must not be reordered")
}

func TestLinkFiguresJSON(t *testing.T) {
	f := LinkFigures{AUC: math.NaN(), MRR: 0.25, Hits: [NumHitsK]float64{0.1, 0.2, math.Inf(1), 0.4, 0.5}}
	b, err := f.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"auc":null,"mrr":0.25,"hits":[0.1,0.2,null,0.4,0.5]}`, string(b))
	var g LinkFigures
	require.NoError(t, g.UnmarshalJSON(b))
	assert.True(t, math.IsNaN(g.AUC) && math.IsNaN(g.Hits[2]))
	assert.Equal(t, 0.25, g.MRR)
	assert.Equal(t, 0.5, g.Hits[4])
}
