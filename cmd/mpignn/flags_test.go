package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
)

// TestFanoutFlag: every command parses its fanouts the same way, once
// (sample.ParseFanoutPlan), with the flag and its value in every error.
func TestFanoutFlag(t *testing.T) {
	tests := []struct {
		value  string
		want   []int // parse's Hops; nil = empty value
		layers bool  // layers() accepts it too
		err    string
	}{
		{"10,5", []int{10, 5}, true, ""},
		{" 15, 10 ,-1", []int{15, 10, -1}, true, ""},
		{"", nil, false, "--fanout needs at least one layer"},
		{"10,x", nil, false, `--fanout "10,x": "x" is not an integer`},
		{"10,,5", nil, false, `"" is not an integer`},
		{"5,0", nil, false, `--fanout "5,0": layer 1 has fanout 0`},
		{"-2", nil, false, "layer 0 has fanout -2"},
		{"1073741825", nil, false, "has fanout 1073741825"},
		{"cites=4,0;*=2,-1", []int{4, -1}, false, `--fanout "cites=4,0;*=2,-1": per-relation fanouts apply to train and sample only`},
		{"cites=4;*=2,1", nil, false, `--fanout "cites=4;*=2,1": relation *: 2 fanouts, want 1`},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			f := addFanoutFlag(fs, "fanout", "3", "test")
			require.NoError(t, fs.Parse([]string{"--fanout", tc.value}))
			got, err := f.parse()
			layers, lerr := f.layers()
			switch {
			case tc.err == "":
				require.NoError(t, err)
				require.NoError(t, lerr)
				assert.Equal(t, tc.want, got.Hops)
				assert.Equal(t, tc.want, layers)
			case tc.value == "":
				require.NoError(t, err, "an empty value is the command's default")
				assert.Nil(t, got.Hops)
				assert.EqualError(t, lerr, tc.err)
				_, perr := f.plan()
				assert.EqualError(t, perr, tc.err)
			case tc.want != nil:
				require.NoError(t, err, "a per-relation plan parses")
				assert.Equal(t, tc.want, got.Hops, "the widest fanout of each hop")
				assert.EqualError(t, lerr, tc.err, "but a plain list is wanted")
			default:
				assert.ErrorContains(t, err, tc.err)
				assert.ErrorContains(t, lerr, tc.err)
			}
		})
	}
}

func TestTransportFlag(t *testing.T) {
	tests := []struct {
		args []string
		want collectives.Transport
		err  string
	}{
		{nil, collectives.TransportAuto, ""},
		{[]string{"--transport", "rma"}, collectives.TransportRMA, ""},
		{[]string{"--transport", "alltoallv"}, collectives.TransportAlltoallv, ""},
		{[]string{"--transport", "udp"}, 0, `--transport: unknown transport "udp"`},
	}
	for _, tc := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f := addTransportFlag(fs)
		require.NoError(t, fs.Parse(tc.args))
		got, err := f.parse()
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%v", tc.args)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, got, "%v", tc.args)
	}
}

// TestSharedFlagsKeepTheirInterface: the shared helpers keep each flag's
// name and default (scripts and agreeStartup rely on both).
func TestSharedFlagsKeepTheirInterface(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var parts string
	var threads, batch int
	var cache float64
	var seed uint64
	addPartsFlag(fs, &parts)
	addThreadsFlag(fs, &threads)
	addCacheFlag(fs, &cache)
	addSeedFlag(fs, &seed, 7, "x")
	addBatchFlag(fs, &batch, 64, "seeds")
	addTransportFlag(fs)
	addFanoutFlag(fs, "fanout", "10,5", "x")
	want := map[string]string{
		"parts": "", "threads": "0", "cache-mb": "0", "seed": "7", "batch": "64", "transport": "auto", "fanout": "10,5",
	}
	got := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		got[f.Name] = f.DefValue
		assert.NotEmpty(t, f.Usage, "--%s has no help", f.Name)
	})
	assert.Equal(t, want, got)
}

// TestPrecisionFlag: --precision takes fp32 (the default) and bf16 into
// TrainConfig.Precision and refuses anything else while parsing; the
// tests-only emulation comes from the environment, never from a flag.
func TestPrecisionFlag(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		env      string
		want     string
		emulated bool
		err      string
	}{
		{name: "default", want: "fp32"},
		{name: "bf16", args: []string{"--precision", "bf16"}, want: "bf16"},
		{name: "fp32", args: []string{"--precision", "fp32"}, want: "fp32"},
		{name: "emulated", args: []string{"--precision", "bf16"}, env: "1", want: "bf16", emulated: true},
		{name: "env not 1", args: []string{"--precision", "bf16"}, env: "yes", want: "bf16"},
		{name: "fp16", args: []string{"--precision", "fp16"}, err: `--precision "fp16": want one of fp32, bf16`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(emulateBF16Env, tc.env)
			f, err := parseTrain(append([]string{"--parts", "p"}, tc.args...))
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, f.cfg.Precision)
			assert.Equal(t, tc.emulated, f.cfg.EmulateBF16)
			assert.Equal(t, tc.want == "bf16", strings.Contains(f.settingsLine(), " --precision bf16"), f.settingsLine())
		})
	}
}
