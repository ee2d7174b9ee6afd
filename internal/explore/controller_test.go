package explore

import (
	"strings"
	"testing"
)

func TestLostUpdateFound(t *testing.T) {
	res := exploreProgram(counterToy(2, 1, false), "lost-update", Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	f := res.Failure
	if f == nil {
		t.Fatalf("no failure: %s", res.Summary())
	}
	if f.Kind != KindInvariant || f.Bound != 1 || f.Preemptions != 1 {
		t.Fatalf("failure %s at bound %d with %d preemptions, want an invariant failure at bound 1 with 1", f.Kind, f.Bound, f.Preemptions)
	}
	t.Logf("%s\n%s", res.Summary(), f.Report())
}

func TestCASCounterExhaustive(t *testing.T) {
	for _, reduce := range []bool{true, false} {
		res := exploreProgram(counterToy(2, 2, true), "cas-counter", Options{Bound: 3, NoReduction: !reduce})
		if res.Err != nil || res.Failure != nil || !res.Exhaustive {
			t.Fatalf("reduce=%v: %s", reduce, res.Summary())
		}
		t.Logf("reduce=%v: %s (per bound %v, blocked %d)", reduce, res.Summary(), res.PerBound, res.Blocked)
		if !strings.HasPrefix(res.Summary(), "exhaustive:") {
			t.Fatal(res.Summary())
		}
	}
}
