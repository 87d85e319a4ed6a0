package train

import (
	"math"
	"math/rand/v2"

	"mpignn/sample"
)

// refGIN is GIN's (GINE's with edge features) layer written straight from
// PyG's GINConv/GINEConv and GIN's MLP([in, out, out]):
// out_i = lins1(ReLU(lins0((1+ε)·h_i + sum_{e: j -> i} m_e))), m_e = h_j or
// ReLU(h_j + lin(e_ij)), every sampled edge counted, self-loops included.
func refGIN(cfg Config, b *sample.Block, h []float64, in, out int, par func(string) []float64) []float64 {
	eps := float64(cfg.Opts.Float32(epsKey))
	if cfg.Opts.Bool(trainEpsKey) {
		eps = par("eps")[0]
	}
	w1, b1, w2, b2 := par("w1"), par("b1"), par("w2"), par("b2")
	o := make([]float64, b.NumDst*out)
	for i := 0; i < b.NumDst; i++ {
		a := make([]float64, in)
		for k := range a {
			a[k] = (1 + eps) * h[i*in+k]
		}
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			j := int(b.Indices[e])
			for k := range a {
				m := h[j*in+k]
				if cfg.EdgeDim > 0 {
					m += par("b_edge")[k]
					for d := 0; d < cfg.EdgeDim; d++ {
						m += float64(b.EdgeFeat[int(e)*cfg.EdgeDim+d]) * par("w_edge")[d*in+k]
					}
					m = math.Max(m, 0)
				}
				a[k] += m
			}
		}
		r := make([]float64, out)
		for u := range r {
			z := b1[u]
			for k := range a {
				z += a[k] * w1[k*out+u]
			}
			r[u] = math.Max(z, 0)
		}
		for u := 0; u < out; u++ {
			z := b2[u]
			for v := range r {
				z += r[v] * w2[v*out+u]
			}
			o[i*out+u] = z
		}
	}
	return o
}

// addEdgeFeat gives every block random edge features of width dim
// (aligned with Indices), as a sampler over a partition with edge
// features does.
func addEdgeFeat(r *rand.Rand, blocks []sample.Block, dim int) {
	for l := range blocks {
		b := &blocks[l]
		b.EdgeFeatDim = dim
		b.EdgeFeat = randFeatures(r, len(b.Indices)*dim)
	}
}
