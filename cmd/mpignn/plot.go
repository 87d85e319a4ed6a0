package main

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"mpignn/internal/osx"
	"mpignn/train/metrics"
)

// runPlot implements `mpignn plot --metrics FILE --out loss.png`: the loss
// curves (train, valid) and accuracy curves (train, valid, test) of a
// metrics file, side by side, as PNG or SVG (chosen by the extension).
func runPlot(args []string) error {
	fs := newFlagSet("plot", "mpignn plot --metrics FILE [--out loss.png]", "Draws the loss and accuracy curves of a metrics file from mpignn train --metrics.")
	metricsPath := fs.String("metrics", "", "metrics file written by mpignn train --metrics (required)")
	out := fs.String("out", "loss.png", "output image; .png or .svg")
	title := fs.String("title", "", "title prefix (default: the metrics file name)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *metricsPath == "" {
		return errors.New("--metrics FILE is required")
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(*out)), ".")
	if format != "png" && format != "svg" {
		return flagMistake(fmt.Errorf("--out %s: unsupported image type %q (want .png or .svg)", *out, filepath.Ext(*out)))
	}
	if !onRankZero("plot", "a plot is drawn by one process") {
		return nil
	}
	epochs, sum, err := metrics.Read(*metricsPath)
	if err != nil {
		return err
	}
	if len(epochs) == 0 {
		return fmt.Errorf("metrics %s: no epoch lines to plot", *metricsPath)
	}
	name := *title
	if name == "" {
		name = filepath.Base(*metricsPath)
	}
	img, err := plotDraw(epochs, sum, name, format)
	if err != nil {
		return fmt.Errorf("plot %s: %w", *out, err)
	}
	if err := osx.WriteFileAtomic(*out, img); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Printf("plot: wrote %s (loss and accuracy of %d epochs of %s)\n", *out, len(epochs), *metricsPath)
	return nil
}

// plotSeries builds plot points from one metric of every epoch.
func plotSeries(epochs []metrics.Epoch, f func(m *metrics.Epoch) float64) plotter.XYs {
	pts := make(plotter.XYs, len(epochs))
	for i := range epochs {
		pts[i].X = float64(epochs[i].Epoch)
		pts[i].Y = f(&epochs[i])
	}
	return pts
}

// plotEvalSeries is plotSeries over the epochs that have the optional
// metric f points at (validation and test results are absent from epochs
// that skipped evaluation, and a hand-edited or foreign file may lack any
// of them): it draws what is there.
func plotEvalSeries(epochs []metrics.Epoch, f func(m *metrics.Epoch) *float64) plotter.XYs {
	var pts plotter.XYs
	for i := range epochs {
		if v := f(&epochs[i]); v != nil {
			pts = append(pts, plotter.XY{X: float64(epochs[i].Epoch), Y: *v})
		}
	}
	return pts
}

// plotCurve is one labelled line of a panel.
type plotCurve struct {
	label string
	pts   plotter.XYs
	color color.Color
}

// plotPanel builds one plot with the given curves.
func plotPanel(title, ylabel string, curves []plotCurve) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for _, c := range curves {
		if len(c.pts) == 0 {
			continue // nothing of this metric in the file: no empty legend entry
		}
		l, s, err := plotter.NewLinePoints(c.pts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.label, err)
		}
		l.Color = c.color
		l.Width = vg.Points(1.5)
		s.Color = c.color
		s.Radius = vg.Points(1.5)
		p.Add(l, s)
		p.Legend.Add(c.label, l, s)
	}
	return p, nil
}

// isLinkRun reports whether the metrics come from a link-prediction run
// (some epoch carries ranking figures).
// Kinds of runs plot tells apart by their figures.
const (
	kindNode = iota
	kindLink
	kindMultilabel
	kindRegression
)

// runKind tells which figures a run's evaluated epochs carry.
func runKind(epochs []metrics.Epoch) int {
	for i := range epochs {
		m := &epochs[i]
		switch {
		case m.ValROCAUC != nil || m.TestROCAUC != nil:
			return kindMultilabel
		case m.ValRMSE != nil || m.TestRMSE != nil:
			return kindRegression
		}
	}
	if isLinkRun(epochs) {
		return kindLink
	}
	return kindNode
}

func isLinkRun(epochs []metrics.Epoch) bool {
	for i := range epochs {
		if epochs[i].ValMRR != nil || epochs[i].TestMRR != nil {
			return true
		}
	}
	return false
}

