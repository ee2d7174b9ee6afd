package target

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/sync/semaphore"
)

// The scenarios of golang.org/x/sync/semaphore: a Weighted of size 1 to 3
// used by two to four threads, each acquiring (TryAcquire, or Acquire with
// context.Background(), whose Done is nil: its selects never take that
// case) and then releasing what it got.
//
// Three checks, each for a different fault:
//
//   - The model is a FIFO weighted semaphore: Acquire takes effect when
//     it enters, granted at once when no one waits and its weight fits,
//     queued otherwise; Release frees its weight and grants the queue's
//     head, then the next, while they fit; TryAcquire succeeds only when
//     no one waits and its weight fits. Each call takes effect inside the
//     library's critical section, within the call, so every correct run
//     is linearizable with respect to it, and TryAcquire's answer is
//     exact (a TryAcquire that barges past a waiter is a violation).
//   - No waiter whose request fits the free tokens stays blocked once
//     every other thread is done: every thread releases what it got, and
//     no thread asks for more than the size, so a waiter still blocked
//     then (a lost wake-up) is the explorer's deadlock.
//   - The tokens held never exceed the size: each thread counts what it
//     holds, from the return of its acquire to the start of its release
//     (an under-count of what the library granted, never an over-count),
//     and the Invariant checks the sum after every step.
//   - No TryAcquire succeeds past a waiter. The model cannot see this: a
//     waiter's Acquire is still running when the TryAcquire returns, so
//     it can always be ordered after it. So a TryAcquire that succeeds
//     reads the length of the semaphore's queue right after it returns
//     (through reflect, with no switch point between: the queue is as the
//     TryAcquire's critical section left it), and the Invariant fails
//     when it was not empty.
//
//   - No Release returns with a waiter left asleep that it should have
//     woken: the library's Release grants the queue's head while it fits,
//     so when a Release returns the head, if any, needs more than the
//     free tokens. The model cannot see a waiter woken late either (its
//     Acquire is still running, and the next Release wakes it), so a
//     Release reads the queue's head and the tokens granted right after
//     it returns (through reflect, with no switch point between, as for
//     TryAcquire), and the Invariant fails when the head fits. (Before
//     this check, tooth notify-one-only, a Release that wakes one waiter
//     where two fit, passed every scenario.)
//
// Acquire with a context cancelled by another thread (acqctx, cancel)
// and with a deadline on the virtual clock (acqdl): the run's context is
// made with explore/rt's WithCancel, and a deadline's with its
// WithTimeout (this file is not rewritten), so the cancel, the deadline's
// timer and the library's select on Done are all controlled.

// sop is one call: try(n), acq(n), acqctx(n) (Acquire with the run's
// cancellable context), acqdl(n) (Acquire with a deadline a second away),
// cancel (cancel the run's context), rel (release what the thread
// holds), or all (after the threads: TryAcquire(size), then
// Release(size)).
type sop struct {
	Kind string
	N    int64
}

func (o sop) String() string {
	if o.Kind == "rel" || o.Kind == "all" || o.Kind == "cancel" {
		return o.Kind
	}
	return fmt.Sprintf("%s(%d)", o.Kind, o.N)
}

func try(n int64) sop { return sop{Kind: "try", N: n} }
func acq(n int64) sop { return sop{Kind: "acq", N: n} }

func acqctx(n int64) sop { return sop{Kind: "acqctx", N: n} }
func acqdl(n int64) sop  { return sop{Kind: "acqdl", N: n} }

var (
	rel    = sop{Kind: "rel"}
	all    = sop{Kind: "all"}
	cancel = sop{Kind: "cancel"}
)

// sem is the semaphore and what each thread holds of it (the test's own
// count: this file is not rewritten, so these are no switch points).
type sem struct {
	s      *semaphore.Weighted
	size   int64
	held   [5]int64
	ctx    context.Context
	cancel context.CancelFunc
	barged int64 // a TryAcquire's weight that got past a waiter
	// asleep is the weight of a waiter a Release left asleep at the
	// queue's head though it fit, and free the tokens it had.
	asleep, free int64
}

