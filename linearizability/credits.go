package linearizability

import (
	"fmt"
	"math"
	"sort"

	"github.com/anishathalye/porcupine"

	"github.com/tollgate/tollgate/model"
)

// Payload is the payload type of recorded credit-table histories.
type Payload = string

// CrOp is one recorded credit-table operation (spec/credits.md §3, C16).
//
// Kinds that may appear: reserve, enqueue, take, finish, release, sweep,
// bounds, and the world events exit (a holder dies) and close (the owner
// dies). enqueued and snapshot are not atomic scans (spec/credits.md §5) and
// are refused by Validate: a recorder may call them but does not record them.
//
// Call, Return and Unknown are as for TBOp. An unknown reserve is refused by
// Validate: its token would be unknown, and every later step of the model
// depends on it. Unknown enqueue, take, finish, release, exit and close are
// accepted with either outcome; an unknown sweep may free any number of
// rows.
type CrOp struct {
	Client  int                     `json:"client"`
	Input   model.CrInput[Payload]  `json:"input"`
	Output  model.CrOutput[Payload] `json:"output"`
	Unknown bool                    `json:"unknown,omitempty"`
	Call    int64                   `json:"call"`
	Return  int64                   `json:"return"`
}

// CrHistory is a recorded credit-table history with what is needed to replay
// its check.
type CrHistory struct {
	Workload string `json:"workload,omitempty"`
	Mutant   string `json:"mutant,omitempty"`
	Seed     uint64 `json:"seed"`
	Ops      []CrOp `json:"ops"`
	Marks    []Mark `json:"marks,omitempty"`
}

// crStepKind is how one porcupine operation steps the credits model.
type crStepKind uint8

const (
	crWhole    crStepKind = iota // the recorded operation, one step
	crSweepRow                   // one row freed by a sweep (model.Credits.SweepSlot)
	crSweepNil                   // a sweep that freed nothing: no step of the state
)

// CrInput is the Input of a porcupine credit-table operation as built by
// CrHistory.Operations. A sweep that freed k rows becomes k operations with
// Step crSweepRow (Part 1..k of Of k), each over the sweep's interval.
type CrInput struct {
	Op       model.CrInput[Payload]
	step     crStepKind
	Part, Of int
	Optional bool // an unknown sweep's row: may also have freed nothing
}

// CrOutcome is the Output of a porcupine credit-table operation.
type CrOutcome struct {
	Output  model.CrOutput[Payload]
	Unknown bool
}

// CrMeta is the Metadata of a porcupine credit-table operation: the index of
// the operation in CrHistory.Ops.
type CrMeta struct{ Index int }

// Validate reports the first operation that cannot be checked: enqueued or
// snapshot (not atomic), an unknown reserve, an interval that does not run
// forwards, or a defect the model would panic on (model.CrInput.Check, C12:
// an unknown kind, holder 0, a non-class, a slot outside 1..32, epoch 0).
func (h CrHistory) Validate() error {
	for i, op := range h.Ops {
		in := op.Input
		bad := func(field, rule string, v any) error {
			return fmt.Errorf("linearizability: credits op %d (%s): %s %v %s", i, in.Kind, field, v, rule)
		}
		if op.Client < 0 {
			return bad("client", "must be >= 0", op.Client)
		}
		if !op.Unknown && op.Return < op.Call {
			return bad("return", fmt.Sprintf("must not be before call %d", op.Call), op.Return)
		}
		switch in.Kind {
		case model.CrReserve:
			if op.Unknown {
				return bad("unknown", "is not allowed for reserve (its token, which later steps depend on, would be unknown)", true)
			}
		case model.CrEnqueued, model.CrSnapshot:
			return bad("input.kind", "is not an atomic operation (spec/credits.md §5) and cannot be checked; leave it out of the history", in.Kind)
		}
		if d := in.Check(); d != nil {
			return bad("input."+d.Field, d.Rule+" (C12)", d.Value)
		}
		if in.Kind == model.CrSweep && !op.Unknown && (op.Output.Count < 0 || op.Output.Count > model.Slots) {
			return bad("output.count", "must be in 0..32", op.Output.Count)
		}
	}
	return nil
}

// Operations converts the history to porcupine operations for CreditsModel.
// A sweep that freed k rows becomes k operations over the same interval, one
// per row (spec/credits.md §5: a sweep is not one atomic step); a sweep that
// freed none becomes one operation that changes nothing, kept for the
// visualization; an unknown sweep becomes 32 operations that may each free a
// row or not. An unknown operation gets Return = math.MaxInt64.
func (h CrHistory) Operations() []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h.Ops))
	for i, op := range h.Ops {
		ret := op.Return
		if op.Unknown {
			ret = math.MaxInt64
		}
		add := func(in CrInput) {
			ops = append(ops, porcupine.Operation{
				ClientId: op.Client, Input: in, Call: op.Call, Return: ret,
				Output:   CrOutcome{Output: op.Output, Unknown: op.Unknown},
				Metadata: CrMeta{Index: i},
			})
		}
		switch {
		case op.Input.Kind != model.CrSweep:
			add(CrInput{Op: op.Input, step: crWhole})
		case op.Unknown:
			for k := 1; k <= model.Slots; k++ {
				add(CrInput{Op: op.Input, step: crSweepRow, Part: k, Of: model.Slots, Optional: true})
			}
		case op.Output.Count == 0:
			add(CrInput{Op: op.Input, step: crSweepNil})
		default:
			for k := 1; k <= op.Output.Count; k++ {
				add(CrInput{Op: op.Input, step: crSweepRow, Part: k, Of: op.Output.Count})
			}
		}
	}
	return ops
}

