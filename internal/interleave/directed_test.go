package interleave

import (
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

// TestDirectedRealCode replays every directed run on the real tables (or,
// in a mutation campaign, on the mutant compiled in): each must pass.
func TestDirectedRealCode(t *testing.T) {
	for _, d := range Directed() {
		rep, err := Replay(d.Scenario, fault.None, d.Schedule)
		if err != nil {
			t.Fatalf("%s: %v", d.Scenario.Name, err)
		}
		if f := rep.Failure; f != nil {
			t.Errorf("directed run %s -replay %s (made for %s) fails on the real code:\n%s", d.Scenario.Name, d.Schedule, d.Kills, f.Report())
		}
	}
}

// TestDirectedFits: the real code follows every directed schedule up to its
// last segment (a change to the code that moves a step makes the schedule
// stale: it would drive some other interleaving), and each directed
// scenario is named once, apart from the catalogue's own.
func TestDirectedFits(t *testing.T) {
	names := map[string]bool{}
	for _, d := range Directed() {
		if _, ok := catalogued(d.Scenario.Name); !ok {
			if names[d.Scenario.Name] {
				t.Errorf("directed scenario %s is named twice", d.Scenario.Name)
			}
			names[d.Scenario.Name] = true
		}
		want, err := ParseSchedule(d.Schedule)
		if err != nil {
			t.Fatalf("%s: %v", d.Scenario.Name, err)
		}
		rep, err := Replay(d.Scenario, fault.None, d.Schedule)
		if err != nil {
			t.Fatalf("%s: %v", d.Scenario.Name, err)
		}
		got, _ := ParseSchedule(rep.Schedule)
		last := len(want) - 1
		for last > 0 && want[last-1] == want[len(want)-1] {
			last--
		}
		for i := 0; i < last; i++ {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("%s: the real code left schedule %s at step %d: it ran %s\n%s", d.Scenario.Name, d.Schedule, i+1, rep.Schedule, rep.Trace)
				break
			}
		}
		if d.Kills == "" || d.Found == "" {
			t.Errorf("%s: a directed run says what it kills and how it was found", d.Scenario.Name)
		}
	}
}
