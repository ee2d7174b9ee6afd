package explore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	tsync "github.com/tollgate/tollgate/explore/sync"
)

// counter is a mutex-guarded counter; with split set, Inc releases the
// lock between its read and its write (a lock released one statement
// early), which loses updates.
type counter struct {
	mu    tsync.Mutex
	n     int
	split bool
}

func (c *counter) Inc() int {
	c.mu.Lock()
	v := c.n
	if c.split {
		c.mu.Unlock()
		c.mu.Lock()
	}
	c.n = v + 1
	c.mu.Unlock()
	return v + 1
}

func (c *counter) Get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func counterSpec(split bool) explore.Spec[*counter, string, int, int] {
	return explore.Spec[*counter, string, int, int]{
		New:     func() *counter { return &counter{split: split} },
		Threads: [][]string{{"inc"}, {"inc"}},
		After:   []string{"get"},
		Call: func(c *counter, op string) int {
			if op == "get" {
				return c.Get()
			}
			return c.Inc()
		},
		Step: func(n int, _ time.Time, op string) (int, int) {
			if op == "get" {
				return n, n
			}
			return n + 1, n + 1
		},
		Twins: true,
	}
}

func TestCounterHolds(t *testing.T) {
	r := explore.Check(t, counterSpec(false))
	if !r.Exhaustive || r.Schedules == 0 {
		t.Fatalf("want an exhaustive search, got %s", r.Summary())
	}
}

func TestLockReleasedEarlyIsFound(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the failure's files, kept for a person, go where t.TempDir removes them
	r := explore.Explore(counterSpec(true), explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("the split counter passed: %s", r.Summary())
	}
	f := r.Failure
	if f.Kind != "linearizability" || f.Preemptions != 1 {
		t.Errorf("want a linearizability failure at 1 preemption, got %s at %d:\n%s", f.Kind, f.Preemptions, f.Report)
	}
	for _, want := range []string{"lock", "explore_test.go:", "c.mu.Lock()", "schedule "} {
		if !strings.Contains(f.Report, want) {
			t.Errorf("the report does not show %q:\n%s", want, f.Report)
		}
	}
	// The schedule replays to the same failure.
	_, g, err := explore.Replay(counterSpec(true), f.Schedule, "")
	if err != nil || g == nil || g.Kind != f.Kind {
		t.Fatalf("replay of %s: failure %v, err %v", f.Schedule, g, err)
	}
}

// accounts: a transfer locks both in the order it is given, so two
// transfers in opposite orders deadlock.
type accounts struct {
	a, b  tsync.Mutex
	moved int
}

