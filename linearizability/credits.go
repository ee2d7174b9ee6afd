package linearizability

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tollgate/tollgate/model"
)

// Payload is the payload type of recorded credit-table histories.
type Payload = string

// CrOp is one recorded credit-table operation (spec/credits.md §3, C16).
//
// Kinds that may appear: reserve, enqueue, take, finish, release, sweep,
// enqueued, bounds, and the world events exit (a holder dies) and close (the
// owner dies). snapshot is not an atomic scan (spec/credits.md §5) and is
// refused by Validate. enqueued is not atomic either, but its promise is
// per slot: it is checked by model.CheckListing (CheckListings) and, in
// porcupine, as one read per slot, each at some instant of its interval
// (Operations).
//
// Call, Return and Unknown are as for TBOp. An unknown reserve may have
// claimed any free slot of its class, under an epoch its caller never
// learned, or nothing: its caller must never use a token it does not know
// (it cannot), and the row, if it was claimed, stays reserved until a sweep
// after its holder's exit frees it (model.Credits.ReserveUnseen). Unknown
// enqueue, take, finish, release, exit and close are accepted with either
// outcome; an unknown sweep may free any number of rows.
//
// A sweep is also held to what it must free (C17, spec/credits.md §4): when
// it returns, no reservation it owes may still be reserved. It owes a
// reservation whose reserve answered ok and returned before the sweep was
// called, whose holder's exit returned before that too, and whose reserve
// overlapped no other reserve that claimed the same slot (or may have: one
// of unknown outcome in the slot's class), as impl/credits guarantees no
// more (spec/credits.md C17). OwedBySweeps lists them.
type CrOp = Op[model.CrInput[Payload], model.CrOutput[Payload]]

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
	crSweepEnd                   // the end of a sweep: none of the rows it owes is left (C17)
	crListSlot                   // one slot's read of a listing: the row listed, or a row not enqueued (C13)
	crListNil                    // a listing with no slot to read: no step of the state
)

// CrInput is the Input of a porcupine credit-table operation as built by
// CrHistory.Operations. A sweep that freed k rows becomes k operations with
// Step crSweepRow (Part 1..k of Of), each over the sweep's interval, and,
// when it owes rows (C17), one more, Part Of = k+1, that ends it: it changes
// nothing and holds only in states that leave none of the owed rows
// reserved.
type CrInput struct {
	Op       model.CrInput[Payload]
	step     crStepKind
	Part, Of int
	Optional bool          // an unknown sweep's row: may also have freed nothing
	owed     []model.Token // a sweep's end: the reservations it owes (C17)
	index    int           // the operation's index in CrHistory.Ops
	// A listing's read of one slot: the slot, and the entry listed for it
	// (listed false: the slot is not listed).
	slot   int
	listed bool
	entry  model.Entry[Payload]
}

// CrOutcome is the Output of a porcupine credit-table operation.
type CrOutcome struct {
	Output  model.CrOutput[Payload]
	Unknown bool
	// Settled marks an unknown operation that took effect within its
	// interval or never (Op.Settled): the model offers both.
	Settled bool
}

// CrMeta is the Metadata of a porcupine credit-table operation: the index of
// the operation in CrHistory.Ops.
type CrMeta struct{ Index int }

