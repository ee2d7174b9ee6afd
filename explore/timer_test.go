package explore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
)

// elapsed is the virtual time since the start of the run.
func elapsed() time.Duration { return rt.Since(explore.DefaultStart) }

// oneThread is a Spec of one thread running f once, whose output must be
// want.
func oneThread(f func() string, want string) explore.Spec[struct{}, string, string, struct{}] {
	return explore.Spec[struct{}, string, string, struct{}]{
		New:     func() struct{} { return struct{}{} },
		Threads: [][]string{{"run"}},
		Call:    func(struct{}, string) string { return f() },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, string) { return s, want },
		Twins:   true,
	}
}

// TestTimerFiresWhenEverythingWaits: a thread that waits for time.After
// with nothing else to run is woken by the timer, the clock moved to its
// deadline.
func TestTimerFiresWhenEverythingWaits(t *testing.T) {
	spec := oneThread(func() string {
		v := rt.Recv(rt.After(2 * time.Second))
		return fmt.Sprint(v.Sub(explore.DefaultStart), " ", elapsed())
	}, "2s 2s")
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	t.Log(r.Summary())
}

// TestTimerStopTakesBackItsValue: Go 1.23's timers. A timer whose
// deadline has passed may have fired or not when Stop runs (the firing
// interleaves: DFS runs both), and Stop returns true either way, the
// value it sent taken back: a receive after it finds nothing.
func TestTimerStopTakesBackItsValue(t *testing.T) {
	spec := oneThread(func() string {
		tm := rt.NewTimer(time.Second)
		rt.Sleep(2 * time.Second)
		stopped := rt.TimerStop(tm)
		s := rt.NewSelect(1, true, "x.go:1")
		select {
		case <-rt.SelRecv(s, tm.C):
			return fmt.Sprint(stopped, " received")
		default:
			return fmt.Sprint(stopped, " nothing")
		}
	}, "true nothing")
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	if r.Schedules < 2 {
		t.Fatalf("want the firing before and after the Stop, got %d schedules", r.Schedules)
	}
	t.Log(r.Summary())
}

// TestTimerResetAndTicker: a timer reset before it fires fires at its new
// deadline; a ticker ticks every period, and its Reset changes the
// period.
func TestTimerResetAndTicker(t *testing.T) {
	spec := oneThread(func() string {
		tm := rt.NewTimer(time.Second)
		pending := rt.TimerReset(tm, 3*time.Second)
		rt.Recv(tm.C)
		at := elapsed()
		tk := rt.NewTicker(time.Second)
		rt.Recv(tk.C)
		rt.Recv(tk.C)
		rt.TickerReset(tk, 5*time.Second)
		rt.Recv(tk.C)
		rt.TickerStop(tk)
		return fmt.Sprint(pending, " ", at, " ", elapsed())
	}, "true 3s 10s")
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	t.Log(r.Summary())
}

// watch runs a job with a watchdog: an AfterFunc that marks the job
// timed out. When Stop says the watchdog already started, the job reads
// its mark: with sync it first waits for the watchdog to say it is done,
// without it reads the mark the watchdog's goroutine writes, a data race.
type watch struct {
	timedOut bool
	done     chan struct{}
	sync     bool
}

func (w *watch) run() string {
	tm := rt.AfterFunc(time.Second, func() {
		*rt.PlainWrite(&w.timedOut) = true
		rt.Close(w.done)
	})
	rt.Sleep(2 * time.Second)
	if rt.TimerStop(tm) {
		return "stopped"
	}
	if w.sync {
		rt.Recv(w.done)
	}
	return fmt.Sprint("timed out ", *rt.PlainLoad(&w.timedOut))
}

