package target

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/atomic"
	"github.com/tollgate/tollgate/explore/rt"
	xsync "github.com/tollgate/tollgate/explore/sync"
	"golang.org/x/sync/errgroup"
)

// The scenarios of golang.org/x/sync/errgroup: Go, TryGo and Wait from two
// or three threads, with SetLimit and with WithContext. Every function the
// group runs counts itself (ran, a twin atomic: a switch point) and fails
// with its name when it is a fail.
//
// Three checks:
//
//   - The model: the group's functions, started and still counted as
//     running (every Wait that returns has seen them all end). Go and a
//     TryGo that succeeds start one; a TryGo fails only when as many as
//     the limit may be running; Wait answers the number of functions run
//     (every one started before it) and an error of a failed one, nil when
//     none failed. After the threads, ctx reads the cause of the group's
//     context: the first error, or context.Canceled after a Wait with none.
//     Go and TryGo take effect when they take a slot, Wait when it returns,
//     so every correct run is linearizable with respect to it.
//   - No more functions at a time than the limit: each counts itself
//     around its switch point (busy, the test's own count), and the
//     Invariant checks the count after every step.
//   - The race detector, on the group's error among others: two functions
//     that fail at once must not both write it.
//
// A function may wait on the group's context (watch): it returns once
// the context is done, with the context's error. WithContext's context is
// rewritten to its twin, so that wait is a controlled channel receive: a
// failure that does not cancel the context leaves the watcher blocked and
// Wait with it, which the explorer reports as a deadlock.

// gop is one call: go, fail (a Go whose function fails with Name), watch
// (a Go whose function waits for the group's context to be done and
// returns its error), try, wait, done (this thread starts no more
// functions), join (Wait once every other thread is done), and ctx (after
// the threads).
//
// A Go or TryGo concurrent with Wait may take its slot of the limit
// before Wait returns and count itself in the group's WaitGroup after: a
// TryGo after that Wait fails, and no order of whole calls explains it.
// The WaitGroup's rule (an Add that starts from zero happens before the
// Wait) makes this the caller's race, not the group's, so the scenarios
// that check TryGo after a Wait join: the other threads' done comes
// before it (a twin WaitGroup of the test's, controlled like any).
type gop struct {
	Kind string
	Name string
}

func (o gop) String() string {
	if o.Kind == "fail" {
		return "fail(" + o.Name + ")"
	}
	return o.Kind
}

var (
	goOp  = gop{Kind: "go"}
	watch = gop{Kind: "watch"}
	try   = gop{Kind: "try"}
	wait  = gop{Kind: "wait"}
	done  = gop{Kind: "done"}
	join  = gop{Kind: "join"}
	ctx   = gop{Kind: "ctx"}
)

func fail(name string) gop { return gop{Kind: "fail", Name: name} }

type group struct {
	g     *errgroup.Group
	ctx   context.Context
	ran   atomic.Int64
	subs  xsync.WaitGroup
	busy  int
	limit int
}

