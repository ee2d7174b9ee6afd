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

// gate is a context-guarded wait, written as the rewrite writes code: a
// waiter waits for a value or for its context, a canceller cancels, a
// sender sends.
type gate struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan int
	note   int // written before the cancel, read after Done (plainly)
}

func (g *gate) do(op string) string {
	switch op {
	case "stop":
		g.cancel()
		return ""
	case "poll":
		if g.ctx.Err() != nil {
			return fmt.Sprint("polled ", *rt.PlainLoad(&g.note))
		}
		return "polled"
	case "cancel":
		*rt.PlainWrite(&g.note) = 7
		g.cancel()
		return ""
	case "send":
		s := rt.NewSelect(2, false, "gate.go:1")
		select {
		case rt.SelSend(s, g.ch) <- rt.SelValue(s, 1):
			return ""
		case <-rt.SelRecv(s, g.ctx.Done()):
			return ""
		}
	}
	s := rt.NewSelect(2, false, "gate.go:2")
	select {
	case v := <-rt.SelRecv(s, g.ch):
		return fmt.Sprint("got ", v)
	case <-rt.SelRecv(s, g.ctx.Done()):
		if g.ctx.Err() == context.DeadlineExceeded {
			return "context deadline exceeded"
		}
		return fmt.Sprint(g.ctx.Err(), " ", rt.Cause(g.ctx), " ", *rt.PlainLoad(&g.note))
	}
}

func gateSpec(newCtx func() (context.Context, context.CancelFunc), threads [][]string, ok func(op, got string) bool) explore.Spec[*gate, string, string, struct{}] {
	return explore.Spec[*gate, string, string, struct{}]{
		New: func() *gate {
			ctx, cancel := newCtx()
			return &gate{ctx: ctx, cancel: cancel, ch: make(chan int)}
		},
		Threads:    threads,
		CallThread: func(g *gate, _ int, op string) string { return g.do(op) },
		Step:       func(s struct{}, _ time.Time, op string) (struct{}, string) { return s, op },
		Equal:      func(want, got string) bool { return ok(want, got) },
		Twins:      true,
	}
}

// TestContextCancelWakesTheWaiter: a waiter in a select on a value and on
// its context's Done is woken by a cancel from another thread, sees
// context.Canceled, and what the canceller wrote before the cancel
// (ordered by it: no race); with a sender too, it gets the value or the
// cancel, each found.
func TestContextCancelWakesTheWaiter(t *testing.T) {
	bg := func() (context.Context, context.CancelFunc) { return rt.WithCancel(context.Background()) }
	ok := func(op, got string) bool {
		return op != "wait" || got == "got 1" || got == "context canceled context canceled 7"
	}
	spec := gateSpec(bg, [][]string{{"wait"}, {"cancel"}}, ok)
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	t.Log(r.Summary())
	for _, forbid := range []string{"got 1", "context canceled context canceled 7"} {
		spec := gateSpec(bg, [][]string{{"wait"}, {"cancel"}, {"send"}}, func(op, got string) bool { return ok(op, got) && got != forbid })
		r := explore.Explore(spec, explore.Options{}, "")
		if r.Failure == nil || r.Failure.Kind != "linearizability" {
			t.Fatalf("forbidding %q: want it found, got %s", forbid, r.Summary())
		}
	}
}

