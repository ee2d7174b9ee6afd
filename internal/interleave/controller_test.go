package interleave

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

func TestProgressViolation(t *testing.T) {
	res := exploreProgram(spinToy(), "spin", Options{StepCap: 200})
	if res.Failure == nil || res.Failure.Kind != KindProgress {
		t.Fatalf("got %s, want a progress violation", res.Summary())
	}
	if res.Failure.Bound != 0 {
		t.Errorf("found at bound %d, want 0 (thread 0 spins alone)", res.Failure.Bound)
	}
	if !strings.Contains(res.Failure.Trace, "run ended: no operation completed in 200 steps") {
		t.Errorf("trace does not say how the run ended:\n%s", res.Failure.Trace)
	}
}

func TestPanicReported(t *testing.T) {
	res := exploreProgram(panicToy(), "panics", Options{})
	f := res.Failure
	if f == nil || f.Kind != KindPanic {
		t.Fatalf("got %s, want a panic", res.Summary())
	}
	if !strings.Contains(f.Detail, "boom: thread 0 saw the flag") || f.Thread != 0 {
		t.Errorf("detail %q thread %d: want the panic value and thread 0", f.Detail, f.Thread)
	}
	if !strings.Contains(f.Stack, "toyBoom") {
		t.Errorf("stack does not show where it panicked:\n%s", f.Stack)
	}
	if f.Schedule != "1x2.0x2" {
		t.Errorf("schedule %s, want 1x2.0x2 (thread 1 stores, thread 0 loads)", f.Schedule)
	}
}

// TestLivenessGlueLosesNothing: the explored copies share impl/credits's
// Holder, whose liveness flag is not a switch point; the controller makes
// every exit an operation of its own, ordered against every sweep step.
// On a miniature of the race, that finds exactly the outcomes of the same
// program with the flag a switch point, with no bound.
func TestLivenessGlueLosesNothing(t *testing.T) {
	glued, _, err := outcomes(sweepToy(false), 50, true)
	if err != nil {
		t.Fatal(err)
	}
	hooked, _, err := outcomes(sweepToy(true), 50, false)
	if err != nil {
		t.Fatal(err)
	}
	for o := range hooked {
		if !glued[o] {
			t.Errorf("with the flag glued, the outcome %q is lost", o)
		}
	}
	for o := range glued {
		if !hooked[o] {
			t.Errorf("with the flag glued, the outcome %q appears, which is impossible", o)
		}
	}
	t.Logf("%d outcomes either way", len(hooked))
	if len(hooked) < 3 {
		t.Errorf("only %d outcomes: the toy does not race", len(hooked))
	}
}
