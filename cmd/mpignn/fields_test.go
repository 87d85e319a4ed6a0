package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/partition"
	"mpignn/train"
	"mpignn/train/dtrain"
)

// hasPath reports whether the dotted field path exists in type t
// (through pointers).
func hasPath(t reflect.Type, path string) bool {
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := t.FieldByName(name)
		if !ok {
			return false
		}
		t = f.Type
	}
	return true
}

// TestFieldFlags pins the flag of every field a user can reach (by its
// path in dtrain.TrainConfig, dtrain.PredictConfig, dtrain.EmbedConfig or
// partition.Options, which must exist): a renamed field or flag fails here
// rather than printing a flag that does not exist.
func TestFieldFlags(t *testing.T) {
	types := []reflect.Type{reflect.TypeFor[dtrain.TrainConfig](), reflect.TypeFor[dtrain.PredictConfig](),
		reflect.TypeFor[dtrain.EmbedConfig](), reflect.TypeFor[partition.Options]()}
	for path, flag := range map[string]string{
		"PartDir": "--parts", "Task": "--task", "Eval": "--eval", "EvalFull": "--eval-full", "LinkSplit": "--link-split",
		"LinkRelation": "--relation", "RowNorm": "--norm-feat", "Metrics": "--metrics", "Quiet": "--quiet",
		"Resume": "--resume", "ResumeAuto": "--resume auto", "InitFrom": "--init-from",
		"OverwriteCheckpoint": "--overwrite-checkpoint", "Loader.Batch": "--batch", "Loader.GlobalBatch": "--global-batch", "Loader.Fanouts": "--fanout",
		"Loader.EvalFanouts": "--eval-fanout", "Loader.Replace": "--replace", "Loader.Split": "--split",
		"Loader.Temporal": "--temporal", "Loader.Temporal.Strict": "--temporal-strict", "Loader.SeedTime": "--seed-time",
		"Model.Arch": "--model", "Model.Hidden": "--hidden", "Model.Dropout": "--dropout",
		"UseEdgeFeat": "--use-edge-feat", "Model.EdgeDim": "--use-edge-feat",
		"Model.InputDropout": "--input-dropout", "Model.Residual": "--residual", "Model.Norm": "--norm", "Model.JK": "--jk",
		"Model.Decoder": "--decoder", "Hetero.EmbedDim": "--embed-dim", "Hetero.EmbedTypes": "--embed-types",
		"Hetero.SparseOpt": "--sparse-opt", "Hetero.SparseLR": "--sparse-lr", "Hetero.Push": "--embed-push",
		"Hetero.Bases": "--bases", "Hetero.Fanout": "--fanout", "Hetero.EvalFanout": "--eval-fanout",
		"Link.NegRatio": "--neg-ratio", "Link.NegStrict": "--neg-strict", "Link.UseValidEdges": "--use-valid-edges",
		"Link.KeepSeedEdges": "--keep-seed-edges", "Link.Graph": "--link-graph", "Link": "--link-split",
		"Link.Split": "--link-split", "Link.NegsPerPos": "--link-negs", "Link.Pool": "--link-pool",
		"Link.NoValidAdj": "--link-valid-adj", "Link.StructFeats": "--struct-feats", "Link.Relation": "--relation",
		"Split": "--split", "Time": "--time", "NodeFeat": "--node-feat", "EdgeFeat": "--edge-feat",
		"Trainer.Prefetch": "--prefetch", "Trainer.MaxSteps": "--max-steps", "Trainer.Metric": "--metric", "Trainer.Seed": "--seed",
		"Trainer.Adam.LR": "--lr", "Trainer.Adam.WeightDecay": "--weight-decay", "Run.Epochs": "--epochs",
		"Run.CheckpointDir": "--checkpoint", "Run.CheckpointEvery": "--checkpoint-every", "Run.EvalEvery": "--eval-every",
		"Store.Transport": "--transport", "Store.CacheMB": "--cache-mb", "Method": "--method",
		"SparseFeatures": "--sparse-features", "Batch": "--batch", "CheckpointDir": "--checkpoint", "Out": "--out",
		"Fanouts": "--fanout", "Full": "--full", "Final": "--final", "Logits": "--logits", "Pairs": "--pairs",
		"GCNNorm": "--gcn-norm", "Trainer.Recipe.Optimizer": "--optimizer", "Trainer.Recipe.Momentum": "--momentum",
		"Trainer.Recipe.Nesterov": "--nesterov", "Trainer.Recipe.LRSchedule": "--lr-schedule", "Trainer.Recipe.Warmup": "--warmup",
		"Trainer.Recipe.ClipGradNorm": "--clip-grad-norm", "Trainer.Recipe.EarlyStop": "--early-stop",
		"Precision": "--precision",
	} {
		found := false
		for _, ty := range types {
			found = found || hasPath(ty, path)
		}
		assert.True(t, found, "%s (%s) is no field of the options types", path, flag)
		assert.Equal(t, flag, fieldFlag(path), path)
	}
	// The architectures' own parameters live in Model.Opts under their
	// keys, and their fields spell as their flags.
	for _, p := range train.ArchParams() {
		assert.Equal(t, "--"+p.Flag(), fieldFlag("Model."+p.Field()), p.Key)
	}
	assert.Equal(t, "--heads", fieldFlag("Model.Opts.Heads"))
	assert.Equal(t, "--data/--parts", flagSpeller([]map[string]string{trainFieldFlags()})("PartDir"))
}

// TestFlagNames: a library error naming fields prints with the flags,
// wrapped or not, and the train command spells PartDir as its two flags.
func TestFlagNames(t *testing.T) {
	err := fmt.Errorf("train: %w", config.Errorf("{Loader.Batch} %d x %d ranks", 5, 2))
	require.EqualError(t, flagNames(err), "train: --batch 5 x 2 ranks")
	require.ErrorIs(t, flagNames(err), err, "the library error stays in the chain")
	require.EqualError(t, flagNames(config.Errorf("the dataset ({PartDir})"), trainFieldFlags()), "the dataset (--data/--parts)")
	require.EqualError(t, flagNames(config.Errorf("{PartDir}")), "--parts")
	plain := fmt.Errorf("no fields")
	require.Same(t, plain, flagNames(plain))
}

// TestFlagWriter: the library's output lines name flags on the command
// line's writer.
func TestFlagWriter(t *testing.T) {
	var b strings.Builder
	_, err := config.Fprintf(flagWriter{&b, []map[string]string{trainFieldFlags()}}, "continue with {Resume} (or {ResumeAuto}) on {PartDir}\n")
	require.NoError(t, err)
	assert.Equal(t, "continue with --resume (or --resume auto) on --data/--parts\n", b.String())
}
