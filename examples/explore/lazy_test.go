package counter

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
)

func lazySpec[L interface{ Get() int }](l func() L) explore.Spec[L, string, int, struct{}] {
	return explore.Spec[L, string, int, struct{}]{
		New:     l,
		Threads: [][]string{{"get"}, {"get"}},
		Call:    func(l L, _ string) int { return l.Get() },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, int) { return s, 42 },
	}
}

// TestLazy: storing the value before the atomic flag passes every
// schedule, with no data race.
func TestLazy(t *testing.T) { explore.Check(t, lazySpec(func() *Lazy { return new(Lazy) })) }

// TestLazyFlagFirstFails: storing the flag first lets a second caller, on
// the fast path, read the value that the first stores after the flag: the
// flag's atomic store orders nothing after it, so even the schedule
// without a preemption (the first caller done, then the second) has the
// value's store and load unordered, a data race that names both lines.
// (Before race detection, plain stores were switch points and it took one
// preemption between the flag and the value to show a wrong answer.)
func TestLazyFlagFirstFails(t *testing.T) {
	mustBeRewritten(t)
	spec := lazySpec(func() *Lazy { return &Lazy{EarlyFlag: true} })
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "data race" || r.Failure.Preemptions != 0 {
		t.Fatalf("want the flag stored first found as a data race without a preemption: %s", r.Summary())
	}
	store, load := lineOf(t, "lazy.go", "			l.v = 42"), lineOf(t, "lazy.go", "		return l.v")
	if !strings.Contains(r.Failure.Detail, store) || !strings.Contains(r.Failure.Detail, load) {
		t.Errorf("the race does not name %s and %s:\n%s", store, load, r.Failure.Report)
	}
	t.Logf("found:\n%s", r.Failure.Report)
}

// TestPlainLazyRaceFails: double-checked locking with a plain flag is a
// data race between the fast path's read of the flag and its store under
// the lock: found in the first schedule, naming both lines.
func TestPlainLazyRaceFails(t *testing.T) {
	mustBeRewritten(t)
	spec := lazySpec(func() *PlainLazy { return new(PlainLazy) })
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "data race" {
		t.Fatalf("want a data race: %s", r.Summary())
	}
	read, write := lineOf(t, "lazy.go", "\tif l.done {"), lineOf(t, "lazy.go", "\t\tl.done = true")
	if !strings.Contains(r.Failure.Detail, read) || !strings.Contains(r.Failure.Detail, write) {
		t.Errorf("the race does not name %s and %s:\n%s", read, write, r.Failure.Report)
	}
}
