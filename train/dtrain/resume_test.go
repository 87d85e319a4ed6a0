package dtrain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/train"
	"mpignn/train/optim"
)

// fullSettings is a checkpoint's settings with every optional part set, so
// that every key a checkpoint can hold appears.
func fullSettings(t *testing.T) (train.Config, optim.AdamConfig, uint64, []byte) {
	t.Helper()
	st := int64(7)
	ri := runInfo{
		Dataset: "cora", Split: "public", GlobalBatch: 64, Fanouts: []int{10, 5}, EvalFanouts: []int{-1, -1},
		Replace: true, RowNorm: true, Task: TaskLink, LinkSplit: "random:0.85,0.05,0.10",
		Link:     &LinkOptions{NegRatio: 2, NegStrict: true, UseValidEdges: true, KeepSeedEdges: true},
		MaxSteps: 3,
		Hetero: &heteroRunInfo{RelFanouts: [][]int{{1, 2}}, EvalRelFanouts: [][]int{{3, 4}}, EmbedDim: 8,
			EmbedTypes: []bool{true}, SparseOpt: "adam", SparseLR: 0.01, Push: "alltoallv"},
		Temporal: &temporalRunInfo{Strategy: "uniform", Strict: true, SeedTime: &st},
		Eval:     EvalLayerwise,
		Recipe: &train.Recipe{Optimizer: train.OptSGD, Momentum: 0.9, Nesterov: true, LRSchedule: "step:2,0.5",
			Warmup: 5, ClipGradNorm: 1, EarlyStop: 3},
	}
	info, err := json.Marshal(ri)
	require.NoError(t, err)
	model := train.Config{Arch: train.ArchGAT, InDim: 4, Hidden: 16, Classes: 16, Layers: 2, Dropout: 0.5,
		InputDropout: 0.25, Opts: train.GATOpts(2, 0.1), Decoder: train.DecoderMLP, EdgeDim: 8,
		Hetero: &train.HeteroConfig{NodeTypes: []string{"a"}, NodeOrig: []int64{3}, Relations: []string{"a___r___a"},
			InDims: []int{4}, Bases: 2, Learnable: []bool{true}}}
	return model, optim.DefaultAdam(0.01, 5e-4), 9, info
}

// TestResumeNamesEverySetting changes every setting a checkpoint holds, one
// at a time, and checks that the resume is refused with one line naming
// the setting's flag and both values; and that every key has a name, so a
// field added to the run info without one fails here.
func TestResumeNamesEverySetting(t *testing.T) {
	model, adam, seed, info := fullSettings(t)
	ck := &train.Checkpoint{Model: model, Adam: adam, Seed: seed, RunInfo: info}
	require.NoError(t, checkResume(ck, model, adam, seed, info), "a run resumes its own settings")

	saved, err := resumeSettings(model, adam, seed, info)
	require.NoError(t, err)
	flat := map[string]any{}
	flatten("", saved, flat)
	names := settingNames()
	for key := range flat {
		n, ok := names[key]
		require.True(t, ok, "setting %s has no field name in settingNames", key)
		t.Run(key, func(t *testing.T) {
			// Change the one key in the canonical form and diff.
			now, err := resumeSettings(model, adam, seed, info)
			require.NoError(t, err)
			setKey(now, key, "changed")
			d := diffSettings(saved, now)
			require.Len(t, d, 1, "%v", d)
			assert.True(t, strings.HasPrefix(d[0], config.Mark(n.field)+" was "), d[0])
			assert.True(t, strings.HasSuffix(d[0], ", now changed"), d[0])
		})
	}
	// Keys that exist on one side only read as the field's absent value.
	temporalOff := map[string]any{}
	require.NoError(t, json.Unmarshal(info, &temporalOff))
	delete(temporalOff, "temporal")
	off, err := json.Marshal(temporalOff)
	require.NoError(t, err)
	err = checkResume(ck, model, adam, seed, off)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Loader.Temporal was uniform, now none")
	assert.Contains(t, err.Error(), "Loader.SeedTime was 7, now unset")
}

