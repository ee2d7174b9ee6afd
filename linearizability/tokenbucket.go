package linearizability

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/tollgate/tollgate/model"
)

// TBOp is one recorded token-bucket operation: what a client asked, what it
// got back, and when (spec/tokenbucket.md §4, T11).
//
// Input.NowMs is the clock reading this call carried. A recorder keeps
// whatever reading the caller had, even when another caller's newer reading
// committed first: those stale readings are exactly what T4 is about.
//
// Call and Return are timestamps from one monotonic base shared by every
// client of the history, with Call < Return; the interval is closed
// (porcupine's convention). Unknown marks a call whose answer was never
// received (the caller went away mid-call): Output is then ignored and the
// checker accepts the operation taking effect at any point after Call, or
// not at all.
type TBOp = Op[model.TBInput[string], model.TBOutput]

// Mark is an event of the run that is not an operation, shown as an
// annotation in the visualization: for instance the shared clock stepping
// forward (Tag "clock"). At is on the same time base as the operations.
type Mark struct {
	Tag  string `json:"tag"`
	At   int64  `json:"at"`
	Text string `json:"text"`
}

// TBHistory is a recorded token-bucket history with what is needed to
// replay its check.
type TBHistory struct {
	Workload string `json:"workload,omitempty"`
	Mutant   string `json:"mutant,omitempty"` // fault name, empty for the real table
	Seed     uint64 `json:"seed"`
	Ops      []TBOp `json:"ops"`
	Marks    []Mark `json:"marks,omitempty"`
}

// TBOutcome is the Output of a porcupine token-bucket operation as built by
// TBHistory.Operations.
type TBOutcome struct {
	Output  model.TBOutput
	Unknown bool
}

// TBMeta is the Metadata of a porcupine token-bucket operation: the index of
// the operation in TBHistory.Ops.
type TBMeta struct{ Index int }

// Validate reports the first operation that cannot be checked: an unknown
// kind, or an interval that does not run forwards. The error names the
// operation, the field and the rule.
func (h TBHistory) Validate() error {
	for i, op := range h.Ops {
		switch op.Input.Kind {
		case model.TBTake, model.TBPeek, model.TBRetryAfter, model.TBReset, model.TBResetAll, model.TBReclaim, model.TBAdmit:
		default:
			return fmt.Errorf("linearizability: token-bucket op %d: input.kind %d is not an operation (take=1 … admit=7)", i, op.Input.Kind)
		}
		if op.Client < 0 {
			return fmt.Errorf("linearizability: token-bucket op %d: client %d must be >= 0", i, op.Client)
		}
		if !op.Unknown && op.Return < op.Call {
			return fmt.Errorf("linearizability: token-bucket op %d: return %d must not be before call %d", i, op.Return, op.Call)
		}
	}
	return nil
}

// Operations converts the history to porcupine operations for
// TokenBucketModel: Input is the model.TBInput, Output a TBOutcome, Metadata
// a TBMeta. An unknown operation gets Return = math.MaxInt64, porcupine's
// convention (as in etcd's model) for an operation that may take effect at
// any later point.
func (h TBHistory) Operations() []porcupine.Operation {
	ops := make([]porcupine.Operation, len(h.Ops))
	for i, op := range h.Ops {
		ret := op.Return
		if op.Unknown {
			ret = math.MaxInt64
		}
		ops[i] = porcupine.Operation{
			ClientId: op.Client,
			Input:    op.Input,
			Call:     op.Call,
			Output:   TBOutcome{Output: op.Output, Unknown: op.Unknown},
			Return:   ret,
			Metadata: TBMeta{Index: i},
		}
	}
	return ops
}

