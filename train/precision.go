package train

import "mpignn/train/kernels"

// Precision of the layers' products (train --precision): at bf16 every
// matrix product of the message-passing layers (kernels.BF16) rounds its
// inputs to bfloat16, the activations per product and the weights once per
// pass from the fp32 master weights, and accumulates and writes fp32. The
// rest stays fp32: the weights themselves, the gradients' sums (the
// products add into fp32 gradient buffers), the optimizer, the
// aggregations, the heads, the typed input projections and the residual,
// norm and jumping-knowledge maps between the layers. Only float32 models
// have a bf16 path; the float64 nets of the gradient checks never do.

// UseBF16 makes the model's layer products bf16 through p (nil: back to
// fp32), in training and in evaluation. The model uses p from now
// on: the model rounds its weights into p before every pass, and its
// products on p must not overlap with any other use of p. The caller
// closes p after the model's last pass.
func (m *Model) UseBF16(p *kernels.BF16) { m.n.bf16 = p }

// roundWeights gives the model's bf16 product the current weights, once
// per pass: the optimizer (or a restore, an import) may have changed them
// since the last. Nothing at fp32.
func (n *net[T]) roundWeights() {
	if n.bf16 == nil {
		return
	}
	// Only Model (always float32) sets bf16; a float64 net never has one.
	n.bf16.SetWeights(any(n.params).([]float32))
}

// gemm is the product of the layers: kernels.Gemm, or p.BF16's where the
// pass of a float32 model has one (UseBF16). op(B) is the weight matrix in
// every forward and input-gradient product, which BF16 then takes from its
// per-pass copy.
func gemm[T floatT](p *Pass, tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if p.BF16 != nil {
		if a32, ok := any(a).([]float32); ok {
			p.BF16.Gemm(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
			return
		}
	}
	kernels.Gemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
