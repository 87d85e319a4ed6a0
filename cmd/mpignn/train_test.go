package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/graph"
	"mpignn/partition"
	"mpignn/partition/dpartition"
)

func TestParseTrain(t *testing.T) {
	tests := []struct {
		args []string
		err  string // "" = must parse
	}{
		{[]string{"--parts", "p"}, ""},
		{[]string{"--data", "d", "--split", "public"}, ""},
		{[]string{}, "exactly one of --parts"},
		{[]string{"--parts", "p", "--data", "d"}, "exactly one of --parts"},
		{[]string{"--parts", "p", "--fanout", "10,x"}, `"x" is not an integer`},
		{[]string{"--parts", "p", "--fanout", "10,5", "--layers", "3"}, "--layers 3 but --fanout 10,5 gives 2 layers"},
		{[]string{"--parts", "p", "--dropout", "1"}, "--dropout 1 must be in [0,1)"},
		{[]string{"--parts", "p", "--transport", "udp"}, "udp"},
		{[]string{"--parts", "p", "--checkpoint-every", "0"}, "--checkpoint-every 0"},
		{[]string{"--data", "d", "--method", "spectral"}, `--method "spectral"`},
		{[]string{"--parts", "p", "extra"}, `unexpected argument "extra"`},
		{[]string{"--parts", "p", "--model", "gcn"}, ""},
		{[]string{"--parts", "p", "--model", "gat", "--heads", "4", "--attn-dropout", "0.6"}, ""},
		{[]string{"--parts", "p", "--model", "gin2"}, `--model "gin2": want one of sage, gcn, gat, gatv2, gin, gine`},
		{[]string{"--parts", "p", "--model", "gin", "--train-eps", "--eps", "0.3"}, ""},
		{[]string{"--parts", "p", "--model", "gine", "--use-edge-feat"}, ""},
		{[]string{"--parts", "p", "--model", "gine"}, "--model gine reads edge features: give --use-edge-feat"},
		{[]string{"--parts", "p", "--train-eps"}, "--train-eps applies to --model gin, gine only, not sage"},
		{[]string{"--parts", "p", "--model", "gin", "--eps", "x"}, `--eps "x" is not a number`},
		{[]string{"--parts", "p", "--heads", "4"}, "--heads applies to --model gat, gatv2 only, not sage"},
		{[]string{"--parts", "p", "--model", "gcn", "--attn-dropout", "0.1"}, "--attn-dropout applies to --model gat, gatv2 only, not gcn"},
		{[]string{"--parts", "p", "--model", "gat", "--heads", "0"}, "--heads 0 must be positive"},
		{[]string{"--parts", "p", "--model", "gat", "--attn-dropout", "1"}, "--attn-dropout 1 must be in [0,1)"},
		{[]string{"--parts", "p", "--model", "gat", "--hidden", "20", "--heads", "8"}, "--hidden 20 must be a multiple of --heads 8"},
		{[]string{"--parts", "p", "--aggr", "pool"}, ""},
		{[]string{"--parts", "p", "--aggr", "lstm"}, `--aggr "lstm": want one of mean, max, sum, pool`},
		{[]string{"--parts", "p", "--model", "gcn", "--aggr", "max"}, "--aggr applies to --model sage only, not gcn"},
		{[]string{"--parts", "p", "--residual", "--norm", "layer", "--jk", "cat"}, ""},
		{[]string{"--parts", "p", "--model", "gat", "--heads", "2", "--hidden", "8", "--jk", "max"}, ""},
		{[]string{"--parts", "p", "--jk", "lstm"}, `--jk "lstm": want cat, max, last`},
		{[]string{"--parts", "p", "--norm", "batch"}, `--norm "batch": want layer`},
		{[]string{"--parts", "p", "--fanout", "10", "--jk", "cat"}, `--jk "cat" needs at least 2 layers`},
		{[]string{"--parts", "p", "--fanout", "10", "--norm", "layer"}, `--norm "layer" needs at least 2 layers`},
		{[]string{"--parts", "p", "--fanout", "10", "--residual"}, "--residual needs at least 2 layers"},
		{[]string{"--parts", "p", "--model", "rgcn", "--residual"}, "--residual is not available for the heterogeneous model rgcn"},
		{[]string{"--parts", "p", "--model", "hsage", "--jk", "last"}, "--jk is not available for the heterogeneous model hsage"},
		{[]string{"--parts", "p", "--global-batch", "100"}, ""},
		{[]string{"--parts", "p", "--global-batch", "100", "--batch", "64"}, "--batch 64 and --global-batch 100 exclude each other"},
		{[]string{"--parts", "p", "--global-batch", "0"}, "--global-batch 0: must be at least 1"},
		{[]string{"--parts", "p", "--global-batch", "-3"}, "--global-batch -3 must be positive"},
	}
	for _, tc := range tests {
		_, err := parseTrain(tc.args)
		if tc.err == "" {
			assert.NoError(t, err, "%v", tc.args)
		} else {
			assert.ErrorContains(t, err, tc.err, "%v", tc.args)
		}
	}
	f, err := parseTrain([]string{"--parts", "p", "--dropout", "0.3", "--fanout", "15,10,5", "--split", "full"})
	require.NoError(t, err)
	assert.Equal(t, float32(0.3), f.cfg.Model.InputDropout, "input dropout defaults to --dropout")
	assert.Len(t, f.cfg.Loader.Fanouts, 3)
	assert.Equal(t, "full", f.cfg.Loader.Split)
}