// TokenBucketModel is the porcupine model of the keyed token bucket (T11).
//
// A history is partitioned by key (keys are independent, T8); a reset_all
// and a reclaim are placed in every partition, since they are linearizable
// per key only. The state of a partition is the model.Bucket of its key, and
// Step is model.StepBucket: the arithmetic, the clamp, the monotone
// timestamp, the floor and the retry-after search are the model's, never
// restated here. An operation is accepted when the model's output equals the
// recorded one, floats bit for bit (model.TBOutput.Equal, T3), except that a
// reclaim's count of forgotten buckets is the whole table's, which one key's
// partition cannot judge (the sequential checkers do); an unknown operation
// is accepted with either outcome. Step is pure and deterministic.
func TokenBucketModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByKey,
		Init:      func() any { return model.Bucket{} },
		Step: func(state, input, output any) (bool, any) {
			b := state.(model.Bucket)
			in := input.(model.TBInput[string])
			o := output.(TBOutcome)
			next, out := model.StepBucket(b, in)
			if o.Unknown {
				return true, next
			}
			if in.Kind == model.TBReclaim {
				out.Reclaimed = o.Output.Reclaimed // the table's count (T12)
			}
			return out.Equal(o.Output), next
		},
		Equal: func(a, b any) bool { return model.BucketEqual(a.(model.Bucket), b.(model.Bucket)) },
		Hash: func(state any) uint64 {
			b := state.(model.Bucket)
			h := mix(uint64(b.LastMs), math.Float64bits(b.Tokens))
			if b.Present {
				h = mix(h, 1)
			}
			if b.Floored {
				h = mix(h, uint64(b.FloorMs))
			}
			return h
		},
		DescribeOperation: func(input, output any) string {
			return DescribeTBOp(input.(model.TBInput[string]), output.(TBOutcome))
		},
		DescribeState: func(state any) string {
			b := state.(model.Bucket)
			s := "absent"
			if b.Present {
				s = fmt.Sprintf("tokens=%v last=%dms", b.Tokens, b.LastMs)
			}
			if b.Floored {
				s += fmt.Sprintf(" floor=%dms", b.FloorMs)
			}
			return s
		},
		DescribeOperationMetadata: func(info any) string {
			if m, ok := info.(TBMeta); ok {
				return fmt.Sprintf("op #%d of the history", m.Index)
			}
			return ""
		},
	}
}

// TokenBucketTableModel is the porcupine model of the whole token-bucket
// table, unpartitioned: its state is a model.TBTable and Step is
// model.TBTable.Step. It judges what TokenBucketModel's per-key partitions
// cannot, a reclaim's count of forgotten buckets (T12), at the price of one
// search over every key at once: for the small histories of the explorer,
// whose scenarios reclaim. Unknown operations are accepted with either
// outcome, as there.
//
// A reclaim is linearizable per key only (T11): CheckTokenBucketTable hands
// this model each reclaim that overlaps another operation as its steps
// (TableOperations), a floor step and one step per key, each a porcupine
// operation with the reclaim's interval, stepped by model.TBTable's
// ReclaimFloor and ReclaimKey in the order the model package states: a
// key's step only after the floor step, no reset_all between the first
// step and the last, and the last step accepted only when the reclaim's
// count is the number of its steps that forgot.
func TokenBucketTableModel() porcupine.Model {
	m := TokenBucketModel()
	m.Partition = nil
	m.Init = func() any { return tableState{} }
	m.Step = func(state, input, output any) (bool, any) {
		s := state.(tableState)
		o := output.(TBOutcome)
		if p, ok := input.(reclaimPart); ok {
			return s.part(p, o)
		}
		in := input.(model.TBInput[string])
		if in.Kind == model.TBResetAll && s.open() {
			return false, s // T11: a reclaim acts on one table
		}
		next, out := s.table.Step(in)
		return o.Unknown || out.Equal(o.Output), tableState{table: next, runs: s.runs}
	}
	m.Equal = func(a, b any) bool { return a.(tableState).equal(b.(tableState)) }
	m.Hash = nil
	m.DescribeOperation = func(input, output any) string {
		if p, ok := input.(reclaimPart); ok {
			return p.String() + ": " + DescribeTBOp(p.In, output.(TBOutcome))
		}
		return DescribeTBOp(input.(model.TBInput[string]), output.(TBOutcome))
	}
	m.DescribeState = func(state any) string {
		s := state.(tableState)
		d := fmt.Sprintf("%d buckets present", s.table.Len())
		if s.open() {
			d += ", a reclaim under way"
		}
		return d
	}
	return m
}

// reclaimPart is one step of a reclaim that CheckTokenBucketTable checks
// per key: the floor step (Key empty, Floor set) or the step of Key.
type reclaimPart struct {
	In    model.TBInput[string] // the reclaim's input
	Run   int                   // which of the history's split reclaims (tableState.runs)
	Floor bool
	Key   string
	Keys  int // the number of key steps of the reclaim
}

func (p reclaimPart) String() string {
	if p.Floor {
		return "floor step"
	}
	return "step of " + p.Key
}

// reclaimRun is how far a split reclaim has got: its floor step taken,
// how many of its keys steps it has (keys), has taken, and forgot in.
type reclaimRun struct {
	floored             bool
	keys, steps, forgot int
}

