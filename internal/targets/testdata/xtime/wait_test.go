package target

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/time/rate"
)

// The scenarios of Wait: a Limiter of one token a second with a burst of
// one, on the virtual clock. Wait's timer is a timer of the run (the
// rewrite sends time.NewTimer to explore/rt), so a waiter blocks until its
// firing, and the clock moves to its deadline when nothing else can run;
// a context the test cancels (waitc, cancel) is made with rt.WithCancel,
// so the cancel is a step of the run.
//
// Each wait records when it began and returned on the virtual clock and
// its error. The model is the library itself run sequentially, as for
// Allow and Reserve: the waits replayed in the model's order, each a
// reservation at the time it began, and a cancelled one cancelled at the
// time it returned (what Wait's r.Cancel does); an answer is legal when
// the sequential library would have waited exactly as long. A cancelled
// wait whose reservation would not have had to wait is one whose context
// was done before it reserved: it reserved nothing.

type wcall string

type waited struct {
	Start, End time.Time
	Err        string
	Allowed    bool // allow1s's answer
}

type waiter struct {
	l      *rate.Limiter
	ctx    context.Context
	cancel context.CancelFunc
}

func newWaitLimiter() *rate.Limiter { return rate.NewLimiter(rate.Every(time.Second), 1) }

func doWait(w *waiter, c wcall) waited {
	ctx := context.Background()
	switch c {
	case "cancel":
		w.cancel()
		return waited{}
	case "allow1s":
		return waited{Allowed: w.l.AllowN(explore.DefaultStart.Add(time.Second), 1)}
	case "waitc":
		ctx = w.ctx
	case "wait":
	default:
		panic(fmt.Sprintf("unknown call %q", c))
	}
	start := rt.Now()
	err := w.l.Wait(ctx)
	out := waited{Start: start, End: rt.Now()}
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

// reservation is one call the model has applied: a wait reserved at At,
// and cancelled at Cancel unless that is zero, or an allowed AllowN at At.
type reservation struct {
	At, Cancel time.Time
	Allow      bool
}

func waitModel() *porcupine.Model {
	return &porcupine.Model{
		Init: func() any { return []reservation(nil) },
		Step: func(st, in, out any) (bool, any) {
			past, c, o := st.([]reservation), in.(wcall), out.(waited)
			if c == "cancel" {
				return o == waited{}, past
			}
			l := newWaitLimiter()
			for _, p := range past {
				if p.Allow {
					l.AllowN(p.At, 1)
					continue
				}
				r := l.ReserveN(p.At, 1)
				if !p.Cancel.IsZero() {
					r.CancelAt(p.Cancel)
				}
			}
			if c == "allow1s" {
				at := explore.DefaultStart.Add(time.Second)
				if !l.AllowN(at, 1) {
					return !o.Allowed, past
				}
				return o.Allowed, append(append([]reservation(nil), past...), reservation{At: at, Allow: true})
			}
			r := l.ReserveN(o.Start, 1)
			if !r.OK() {
				return false, past
			}
			delay := r.DelayFrom(o.Start)
			next := append(append([]reservation(nil), past...), reservation{At: o.Start})
			switch {
			case o.Err == "":
				return o.End.Sub(o.Start) == delay, next
			case c != "waitc" || o.Err != context.Canceled.Error():
				return false, past
			case delay == 0:
				return true, past // done before it reserved: nothing reserved
			}
			next[len(next)-1].Cancel = o.End
			return true, next
		},
		Equal: func(a, b any) bool {
			x, y := a.([]reservation), b.([]reservation)
			if len(x) != len(y) {
				return false
			}
			for i := range x {
				if !x[i].At.Equal(y[i].At) || !x[i].Cancel.Equal(y[i].Cancel) || x[i].Allow != y[i].Allow {
					return false
				}
			}
			return true
		},
		DescribeOperation: func(in, out any) string {
			c, o := in.(wcall), out.(waited)
			switch c {
			case "cancel":
				return "cancel"
			case "allow1s":
				return fmt.Sprintf("AllowN at +1s → %v", o.Allowed)
			}
			s := fmt.Sprintf("%s from %v waited %v", c, o.Start.Sub(explore.DefaultStart), o.End.Sub(o.Start))
			if o.Err != "" {
				s += ": " + o.Err
			}
			return s
		},
		DescribeState: func(st any) string { return fmt.Sprintf("%d reservations", len(st.([]reservation))) },
	}
}

func waitSpec(threads [][]wcall, after ...wcall) explore.Spec[*waiter, wcall, waited, struct{}] {
	return explore.Spec[*waiter, wcall, waited, struct{}]{
		New: func() *waiter {
			w := &waiter{l: newWaitLimiter()}
			w.ctx, w.cancel = rt.WithCancel(context.Background())
			return w
		},
		Threads: threads,
		Call:    doWait,
		After:   after,
		Model:   waitModel(),
	}
}

// TestWaitBurst: three waits at once on a full limiter of burst one:
// one returns at once, the others when their timers fire, a second and
// two seconds on.
func TestWaitBurst(t *testing.T) {
	explorations(t, "wait-burst", waitSpec([][]wcall{{"wait"}, {"wait"}, {"wait"}}))
}

// TestWaitCancel: a wait races a wait on a context a third thread
// cancels; a cancelled wait gives its reservation back, so after them an
// AllowN at one second finds the token the cancelled wait had reserved
// (unless the wait on the cancellable context got the first token, and
// the other wait the second).
//
// A cancelled wait's reservation and its cancel are two steps, and a
// reservation made between them changes what the cancel gives back (the
// library's Cancel reverses "as much as possible, considering that other
// reservations may have already been made"): no single point of the wait
// explains it, so the scenario lets no other wait reserve in between (the
// one other wait reserves before the cancelled one waits, or the
// cancelled one does not wait) and checks the restore with an AllowN after
// the threads, which makes no timer.
func TestWaitCancel(t *testing.T) {
	explorations(t, "wait-cancel", waitSpec([][]wcall{{"wait"}, {"waitc"}, {"cancel"}}, "allow1s"))
}
