package bench

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePlots draws, for every group, throughput (million operations per
// second) and p99 latency against goroutines, one line per design, each as
// PNG and SVG in dir. It returns the files written.
func WritePlots(dir string, rs []Result) ([]string, error) {
	var files []string
	for _, group := range groups(rs) {
		if len(gsOf(rs, group)) < 2 {
			// One goroutine count is a point per design, not a curve, and
			// a log axis over one value has no extent: the ratio tables
			// have its numbers.
			continue
		}
		designs := append([]string{Tollgate}, peersOf(rs, group)...)
		for _, kind := range []string{"throughput", "p99"} {
			p := plot.New()
			p.Title.Text = group
			p.X.Label.Text = "goroutines"
			p.X.Scale = plot.LogScale{}
			var ticks plot.ConstantTicks
			for _, g := range gsOf(rs, group) {
				ticks = append(ticks, plot.Tick{Value: float64(g), Label: strconv.Itoa(g)})
			}
			p.X.Tick.Marker = ticks
			if kind == "throughput" {
				p.Y.Label.Text = "million ops/s (all goroutines)"
				p.Y.Min = 0
			} else {
				// Tails span from tens of nanoseconds to milliseconds.
				p.Y.Label.Text = "p99 latency, ns (every 64th op sampled; log scale)"
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			}
			var lines []any
			top := 0.0
			for _, d := range designs {
				var xys plotter.XYs
				for _, g := range gsOf(rs, group) {
					r, ok := find(rs, group, d, g)
					if !ok {
						continue
					}
					y := 1e3 / r.NsPerOp
					if kind == "p99" {
						y = max(r.Extra["p99-ns"], 1) // log scale: no zero
					}
					xys = append(xys, plotter.XY{X: float64(g), Y: y})
					top = max(top, y)
				}
				if len(xys) > 0 {
					lines = append(lines, d, xys)
				}
			}
			if err := plotutil.AddLinePoints(p, lines...); err != nil {
				return files, fmt.Errorf("bench: plotting %s %s: %w", group, kind, err)
			}
			// Headroom above the highest point keeps the legend off the lines.
			if kind == "throughput" {
				p.Y.Max = top * (1 + 0.08*float64(len(designs)))
			} else {
				p.Y.Max = top * math.Pow(3, float64(len(designs)))
			}
			p.Legend.Top = true
			for _, ext := range []string{"png", "svg"} {
				f := filepath.Join(dir, plotName(group)+"_"+kind+"."+ext)
				if err := p.Save(7*vg.Inch, 4.5*vg.Inch, f); err != nil {
					return files, fmt.Errorf("bench: writing plot %s: %w", f, err)
				}
				files = append(files, f)
			}
		}
	}
	return files, nil
}
