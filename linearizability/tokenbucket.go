package linearizability

import (
	"fmt"
	"math"
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
func TokenBucketTableModel() porcupine.Model {
	m := TokenBucketModel()
	m.Partition = nil
	m.Init = func() any { return model.TBTable[string]{} }
	m.Step = func(state, input, output any) (bool, any) {
		next, out := state.(model.TBTable[string]).Step(input.(model.TBInput[string]))
		o := output.(TBOutcome)
		return o.Unknown || out.Equal(o.Output), next
	}
	m.Equal = func(a, b any) bool { return a.(model.TBTable[string]).Equal(b.(model.TBTable[string])) }
	m.Hash = nil
	m.DescribeState = func(state any) string {
		return fmt.Sprintf("%d buckets present", state.(model.TBTable[string]).Len())
	}
	return m
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
