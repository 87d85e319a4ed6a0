package train

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"mpignn/train/metrics"
)

// Reporter receives training progress. The Trainer calls it on every rank
// that has one set (normally only rank 0).
type Reporter interface {
	BeginEpoch(epoch, steps int) // epoch is 1-based
	StepDone(step int, loss float64)
	EndEpoch(m *metrics.Epoch)
}

// ProgressMode selects how Progress renders.
type ProgressMode int

const (
	// ProgressQuiet prints nothing.
	ProgressQuiet ProgressMode = iota
	// ProgressLines prints a plain status line every Interval and one line
	// per epoch: for logs and batch jobs.
	ProgressLines
	// ProgressBar redraws one live line (bar, steps/s, ETA) in place: for a
	// terminal.
	ProgressBar
)

// Progress is the console Reporter.
type Progress struct {
	w      io.Writer
	mode   ProgressMode
	epochs int
	// Interval between plain status lines (ProgressLines).
	Interval time.Duration
	now      func() time.Time

	epoch, steps, step int
	loss               float64
	start, last        time.Time
}

// NewProgress reports to w for a run of totalEpochs epochs: a live bar if w
// is a terminal, plain lines every 5 s otherwise, nothing if quiet.
func NewProgress(w io.Writer, totalEpochs int, quiet bool) *Progress {
	mode := ProgressLines
	switch {
	case quiet:
		mode = ProgressQuiet
	case isTerminal(w):
		mode = ProgressBar
	}
	return NewProgressMode(w, totalEpochs, mode)
}

// NewProgressMode is NewProgress with an explicit mode.
func NewProgressMode(w io.Writer, totalEpochs int, mode ProgressMode) *Progress {
	return &Progress{w: w, mode: mode, epochs: totalEpochs, Interval: 5 * time.Second, now: time.Now}
}

// isTerminal reports whether w is a character device (a tty): the usual
// test without a terminal library. Pipes and files (mpirun's forwarding,
// batch logs) are not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// barRedraw limits redraws of the live bar (fast steps would otherwise
// flood the terminal).
const barRedraw = 100 * time.Millisecond

// BeginEpoch implements Reporter.
func (p *Progress) BeginEpoch(epoch, steps int) {
	p.epoch, p.steps, p.step, p.loss = epoch, steps, 0, 0
	p.start = p.now()
	p.last = p.start
}

// StepDone implements Reporter.
func (p *Progress) StepDone(step int, loss float64) {
	p.step, p.loss = step, loss
	now := p.now()
	switch p.mode {
	case ProgressBar:
		if now.Sub(p.last) >= barRedraw || step == p.steps {
			p.last = now
			fmt.Fprintf(p.w, "\r\x1b[K%s", p.status(now, true))
		}
	case ProgressLines:
		if now.Sub(p.last) >= p.Interval {
			p.last = now
			fmt.Fprintln(p.w, p.status(now, false))
		}
	}
}

// EndEpoch implements Reporter.
func (p *Progress) EndEpoch(m *metrics.Epoch) {
	if p.mode == ProgressQuiet {
		return
	}
	if p.mode == ProgressBar {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	if !m.Evaluated() {
		fmt.Fprintf(p.w, "epoch %d/%d: loss %.4f train %.4f (not evaluated) | %.1f s (%.2f steps/s)\n",
			m.Epoch, p.epochs, m.Loss, m.TrainAcc, m.EpochS, m.StepsPerS)
		return
	}
	if m.ValMRR != nil || m.TestMRR != nil {
		// Link prediction: the ranking figures are what matters.
		fmt.Fprintf(p.w, "epoch %d/%d: loss %.4f train %.4f val mrr %.4f test mrr %.4f auc %.4f | %.1f s (%.2f steps/s, eval %.1f s)\n",
			m.Epoch, p.epochs, m.Loss, m.TrainAcc, metrics.OrNaN(m.ValMRR), metrics.OrNaN(m.TestMRR), metrics.OrNaN(m.TestAUC), m.EpochS, m.StepsPerS, m.EvalS)
		return
	}
	switch {
	case m.ValROCAUC != nil || m.TestROCAUC != nil:
		// Multi-label: ROC-AUC averaged over tasks (OGB's figure); train
		// is the share of seeds with every target right.
		fmt.Fprintf(p.w, "epoch %d/%d: loss %.4f train %.4f val rocauc %.4f test rocauc %.4f f1 %.4f | %.1f s (%.2f steps/s, eval %.1f s)\n",
			m.Epoch, p.epochs, m.Loss, m.TrainAcc, metrics.OrNaN(m.ValROCAUC), metrics.OrNaN(m.TestROCAUC), metrics.OrNaN(m.TestF1Micro), m.EpochS, m.StepsPerS, m.EvalS)
	case m.ValRMSE != nil || m.TestRMSE != nil:
		fmt.Fprintf(p.w, "epoch %d/%d: loss %.4f val rmse %.4f test rmse %.4f mae %.4f | %.1f s (%.2f steps/s, eval %.1f s)\n",
			m.Epoch, p.epochs, m.Loss, metrics.OrNaN(m.ValRMSE), metrics.OrNaN(m.TestRMSE), metrics.OrNaN(m.TestMAE), m.EpochS, m.StepsPerS, m.EvalS)
	default:
		fmt.Fprintf(p.w, "epoch %d/%d: loss %.4f train %.4f val %.4f test %.4f | %.1f s (%.2f steps/s, eval %.1f s)\n",
			m.Epoch, p.epochs, m.Loss, m.TrainAcc, *m.ValAcc, *m.TestAcc, m.EpochS, m.StepsPerS, m.EvalS)
	}
}

// status renders the in-epoch line.
func (p *Progress) status(now time.Time, bar bool) string {
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.step) / el
	}
	eta := "?"
	if rate > 0 {
		eta = fmtDuration(time.Duration(float64(p.steps-p.step) / rate * float64(time.Second)))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "epoch %d/%d ", p.epoch, p.epochs)
	if bar {
		const width = 24
		fill := 0
		if p.steps > 0 {
			fill = p.step * width / p.steps
		}
		sb.WriteString("[" + strings.Repeat("=", fill) + strings.Repeat(" ", width-fill) + "] ")
	} else {
		sb.WriteString("step ")
	}
	fmt.Fprintf(&sb, "%d/%d  %.2f steps/s  ETA %s  loss %.4f", p.step, p.steps, rate, eta, p.loss)
	return sb.String()
}

// fmtDuration prints m:ss or h:mm:ss.
func fmtDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
