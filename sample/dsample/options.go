package dsample

import (
	"slices"

	"mpignn/config"
	"mpignn/sample"
)

// Validate reports loader options no loader can run with, naming the
// field at fault (config.FieldError). NewLoader calls it; a caller that
// holds the options long before the loader exists (a command line, a
// training config) calls it to fail early.
func (o LoaderOptions) Validate() error {
	switch {
	case o.Batch < 1:
		return config.Errorf("{Batch} %d must be positive", o.Batch)
	case len(o.Fanouts) == 0:
		return config.Errorf("{Fanouts} needs at least one layer")
	case o.EvalFanouts != nil && len(o.EvalFanouts) != len(o.Fanouts):
		return config.Errorf("{EvalFanouts}: %d fanouts for %d layers", len(o.EvalFanouts), len(o.Fanouts))
	}
	for _, f := range slices.Concat(o.Fanouts, o.EvalFanouts) {
		if f < -1 || f == 0 {
			return config.Errorf("{Fanouts}: fanout %d, want > 0 or -1 (all)", f)
		}
	}
	return ValidateTemporal(o.Temporal, o.FixedSeedTime)
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
