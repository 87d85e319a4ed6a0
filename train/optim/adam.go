package optim

import (
	"fmt"
	"math"

	"mpignn/internal/par"
)

// AdamConfig holds the hyper-parameters of Adam.
type AdamConfig struct {
	LR          float32 `json:"lr"`
	Beta1       float32 `json:"beta1"`
	Beta2       float32 `json:"beta2"`
	Eps         float32 `json:"eps"`
	WeightDecay float32 `json:"weight_decay"`
}

// DefaultAdam returns the torch.optim.Adam defaults with the given learning
// rate and weight decay.
func DefaultAdam(lr, weightDecay float32) AdamConfig {
	return AdamConfig{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: weightDecay}
}

// Validate reports hyper-parameters outside their meaningful ranges.
func (c AdamConfig) Validate() error {
	switch {
	case !(c.LR > 0):
		return fmt.Errorf("adam: lr %v must be positive", c.LR)
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return fmt.Errorf("adam: beta1 %v must be in [0,1)", c.Beta1)
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("adam: beta2 %v must be in [0,1)", c.Beta2)
	case !(c.Eps > 0):
		return fmt.Errorf("adam: eps %v must be positive", c.Eps)
	case !(c.WeightDecay >= 0):
		return fmt.Errorf("adam: weight_decay %v must be non-negative", c.WeightDecay)
	}
	return nil
}

// Adam is the Adam optimizer with torch.optim.Adam semantics, including its
// weight decay, which is an L2 term added to the gradient (g += wd·p) before
// the moment updates (NOT decoupled AdamW decay). Bias correction uses the
// step count T. M, V and T are exported so checkpoints can save and restore
// them exactly; every rank holds an identical copy and applies the same
// update to the same all-reduced gradient.
type Adam struct {
	Cfg AdamConfig
	M   []float32 // first moment, same layout as the parameters
	V   []float32 // second moment
	T   int64     // number of steps taken
	// Decoupled makes the optimizer AdamW: the weight decay shrinks the
	// parameters (p -= lr·wd·p) before the Adam update and never enters
	// the gradient, as torch.optim.AdamW does (its documented algorithm,
	// https://pytorch.org/docs/1.11/_modules/torch/optim/adamw.html:
	// "θ_t ← θ_{t-1} − γλθ_{t-1}" before the moment updates, which see
	// the plain gradient; _single_tensor_adamw's param.mul_(1 - lr *
	// weight_decay)).
	Decoupled bool
}

// NewAdam returns an optimizer for n parameters with zero state.
func NewAdam(n int, cfg AdamConfig) (*Adam, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Adam{Cfg: cfg, M: make([]float32, n), V: make([]float32, n)}, nil
}

// Step applies one update to params using grads (not modified):
//
//	g = grad + wd·p
//	m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
//	p -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + eps)
//
// which is exactly torch.optim.Adam's (non-amsgrad) update.
func (a *Adam) Step(params, grads []float32) error { return a.StepLR(params, grads, a.Cfg.LR) }

// StepLR is Step with the learning rate lr in place of Cfg.LR (a
// schedule's rate for this step). With Decoupled (AdamW) the update is
//
//	p *= 1 - lr·wd   (1 - lr·wd rounded once to float32, as PyTorch's scalar)
//	m = β1·m + (1-β1)·g;  v = β2·v + (1-β2)·g²
//	p -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + eps)
func (a *Adam) StepLR(params, grads []float32, lr float32) error {
	if len(params) != len(a.M) || len(grads) != len(a.M) || len(a.V) != len(a.M) {
		return fmt.Errorf("adam step: %d params, %d grads, state for %d/%d", len(params), len(grads), len(a.M), len(a.V))
	}
	a.T++
	c := a.Cfg
	bc1 := 1 - math.Pow(float64(c.Beta1), float64(a.T))
	bc2 := 1 - math.Pow(float64(c.Beta2), float64(a.T))
	stepSize := float32(float64(lr) / bc1)
	wd, decay := c.WeightDecay, float32(1)
	if a.Decoupled {
		decay, wd = float32(1-float64(lr)*float64(c.WeightDecay)), 0
	}
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	b1, b2 := c.Beta1, c.Beta2
	// Elementwise: every element is updated by one goroutine with the
	// same operations as a serial loop.
	par.Range(len(grads), 8*len(grads), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g, p := grads[i], params[i]
			if wd != 0 {
				g += wd * p
			} else if decay != 1 {
				p *= decay
			}
			m := b1*a.M[i] + (1-b1)*g
			v := b2*a.V[i] + (1-b2)*g*g
			a.M[i], a.V[i] = m, v
			denom := float32(math.Sqrt(float64(v)))*invSqrtBC2 + c.Eps
			params[i] = p - stepSize*m/denom
		}
	})
	return nil
}
