package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"

	"mpignn/internal/intrange"
	"mpignn/internal/osx"
)

// Epoch is one line of the metrics file. Loss and accuracies are over
// all ranks' seeds; times are seconds on the writing rank (rank 0).
type Epoch struct {
	Type     string  `json:"type"` // "epoch"
	Epoch    int     `json:"epoch"`
	Loss     float64 `json:"loss"`
	TrainAcc float64 `json:"train_acc"`
	// Validation and test results: nil, and absent from the file, on epochs
	// that skip evaluation (RunOptions.EvalEvery).
	ValLoss  *float64 `json:"val_loss,omitempty"`
	ValAcc   *float64 `json:"val_acc,omitempty"`
	TestLoss *float64 `json:"test_loss,omitempty"`
	TestAcc  *float64 `json:"test_acc,omitempty"`
	// Link prediction's ranking figures (an Evaluator's link results): nil,
	// and absent from the file, for node classification and unevaluated
	// epochs, so node lines are unchanged. A figure that is undefined (NaN)
	// is absent too.
	ValAUC *float64 `json:"val_auc,omitempty"`
	ValMRR *float64 `json:"val_mrr,omitempty"`
	TestFigures
	// Real-target tasks' figures (multi-label, regression); absent otherwise.
	TargetLine
	// EpochS is the wall time of the training steps; EvalS that of the
	// valid+test evaluation that follows them (0 without evaluation).
	EpochS     float64 `json:"epoch_s"`
	EvalS      float64 `json:"eval_s"`
	SampleS    float64 `json:"sample_s"`
	GatherS    float64 `json:"gather_s"`
	ForwardS   float64 `json:"forward_s"`
	BackwardS  float64 `json:"backward_s"`
	AllreduceS float64 `json:"allreduce_s"`
	OptimizerS float64 `json:"optimizer_s"`
	// WaitS is the time rank 0's MPI goroutine waited for forward and
	// backward after fetching the next batches (prefetch; 0 without): the
	// compute the fetching did not hide. Sample, gather, forward and
	// backward then overlap, so the phases add up to more than EpochS.
	WaitS        float64 `json:"wait_s"`
	Steps        int     `json:"steps"`
	StepsPerS    float64 `json:"steps_per_s"`
	Seeds        int64   `json:"seeds"`
	RemoteRows   int64   `json:"remote_rows"`
	CacheHitRate float64 `json:"cache_hit_rate"`
	// Kernels is the numeric path the epoch computed on ("onednn fp32
	// avx2", kernels.Path; absent when the caller did not say): a resumed
	// run's epochs may name another one than those before the checkpoint.
	Kernels string `json:"kernels,omitempty"`
}

// Summary is the last line of the metrics file.
type Summary struct {
	Type       string  `json:"type"` // "summary"
	Epochs     int     `json:"epochs"`
	BestEpoch  int     `json:"best_epoch"`
	BestValAcc float64 `json:"best_val_acc"`
	TestAcc    float64 `json:"test_acc"` // test accuracy at the best-validation epoch
	TotalS     float64 `json:"total_s"`  // wall time of this Run call
	// Link prediction: the validation MRR that selected the best epoch and
	// the test figures of that epoch (absent for node classification).
	BestValMRR *float64 `json:"best_val_mrr,omitempty"`
	TestFigures
	// Real-target tasks: the best epoch's figures (absent otherwise).
	TargetLine
	// Kernels is the numeric path of the run (as on its epoch lines).
	Kernels string `json:"kernels,omitempty"`
	// StoppedEarly is the epoch after which early stopping ended the run
	// (absent when it ran all its epochs).
	StoppedEarly int `json:"stopped_early,omitempty"`
}

// TestFigures are a link run's test figures as epoch and summary lines
// write them (inline: an embedded struct's fields are the line's own). All
// nil for node classification; a figure that is undefined (NaN) is nil too.
type TestFigures struct {
	TestAUC     *float64 `json:"test_auc,omitempty"`
	TestMRR     *float64 `json:"test_mrr,omitempty"`
	TestHits1   *float64 `json:"test_hits@1,omitempty"`
	TestHits3   *float64 `json:"test_hits@3,omitempty"`
	TestHits10  *float64 `json:"test_hits@10,omitempty"`
	TestHits50  *float64 `json:"test_hits@50,omitempty"`
	TestHits100 *float64 `json:"test_hits@100,omitempty"`
}

