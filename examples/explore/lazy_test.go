package counter

import (
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

func lazySpec(early bool) explore.Spec[*Lazy, string, int, struct{}] {
	return explore.Spec[*Lazy, string, int, struct{}]{
		New:     func() *Lazy { return &Lazy{EarlyFlag: early} },
		Threads: [][]string{{"get"}, {"get"}},
		Call:    func(l *Lazy, _ string) int { return l.Get() },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, int) { return s, 42 },
	}
}

// TestLazy: storing the value before the flag passes every schedule.
func TestLazy(t *testing.T) { explore.Check(t, lazySpec(false)) }

// TestLazyFlagFirstFails: storing the flag first lets a second caller, on
// the fast path, return the value before it is stored. Plain stores to
// shared memory are switch points in rewritten code, so one preemption
// between the two stores shows it.
func TestLazyFlagFirstFails(t *testing.T) {
	if !rt.IsRewritten("example.com/explore") {
		t.Fatal("example.com/explore is not rewritten: run tollgate explore -pkg .")
	}
	r := explore.Explore(lazySpec(true), explore.Options{}, "")
	if r.Failure == nil || r.Failure.Preemptions != 1 {
		t.Fatalf("want the flag stored first found at one preemption: %s", r.Summary())
	}
	t.Logf("found, at one preemption:\n%s", r.Failure.Report)
}
