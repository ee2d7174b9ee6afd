package interleave

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestHuntRerun: a kill carries its case, which the mutant fails again and
// the real table passes (tollgate mutants judges every kill by that).
func TestHuntRerun(t *testing.T) {
	build.Need(t)
	// Hunt writes the failure's visualization under
	// $TMPDIR/tollgate-explore for a person to open; the test's go where
	// t.TempDir removes them.
	t.Setenv("TMPDIR", t.TempDir())
	out := Hunt(fault.Named("cr-finish-blind"), time.Minute, 0)
	if !out.Killed || out.Rerun == nil {
		t.Fatalf("cr-finish-blind: killed %v, rerun %v: %s", out.Killed, out.Rerun != nil, out.Detail)
	}
	if again := out.Rerun(fault.Named("cr-finish-blind")); !again.Killed {
		t.Errorf("the kill's case did not fail the mutant again: %s", again.Detail)
	}
	if real := out.Rerun(fault.None); real.Killed {
		t.Errorf("the kill's case fails the real table: %s", real.Detail)
	}
}

// TestHuntTakesABoundAtATime: Hunt explores every scenario of the plan
// within 0 preemptions, then every one within 1 without its pass at 0,
// and so on; a kill in a pass ends the hunt there.
func TestHuntTakesABoundAtATime(t *testing.T) {
	f := fault.Named("tb-peek-torn")
	ss, opt := HuntPlan(f)
	if len(ss) < 3 || opt.bound() < 2 {
		t.Fatalf("the plan of %s has %d scenarios at bound %d; the test wants 3 at bound 2", f, len(ss), opt.bound())
	}
	killer := ss[len(ss)/2].Name
	type call struct {
		scenario    string
		bound, from int
	}
	var calls []call
	defer func(e func(Scenario, Options) Result) { passExplore = e }(passExplore)
	passExplore = func(s Scenario, o Options) Result {
		calls = append(calls, call{s.Name, o.bound(), o.FromBound})
		r := Result{Schedules: 1}
		if s.Name == killer && o.bound() == 1 {
			r.Failure = &Failure{Invariant: "T11", Schedule: "0x1.1x1", Preemptions: 1}
		}
		return r
	}
	out := Hunt(f, 0, 0)
	if !out.Killed || !strings.Contains(out.Replay, "-scenario "+killer+" ") {
		t.Fatalf("killed %v, replay %q; want the kill in %s", out.Killed, out.Replay, killer)
	}
	var want []call
	for _, s := range ss {
		want = append(want, call{s.Name, 0, 0})
	}
	for _, s := range ss {
		want = append(want, call{s.Name, 1, 1})
		if s.Name == killer {
			break
		}
	}
	for i := range max(len(calls), len(want)) {
		if i >= len(calls) || i >= len(want) || calls[i] != want[i] {
			got, exp := "nothing", "nothing"
			if i < len(calls) {
				got = fmt.Sprint(calls[i])
			}
			if i < len(want) {
				exp = fmt.Sprint(want[i])
			}
			t.Fatalf("Hunt's exploration %d of %d was (scenario, bound, from) %s, want %s (%d scenarios)", i+1, len(calls), got, exp, len(ss))
		}
	}
}

// TestFromBound: an exploration that leaves out the passes below its
// bound runs the same pass at the bound, as exhaustively.
func TestFromBound(t *testing.T) {
	ss, opt := DefaultRunOf(Credits)
	s := ss[0]
	full := Explore(s, opt)
	opt.FromBound = opt.bound()
	last := Explore(s, opt)
	b := opt.bound()
	if !full.Exhaustive || !last.Exhaustive || len(last.PerBound) != b+1 || last.PerBound[b] != full.PerBound[b] || slices.ContainsFunc(last.PerBound[:b], func(n int) bool { return n != 0 }) {
		t.Fatalf("%s: every bound %v (exhaustive %v), from bound %d %v (exhaustive %v)", s.Name, full.PerBound, full.Exhaustive, b, last.PerBound, last.Exhaustive)
	}
}