// TestContextErrOrders: an Err that returns the cancel's error is
// ordered after the cancel: what the canceller wrote before it is read
// without a race.
func TestContextErrOrders(t *testing.T) {
	bg := func() (context.Context, context.CancelFunc) { return rt.WithCancel(context.Background()) }
	spec := gateSpec(bg, [][]string{{"poll"}, {"cancel"}}, func(op, got string) bool {
		return op != "poll" || got == "polled" || got == "polled 7"
	})
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive || r.Schedules < 2 {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
}

// TestContextDeadline: a deadline on the virtual clock wakes the waiter
// when nothing else can run, with context.DeadlineExceeded (or its
// cause) at the deadline; a child's deadline later than its parent's is
// the parent's.
func TestContextDeadline(t *testing.T) {
	cause := errors.New("too slow")
	spec := oneThread(func() string {
		parent, cancel := rt.WithTimeoutCause(context.Background(), 2*time.Second, cause)
		defer cancel()
		ctx, cancel2 := rt.WithDeadline(parent, explore.DefaultStart.Add(time.Hour))
		defer cancel2()
		d, _ := ctx.Deadline()
		rt.Recv(ctx.Done())
		return fmt.Sprint(ctx.Err(), "; ", rt.Cause(ctx), "; ", elapsed(), " ", d.Sub(explore.DefaultStart))
	}, "context deadline exceeded; too slow; 2s 2s")
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
}

// TestContextDeadlineVersusCancel: a deadline the clock thread's tick
// passes fires before or after a thread's cancel: the waiter sees each
// error, each found.
func TestContextDeadlineVersusCancel(t *testing.T) {
	mk := func() (context.Context, context.CancelFunc) {
		return rt.WithTimeout(context.Background(), time.Second)
	}
	for _, forbid := range []string{"context canceled", "context deadline exceeded"} {
		spec := gateSpec(mk, [][]string{{"wait"}, {"stop"}}, func(op, got string) bool {
			return op != "wait" || !strings.HasPrefix(got, forbid)
		})
		spec.Clock = &explore.Clock{Ticks: 1, Tick: time.Second}
		r := explore.Explore(spec, explore.Options{}, "")
		if r.Failure == nil || r.Failure.Kind != "linearizability" {
			t.Fatalf("forbidding %q: want it found, got %s", forbid, r.Summary())
		}
		if _, f, err := explore.Replay(spec, r.Failure.Schedule, ""); err != nil || f == nil {
			t.Fatalf("replay of %s: %v %v", r.Failure.Schedule, f, err)
		}
	}
}

// ctxKey is the key of a value context.
type ctxKey struct{}

// TestContextTreeAndAfterFunc: a parent's cancel reaches a child made
// below it (through a value context too) and starts the AfterFuncs of
// both, as goroutines; a stopped AfterFunc does not run; one registered
// on a context already cancelled runs at once.
func TestContextTreeAndAfterFunc(t *testing.T) {
	spec := oneThread(func() string {
		parent, cancel := rt.WithCancelCause(context.TODO())
		vc := context.WithValue(parent, ctxKey{}, "v")
		child, cancelChild := rt.WithCancel(vc)
		defer cancelChild()
		ran := make(chan string, 3)
		rt.ContextAfterFunc(child, func() { rt.Send(ran)("child") })
		stop := rt.ContextAfterFunc(parent, func() { rt.Send(ran)("stopped one") })
		stopped := stop()
		cancel(errors.New("why"))
		a := rt.Recv(ran)
		rt.ContextAfterFunc(child, func() { rt.Send(ran)("late") })
		b := rt.Recv(ran)
		return fmt.Sprint(stopped, " ", a, " ", b, " ", child.Err(), " ", rt.Cause(child), " ", child.Value(ctxKey{}), " ", stop())
	}, "true child late context canceled why v false")
	r := explore.Explore(spec, explore.Options{}, "")
	if r.Err != nil || r.Failure != nil || !r.Exhaustive {
		t.Fatalf("%s\n%v", r.Summary(), r.Failure)
	}
	t.Log(r.Summary())
}

// TestContextFromTheTest: a context the test made with the context
// package is a parent the twin follows: Background never cancels it, one
// cancelled before the run cancels it at once, and one cancelled during
// the run by code outside the explorer leaves that run with no verdict.
func TestContextFromTheTest(t *testing.T) {
	spec := oneThread(func() string {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		ctx, c2 := rt.WithCancel(done)
		defer c2()
		rt.Recv(ctx.Done())
		return fmt.Sprint(ctx.Err())
	}, "context canceled")
	if r := explore.Explore(spec, explore.Options{}, ""); r.Err != nil || r.Failure != nil {
		t.Fatalf("a parent done before: %s", r.Summary())
	}
	var outside context.CancelFunc
	mk := func() (context.Context, context.CancelFunc) {
		parent, cancel := context.WithCancel(context.Background())
		outside = cancel
		return rt.WithCancel(parent)
	}
	spec2 := gateSpec(mk, [][]string{{"wait"}, {"cancel"}}, func(string, string) bool { return true })
	spec2.CallThread = func(g *gate, _ int, op string) string {
		if op == "cancel" {
			outside() // the test's own cancel: outside the explorer
			return ""
		}
		return g.do(op)
	}
	r := explore.Explore(spec2, explore.Options{}, "")
	var u *rt.UnsupportedError
	if !errors.As(r.Err, &u) || !strings.Contains(u.What, "closed by code the explorer does not control") {
		t.Fatalf("a parent cancelled outside: want no verdict, got %s", r.Summary())
	}
}

// TestStdCauseOfATwin: the standard library's context.Cause, called where
// the rewrite does not reach (this test file, a model), answers a
// controlled context's cause, not its Err, and so does it below a value
// context: errgroup's WithContext, rewritten to the twin, failed a run of
// the unmodified library otherwise (a test read its context's cause with
// context.Cause and got context.Canceled). Seen failing without the
// twin's standard-library context (std).
func TestStdCauseOfATwin(t *testing.T) {
	boom := errors.New("boom")
	spec := explore.Spec[*causeCtx, string, string, bool]{
		New: func() *causeCtx {
			ctx, cancel := rt.WithCancelCause(context.Background())
			return &causeCtx{ctx: ctx, cancel: cancel}
		},
		Threads: [][]string{{"cancel"}, {"cause", "value cause"}},
		CallThread: func(c *causeCtx, _ int, op string) string {
			switch op {
			case "cancel":
				c.cancel(boom)
				return ""
			case "cause":
				return fmt.Sprint(context.Cause(c.ctx))
			}
			return fmt.Sprint(context.Cause(context.WithValue(c.ctx, causeKey{}, 1)))
		},
		Step: func(cancelled bool, _ time.Time, op string) (bool, string) {
			switch {
			case op == "cancel":
				return true, ""
			case cancelled:
				return true, "boom"
			}
			return false, "<nil>"
		},
		Twins: true,
	}
	r := explore.Check(t, spec)
	if !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}

type causeCtx struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

type causeKey struct{}
