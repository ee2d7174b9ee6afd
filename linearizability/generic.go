package linearizability

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one recorded operation of a backend with its own vocabulary (a
// third-party limiter, say): what client asked, what it got back, and when,
// on the recording's Stamps. Unknown marks a call whose answer was never
// received (Return is then ignored and set to math.MaxInt64 for porcupine).
type Op[In, Out any] struct {
	Client  int   `json:"client"`
	Input   In    `json:"input"`
	Output  Out   `json:"output"`
	Unknown bool  `json:"unknown,omitempty"`
	Call    int64 `json:"call"`
	Return  int64 `json:"return"`
}

// Record is the recorder of RecordTokenBucket for any backend: client c
// runs scripts[c] in order on its own goroutine, every goroutine waits at
// the same barrier before its first call, and each call is bracketed by
// two stamps of one shared Stamps, so the intervals cannot be reordered
// around the operations (porcupine#40). Errors from b follow Backend's
// rules: ErrUnknown is recorded as unknown, ErrNotRun is skipped, any other
// stops the recording and is returned. The history is sorted by call stamp.
func Record[In, Out any](scripts [][]In, b Backend[In, Out]) ([]Op[In, Out], error) {
	if len(scripts) == 0 {
		return nil, fmt.Errorf("linearizability: record: scripts must hold at least one client")
	}
	var broke brake
	var ts Stamps
	perClient := make([][]Op[In, Out], len(scripts))
	var done sync.WaitGroup
	start := barrier{n: int64(len(scripts))}
	for c := range scripts {
		done.Add(1)
		go func() {
			defer done.Done()
			ops := make([]Op[In, Out], 0, len(scripts[c]))
			start.wait()
			for _, in := range scripts[c] {
				if broke.stopped() {
					break
				}
				call := ts.Stamp()
				out, err := b.Do(c, in)
				ret := ts.Stamp()
				op := Op[In, Out]{Client: c, Input: in, Output: out, Call: call, Return: ret}
				if err != nil {
					if !broke.unknown(err) {
						continue
					}
					var zero Out
					op.Output, op.Unknown, op.Return = zero, true, 0
				}
				ops = append(ops, op)
			}
			perClient[c] = ops
		}()
	}
	done.Wait()
	if err := broke.err(); err != nil {
		return nil, err
	}
	var h []Op[In, Out]
	for _, ops := range perClient {
		h = append(h, ops...)
	}
	sort.Slice(h, func(i, j int) bool { return h[i].Call < h[j].Call })
	return h, nil
}

// Porcupine converts a recorded history to porcupine operations: Input and
// Output are the op's own, Metadata its index in ops. An unknown operation
// gets Return = math.MaxInt64 (porcupine's convention, see the package doc);
// m's Step must then accept any output for it.
func Porcupine[In, Out any](ops []Op[In, Out]) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		ret := op.Return
		if op.Unknown {
			ret = math.MaxInt64
		}
		out[i] = porcupine.Operation{ClientId: op.Client, Input: op.Input, Output: op.Output,
			Call: op.Call, Return: ret, Metadata: TBMeta{Index: i}}
	}
	return out
}

// CheckOps checks a history recorded by Record against m, a model supplied
// by the caller (for a third-party limiter: that library's own sequential
// behaviour). primitive names the system in the report; history is what is
// written as <Name>.json beside the visualization when the result is not Ok
// (or opt.AlwaysWrite). An Illegal result's Invariant is invariant.
func CheckOps[In, Out any](primitive, invariant string, m porcupine.Model, ops []Op[In, Out], history any, opt Options) (Report, error) {
	for i, op := range ops {
		if !op.Unknown && op.Return < op.Call {
			return Report{}, fmt.Errorf("linearizability: %s op %d: return %d must not be before call %d", primitive, i, op.Return, op.Call)
		}
	}
	pops := Porcupine(ops)
	parts := 1
	if m.Partition != nil {
		parts = len(m.Partition(pops))
	}
	rep := Report{Primitive: primitive, Ops: len(ops), Partitions: parts, Overlapping: overlapping(pops)}
	start := time.Now()
	res, info := check(m, pops, opt)
	rep.CheckTime = time.Since(start)
	rep.judge(res, invariant, primitive+"'s sequential behaviour", opt.Timeout)
	if rep.Result != Ok || opt.AlwaysWrite {
		if err := writeFiles(&rep, opt, m, pops, info, history, nil); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// Linearization checks ops against m and, when the history is
// linearizable, returns one linearization of it: indices into ops in the
// order the model applied them, partition after partition. Replaying those
// operations in that order on the sequential system gives the recorded
// answers, which turns a concurrent history into a deterministic sequential
// one (to replay and shrink).
func Linearization[In, Out any](m porcupine.Model, ops []Op[In, Out], timeout time.Duration) (Result, []int) {
	res, info := porcupine.CheckOperationsVerbose(m, Porcupine(ops), timeout)
	if res != porcupine.Ok {
		return Result(res), nil
	}
	var order []int
	for _, part := range info.PartialLinearizationsOperations() {
		longest := -1
		for i, lin := range part {
			if longest < 0 || len(lin) > len(part[longest]) {
				longest = i
			}
		}
		if longest < 0 {
			continue
		}
		for _, op := range part[longest] {
			order = append(order, op.Metadata.(TBMeta).Index)
		}
	}
	return Ok, order
}
