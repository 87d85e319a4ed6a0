package train

import (
	"math"

	"mpignn/config"
	"mpignn/train/optim"
)

// Optimizers (Recipe.Optimizer).
const (
	OptAdam  = "adam"
	OptAdamW = "adamw"
	OptSGD   = "sgd"
)

// Recipe is the training recipe beyond Adam's hyper-parameters: the
// optimizer, the learning-rate schedule, gradient clipping and early
// stopping. Its zero value is the plain Adam run (today's exact code
// path). Every field concerns the dense parameters only: the learnable
// input rows of SparseInputs keep their own sparse optimizer and rate.
// A checkpoint records it, so that a resumed run continues the same
// recipe (and its state) bit for bit.
type Recipe struct {
	// Optimizer is OptAdam ("" too), OptAdamW (Adam with the decay
	// decoupled, torch.optim.AdamW) or OptSGD (torch.optim.SGD). All take
	// Options.Adam's LR and WeightDecay; AdamW and Adam its betas and eps.
	Optimizer string `json:"optimizer,omitempty"`
	// Momentum and Nesterov are SGD's (zero and false otherwise).
	Momentum float32 `json:"momentum,omitempty"`
	Nesterov bool    `json:"nesterov,omitempty"`
	// LRSchedule is constant ("" too), step:E,G or cosine
	// (optim.ParseSchedule). Cosine decays to 0 over the run's steps:
	// RunOptions.Epochs × the steps of an epoch.
	LRSchedule string `json:"lr_schedule,omitempty"`
	// Warmup ramps the rate up linearly over the first Warmup optimizer
	// steps (steps, not epochs, counted across epochs).
	Warmup int `json:"warmup,omitempty"`
	// ClipGradNorm, if positive, scales the all-reduced gradient so that
	// its global L2 norm is at most ClipGradNorm before the optimizer
	// step (torch.nn.utils.clip_grad_norm_).
	ClipGradNorm float32 `json:"clip_grad_norm,omitempty"`
	// EarlyStop, if positive, ends Run after EarlyStop evaluations in a
	// row that did not improve the selection metric.
	EarlyStop int `json:"early_stop,omitempty"`
}

// Normalized spells the defaults as the zero value ("adam" and
// "constant" as ""), so that equal recipes compare equal.
func (r Recipe) Normalized() Recipe {
	if r.Optimizer == OptAdam {
		r.Optimizer = ""
	}
	if r.LRSchedule == optim.ScheduleConstant {
		r.LRSchedule = ""
	}
	return r
}

// IsZero reports the default recipe.
func (r Recipe) IsZero() bool { return r.Normalized() == Recipe{} }

// Validate reports a setting no run can take, or one that does not apply
// to the others, naming its field.
func (r Recipe) Validate() error {
	switch r.Optimizer {
	case "", OptAdam, OptAdamW, OptSGD:
	default:
		return config.Errorf("{Recipe.Optimizer} %q: want %s, %s or %s", r.Optimizer, OptAdam, OptAdamW, OptSGD)
	}
	sgd := r.Optimizer == OptSGD
	switch {
	case !sgd && r.Momentum != 0:
		return config.Errorf("{Recipe.Momentum} applies to {Recipe.Optimizer} %s only", OptSGD)
	case !sgd && r.Nesterov:
		return config.Errorf("{Recipe.Nesterov} applies to {Recipe.Optimizer} %s only", OptSGD)
	case !(r.Momentum >= 0 && r.Momentum < 1):
		return config.Errorf("{Recipe.Momentum} %v must be in [0,1)", r.Momentum)
	case r.Nesterov && r.Momentum == 0:
		return config.Errorf("{Recipe.Nesterov} needs a positive {Recipe.Momentum}")
	case r.Warmup < 0:
		return config.Errorf("{Recipe.Warmup} %d must be 0 (off) or a number of steps", r.Warmup)
	case !(r.ClipGradNorm >= 0) || math.IsInf(float64(r.ClipGradNorm), 0):
		return config.Errorf("{Recipe.ClipGradNorm} %v must be 0 (off) or a positive norm", r.ClipGradNorm)
	case r.EarlyStop < 0:
		return config.Errorf("{Recipe.EarlyStop} %d must be 0 (off) or a number of evaluations", r.EarlyStop)
	}
	if _, err := optim.ParseSchedule(r.LRSchedule); err != nil {
		return config.Errorf("{Recipe.LRSchedule} %v", err)
	}
	return nil
}

// schedule is the recipe's schedule (valid after Validate).
func (r Recipe) schedule() optim.Schedule {
	s, _ := optim.ParseSchedule(r.LRSchedule)
	s.Warmup = r.Warmup
	return s
}