// Validate reports the first operation that cannot be checked: snapshot
// (not atomic), an interval that does not run forwards, or a defect
// the model would panic on (model.CrInput.Check, C12: an unknown kind,
// holder 0, a non-class, a slot outside 1..32, epoch 0).
func (h CrHistory) Validate() error {
	for i, op := range h.Ops {
		in := op.Input
		bad := func(field, rule string, v any) error {
			return fmt.Errorf("linearizability: credits op %d (%s): %s %v %s", i, in.Kind, field, v, rule)
		}
		if op.Client < 0 {
			return bad("client", "must be >= 0", op.Client)
		}
		if (!op.Unknown || op.Settled) && op.Return < op.Call {
			return bad("return", fmt.Sprintf("must not be before call %d", op.Call), op.Return)
		}
		switch in.Kind {
		case model.CrSnapshot:
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
// per row (spec/credits.md §5: a sweep is not one atomic step), followed,
// when it owes rows (OwedBySweeps), by the operation that ends it and
// holds only if none of them is left reserved (C17); a sweep that freed none
// and owes none becomes one operation that changes nothing, kept for the
// visualization; an unknown sweep becomes 32 operations that may each free a
// row or not, and owes nothing. An unknown operation gets Return =
// math.MaxInt64.
//
// A listing (enqueued) whose answer is known becomes one read per slot
// that it lists or that may hold a row it could list (model.Listings.Rows),
// but for a slot listed with a row it had to list (held throughout the call,
// so its read holds anywhere), each over the listing's interval: it holds in a state whose row of that
// slot is the entry listed or, for a slot not listed, is not enqueued. The
// slots read at their own instants, so the listing need not be one
// snapshot; every other slot is not enqueued at any instant of the call in
// any linearization (no enqueue of it may have taken effect), so reading
// it would prove nothing. An unknown listing, or one with no slot to read,
// is one operation that changes nothing.
func (h CrHistory) Operations() []porcupine.Operation {
	owed := h.OwedBySweeps()
	return h.operations(func(i int) []model.Token { return owed[i] })
}

// bareOperations is Operations without the listings' reads: every listing
// changes nothing and checks nothing.
func (h CrHistory) bareOperations() []porcupine.Operation {
	owed := h.OwedBySweeps()
	return h.build(func(i int) []model.Token { return owed[i] }, false)
}

// operations is Operations with the rows each sweep owes given by owed (by
// the sweep's index in h.Ops; nil: none, and no end operation).
func (h CrHistory) operations(owed func(i int) []model.Token) []porcupine.Operation {
	return h.build(owed, true)
}

// build is operations, with the listings' reads when reads is set.
func (h CrHistory) build(owed func(i int) []model.Token, reads bool) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h.Ops))
	var lists *model.Listings[Payload]
	for i, op := range h.Ops {
		ret := op.Return
		if op.Unknown && !op.Settled {
			ret = math.MaxInt64
		}
		add := func(in CrInput) {
			in.index = i
			ops = append(ops, porcupine.Operation{
				ClientId: op.Client, Input: in, Call: op.Call, Return: ret,
				Output:   CrOutcome{Output: op.Output, Unknown: op.Unknown, Settled: op.Unknown && op.Settled},
				Metadata: CrMeta{Index: i},
			})
		}
		switch {
		case op.Input.Kind == model.CrEnqueued:
			var rs []CrInput
			if reads {
				if lists == nil {
					lists = model.NewListings(h.Timed())
				}
				rs = listReads(op, lists)
			}
			if op.Unknown || len(rs) == 0 {
				add(CrInput{Op: op.Input, step: crListNil})
			}
			for k, in := range rs {
				in.Part, in.Of = k+1, len(rs)
				add(in)
			}
		case op.Input.Kind != model.CrSweep:
			add(CrInput{Op: op.Input, step: crWhole})
		case op.Unknown:
			for k := 1; k <= model.Slots; k++ {
				add(CrInput{Op: op.Input, step: crSweepRow, Part: k, Of: model.Slots, Optional: true})
			}
		default:
			ends := owed(i)
			of := op.Output.Count
			if ends != nil {
				of++
			}
			for k := 1; k <= op.Output.Count; k++ {
				add(CrInput{Op: op.Input, step: crSweepRow, Part: k, Of: of})
			}
			switch {
			case ends != nil:
				add(CrInput{Op: op.Input, step: crSweepEnd, Part: of, Of: of, owed: ends})
			case op.Output.Count == 0:
				add(CrInput{Op: op.Input, step: crSweepNil})
			}
		}
	}
	return ops
}

// listReads is the per-slot reads of a known listing (Operations): the
// slots it lists, and those of the rows it may show (lists.Rows).
func listReads(op CrOp, lists *model.Listings[Payload]) []CrInput {
	if op.Unknown {
		return nil
	}
	var slots [model.Slots + 1]bool
	for _, e := range op.Output.Entries {
		if e.Slot >= 1 && e.Slot <= model.Slots {
			slots[e.Slot] = true
		}
	}
	may, must := lists.Rows(model.TimedCrOp[Payload]{Input: op.Input, Output: op.Output, Call: op.Call, Return: op.Return})
	for _, i := range may {
		if n := lists.Op(i).Input.Token.Slot; n >= 1 && n <= model.Slots {
			slots[n] = true
		}
	}
	var reads []CrInput
	for n := 1; n <= model.Slots; n++ {
		if !slots[n] {
			continue
		}
		in := CrInput{Op: op.Input, step: crListSlot, slot: n}
		for _, e := range op.Output.Entries {
			if e.Slot == n {
				in.listed, in.entry = true, e
				break
			}
		}
		// A slot listed with a row it must show held that row at every
		// instant of the call in every linearization: its read holds
		// wherever it is placed, and would only multiply porcupine's
		// search (each read pending doubles the subsets it tries).
		settled := false
		for _, i := range must {
			settled = settled || (in.listed && model.ListedBy(in.entry, lists.Op(i).Input))
		}
		if !settled {
			reads = append(reads, in)
		}
	}
	return reads
}

