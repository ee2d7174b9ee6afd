package target

import (
	"fmt"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/tollgate/tollgate/explore"
	"github.com/tollgate/tollgate/explore/atomic"
	"github.com/tollgate/tollgate/explore/rt"
	"golang.org/x/sync/singleflight"
)

// The scenarios of golang.org/x/sync/singleflight: Do, DoChan and Forget
// of one key from two or three threads. The function the calls share
// numbers its executions (1, 2, …) and answers its number.
//
// Two checks:
//
//   - The model: a call answers a new execution (the last one's number
//     plus one) or joins the last one (its number). A joiner joins an
//     execution while it is in the group's map, which is between that
//     execution's start and the next one's, so every correct run is
//     linearizable with respect to it; a call that answers an older
//     execution, or skips one, is not. After the threads, execs reads the
//     number of executions.
//   - At most one execution of the key at a time, unless a Forget came
//     between: the function counts the executions in it around a switch
//     point (the twin atomic that numbers it), and the Invariant checks the
//     count after every step.
//
// A DoChan call receives its result with rt.Recv, which the explorer
// controls (this file is not rewritten: <-ch would block the thread for
// real). A DoChan whose result never comes is a deadlock.

// flight is the group, the execution counter and the executions in the
// function now (busy: the test's own count, no switch point).
type flight struct {
	g     singleflight.Group
	execs atomic.Int64
	busy  int
	max   int
}

func (f *flight) fn() (any, error) {
	f.busy++
	n := f.execs.Add(1)
	f.busy--
	return n, nil
}

func call(f *flight, op string) int64 {
	switch op {
	case "do":
		v, err, _ := f.g.Do("k", f.fn)
		if err != nil {
			return -1
		}
		return v.(int64)
	case "chan":
		r := rt.Recv(f.g.DoChan("k", f.fn))
		if r.Err != nil {
			return -1
		}
		return r.Val.(int64)
	case "forget":
		f.g.Forget("k")
		return 0
	case "execs":
		return f.execs.Load()
	}
	panic("unknown singleflight call " + op)
}

var model = porcupine.Model{
	Init: func() any { return int64(0) },
	Step: func(st, in, out any) (bool, any) {
		s, v := st.(int64), out.(int64)
		switch in.(string) {
		case "forget":
			return v == 0, s
		case "execs":
			return v == s, s
		}
		return v == s+1 || v == s && s > 0, v
	},
	DescribeOperation: func(in, out any) string { return fmt.Sprintf("%s → %v", in, out) },
	DescribeState:     func(st any) string { return fmt.Sprintf("%d executions", st.(int64)) },
}

// spec: max is the most executions at a time (1; 2 with a Forget).
func spec(max int, threads [][]string) explore.Spec[*flight, string, int64, struct{}] {
	return explore.Spec[*flight, string, int64, struct{}]{
		New:     func() *flight { return &flight{max: max} },
		Threads: threads,
		Call:    call,
		After:   []string{"execs"},
		Model:   &model,
		Invariant: func(f *flight) error {
			if f.busy > f.max {
				return fmt.Errorf("%d executions of the key at once", f.busy)
			}
			return nil
		},
	}
}

// TestDo: three Do calls from two threads (the first thread's second
// after its first returned).
func TestDo(t *testing.T) {
	explorations(t, "do", spec(1, [][]string{{"do", "do"}, {"do"}}))
}

// TestDoChan: the same with DoChan, whose execution runs on a goroutine
// the call starts and whose results go to each caller's channel.
func TestDoChan(t *testing.T) {
	explorations(t, "dochan", spec(1, [][]string{{"chan", "chan"}, {"chan"}}))
}

// TestDoMixed: Do and DoChan of one key from three threads.
func TestDoMixed(t *testing.T) {
	explorations(t, "do-dochan", spec(1, [][]string{{"do"}, {"chan"}, {"do"}}))
}

// TestForget: a Forget between two calls lets the second start an
// execution of its own while the first's may still run.
func TestForget(t *testing.T) {
	explorations(t, "forget", spec(2, [][]string{{"do"}, {"forget", "chan"}}))
}