func TestLockOrderDeadlockIsFound(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the failure's files, kept for a person, go where t.TempDir removes them
	spec := explore.Spec[*accounts, bool, bool, struct{}]{
		New:     func() *accounts { return new(accounts) },
		Threads: [][]bool{{true}, {false}},
		Call: func(x *accounts, ab bool) bool {
			first, second := &x.a, &x.b
			if !ab {
				first, second = second, first
			}
			first.Lock()
			second.Lock()
			x.moved++
			second.Unlock()
			first.Unlock()
			return true
		},
		Step:  func(s struct{}, _ time.Time, _ bool) (struct{}, bool) { return s, true },
		Twins: true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "deadlock" {
		t.Fatalf("want a deadlock, got %s", r.Summary())
	}
	if !strings.Contains(r.Failure.Detail, "T0 waits to lock") || !strings.Contains(r.Failure.Detail, "T1 waits to lock") {
		t.Errorf("the deadlock does not say who waits: %s", r.Failure.Detail)
	}
}

// bucket admits a call when it holds a token; it holds at most one and
// gains one per second. With early set it reads the clock before it takes
// its lock, and a stale reading moves its time back, so the next reading
// is credited a second time (the mechanism of golang/go#71360).
type bucket struct {
	mu     tsync.Mutex
	tokens float64
	last   time.Time
	early  bool
}

type bucketState struct {
	Tokens float64
	Last   time.Time
}

// refill is the one rule, shared by the bucket and its model.
func refill(s bucketState, now time.Time) (bucketState, bool) {
	if d := now.Sub(s.Last); d > 0 {
		s.Tokens = min(1, s.Tokens+d.Seconds())
	}
	s.Last = now
	if s.Tokens >= 1 {
		s.Tokens--
		return s, true
	}
	return s, false
}

func (b *bucket) Allow() bool {
	var now time.Time
	if b.early {
		now = rt.Now()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.early {
		now = rt.Now()
	}
	s, ok := refill(bucketState{b.tokens, b.last}, now)
	b.tokens, b.last = s.Tokens, s.Last
	return ok
}

func bucketSpec(early bool) explore.Spec[*bucket, string, bool, bucketState] {
	return explore.Spec[*bucket, string, bool, bucketState]{
		New:     func() *bucket { return &bucket{tokens: 1, last: explore.DefaultStart, early: early} },
		Threads: [][]string{{"allow"}, {"allow", "allow", "allow"}},
		Call:    func(b *bucket, _ string) bool { return b.Allow() },
		Init:    bucketState{Tokens: 1, Last: explore.DefaultStart},
		Step: func(s bucketState, now time.Time, _ string) (bucketState, bool) {
			return refill(s, now)
		},
		Clock: &explore.Clock{Ticks: 1, Tick: time.Second},
		Twins: true,
	}
}

func TestStaleClockReadingIsFound(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the failure's files, kept for a person, go where t.TempDir removes them
	if r := explore.Explore(bucketSpec(false), explore.Options{}, ""); r.Failure != nil || !r.Exhaustive {
		t.Fatalf("the bucket reading its clock under the lock fails: %s\n%v", r.Summary(), r.Failure)
	}
	r := explore.Explore(bucketSpec(true), explore.Options{}, "")
	if r.Failure == nil {
		t.Fatalf("the stale reading passed: %s", r.Summary())
	}
	if !strings.Contains(r.Failure.Trace, "now = +0s") || !strings.Contains(r.Failure.Trace, "tick") {
		t.Errorf("the trace does not show the clock:\n%s", r.Failure.Trace)
	}
	t.Logf("%s", r.Failure.Report)
}

// spinner goes through a channel, which the explorer cannot control.
func TestUnsupportedConstructIsNamed(t *testing.T) {
	spec := explore.Spec[*bucket, string, bool, int]{
		New:     func() *bucket { return new(bucket) },
		Threads: [][]string{{"x"}},
		Call: func(*bucket, string) bool {
			rt.Unsupported("x.go:7", "select statement")
			return true
		},
		Step:  func(s int, _ time.Time, _ string) (int, bool) { return s, true },
		Twins: true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	var u *rt.UnsupportedError
	if !errors.As(r.Err, &u) || u.Site != "x.go:7" {
		t.Fatalf("want the unsupported construct named, got %s", r.Summary())
	}
}

func TestSpecErrors(t *testing.T) {
	good := counterSpec(false)
	for name, mut := range map[string]func(*explore.Spec[*counter, string, int, int]){
		"Spec.New":     func(s *explore.Spec[*counter, string, int, int]) { s.New = nil },
		"Spec.Call":    func(s *explore.Spec[*counter, string, int, int]) { s.Call = nil },
		"Spec.Threads": func(s *explore.Spec[*counter, string, int, int]) { s.Threads = nil },
		"no model":     func(s *explore.Spec[*counter, string, int, int]) { s.Step = nil },
		"Threads[1]":   func(s *explore.Spec[*counter, string, int, int]) { s.Threads = [][]string{{"inc"}, {}} },
		"Clock.Tick":   func(s *explore.Spec[*counter, string, int, int]) { s.Clock = &explore.Clock{Ticks: 1} },
	} {
		s := good
		mut(&s)
		r := explore.Explore(s, explore.Options{}, "")
		if r.Err == nil || !strings.Contains(r.Err.Error(), name) {
			t.Errorf("%s: want an error naming it, got %v", name, r.Err)
		}
	}
}
