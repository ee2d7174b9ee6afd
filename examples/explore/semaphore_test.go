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
	"golang.org/x/sync/semaphore"
)

// sem is a weighted semaphore of size 2 whose one token the setup holds
// for good, and a context a thread may cancel. (The test file is not
// rewritten: it makes the context with explore/rt's WithCancel, which the
// explorer controls, as it receives with rt.Recv.)
type sem struct {
	s      *semaphore.Weighted
	ctx    context.Context
	cancel context.CancelFunc
}

// The operations: "acquire 2 ctx" (with the context), "acquire 2
// deadline" (with a deadline one second away on the virtual clock, the
// tokens given back at once when it gets them), "acquire 1" (with no
// deadline), "release 1", "cancel".
func (s *sem) do(op string) string {
	var err error
	switch op {
	case "acquire 2 ctx":
		err = s.s.Acquire(s.ctx, 2)
	case "acquire 2 deadline":
		ctx, cancel := rt.WithTimeout(context.Background(), time.Second)
		if err = s.s.Acquire(ctx, 2); err == nil {
			s.s.Release(2)
		}
		cancel()
	case "acquire 1":
		err = s.s.Acquire(context.Background(), 1)
	case "release 1":
		s.s.Release(1)
	case "cancel":
		s.cancel()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case err != nil:
		return err.Error()
	}
	return "ok"
}

// semState is the model's: the tokens held and whether the context is
// cancelled.
type semState struct {
	held      int
	cancelled bool
}

// semModel is a weighted semaphore of size 2 (the setup's token held):
// an Acquire takes effect when its tokens fit, and fails only once its
// context is done (cancelled by the "cancel" thread, or its deadline
// passed: the virtual clock may jump to it whenever everything waits).
func semModel() *porcupine.Model {
	return &porcupine.Model{
		Init: func() any { return semState{held: 1} },
		Step: func(st, in, out any) (bool, any) {
			s, op, got := st.(semState), in.(string), out.(string)
			switch {
			case op == "cancel":
				s.cancelled = true
				return got == "ok", s
			case op == "release 1":
				s.held--
				return got == "ok" && s.held >= 0, s
			case got == "ok" && op == "acquire 2 deadline":
				return s.held == 0, s // taken and given back
			case got == "ok":
				n := 1
				if op == "acquire 2 ctx" {
					n = 2
				}
				s.held += n
				return s.held <= 2, s
			case got == "canceled":
				return op == "acquire 2 ctx" && s.cancelled, s
			case got == "deadline exceeded":
				return op == "acquire 2 deadline", s
			}
			return false, s
		},
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s → %s", in, out) },
		DescribeState:     func(st any) string { return fmt.Sprintf("%+v", st) },
	}
}

// semSpec explores threads on a fresh semaphore per run against
// semModel. That no waiter whose request fits the free tokens stays
// blocked once every other thread is done is the explorer's deadlock
// check: such a run ends with every thread left waiting.
func semSpec(threads [][]string) explore.Spec[*sem, string, string, semState] {
	return explore.Spec[*sem, string, string, semState]{
		New: func() *sem {
			s := semaphore.NewWeighted(2)
			if !s.TryAcquire(1) {
				panic("a new semaphore of size 2 refused one token")
			}
			ctx, cancel := rt.WithCancel(context.Background())
			return &sem{s: s, ctx: ctx, cancel: cancel}
		},
		Threads: threads,
		Call:    (*sem).do,
		Model:   semModel(),
	}
}

// TestSemaphoreAcquireCancelled: three goroutines on x/sync's semaphore
// (size 2, one token held): T0 waits for 2 tokens with a context, T1 for
// 1 token behind it (the semaphore is FIFO), T2 cancels T0's context. T0
// must fail with context.Canceled, and its leaving must wake T1, whose
// token was free all along: a T1 left waiting is a deadlock. Exhaustive
// within 2 preemptions, with the cancel and every select controlled.
func TestSemaphoreAcquireCancelled(t *testing.T) {
	spec := semSpec([][]string{{"acquire 2 ctx"}, {"acquire 1", "release 1"}, {"cancel"}})
	r := explore.Check(t, spec)
	if !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
	t.Logf("%s in %v", r.Summary(), r.Elapsed)
}

// TestSemaphoreAcquireDeadline: the same with T0's context a deadline one
// second away on the virtual clock, and T2 releasing the held token (so
// T0 may get its 2 tokens, or time out): the deadline's timer fires when
// everything else waits, and T1 must still be woken.
func TestSemaphoreAcquireDeadline(t *testing.T) {
	spec := semSpec([][]string{{"acquire 2 deadline"}, {"acquire 1", "release 1"}, {"release 1"}})
	r := explore.Check(t, spec)
	if !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
	t.Logf("%s in %v", r.Summary(), r.Elapsed)
}
