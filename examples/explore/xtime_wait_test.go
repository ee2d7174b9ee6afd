package counter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/time/rate"
)

// waiting is an x/time/rate limiter of one token a second (burst 1) and
// a context with a deadline three seconds away on the virtual clock,
// which a thread may cancel. (The test file is not rewritten: it makes
// the context with explore/rt's WithTimeout, which the explorer
// controls.)
type waiting struct {
	l      *rate.Limiter
	ctx    context.Context
	cancel context.CancelFunc
}

// waited is what an operation answered: "ok" (a Wait: at the virtual
// time At), "canceled", or "would exceed" (a Wait whose deadline comes
// before its token).
type waited struct {
	What string
	At   time.Duration
}

// The operations: "wait" (Wait with the shared context), "wait short"
// (Wait with a deadline half a second away), "cancel".
func (w *waiting) do(op string) waited {
	var err error
	switch op {
	case "cancel":
		w.cancel()
		return waited{What: "ok"}
	case "wait":
		err = w.l.Wait(w.ctx)
	case "wait short":
		ctx, cancel := rt.WithTimeout(context.Background(), 500*time.Millisecond)
		err = w.l.Wait(ctx)
		cancel()
	}
	switch {
	case err == nil:
		return waited{What: "ok", At: rt.Since(explore.DefaultStart)}
	case errors.Is(err, context.Canceled):
		return waited{What: "canceled"}
	}
	return waited{What: "would exceed"}
}

// waitState is the model's: the tokens handed out, and whether the
// shared context is cancelled.
type waitState struct {
	handed    int
	cancelled bool
}

// waitModel: the k-th Wait to proceed (from 0) does so no earlier than
// k seconds in (one token a second, burst 1, the clock starting with one
// token); a Wait fails as cancelled only once its context is, and a short
// one may find its deadline too near.
func waitModel() *porcupine.Model {
	return &porcupine.Model{
		Init: func() any { return waitState{} },
		Step: func(st, in, out any) (bool, any) {
			s, op, got := st.(waitState), in.(string), out.(waited)
			switch {
			case op == "cancel":
				s.cancelled = true
				return got.What == "ok", s
			case got.What == "ok":
				ok := got.At >= time.Duration(s.handed)*time.Second
				s.handed++
				return ok, s
			case got.What == "canceled":
				return op == "wait" && s.cancelled, s
			}
			return op == "wait short" && got.What == "would exceed", s
		},
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s → %+v", in, out) },
		DescribeState:     func(st any) string { return fmt.Sprintf("%+v", st) },
	}
}

func waitSpec(threads [][]string) explore.Spec[*waiting, string, waited, struct{}] {
	return explore.Spec[*waiting, string, waited, struct{}]{
		New: func() *waiting {
			ctx, cancel := rt.WithTimeout(context.Background(), 3*time.Second)
			return &waiting{l: rate.NewLimiter(rate.Every(time.Second), 1), ctx: ctx, cancel: cancel}
		},
		Threads: threads,
		Call:    (*waiting).do,
		Model:   waitModel(),
	}
}

// TestLimiterWaitDeadline: Wait with a deadline on the virtual clock,
// from three threads: the second Wait to reserve waits a second on a
// timer, which fires when everything else waits; a Wait whose deadline is
// half a second away is refused its token at once when the token comes
// later. Exhaustive within 2 preemptions: timers, contexts and selects
// controlled, where the explorer gave no verdict before.
func TestLimiterWaitDeadline(t *testing.T) {
	r := explore.Check(t, waitSpec([][]string{{"wait"}, {"wait"}, {"wait short"}}))
	if !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}

// TestLimiterWaitCancelled: two Waits, the second waiting on its timer,
// and a thread that cancels their context: the waiting one gives up as
// cancelled, or proceeds at its token's time.
func TestLimiterWaitCancelled(t *testing.T) {
	r := explore.Check(t, waitSpec([][]string{{"wait"}, {"wait"}, {"cancel"}}))
	if !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}