// NewTestFigures converts f (nil: no figures) for the metrics file.
func NewTestFigures(f *LinkFigures) TestFigures {
	if f == nil {
		return TestFigures{}
	}
	return TestFigures{
		TestAUC: finitePtr(f.AUC), TestMRR: finitePtr(f.MRR),
		TestHits1: finitePtr(f.Hits[0]), TestHits3: finitePtr(f.Hits[1]), TestHits10: finitePtr(f.Hits[2]),
		TestHits50: finitePtr(f.Hits[3]), TestHits100: finitePtr(f.Hits[4]),
	}
}

// SetLink fills the link figures of the best epoch (nothing when val or
// test is nil).
func (s *Summary) SetLink(val, test *LinkFigures) {
	if val != nil {
		s.BestValMRR = finitePtr(val.MRR)
	}
	if test != nil {
		s.TestFigures = NewTestFigures(test)
	}
}

// TestLink returns the test figures of an epoch line (nil if it has none):
// what `plot` and reports read back from a link run's metrics.
func (m *Epoch) TestLink() *LinkFigures {
	if m.TestMRR == nil && m.TestAUC == nil {
		return nil
	}
	f := &LinkFigures{AUC: OrNaN(m.TestAUC), MRR: OrNaN(m.TestMRR)}
	for i, p := range []*float64{m.TestHits1, m.TestHits3, m.TestHits10, m.TestHits50, m.TestHits100} {
		f.Hits[i] = OrNaN(p)
	}
	return f
}

// SetLink fills an evaluated epoch's link figures: validation AUC and MRR
// from val, the test figures from test (nothing for a nil one).
func (m *Epoch) SetLink(val, test *LinkFigures) {
	if val != nil {
		m.ValAUC, m.ValMRR = finitePtr(val.AUC), finitePtr(val.MRR)
	}
	if test != nil {
		m.TestFigures = NewTestFigures(test)
	}
}

// Evaluated reports whether the epoch has validation and test results.
func (m *Epoch) Evaluated() bool { return m.ValAcc != nil && m.TestAcc != nil }

// ValAccuracy returns the validation accuracy, NaN if not evaluated.
func (m *Epoch) ValAccuracy() float64 { return OrNaN(m.ValAcc) }

// TestAccuracy returns the test accuracy, NaN if not evaluated.
func (m *Epoch) TestAccuracy() float64 { return OrNaN(m.TestAcc) }

// OrNaN returns an optional figure of a line, NaN when it is absent.
func OrNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Writer appends JSON lines to a metrics file, one write and one
// fsync per line, so that a crash leaves only whole lines behind.
type Writer struct {
	path string
	f    *os.File
	// Warnings says what Create repaired in the file it continued
	// (a torn last line, missing or repeated epochs), for the caller to show.
	Warnings []string
}

// Create opens path for a run that has already completed keepEpochs
// epochs (0 for a fresh run). Lines of epochs <= keepEpochs are kept from an
// existing file (a resumed run continues the same file), one per epoch in
// epoch order; everything else (later epochs of the interrupted run, old
// summaries) is dropped. The trimmed file replaces the old one atomically.
//
// A kill or a full disk in the middle of an append leaves a torn last line;
// it is dropped with a warning rather than blocking the resume. An invalid
// line followed by valid ones is not such an accident and is refused.
func Create(path string, keepEpochs int) (*Writer, error) {
	var keep []byte
	var warnings []string
	if keepEpochs > 0 {
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("metrics: %w", err)
		}
		if keep, warnings, err = keptMetrics(path, data, keepEpochs); err != nil {
			return nil, err
		}
	}
	if err := osx.WriteFileAtomic(path, keep); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return &Writer{path: path, f: f, Warnings: warnings}, nil
}

