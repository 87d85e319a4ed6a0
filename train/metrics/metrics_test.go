package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMetricsRejectsNaNAndBadLines(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "m.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	m := Epoch{Type: "epoch", Epoch: 3, Loss: math.NaN()}
	if err := w.WriteEpoch(&m); err == nil || !strings.Contains(err.Error(), "epoch 3 loss is NaN") {
		t.Fatalf("NaN loss: %v", err)
	}
	for _, tc := range []struct{ body, want string }{
		{"{\"type\":\"epoch\",\"epoch\":1}\n{oops\n", "line 2"},
		{"{\"type\":\"weird\"}\n", "unknown line type"},
		{"{\"type\":\"epoch\",\"epoch\":\"x\"}\n", "line 1"},
	} {
		p := filepath.Join(dir, "bad.jsonl")
		os.WriteFile(p, []byte(tc.body), 0o644)
		if _, _, err := Read(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %v, want %q and the path", tc.body, err, tc.want)
		}
	}
	if _, _, err := Read(filepath.Join(dir, "none.jsonl")); err == nil {
		t.Error("missing file accepted")
	}
}