// TestResumeDiffExamples checks the wording users see.
func TestResumeDiffExamples(t *testing.T) {
	model, adam, seed, info := fullSettings(t)
	ck := &train.Checkpoint{Model: model, Adam: adam, Seed: seed, RunInfo: info}
	m2 := model
	m2.Hidden = 256
	err := checkResume(ck, m2, optim.DefaultAdam(0.001, 5e-4), 3, info)
	require.Error(t, err)
	for _, want := range []string{"Model.Hidden was 16, now 256", "Trainer.Adam.LR was 0.01, now 0.001", "Trainer.Seed was 9, now 3"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "{", "no JSON blobs or Go structs")

	// The printed settings line is a description, not a setting: a resume
	// that raises --epochs changes it and is not refused for that.
	var ri map[string]any
	require.NoError(t, json.Unmarshal(info, &ri))
	ri["settings"] = "--task node --epochs 10"
	a, err := json.Marshal(ri)
	require.NoError(t, err)
	ri["settings"] = "--task node --epochs 20"
	b, err := json.Marshal(ri)
	require.NoError(t, err)
	ck.RunInfo = a
	require.NoError(t, checkResume(ck, model, adam, seed, b))
}

// setKey sets a dotted key of a nested settings map.
func setKey(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		m = m[p].(map[string]any)
	}
	m[parts[len(parts)-1]] = v
}

// TestCheckpointSettings: the settings a resume takes from a checkpoint
// reproduce its run (spot checks of each kind; the full comparison is
// checkResume's), named by their fields.
func TestCheckpointSettings(t *testing.T) {
	model, adam, seed, info := fullSettings(t)
	ck := &train.Checkpoint{Model: model, Adam: adam, Seed: seed, RunInfo: info}
	got, err := CheckpointSettings(ck, 2)
	require.NoError(t, err)
	settings := map[string]string{}
	for _, kv := range got {
		settings[kv[0]] = kv[1]
	}
	for field, want := range map[string]string{
		"Trainer.Seed": "9", "Trainer.Adam.LR": "0.01", "Trainer.Adam.WeightDecay": "0.0005", "Model.Arch": "gat",
		"Model.Hidden": "16", "Model.Dropout": "0.5", "Model.InputDropout": "0.25", "Model.Opts.Heads": "2",
		"Model.Opts.AttnDropout": "0.1", "Hetero.Bases": "2", "Loader.Batch": "32", "Eval": "layer-wise", "Task": "link",
		"Model.Decoder": "mlp", "Link.NegRatio": "2", "Link.NegStrict": "true", "Loader.Temporal": "uniform",
		"Loader.Temporal.Strict": "true", "Loader.SeedTime": "7", "Hetero.EmbedTypes": "a", "Hetero.EmbedDim": "8",
		"Hetero.SparseOpt": "adam", "Hetero.SparseLR": "0.01", "Hetero.Push": "alltoallv", "Trainer.MaxSteps": "3",
		"Loader.Replace": "true", "RowNorm": "true",
		"Trainer.Recipe.Optimizer": "sgd", "Trainer.Recipe.Momentum": "0.9", "Trainer.Recipe.Nesterov": "true",
		"Trainer.Recipe.LRSchedule": "step:2,0.5", "Trainer.Recipe.Warmup": "5", "Trainer.Recipe.ClipGradNorm": "1",
		"Trainer.Recipe.EarlyStop": "3",
	} {
		assert.Equal(t, want, settings[field], field)
	}
	assert.NotContains(t, settings, "Loader.Split", "a link run takes its split from LinkSplit")
	assert.NotContains(t, settings, "Loader.Fanouts", "per-relation fanouts are not rebuilt")
	got, err = CheckpointSettings(ck, 3)
	require.NoError(t, err)
	settings = map[string]string{}
	for _, kv := range got {
		settings[kv[0]] = kv[1]
	}
	assert.NotContains(t, settings, "Loader.Batch", "64 seeds do not split over 3 ranks")
	assert.Equal(t, "64", settings["Loader.GlobalBatch"], "so the global batch is taken as it is")
	for _, k := range []string{"Model.Residual", "Model.Norm", "Model.JK"} {
		assert.NotContains(t, settings, k, "unset: nothing to take")
	}

	// Residual, norm and jk are taken back by their flags' fields.
	ck.Model.Residual, ck.Model.Norm, ck.Model.JK = true, train.NormLayer, train.JKMax
	got, err = CheckpointSettings(ck, 2)
	require.NoError(t, err)
	settings = map[string]string{}
	for _, kv := range got {
		settings[kv[0]] = kv[1]
	}
	assert.Equal(t, "true", settings["Model.Residual"])
	assert.Equal(t, "layer", settings["Model.Norm"])
	assert.Equal(t, "max", settings["Model.JK"])
}