// Timed is the history as model.CheckListing reads it: each operation's
// input, output and interval, an unknown one's open to the end
// (math.MaxInt64) unless it is settled.
func (h CrHistory) Timed() []model.TimedCrOp[Payload] {
	out := make([]model.TimedCrOp[Payload], len(h.Ops))
	for i, op := range h.Ops {
		ret := op.Return
		if op.Unknown && !op.Settled {
			ret = math.MaxInt64
		}
		out[i] = model.TimedCrOp[Payload]{Input: op.Input, Output: op.Output, Call: op.Call, Return: ret, Unknown: op.Unknown}
	}
	return out
}

// ListingViolation is a listing of the history that breaks C13 (or C11)
// whatever the linearization (model.CheckListing).
type ListingViolation struct {
	Index int // the listing's index in CrHistory.Ops
	Err   *model.ListingError[Payload]
}

func (v ListingViolation) Error() string {
	return fmt.Sprintf("%s: op #%d, an enqueued listing: %s", v.Err.Invariant, v.Index, v.Err.Detail)
}

// CheckListings checks every listing of the history with
// model.CheckListing and reports the first that breaks its rule.
func CheckListings(h CrHistory) *ListingViolation {
	var lists *model.Listings[Payload]
	var timed []model.TimedCrOp[Payload]
	for i, op := range h.Ops {
		if op.Input.Kind != model.CrEnqueued || op.Unknown {
			continue
		}
		if lists == nil {
			timed = h.Timed()
			lists = model.NewListings(timed)
		}
		if err := lists.Check(timed[i]); err != nil {
			return &ListingViolation{Index: i, Err: err}
		}
	}
	return nil
}

// OwedBySweeps returns, by the index in h.Ops of each sweep whose answer is
// known, the reservations it owes (C17, spec/credits.md §4): those it must
// not leave reserved when it returns, unless the table was closed first.
// A sweep owes reservation R of holder h when
//
//   - R's reserve answered ok (a known outcome) and returned before the
//     sweep was called, and a known exit of h returned before it too: the
//     sweep can only have read R as h's, and h as dead;
//   - R's reserve overlapped in time no other reserve that answered ok with
//     R's slot, nor one of unknown outcome in that slot's class: a reserve
//     that won the slot's previous reservation and is still in flight when
//     R's reserve stores its holder may store its own over it, after which
//     no sweep of impl/credits can ever free R (spec/credits.md C17);
//   - R is not known to be gone before the sweep was called: no release of
//     R's token that answered true, no enqueue of it that answered ok, and
//     no reserve that claimed R's slot after R's reserve returned, returned
//     before the call. (Such a reservation is free or enqueued in every
//     linearization anyway; leaving it out keeps the lists short.)
//
// Every condition is on the real-time order of calls and returns alone, so
// a sweep is never held to a row it may have read before its reserve or its
// holder's exit took effect (no false alarm on a correct table).
// Reservations are named by token; CheckEpochs' C3 (no epoch issued twice)
// makes a token name one reservation.
func (h CrHistory) OwedBySweeps() map[int][]model.Token {
	f := h.sweepFacts()
	if !f.sweeps || len(f.exited) == 0 {
		return nil
	}
	cands := h.unsweptCandidates(&f)
	if len(cands) == 0 {
		return nil
	}
	return h.owedBy(&f, cands)
}

