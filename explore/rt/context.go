package rt

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/tollgate/tollgate/explore/internal/vclock"
	"github.com/tollgate/tollgate/internal/seam/hooked"
)

// Contexts, controlled. The standard library is not rewritten, so the
// rewrite sends the code under test's calls of context.WithCancel,
// WithCancelCause, WithTimeout, WithTimeoutCause, WithDeadline,
// WithDeadlineCause, AfterFunc and Cause to this file's functions. With no
// explorer running each is the context package's own. Under the explorer
// they make a twin, a context.Context whose Done is a channel the explorer
// keeps (a receive from it, a select on it, are controlled), whose Err and
// Cause are switch points, whose cancel (from any thread) is one step that
// closes its Done and those of every twin below it, starts their
// AfterFuncs as goroutines and stops their deadlines, and whose deadline
// is a timer on the virtual clock (timer.go): its firing cancels the
// context with context.DeadlineExceeded, in the firing's step.
//
// A context the test passes in still works as a parent: Background and
// TODO (never done), one already done (the twin starts cancelled), one
// that is not done yet, whose Done the explorer then watches: if code
// outside the explorer cancels it during a run (the test file's own
// cancel, a real timer), that run has no verdict. A test file, which is
// not rewritten, makes a context the explorer controls by calling this
// file's functions (rt.WithCancel, not context.WithCancel), as it
// receives with rt.Recv. context.WithValue and WithoutCancel are the
// standard library's, over a twin as over any context. Code the rewrite
// did not reach that makes a context below a twin makes an ordinary one,
// which the explorer does not control (the twin's cancel closes the
// runtime's Done channel too, so it still sees the cancel; a receive from
// its Done in the code under test then ends the run with no verdict).

// ctxCtl is what the explorer's scheduler does for contexts.
type ctxCtl interface {
	controller
	timers
	Step(word unsafe.Pointer, what string)
	Did(word unsafe.Pointer, write, all bool, desc string)
	Release() any
	Acquire(v any)
	CloseNow(ch unsafe.Pointer, capacity int) bool
}

// ctxOf is the installed scheduler as a controller of contexts, or nil
// when none is installed; one that cannot control contexts panics naming
// what at site.
func ctxOf(what, site string) ctxCtl {
	s := hooked.Current()
	if s == nil {
		return nil
	}
	k, ok := s.(ctxCtl)
	if !ok {
		panic(&UnsupportedError{Site: site, What: what + " (the installed scheduler does not control contexts)"})
	}
	return k
}

// twinKey is the key a twin answers Value with itself for.
var twinKey byte

// twin is a context the explorer controls.
type twin struct {
	k      ctxCtl
	parent context.Context
	site   string // where it was made
	done   chan struct{}
	// err and cause are set by the cancel; rel is what it released.
	err, cause error
	rel        any
	children   []*twin
	afters     []*afterFunc
	// deadline is its own (hasDeadline), on the virtual clock; timed: a
	// timer of the run fires it.
	deadline    time.Time
	hasDeadline bool
	timed       bool
	// std is a context of the standard library's, cancelled with the twin
	// and with its cause, that Value hands to the standard library's own
	// lookup: so context.Cause, called where the rewrite did not reach (a
	// test file), answers the twin's cause rather than its Err.
	std       context.Context
	stdCancel context.CancelCauseFunc
}

// afterFunc is a function context.AfterFunc registered on a twin.
type afterFunc struct {
	f    func()
	site string
	done bool // started or stopped
}

// Deadline implements context.Context.
func (x *twin) Deadline() (time.Time, bool) {
	if x.hasDeadline {
		return x.deadline, true
	}
	return x.parent.Deadline()
}

// Done implements context.Context: the channel is made with the twin and
// closed by its cancel.
func (x *twin) Done() <-chan struct{} { return x.done }

// Err implements context.Context: a switch point on the context.
func (x *twin) Err() error {
	err, _ := x.read("Err")
	return err
}

// read is the switch point of Err and Cause.
func (x *twin) read(what string) (err, cause error) {
	k := ctxOf("context Err", x.site)
	if k == nil {
		return x.err, x.cause
	}
	w := unsafe.Pointer(x)
	k.Step(w, what+" of the context made at "+x.site)
	err, cause = x.err, x.cause
	if err != nil {
		k.Acquire(x.rel)
	}
	k.Did(w, false, false, fmt.Sprintf("%s of the context made at %s: %v", what, x.site, err))
	return err, cause
}

