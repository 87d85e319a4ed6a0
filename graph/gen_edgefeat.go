package graph

import (
	"fmt"
	"math"
	"path/filepath"

	"mpignn/internal/hashkey"
)

// tagGenEdgeFeat is the hash domain tag of generated edge features.
const tagGenEdgeFeat = 0x6765646765667400 // "gedgeft"

// GenEdgeFeat is value j of the edge features gen writes for both lines
// 2k and 2k+1 of undirected pair k, given the classes cu and cv of its
// ends: noise uniform in [0,1) keyed by (seed, k, j), plus 1 for each end
// whose class is j modulo the width dim. The mean over a node's in-edges
// (--node-feat from-edges:mean) then holds its own class (mod dim) at
// about 1 above the rest, and its neighbours' classes: a signal, as
// ogbn-proteins' edge features carry one. Values lie on a 1e-4 grid, which
// the writer formats exactly and briefly.
func GenEdgeFeat(seed uint64, pair int64, j, dim int, cu, cv int32) float32 {
	x := hashkey.Hash64(seed^tagGenEdgeFeat, uint64(pair), uint64(j))
	v := math.Round(float64(x>>11)/(1<<53)*1e4) / 1e4
	for _, c := range []int32{cu, cv} {
		if int(c)%dim == j {
			v++
		}
	}
	return float32(v)
}

// genEdgeFeatures is the line-aligned edge features of s (one row per edge
// line, both lines of a pair alike), as WriteSynthetic writes them.
func genEdgeFeatures(s *Synthetic) *Features {
	dim := s.Opt.EdgeFeatDim
	pairs := int64(len(s.Pairs))
	f := &Features{Dim: dim, Data: make([]float32, 2*pairs*int64(dim))}
	lab := s.Data.Labels
	forEachChunk(s.Opt.Workers, int64(chunksOf(pairs, 1<<16)), func(c int64) {
		for k := c << 16; k < min(pairs, (c+1)<<16); k++ {
			p := s.Pairs[k]
			u, v := int64(p>>32), int64(p&0xffffffff)
			row := f.Row(2 * k)
			for j := range row {
				row[j] = GenEdgeFeat(s.Opt.Seed, k, j, dim, lab[u], lab[v])
			}
			copy(f.Row(2*k+1), row)
		}
	})
	return f
}

// writeSyntheticEdgeFeat adds raw/edge-feat.csv.gz when s.Opt asks.
func writeSyntheticEdgeFeat(raw string, s *Synthetic, workers int) error {
	if s.Opt.EdgeFeatDim == 0 {
		return nil
	}
	if err := writeFeatures(filepath.Join(raw, EdgeFeatFile), genEdgeFeatures(s), workers); err != nil {
		return fmt.Errorf("write edge features: %w", err)
	}
	return nil
}
