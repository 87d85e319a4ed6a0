package train

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mpignn/train/metrics"
)

func TestMetricsFileFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := metrics.Create(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr := TrainResult{Epoch: 1, Steps: 4, Loss: 1.5, Acc: 0.5, Seeds: 100, Wall: 2 * time.Second,
		RemoteRows: 77, CacheHits: 3, CacheLookups: 4}
	tr.Times[PhaseForward] = time.Second
	m := newEpochMetrics(tr, &EvalResult{Acc: 0.6, Wall: time.Second}, &EvalResult{Acc: 0.7})
	if err := w.WriteEpoch(&m); err != nil {
		t.Fatal(err)
	}
	tr.Epoch = 2
	skipped := newEpochMetrics(tr, nil, nil) // an epoch without evaluation
	if err := w.WriteEpoch(&skipped); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSummary(&metrics.Summary{Type: "summary", Epochs: 1, BestEpoch: 1, BestValAcc: 0.6, TestAcc: 0.7}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3", len(lines))
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"epoch", "loss", "train_acc", "val_acc", "test_acc", "epoch_s", "sample_s", "gather_s",
		"forward_s", "backward_s", "allreduce_s", "optimizer_s", "wait_s", "remote_rows", "cache_hit_rate"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("epoch line lacks %q: %s", k, lines[0])
		}
	}
	if obj["cache_hit_rate"] != 0.75 || obj["steps_per_s"] != 2.0 || obj["forward_s"] != 1.0 || obj["remote_rows"] != 77.0 {
		t.Errorf("derived fields wrong: %s", lines[0])
	}
	obj = nil
	if err := json.Unmarshal([]byte(lines[1]), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"val_loss", "val_acc", "test_loss", "test_acc"} {
		if _, ok := obj[k]; ok {
			t.Errorf("an epoch without evaluation has %q: %s", k, lines[1])
		}
	}
	if obj["loss"] != 1.5 || obj["eval_s"] != 0.0 {
		t.Errorf("an epoch without evaluation: %s", lines[1])
	}
	obj = nil
	if err := json.Unmarshal([]byte(lines[2]), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"best_val_acc", "test_acc"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, lines[2])
		}
	}
	eps, sum, err := metrics.Read(path)
	if err != nil || len(eps) != 2 || sum == nil || !eps[0].Evaluated() || *eps[0].ValAcc != 0.6 || eps[1].Evaluated() || sum.TestAcc != 0.7 {
		t.Fatalf("ReadMetrics: %v %+v %+v", err, eps, sum)
	}
}

func TestProgressModes(t *testing.T) {
	clock := time.Unix(1000, 0)
	run := func(mode ProgressMode) string {
		var buf bytes.Buffer
		p := NewProgressMode(&buf, 3, mode)
		p.now = func() time.Time { return clock }
		p.Interval = 5 * time.Second
		p.BeginEpoch(2, 100)
		for s := 1; s <= 100; s++ {
			clock = clock.Add(200 * time.Millisecond) // 5 steps/s
			p.StepDone(s, 0.5)
		}
		va, ta := 0.8, 0.7
		p.EndEpoch(&metrics.Epoch{Epoch: 2, Loss: 0.5, TrainAcc: 0.9, ValAcc: &va, TestAcc: &ta, EpochS: 20, StepsPerS: 5})
		p.EndEpoch(&metrics.Epoch{Epoch: 3, Loss: 0.4, TrainAcc: 0.95, EpochS: 20, StepsPerS: 5})
		return buf.String()
	}
	if out := run(ProgressQuiet); out != "" {
		t.Errorf("quiet printed %q", out)
	}
	lines := run(ProgressLines)
	if n := strings.Count(lines, "\n"); n != 6 { // every 5 s over 20 s, plus two epoch lines
		t.Errorf("plain mode printed %d lines, want 6:\n%s", n, lines)
	}
	if strings.Contains(lines, "\r") || !strings.Contains(lines, "epoch 2/3 step 25/100  5.00 steps/s  ETA 0:15") ||
		!strings.Contains(lines, "epoch 2/3: loss 0.5000 train 0.9000 val 0.8000 test 0.7000") ||
		!strings.Contains(lines, "epoch 3/3: loss 0.4000 train 0.9500 (not evaluated)") {
		t.Errorf("plain mode output:\n%s", lines)
	}
	bar := run(ProgressBar)
	if !strings.Contains(bar, "\r\x1b[K") || !strings.Contains(bar, "[======") || !strings.Contains(bar, "ETA") || !strings.Contains(bar, "100/100") {
		t.Errorf("bar mode output: %q", bar)
	}
	if NewProgress(&bytes.Buffer{}, 1, false).mode != ProgressLines || NewProgress(os.Stderr, 1, true).mode != ProgressQuiet {
		t.Error("mode detection: a buffer is not a terminal; quiet wins")
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 61 * time.Second: "1:01", 3725 * time.Second: "1:02:05"} {
		if got := fmtDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}