// sweepFacts is what OwedBySweeps reads off a history in one pass.
type sweepFacts struct {
	exited  map[model.HolderID]int64 // holder → earliest return of a known exit
	gone    map[model.Token]int64    // token → earliest known return of a call that ended it
	claims  [model.Slots + 1][]int   // slot → the known ok reserves that claimed it
	unknown [3][]int                 // class → the reserves of unknown outcome
	sweeps  bool                     // some sweep was called
}

// ended records that a call returning at at ended tok, keeping the earliest.
func (f *sweepFacts) ended(tok model.Token, at int64) {
	if g, ok := f.gone[tok]; !ok || at < g {
		f.gone[tok] = at
	}
}

// sweepFacts gathers the exits, the claims of each slot, the reserves of
// unknown outcome and the calls that ended a reservation.
func (h CrHistory) sweepFacts() sweepFacts {
	f := sweepFacts{exited: map[model.HolderID]int64{}, gone: map[model.Token]int64{}}
	for i, op := range h.Ops {
		in := op.Input
		switch {
		case in.Kind == model.CrReserve && op.Unknown:
			if in.Class == model.General || in.Class == model.Internal {
				f.unknown[in.Class] = append(f.unknown[in.Class], i)
			}
		case op.Unknown:
		case in.Kind == model.CrReserve && op.Output.Result == model.OK:
			if model.TokenDefect(op.Output.Token) == nil { // else the model refuses it
				f.claims[op.Output.Token.Slot] = append(f.claims[op.Output.Token.Slot], i)
			}
		case in.Kind == model.CrExit:
			if r, ok := f.exited[in.Holder]; !ok || op.Return < r {
				f.exited[in.Holder] = op.Return
			}
		case in.Kind == model.CrRelease && op.Output.OK, in.Kind == model.CrEnqueue && op.Output.Result == model.OK:
			f.ended(in.Token, op.Return)
		case in.Kind == model.CrSweep:
			f.sweeps = true
		}
	}
	return f
}

// unsweptCandidates returns the reservations some sweep may owe: of a
// holder that exited, whose reserve overlapped no other claim of its slot.
// On the way it records, as ending a reservation, each later claim of its
// slot.
func (h CrHistory) unsweptCandidates(f *sweepFacts) []int {
	var cands []int
	for slot := 1; slot <= model.Slots; slot++ {
		for _, i := range f.claims[slot] {
			if _, ok := f.exited[h.Ops[i].Input.Holder]; !ok {
				continue
			}
			if !h.claimOverlapped(f, slot, i) {
				cands = append(cands, i)
			}
		}
	}
	return cands
}

// claimOverlapped reports whether the reserve h.Ops[i], which claimed slot,
// overlapped in time another known claim of slot or a reserve of unknown
// outcome in its class; every claim of slot called after it returned ends
// it (R was free before that claim).
func (h CrHistory) claimOverlapped(f *sweepFacts, slot, i int) bool {
	r := h.Ops[i]
	overlapped := false
	for _, j := range f.claims[slot] {
		o := h.Ops[j]
		switch {
		case j == i:
		case o.Call <= r.Return && o.Return >= r.Call:
			overlapped = true
		case o.Call > r.Return:
			f.ended(r.Output.Token, o.Return) // R was free before o claimed the slot
		}
	}
	for _, j := range f.unknown[model.ClassOf(slot)] {
		overlapped = overlapped || h.Ops[j].Call <= r.Return
	}
	return overlapped
}

// owedBy returns, by sweep, the candidates it owes: those whose reserve
// and holder's exit returned before the sweep was called, and that no call
// known to have returned before it ended.
func (h CrHistory) owedBy(f *sweepFacts, cands []int) map[int][]model.Token {
	owed := map[int][]model.Token{}
	for i, op := range h.Ops {
		if op.Unknown || op.Input.Kind != model.CrSweep {
			continue
		}
		var toks []model.Token
		for _, c := range cands {
			r := h.Ops[c]
			tok := r.Output.Token
			if r.Return >= op.Call || f.exited[r.Input.Holder] >= op.Call {
				continue
			}
			if g, ok := f.gone[tok]; ok && g < op.Call {
				continue
			}
			toks = append(toks, tok)
		}
		if toks != nil {
			owed[i] = toks
		}
	}
	return owed
}

