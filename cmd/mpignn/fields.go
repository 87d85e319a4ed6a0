package main

import (
	"errors"
	"io"

	"mpignn/config"
	"mpignn/spmd"
)

// fieldFlags maps the option fields the library's errors name
// (config.FieldError: paths in dist.TrainConfig, dist.PredictConfig and
// dist.EmbedConfig, partition.Options, train.Config) to the flags that
// fill them, so that every message names what the user typed. A path
// missing here prints as the path. (A function, not a variable: no
// package-level state.)
func fieldFlags() map[string]string {
	return map[string]string{
		// dist.TrainConfig
		"PartDir":                  "--parts",
		"Task":                     "--task",
		"Eval":                     "--eval",
		"EvalFull":                 "--eval-full",
		"LinkSplit":                "--link-split",
		"LinkRelation":             "--relation",
		"RowNorm":                  "--norm-feat",
		"Metrics":                  "--metrics",
		"Quiet":                    "--quiet",
		"Resume":                   "--resume",
		"ResumeAuto":               "--resume auto",
		"InitFrom":                 "--init-from",
		"OverwriteCheckpoint":      "--overwrite-checkpoint",
		"Loader.Batch":             "--batch",
		"Loader.Fanouts":           "--fanout",
		"Loader.EvalFanouts":       "--eval-fanout",
		"Loader.Replace":           "--replace",
		"Loader.Split":             "--split",
		"Loader.Temporal":          "--temporal",
		"Loader.Temporal.Strict":   "--temporal-strict",
		"Loader.SeedTime":          "--seed-time",
		"Model.Arch":               "--model",
		"Model.Hidden":             "--hidden",
		"Model.Dropout":            "--dropout",
		"Model.InputDropout":       "--input-dropout",
		"Model.Heads":              "--heads",
		"Model.AttnDropout":        "--attn-dropout",
		"Model.Decoder":            "--decoder",
		"Hetero.EmbedDim":          "--embed-dim",
		"Hetero.EmbedTypes":        "--embed-types",
		"Hetero.SparseOpt":         "--sparse-opt",
		"Hetero.SparseLR":          "--sparse-lr",
		"Hetero.Push":              "--embed-push",
		"Hetero.Bases":             "--bases",
		"Hetero.Fanout":            "--fanout",
		"Hetero.EvalFanout":        "--eval-fanout",
		"Link.NegRatio":            "--neg-ratio",
		"Link.NegStrict":           "--neg-strict",
		"Link.UseValidEdges":       "--use-valid-edges",
		"Link.KeepSeedEdges":       "--keep-seed-edges",
		"Link.Graph":               "--link-graph",
		"Trainer.Prefetch":         "--prefetch",
		"Trainer.MaxSteps":         "--max-steps",
		"Trainer.Seed":             "--seed",
		"Trainer.Adam.LR":          "--lr",
		"Trainer.Adam.WeightDecay": "--weight-decay",
		"Run.Epochs":               "--epochs",
		"Run.CheckpointDir":        "--checkpoint",
		"Run.CheckpointEvery":      "--checkpoint-every",
		"Run.EvalEvery":            "--eval-every",
		"Store.Transport":          "--transport",
		"Store.CacheMB":            "--cache-mb",
		// partition.Options (Link is the link split; dist.TrainConfig's Link
		// is never named to a command-line user, who cannot set it apart
		// from the task)
		"Method":         "--method",
		"SparseFeatures": "--sparse-features",
		"Link":           "--link-split",
		// dist.PredictConfig and dist.EmbedConfig
		"Batch":         "--batch",
		"CheckpointDir": "--checkpoint",
		"Out":           "--out",
		"Fanouts":       "--fanout",
		"Full":          "--full",
		"Final":         "--final",
		"Logits":        "--logits",
		"Pairs":         "--pairs",
		"GCNNorm":       "--gcn-norm",
	}
}

// trainFieldFlags are the train command's own spellings, where they
// differ from fieldFlags: its partition comes from --data or --parts,
// and --data partitions with --part-seed.
func trainFieldFlags() map[string]string {
	return map[string]string{"PartDir": "--data/--parts", "Seed": "--part-seed"}
}

// fieldsAsFlags is an error of the library whose fields are spelled as flags.
type fieldsAsFlags struct {
	text string
	err  error
}

func (e *fieldsAsFlags) Error() string { return e.text }
func (e *fieldsAsFlags) Unwrap() error { return e.err }

// flagNames returns err with the fields its FieldErrors name spelled as
// the flags of fieldFlags (with overrides first); err itself stays in the
// chain (errors.Is/As see through).
func flagNames(err error, overrides ...map[string]string) error {
	var fe *config.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return &fieldsAsFlags{text: config.Render(err, flagSpeller(overrides)), err: err}
}

// flagSpeller returns the flag of a field path: overrides first, then
// fieldFlags; "" (the path) for a field no flag sets.
func flagSpeller(overrides []map[string]string) func(path string) string {
	flags := fieldFlags()
	return func(path string) string {
		for _, o := range overrides {
			if f, ok := o[path]; ok {
				return f
			}
		}
		return flags[path]
	}
}

// flagWriter is a writer for the library's output lines (config.Fprintf)
// that spells the fields they name as flags.
type flagWriter struct {
	io.Writer
	overrides []map[string]string
}

// FieldName implements config.Namer.
func (w flagWriter) FieldName(path string) string { return flagSpeller(w.overrides)(path) }

// runWorld is spmd.Run with the body's error spelled in flags.
func runWorld(body func(w *spmd.World) error, overrides ...map[string]string) {
	spmd.Run(func(w *spmd.World) error { return flagNames(body(w), overrides...) })
}
