package counter

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

// incSpec has two threads call Inc once each on a counter; the model
// counts.
func incSpec[C interface{ Inc() int }](c func() C) explore.Spec[C, string, int, int] {
	return explore.Spec[C, string, int, int]{
		New:     c,
		Threads: [][]string{{"inc"}, {"inc"}},
		Call:    func(c C, _ string) int { return c.Inc() },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 1, n + 1 },
	}
}

func mustBeRewritten(t *testing.T) {
	t.Helper()
	if !rt.IsRewritten("example.com/explore") {
		t.Fatal("example.com/explore is not rewritten: run tollgate explore -pkg .")
	}
}

// lineOf is the file:line of the first line of file holding text.
func lineOf(t *testing.T, file, text string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, text) {
			return file + ":" + strconv.Itoa(i+1)
		}
	}
	t.Fatalf("%s has no line with %q", file, text)
	return ""
}

// TestCounterRaceFails: c.n++ from two threads is a data race: the
// explorer reports it naming the line for both threads' accesses, and
// the schedule it prints replays it. (Without race detection the only
// switch points are the plain stores, the count is read in the step that
// stores it, and every schedule passes: "exhaustive, no violation".)
func TestCounterRaceFails(t *testing.T) {
	mustBeRewritten(t)
	spec := incSpec(func() *Counter { return new(Counter) })
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("c.n++ from two threads passed: %s", r.Summary())
	}
	f := r.Failure
	if !strings.Contains(f.Kind, "race") {
		t.Fatalf("want a data race, got %s:\n%s", f.Kind, f.Report)
	}
	site := lineOf(t, "racy.go", "c.n++; return c.n")
	if n := strings.Count(f.Report, site); n < 2 {
		t.Errorf("the report names %s %d times, want both threads' accesses:\n%s", site, n, f.Report)
	}
	_, again, err := explore.Replay(spec, f.Schedule, "")
	if err != nil || again == nil || again.Kind != f.Kind {
		t.Errorf("replay of %s: %v, %v; want the %s again", f.Schedule, again, err, f.Kind)
	}
	t.Logf("found, as it should be:\n%s", f.Report)
}

// TestLockedCounter: the same count under a mutex passes every schedule.
func TestLockedCounter(t *testing.T) {
	explore.Check(t, incSpec(func() *LockedCounter { return new(LockedCounter) }))
}

// TestHitsLostUpdateFails: a sync.Map's Load then Store of one key from
// two threads loses an update; every operation of sync.Map is a switch
// point, so one preemption between the two shows it to the model.
func TestHitsLostUpdateFails(t *testing.T) {
	mustBeRewritten(t)
	spec := explore.Spec[*Hits, string, int, int]{
		New:     func() *Hits { return new(Hits) },
		Threads: [][]string{{"k"}, {"k"}},
		Call:    func(h *Hits, k string) int { return h.Hit(k) },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 1, n + 1 },
	}
	if explore.Replaying() {
		explore.Check(t, spec)
		return
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "linearizability" {
		t.Fatalf("want the lost update as a linearizability failure: %s", r.Summary())
	}
	t.Logf("found, as it should be:\n%s", r.Failure.Report)
}
