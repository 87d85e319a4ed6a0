package metrics

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ogbNumpy is OGB's Evaluator (ogb/linkproppred/evaluate.py) recomputed in
// numpy, from the same formulas, for scores in files pos, neg (K per
// positive) and pool: _eval_mrr's ranks (ties half: 0.5*(#neg > pos +
// #neg >= pos) + 1) with their MRR and hits@1/3/10, and _eval_hits's
// Hits@K against a shared pool (the K-th highest pool score, np.sort()[-K];
// 1 with fewer than K). OGB converts 1/rank to float32 before taking the
// mean; the means here are float64 (the exact formula), as mpignn's are.
const ogbNumpy = `
import sys, numpy as np
d = sys.argv[1]
k = int(sys.argv[2])
pos = np.loadtxt(d + '/pos.txt', dtype=np.float32, ndmin=1)
neg = np.loadtxt(d + '/neg.txt', dtype=np.float32, ndmin=1).reshape(len(pos), k)
pool = np.loadtxt(d + '/pool.txt', dtype=np.float32, ndmin=1)
p = pos.reshape(-1, 1)
rank = 0.5 * ((neg > p).sum(axis=1) + (neg >= p).sum(axis=1)) + 1
out = [np.mean(1.0 / rank)] + [np.mean(rank <= h) for h in (1, 3, 10, 50, 100)]
for K in (1, 3, 10, 50, 100):
    if len(pool) < K:
        out.append(1.0)
    else:
        kth = np.sort(pool)[-K]
        out.append(float(np.sum(pos > kth)) / len(pos))
print(' '.join(repr(float(x)) for x in out))
`

// TestOGBFormulasNumpy: for random scores (with ties), MRR, its hits and
// HitsAtK equal OGB's Evaluator formulas recomputed in numpy to 1e-9.
func TestOGBFormulasNumpy(t *testing.T) {
	const py = "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("/usr/bin/python3 cannot import numpy (scripts/deps.sh installs python3-numpy): OGB's formulas are not recomputed in numpy here")
	}
	for _, tc := range []struct {
		name           string
		npos, k, npool int
		levels         int // scores drawn from this many values (ties), 0 = continuous
		seed           uint64
	}{
		{"citation2-like", 300, 1000, 2000, 0, 1},
		{"ties", 200, 20, 500, 7, 2},
		{"one-negative", 50, 1, 30, 3, 3},
		{"pool-below-k", 40, 5, 60, 0, 4}, // Hits@100 is 1: 60 pool scores
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 7))
			score := func(shift float64) float32 {
				if tc.levels > 0 {
					return float32(r.IntN(tc.levels)) / 2
				}
				return float32(r.NormFloat64() + shift)
			}
			pos, neg, pool := make([]float32, tc.npos), make([]float32, tc.npos*tc.k), make([]float32, tc.npool)
			for i := range pos {
				pos[i] = score(1.5) // positives score higher, so ranks spread
			}
			for i := range neg {
				neg[i] = score(0)
			}
			for i := range pool {
				pool[i] = score(0)
			}
			dir := t.TempDir()
			for name, xs := range map[string][]float32{"pos": pos, "neg": neg, "pool": pool} {
				var b strings.Builder
				for _, x := range xs {
					// The shortest decimal that reads back as the same
					// float32 (numpy parses it to the same bits).
					b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32) + "\n")
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, name+".txt"), []byte(b.String()), 0o644))
			}
			out, err := exec.Command(py, "-c", ogbNumpy, dir, fmt.Sprint(tc.k)).CombinedOutput()
			require.NoError(t, err, "python: %s", out)
			var want []float64
			for _, f := range strings.Fields(string(out)) {
				v, err := strconv.ParseFloat(f, 64)
				require.NoError(t, err)
				want = append(want, v)
			}
			require.Len(t, want, 1+2*NumHitsK)

			rf, err := MRR(pos, neg, tc.k)
			require.NoError(t, err)
			got := []float64{rf.MRR}
			got = append(got, rf.Hits[:]...)
			for _, K := range HitsKs() {
				got = append(got, HitsAtK(pos, pool, K))
			}
			assert.InDeltaSlice(t, want, got, 1e-9, "MRR, its Hits@1..100, pool Hits@1..100")
		})
	}
}