// Value implements context.Context.
func (x *twin) Value(key any) any {
	if key == &twinKey {
		return x
	}
	// std's parent is Background, so std answers only the standard
	// library's key for its own cancellation, which context.Cause asks.
	if v := x.std.Value(key); v != nil {
		return v
	}
	return x.parent.Value(key)
}

func (x *twin) String() string { return "context made at " + x.site + " (explored)" }

// twinOf is the twin ctx is, or whose Done ctx shares (a value context
// over a twin), or nil.
func twinOf(ctx context.Context) *twin {
	if ctx == nil {
		return nil
	}
	x, _ := ctx.Value(&twinKey).(*twin)
	if x == nil || (<-chan struct{})(x.done) != ctx.Done() {
		return nil
	}
	return x
}

// newTwin makes a twin below parent, at site; it starts cancelled when
// parent is done.
func newTwin(k ctxCtl, parent context.Context, at string) *twin {
	if parent == nil {
		panic("cannot create context from nil parent")
	}
	x := &twin{k: k, parent: parent, site: at, done: make(chan struct{})}
	x.std, x.stdCancel = context.WithCancelCause(context.Background())
	k.ChanAdopt(word(x.done), 0, nil, false, nil)
	if p := twinOf(parent); p != nil {
		// Joining the parent is an operation on it, which its cancel
		// may come before or after.
		w := unsafe.Pointer(p)
		k.Step(w, "make a context below the one made at "+p.site)
		if p.err != nil {
			k.Acquire(p.rel)
			x.cancel(p.err, p.cause)
		} else {
			p.children = append(p.children, x)
		}
		k.Did(w, true, false, "a context made below the one made at "+p.site)
		return x
	}
	if d := parent.Done(); d != nil {
		select {
		case <-d:
			x.cancel(parent.Err(), context.Cause(parent))
		default:
			// Cancelled later by code outside the explorer, the run
			// has no verdict (adopt's probe says so).
			adopt(k, d)
		}
	}
	return x
}

// cancel cancels x and every twin below it, in the current step.
func (x *twin) cancel(err, cause error) {
	if x.err != nil {
		return
	}
	if cause == nil {
		cause = err
	}
	x.err, x.cause = err, cause
	k := x.k
	x.rel = k.Release()
	k.CloseNow(word(x.done), 0)
	close(x.done) // the runtime's too: code the rewrite did not reach sees it
	x.stdCancel(cause)
	if x.timed {
		k.TimerStop(unsafe.Pointer(x), true)
	}
	for _, a := range x.afters {
		if !a.done {
			a.done = true
			if why := k.Go(a.f, a.site); why != "" {
				panic(&UnsupportedError{Site: a.site, What: "context.AfterFunc: " + why})
			}
		}
	}
	x.afters = nil
	for _, c := range x.children {
		c.cancel(err, cause)
	}
	x.children = nil
}

// cancelFunc is x's CancelFunc: a switch point on x, then the cancel.
func (x *twin) cancelFunc(err, cause error) {
	k := ctxOf("context cancel", x.site)
	if k == nil {
		if x.err == nil {
			// No explorer (the twin outlived its run): only the channel.
			x.err, x.cause = err, cause
			close(x.done)
			x.stdCancel(cause)
		}
		return
	}
	w := unsafe.Pointer(x)
	k.Step(w, "cancel the context made at "+x.site)
	was := x.err
	x.cancel(err, cause)
	desc := "cancel the context made at " + x.site
	if was != nil {
		desc += " (cancelled already)"
	}
	// It closes several channels: dependent on every other step.
	k.Did(w, true, true, desc)
}

// WithCancel is context.WithCancel.
func WithCancel(parent context.Context) (context.Context, context.CancelFunc) {
	at := site(1)
	k := ctxOf("context.WithCancel", at)
	if k == nil {
		return context.WithCancel(parent)
	}
	x := newTwin(k, parent, at)
	return x, func() { x.cancelFunc(context.Canceled, nil) }
}

// WithCancelCause is context.WithCancelCause.
func WithCancelCause(parent context.Context) (context.Context, context.CancelCauseFunc) {
	at := site(1)
	k := ctxOf("context.WithCancelCause", at)
	if k == nil {
		return context.WithCancelCause(parent)
	}
	x := newTwin(k, parent, at)
	return x, func(cause error) { x.cancelFunc(context.Canceled, cause) }
}

// WithDeadline is context.WithDeadline, d on the virtual clock.
func WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	at := site(1)
	k := ctxOf("context.WithDeadline", at)
	if k == nil {
		return context.WithDeadline(parent, d)
	}
	x := withDeadline(k, parent, d, nil, at)
	return x, func() { x.cancelFunc(context.Canceled, nil) }
}