// plotDraw renders the two panels into an image of the given format.
func plotDraw(epochs []metrics.Epoch, sum *metrics.Summary, name, format string) ([]byte, error) {
	blue := color.RGBA{R: 31, G: 119, B: 180, A: 255}
	orange := color.RGBA{R: 255, G: 127, B: 14, A: 255}
	green := color.RGBA{R: 44, G: 160, B: 44, A: 255}
	lossName := "cross-entropy"
	if runKind(epochs) == kindRegression {
		lossName = "squared error"
	}
	loss, err := plotPanel(name+": loss", lossName, []plotCurve{
		{"train", plotSeries(epochs, func(m *metrics.Epoch) float64 { return m.Loss }), blue},
		{"valid", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValLoss }), orange},
	})
	if err != nil {
		return nil, err
	}
	var acc *plot.Plot
	red := color.RGBA{R: 214, G: 39, B: 40, A: 255}
	switch runKind(epochs) {
	case kindMultilabel:
		title := name + ": ROC-AUC and F1"
		if sum != nil && sum.ValROCAUC != nil && sum.TestROCAUC != nil {
			title += fmt.Sprintf(" (best epoch %d: val ROC-AUC %.4f, test %.4f)", sum.BestEpoch, *sum.ValROCAUC, *sum.TestROCAUC)
		}
		acc, err = plotPanel(title, "ROC-AUC / F1 micro", []plotCurve{
			{"valid ROC-AUC", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValROCAUC }), orange},
			{"test ROC-AUC", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestROCAUC }), green},
			{"valid F1 micro", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValF1Micro }), blue},
			{"test F1 micro", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestF1Micro }), red},
		})
	case kindRegression:
		title := name + ": RMSE and MAE"
		if sum != nil && sum.ValRMSE != nil && sum.TestRMSE != nil {
			title += fmt.Sprintf(" (best epoch %d: val RMSE %.4f, test %.4f)", sum.BestEpoch, *sum.ValRMSE, *sum.TestRMSE)
		}
		acc, err = plotPanel(title, "RMSE / MAE", []plotCurve{
			{"valid RMSE", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValRMSE }), orange},
			{"test RMSE", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestRMSE }), green},
			{"valid MAE", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValMAE }), blue},
			{"test MAE", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestMAE }), red},
		})
	case kindLink:
		// Link runs: the ranking figures; their accuracy is dominated by
		// the negatives and says little.
		title := name + ": MRR and AUC"
		if sum != nil && sum.BestValMRR != nil && sum.TestMRR != nil && sum.TestAUC != nil {
			title += fmt.Sprintf(" (best val MRR %.4f at epoch %d, test MRR %.4f, AUC %.4f)", *sum.BestValMRR, sum.BestEpoch, *sum.TestMRR, *sum.TestAUC)
		}
		acc, err = plotPanel(title, "MRR / AUC", []plotCurve{
			{"valid MRR", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValMRR }), orange},
			{"test MRR", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestMRR }), green},
			{"valid AUC", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValAUC }), blue},
			{"test AUC", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestAUC }), red},
		})
	default:
		accTitle := name + ": accuracy"
		if sum != nil {
			accTitle += fmt.Sprintf(" (best val %.4f at epoch %d, test %.4f)", sum.BestValAcc, sum.BestEpoch, sum.TestAcc)
		}
		acc, err = plotPanel(accTitle, "accuracy", []plotCurve{
			{"train", plotSeries(epochs, func(m *metrics.Epoch) float64 { return m.TrainAcc }), blue},
			{"valid", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.ValAcc }), orange},
			{"test", plotEvalSeries(epochs, func(m *metrics.Epoch) *float64 { return m.TestAcc }), green},
		})
	}
	if err != nil {
		return nil, err
	}
	// Accuracy curves rise from the lower left: keep the legend clear of them.
	acc.Legend.Top = false

	const w, h = 13 * vg.Inch, 5 * vg.Inch
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	case "svg":
		c = vgsvg.New(w, h)
	default:
		return nil, fmt.Errorf("unsupported format %q", format)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	grid := [][]*plot.Plot{{loss, acc}}
	canvases := plot.Align(grid, tiles, dc)
	for j, p := range grid[0] {
		p.Draw(canvases[0][j])
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
