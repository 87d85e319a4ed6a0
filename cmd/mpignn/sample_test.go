package main

import (
	"slices"
	"strings"
	"testing"

	"mpignn/collectives"
)

func TestParseSample(t *testing.T) {
	cfg, err := parseSample([]string{"--parts", "p", "--seeds", "42, 3,17,3", "--fanout", "10,-1", "--seed", "7", "--transport", "alltoallv", "--replace"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.seeds, []int64{3, 17, 42}) || !slices.Equal(cfg.fanouts, []int{10, -1}) ||
		cfg.key.Seed != 7 || !cfg.replace || cfg.transport != collectives.TransportAlltoallv {
		t.Fatalf("parsed %+v", cfg)
	}
	for _, tc := range []struct {
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
	} {
		_, err := parseSample(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

func TestParseBenchSample(t *testing.T) {
	cfg, err := parseBenchSample([]string{"--parts", "p", "--cache-mb", "20", "--steps", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.fanouts, []int{15, 10, 5}) || cfg.batch != 1024 || cfg.cacheMB != 20 || cfg.steps != 3 {
		t.Fatalf("parsed %+v", cfg)
	}
	for _, args := range [][]string{
		{},
		{"--parts", "p", "--batch", "0"},
		{"--parts", "p", "--cache-mb", "-1"},
		{"--parts", "p", "--fanout", "0"},
	} {
		if _, err := parseBenchSample(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
