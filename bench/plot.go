package bench

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePlots draws, for every group, throughput (million operations per
// second) and p99 latency against goroutines, one line per design, each as
// PNG and SVG in dir. It returns the files written.
//
// A p99 point is the median over the rounds of each round's p99
// (p99Point), so one round disturbed by the machine cannot stretch the
// axis; P99Outliers lists the rounds left out that way. The p99 plot draws
// the cost of the clock reads alone as a dashed line: a point on or near it
// measures the timer.
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
				p.Y.Label.Text = "p99 latency, ns (log scale)"
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = plot.TickerFunc(logTicks125)
			}
			var lines []any
			top, bottom, clock := 0.0, math.Inf(1), 0.0
			for _, d := range designs {
				var xys plotter.XYs
				for _, g := range gsOf(rs, group) {
					r, ok := find(rs, group, d, g)
					if !ok {
						continue
					}
					y := 1e3 / r.NsPerOp
					if kind == "p99" {
						y = max(p99Point(r), 1) // log scale: no zero
						clock = max(clock, r.Extra["clock-ns"])
					}
					xys = append(xys, plotter.XY{X: float64(g), Y: y})
					top, bottom = max(top, y), min(bottom, y)
				}
				if len(xys) > 0 {
					lines = append(lines, d, xys)
				}
			}
			if err := plotutil.AddLinePoints(p, lines...); err != nil {
				return files, fmt.Errorf("bench: plotting %s %s: %w", group, kind, err)
			}
			// Headroom above the highest point keeps the legend (a row per
			// design at the top) off the lines.
			legend := 0.07 * float64(len(designs)+1)
			if kind == "throughput" {
				p.Y.Max = top / (1 - legend)
			} else {
				if clock > 0 {
					gs := gsOf(rs, group)
					l, err := plotter.NewLine(plotter.XYs{{X: float64(gs[0]), Y: clock}, {X: float64(gs[len(gs)-1]), Y: clock}})
					if err != nil {
						return files, fmt.Errorf("bench: plotting %s clock: %w", group, err)
					}
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
					l.Color = color.Gray{Y: 128}
					p.Add(l)
					p.Legend.Add(fmt.Sprintf("clock reads alone (%.0f ns)", clock), l)
					bottom = min(bottom, clock)
				}
				// On a log axis the legend takes a share of the decades.
				lo := bottom / 1.5
				decades := math.Log10(top/lo) + 0.1
				p.Y.Min = lo
				p.Y.Max = lo * math.Pow(10, decades/(1-legend))
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

// p99Point is the p99 a plot shows for r: the median of its rounds' p99,
// or the kept round's where the rounds were not recorded.
func p99Point(r Result) float64 {
	if len(r.P99Rounds) == 0 {
		return r.Extra["p99-ns"]
	}
	xs := slices.Clone(r.P99Rounds)
	slices.Sort(xs)
	return xs[(len(xs)-1)/2]
}

// outlierFactor is how far above the median of its rounds a round's p99
// must be for P99Outliers to name it.
const outlierFactor = 10

// P99Outliers describes the rounds whose p99 is more than outlierFactor
// times the median of their case's rounds — the points a plot of the
// median leaves out — one line each.
func P99Outliers(rs []Result) []string {
	var out []string
	for _, r := range rs {
		med := p99Point(r)
		for i, v := range r.P99Rounds {
			if med > 0 && v > outlierFactor*med {
				out = append(out, fmt.Sprintf("%s, %s, %s: round %d had a p99 of %.0f ns, %.0f× the median of the rounds' %.0f ns", r.Group, r.Design, goroutines(r.G), i+1, v, v/med, med))
			}
		}
	}
	return out
}

// logTicks125 labels a log axis at 1, 2 and 5 times the powers of ten in
// [lo, hi] (the decades alone leave an axis of less than one decade with
// a single label), with unlabelled minor ticks at the other integers.
func logTicks125(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for dec := math.Pow(10, math.Floor(math.Log10(lo))); dec <= hi; dec *= 10 {
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