// creditsStep returns every state the model can be in after the operation,
// or none when the recorded output is impossible from x.
//
//   - reserve ok{slot, epoch}: model.ClassOf(slot) must be the class asked
//     for, and model.Credits.ReserveSlot must accept the claim (C1, C2: any
//     free slot of the class under concurrency, an epoch no live row
//     carries); the reservations of unknown slot must still fit elsewhere.
//   - reserve exhausted / no_table: model.Credits.Step must answer the same
//     on the state with the reservations of unknown slot placed (witness).
//   - reserve, outcome unknown: the state as it was (the call did not run,
//     or found no free slot), or a reservation of unknown slot (crState).
//   - sweep row: one model.Credits.SweepSlot step, on any row it applies to,
//     or the freeing of a reservation of unknown slot whose holder exited.
//   - sweep end: the state as it is, if model.Credits.Unswept holds for none
//     of the reservations the sweep owes (C17); none otherwise.
//   - everything else: model.Credits.Step, outputs compared with
//     model.CrOutput.Equal; an unknown operation takes the model's step with
//     whatever output it gives. (A reservation of unknown slot sits on a
//     free row under an epoch no token carries, so these answer the same
//     with it placed or not.)
func creditsStep(x crState, in CrInput, o CrOutcome) []crState {
	switch in.step {
	case crSweepNil, crListNil:
		return []crState{x}
	case crListSlot:
		return listSlotStep(x, in)
	case crSweepEnd:
		return sweepEndStep(x, in)
	case crSweepRow:
		return sweepRowStep(x, in)
	}
	if in.Op.Kind == model.CrReserve {
		return reserveStep(x, in, o)
	}
	return modelStep(x, in, o)
}

// listSlotStep keeps x when the listing's verdict on its slot matches the
// model: an entry for a row that is enqueued (table open) with the entry's
// epoch, mark and payload, or no entry for a row that is not.
func listSlotStep(x crState, in CrInput) []crState {
	r := x.s.Row(in.slot)
	enqueued := !x.s.Closed() && r.State == model.Enqueued
	e := in.entry
	if in.listed && enqueued && r.Epoch == e.Epoch && r.MarkedMs == e.MarkedMs && r.Payload == e.Payload ||
		!in.listed && !enqueued {
		return []crState{x}
	}
	return nil
}

// sweepEndStep keeps x when the sweep left none of the reservations it
// owes unswept (C17).
func sweepEndStep(x crState, in CrInput) []crState {
	for _, tok := range in.owed {
		if x.s.Unswept(tok) {
			return nil
		}
	}
	return []crState{x}
}

// sweepRowStep returns every state one row of a sweep can lead to: x when
// the step is optional, each row model.Credits.SweepSlot frees, and each
// freeing of a reservation of unknown slot whose holder exited.
func sweepRowStep(x crState, in CrInput) []crState {
	var next []crState
	if in.Optional {
		next = append(next, x)
	}
	for n := 1; n <= model.Slots; n++ {
		if s2, ok := x.s.SweepSlot(n); ok {
			next = append(next, crState{s: s2, unseen: x.unseen})
		}
	}
	return append(next, x.sweepUnseen()...)
}

// reserveStep returns the states a reserve can lead to: its claim, when it
// answered ok with a slot of its class the model lets it claim; x, when the
// model answers the same refusal; every placement, when its outcome is
// unknown.
func reserveStep(x crState, in CrInput, o CrOutcome) []crState {
	switch {
	case o.Unknown:
		return x.reserveUnknown(in.Op.Holder, in.Op.Class)
	case o.Output.Result == model.OK:
		tok := o.Output.Token
		if model.TokenDefect(tok) != nil || model.ClassOf(tok.Slot) != in.Op.Class {
			return nil
		}
		s2, ok := x.s.ReserveSlot(in.Op.Holder, tok)
		if !ok {
			return nil
		}
		if y, ok := x.claimed(s2, tok.Slot); ok {
			return []crState{y}
		}
		return nil
	}
	if _, out := x.witness().Step(in.Op); out.Equal(o.Output) {
		return []crState{x}
	}
	return nil
}