// creditsStep returns every state the model can be in after the operation,
// or none when the recorded output is impossible from state.
//
//   - reserve ok{slot, epoch}: model.ClassOf(slot) must be the class asked
//     for, and model.Credits.ReserveSlot must accept the claim (C1, C2: any
//     free slot of the class under concurrency, an epoch no live row carries).
//   - reserve exhausted / no_table: model.Credits.Step must answer the same.
//   - sweep row: one model.Credits.SweepSlot step, on any row it applies to
//     (this is the only nondeterministic step).
//   - everything else: model.Credits.Step, outputs compared with
//     model.CrOutput.Equal; an unknown operation takes the model's step with
//     whatever output it gives.
func creditsStep(s model.Credits[Payload], in CrInput, o CrOutcome) []model.Credits[Payload] {
	switch in.step {
	case crSweepNil:
		return []model.Credits[Payload]{s}
	case crSweepRow:
		var next []model.Credits[Payload]
		if in.Optional {
			next = append(next, s)
		}
		for n := 1; n <= model.Slots; n++ {
			if s2, ok := s.SweepSlot(n); ok {
				next = append(next, s2)
			}
		}
		return next
	}
	if in.Op.Kind == model.CrReserve && o.Output.Result == model.OK {
		tok := o.Output.Token
		if model.TokenDefect(tok) != nil || model.ClassOf(tok.Slot) != in.Op.Class {
			return nil
		}
		s2, ok := s.ReserveSlot(in.Op.Holder, tok)
		if !ok {
			return nil
		}
		return []model.Credits[Payload]{s2}
	}
	s2, out := s.Step(in.Op)
	if o.Unknown || out.Equal(o.Output) {
		return []model.Credits[Payload]{s2}
	}
	return nil
}

// CreditsModel is the porcupine model of the credit table (C16).
//
// A credit-table history is one partition: an exhausted answer couples every
// slot of its class (and a sweep every slot), so no split by slot is sound.
// Histories must therefore stay small; see the package documentation for the
// sizes that check in reasonable time.
//
// Every step calls the model (creditsStep). The one nondeterministic choice,
// which row a sweep step freed, is handled by a search inside Step: the
// porcupine state is the set of model states the history so far can have
// reached (a power-set construction, like porcupine's
// NondeterministicModel.ToModel, but deduplicated through a hash index
// rather than by comparing every pair, which is quadratic in the set). The
// set is kept in a canonical order, so Step is pure and deterministic.
//
// The model cannot see one part of C3 that is global to a history: that no
// epoch is ever issued twice, even after its row is freed. CheckCredits checks
// it over the whole history (CheckEpochs), outside porcupine.
func CreditsModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return newCrStates([]model.Credits[Payload]{{}}) },
		Step: func(state, input, output any) (bool, any) {
			set := state.(crStates)
			var next []model.Credits[Payload]
			for _, s := range set.states {
				next = append(next, creditsStep(s, input.(CrInput), output.(CrOutcome))...)
			}
			if len(next) == 0 {
				return false, state
			}
			return true, newCrStates(next)
		},
		Equal: func(a, b any) bool { return a.(crStates).equal(b.(crStates)) },
		Hash:  func(state any) uint64 { return state.(crStates).hash },
		DescribeOperation: func(input, output any) string {
			return DescribeCrOp(input.(CrInput), output.(CrOutcome))
		},
		DescribeState: func(state any) string {
			set := state.(crStates)
			if len(set.states) == 1 {
				return DescribeCredits(set.states[0])
			}
			out := fmt.Sprintf("one of %d states:", len(set.states))
			for i, s := range set.states {
				if i == 8 {
					out += " …"
					break
				}
				out += " {" + DescribeCredits(s) + "}"
			}
			return out
		},
		DescribeOperationMetadata: func(info any) string {
			if m, ok := info.(CrMeta); ok {
				return fmt.Sprintf("op #%d of the history", m.Index)
			}
			return ""
		},
	}
}

// crStates is a set of credits states without duplicates, ordered by hash
// (ties in the order first generated), with the hash of the whole set.
type crStates struct {
	states []model.Credits[Payload]
	hashes []uint64
	hash   uint64
}

