package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/collectives"
)

func TestParseSample(t *testing.T) {
	cfg, err := parseSample([]string{"--parts", "p", "--seeds", "42, 3,17,3", "--fanout", "10,-1", "--seed", "7", "--transport", "alltoallv", "--replace"})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 17, 42}, cfg.seeds)
	require.Equal(t, []int{10, -1}, cfg.fanouts)
	require.Equal(t, uint64(7), cfg.key.Seed)
	require.True(t, cfg.replace)
	require.Equal(t, collectives.TransportAlltoallv, cfg.transport)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--seeds", "1"}, "--parts"},
		{[]string{"--parts", "p"}, "--seeds"},
		{[]string{"--parts", "p", "--seeds", "1,x"}, `"x" is not an integer`},
		{[]string{"--parts", "p", "--seeds", "1", "--fanout", "5,0"}, "layer 1 has fanout 0"},
		{[]string{"--parts", "p", "--seeds", "1", "--fanout", "-2"}, "fanout -2"},
		{[]string{"--parts", "p", "--seeds", "1", "--fanout", ""}, "at least one layer"},
		{[]string{"--parts", "p", "--seeds", "1", "--transport", "udp"}, "unknown transport"},
		{[]string{"--parts", "p", "--seeds", "1", "extra"}, "unexpected"},
	}
	for _, tc := range tests {
		_, err := parseSample(tc.args)
		assert.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
}

func TestParseBenchSample(t *testing.T) {
	cfg, err := parseBenchSample([]string{"--parts", "p", "--cache-mb", "20", "--steps", "3"})
	require.NoError(t, err)
	require.Equal(t, []int{15, 10, 5}, cfg.loader.Fanouts)
	require.Equal(t, 1024, cfg.loader.Batch)
	require.Equal(t, 20.0, cfg.store.CacheMB)
	require.Equal(t, 3, cfg.steps)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{}, "--parts"},
		{[]string{"--parts", "p", "--batch", "0"}, "--batch 0 must be positive"},
		{[]string{"--parts", "p", "--cache-mb", "-1"}, "--cache-mb -1: want a finite size"},
		{[]string{"--parts", "p", "--fanout", "0"}, "layer 0 has fanout 0"},
		{[]string{"--parts", "p", "--temporal-strict"}, "--temporal-strict and --seed-time need --temporal uniform or last"},
		{[]string{"--parts", "p", "--steps", "0"}, "--steps must be positive"},
	} {
		_, err := parseBenchSample(tc.args)
		require.Error(t, err, "%v accepted", tc.args)
		assert.Contains(t, flagNames(err).Error(), tc.err, "%v", tc.args)
	}
}
