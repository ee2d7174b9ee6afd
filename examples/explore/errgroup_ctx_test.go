package counter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/sync/errgroup"
)

// ctxGroup is an errgroup made WithContext, and that context.
// seen receives what the function waiting for the context saw.
type ctxGroup struct {
	g    *errgroup.Group
	ctx  context.Context
	seen chan string
}

// TestErrgroupWithContext: a thread starts a function that fails and one
// that waits for the group's context (which the failure cancels, through
// the context twin errgroup's WithCancelCause now makes), then waits for
// the group: Wait answers the failure, and the waiting function sees the
// context cancelled with the failure as its cause, whatever the order of
// the goroutines' steps and the thread's. A verdict
// where the context's cancel ran outside the explorer before.
func TestErrgroupWithContext(t *testing.T) {
	boom := errors.New("boom")
	spec := explore.Spec[*ctxGroup, string, string, bool]{
		New: func() *ctxGroup {
			g, ctx := errgroup.WithContext(context.Background())
			return &ctxGroup{g: g, ctx: ctx, seen: make(chan string, 1)}
		},
		Threads: [][]string{{"go", "wait"}},
		Call: func(g *ctxGroup, op string) string {
			if op == "wait" {
				err := g.g.Wait()
				return fmt.Sprint(err, "; the waiting function saw ", rt.Recv(g.seen))
			}
			g.g.Go(func() error {
				rt.Recv(g.ctx.Done())
				rt.Send(g.seen)(fmt.Sprint(g.ctx.Err(), ", cause ", rt.Cause(g.ctx)))
				return nil
			})
			g.g.Go(func() error { return boom })
			return ""
		},
		Step: func(started bool, _ time.Time, op string) (bool, string) {
			switch {
			case op == "go":
				return true, ""
			case started:
				return true, "boom; the waiting function saw context canceled, cause boom"
			}
			return false, "nil"
		},
	}
	if r := explore.Check(t, spec); !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}
