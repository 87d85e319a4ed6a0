package optim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Schedule is a learning-rate schedule: the rate of a step is the base
// rate times Factor, a pure function of the step's position and the
// schedule, so a resumed run takes the same rates as an uninterrupted one.
type Schedule struct {
	// Kind is "constant" ("" too), "step" or "cosine".
	Kind string
	// Every and Gamma are step's: the rate is multiplied by Gamma every
	// Every epochs.
	Every int
	Gamma float64
	// Warmup, if positive, ramps the rate up linearly over the first
	// Warmup optimizer steps: step s (0-based, counted across epochs)
	// takes (s+1)/Warmup of the scheduled rate.
	Warmup int
}

// Schedule kinds.
const (
	ScheduleConstant = "constant"
	ScheduleStep     = "step"
	ScheduleCosine   = "cosine"
)

// ParseSchedule reads constant, step:E,G (×G every E epochs, E ≥ 1,
// 0 < G) or cosine ("" is constant).
func ParseSchedule(spec string) (Schedule, error) {
	switch {
	case spec == "" || spec == ScheduleConstant:
		return Schedule{Kind: ScheduleConstant}, nil
	case spec == ScheduleCosine:
		return Schedule{Kind: ScheduleCosine}, nil
	case strings.HasPrefix(spec, ScheduleStep+":"):
		e, g, ok := strings.Cut(strings.TrimPrefix(spec, ScheduleStep+":"), ",")
		every, err1 := strconv.Atoi(e)
		gamma, err2 := strconv.ParseFloat(g, 64)
		if !ok || err1 != nil || err2 != nil || every < 1 || !(gamma > 0) || math.IsInf(gamma, 0) {
			return Schedule{}, fmt.Errorf("%q: want step:E,G with E ≥ 1 epochs and a factor G > 0 (step:10,0.5)", spec)
		}
		return Schedule{Kind: ScheduleStep, Every: every, Gamma: gamma}, nil
	}
	return Schedule{}, fmt.Errorf("%q: want constant, step:E,G or cosine", spec)
}

// Factor is the multiplier of the base rate at optimizer step `step`
// (0-based, counted across epochs), taken in epoch `epoch` (0-based) of a
// run of totalSteps steps (cosine's length; the others ignore it):
//
//	constant: 1
//	step:     Gamma^floor(epoch/Every)
//	cosine:   (1 + cos(π·step/totalSteps)) / 2, 0 from totalSteps on
//
// times (step+1)/Warmup during the warm-up. It is exactly 1 for a
// constant schedule without warm-up, so that rate·Factor is the rate.
func (s Schedule) Factor(step int64, epoch int, totalSteps int64) float64 {
	f := 1.0
	switch s.Kind {
	case ScheduleStep:
		f = math.Pow(s.Gamma, float64(epoch/s.Every))
	case ScheduleCosine:
		if step >= totalSteps {
			f = 0
		} else {
			f = (1 + math.Cos(math.Pi*float64(step)/float64(totalSteps))) / 2
		}
	}
	if s.Warmup > 0 && step < int64(s.Warmup) {
		f *= float64(step+1) / float64(s.Warmup)
	}
	return f
}

// Scale returns lr·factor rounded once to float32 (lr itself when factor
// is 1).
func Scale(lr float32, factor float64) float32 { return float32(float64(lr) * factor) }

// ClipGradNorm scales grads in place so that their global L2 norm is at
// most maxNorm, as torch.nn.utils.clip_grad_norm_ does: coef = maxNorm /
// (norm + 1e-6), applied when it is below 1. It returns the norm before
// clipping. The norm is summed serially in float64, so that the same
// gradients give the same norm (and the same scaled bits) everywhere.
func ClipGradNorm(grads []float32, maxNorm float64) float64 {
	var ss float64
	for _, g := range grads {
		ss += float64(g) * float64(g)
	}
	norm := math.Sqrt(ss)
	coef := maxNorm / (norm + 1e-6)
	if coef < 1 {
		c := float32(coef)
		for i := range grads {
			grads[i] *= c
		}
	}
	return norm
}
