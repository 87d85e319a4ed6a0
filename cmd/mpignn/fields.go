package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/spmd"
)

// fieldFlag returns the flag that fills an option field the library's
// errors and lines name (config.FieldError: a path in dtrain.TrainConfig,
// dtrain.PredictConfig, dtrain.EmbedConfig or partition.Options), so that
// every message names what the user typed: the flag is the last element
// of the path in kebab case ("Run.EvalEvery" is --eval-every, "CacheMB"
// --cache-mb), except for the fields flagExceptions lists.
// TestFieldFlags pins the flag of every field.
func fieldFlag(path string) string {
	if f, ok := flagExceptions()[path]; ok {
		return f
	}
	return "--" + kebab(path[strings.LastIndexByte(path, '.')+1:])
}

// flagExceptions are the fields whose flag is not their name in kebab
// case. (A function, not a variable: no package-level state.)
func flagExceptions() map[string]string {
	return map[string]string{
		"PartDir": "--parts", "CheckpointDir": "--checkpoint", "Run.CheckpointDir": "--checkpoint",
		"Fanouts": "--fanout", "Loader.Fanouts": "--fanout", "Loader.EvalFanouts": "--eval-fanout",
		"LinkRelation": "--relation", "FeatDType": "--feat-dtype", "RowNorm": "--norm-feat", "ResumeAuto": "--resume auto",
		"Model.Arch": "--model", "Model.EdgeDim": "--use-edge-feat", "Hetero.Push": "--embed-push", "Loader.Temporal.Strict": "--temporal-strict",
		"Temporal.Strict": "--temporal-strict", // dsample.ValidateTemporal's, of the sample command
		// partition.Options: Link is the link split.
		"Link": "--link-split", "Link.Split": "--link-split", "Link.Graph": "--link-graph",
		"Link.NegsPerPos": "--link-negs", "Link.Pool": "--link-pool", "Link.NoValidAdj": "--link-valid-adj",
	}
}

// kebab spells a Go name in kebab case, an acronym as one word:
// UseValidEdges is use-valid-edges, GCNNorm gcn-norm, SparseLR sparse-lr.
func kebab(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		upper := unicode.IsUpper(c)
		if i > 0 && upper && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// trainFieldFlags are the train command's own spellings, where they
// differ from fieldFlag: its partition comes from --data or --parts,
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
// their flags (fieldFlag, with overrides first); err itself stays in the
// chain (errors.Is/As see through).
func flagNames(err error, overrides ...map[string]string) error {
	var fe *config.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return &fieldsAsFlags{text: config.Render(err, flagSpeller(overrides)), err: err}
}

// flagSpeller returns the flag of a field path: overrides first, then
// fieldFlag.
func flagSpeller(overrides []map[string]string) func(path string) string {
	return func(path string) string {
		for _, o := range overrides {
			if f, ok := o[path]; ok {
				return f
			}
		}
		return fieldFlag(path)
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

// runWorld is spmd.Run with the body's error spelled in flags. An error
// that every rank reached in the same exchange (a *collectives.JobFailure:
// collectives.Agree, a root's error broadcast to all) ends the job with one
// line, from rank 0, naming the first rank that failed, and a clean exit 1
// on every rank; any other error aborts the job as before (spmd.Run).
func runWorld(body func(w *spmd.World) error, overrides ...map[string]string) {
	spmd.Run(func(w *spmd.World) error {
		err := flagNames(body(w), overrides...)
		var jf *collectives.JobFailure
		if !errors.As(err, &jf) {
			return err
		}
		if jf.First == w.Rank() {
			return failedTogether{err.Error()} // its own error, with its context
		}
		return failedTogether{fmt.Sprintf("rank %d: %s", jf.First, flagNames(errors.New(jf.Msg), overrides...))}
	})
}

// failedTogether is the job's error once every rank knows it (runWorld):
// spmd.Run prints it from rank 0 only and every rank exits 1 after
// finalizing MPI, without the abort's banner or the signals it sends.
type failedTogether struct{ msg string }

func (e failedTogether) Error() string { return e.msg }
func (failedTogether) Agreed() bool    { return true }
