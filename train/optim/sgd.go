package optim

import (
	"fmt"

	"mpignn/internal/par"
)

// SGDConfig holds the hyper-parameters of SGD (the learning rate is given
// to each step, see SGD.Step).
type SGDConfig struct {
	Momentum    float32
	Nesterov    bool
	WeightDecay float32
}

// Validate reports hyper-parameters outside their meaningful ranges.
func (c SGDConfig) Validate() error {
	switch {
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return fmt.Errorf("sgd: momentum %v must be in [0,1)", c.Momentum)
	case c.Nesterov && c.Momentum == 0:
		return fmt.Errorf("sgd: nesterov needs a positive momentum")
	case !(c.WeightDecay >= 0):
		return fmt.Errorf("sgd: weight_decay %v must be non-negative", c.WeightDecay)
	}
	return nil
}

// SGD is stochastic gradient descent with torch.optim.SGD's semantics
// (dampening 0, not maximizing): for each parameter
//
//	g = grad + wd·p
//	buf = g at the first step, else momentum·buf + g   (momentum > 0)
//	g = g + momentum·buf if nesterov, else buf          (momentum > 0)
//	p -= lr·g
//
// as _single_tensor_sgd of torch/optim/sgd.py does it. Buf (the momentum
// buffer, empty without momentum) and T (steps taken) are exported so
// that checkpoints save and restore them exactly.
type SGD struct {
	Cfg SGDConfig
	Buf []float32
	T   int64
}

// NewSGD returns an optimizer for n parameters with zero state.
func NewSGD(n int, cfg SGDConfig) (*SGD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &SGD{Cfg: cfg}
	if cfg.Momentum != 0 {
		s.Buf = make([]float32, n)
	}
	return s, nil
}

// Step applies one update with learning rate lr to params using grads
// (not modified).
func (s *SGD) Step(params, grads []float32, lr float32) error {
	if len(params) != len(grads) || (s.Cfg.Momentum != 0 && len(s.Buf) != len(grads)) {
		return fmt.Errorf("sgd step: %d params, %d grads, momentum for %d", len(params), len(grads), len(s.Buf))
	}
	c := s.Cfg
	first := s.T == 0
	s.T++
	par.Range(len(grads), 4*len(grads), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g, p := grads[i], params[i]
			if c.WeightDecay != 0 {
				g += c.WeightDecay * p
			}
			if c.Momentum != 0 {
				buf := g
				if !first {
					buf = c.Momentum*s.Buf[i] + g
				}
				s.Buf[i] = buf
				if c.Nesterov {
					g += c.Momentum * buf
				} else {
					g = buf
				}
			}
			params[i] = p - lr*g
		}
	})
	return nil
}
