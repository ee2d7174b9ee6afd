package interleave

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

var measure = flag.Bool("explore.measure", false, "TestMeasureRaceDetector: what the race detector costs and finds, and whether plain stores still need to be switch points (spec/explore.md §5; several minutes)")

// TestMeasureRaceDetector prints, for every catalogue scenario on the real
// code, the schedules and the time of three configurations: the detector
// off with plain stores as switch points (the explorer before the
// detector), the detector on (today), and the detector on with plain stores
// inside the step before them; then, for every in-memory mutant, which
// configurations kill it with the catalogue of its primitive (the mutants
// the explore layer must kill). It asserts
// nothing about time (figures vary with the machine); it fails if the
// detector on loses a kill that it had off.
func TestMeasureRaceDetector(t *testing.T) {
	build.Need(t)
	if !*measure {
		t.Skip("a measurement: go test ./internal/interleave -run TestMeasureRaceDetector -explore.measure -v")
	}
	configs := []struct {
		name string
		opt  Options
	}{
		{"no detector, stores switch", Options{NoRaces: true}},
		{"detector, stores switch", Options{}},
		{"detector, stores inline", Options{InlinePlainStores: true}},
	}
	t.Logf("%-32s %s", "scenario", "schedules and time per configuration")
	var tot [3]time.Duration
	var sch [3]int
	for _, s := range Catalogue() {
		line := fmt.Sprintf("%-32s", s.Name)
		for i, c := range configs {
			start := time.Now()
			r := Explore(s, c.opt)
			d := time.Since(start)
			if r.Failure != nil || r.Err != nil {
				t.Errorf("%s (%s): %s", s.Name, c.name, r.Summary())
			}
			tot[i] += d
			sch[i] += r.Schedules
			line += fmt.Sprintf(" %7d %9v |", r.Schedules, d.Round(time.Millisecond))
		}
		t.Log(line)
	}
	for i, c := range configs {
		t.Logf("total %-28s %8d schedules %v (%.1f µs a schedule)", c.name, sch[i], tot[i].Round(time.Millisecond), float64(tot[i].Microseconds())/float64(max(sch[i], 1)))
	}
	for _, f := range fault.All() {
		if !f.CaughtBy("explore") {
			continue
		}
		var kills [3]string
		for i, c := range configs {
			opt := c.opt
			opt.Fault = f
			for _, s := range Catalogue() {
				if (s.Primitive == Credits) != f.Credits() {
					continue
				}
				if r := Explore(s, opt); r.Failure != nil {
					kills[i] = fmt.Sprintf("%s (%s)", s.Name, r.Failure.Kind)
					break
				}
			}
		}
		t.Logf("%-28s | %-40s | %-40s | %s", f, kills[0], kills[1], kills[2])
		if kills[0] != "" && kills[1] == "" {
			t.Errorf("%s: killed with the detector off, not with it on", f)
		}
	}
}
