package target

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/jackc/puddle/v2"
	"github.com/tollgate/tollgate/explore"
)

// The scenarios of github.com/jackc/puddle/v2: a Pool of one or two
// resources, Acquire (with context.Background()), Release, Destroy and
// Close from two or three threads. The constructor numbers the resources
// (1, 2, …); each thread holds at most one.
//
// The model is the pool's resources: the idle ones, the acquired ones,
// the numbers ever made, and whether the pool is closed. Acquire takes an
// idle resource when there is one, makes a new one (a number never seen)
// when fewer than the maximum are in use, and fails with ErrClosedPool
// once the pool is closed; it takes effect in the pool's critical section
// where it finds the resource, after it waited for the pool's semaphore,
// so every correct run is linearizable with respect to it. Release
// returns the resource to the idle ones (a closed pool destroys it);
// Destroy and Close drop it. After the threads, stat reads the pool's
// counts, which must be the model's. A thread blocked for good (a slot
// never given back) is the explorer's deadlock; the race detector sees
// the pool's fields and its idle stack.
//
// Acquire with a context another thread cancels needs context control,
// which the explorer does not have yet: TestAcquireCancel tries it and
// records what the explorer says.

// pop is one call: acq, rel (release what the thread holds), destroy
// (destroy it), close, stat (after the threads).
type pop string

type pool struct {
	p    *puddle.Pool[int]
	made int
	held [4]*puddle.Resource[int]
}

func newPool(max int32) *pool {
	x := &pool{}
	p, err := puddle.NewPool(&puddle.Config[int]{
		Constructor: func(context.Context) (int, error) { x.made++; return x.made, nil },
		Destructor:  func(int) {},
		MaxSize:     max,
	})
	if err != nil {
		panic(err)
	}
	x.p = p
	return x
}

// call performs o for thread t. Its output: acq, the resource's number
// (-1: ErrClosedPool); rel and destroy, the number of the resource given
// back (0: the thread held none); stat, the pool's counts.
func call(x *pool, t int, o pop) string {
	switch o {
	case "acq":
		r, err := x.p.Acquire(context.Background())
		switch {
		case errors.Is(err, puddle.ErrClosedPool):
			return "closed"
		case err != nil:
			return "error: " + err.Error()
		}
		x.held[t] = r
		return fmt.Sprint(r.Value())
	case "rel", "destroy":
		r := x.held[t]
		if r == nil {
			return "0"
		}
		x.held[t] = nil
		v := r.Value()
		if o == "rel" {
			r.Release()
		} else {
			r.Destroy()
		}
		return fmt.Sprint(v)
	case "close":
		x.p.Close()
		return ""
	case "stat":
		s := x.p.Stat()
		return fmt.Sprintf("idle %d, acquired %d, constructing %d", s.IdleResources(), s.AcquiredResources(), s.ConstructingResources())
	}
	panic("unknown pool call " + string(o))
}

// pstate: bit i of Idle, InUse and Seen is resource i.
type pstate struct {
	Idle, InUse, Seen uint16
	Closed            bool
}

func model(max int) *porcupine.Model {
	return &porcupine.Model{
		Init: func() any { return pstate{} },
		Step: func(st, in, out any) (bool, any) {
			s, o, got := st.(pstate), in.(pop), out.(string)
			var n int
			fmt.Sscan(got, &n)
			bit := uint16(1) << n
			switch o {
			case "acq":
				switch {
				case s.Closed:
					return got == "closed", s
				case got == "closed" || n <= 0 || n > 15:
					return false, s
				case s.Idle != 0:
					if s.Idle&bit == 0 {
						return false, s
					}
					s.Idle &^= bit
				case s.Seen&bit != 0 || bits.OnesCount16(s.InUse) >= max:
					return false, s
				}
				s.InUse |= bit
				s.Seen |= bit
				return true, s
			case "rel", "destroy":
				if n == 0 {
					return true, s
				}
				if s.InUse&bit == 0 {
					return false, s
				}
				s.InUse &^= bit
				if o == "rel" && !s.Closed {
					s.Idle |= bit
				}
				return true, s
			case "close":
				s.Closed, s.Idle = true, 0
				return got == "", s
			case "stat":
				return got == fmt.Sprintf("idle %d, acquired %d, constructing 0", bits.OnesCount16(s.Idle), bits.OnesCount16(s.InUse)), s
			}
			return false, s
		},
		Equal:             func(a, b any) bool { return a.(pstate) == b.(pstate) },
		DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s → %s", in, out) },
		DescribeState: func(st any) string {
			s := st.(pstate)
			return fmt.Sprintf("idle %016b, in use %016b, closed %v", s.Idle, s.InUse, s.Closed)
		},
	}
}

func spec(max int, threads [][]pop) explore.Spec[*pool, pop, string, struct{}] {
	return explore.Spec[*pool, pop, string, struct{}]{
		New:        func() *pool { return newPool(int32(max)) },
		Threads:    threads,
		CallThread: call,
		After:      []pop{"stat"},
		Model:      model(max),
	}
}

// TestAcquireRelease: two threads share a pool of one resource: the
// second Acquire waits for the first's Release and gets the same one.
func TestAcquireRelease(t *testing.T) {
	explorations(t, "acquire-release", spec(1, [][]pop{{"acq", "rel"}, {"acq", "rel"}}))
}

// TestAcquireDestroy: a Destroy gives the slot back from a goroutine of
// its own: the waiting Acquire makes a new resource.
func TestAcquireDestroy(t *testing.T) {
	explorations(t, "acquire-destroy", spec(1, [][]pop{{"acq", "destroy"}, {"acq", "rel"}}))
}

// TestThree: three threads on a pool of two (DFS at bound 1: the
// constructor's goroutines make bound 2 too many schedules).
func TestThree(t *testing.T) {
	explorationsAt(t, "three", 1, spec(2, [][]pop{{"acq", "rel"}, {"acq", "destroy"}, {"acq", "rel"}}))
}

// TestClose: Close while another thread acquires and releases: Close
// waits for the release, and an Acquire after it fails.
func TestClose(t *testing.T) {
	explorations(t, "close", spec(2, [][]pop{{"acq", "rel"}, {"close", "acq"}}))
}