func (g *group) fn(err error) func() error {
	return func() error {
		g.busy++
		g.ran.Add(1)
		g.busy--
		return err
	}
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func call(g *group, o gop) string {
	switch o.Kind {
	case "go":
		g.g.Go(g.fn(nil))
		return ""
	case "fail":
		g.g.Go(g.fn(errors.New(o.Name)))
		return ""
	case "watch":
		g.g.Go(func() error {
			rt.Recv(g.ctx.Done()) // this file is not rewritten: a controlled receive
			g.ran.Add(1)
			return g.ctx.Err()
		})
		return ""
	case "try":
		return fmt.Sprint(g.g.TryGo(g.fn(nil)))
	case "done":
		g.subs.Done()
		return ""
	case "wait", "join":
		if o.Kind == "join" {
			g.subs.Wait()
		}
		err := g.g.Wait()
		return fmt.Sprintf("ran %d, %s", g.ran.Load(), errText(err))
	case "ctx":
		return errText(context.Cause(g.ctx))
	}
	panic("unknown errgroup call " + o.Kind)
}

// gstate is the model's state: functions started, of which Active may
// still be running, the names of those that fail, and whether a Wait
// returned.
type gstate struct {
	Started, Active int
	Failed          string
	Waited          bool
}

func model(limit int) *porcupine.Model {
	return &porcupine.Model{
		Init: func() any { return gstate{} },
		Step: func(st, in, out any) (bool, any) {
			s, o, got := st.(gstate), in.(gop), out.(string)
			switch o.Kind {
			case "go", "fail", "watch":
				// A watcher's error is never the group's: it returns only
				// once the context is done, after the first error was kept
				// (or after Wait, which no later error changes).
				s.Started++
				s.Active++
				if o.Kind == "fail" {
					s.Failed += o.Name
				}
				return got == "", s
			case "try":
				if got == "false" {
					return limit > 0 && s.Active >= limit, s
				}
				s.Started++
				s.Active++
				return got == "true", s
			case "done":
				return got == "", s
			case "wait", "join":
				s.Active, s.Waited = 0, true
				return waitOK(s, got), s
			case "ctx":
				switch {
				case s.Failed != "":
					return len(got) == 1 && containsRune(s.Failed, got), s
				case s.Waited:
					return got == context.Canceled.Error(), s
				}
				return got == "nil", s
			}
			return false, s
		},
		Equal:             func(a, b any) bool { return a.(gstate) == b.(gstate) },
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%v → %s", in, out) },
		DescribeState: func(st any) string {
			s := st.(gstate)
			return fmt.Sprintf("started %d, active %d, failed %q", s.Started, s.Active, s.Failed)
		},
	}
}

// waitOK: Wait answers every function started and one failure's name
// (nil when none failed).
func waitOK(s gstate, got string) bool {
	if s.Failed == "" {
		return got == fmt.Sprintf("ran %d, nil", s.Started)
	}
	for _, r := range s.Failed {
		if got == fmt.Sprintf("ran %d, %c", s.Started, r) {
			return true
		}
	}
	return false
}

func containsRune(s, r string) bool {
	for _, c := range s {
		if string(c) == r {
			return true
		}
	}
	return false
}

// spec: limit 0 is no limit; withContext builds the group with
// WithContext(context.Background()).
func spec(limit int, withContext bool, threads [][]gop) explore.Spec[*group, gop, string, struct{}] {
	after := []gop{wait}
	if withContext {
		after = append(after, ctx)
	}
	return explore.Spec[*group, gop, string, struct{}]{
		New: func() *group {
			g := &group{limit: limit, g: new(errgroup.Group), ctx: context.Background()}
			if withContext {
				g.g, g.ctx = errgroup.WithContext(context.Background())
			}
			if limit > 0 {
				g.g.SetLimit(limit)
			}
			for _, ops := range threads {
				if slices.Contains(ops, done) {
					g.subs.Add(1)
				}
			}
			return g
		},
		Threads: threads,
		Call:    call,
		After:   after,
		Model:   model(limit),
		Invariant: func(g *group) error {
			if g.limit > 0 && g.busy > g.limit {
				return fmt.Errorf("%d functions run at once, with a limit of %d", g.busy, g.limit)
			}
			return nil
		},
	}
}

// TestLimitGoWait: a group of limit 1: the second Go waits for the
// first's function to end; Wait answers after every function started
// before it has run.
func TestLimitGoWait(t *testing.T) {
	explorations(t, "limit-go-wait", spec(1, false, [][]gop{{goOp, wait}, {goOp}}))
}

// TestTryGoLimit: TryGo on a group of limit 1 fails only while a function
// runs, and succeeds again after a Wait.
func TestTryGoLimit(t *testing.T) {
	explorations(t, "trygo-limit", spec(1, false, [][]gop{{try, try, done}, {try, done}, {join, try}}))
}

// TestThreeLimit2: three threads on a group of limit 2: two Go and a
// TryGo, then a Wait and a TryGo. DFS at bound 1: with the functions'
// goroutines, bound 2 runs for many minutes.
func TestThreeLimit2(t *testing.T) {
	explorationsAt(t, "three-limit-2", 1, spec(2, false, [][]gop{{goOp, done}, {goOp, try, done}, {join, try}}))
}

// TestFailWait: two functions fail in a group from WithContext: Wait
// answers one's error, and the context's cause is that error.
func TestFailWait(t *testing.T) {
	explorations(t, "fail-wait", spec(0, true, [][]gop{{fail("a"), wait}, {fail("b")}}))
}

// TestWaitCancelledCtx: in a group from WithContext, a function waits on
// the group's context while another thread's function fails: the failure
// cancels the context, the watcher returns, and Wait answers both run and
// the failure's error (never the watcher's context.Canceled); the
// context's cause is the failure.
func TestWaitCancelledCtx(t *testing.T) {
	explorations(t, "wait-cancelled-ctx", spec(0, true, [][]gop{{watch, wait}, {fail("b")}}))
}
