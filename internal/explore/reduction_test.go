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
	for _, s := range Catalogue() {
		cases = append(cases, tc{s.Name, func() program { p, _ := s.program(fault.None); return p }, 2})
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
		t.Logf("%-28s bound %d: %d outcomes; %d schedules with the reduction, %d without (%.0f%% pruned)",
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
