package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTrain(t *testing.T) {
	for _, tc := range []struct {
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
		{[]string{"--parts", "p", "--model", "gin"}, `--model "gin": want one of sage, gcn, gat`},
		{[]string{"--parts", "p", "--heads", "4"}, "--heads applies to --model gat only, not sage"},
		{[]string{"--parts", "p", "--model", "gcn", "--attn-dropout", "0.1"}, "--attn-dropout applies to --model gat only, not gcn"},
		{[]string{"--parts", "p", "--model", "gat", "--heads", "0"}, "--heads 0 must be positive"},
		{[]string{"--parts", "p", "--model", "gat", "--attn-dropout", "1"}, "--attn-dropout 1 must be in [0,1)"},
		{[]string{"--parts", "p", "--model", "gat", "--hidden", "20", "--heads", "8"}, "--hidden 20 must be a multiple of --heads 8"},
	} {
		_, err := parseTrain(tc.args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.err)
		}
	}
	f, err := parseTrain([]string{"--parts", "p", "--dropout", "0.3", "--fanout", "15,10,5", "--split", "full"})
	if err != nil {
		t.Fatal(err)
	}
	if f.cfg.InputDropout != 0.3 || len(f.cfg.Fanouts) != 3 || f.cfg.Split != "full" {
		t.Errorf("input dropout %v (want --dropout's 0.3), fanouts %v, split %q", f.cfg.InputDropout, f.cfg.Fanouts, f.cfg.Split)
	}
	// GAT settings reach the config only for GAT; other models keep them
	// zero so their config stays what it was before GAT existed.
	for _, tc := range []struct {
		args        []string
		model       string
		heads       int
		attnDropout float32
	}{
		{[]string{"--parts", "p"}, "sage", 0, 0},
		{[]string{"--parts", "p", "--model", "gcn"}, "gcn", 0, 0},
		{[]string{"--parts", "p", "--model", "gat"}, "gat", 8, 0},
		{[]string{"--parts", "p", "--model", "gat", "--heads", "2", "--attn-dropout", "0.5"}, "gat", 2, 0.5},
	} {
		f, err := parseTrain(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if f.cfg.Model != tc.model || f.cfg.Heads != tc.heads || f.cfg.AttnDropout != tc.attnDropout {
			t.Errorf("%v: model %q heads %d attn dropout %v, want %q %d %v", tc.args, f.cfg.Model, f.cfg.Heads, f.cfg.AttnDropout, tc.model, tc.heads, tc.attnDropout)
		}
	}
}

// TestPartsCacheFallsBack: a read-only dataset parent (like ../shared/data)
// is skipped in favour of the user cache directory.
func TestPartsCacheFallsBack(t *testing.T) {
	root := t.TempDir()
	ro := filepath.Join(root, "ro")
	if err := os.MkdirAll(filepath.Join(ro, "cora"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache"))
	dirs := partsCacheDirs(filepath.Join(ro, "cora"), "x")
	if len(dirs) != 2 || dirs[0] != filepath.Join(ro, "x") || dirs[1] != filepath.Join(root, "cache", "mpignn", "x") {
		t.Fatalf("cache dirs %v", dirs)
	}
	if writable(ro) || !writable(root) {
		t.Fatalf("writable(ro) = %v, writable(root) = %v", writable(ro), writable(root))
	}
}
