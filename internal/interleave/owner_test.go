package interleave

import (
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

// TestOwnerScenarios explores the Owner's scenarios on the real code,
// exhaustively within the default bound: C15 holds, no data race, no
// leak. (A plain store of running in begin or serve, a Call that answers
// ErrOwnerGone with its reply waiting, or running set on serve's
// goroutine fails one of them: spec/explore.md §11.)
func TestOwnerScenarios(t *testing.T) {
	ss := OwnerScenarios()
	if len(ss) == 0 {
		t.Fatal("no Owner scenario")
	}
	for _, s := range ss {
		r := Explore(s, Options{Strategy: DFS, Bound: DefaultBound, Fault: fault.None})
		if r.Err != nil || r.Failure != nil {
			if r.Failure != nil {
				t.Log(r.Failure.Report())
			}
			t.Fatalf("%s: %s", s.Name, r.Summary())
		}
		if !r.Exhaustive {
			t.Errorf("%s: not exhaustive at bound %d (%d schedules)", s.Name, DefaultBound, r.Schedules)
		}
	}
}
