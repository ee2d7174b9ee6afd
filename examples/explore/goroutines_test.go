package counter

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
)

func relaySpec(early bool) explore.Spec[*Relay, string, int, int] {
	return explore.Spec[*Relay, string, int, int]{
		New:     func() *Relay { return &Relay{early: early} },
		Threads: [][]string{{"run"}},
		Call:    func(r *Relay, _ string) int { return r.Run(2) },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 4, n + 4 },
	}
}

// mustRace explores spec, wants a data race naming every line of file
// holding one of sites, and replays it.
func mustRace[T, In, Out, S any](t *testing.T, spec explore.Spec[T, In, Out, S], file string, sites ...string) {
	t.Helper()
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || !strings.Contains(r.Failure.Kind, "race") {
		t.Fatalf("want a data race, got %s", r.Summary())
	}
	f := r.Failure
	for _, s := range sites {
		if at := lineOf(t, file, s); !strings.Contains(f.Detail, at) {
			t.Errorf("the race does not name %s (%s):\n%s", at, s, f.Report)
		}
	}
	_, again, err := explore.Replay(spec, f.Schedule, "")
	if err != nil || again == nil || noAddr(again.Detail) != noAddr(f.Detail) {
		t.Errorf("replay of %s: %v, %v; want the same race again", f.Schedule, again, err)
	}
	t.Logf("found, as it should be:\n%s", f.Report)
}

// noAddr is s without its addresses, which change from run to run.
func noAddr(s string) string { return regexp.MustCompile(`0x[0-9a-f]+`).ReplaceAllString(s, "0x") }

// TestRelayHandoff: a counter incremented by a goroutine and its caller
// in turns, handed over an unbuffered channel, passes every schedule.
func TestRelayHandoff(t *testing.T) {
	mustBeRewritten(t)
	r := explore.Check(t, relaySpec(false))
	if !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}

// TestRelayEarlyRaces: the worker's increment before it has the turn
// races with the caller's, and the report names both lines.
func TestRelayEarlyRaces(t *testing.T) {
	mustBeRewritten(t)
	spec := relaySpec(true)
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	mustRace(t, spec, "goroutines.go", "r.n++ // the worker's increment, without the turn", "r.n++ // the caller's increment")
}

func visitsSpec[V interface{ Both() int }](v func() V) explore.Spec[V, string, int, int] {
	return explore.Spec[V, string, int, int]{
		New:     v,
		Threads: [][]string{{"both"}},
		Call:    func(v V, _ string) int { return v.Both() },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 2, n + 2 },
	}
}

// TestVisitsRaces: a worker started with go increments a counter its
// caller increments too, unsynchronized: a data race, both lines named.
func TestVisitsRaces(t *testing.T) {
	mustBeRewritten(t)
	spec := visitsSpec(func() *Visits { return new(Visits) })
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	mustRace(t, spec, "goroutines.go", "v.n++ // the worker's visit", "v.n++ // the caller's visit")
}

// TestLockedVisits: the same under a mutex passes every schedule.
func TestLockedVisits(t *testing.T) {
	mustBeRewritten(t)
	if r := explore.Check(t, visitsSpec(func() *LockedVisits { return new(LockedVisits) })); !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}

func firstSpec(buffered bool) explore.Spec[First, string, int, struct{}] {
	return explore.Spec[First, string, int, struct{}]{
		New:     func() First { return First{Buffered: buffered} },
		Threads: [][]string{{"ask"}},
		Call: func(f First, _ string) int {
			return f.Ask(func() int { return 1 }, func() int { return 2 })
		},
		Step:  func(s struct{}, _ time.Time, _ string) (struct{}, int) { return s, 1 },
		Equal: func(want, got int) bool { return got == 1 || got == 2 },
	}
}

