package limiters

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Short is the library name used in tables.
func Short(module string) string {
	switch module {
	case "golang.org/x/time":
		return "x/time/rate"
	case "go.uber.org/ratelimit":
		return "uber ratelimit"
	case "github.com/go-redis/redis_rate/v10":
		return "redis_rate/v10"
	}
	return module
}

// Table writes the verdict table, one row per (library, version, workload,
// property), as Markdown.
func Table(w io.Writer, rs []Result) {
	fmt.Fprintln(w, "| library | version | workload | property | seen / allowed | verdict | note |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", Short(r.Library), r.Version, r.Workload,
			PropName(r.Prop), figures(r), verdictCell(r), Classify(r))
	}
}

func figures(r Result) string {
	switch {
	case r.Verdict == Failed || r.Prop == PropLinearizes || r.Verdict == NA:
		return "—"
	case r.Prop == PropRefusal && r.Verdict == Holds:
		return "no spurious refusal"
	case r.Prop == PropRefusal:
		return fmt.Sprintf("ideal bucket held %s at a refusal", g(r.Seen))
	}
	return fmt.Sprintf("%s / %s", g(r.Seen), g(math.Floor(r.Allowed*1e6)/1e6))
}

func verdictCell(r Result) string {
	switch r.Verdict {
	case Violated:
		return "**VIOLATED**"
	case Failed:
		return "error: " + strings.ReplaceAll(r.Detail, "|", "\\|")
	}
	return r.Verdict
}