func watchSpec(sync bool, forbid string) explore.Spec[*watch, string, string, struct{}] {
	return explore.Spec[*watch, string, string, struct{}]{
		New:     func() *watch { return &watch{done: make(chan struct{}), sync: sync} },
		Threads: [][]string{{"run"}},
		Call:    func(w *watch, _ string) string { return w.run() },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, string) { return s, "" },
		Equal:   func(_, got string) bool { return got != forbid },
		Twins:   true,
	}
}

// TestAfterFuncInterleaves: the watchdog's firing comes before or after
// the Stop (each outcome is found, forbidden in turn), its function runs
// as a goroutine ordered after the firing, and reading what it wrote
// without waiting for it is a data race.
func TestAfterFuncInterleaves(t *testing.T) {
	for _, forbid := range []string{"stopped", "timed out true"} {
		r := explore.Explore(watchSpec(true, forbid), explore.Options{}, "")
		if r.Failure == nil || r.Failure.Kind != "linearizability" {
			t.Fatalf("forbidding %q: want it found, got %s", forbid, r.Summary())
		}
		_, f, err := explore.Replay(watchSpec(true, forbid), r.Failure.Schedule, "")
		if err != nil || f == nil {
			t.Fatalf("replay of %s: %v %v", r.Failure.Schedule, f, err)
		}
		if !strings.Contains(f.Trace, "(timer made at explore/timer_test.go:") {
			t.Fatalf("the trace does not name the timer's thread by where it was made:\n%s", f.Trace)
		}
	}
	if r := explore.Explore(watchSpec(true, ""), explore.Options{}, ""); r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("with the wait: %s\n%v", r.Summary(), r.Failure)
	}
	r := explore.Explore(watchSpec(false, ""), explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "data race" || !strings.Contains(r.Failure.Detail, "timer_test.go") {
		t.Fatalf("without the wait: want a data race, got %s", r.Summary())
	}
	t.Log(r.Failure.Detail)
}

// TestTimerResetOrdersTheFiring: what a thread wrote before it reset a
// timer is ordered before the timer's AfterFunc (the Reset's edge into
// the firing, the firing's into the goroutine): no race. Written after
// the Reset, it races with the function's read.
func TestTimerResetOrdersTheFiring(t *testing.T) {
	run := func(writeFirst bool) explore.Result {
		spec := oneThread(func() string {
			var x int
			got := make(chan int, 1)
			tm := rt.AfterFunc(time.Hour, func() { rt.Send(got)(*rt.PlainLoad(&x)) })
			if writeFirst {
				*rt.PlainWrite(&x) = 1
				rt.TimerReset(tm, time.Second)
			} else {
				rt.TimerReset(tm, time.Second)
				*rt.PlainWrite(&x) = 1
			}
			return fmt.Sprint(rt.Recv(got))
		}, "1")
		return explore.Explore(spec, explore.Options{}, "")
	}
	if r := run(true); r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("written before the Reset: %s\n%v", r.Summary(), r.Failure)
	}
	if r := run(false); r.Failure == nil || r.Failure.Kind != "data race" {
		t.Fatalf("written after the Reset: want a data race, got %s", r.Summary())
	}
}

// TestTimersFireInDeadlineOrder: with everything waiting, the clock jumps
// to the earliest deadline and that timer fires first; the later one does
// not overtake it.
func TestTimersFireInDeadlineOrder(t *testing.T) {
	spec := oneThread(func() string {
		late, early := rt.NewTimer(2*time.Second), rt.NewTimer(time.Second)
		s := rt.NewSelect(2, false, "x.go:1")
		select {
		case <-rt.SelRecv(s, late.C):
			return fmt.Sprint("late ", elapsed())
		case <-rt.SelRecv(s, early.C):
			return fmt.Sprint("early ", elapsed())
		}
	}, "early 1s")
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
}