// TestFirstLeaks: the slower source's goroutine waits forever to send
// on the unbuffered channel: a leak, naming its go statement.
func TestFirstLeaks(t *testing.T) {
	mustBeRewritten(t)
	spec := firstSpec(false)
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "leak" {
		t.Fatalf("want a goroutine leak, got %s", r.Summary())
	}
	first, second := lineOf(t, "goroutines.go", "// the first source"), lineOf(t, "goroutines.go", "// the second source")
	if !strings.Contains(r.Failure.Detail, first) && !strings.Contains(r.Failure.Detail, second) {
		t.Errorf("the leak does not name a source's go statement (%s or %s):\n%s", first, second, r.Failure.Report)
	}
	t.Logf("found, as it should be:\n%s", r.Failure.Report)
	if r := explore.Check(t, firstSpec(true)); !r.Exhaustive {
		t.Fatalf("buffered: want an exhaustive search: %s", r.Summary())
	}
}

func pickSpec(want func(string) bool) explore.Spec[struct{}, string, string, struct{}] {
	return explore.Spec[struct{}, string, string, struct{}]{
		New:     func() struct{} { return struct{}{} },
		Threads: [][]string{{"pick"}},
		Call:    func(struct{}, string) string { return Pick() },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, string) { return s, "a" },
		Equal:   func(_, got string) bool { return want(got) },
	}
}

// TestPickExploresBoth: a select with two ready cases is a choice the
// search explores: a model that allows either outcome sees both runs; one
// that forbids "b" fails, with a schedule that names the case taken and
// replays to the same failure.
func TestPickExploresBoth(t *testing.T) {
	either := pickSpec(func(s string) bool { return s == "a" || s == "b" })
	if r := explore.Check(t, either); !r.Exhaustive || r.Schedules != 2 {
		t.Fatalf("want both cases explored, 2 schedules: %s", r.Summary())
	}
	onlyA := pickSpec(func(s string) bool { return s == "a" })
	if explore.Replaying() {
		explore.Check(t, onlyA)
		return
	}
	r := explore.Explore(onlyA, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "linearizability" {
		t.Fatalf("want the model that forbids b to fail: %s", r.Summary())
	}
	if !strings.Contains(r.Failure.Schedule, "s1") || !strings.Contains(r.Failure.Detail, "→ b") {
		t.Errorf("want a schedule that takes case 1 and a history with b:\n%s", r.Failure.Report)
	}
	_, again, err := explore.Replay(onlyA, r.Failure.Schedule, "")
	if err != nil || again == nil || noAddr(again.Detail) != noAddr(r.Failure.Detail) {
		t.Errorf("replay of %s: %v, %v; want the same failure", r.Failure.Schedule, again, err)
	}
	t.Logf("found, as it should be:\n%s", r.Failure.Report)
}

// TestNotifyAfterStopPanics: a Notify that runs after Stop sends on a
// closed channel, which panics as Go's does: a failure of that run.
func TestNotifyAfterStopPanics(t *testing.T) {
	mustBeRewritten(t)
	spec := explore.Spec[*Notifier, string, int, int]{
		New:     func() *Notifier { return NewNotifier(2) },
		Threads: [][]string{{"notify"}, {"stop"}},
		Call: func(n *Notifier, op string) int {
			if op == "stop" {
				return n.Stop()
			}
			n.Notify(1)
			return 0
		},
		Step: func(sent int, _ time.Time, op string) (int, int) {
			if op == "stop" {
				return sent, sent
			}
			return sent + 1, 0
		},
	}
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "panic" || !strings.Contains(r.Failure.Detail, "send on closed channel") {
		t.Fatalf("want the send on the closed channel to panic, got %s", r.Summary())
	}
	_, again, err := explore.Replay(spec, r.Failure.Schedule, "")
	if err != nil || again == nil || !strings.Contains(again.Detail, "send on closed channel") {
		t.Errorf("replay of %s: %v, %v; want the panic again", r.Failure.Schedule, again, err)
	}
	t.Logf("found, as it should be:\n%s", r.Failure.Report)
}