// tableState is TokenBucketTableModel's state: the table and the progress
// of every split reclaim (nil when the history has none). It is a value:
// runs is copied, never changed in place.
type tableState struct {
	table model.TBTable[string]
	runs  []reclaimRun
}

// open reports whether some reclaim has taken its floor step but not all
// of its key steps.
func (s tableState) open() bool {
	for _, r := range s.runs {
		if r.floored && r.steps < r.keys {
			return true
		}
	}
	return false
}

func (s tableState) equal(u tableState) bool {
	return s.table.Equal(u.table) && slices.Equal(s.runs, u.runs)
}

// part steps a reclaim's step p (T11): the floor step first, then each
// key's; the last checks the count, unless the reclaim's answer is unknown.
func (s tableState) part(p reclaimPart, o TBOutcome) (bool, any) {
	runs := slices.Clone(s.runs)
	if len(runs) <= p.Run {
		runs = append(runs, make([]reclaimRun, p.Run+1-len(runs))...)
	}
	r := &runs[p.Run]
	r.keys = p.Keys
	next := s.table
	if p.Floor {
		r.floored = true
		next = next.ReclaimFloor(p.In.NowMs)
	} else {
		if !r.floored {
			return false, s
		}
		var forgot bool
		next, forgot = next.ReclaimKey(p.Key, p.In.Limits, p.In.NowMs)
		r.steps++
		if forgot {
			r.forgot++
		}
	}
	ok := true
	if r.floored && r.steps == p.Keys && !o.Unknown {
		ok = o.Output.Equal(model.TBOutput{OK: true, Reclaimed: r.forgot})
	}
	return ok, tableState{table: next, runs: runs}
}

// TableOperations converts the history to porcupine operations for
// TokenBucketTableModel: Operations, except that a reclaim with valid
// limits whose interval meets another operation's becomes its steps
// (reclaimPart), a floor step and one step for every key an operation of
// the history names, all with the reclaim's interval and metadata. A
// reclaim that overlaps nothing stays one operation: nothing can fall
// between its steps, and its keys' steps commute, so it is Step's reclaim.
func (h TBHistory) TableOperations() []porcupine.Operation {
	ops := h.Operations()
	keySet := map[string]bool{}
	for _, op := range h.Ops {
		if k := op.Input.Kind; k != model.TBReclaim && k != model.TBResetAll {
			keySet[op.Input.Key] = true
		}
	}
	keys := slices.Sorted(maps.Keys(keySet))
	out := make([]porcupine.Operation, 0, len(ops))
	runs := 0
	for i, op := range ops {
		in := op.Input.(model.TBInput[string])
		if in.Kind != model.TBReclaim || model.CheckLimits(in.Limits, 0, false) != nil || !overlapsAny(ops, i) {
			out = append(out, op)
			continue
		}
		part := op
		part.Input = reclaimPart{In: in, Run: runs, Floor: true, Keys: len(keys)}
		out = append(out, part)
		for _, k := range keys {
			part.Input = reclaimPart{In: in, Run: runs, Key: k, Keys: len(keys)}
			out = append(out, part)
		}
		runs++
	}
	return out
}

// overlapsAny reports whether ops[i]'s interval meets another operation's
// (closed intervals, as porcupine takes them).
func overlapsAny(ops []porcupine.Operation, i int) bool {
	for j, op := range ops {
		if j != i && op.Call <= ops[i].Return && ops[i].Call <= op.Return {
			return true
		}
	}
	return false
}

// DescribeTBOp renders one operation for the visualization: the input as
// model.TBInput.String renders it (with the clock reading it carried) and
// the answer as model.TBOutput.Answer does, or "?" when it is unknown.
func DescribeTBOp(in model.TBInput[string], o TBOutcome) string {
	if o.Unknown {
		return in.String() + " → ?"
	}
	return in.String() + " → " + o.Output.Answer(in.Kind)
}

// partitionByKey splits a token-bucket history by key, in key order so the
// partition list is deterministic; reset_all and reclaim join every
// partition.
func partitionByKey(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[string][]porcupine.Operation{}
	var all []porcupine.Operation
	for _, op := range history {
		in := op.Input.(model.TBInput[string])
		if in.Kind == model.TBResetAll || in.Kind == model.TBReclaim {
			all = append(all, op)
			continue
		}
		byKey[in.Key] = append(byKey[in.Key], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		out = append(out, append(byKey[k], all...))
	}
	if len(out) == 0 && len(all) > 0 {
		out = append(out, all)
	}
	return out
}