// Summary writes, per (library, workload, property), the versions where the
// verdict was each of the verdicts seen, as Markdown.
func Summary(w io.Writer, rs []Result) {
	type key struct{ lib, wl, prop string }
	var keys []key
	by := map[key]map[string][]string{}
	notes := map[key]string{}
	for _, r := range rs {
		k := key{r.Library, r.Workload, r.Prop}
		if by[k] == nil {
			by[k] = map[string][]string{}
			keys = append(keys, k)
		}
		v := r.Verdict
		if v == Failed {
			v = "error (" + firstLine(r.Detail) + ")"
		}
		by[k][v] = append(by[k][v], r.Version)
		if n := Classify(r); n != "" {
			notes[k] = n
		}
	}
	order := map[string][]string{}
	for _, r := range rs {
		if !slices.Contains(order[r.Library], r.Version) {
			order[r.Library] = append(order[r.Library], r.Version)
		}
	}
	for _, vs := range order {
		sort.Slice(vs, func(i, j int) bool { return CompareVersions(vs[i], vs[j]) < 0 })
	}
	libs := make([]string, 0, len(order))
	for l := range order {
		libs = append(libs, l)
	}
	sort.Strings(libs)
	for _, l := range libs {
		fmt.Fprintf(w, "Versions run of %s: %s.\n\n", Short(l), strings.Join(order[l], ", "))
	}
	fmt.Fprintln(w, "| library | workload | property | verdict by version | note |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range keys {
		var parts []string
		verdicts := make([]string, 0, len(by[k]))
		for v := range by[k] {
			verdicts = append(verdicts, v)
		}
		sort.Strings(verdicts)
		for _, v := range verdicts {
			cell := v
			if v == Violated {
				cell = "**VIOLATED**"
			}
			parts = append(parts, fmt.Sprintf("%s: %s", cell, Ranges(by[k][v], order[k.lib])))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", Short(k.lib), k.wl, PropName(k.prop), strings.Join(parts, "; "), notes[k])
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// Ranges renders vs as runs of consecutive versions of order (all the
// versions run of the library, oldest first): "v0.1.0–v0.6.0, v0.9.0";
// a dash joins three or more versions run, all of them in vs.
func Ranges(vs, order []string) string {
	in := map[string]bool{}
	for _, v := range vs {
		in[v] = true
	}
	var parts []string
	for i := 0; i < len(order); i++ {
		if !in[order[i]] {
			continue
		}
		j := i
		for j+1 < len(order) && in[order[j+1]] {
			j++
		}
		switch j - i {
		case 0:
			parts = append(parts, order[i])
		case 1:
			parts = append(parts, order[i], order[j])
		default:
			parts = append(parts, order[i]+"–"+order[j])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// Plot draws a counterexample as a PNG: for L1, the cumulative cost
// admitted against the readings, with the bound line from the worst
// window's start; for L3 the same with returns; for L2 the ideal bucket's
// level and the refused calls.
func Plot(c Counterexample, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s %s, %s: %s", Short(c.Library), c.Version, c.Workload, PropName(c.Prop))
	p.X.Label.Text = "clock reading, ms after the origin"
	evs := c.Events
	pr := c.Params
	switch c.Prop {
	case PropBound, PropPacer:
		type pt struct {
			t    int64
			cost float64
		}
		var pts []pt
		for _, e := range evs {
			switch {
			case c.Prop == PropPacer:
				pts = append(pts, pt{e.RetNs, 1})
			case e.OK:
				pts = append(pts, pt{e.LoNs, e.Cost})
			}
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].t < pts[j].t })
		var xy plotter.XYs
		sum, before := 0.0, 0.0
		for _, q := range pts {
			if q.t < c.Finding.FromNs {
				before += q.cost
			}
			sum += q.cost
			xy = append(xy, plotter.XY{X: float64(q.t) / 1e6, Y: sum})
		}
		if len(xy) == 0 {
			return fmt.Errorf("limiters: %s: nothing to draw", path)
		}
		what := "admitted (cumulative cost)"
		base := pr.Burst
		if c.Prop == PropPacer {
			what, base = "returned (cumulative Take calls)", float64(pr.Slack)+1
			p.X.Label.Text = "time Take returned, ms after the origin"
		}
		p.Y.Label.Text = what
		sc, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		p.Add(sc)
		p.Legend.Add(what, sc)
		// The bound line runs from the worst window's start past its end,
		// over at least a twentieth of the plot, so that it shows even when
		// the window is a few microseconds wide.
		t0 := float64(c.Finding.FromNs) / 1e6
		t1 := math.Max(float64(c.Finding.ToNs)/1e6, xy[len(xy)-1].X)
		t1 = math.Max(t1, t0+(xy[len(xy)-1].X-xy[0].X)/20)
		line := plotter.XYs{{X: t0, Y: before + base}, {X: t1, Y: before + base + pr.Rate*(t1-t0)/1e3}}
		l, err := plotter.NewLine(line)
		if err != nil {
			return err
		}
		l.Color = plotColor(200, 0, 0)
		p.Add(l)
		p.Legend.Add("bound from the worst window's start", l)
	case PropRefusal:
		p.Y.Label.Text = "tokens"
		var level, refused plotter.XYs
		lv := pr.Burst
		newest := int64(math.MinInt64)
		for _, e := range evs {
			if newest != math.MinInt64 && e.LoNs > newest && pr.Rate > 0 && !math.IsInf(pr.Rate, 1) {
				lv = math.Min(pr.Burst, lv+pr.Rate*float64(e.LoNs-newest)/1e9)
			}
			newest = max(newest, e.LoNs)
			if e.OK {
				lv -= e.Cost
			} else {
				refused = append(refused, plotter.XY{X: float64(e.LoNs) / 1e6, Y: e.Cost})
			}
			level = append(level, plotter.XY{X: float64(e.LoNs) / 1e6, Y: lv})
		}
		l, err := plotter.NewLine(level)
		if err != nil {
			return err
		}
		p.Add(l)
		p.Legend.Add("ideal bucket's level", l)
		if len(refused) > 0 {
			sc, err := plotter.NewScatter(refused)
			if err != nil {
				return err
			}
			sc.Color = plotColor(200, 0, 0)
			p.Add(sc)
			p.Legend.Add("refused call (its cost)", sc)
		}
	default:
		return fmt.Errorf("limiters: no plot for property %s", c.Prop)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

func plotColor(r, g, b uint8) color.Color { return color.RGBA{R: r, G: g, B: b, A: 255} }

// DescribeSteps renders a counterexample's steps with their answers, one
// per line (at most limit lines, then how many are left out).
func DescribeSteps(c Counterexample, limit int) string {
	byStep := map[int]Event{}
	for _, e := range c.Events {
		byStep[e.Step] = e
	}
	var b strings.Builder
	for i, s := range c.Steps {
		if i == limit {
			fmt.Fprintf(&b, "    … %d more steps in the file\n", len(c.Steps)-limit)
			break
		}
		e, ok := byStep[i]
		switch {
		case s.Op == "idle":
			fmt.Fprintf(&b, "    %3d. idle %s\n", i+1, fmtNs(s.Idle))
		case !ok:
			fmt.Fprintf(&b, "    %3d. call cost %s\n", i+1, g(s.Cost))
		case c.Prop == PropPacer:
			fmt.Fprintf(&b, "    %3d. Take() at %s → returned %s\n", i+1, fmtNs(e.LoNs), fmtNs(e.RetNs))
		default:
			ans := "refused"
			if e.OK {
				ans = "allowed"
			}
			fmt.Fprintf(&b, "    %3d. call cost %s at %s → %s\n", i+1, g(s.Cost), fmtNs(e.LoNs), ans)
		}
	}
	return b.String()
}
