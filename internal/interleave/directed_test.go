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
		fitsSchedule(t, d.Scenario, d.Schedule)
		if d.Kills == "" || d.Found == "" {
			t.Errorf("%s: a directed run says what it kills and how it was found", d.Scenario.Name)
		}
	}
}
