package optim

import (
	"fmt"
	"math"

	"mpignn/internal/par"
)

// Sparse optimizers for learnable node embeddings (DGL's SparseAdam and
// SparseAdagrad): they own a row-major table of parameters, one row of Dim
// floats per node, and update only the rows a step names. The state is per
// row, so a row's trajectory depends only on the gradients it received, not
// on how many other rows were touched or on which rank owns it.
//
// Gradients are taken as given: the caller sums a row's contributions (DGL
// averages duplicates of one index within a trainer instead; summing is the
// gradient of a loss that sums over occurrences). Rows of one Step must be
// distinct and ascending, which makes the update order fixed and rules out
// the double application of a row that the non-linear update forbids.
//
// State travels row by row for checkpoints through ExportState and
// ImportState, StateWidth float32 words per row, so that the rows of a table
// can be saved in an order that does not depend on the partition layout.

// SparseOptimizer is what SparseAdam and SparseAdagrad have in common: the
// result type of NewSparseOptimizer, and what train/dtrain's embedding
// tables update their rows with.
type SparseOptimizer interface {
	Name() string
	// Step updates the given rows (distinct, ascending) with their
	// gradients (len(rows)*dim, row-major).
	Step(rows []int64, grads []float32) error
	StateWidth() int
	ExportState(rows []int64, dst []float32)
	ImportState(rows []int64, src []float32)
}

// SparseAdamConfig holds the hyper-parameters of SparseAdam.
type SparseAdamConfig struct {
	LR    float32 `json:"lr"`
	Beta1 float32 `json:"beta1"`
	Beta2 float32 `json:"beta2"`
	Eps   float32 `json:"eps"`
}