// WithDeadlineCause is context.WithDeadlineCause.
func WithDeadlineCause(parent context.Context, d time.Time, cause error) (context.Context, context.CancelFunc) {
	at := site(1)
	k := ctxOf("context.WithDeadlineCause", at)
	if k == nil {
		return context.WithDeadlineCause(parent, d, cause)
	}
	x := withDeadline(k, parent, d, cause, at)
	return x, func() { x.cancelFunc(context.Canceled, nil) }
}

// WithTimeout is context.WithTimeout, on the virtual clock.
func WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	at := site(1)
	k := ctxOf("context.WithTimeout", at)
	if k == nil {
		return context.WithTimeout(parent, d)
	}
	x := withDeadline(k, parent, virtualNow(at).Add(d), nil, at)
	return x, func() { x.cancelFunc(context.Canceled, nil) }
}

// WithTimeoutCause is context.WithTimeoutCause.
func WithTimeoutCause(parent context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	at := site(1)
	k := ctxOf("context.WithTimeoutCause", at)
	if k == nil {
		return context.WithTimeoutCause(parent, d, cause)
	}
	x := withDeadline(k, parent, virtualNow(at).Add(d), cause, at)
	return x, func() { x.cancelFunc(context.Canceled, nil) }
}

// virtualNow is the virtual clock's time, which a deadline needs.
func virtualNow(at string) time.Time {
	if !vclock.On() {
		panic(&UnsupportedError{Site: at, What: "a context's deadline (the virtual clock is off)"})
	}
	return vclock.Now()
}

// withDeadline makes a twin below parent that its deadline d cancels
// with context.DeadlineExceeded (and cause): a timer of the run, unless
// parent's deadline comes first (then parent's cancel is its) or d has
// passed (then it starts cancelled).
func withDeadline(k ctxCtl, parent context.Context, d time.Time, cause error, at string) *twin {
	x := newTwin(k, parent, at)
	if cur, ok := parent.Deadline(); ok && cur.Before(d) {
		return x
	}
	x.deadline, x.hasDeadline = d, true
	now := virtualNow(at)
	if !d.After(now) {
		x.cancel(context.DeadlineExceeded, cause)
		return x
	}
	if x.err != nil {
		return x
	}
	x.timed = true
	start(k, unsafe.Pointer(x), nil, d.Sub(now), 0, nil, func() { x.cancel(context.DeadlineExceeded, cause) }, "context deadline", at)
	return x
}

// Cause is context.Cause.
func Cause(c context.Context) error {
	at := site(1)
	if k := ctxOf("context.Cause", at); k == nil {
		return context.Cause(c)
	}
	x := twinOf(c)
	if x == nil {
		return context.Cause(c)
	}
	_, cause := x.read("Cause")
	return cause
}

// ContextAfterFunc is context.AfterFunc: under the explorer, on a twin, f starts
// as a goroutine of the run when the context is cancelled, and stop is a
// switch point on it.
func ContextAfterFunc(ctx context.Context, f func()) (stop func() bool) {
	at := site(1)
	k := ctxOf("context.AfterFunc", at)
	if k == nil {
		return context.AfterFunc(ctx, f)
	}
	x := twinOf(ctx)
	if x == nil {
		if ctx.Done() == nil {
			// Never done: f never runs.
			a := &afterFunc{f: f, site: at}
			return func() bool { was := !a.done; a.done = true; return was }
		}
		panic(&UnsupportedError{Site: at, What: "context.AfterFunc on a context the explorer does not control (one the test made with the context package, not explore/rt's functions)"})
	}
	a := &afterFunc{f: f, site: at}
	w := unsafe.Pointer(x)
	k.Step(w, "context.AfterFunc on the context made at "+x.site)
	if x.err != nil {
		k.Acquire(x.rel)
		a.done = true
		if why := k.Go(f, at); why != "" {
			panic(&UnsupportedError{Site: at, What: "context.AfterFunc: " + why})
		}
	} else {
		x.afters = append(x.afters, a)
	}
	k.Did(w, true, false, "context.AfterFunc on the context made at "+x.site)
	return func() bool {
		k := ctxOf("stop of context.AfterFunc", at)
		if k == nil {
			was := !a.done
			a.done = true
			return was
		}
		k.Step(w, "stop the AfterFunc made at "+at)
		was := !a.done
		a.done = true
		k.Did(w, true, false, fmt.Sprintf("stop the AfterFunc made at %s: %v", at, was))
		return was
	}
}
