package linearizability

import (
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one recorded operation of any backend: what client asked, what it
// got back, and when, on the recording's Stamps. Unknown marks a call whose
// outcome cannot be known (Output is then the zero value). Its Return is
// ignored and set to math.MaxInt64 for porcupine, unless Settled: the
// backend established that the call could no longer take effect once it
// returned (ErrSettled), so it took effect between Call and Return or not
// at all; the credit-table checker uses that bound, the others do not need
// it. TBOp and CrOp are its
// token-bucket and credit-table instances; a backend with its own
// vocabulary (a third-party limiter) records Ops of its own In and Out.
type Op[In, Out any] struct {
	Client  int   `json:"client"`
	Input   In    `json:"input"`
	Output  Out   `json:"output"`
	Unknown bool  `json:"unknown,omitempty"`
	Settled bool  `json:"settled,omitempty"`
	Call    int64 `json:"call"`
	Return  int64 `json:"return"`
}

// Record records scripts against any backend (a third-party limiter, say)
// through the one client loop RecordTokenBucket also runs (runClients),
// every call made by recording.call as in every recorder: client c runs scripts[c] in order on its own
// goroutine, every goroutine waits at the same barrier before its first
// call, and each call is bracketed by two stamps of one shared Stamps, so
// the intervals cannot be reordered around the operations (porcupine#40).
// Errors from b follow Backend's rules: ErrUnknown is recorded as unknown,
// ErrNotRun is skipped, any other stops the recording and is returned, and
// a panic in b stops it with an error wrapping ErrPanicked. The history is
// sorted by call stamp.
func Record[In, Out any](scripts [][]In, b Backend[In, Out]) ([]Op[In, Out], error) {
	if len(scripts) == 0 {
		return nil, fmt.Errorf("linearizability: record: scripts must hold at least one client")
	}
	return runClients(&recording[In, Out]{b: b}, scripts, func(_ int, in In) In { return in })
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
	res := check(m, pops, opt)
	rep.CheckTime = time.Since(start)
	rep.judge(res, invariant, primitive+"'s sequential behaviour", opt.Timeout)
	if rep.Result != Ok || opt.AlwaysWrite {
		if err := writeFiles(&rep, opt, m, pops, history, nil); err != nil {
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