// Validate reports hyper-parameters outside their meaningful ranges (NaN
// included). NewSparseAdam calls it.
func (c SparseAdamConfig) Validate() error {
	switch {
	case !(c.LR > 0):
		return fmt.Errorf("sparse adam: lr %v must be positive", c.LR)
	case !(c.Beta1 >= 0 && c.Beta1 < 1) || !(c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("sparse adam: betas %v, %v must be in [0,1)", c.Beta1, c.Beta2)
	case !(c.Eps > 0):
		return fmt.Errorf("sparse adam: eps %v must be positive", c.Eps)
	}
	return nil
}

// DefaultSparseAdam returns DGL's SparseAdam defaults with the given
// learning rate.
func DefaultSparseAdam(lr float32) SparseAdamConfig {
	return SparseAdamConfig{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// SparseAdam is Adam with a step count per row (DGL's SparseAdam, PyTorch's
// SparseAdam): a row's moments and bias correction advance only on the
// steps that touch it. The update of a touched row is exactly that of
// (dense) Adam over the row alone with the row's own step count.
type SparseAdam struct {
	Cfg    SparseAdamConfig
	dim    int
	params []float32
	m, v   []float32
	steps  []int32 // per row
}

// NewSparseAdam returns the optimizer of params (rows of dim floats) with
// zero state. params is updated in place by Step.
func NewSparseAdam(params []float32, dim int, cfg SparseAdamConfig) (*SparseAdam, error) {
	if dim <= 0 || len(params)%dim != 0 {
		return nil, fmt.Errorf("sparse adam: %d parameters are not rows of %d", len(params), dim)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &SparseAdam{Cfg: cfg, dim: dim, params: params,
		m: make([]float32, len(params)), v: make([]float32, len(params)), steps: make([]int32, len(params)/dim)}, nil
}

// Name returns "adam".
func (o *SparseAdam) Name() string { return "adam" }

// Step applies one update to the given rows (distinct, ascending) with
// grads (len(rows)*dim, row-major), with Adam's formula (see Adam.Step) and
// each row's own step count.
func (o *SparseAdam) Step(rows []int64, grads []float32) error {
	if err := checkSparseStep(rows, grads, o.dim, int64(len(o.steps))); err != nil {
		return fmt.Errorf("sparse adam: %w", err)
	}
	for i, r := range rows {
		if o.steps[r] == math.MaxInt32 {
			return fmt.Errorf("sparse adam: row %d (entry %d) has taken %d steps", r, i, o.steps[r])
		}
	}
	c := o.Cfg
	b1, b2 := c.Beta1, c.Beta2
	d := int64(o.dim)
	// Rows are distinct: each is updated by one goroutine.
	par.Range(len(rows), 8*len(grads), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := rows[i]
			o.steps[r]++
			t := float64(o.steps[r])
			bc1 := 1 - math.Pow(float64(b1), t)
			bc2 := 1 - math.Pow(float64(b2), t)
			stepSize := float32(float64(c.LR) / bc1)
			invSqrtBC2 := float32(1 / math.Sqrt(bc2))
			g := grads[int64(i)*d : int64(i+1)*d]
			p := o.params[r*d : (r+1)*d]
			m, v := o.m[r*d:(r+1)*d], o.v[r*d:(r+1)*d]
			for k, gk := range g {
				mk := b1*m[k] + (1-b1)*gk
				vk := b2*v[k] + (1-b2)*gk*gk
				m[k], v[k] = mk, vk
				denom := float32(math.Sqrt(float64(vk)))*invSqrtBC2 + c.Eps
				p[k] -= stepSize * mk / denom
			}
		}
	})
	return nil
}

// StateWidth is 2*dim+1: the row's first moments, second moments, and its
// step count (an int32 stored bit for bit in a float32 word).
func (o *SparseAdam) StateWidth() int { return 2*o.dim + 1 }

// ExportState copies the state of rows into dst, StateWidth words per row.
func (o *SparseAdam) ExportState(rows []int64, dst []float32) {
	d, w := int64(o.dim), int64(o.StateWidth())
	for i, r := range rows {
		out := dst[int64(i)*w : int64(i+1)*w]
		copy(out, o.m[r*d:(r+1)*d])
		copy(out[d:], o.v[r*d:(r+1)*d])
		out[2*d] = math.Float32frombits(uint32(o.steps[r]))
	}
}

// ImportState sets the state of rows from src, as ExportState wrote it.
func (o *SparseAdam) ImportState(rows []int64, src []float32) {
	d, w := int64(o.dim), int64(o.StateWidth())
	for i, r := range rows {
		in := src[int64(i)*w : int64(i+1)*w]
		copy(o.m[r*d:(r+1)*d], in[:d])
		copy(o.v[r*d:(r+1)*d], in[d:2*d])
		o.steps[r] = int32(math.Float32bits(in[2*d]))
	}
}

// SparseAdagradConfig holds the hyper-parameters of SparseAdagrad.
type SparseAdagradConfig struct {
	LR  float32 `json:"lr"`
	Eps float32 `json:"eps"`
}

// Validate reports hyper-parameters outside their meaningful ranges (NaN
// included). NewSparseAdagrad calls it.
func (c SparseAdagradConfig) Validate() error {
	switch {
	case !(c.LR > 0):
		return fmt.Errorf("sparse adagrad: lr %v must be positive", c.LR)
	case !(c.Eps > 0):
		return fmt.Errorf("sparse adagrad: eps %v must be positive", c.Eps)
	}
	return nil
}

// DefaultSparseAdagrad returns DGL's SparseAdagrad defaults with the given
// learning rate.
func DefaultSparseAdagrad(lr float32) SparseAdagradConfig {
	return SparseAdagradConfig{LR: lr, Eps: 1e-10}
}

// SparseAdagrad is Adagrad over the touched rows with a sum of squared
// gradients per element (DGL's SparseAdagrad):
//
//	s += g²;  p -= lr·g / (sqrt(s) + eps)
//
// A row that is not touched has a zero gradient, for which dense Adagrad
// changes nothing either, so the sparse update equals the dense one.
type SparseAdagrad struct {
	Cfg    SparseAdagradConfig
	dim    int
	params []float32
	sum    []float32
}

// NewSparseAdagrad returns the optimizer of params (rows of dim floats) with
// zero state. params is updated in place by Step.
func NewSparseAdagrad(params []float32, dim int, cfg SparseAdagradConfig) (*SparseAdagrad, error) {
	if dim <= 0 || len(params)%dim != 0 {
		return nil, fmt.Errorf("sparse adagrad: %d parameters are not rows of %d", len(params), dim)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &SparseAdagrad{Cfg: cfg, dim: dim, params: params, sum: make([]float32, len(params))}, nil
}

// Name returns "adagrad".
func (o *SparseAdagrad) Name() string { return "adagrad" }

// Step applies one update to the given rows (distinct, ascending) with
// grads (len(rows)*dim, row-major).
func (o *SparseAdagrad) Step(rows []int64, grads []float32) error {
	if err := checkSparseStep(rows, grads, o.dim, int64(len(o.params)/o.dim)); err != nil {
		return fmt.Errorf("sparse adagrad: %w", err)
	}
	d := int64(o.dim)
	lr, eps := o.Cfg.LR, o.Cfg.Eps
	// Rows are distinct: each is updated by one goroutine.
	par.Range(len(rows), 4*len(grads), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := rows[i]
			g := grads[int64(i)*d : int64(i+1)*d]
			p, s := o.params[r*d:(r+1)*d], o.sum[r*d:(r+1)*d]
			for k, gk := range g {
				s[k] += gk * gk
				p[k] -= lr * gk / (float32(math.Sqrt(float64(s[k]))) + eps)
			}
		}
	})
	return nil
}

// StateWidth is dim: the row's sums of squared gradients.
func (o *SparseAdagrad) StateWidth() int { return o.dim }

// ExportState copies the state of rows into dst, StateWidth words per row.
func (o *SparseAdagrad) ExportState(rows []int64, dst []float32) {
	d := int64(o.dim)
	for i, r := range rows {
		copy(dst[int64(i)*d:int64(i+1)*d], o.sum[r*d:(r+1)*d])
	}
}

// ImportState sets the state of rows from src, as ExportState wrote it.
func (o *SparseAdagrad) ImportState(rows []int64, src []float32) {
	d := int64(o.dim)
	for i, r := range rows {
		copy(o.sum[r*d:(r+1)*d], src[int64(i)*d:int64(i+1)*d])
	}
}

// NewSparseOptimizer returns the sparse optimizer named by a --sparse-opt
// value (adam or adagrad) over params, with its defaults and learning rate
// lr.
func NewSparseOptimizer(name string, params []float32, dim int, lr float32) (SparseOptimizer, error) {
	switch name {
	case "adam":
		return NewSparseAdam(params, dim, DefaultSparseAdam(lr))
	case "adagrad":
		return NewSparseAdagrad(params, dim, DefaultSparseAdagrad(lr))
	}
	return nil, fmt.Errorf("--sparse-opt %q: want adam or adagrad", name)
}

// checkSparseStep validates the rows and gradients of one step.
func checkSparseStep(rows []int64, grads []float32, dim int, nrows int64) error {
	if int64(len(grads)) != int64(len(rows))*int64(dim) {
		return fmt.Errorf("%d gradient values for %d rows of %d", len(grads), len(rows), dim)
	}
	for i, r := range rows {
		switch {
		case r < 0 || r >= nrows:
			return fmt.Errorf("row %d (entry %d) outside [0,%d)", r, i, nrows)
		case i > 0 && r <= rows[i-1]:
			return fmt.Errorf("rows not distinct and ascending: %d after %d (entry %d)", r, rows[i-1], i)
		}
	}
	return nil
}