func newCrStates(all []model.Credits[Payload]) crStates {
	var set crStates
	seen := make(map[uint64][]int, len(all))
	for _, s := range all {
		h := hashCredits(s)
		dup := false
		for _, i := range seen[h] {
			if set.states[i].Equal(s) {
				dup = true
				break
			}
		}
		if !dup {
			seen[h] = append(seen[h], len(set.states))
			set.states = append(set.states, s)
			set.hashes = append(set.hashes, h)
		}
	}
	idx := make([]int, len(set.states))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return set.hashes[idx[a]] < set.hashes[idx[b]] })
	states := make([]model.Credits[Payload], len(idx))
	hashes := make([]uint64, len(idx))
	for i, j := range idx {
		states[i], hashes[i] = set.states[j], set.hashes[j]
		set.hash = mix(set.hash, hashes[i])
	}
	set.states, set.hashes = states, hashes
	return set
}

// equal reports whether two sets hold the same states.
func (a crStates) equal(b crStates) bool {
	if a.hash != b.hash || len(a.states) != len(b.states) {
		return false
	}
	for i := range a.states {
		if a.hashes[i] != b.hashes[i] {
			return false
		}
		found := false // states of equal hash may be in any order
		for j := i; j >= 0 && b.hashes[j] == a.hashes[i]; j-- {
			found = found || a.states[i].Equal(b.states[j])
		}
		for j := i + 1; !found && j < len(b.states) && b.hashes[j] == a.hashes[i]; j++ {
			found = a.states[i].Equal(b.states[j])
		}
		if !found {
			return false
		}
	}
	return true
}

// hashCredits hashes a state: equal states hash equally, since it mixes a
// subset of what model.Credits.Equal compares (row states, holders and
// epochs, the last epoch, closed).
func hashCredits(s model.Credits[Payload]) uint64 {
	h := mix(0, s.LastEpoch())
	if s.Closed() {
		h = mix(h, 1)
	}
	for n := 1; n <= model.Slots; n++ {
		r := s.Row(n)
		h = mix(h, uint64(r.State)|uint64(r.Holder)<<8)
		h = mix(h, r.Epoch)
	}
	return h
}

// mix folds v into the hash h (a multiply-xorshift step).
func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + h<<6 + h>>2
	h *= 0xff51afd7ed558ccd
	return h ^ h>>33
}

// DescribeCrOp renders one operation for the visualization: the input as
// model.CrInput.String renders it, a sweep's row step as "sweep row k of n",
// and the answer as model.CrOutput.Answer does, or "?" when it is unknown.
func DescribeCrOp(in CrInput, o CrOutcome) string {
	call := in.Op.String()
	switch {
	case in.step == crSweepRow && in.Optional:
		call = fmt.Sprintf("sweep (outcome unknown) row %d of up to %d", in.Part, in.Of)
	case in.step == crSweepRow:
		call = fmt.Sprintf("sweep row %d of %d", in.Part, in.Of)
	}
	if o.Unknown {
		return call + " → ?"
	}
	return call + " → " + o.Output.Answer(in.Op.Kind)
}

// DescribeCredits renders a credits state: the rows in use, the last epoch,
// and whether the table is closed.
func DescribeCredits(s model.Credits[Payload]) string {
	var b []byte
	for n := 1; n <= model.Slots; n++ {
		r := s.Row(n)
		if r.State == model.Free {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		dead := ""
		if !s.Alive(r.Holder) {
			dead = "†"
		}
		b = fmt.Appendf(b, "%d:%s(h%d%s e%d", n, r.State, r.Holder, dead, r.Epoch)
		if r.HasPayload {
			b = fmt.Appendf(b, " %q", r.Payload)
		}
		b = append(b, ')')
	}
	if len(b) == 0 {
		b = append(b, "all free"...)
	}
	b = fmt.Appendf(b, " | last epoch %d", s.LastEpoch())
	if s.Closed() {
		b = append(b, " | closed"...)
	}
	return string(b)
}

// EpochViolation is a breach of the global half of C3 found by CheckEpochs:
// two successful reserves that carry the same epoch.
type EpochViolation struct {
	Epoch         uint64
	First, Second int // indexes in CrHistory.Ops
}

func (v EpochViolation) Error() string {
	return fmt.Sprintf("C3: epoch %d issued twice, by ops #%d and #%d", v.Epoch, v.First, v.Second)
}

// CheckEpochs checks the global half of C3 over a whole history: every
// successful reserve carries an epoch never issued before (spec/credits.md
// §5). porcupine's state keeps only the rows, so it cannot see an epoch
// reused after its row was freed; this check can.
func CheckEpochs(h CrHistory) *EpochViolation {
	seen := map[uint64]int{}
	for i, op := range h.Ops {
		if op.Input.Kind != model.CrReserve || op.Unknown || op.Output.Result != model.OK {
			continue
		}
		if j, dup := seen[op.Output.Token.Epoch]; dup {
			return &EpochViolation{Epoch: op.Output.Token.Epoch, First: j, Second: i}
		}
		seen[op.Output.Token.Epoch] = i
	}
	return nil
}