// head is the weight of the waiter at the head of s's queue (0: none),
// and the tokens s has granted: its fields waiters (a container/list.List
// of waiter{n, ready}) and cur, in every version here.
func head(s *semaphore.Weighted) (n, cur int64) {
	v := reflect.ValueOf(s).Elem()
	cur = v.FieldByName("cur").Int()
	q := v.FieldByName("waiters")
	if q.FieldByName("len").Int() == 0 {
		return 0, cur
	}
	front := q.FieldByName("root").FieldByName("next").Elem()
	return front.FieldByName("Value").Elem().FieldByName("n").Int(), cur
}

// waiting is the length of s's queue of waiters (its field waiters, a
// container/list.List, in every version here).
func waiting(s *semaphore.Weighted) int64 {
	return reflect.ValueOf(s).Elem().FieldByName("waiters").FieldByName("len").Int()
}

// call performs o for thread t. Its output: try and all, 1 when they got
// the tokens and 0 otherwise; acq, 0 (-1 for an error, which Background
// never gives); rel, the weight released.
func call(x *sem, t int, o sop) int64 {
	switch o.Kind {
	case "try":
		if !x.s.TryAcquire(o.N) {
			return 0
		}
		if waiting(x.s) > 0 {
			x.barged = o.N
		}
		x.held[t] += o.N
		return 1
	case "acq":
		if err := x.s.Acquire(context.Background(), o.N); err != nil {
			return -1
		}
		x.held[t] += o.N
		return 0
	case "acqctx":
		if err := x.s.Acquire(x.ctx, o.N); err != nil {
			return -1
		}
		x.held[t] += o.N
		return 0
	case "acqdl":
		ctx, cancel := rt.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := x.s.Acquire(ctx, o.N); err != nil {
			return -1
		}
		x.held[t] += o.N
		return 0
	case "cancel":
		x.cancel()
		return 0
	case "rel":
		n := x.held[t]
		x.held[t] = 0
		if n > 0 {
			x.s.Release(n)
			if w, cur := head(x.s); w > 0 && w <= x.size-cur && x.asleep == 0 {
				x.asleep, x.free = w, x.size-cur
			}
		}
		return n
	case "all":
		if !x.s.TryAcquire(x.size) {
			return 0
		}
		x.s.Release(x.size)
		return 1
	}
	panic("unknown semaphore call " + o.Kind)
}

// fifo is the model's state: the tokens granted, the queue of waiting
// weights, oldest first, and whether the context is cancelled.
type fifo struct {
	Cur       int64
	Queue     [4]int64
	N         int
	Cancelled bool
}

