package dtrain

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"mpignn/sample"
	"mpignn/sample/dsample"
	"mpignn/train"
	"mpignn/train/optim"
)

// TestValidateCheckpointFlags: --overwrite-checkpoint needs a checkpoint
// directory and contradicts --resume; each combination is refused before
// any collective call, naming the flags.
func TestValidateCheckpointFlags(t *testing.T) {
	tests := []struct {
		name              string
		dir               string
		resume, overwrite bool
		err               string // "" = valid
	}{
		{"fresh", "ck", false, false, ""},
		{"resume", "ck", true, false, ""},
		{"overwrite", "ck", false, true, ""},
		{"resume and overwrite", "ck", true, true, "Resume and OverwriteCheckpoint"},
		{"overwrite without dir", "", false, true, "OverwriteCheckpoint needs a checkpoint directory"},
		{"resume without dir", "", true, false, "Resume needs a checkpoint directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := TrainConfig{PartDir: "p", Loader: dsample.LoaderOptions{Fanouts: []int{5}, Batch: 1},
				Run: train.RunOptions{Epochs: 1, CheckpointDir: tc.dir}, Resume: tc.resume, OverwriteCheckpoint: tc.overwrite}
			err := cfg.Validate()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// TestValidateDerivedFields: the fields Train derives (the loader's seed,
// the model's shape, the run's metrics writer and run info) are refused
// when set, so that a caller learns they would have no effect.
func TestValidateDerivedFields(t *testing.T) {
	tests := []struct {
		name string
		set  func(*TrainConfig)
		err  string
	}{
		{"loader seed", func(c *TrainConfig) { c.Loader.Seed = 3 }, "Loader.Seed is Trainer.Seed"},
		{"in dim", func(c *TrainConfig) { c.Model.InDim = 8 }, "Model.InDim, Classes and Layers"},
		{"classes", func(c *TrainConfig) { c.Model.Classes = 3 }, "Model.InDim, Classes and Layers"},
		{"layers", func(c *TrainConfig) { c.Model.Layers = 1 }, "Model.InDim, Classes and Layers"},
		{"run info", func(c *TrainConfig) { c.Run.RunInfo = []byte("{}") }, "Run.Metrics and Run.RunInfo"},
		{"negative epochs", func(c *TrainConfig) { c.Run.Epochs = -1 }, "Run.Epochs -1 must not be negative"},
		{"eval fanouts", func(c *TrainConfig) { c.Loader.EvalFanouts = []int{5, 5} }, "Loader.EvalFanouts: 2 fanouts for 1 layers"},
		{"fanout 0", func(c *TrainConfig) { c.Loader.Fanouts = []int{0} }, "Loader.Fanouts: layer 0 has fanout 0, want > 0 or -1"},
		{"link task without negatives", func(c *TrainConfig) { c.Task = TaskLink }, "Link.NegRatio 0 must be at least 1"},
		{"strict without strategy", func(c *TrainConfig) { c.Loader.Temporal.Strict = true }, "Loader.Temporal.Strict and Loader.SeedTime need Loader.Temporal uniform or last"},
		{"metric of another task", func(c *TrainConfig) { c.Task, c.Trainer.Metric = TaskRegression, "rocauc" }, "Trainer.Metric rocauc does not apply to Task regression, which selects on rmse, mae"},
		{"unknown metric", func(c *TrainConfig) { c.Trainer.Metric = "f2" }, `Trainer.Metric "f2": want acc`},
		{"unknown precision", func(c *TrainConfig) { c.Precision = "fp16" }, `Precision "fp16": want one of fp32, bf16`},
		{"bad link split", func(c *TrainConfig) { c.Task, c.Link.NegRatio, c.LinkSplit = TaskLink, 1, "random:2,0,0" }, "LinkSplit: link split"},
		{"relation plan of other hops", func(c *TrainConfig) {
			c.Model.Hidden = 8
			c.Hetero.Fanout = sample.FanoutPlan{Hops: []int{4}, Rels: []sample.RelFanout{{Name: "*", Hops: []int{4}}}}
		}, "Hetero.Fanout: per hop [4], but the loader's fanouts are [5]"},
		{"invalid relation plan", func(c *TrainConfig) {
			c.Model.Hidden = 8
			c.Hetero.EvalFanout = sample.FanoutPlan{Hops: []int{5}, Rels: []sample.RelFanout{{Name: "*", Hops: []int{5, 1}}}}
		}, "Hetero.EvalFanout: relation *: 2 fanouts, want 1"},
		{"negative cache", func(c *TrainConfig) { c.Store.CacheMB = -2 }, "Store.CacheMB -2: want a finite size"},
		{"bad link relation", func(c *TrainConfig) { c.Task, c.Link.NegRatio, c.LinkSplit, c.LinkRelation = TaskLink, 1, "time", "x" }, "LinkRelation: relation"},
		{"another model's parameter", func(c *TrainConfig) { c.Model.Opts = train.GATOpts(2, 0) }, "Model.Opts.Heads applies to Model.Arch gat, gatv2 only, not sage"},
		{"its parameter out of range", func(c *TrainConfig) { c.Model.Arch, c.Model.Opts = train.ArchGAT, train.GATOpts(0, 0) }, "Model.Opts.Heads 0 must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := TrainConfig{PartDir: "p", Loader: dsample.LoaderOptions{Fanouts: []int{5}, Batch: 1}, Run: train.RunOptions{Epochs: 1}}
			require.NoError(t, cfg.Validate())
			tc.set(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.err)
		})
	}
}

// TestValidateResumedModelParams: a resume without --model takes the
// checkpoint's model, so an architecture's parameter given with it is
// checked against that model after the checkpoint is read, not against
// the default now.
func TestValidateResumedModelParams(t *testing.T) {
	cfg := TrainConfig{PartDir: "p", Loader: dsample.LoaderOptions{Fanouts: []int{5}, Batch: 1}, Run: train.RunOptions{Epochs: 1, CheckpointDir: "ck"}}
	cfg.Model.Opts = train.GATOpts(2, 0)
	require.ErrorContains(t, cfg.Validate(), "Model.Opts.Heads applies to Model.Arch gat, gatv2 only")
	cfg.Resume = true
	require.NoError(t, cfg.Validate())
	cfg.Model.Arch = train.ArchSAGE
	require.ErrorContains(t, cfg.Validate(), "Model.Opts.Heads applies to Model.Arch gat, gatv2 only, not sage", "a model given with the resume is checked")
}

// TestRunInfoJSON: checkpoints store the run info, and resume and predict
// read it back by field name, so its JSON must stay byte-identical to what
// earlier builds wrote.
func TestRunInfoJSON(t *testing.T) {
	tests := []struct {
		name    string
		lo      dsample.LoaderOptions
		ranks   int
		rowNorm bool
		want    string
	}{
		{"cora", dsample.LoaderOptions{Fanouts: []int{10, 5}, EvalFanouts: []int{-1, -1}, Batch: 32, Replace: true, Split: "public", Seed: 9}, 2, true,
			`{"dataset":"cora","split":"public","global_batch":64,"fanouts":[10,5],"eval_fanouts":[-1,-1],"replace":true,"row_norm":true}`},
		{"defaults", dsample.LoaderOptions{Fanouts: []int{4}, EvalFanouts: []int{4}, Batch: 5, Split: "random"}, 3, false,
			`{"dataset":"cora","split":"random","global_batch":15,"fanouts":[4],"eval_fanouts":[4],"replace":false,"row_norm":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(newRunInfo("cora", tc.ranks, tc.lo, tc.rowNorm))
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
			require.NoError(t, checkResume(&train.Checkpoint{RunInfo: []byte(tc.want)}, train.Config{}, optim.AdamConfig{}, 0, got), "a run resumes its own checkpoint")
		})
	}
	cora := []byte(tests[0].want)
	other, err := json.Marshal(newRunInfo("cora", 4, tests[0].lo, true))
	require.NoError(t, err)
	require.ErrorContains(t, checkResume(&train.Checkpoint{RunInfo: cora}, train.Config{}, optim.AdamConfig{}, 0, other), "Loader.GlobalBatch (Loader.Batch × ranks) was 64, now 128", "another global batch")
	// A global batch is recorded as it is: the same run on 3 ranks (64
	// divides by no 3) resumes the 2-rank checkpoint.
	global := tests[0].lo
	global.Batch, global.GlobalBatch = 0, 64
	three, err := json.Marshal(newRunInfo("cora", 3, global, true))
	require.NoError(t, err)
	require.Equal(t, tests[0].want, string(three))
	require.NoError(t, checkResume(&train.Checkpoint{RunInfo: cora}, train.Config{}, optim.AdamConfig{}, 0, three))
}

// TestValidatePredict: predict's task, pairs and logits rules name their
// fields.
func TestValidatePredict(t *testing.T) {
	ok := PredictConfig{EmbedConfig: EmbedConfig{PartDir: "p", CheckpointDir: "c", Out: "o.csv", Batch: 8}}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		set  func(*PredictConfig)
		err  string
	}{
		{"task", func(c *PredictConfig) { c.Task = "bogus" }, `Task "bogus": want node, link, multilabel, regression or edge`},
		{"link without pairs", func(c *PredictConfig) { c.Task = TaskLink }, "Task link needs Pairs FILE"},
		{"pairs on node", func(c *PredictConfig) { c.Pairs = "p.csv" }, "Pairs applies to Task link only"},
		{"logits on link", func(c *PredictConfig) { c.Task, c.Pairs, c.Logits = TaskLink, "p.csv", true }, "Logits applies to Task node and multilabel only"},
		{"logits on regression", func(c *PredictConfig) { c.Task, c.Out, c.Logits = TaskRegression, "o.npy", true }, "Logits applies to Task node and multilabel only"},
		{"targets to csv", func(c *PredictConfig) { c.Task = TaskMultilabel }, "Task multilabel writes one row of probabilities per node to a .npy file: Out o.csv must end in .npy"},
		{"logits file", func(c *PredictConfig) { c.Logits = true }, "Logits: Out o.csv must end in .npy"},
		{"fanout", func(c *PredictConfig) { c.Fanouts = []int{3, 0} }, "Fanouts: layer 1 has fanout 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.set(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.err)
		})
	}
	link := ok
	link.Task, link.Pairs = TaskLink, "p.csv"
	require.NoError(t, link.Validate())
}
