package explore

import (
	"sort"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

// TestReductionLosesNothing: at the same bound, the sleep sets find every
// outcome (each thread's answers, the final table, the verdict) that the
// unreduced search finds.
func TestReductionLosesNothing(t *testing.T) {
	type tc struct {
		name  string
		p     func() program
		bound int
	}
	var cases []tc
	for _, toy := range []func() *toy{
		func() *toy { return counterToy(2, 2, false) },
		func() *toy { return counterToy(2, 2, true) },
		func() *toy { return counterToy(3, 1, true) },
	} {
		cases = append(cases, tc{toy().name, func() program { return toy() }, 3})
	}
	bound := 2
	if raceEnabled {
		bound = 1 // the unreduced search at bound 2 takes 40 s under the race detector
	}
	for _, s := range Catalogue() {
		b := bound
		if s.reclaims() {
			// A reclaim walks all 16 words of each node it visits, so its
			// scenarios' unreduced searches are the longest: at bound 2
			// they took 80 s here (the reduced ones under 9 s), so they are
			// compared at bound 1.
			b = 1
		}
		cases = append(cases, tc{s.Name, func() program { p, _ := s.program(fault.None); return p }, b})
	}
	// Mutants: the failing runs (their verdicts are part of the outcome)
	// are found alike too.
	for _, m := range []struct {
		scenario string
		f        fault.Fault
	}{
		{"cr-exhausted-behind-scan", fault.CrOneScan},
		{"cr-last-slot", fault.CrReserveNoCAS},
		{"cr-take-vs-finish", fault.CrFinishBlind},
		{"cr-enqueue-vs-sweep", fault.CrTwoWriteEnqueue},
		{"tb-stale-clocks", fault.TBPlainStore},
	} {
		s, _ := Lookup(m.scenario)
		cases = append(cases, tc{m.scenario + " on " + m.f.String(), func() program { p, _ := s.program(m.f); return p }, bound})
	}
	for _, c := range cases {
		on, nOn, err := outcomes(c.p(), c.bound, true)
		if err != nil {
			t.Fatal(err)
		}
		off, nOff, err := outcomes(c.p(), c.bound, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-50s bound %d: %d outcomes; %d schedules with the reduction, %d without (%.0f%% pruned)",
			c.name, c.bound, len(off), nOn, nOff, 100*(1-float64(nOn)/float64(nOff)))
		var lost, extra []string
		for o := range off {
			if !on[o] {
				lost = append(lost, o)
			}
		}
		for o := range on {
			if !off[o] {
				extra = append(extra, o)
			}
		}
		sort.Strings(lost)
		sort.Strings(extra)
		for _, o := range lost {
			t.Errorf("%s: the reduction lost outcome %s", c.name, o)
		}
		for _, o := range extra {
			t.Errorf("%s: the reduction found an outcome the full search did not: %s", c.name, o)
		}
	}
}