// grant grants the queue's head while it fits.
func (s fifo) grant(size int64) fifo {
	for s.N > 0 && size-s.Cur >= s.Queue[0] {
		s.Cur += s.Queue[0]
		copy(s.Queue[:], s.Queue[1:s.N])
		s.N--
		s.Queue[s.N] = 0
	}
	return s
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func model(size int64) *porcupine.Model {
	return &porcupine.Model{
		Init: func() any { return fifo{} },
		Step: func(st, in, out any) (bool, any) {
			s, o, got := st.(fifo), in.(sop), out.(int64)
			switch o.Kind {
			case "try":
				fits := s.N == 0 && size-s.Cur >= o.N
				if fits {
					s.Cur += o.N
				}
				return got == b2i(fits), s
			case "cancel":
				s.Cancelled = true
				return got == 0, s
			case "acqdl":
				// An Acquire whose deadline passed leaves the semaphore as
				// it was; the deadline may pass whenever it waits.
				if got == -1 {
					return true, s
				}
				fallthrough
			case "acqctx":
				// A cancelled Acquire leaves the semaphore as it was. (The
				// scenario has no TryAcquire, the one call that sees the
				// queue, so a cancelled waiter need not be in it.)
				if got == -1 {
					return s.Cancelled, s
				}
				fallthrough
			case "acq":
				if got != 0 {
					return false, s
				}
				if s.N == 0 && size-s.Cur >= o.N {
					s.Cur += o.N
					return true, s
				}
				s.Queue[s.N] = o.N
				s.N++
				return true, s
			case "rel":
				if got > s.Cur {
					return false, s
				}
				s.Cur -= got
				return true, s.grant(size)
			case "all":
				fits := s.N == 0 && s.Cur == 0
				return got == b2i(fits), s
			}
			return false, s
		},
		Equal:             func(a, b any) bool { return a.(fifo) == b.(fifo) },
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%v → %v", in, out) },
		DescribeState: func(st any) string {
			s := st.(fifo)
			return fmt.Sprintf("granted %d, waiting %v", s.Cur, s.Queue[:s.N])
		},
	}
}

func spec(size int64, threads [][]sop) explore.Spec[*sem, sop, int64, struct{}] {
	return explore.Spec[*sem, sop, int64, struct{}]{
		New: func() *sem {
			x := &sem{s: semaphore.NewWeighted(size), size: size}
			x.ctx, x.cancel = rt.WithCancel(context.Background())
			return x
		},
		Threads:    threads,
		CallThread: call,
		After:      []sop{all},
		Model:      model(size),
		Invariant: func(x *sem) error {
			if x.barged > 0 {
				return fmt.Errorf("TryAcquire(%d) succeeded while an Acquire waited", x.barged)
			}
			if x.asleep > 0 {
				return fmt.Errorf("a Release returned with a waiter for %d asleep at the queue's head, %d tokens free", x.asleep, x.free)
			}
			var sum int64
			for _, n := range x.held {
				sum += n
			}
			if sum > x.size {
				return fmt.Errorf("the threads hold %d tokens of %d (%v)", sum, x.size, x.held[:])
			}
			return nil
		},
	}
}

// TestTryRelease: two threads TryAcquire the one token and release it:
// one of two concurrent tries fails, and the token comes back.
func TestTryRelease(t *testing.T) {
	explorations(t, "try-release", spec(1, [][]sop{{try(1), rel}, {try(1), rel, try(1), rel}}))
}

// TestAcquireRelease: two threads Acquire the one token: the second
// waits, and the first's Release must wake it.
func TestAcquireRelease(t *testing.T) {
	explorations(t, "acquire-release", spec(1, [][]sop{{acq(1), rel}, {acq(1), rel}}))
}

// TestAcquireWeighted: three threads on a size of 2: one wants both
// tokens, two want one each; a Release may have to wake two waiters.
func TestAcquireWeighted(t *testing.T) {
	explorations(t, "acquire-weighted", spec(2, [][]sop{{acq(2), rel}, {acq(1), rel}, {acq(1), rel}}))
}

// TestFIFOTry: a TryAcquire while a larger Acquire waits must fail even
// though its weight fits (the queue's order), and the waiter must get the
// tokens in the end.
func TestFIFOTry(t *testing.T) {
	explorations(t, "fifo-try", spec(2, [][]sop{{acq(1), rel}, {acq(2), rel}, {try(1), rel}}))
}

// TestHeadOfLine: four threads on a size of 3: two want 2 each, one
// wants 1 and one tries for 1; a waiter for 1 behind a waiter for 2 waits
// even when one token is free. DFS at bound 1: bound 2 is 2.9 million
// schedules (exhaustive, no violation, 15 minutes on a loaded machine).
func TestHeadOfLine(t *testing.T) {
	explorationsAt(t, "head-of-line", 1, spec(3, [][]sop{{acq(2), rel}, {acq(2), rel}, {acq(1), rel}, {try(1), rel}}))
}

// TestAcquireCancel: a waiter's context is cancelled by a third thread
// while the token is held: the waiter gives up, or gets the token and
// releases it; either way the token comes back.
func TestAcquireCancel(t *testing.T) {
	explorations(t, "acquire-cancel", spec(1, [][]sop{{acq(1), rel}, {acqctx(1), rel}, {cancel}}))
}

// TestAcquireDeadline: two waiters with a deadline a second away on the
// virtual clock while a third thread holds the token: each gets the token
// when it is released, or gives up when its deadline passes (its timer
// fires once every thread waits); either way the token comes back, and a
// waiter that gave up leaves nobody behind it blocked.
func TestAcquireDeadline(t *testing.T) {
	explorations(t, "acquire-deadline", spec(1, [][]sop{{acq(1), rel}, {acqdl(1), rel}, {acqdl(1), rel}}))
}
