package interleave

import (
	"flag"
	"sort"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestReductionLosesNothing: at the same bound, the sleep sets find every
// outcome (each thread's answers, the final table, the verdict) that the
// unreduced search finds, on the real code and on every mutant the explorer
// must see — among them mutants that write a word after another thread can
// reach it where the old, name-based dependence took it for private
// (cr-published-late, tb-frozen-next-late).
func TestReductionLosesNothing(t *testing.T) {
	if raceEnabled && !*long {
		// Its default form is a part of what CI's second lane runs with
		// -long and without -race (every mutant, the real code at bound 2);
		// under -race it would check only the explorer's switches again
		// (skipSweepUnderRace).
		t.Skip("under -race: CI's second lane runs it with -long without -race (.ci/run), and the other tests here check the explorer's switches under -race")
	}
	build.Need(t)
	if !*long {
		testlong.Skip(t) // -long asks for it, and more
	}
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
	for _, s := range Catalogue() {
		cases = append(cases, tc{s.Name, func() program { p, _ := s.program(fault.None); return p }, realBound(s)})
	}
	// Every mutant the explorer must see, against every scenario of its
	// primitive: a broken table's runs differ from the real one's (a mutant
	// may write a word the real code only reads, or write it after another
	// thread can reach it), and a reduction sound only for the real code's
	// runs would lose theirs.
	for _, f := range fault.All() {
		if !Sees(f) || !(*long || *full || privateWordMutant(f)) {
			continue
		}
		for _, s := range Catalogue() {
			if (s.Primitive == Credits) != f.Credits() {
				continue
			}
			cases = append(cases, tc{s.Name + " on " + f.String(), func() program { p, _ := s.program(f); return p }, mutantBound(s)})
		}
	}
	for _, c := range cases {
		if c.bound < 0 {
			continue
		}
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

var (
	long = flag.Bool("long", false, "explore the costly cases too (TestReductionLosesNothing: the real code at bound 2, every mutant against every scenario at bound 1)")
	full = flag.Bool("reduction-bound2", false, "TestReductionLosesNothing: every case at bound 2, the scenarios with a reclaim too (about ten minutes)")
)

// realBound is the bound at which TestReductionLosesNothing compares the
// searches of s on the real code: 1 by default (the package's tests stay
// under 30 s: the unreduced searches of the catalogue at bound 2 take about
// 25 s on 2 cores), 2 under -long (a CI section), except for the scenarios
// with a reclaim (a reclaim walks all 16 words of each node it visits, so
// their unreduced searches are the longest: 34 s for the ten of them at
// bound 2, against 1.4 s at bound 1) and under the race detector (which
// slows the explorer about tenfold); -reduction-bound2 compares every
// scenario at 2.
func realBound(s Scenario) int {
	switch {
	case *full:
		return 2
	case !*long || raceEnabled || s.reclaims():
		return 1
	}
	return 2
}

// mutantBound is the bound at which it compares a mutant's searches of s:
// by default (only the mutants of privateWordMutant) 1, and not at all (-1)
// for the scenarios with a reclaim or under the race detector; under -long
// (a CI section) every mutant at 1, the scenarios with a reclaim too; under
// -reduction-bound2 every mutant at 2 (11 min 39 s on 2 loaded cores, no
// outcome lost; spec/explore.md §5).
func mutantBound(s Scenario) int {
	switch {
	case *full:
		return 2
	case *long:
		return 1
	case raceEnabled || s.reclaims():
		return -1
	}
	return 1
}

// privateWordMutant reports whether f writes memory after another thread
// can reach it where an earlier dependence took the memory for private: a
// word the name-based dependence could not place, or a plain field stored
// inside the step of the atomic before it. These are the mutants compared
// by default (every other one under -long, which CI runs; the package's
// tests stay under 30 s).
func privateWordMutant(f fault.Fault) bool {
	return f == fault.Named("cr-published-late") || f == fault.Named("tb-frozen-next-late") || f == fault.Named("cr-box-filled-late")
}
