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
	tsync "github.com/tollgate/tollgate/explore/sync"
)

// pipe is a counter handed from a goroutine to its caller over a channel,
// written as the rewrite writes code: every shared access reported
// (rt.PlainLoad, rt.PlainWrite), every go statement, send and receive
// through rt.
type pipe struct {
	n       int
	handoff bool // the caller waits for the worker's send before it reads n
}

// Run starts a worker that adds one to n and says so on an unbuffered
// channel, then adds one itself and reads n.
func (p *pipe) Run() int {
	ch := make(chan int)
	rt.Go("pipe.go:1", func() {
		*rt.PlainWrite(rt.PlainLoad(&p.n)) += 1
		rt.Send(ch)(1)
	})
	if p.handoff {
		rt.Recv(ch)
	}
	*rt.PlainWrite(rt.PlainLoad(&p.n)) += 1
	n := *rt.PlainLoad(&p.n)
	if !p.handoff {
		rt.Recv(ch)
	}
	return n
}

func pipeSpec(handoff bool) explore.Spec[*pipe, string, int, int] {
	return explore.Spec[*pipe, string, int, int]{
		New:     func() *pipe { return &pipe{handoff: handoff} },
		Threads: [][]string{{"run"}},
		Call:    func(p *pipe, _ string) int { return p.Run() },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 2, n + 2 },
		Twins:   true,
	}
}

func TestGoroutineHandoff(t *testing.T) {
	r := explore.Explore(pipeSpec(true), explore.Options{}, "")
	if r.Failure != nil || r.Err != nil || !r.Exhaustive {
		t.Fatalf("the handoff fails: %s\n%v", r.Summary(), r.Failure)
	}
	t.Log(r.Summary())
	r = explore.Explore(pipeSpec(false), explore.Options{}, "")
	if r.Failure == nil || !strings.Contains(r.Failure.Kind, "race") {
		t.Fatalf("want a data race without the handoff: %s", r.Summary())
	}
	t.Log(r.Failure.Report)
}

// sem guards a plain counter with a channel of capacity 1 used as a
// semaphore: the k-th receive happens before the (k+1)-th send completes,
// so the increments of two threads are ordered.
type sem struct {
	ch chan struct{}
	n  int
}

func (s *sem) Inc() int {
	rt.Send(s.ch)(struct{}{})
	*rt.PlainWrite(rt.PlainLoad(&s.n)) += 1
	n := *rt.PlainLoad(&s.n)
	rt.Recv(s.ch)
	return n
}