// TestParseTrainChunkedMethod: train --data on a chunked dataset takes the
// distributed methods, as partition does, and names the one it will use in
// the cache options; a method that does not apply is refused by name.
func TestParseTrainChunkedMethod(t *testing.T) {
	ck := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ck, graph.ChunkedMetaFile), []byte("{}"), 0o644))
	def := dpartition.MethodML
	for _, tc := range []struct {
		args      []string
		method    string // the method the cache options name
		err       string
		needsPTSc bool
	}{
		{args: []string{"--data", ck}, method: def},
		{args: []string{"--data", ck, "--method", "lp"}, method: dpartition.MethodLP},
		{args: []string{"--data", ck, "--method", "random"}, method: partition.MethodRandom},
		{args: []string{"--data", ck, "--method", "parmetis"}, method: dpartition.MethodParMetis, needsPTSc: true},
		{args: []string{"--data", ck, "--method", "metis"}, err: "--method metis: METIS needs the whole graph in one process"},
		{args: []string{"--data", ck, "--method", "spectral"}, err: `--method "spectral": want parmetis, lp, ml, random`},
		{args: []string{"--data", t.TempDir(), "--method", "lp"}, err: `--method "lp": want metis or random`},
	} {
		if tc.needsPTSc && !dpartition.ParMetisAvailable {
			continue
		}
		f, err := parseTrain(tc.args)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%v", tc.args)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.method, f.cacheOptions(2).Method, "%v", tc.args)
	}
}

// TestParseTrainArch: GAT settings reach the config only for GAT; other
// models keep them zero so their config stays what it was before GAT
// existed.
func TestParseTrainArch(t *testing.T) {
	tests := []struct {
		args        []string
		model       string
		heads       int
		attnDropout float32
		aggr        string
	}{
		// No --model: the partition decides (sage, or hsage on a
		// heterogeneous one).
		{[]string{"--parts", "p"}, "", 0, 0, ""},
		{[]string{"--parts", "p", "--model", "gcn"}, "gcn", 0, 0, ""},
		{[]string{"--parts", "p", "--model", "hsage"}, "hsage", 0, 0, ""},
		{[]string{"--parts", "p", "--model", "rgcn", "--bases", "3"}, "rgcn", 0, 0, ""},
		{[]string{"--parts", "p", "--model", "gat"}, "gat", 8, 0, ""},
		{[]string{"--parts", "p", "--model", "gat", "--heads", "2", "--attn-dropout", "0.5"}, "gat", 2, 0.5, ""},
		// SAGE's default mean is not stored; another aggregator is.
		{[]string{"--parts", "p", "--model", "sage"}, "sage", 0, 0, ""},
		{[]string{"--parts", "p", "--model", "sage", "--aggr", "mean"}, "sage", 0, 0, ""},
		{[]string{"--parts", "p", "--aggr", "pool"}, "", 0, 0, "pool"},
		{[]string{"--parts", "p", "--model", "sage", "--aggr", "sum"}, "sage", 0, 0, "sum"},
	}
	for _, tc := range tests {
		f, err := parseTrain(tc.args)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.model, f.cfg.Model.Arch, "%v", tc.args)
		assert.Equal(t, tc.heads, f.cfg.Model.Opts.Int("heads"), "%v", tc.args)
		assert.Equal(t, tc.attnDropout, f.cfg.Model.Opts.Float32("attn_dropout"), "%v", tc.args)
		aggr, _ := f.cfg.Model.Opts.Text("aggr")
		assert.Equal(t, tc.aggr, aggr, "%v", tc.args)
	}
}

// TestLinkTaskDefaults: --task link takes its own defaults for the flags
// not given (linkDefaults), every given flag wins, and the node task keeps
// its defaults.
func TestLinkTaskDefaults(t *testing.T) {
	type want struct {
		decoder       string
		dropout, wd   float32
		batch         int
		rowNorm       bool
		taskDefaulted int
	}
	for _, tc := range []struct {
		name string
		args []string
		want want
	}{
		{"node", []string{"--parts", "p"}, want{"", 0.5, 5e-4, 64, true, 0}},
		{"link", []string{"--parts", "p", "--task", "link"}, want{"mlp", 0, 0, 512, true, 4}},
		{"link explicit", []string{"--parts", "p", "--task", "link", "--dropout", "0.3", "--batch", "64", "--weight-decay", "1e-4", "--decoder", "dot"},
			want{"dot", 0.3, 1e-4, 64, false, 0}},
		{"link dot normalised", []string{"--parts", "p", "--task", "link", "--decoder", "dot", "--norm-feat"}, want{"dot", 0, 0, 512, true, 3}},
		{"link no norm", []string{"--parts", "p", "--task", "link", "--norm-feat=false"}, want{"mlp", 0, 0, 512, false, 4}},
		// --global-batch sets the batch: no per-rank default beside it.
		{"link global", []string{"--parts", "p", "--task", "link", "--global-batch", "1000"}, want{"mlp", 0, 0, 0, true, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseTrain(tc.args)
			require.NoError(t, err)
			c := f.cfg
			assert.Equal(t, tc.want, want{c.Model.Decoder, c.Model.Dropout, c.Trainer.Adam.WeightDecay, c.Loader.Batch, c.RowNorm, len(f.taskDefaults)})
			assert.Equal(t, c.Model.Dropout, c.Model.InputDropout, "input dropout follows --dropout")
			if c.Loader.GlobalBatch > 0 {
				assert.Contains(t, f.settingsLine(), "--global-batch "+strconv.Itoa(c.Loader.GlobalBatch))
				assert.NotContains(t, f.settingsLine(), "--batch")
			} else {
				assert.Contains(t, f.settingsLine(), "--batch "+strconv.Itoa(tc.want.batch))
			}
		})
	}
}
