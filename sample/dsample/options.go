package dsample

import (
	"mpignn/config"
	"mpignn/sample"
)

// Validate reports loader options no loader can run with, naming the
// field at fault (config.FieldError). NewLoader calls it; a caller that
// holds the options long before the loader exists (a command line, a
// training config) calls it to fail early.
func (o LoaderOptions) Validate() error {
	if err := validateBatch(o.Batch, o.GlobalBatch); err != nil {
		return err
	}
	switch {
	case len(o.Fanouts) == 0:
		return config.Errorf("{Fanouts} needs at least one layer")
	case o.EvalFanouts != nil && len(o.EvalFanouts) != len(o.Fanouts):
		return config.Errorf("{EvalFanouts}: %d fanouts for %d layers", len(o.EvalFanouts), len(o.Fanouts))
	}
	if err := checkFanouts("Fanouts", o.Fanouts); err != nil {
		return err
	}
	if err := checkFanouts("EvalFanouts", o.EvalFanouts); err != nil {
		return err
	}
	return ValidateTemporal(o.Temporal, o.FixedSeedTime)
}

// validateBatch checks a per-rank batch and a global batch, of which
// exactly one is set (a global batch of 0 means "per rank").
func validateBatch(batch, global int) error {
	switch {
	case global < 0:
		return config.Errorf("{GlobalBatch} %d must be positive", global)
	case global > 0 && batch != 0:
		return config.Errorf("{Batch} %d and {GlobalBatch} %d exclude each other: give the seeds per step per rank or over all ranks", batch, global)
	case global == 0 && batch < 1:
		return config.Errorf("{Batch} %d must be positive", batch)
	}
	return nil
}

// GlobalSize returns the seeds per step over all ranks of a run on
// `ranks` ranks: GlobalBatch, or ranks·Batch.
func (o LoaderOptions) GlobalSize(ranks int) int { return globalSize(o.Batch, o.GlobalBatch, ranks) }

// RankShare returns the seeds a rank takes per step on average on `ranks`
// ranks (rounded up): Batch, or GlobalBatch/ranks. Memory estimates size
// a rank's step with it.
func (o LoaderOptions) RankShare(ranks int) int { return rankShare(o.Batch, o.GlobalBatch, ranks) }

func globalSize(batch, global, ranks int) int {
	if global > 0 {
		return global
	}
	return ranks * batch
}

func rankShare(batch, global, ranks int) int {
	if global > 0 {
		return (global + ranks - 1) / max(ranks, 1)
	}
	return batch
}

// MaxFanout bounds one layer's fanout: more would overflow the sampler's
// int32 block offsets long before it meant anything.
const MaxFanout = 1 << 30

// ValidateFanouts refuses a fanout that is neither -1 (all neighbours)
// nor 1..MaxFanout, naming the field Fanouts and the layer (hop from the
// seeds first). LoaderOptions.Validate checks its fanouts with it; a
// caller holding fanouts of its own (inference, one-off sampling) too.
func ValidateFanouts(fanouts []int) error { return checkFanouts("Fanouts", fanouts) }

// checkFanouts is ValidateFanouts naming field.
func checkFanouts(field string, fanouts []int) error {
	for i, f := range fanouts {
		if f == 0 || f < -1 || f > MaxFanout {
			return config.Errorf("%s: layer %d has fanout %d, want > 0 or -1 (all)", config.Name(field), i, f)
		}
	}
	return nil
}

// ValidateTemporal reports temporal settings of LoaderOptions that do
// nothing: Temporal.Strict or a fixed SeedTime without a temporal
// Strategy. It names LoaderOptions' fields; a caller that samples with
// seed times without a loader (Sampler.Sample) checks its settings with
// it too.
func ValidateTemporal(tp sample.Temporal, fixedSeedTime bool) error {
	if !tp.On() && (tp.Strict || fixedSeedTime) {
		return config.Errorf("{Temporal.Strict} and {SeedTime} need {Temporal} uniform or last")
	}
	return nil
}
