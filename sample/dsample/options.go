package dsample

import (
	"math"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/sample"
)

// Validate reports loader options no loader can run with, naming the
// field at fault (config.FieldError). NewLoader calls it; an options type
// that nests them (dtrain.TrainConfig) calls it from its own Validate.
func (o LoaderOptions) Validate() error {
	if err := validateBatch(o.Batch, o.GlobalBatch); err != nil {
		return err
	}
	if err := validateLayers(o.Fanouts, o.EvalFanouts); err != nil {
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

// checkFanouts is sample.CheckFanouts naming field.
func checkFanouts(field string, fanouts []int) error {
	if err := sample.CheckFanouts(fanouts); err != nil {
		return config.Errorf("%s: %s", config.Name(field), err)
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

// Validate reports link loader options no link loader can run with,
// naming the field at fault. NewLinkLoader calls it.
func (o LinkLoaderOptions) Validate() error {
	if err := validateBatch(o.Batch, o.GlobalBatch); err != nil {
		return err
	}
	if err := validateLayers(o.Fanouts, o.EvalFanouts); err != nil {
		return err
	}
	switch {
	case o.EdgeTargets && (o.NegRatio != 0 || o.NegStrict):
		return config.Errorf("{EdgeTargets}: the edge task scores labelled edges only; {NegRatio} %d and {NegStrict} are the link task's", o.NegRatio)
	case !o.EdgeTargets && o.NegRatio < 1:
		return config.Errorf("{NegRatio} %d negatives per positive, want >= 1", o.NegRatio)
	}
	return nil
}

// validateLayers checks the training and evaluation fanouts of a loader:
// at least one layer, evaluation fanouts (nil: the training ones) of the
// same depth, every hop -1 or positive (sample.CheckFanouts).
func validateLayers(fanouts, evalFanouts []int) error {
	switch {
	case len(fanouts) == 0:
		return config.Errorf("{Fanouts} needs at least one layer")
	case evalFanouts != nil && len(evalFanouts) != len(fanouts):
		return config.Errorf("{EvalFanouts}: %d fanouts for %d layers", len(evalFanouts), len(fanouts))
	}
	if err := checkFanouts("Fanouts", fanouts); err != nil {
		return err
	}
	return checkFanouts("EvalFanouts", evalFanouts)
}

// Validate reports embedding options Store.Embed cannot run, naming the
// field at fault. Store.Embed calls it.
func (o EmbedOptions) Validate() error {
	if o.Width < 1 {
		return config.Errorf("{Width} %d must be positive", o.Width)
	}
	if err := validateBatch(o.Batch, o.GlobalBatch); err != nil {
		return err
	}
	return validateLayers(o.Fanouts, nil)
}

// Validate reports store options OpenStore cannot open with, naming the
// field at fault: those of its graph and feature stores. OpenStore calls
// it.
func (o StoreOptions) Validate() error {
	if err := (GraphOptions{Transport: o.Transport, DegreeTableMB: o.DegreeTableMB}).Validate(); err != nil {
		return err
	}
	return FeatureOptions{Transport: o.Transport, CacheMB: o.CacheMB}.Validate()
}

// Validate reports graph store options OpenGraphStore cannot open with.
// OpenGraphStore (and OpenStore, through StoreOptions) calls it.
func (o GraphOptions) Validate() error {
	if err := validateTransport(o.Transport); err != nil {
		return err
	}
	if math.IsNaN(o.DegreeTableMB) {
		return config.Errorf("{DegreeTableMB} is NaN: want a size in MiB (0 = the default, negative = no table)")
	}
	return nil
}

// Validate reports feature store options OpenFeatureStore cannot open
// with. OpenFeatureStore (and OpenStore) calls it.
func (o FeatureOptions) Validate() error {
	if err := validateTransport(o.Transport); err != nil {
		return err
	}
	if !(o.CacheMB >= 0) || math.IsInf(o.CacheMB, 1) {
		return config.Errorf("{CacheMB} %g: want a finite size in MiB, 0 or more", o.CacheMB)
	}
	return nil
}

// validateTransport refuses a Transport value that is none of the three.
func validateTransport(t collectives.Transport) error {
	switch t {
	case collectives.TransportAuto, collectives.TransportRMA, collectives.TransportAlltoallv:
		return nil
	}
	return config.Errorf("{Transport} %d: want auto, rma or alltoallv", int(t))
}
