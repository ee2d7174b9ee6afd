package counter

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"
)

// flight is a singleflight.Group and a count of the executions of the
// function its calls share. (This file is a test file, which the rewrite
// leaves as written: its atomic is sync/atomic's, no switch point, and it
// receives from the channel DoChan returns with rt.Recv, which the
// explorer controls, where <-ch would block the thread for real.)
type flight struct {
	g     singleflight.Group
	execs atomic.Int64
}

func (f *flight) do(op string) int {
	if op == "execs" {
		return int(f.execs.Load())
	}
	ch := f.g.DoChan(op, func() (any, error) { return int(f.execs.Add(1)), nil })
	return rt.Recv(ch).Val.(int)
}

// flightModel: a call answers the number of the execution it shared: the
// last one (joined) or a new one; the count after the threads is the
// number of executions.
var flightModel = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(st, in, out any) (bool, any) {
		s, v := st.(int), out.(int)
		if in.(string) == "execs" {
			return v == s, s
		}
		return v == s+1 || v == s && s > 0, v
	},
	DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s → %v", in, out) },
}

// TestSingleflightDoChan: three DoChan calls of one key from two threads
// (the first thread's second call after its first returned), each
// receiving its result from the channel: a verdict where the explorer
// gave none (DoChan starts a goroutine and sends on a channel).
func TestSingleflightDoChan(t *testing.T) {
	spec := explore.Spec[*flight, string, int, struct{}]{
		New:     func() *flight { return new(flight) },
		Threads: [][]string{{"k", "k"}, {"k"}},
		After:   []string{"execs"},
		Call:    (*flight).do,
		Model:   &flightModel,
	}
	if r := explore.Check(t, spec); !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}

// group is an errgroup.Group that runs one function at a time
// (SetLimit(1)), and a count of the functions that ran.
type group struct {
	g   errgroup.Group
	ran atomic.Int64
}

// TestErrgroupLimit: two threads start a function each in a group of
// limit 1 (the second Go waits on the group's semaphore channel while the
// first runs), and one waits for the group: Wait answers after every
// function started before it has run. A verdict, with goroutines, a
// channel and a WaitGroup controlled.
func TestErrgroupLimit(t *testing.T) {
	spec := explore.Spec[*group, string, int, int]{
		New: func() *group {
			g := new(group)
			g.g.SetLimit(1)
			return g
		},
		Threads: [][]string{{"go", "wait"}, {"go"}},
		Call: func(g *group, op string) int {
			if op == "wait" {
				if err := g.g.Wait(); err != nil {
					return -1
				}
				return int(g.ran.Load())
			}
			g.g.Go(func() error { g.ran.Add(1); return nil })
			return 0
		},
		Step: func(started int, _ time.Time, op string) (int, int) {
			if op == "wait" {
				return started, started
			}
			return started + 1, 0
		},
	}
	if r := explore.Check(t, spec); !r.Exhaustive {
		t.Fatalf("want an exhaustive search: %s", r.Summary())
	}
}
