package interleave

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

func TestScheduleRoundTrip(t *testing.T) {
	for _, text := range []string{"0x3.1x2.0x5", "2x1", "0x1.1x1.0x1.2x40", "", "0x2.1x1s1.0x3", "0x1s0.0x1s2", "99x1"} {
		s, err := ParseSchedule(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeSchedule(s); got != text {
			t.Errorf("%q → %v → %q", text, s, got)
		}
	}
	for _, bad := range []string{"0", "x3", "0x0", "a x1", "0x3.", "127x1", "0x1s", "0x1s-1", "1s2x1"} {
		if _, err := ParseSchedule(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestReplayExact: a failure's schedule replays to the same run, trace and
// verdict every time, in the same process or from a fresh program.
func TestReplayExact(t *testing.T) {
	build.Need(t)
	for _, tc := range []struct {
		scenario string
		mutant   fault.Fault
	}{
		{"cr-exhausted-behind-scan", fault.Named("cr-one-scan")},
		{"tb-stale-clocks", fault.Named("tb-plain-store")},
	} {
		s, _ := Lookup(tc.scenario)
		r := Explore(s, Options{Fault: tc.mutant})
		f := r.Failure
		if f == nil {
			t.Fatalf("%s on %s: %s", tc.scenario, tc.mutant, r.Summary())
		}
		for i := 0; i < 100; i++ {
			rep, err := Replay(s, tc.mutant, f.Schedule)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failure == nil || rep.Failure.Kind != f.Kind || rep.Failure.Detail != f.Detail {
				t.Fatalf("replay %d of %s: failure %v, want %s: %s", i, f.Schedule, rep.Failure, f.Kind, f.Detail)
			}
			if rep.Schedule != f.Schedule || rep.Trace != f.Trace || rep.Preemptions != f.Preemptions {
				t.Fatalf("replay %d of %s differs:\n%s\nwant\n%s", i, f.Schedule, rep.Trace, f.Trace)
			}
		}
	}
}

// TestTraceNamesWords: the trace names words by where they are in the
// table and renders their values.
func TestTraceNamesWords(t *testing.T) {
	s, _ := Lookup("tb-trie-push-down")
	rep, err := Replay(s, fault.None, "0x3.1x4.2x3.1x2.0x2.2x2.0x12.2x7.0x1.1x2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`load buckets = trie0`,
		`cas trie0["k1","k2","k3"]: nil → cell "k2" ok`,
		`cas trie0["k1","k2","k3"]: cell "k2" → inner node ok`,
		`cas trie0 cell "k1".word: absent → {tokens=1 last=0ms} ok`,
		`store unpublished word := cell "k2"`,
		`← preempts T0`,
		`▶ take "k3" cost=1 at 0ms [cap 2, 1000/s]`,
	} {
		if !strings.Contains(rep.Trace, want) {
			t.Errorf("trace lacks %q:\n%s", want, rep.Trace)
		}
	}
	// The pinned seed gives k1, k2, k3 one first-level word and a second
	// level each.
	for _, k := range []string{`["k1"] = nil`, `["k2"] := cell "k2"`, `["k3"]: nil → cell "k3" ok`} {
		if !strings.Contains(rep.Trace, k) {
			t.Errorf("trace lacks the second-level word %q:\n%s", k, rep.Trace)
		}
	}
	cs, _ := Lookup("cr-take-vs-finish")
	rep, err = Replay(cs, fault.None, "0x6.1x2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`load slots[0].word.lo = enqueued g1`, `load slots[0].box = {g1 "p" @1ms}`, `cas slots[0].word.lo: enqueued g1 → processing g1 ok`, `snapshot: general 25 free, 1 processing`} {
		if !strings.Contains(rep.Trace, want) {
			t.Errorf("trace lacks %q:\n%s", want, rep.Trace)
		}
	}
}

// TestNoGoroutineLeak: abandoned runs (budgets that stop mid-search, sleep
// sets that block runs, failures) unwind every coroutine.
func TestNoGoroutineLeak(t *testing.T) {
	settle := func() int {
		for i := 0; i < 50; i++ {
			runtime.GC()
			runtime.Gosched()
			time.Sleep(time.Millisecond)
		}
		return runtime.NumGoroutine()
	}
	before := settle()
	s, _ := Lookup("cr-poll-vs-close")
	for i := 0; i < 100; i++ {
		Explore(s, Options{Budget: Budget{Schedules: 1 + i%7}})
		exploreProgram(spinToy(), "spin", Options{StepCap: 50})
		exploreProgram(panicToy(), "panics", Options{})
	}
	// A controller torn down in the middle of a run (a panic outside the
	// code under test): stopping the pool makes every paused thread's yield
	// return false, and the sentinel unwinds it.
	for i := 0; i < 50; i++ {
		func() {
			c := newController(2)
			c.install()
			defer c.remove()
			defer c.close()
			defer func() { recover() }()
			execute(c, counterToy(2, 2, true), &panicAt{depth: 3}, runOptions{})
		}()
	}
	if after := settle(); after > before {
		t.Errorf("%d goroutines before, %d after 350 explorations with abandoned runs", before, after)
	}
}

// panicAt is a chooser that panics at a depth, leaving threads paused.
type panicAt struct{ depth int }

func (p *panicAt) choose(v *view) (int, bool) {
	if v.depth == p.depth {
		panic("chooser gives up")
	}
	return v.depth % 2, true
}

func (p *panicAt) stepped(*stepRec) {}

// TestRandomStrategies: PCT and the random walk find a bug that needs a
// preemption, shrink it, and Replay reproduces the shrunk schedule; the
// same seed finds the same schedule.
func TestRandomStrategies(t *testing.T) {
	build.Need(t)
	s, _ := Lookup("cr-last-slot")
	for _, st := range []Strategy{PCT, Random} {
		opt := Options{Strategy: st, Seed: 7, Fault: fault.Named("cr-reserve-no-cas"), Budget: Budget{Schedules: 5000}}
		r := Explore(s, opt)
		f := r.Failure
		if f == nil {
			t.Fatalf("%s: %s", st, r.Summary())
		}
		if f.Preemptions != 1 {
			t.Errorf("%s: %d preemptions after shrinking: the bug needs one", st, f.Preemptions)
		}
		if f.Shrunk != "" && !strings.Contains(f.Report(), "shrunk from") {
			t.Errorf("%s: the report does not show the schedule before shrinking", st)
		}
		again := Explore(s, opt)
		if again.Failure == nil || again.Failure.Schedule != f.Schedule || again.Schedules != r.Schedules {
			t.Errorf("%s: seed 7 is not reproducible: %s after %d, then %v after %d", st, f.Schedule, r.Schedules, again.Failure, again.Schedules)
		}
		rep, err := Replay(s, fault.Named("cr-reserve-no-cas"), f.Schedule)
		if err != nil || rep.Failure == nil || rep.Trace != f.Trace {
			t.Errorf("%s: replaying %s: %v %v", st, f.Schedule, err, rep.Failure)
		}
		t.Logf("%s: found after %d runs: %s (%d preemptions), shrunk from %s", st, r.Schedules, f.Schedule, f.Preemptions, f.Shrunk)
	}
}

// TestGeneratedScenarios: random scenarios run clean on the real code
// under PCT.
func TestGeneratedScenarios(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		for _, p := range []Primitive{Credits, TokenBucket} {
			s := Generate(p, seed)
			r := Explore(s, Options{Strategy: PCT, Seed: seed, Budget: Budget{Schedules: 150}})
			if r.Err != nil || r.Failure != nil {
				t.Errorf("%s: %s", s.Name, r.Summary())
				if r.Failure != nil {
					t.Log(r.Failure.Report())
				}
			}
		}
	}
}
