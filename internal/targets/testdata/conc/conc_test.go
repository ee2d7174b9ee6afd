package target

import (
	"fmt"
	"testing"
	"time"

	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/pool"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/atomic"
	xsync "github.com/tollgate/tollgate/explore/sync"
)

// The scenarios of github.com/sourcegraph/conc: its goroutine pool
// (pool.Pool, with and without WithMaxGoroutines) and its WaitGroup. Two
// threads submit tasks, each then says it is done (a twin WaitGroup of the
// test's, controlled like any), and a third waits for them, then for the
// pool. Every task counts itself (ran, a twin atomic: a switch point).
//
// The pool starts its workers with go statements and hands them the
// tasks on an unbuffered channel; its limit is a channel of that many
// slots. Three checks:
//
//   - The model: Wait answers every task submitted (all were, before it
//     was called).
//   - No more tasks at a time than the pool's limit: each counts itself
//     around its switch point (busy, the test's own count), and the
//     Invariant checks the count after every step.
//   - No goroutine is left waiting once the threads are done (a leak),
//     and no thread waits for good (a deadlock).
//
// DFS runs at bound 1: the workers are threads too, and three or four
// threads with their workers at bound 2 run for many minutes.

// cop is one call: go (submit a task), done (this thread submits no
// more), wait (after every other thread is done: the pool's or the
// WaitGroup's Wait, then the tasks run).
type cop string

type runner interface {
	Go(func())
	Wait()
}

type subject struct {
	r       runner
	subs    xsync.WaitGroup
	ran     atomic.Int64
	busy    int
	maxBusy int
}

func (x *subject) task() {
	x.busy++
	x.ran.Add(1)
	x.busy--
}

func call(x *subject, o cop) int64 {
	switch o {
	case "go":
		x.r.Go(x.task)
		return 0
	case "done":
		x.subs.Done()
		return 0
	case "wait":
		x.subs.Wait()
		x.r.Wait()
		return x.ran.Load()
	}
	panic("unknown call " + string(o))
}

func step(started int64, _ time.Time, o cop) (int64, int64) {
	switch o {
	case "go":
		return started + 1, 0
	case "wait":
		return started, started
	}
	return started, 0
}

// spec: newRunner builds the pool or WaitGroup, maxBusy is its limit (0:
// none); the last thread waits, the others submit.
func spec(newRunner func() runner, maxBusy int, threads [][]cop) explore.Spec[*subject, cop, int64, int64] {
	return explore.Spec[*subject, cop, int64, int64]{
		New: func() *subject {
			x := &subject{r: newRunner(), maxBusy: maxBusy}
			x.subs.Add(len(threads) - 1)
			return x
		},
		Threads: threads,
		Call:    call,
		Step:    step,
		Invariant: func(x *subject) error {
			if x.maxBusy > 0 && x.busy > x.maxBusy {
				return fmt.Errorf("%d tasks run at once, with a limit of %d", x.busy, x.maxBusy)
			}
			return nil
		},
	}
}

func limited(n int) func() runner {
	return func() runner { return pool.New().WithMaxGoroutines(n) }
}

// TestPool: a pool with no limit: a worker per task the idle workers do
// not take.
func TestPool(t *testing.T) {
	explorationsAt(t, "pool", 1, spec(func() runner { return pool.New() }, 0,
		[][]cop{{"go", "go", "done"}, {"go", "done"}, {"wait"}}))
}

// TestPoolLimit1: a pool of one goroutine: the tasks run one at a time.
func TestPoolLimit1(t *testing.T) {
	explorationsAt(t, "pool-limit-1", 1, spec(limited(1), 1,
		[][]cop{{"go", "go", "done"}, {"go", "done"}, {"wait"}}))
}

// TestPoolLimit2: a pool of two goroutines, three submitters.
func TestPoolLimit2(t *testing.T) {
	explorationsAt(t, "pool-limit-2", 1, spec(limited(2), 2,
		[][]cop{{"go", "done"}, {"go", "done"}, {"go", "done"}, {"wait"}}))
}

// TestWaitGroup: conc's WaitGroup: Wait answers after every Go's function
// ran.
func TestWaitGroup(t *testing.T) {
	explorationsAt(t, "waitgroup", 1, spec(func() runner { return conc.NewWaitGroup() }, 0,
		[][]cop{{"go", "done"}, {"go", "go", "done"}, {"wait"}}))
}