// TestTimersRefusedWhereNothingFiresThem: a timer made in a final check
// (Spec.After), where nothing could fire it, and a context.AfterFunc on a
// standard-library context that can be cancelled (its function would run
// outside the schedule), end the run with no verdict naming them.
func TestTimersRefusedWhereNothingFiresThem(t *testing.T) {
	spec := oneThread(func() string { return "" }, "")
	spec.Call = func(_ struct{}, op string) string {
		if op == "after" {
			rt.NewTimer(time.Second)
		}
		return ""
	}
	spec.After = []string{"after"}
	r := explore.Explore(spec, explore.Options{}, "")
	var u *rt.UnsupportedError
	if !errors.As(r.Err, &u) || !strings.Contains(u.What, "time.NewTimer: a timer made outside the threads") || !strings.HasPrefix(u.Site, "explore/timer_test.go:") {
		t.Fatalf("a timer in a final check: want no verdict naming it, got %s", r.Summary())
	}
	spec = oneThread(func() string {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rt.ContextAfterFunc(ctx, func() {})
		return ""
	}, "")
	r = explore.Explore(spec, explore.Options{}, "")
	if !errors.As(r.Err, &u) || !strings.Contains(u.What, "context.AfterFunc on a context the explorer does not control") {
		t.Fatalf("context.AfterFunc on a standard-library context: want no verdict naming it, got %s", r.Summary())
	}
	t.Log(r.Summary())
}

// TestTimersUnderEveryStrategy: PCT and the random walk branch on a
// timer's firing too: each finds the watchdog firing before the Stop and
// after it (each outcome forbidden in turn), and replays it.
func TestTimersUnderEveryStrategy(t *testing.T) {
	for _, s := range []explore.Strategy{explore.PCT, explore.Random} {
		for _, forbid := range []string{"stopped", "timed out true"} {
			spec := watchSpec(true, forbid)
			r := explore.Explore(spec, explore.Options{Strategy: s, Seed: 1, Schedules: 200}, "")
			if r.Failure == nil || r.Failure.Kind != "linearizability" {
				t.Fatalf("%s, forbidding %q: want it found, got %s", s, forbid, r.Summary())
			}
			if _, f, err := explore.Replay(spec, r.Failure.Schedule, ""); err != nil || f == nil {
				t.Fatalf("%s: replay of %s: %v %v", s, r.Failure.Schedule, f, err)
			}
		}
	}
}

// poller is a goroutine that counts a ticker's ticks until done is
// closed.
type poller struct {
	done chan struct{}
	n    int
}

func (p *poller) start() string {
	tk := rt.NewTicker(time.Second)
	rt.Go("poller.go:1", func() {
		for {
			s := rt.NewSelect(2, false, "poller.go:2")
			select {
			case <-rt.SelRecv(s, tk.C):
				*rt.PlainWrite(&p.n)++
			case <-rt.SelRecv(s, p.done):
				rt.TickerStop(tk)
				return
			}
		}
	})
	return ""
}

// TestTickerGoroutineLeaks: a goroutine driven by a ticker that nobody
// stops is a leak once the program's threads are done (the clock does
// not jump for a ticker then), not a run that ticks until the step cap;
// closed by a thread, it is stopped and passes.
func TestTickerGoroutineLeaks(t *testing.T) {
	spec := explore.Spec[*poller, string, string, struct{}]{
		New:     func() *poller { return &poller{done: make(chan struct{})} },
		Threads: [][]string{{"start"}},
		Call: func(p *poller, op string) string {
			if op == "close" {
				rt.Close(p.done)
				return ""
			}
			return p.start()
		},
		Step:  func(s struct{}, _ time.Time, _ string) (struct{}, string) { return s, "" },
		Twins: true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "leak" || !strings.Contains(r.Failure.Detail, "poller.go:1") {
		t.Fatalf("a ticker's goroutine nobody stops: want a leak, got %s", r.Summary())
	}
	spec.Threads = [][]string{{"start", "close"}}
	if r := explore.Explore(spec, explore.Options{}, ""); r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("stopped: %s\n%v", r.Summary(), r.Failure)
	}
}