func TestBufferedChannelSemaphore(t *testing.T) {
	spec := explore.Spec[*sem, string, int, int]{
		New:     func() *sem { return &sem{ch: make(chan struct{}, 1)} },
		Threads: [][]string{{"inc"}, {"inc"}},
		Call:    func(s *sem, _ string) int { return s.Inc() },
		Step:    func(n int, _ time.Time, _ string) (int, int) { return n + 1, n + 1 },
		Twins:   true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure != nil || r.Err != nil || !r.Exhaustive {
		t.Fatalf("a counter under a channel semaphore fails: %s\n%v", r.Summary(), r.Failure)
	}
	// With room for two, the semaphore excludes nothing: a race.
	spec.New = func() *sem { return &sem{ch: make(chan struct{}, 2)} }
	r = explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || !strings.Contains(r.Failure.Kind, "race") {
		t.Fatalf("a semaphore of two: want a race, got %s", r.Summary())
	}
}

// TestChannelSemantics runs channel operations in one thread and in
// goroutines it starts, and checks what Go's semantics say they give.
func TestChannelSemantics(t *testing.T) {
	caught := func(f func()) (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		f()
		return ""
	}
	prog := func() string {
		var out []string
		say := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
		c := make(chan int, 2)
		rt.Send(c)(1)
		rt.Send(c)(2)
		say("len %d cap %d", rt.Len(c), cap(c))
		say("recv %d", rt.Recv(c))
		rt.Close(c)
		v, ok := rt.Recv2(c)
		say("recv %d %v", v, ok)
		v, ok = rt.Recv2(c)
		say("recv %d %v", v, ok)
		say("send: %s", caught(func() { rt.Send(c)(3) }))
		say("close: %s", caught(func() { rt.Close(c) }))
		var nilc chan int
		say("close nil: %s", caught(func() { rt.Close(nilc) }))
		// Close wakes every receiver.
		u := make(chan string)
		got := make(chan string, 2)
		for i := 0; i < 2; i++ {
			rt.Go("x.go:1", func() {
				v, ok := rt.Recv2(u)
				rt.Send(got)(fmt.Sprintf("%q %v", v, ok))
			})
		}
		rt.Close(u)
		say("woken %s, %s", rt.Recv(got), rt.Recv(got))
		// An unbuffered send waits for its receiver; range drains to close.
		d := make(chan int)
		rt.Go("x.go:2", func() {
			for i := 1; i <= 3; i++ {
				rt.Send(d)(i)
			}
			rt.Close(d)
		})
		sum := 0
		for it := rt.Range(d); it.Next(); {
			sum += it.V
		}
		say("range %d", sum)
		return strings.Join(out, "; ")
	}
	want := `len 2 cap 2; recv 1; recv 2 true; recv 0 false; send: send on closed channel; close: close of closed channel; close nil: close of nil channel; woken "" false, "" false; range 6`
	spec := explore.Spec[struct{}, string, string, struct{}]{
		New:     func() struct{} { return struct{}{} },
		Threads: [][]string{{"prog"}},
		Call:    func(struct{}, string) string { return prog() },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, string) { return s, want },
		Twins:   true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure != nil || r.Err != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	if got := prog(); got != want {
		t.Errorf("with no explorer: %s\nwant %s", got, want)
	}
}

// TestNilChannelDeadlocks: a receive from a nil channel waits forever: the
// only thread waits, a deadlock naming it.
func TestNilChannelDeadlocks(t *testing.T) {
	spec := explore.Spec[struct{}, string, int, struct{}]{
		New:     func() struct{} { return struct{}{} },
		Threads: [][]string{{"recv"}},
		Call:    func(struct{}, string) int { var c chan int; return rt.Recv(c) },
		Step:    func(s struct{}, _ time.Time, _ string) (struct{}, int) { return s, 0 },
		Twins:   true,
	}
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "deadlock" || !strings.Contains(r.Failure.Detail, "receive on chan 0x0") {
		t.Fatalf("want a deadlock on the nil channel, got %s", r.Summary())
	}
}

// TestGoroutinesUnderEveryStrategy: PCT and the random walk schedule the
// goroutine a thread starts like any thread, find the race of the
// unhandled counter, and the schedule replays to it.
func TestGoroutinesUnderEveryStrategy(t *testing.T) {
	for _, s := range []explore.Strategy{explore.PCT, explore.Random} {
		spec := pipeSpec(false)
		r := explore.Explore(spec, explore.Options{Strategy: s, Seed: 1, Schedules: 500}, "")
		if r.Failure == nil || !strings.Contains(r.Failure.Kind, "race") {
			t.Fatalf("%s: want the race, got %s", s, r.Summary())
		}
		_, f, err := explore.Replay(spec, r.Failure.Schedule, "")
		if err != nil || f == nil || f.Kind != r.Failure.Kind {
			t.Fatalf("%s: replay of %s: %v, %v", s, r.Failure.Schedule, f, err)
		}
		if r := explore.Explore(pipeSpec(true), explore.Options{Strategy: s, Seed: 1, Schedules: 200}, ""); r.Failure != nil || r.Err != nil {
			t.Fatalf("%s: the handoff fails: %s", s, r.Summary())
		}
	}
}

// twoReady is a select with two ready cases under a random strategy:
// both are drawn, and each failure's schedule replays the case it took.
func TestSelectChoiceUnderRandom(t *testing.T) {
	pick := func() string {
		a, b := make(chan string, 1), make(chan string, 1)
		rt.Send(a)("a")
		rt.Send(b)("b")
		s := rt.NewSelect(2, false, "x.go:1")
		var v string
		select {
		case v = <-rt.SelRecv(s, a):
		case v = <-rt.SelRecv(s, b):
		}
		return v
	}
	for _, forbid := range []string{"a", "b"} {
		spec := explore.Spec[struct{}, string, string, struct{}]{
			New:     func() struct{} { return struct{}{} },
			Threads: [][]string{{"pick"}},
			Call:    func(struct{}, string) string { return pick() },
			Step:    func(s struct{}, _ time.Time, _ string) (struct{}, string) { return s, "" },
			Equal:   func(_, got string) bool { return got != forbid },
			Twins:   true,
		}
		r := explore.Explore(spec, explore.Options{Strategy: explore.Random, Seed: 3, Schedules: 100}, "")
		if r.Failure == nil {
			t.Fatalf("forbidding %s: the random walk never took it: %s", forbid, r.Summary())
		}
		_, f, err := explore.Replay(spec, r.Failure.Schedule, "")
		if err != nil || f == nil {
			t.Fatalf("forbidding %s: replay of %s: %v, %v", forbid, r.Failure.Schedule, f, err)
		}
	}
}

// waiter selects on a context's Done channel, which the standard library
// makes and closes where the explorer cannot see.
type waiter struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (w *waiter) do(op string) string {
	if op == "cancel" {
		w.cancel()
		return ""
	}
	s := rt.NewSelect(1, false, "x.go:1")
	//lint:ignore S1000 the select is the form under test
	select {
	case <-rt.SelRecv(s, w.ctx.Done()):
		return w.ctx.Err().Error()
	}
}

// TestContextOutsideTheExplorer: a context cancelled before the run is a
// closed channel the explorer takes on as it finds it; one cancelled by a
// thread while another waits on its Done is closed where the explorer
// cannot see: that run has no verdict (never a deadlock it would report).
func TestContextOutsideTheExplorer(t *testing.T) {
	spec := explore.Spec[*waiter, string, string, struct{}]{
		New: func() *waiter {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return &waiter{ctx, cancel}
		},
		Threads: [][]string{{"wait"}},
		Call:    (*waiter).do,
		Step: func(s struct{}, _ time.Time, op string) (struct{}, string) {
			return s, "context canceled"
		},
		Twins: true,
	}
	if r := explore.Explore(spec, explore.Options{}, ""); r.Failure != nil || r.Err != nil {
		t.Fatalf("cancelled before the run: %s", r.Summary())
	}
	spec.New = func() *waiter {
		ctx, cancel := context.WithCancel(context.Background())
		return &waiter{ctx, cancel}
	}
	spec.Threads = [][]string{{"wait"}, {"cancel"}}
	spec.Equal = func(_, _ string) bool { return true }
	r := explore.Explore(spec, explore.Options{}, "")
	var u *rt.UnsupportedError
	if !errors.As(r.Err, &u) || !strings.Contains(u.What, "closed by code the explorer does not control") {
		t.Fatalf("cancelled by a thread: want no verdict naming the channel closed outside, got %s", r.Summary())
	}
	t.Log(r.Summary())
}

// late starts, in its constructor and in each call, goroutines that
// outlive what started them.
type late struct {
	n    int
	stop chan struct{}
}

func newLate(background bool) *late {
	l := &late{stop: make(chan struct{})}
	if background {
		rt.Go("late.go:1", func() { rt.Recv(l.stop) }) // waits for a Close nobody calls
	}
	return l
}

func (l *late) bump() int {
	rt.Go("late.go:2", func() { *rt.PlainWrite(rt.PlainLoad(&l.n)) += 1 })
	return 0
}

// TestGoroutinesOutliveTheirStart: a goroutine a call starts runs on
// after the call returns, to completion, before the final check; one the
// constructor starts (in the setup) is a thread of the run too, and
// waiting forever it is a leak naming its go statement.
func TestGoroutinesOutliveTheirStart(t *testing.T) {
	spec := explore.Spec[*late, string, int, int]{
		New:     func() *late { return newLate(false) },
		Threads: [][]string{{"bump"}},
		After:   []string{"get"},
		Call: func(l *late, op string) int {
			if op == "get" {
				return *rt.PlainLoad(&l.n)
			}
			return l.bump()
		},
		Step: func(n int, _ time.Time, op string) (int, int) {
			if op == "get" {
				return n, n
			}
			return n + 1, 0
		},
		Twins: true,
	}
	if r := explore.Explore(spec, explore.Options{}, ""); r.Failure != nil || r.Err != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	spec.New = func() *late { return newLate(true) }
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Failure == nil || r.Failure.Kind != "leak" || !strings.Contains(r.Failure.Detail, "late.go:1") {
		t.Fatalf("want the constructor's goroutine reported as a leak, got %s", r.Summary())
	}
	t.Log(r.Failure.Report)
}

// TestWaitGroupGo: WaitGroup.Go starts a controlled thread, and Wait
// orders what it did before what follows; without the Wait, the caller's
// read races with the goroutine's write.
func TestWaitGroupGo(t *testing.T) {
	run := func(wait bool) explore.Result {
		spec := explore.Spec[*pipe, string, int, int]{
			New:     func() *pipe { return new(pipe) },
			Threads: [][]string{{"go"}},
			Call: func(p *pipe, _ string) int {
				var wg tsync.WaitGroup
				wg.Go(func() { *rt.PlainWrite(rt.PlainLoad(&p.n)) += 1 })
				if wait {
					wg.Wait()
				}
				n := *rt.PlainLoad(&p.n)
				wg.Wait()
				return n
			},
			Step:  func(n int, _ time.Time, _ string) (int, int) { return n + 1, n + 1 },
			Twins: true,
		}
		return explore.Explore(spec, explore.Options{}, "")
	}
	if r := run(true); r.Failure != nil || r.Err != nil || !r.Exhaustive {
		t.Fatalf("with Wait: %s\n%v", r.Summary(), r.Failure)
	}
	if r := run(false); r.Failure == nil || !strings.Contains(r.Failure.Kind, "race") {
		t.Fatalf("without Wait: want a race, got %s", r.Summary())
	}
}
