package interleave

import (
	"flag"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

// defaultRun turns TestDefaultExplore on: the oracle of `tollgate mutants
// --patch` and of the automatic campaign (internal/mutants/auto) runs it.
var defaultRun = flag.Bool("explore.default", false, "TestDefaultExplore: run the default explore run (DefaultRun) on the real code, as tollgate explore does with no flags (about 40 s)")

// defaultPrimitive narrows TestDefaultExplore to one table's scenarios.
var defaultPrimitive = flag.String("explore.primitive", "", "TestDefaultExplore: only the scenarios of this primitive (credits or tokenbucket), the ones a mutation of its code can change")

// TestDefaultExplore runs the default explore run (DefaultRun) on the
// code this test binary was built with, which is the real code unless an
// -overlay replaced it (a mutant's): the one definition that `tollgate
// explore`, the mutant matrix and the mutation oracles share. It stops at
// the first scenario that fails. Behind -explore.default, as it takes about
// 40 s on two cores.
func TestDefaultExplore(t *testing.T) {
	if !*defaultRun {
		t.Skip("the default explore run: run with -explore.default (tollgate explore runs it)")
	}
	ss, opt := DefaultRun(fault.None)
	switch p := Primitive(*defaultPrimitive); p {
	case "":
	case Credits, TokenBucket:
		ss, opt = DefaultRunOf(p)
	default:
		t.Fatalf("-explore.primitive %q: want credits or tokenbucket", *defaultPrimitive)
	}
	schedules := 0
	ByBound(ss, opt, func(s Scenario, _ Options, r Result) bool {
		schedules += r.Schedules
		if r.Err != nil || r.Failure != nil {
			if r.Failure != nil {
				t.Log(r.Failure.Report())
			}
			t.Fatalf("%s: %s", s.Name, r.Summary())
		}
		return true
	})
	t.Logf("%d scenarios, %d schedules: no violation", len(ss), schedules)
}