// modelStep takes model.Credits.Step for every other operation: the state
// after it when the outputs agree or the outcome is unknown, and x as well
// when an unknown call's interval is closed (it may never have run).
func modelStep(x crState, in CrInput, o CrOutcome) []crState {
	s2, out := x.s.Step(in.Op)
	switch {
	case o.Unknown && o.Settled:
		// It ran here or never: its interval is closed, so porcupine
		// cannot place it last.
		return []crState{{s: s2, unseen: x.unseen}, x}
	case o.Unknown:
		// It ran here; porcupine places it later, or last (never), if it
		// did not. (Offering "it never ran" here as well doubles the set of
		// states with every unknown operation: a 287-operation history
		// with 20 of them took 27 s to check that way, 15 ms this way.)
		return []crState{{s: s2, unseen: x.unseen}}
	case out.Equal(o.Output):
		return []crState{{s: s2, unseen: x.unseen}}
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
// Every step calls the model (creditsStep). The nondeterministic choices,
// which row a sweep step freed and which slot (if any) a reserve of unknown
// outcome claimed, are handled by a search inside Step: the
// porcupine state is the set of model states the history so far can have
// reached (a power-set construction, like porcupine's
// NondeterministicModel.ToModel, but deduplicated through a hash index
// rather than by comparing every pair, which is quadratic in the set). The
// set is kept in a canonical order, so Step is pure and deterministic.
//
// The row steps of one sweep are interchangeable, so the state also counts
// how many of each sweep's row steps have been taken, and row step k is
// taken only as the k-th: otherwise porcupine would try every subset of
// them (an unknown sweep's 32 optional steps made histories with a few
// unknown sweeps uncheckable in 30 s).
//
// The model cannot see one part of C3 that is global to a history: that no
// epoch is ever issued twice, even after its row is freed. CheckCredits checks
// it over the whole history (CheckEpochs), outside porcupine.
func CreditsModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return newCrStates([]crState{{}}, nil) },
		Step: func(state, input, output any) (bool, any) {
			set := state.(crStates)
			in := input.(CrInput)
			parts := set.parts
			if in.step == crSweepRow {
				var ok bool
				if parts, ok = set.takePart(in); !ok {
					return false, state
				}
			}
			var next []crState
			for _, s := range set.states {
				next = append(next, creditsStep(s, in, output.(CrOutcome))...)
			}
			if len(next) == 0 {
				return false, state
			}
			return true, newCrStates(next, parts)
		},
		Equal: func(a, b any) bool { return a.(crStates).equal(b.(crStates)) },
		Hash:  func(state any) uint64 { return state.(crStates).hash },
		DescribeOperation: func(input, output any) string {
			return DescribeCrOp(input.(CrInput), output.(CrOutcome))
		},
		DescribeState: func(state any) string {
			set := state.(crStates)
			if len(set.states) == 1 {
				return set.states[0].describe()
			}
			out := fmt.Sprintf("one of %d states:", len(set.states))
			for i, s := range set.states {
				if i == 8 {
					out += " …"
					break
				}
				out += " {" + s.describe() + "}"
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
// (ties in the order first generated), with the hash of the whole set, and
// the row steps taken so far of each sweep some but not all of whose row
// steps are taken (the same for every state of the set: it depends only on
// which operations are linearized).
type crStates struct {
	states []crState
	hashes []uint64
	hash   uint64
	parts  []sweepParts // ordered by index
}

// sweepParts says that the first done row steps of the sweep at index of
// the history are taken.
type sweepParts struct{ index, done int }

// takePart returns the parts after row step in, or false if in is not the
// next row step of its sweep.
func (a crStates) takePart(in CrInput) ([]sweepParts, bool) {
	done, at := 0, len(a.parts)
	for i, p := range a.parts {
		if p.index >= in.index {
			at = i
			if p.index == in.index {
				done = p.done
			}
			break
		}
	}
	if in.Part != done+1 {
		return nil, false
	}
	parts := make([]sweepParts, 0, len(a.parts)+1)
	parts = append(parts, a.parts[:at]...)
	rest := a.parts[at:]
	if done > 0 {
		rest = rest[1:]
	}
	if in.Part < in.Of {
		parts = append(parts, sweepParts{in.index, in.Part})
	}
	return append(parts, rest...), true
}

func newCrStates(all []crState, parts []sweepParts) crStates {
	set := crStates{parts: parts}
	states := make([]crState, 0, len(all))
	hashes := make([]uint64, 0, len(all))
	var seen map[uint64][]int // past a few states; below, a scan of hashes
	for _, s := range all {
		h := s.hash()
		dup := false
		if seen == nil && len(states) < 16 {
			for i, g := range hashes {
				if g == h && states[i].equal(s) {
					dup = true
					break
				}
			}
		} else {
			if seen == nil {
				seen = make(map[uint64][]int, len(all))
				for i, g := range hashes {
					seen[g] = append(seen[g], i)
				}
			}
			for _, i := range seen[h] {
				if states[i].equal(s) {
					dup = true
					break
				}
			}
			if !dup {
				seen[h] = append(seen[h], len(states))
			}
		}
		if !dup {
			states = append(states, s)
			hashes = append(hashes, h)
		}
	}
	// By hash, the order of first appearance among equal hashes.
	if len(hashes) <= 16 { // an insertion sort, stable
		for i := 1; i < len(hashes); i++ {
			for j := i; j > 0 && hashes[j] < hashes[j-1]; j-- {
				hashes[j], hashes[j-1] = hashes[j-1], hashes[j]
				states[j], states[j-1] = states[j-1], states[j]
			}
		}
	} else {
		idx := make([]int, len(states))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return hashes[idx[a]] < hashes[idx[b]] })
		sorted, sortedHashes := make([]crState, len(idx)), make([]uint64, len(idx))
		for i, j := range idx {
			sorted[i], sortedHashes[i] = states[j], hashes[j]
		}
		states, hashes = sorted, sortedHashes
	}
	for _, h := range hashes {
		set.hash = mix(set.hash, h)
	}
	set.states, set.hashes = states, hashes
	for _, p := range parts {
		set.hash = mix(mix(set.hash, uint64(p.index)), uint64(p.done))
	}
	return set
}

// equal reports whether two sets hold the same states.
func (a crStates) equal(b crStates) bool {
	if a.hash != b.hash || len(a.states) != len(b.states) || !slices.Equal(a.parts, b.parts) {
		return false
	}
	for i := range a.states {
		if a.hashes[i] != b.hashes[i] {
			return false
		}
		found := false // states of equal hash may be in any order
		for j := i; j >= 0 && b.hashes[j] == a.hashes[i]; j-- {
			found = found || a.states[i].equal(b.states[j])
		}
		for j := i + 1; !found && j < len(b.states) && b.hashes[j] == a.hashes[i]; j++ {
			found = a.states[i].equal(b.states[j])
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
// its end as "sweep end", with the reservations it owes (C17), and the
// answer as model.CrOutput.Answer does, or "?" when it is unknown.
func DescribeCrOp(in CrInput, o CrOutcome) string {
	call := in.Op.String()
	switch {
	case in.step == crSweepRow && in.Optional:
		call = fmt.Sprintf("sweep (outcome unknown) row %d of up to %d", in.Part, in.Of)
	case in.step == crSweepRow:
		call = fmt.Sprintf("sweep row %d of %d", in.Part, o.Output.Count)
	case in.step == crSweepEnd:
		call = "sweep end, owing " + describeToks(in.owed) + " (C17)"
	case in.step == crListSlot && in.listed:
		return fmt.Sprintf("enqueued, read of slot %d (%d of %d) → listed {%d %d %dms %q}", in.slot, in.Part, in.Of,
			in.entry.Slot, in.entry.Epoch, in.entry.MarkedMs, in.entry.Payload)
	case in.step == crListSlot:
		return fmt.Sprintf("enqueued, read of slot %d (%d of %d) → not listed", in.slot, in.Part, in.Of)
	}
	if o.Unknown {
		return call + " → ?"
	}
	return call + " → " + o.Output.Answer(in.Op.Kind)
}

// describeToks renders a list of reservations: the first few tokens, then
// how many more.
func describeToks(toks []model.Token) string {
	const most = 4
	var b []byte
	for i, t := range toks {
		if i == most {
			b = fmt.Appendf(b, " and %d more", len(toks)-most)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "{%d %d}", t.Slot, t.Epoch)
	}
	return string(b)
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
		if r.Epoch == model.UnseenEpoch {
			b = fmt.Appendf(b, "%d:%s(h%d%s e?", n, r.State, r.Holder, dead)
		} else {
			b = fmt.Appendf(b, "%d:%s(h%d%s e%d", n, r.State, r.Holder, dead, r.Epoch)
		}
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

// SweepViolation is a breach of C17 found by FindUnswept: a sweep that
// returned leaving reserved a reservation it owed (OwedBySweeps), in every
// linearization of the history.
type SweepViolation struct {
	Sweep   int         // the sweep's index in CrHistory.Ops
	Token   model.Token // the reservation left (zero: only some of its owed ones together)
	Holder  model.HolderID
	Reserve int // the reservation's reserve, when Token is set
	Exit    int // its holder's first exit to return, when Token is set
	Owed    []model.Token
}

func (v SweepViolation) Error() string {
	if v.Token == (model.Token{}) {
		return fmt.Sprintf("C17: the sweep of op #%d left reserved some of the rows it had to free (%s): every reserve and holder's exit of each returned before the sweep was called, and no linearization frees them first",
			v.Sweep, describeToks(v.Owed))
	}
	return fmt.Sprintf("C17: the sweep of op #%d left reserved %s of %s, which it had to free: its reserve (op #%d) and %s's exit (op #%d) returned before the sweep was called, and no linearization frees the row first",
		v.Sweep, v.Token, v.Holder, v.Reserve, v.Holder, v.Exit)
}

// FindUnswept reports the sweep that breaks C17 in a history that m (the
// credits model) finds illegal only for what its sweeps left reserved: the
// history without any sweep's end is linearizable, and with the ends of
// the sweeps before the one named (in history order) and that one's, it
// is not. It names the reservation when one alone is enough. It reports
// false when the history is illegal without the ends as well (C16 then),
// or a search ran out of timeout (0: none).
func FindUnswept(h CrHistory, m porcupine.Model, timeout time.Duration) (*SweepViolation, bool) {
	owed := h.OwedBySweeps()
	if len(owed) == 0 {
		return nil, false
	}
	sweeps := make([]int, 0, len(owed))
	for i := range owed {
		sweeps = append(sweeps, i)
	}
	slices.Sort(sweeps)
	// legal checks h with the ends of sweeps[:n], and the ends of extra.
	legal := func(n int, extra map[int][]model.Token) (bool, bool) {
		ends := func(i int) []model.Token {
			if t, ok := extra[i]; ok {
				return t
			}
			if j, _ := slices.BinarySearch(sweeps, i); j < n && sweeps[j] == i {
				return owed[i]
			}
			return nil
		}
		res := porcupine.CheckOperationsTimeout(m, h.operations(ends), timeout)
		return res == porcupine.Ok, res != porcupine.Unknown
	}
	n, ok := firstIllegal(len(sweeps), legal)
	if !ok {
		return nil, false
	}
	v := &SweepViolation{Sweep: sweeps[n-1], Owed: owed[sweeps[n-1]]}
	for _, tok := range v.Owed {
		if ok, known := legal(n-1, map[int][]model.Token{v.Sweep: {tok}}); known && !ok {
			v.Token = tok
			break
		}
	}
	if v.Token != (model.Token{}) {
		h.nameReservation(v)
	}
	return v, true
}

// firstIllegal returns the least n in 1..sweeps for which legal(n, nil),
// the history with the ends of the first n sweeps, is illegal, by
// bisection; false when the history without any end is illegal already,
// or a search ran out of time.
func firstIllegal(sweeps int, legal func(n int, extra map[int][]model.Token) (bool, bool)) (int, bool) {
	if ok, known := legal(0, nil); !ok || !known {
		return 0, false
	}
	lo, hi := 1, sweeps // the ends of every sweep together are illegal
	for lo < hi {
		mid := (lo + hi) / 2
		ok, known := legal(mid, nil)
		if !known {
			return 0, false
		}
		if ok {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, true
}

// nameReservation fills in v's reserve (the known ok reserve that issued
// v.Token), its holder, and that holder's known exit that returned first.
func (h CrHistory) nameReservation(v *SweepViolation) {
	v.Exit = -1
	for i, op := range h.Ops {
		switch {
		case op.Unknown:
		case op.Input.Kind == model.CrReserve && op.Output.Result == model.OK && op.Output.Token == v.Token:
			v.Reserve, v.Holder = i, op.Input.Holder
		}
	}
	for i, op := range h.Ops {
		if !op.Unknown && op.Input.Kind == model.CrExit && op.Input.Holder == v.Holder &&
			(v.Exit < 0 || op.Return < h.Ops[v.Exit].Return) {
			v.Exit = i
		}
	}
}