// keptMetrics returns the lines of data (the metrics file at path) that a run
// resumed after keepEpochs epochs keeps: the last valid line of each epoch
// 1..keepEpochs, in epoch order. A torn tail (invalid lines after the last
// valid one) is dropped with a warning; an invalid line before a valid one is
// an error naming the line.
func keptMetrics(path string, data []byte, keepEpochs int) ([]byte, []string, error) {
	lines := bytes.Split(data, []byte("\n"))
	byEpoch := make(map[int][]byte)
	seen := make(map[int]int)
	var warnings []string
	// The first invalid line not (yet) followed by a valid one, and how many
	// invalid lines follow from there.
	badLine, badLines := 0, 0
	var badErr error
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var head struct {
			Type  string `json:"type"`
			Epoch int    `json:"epoch"`
		}
		err := json.Unmarshal(line, &head)
		if err == nil && head.Type == "epoch" {
			err = json.Unmarshal(line, new(Epoch))
		}
		if err != nil {
			if badErr == nil {
				badLine, badErr = i+1, err
			}
			badLines++
			continue
		}
		if badErr != nil {
			return nil, nil, fmt.Errorf("metrics %s line %d: %w (only a torn last line is repaired on resume; fix or remove the file)", path, badLine, badErr)
		}
		if head.Type == "epoch" && head.Epoch >= 1 && head.Epoch <= keepEpochs {
			byEpoch[head.Epoch] = line // a repeated epoch: the later line wins
			seen[head.Epoch]++
		}
	}
	if badErr != nil {
		warnings = append(warnings, fmt.Sprintf("metrics %s: dropped a torn tail of %d invalid line(s) from line %d (%v)", path, badLines, badLine, badErr))
	}
	var keep bytes.Buffer
	var missing, repeated []int
	for e := 1; e <= keepEpochs; e++ {
		line, ok := byEpoch[e]
		if !ok {
			missing = append(missing, e)
			continue
		}
		if seen[e] > 1 {
			repeated = append(repeated, e)
		}
		keep.Write(line)
		keep.WriteByte('\n')
	}
	if len(missing) > 0 {
		warnings = append(warnings, fmt.Sprintf("metrics %s: no line for epoch(s) %s of the %d before the checkpoint", path, intrange.Compact(missing), keepEpochs))
	}
	if len(repeated) > 0 {
		warnings = append(warnings, fmt.Sprintf("metrics %s: several lines for epoch(s) %s; kept the last of each", path, intrange.Compact(repeated)))
	}
	return keep.Bytes(), warnings, nil
}

// WriteEpoch appends one epoch line.
func (w *Writer) WriteEpoch(m *Epoch) error {
	if math.IsNaN(m.Loss) || math.IsInf(m.Loss, 0) {
		return fmt.Errorf("metrics %s: epoch %d loss is %v", w.path, m.Epoch, m.Loss)
	}
	return w.writeLine(m)
}

// WriteSummary appends the final summary line.
func (w *Writer) WriteSummary(s *Summary) error { return w.writeLine(s) }

func (w *Writer) writeLine(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("metrics %s: %w", w.path, err)
	}
	if _, err := w.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// Read parses a metrics file: the epoch lines in file order and the
// last summary line (nil if the run did not finish).
func Read(path string) ([]Epoch, *Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	var epochs []Epoch
	var sum *Summary
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, nil, fmt.Errorf("metrics %s line %d: %w", path, ln, err)
		}
		switch head.Type {
		case "epoch":
			var m Epoch
			if err := json.Unmarshal(line, &m); err != nil {
				return nil, nil, fmt.Errorf("metrics %s line %d: %w", path, ln, err)
			}
			epochs = append(epochs, m)
		case "summary":
			sum = new(Summary)
			if err := json.Unmarshal(line, sum); err != nil {
				return nil, nil, fmt.Errorf("metrics %s line %d: %w", path, ln, err)
			}
		default:
			return nil, nil, fmt.Errorf("metrics %s line %d: unknown line type %q (want \"epoch\" or \"summary\")", path, ln, head.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("metrics %s: %w", path, err)
	}
	return epochs, sum, nil
}
