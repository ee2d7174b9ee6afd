package model

import "slices"

// The classifiers below name the invariant an answer breaks when it differs
// from the model's: the checkers that compare answers (fuzz's
// machines, the conformance harness's vectors and random sessions) report a
// difference by this ID, so a failure says which rule of spec/ to read.
// They judge the first answer that differs, given the inputs before it,
// which all got the model's answers. The rules are tried in order; the
// first that applies names the ID.

// TBDivergence names the invariant of spec/tokenbucket.md that the answer
// got to in breaks, where the model answered want; prior are the inputs
// applied before in, in order (any keys). It returns "" when the answers are
// Equal. The rules, in order:
//
//   - reset, reset_all answered anything but ok: T10.
//   - either answer names an invalid field: T9.
//   - a reclaim answered another count: T12.
//   - got is exactly what the model answers when one rule is taken out:
//     commits store the caller's clock instead of max(last, now): T4; a
//     refused take stores its refilled tokens: T2; a peek stores its
//     refilled tokens (creating the bucket when absent): T6; a take of an
//     absent bucket ignores the floor, or a reclaim forgets nothing: T12.
//   - the key's bucket is absent because a reset removed it: T10.
//   - the key's bucket is absent and a peek or retry_after read it so: T6.
//   - a take admitted that the model refuses: T4 when a stale clock (older
//     than the stored timestamp) reached the key since its last reset, this
//     input included, else T5 (over-admission).
//   - a take refused that the model admits: T2.
//   - remaining or tokens differ: outside what the call allows (0 up to
//     capacity − cost for a take, up to capacity for a peek), which no
//     history of clocks explains: T8 when an earlier call on the key passed
//     a larger capacity (the clamp of the smaller one), else T1 for a take
//     and T6 for a peek; inside it, T4 after a stale clock, otherwise T3
//     (the arithmetic).
//   - retry_after differs: T7.
func TBDivergence[K comparable](prior []TBInput[K], in TBInput[K], want, got TBOutput) string {
	if want.Equal(got) {
		return ""
	}
	switch in.Kind {
	case TBReset, TBResetAll:
		return "T10"
	}
	if want.Invalid != "" || got.Invalid != "" {
		return "T9"
	}
	if in.Kind == TBReclaim {
		return "T12"
	}
	ins := keyInputs(prior, in.Key)
	for _, v := range []struct {
		id   string
		step func(Bucket, TBInput[K]) (Bucket, TBOutput)
	}{{"T4", stepStoresClock[K]}, {"T2", stepRefusalWrites[K]}, {"T6", stepPeekWrites[K]},
		{"T12", stepNoFloor[K]}, {"T12", stepNeverForgets[K]}} {
		if replayKey(ins, in, v.step).Equal(got) {
			return v.id
		}
	}
	f := tbKeyFacts(ins)
	switch {
	case f.afterReset:
		return "T10"
	case !f.bucket.Present && f.readAbsent:
		return "T6"
	}
	stale := f.stale || (f.bucket.Present && in.NowMs < f.bucket.LastMs)
	if in.Kind == TBAdmit && got.OK == want.OK && !got.OK {
		return "T7" // a refusal's wait that is not its state's
	}
	switch in.Kind {
	case TBTake, TBAdmit:
		switch {
		case got.OK && !want.OK && stale:
			return "T4"
		case got.OK && !want.OK:
			return "T5"
		case !got.OK:
			return "T2"
		}
		return tbAmountDivergence(got.Remaining, in.Limits.Capacity-in.Cost, in.Limits.Capacity < f.capMax, stale, "T1")
	case TBPeek:
		return tbAmountDivergence(got.Tokens, in.Limits.Capacity, in.Limits.Capacity < f.capMax, stale, "T6")
	}
	return "T7"
}

// tbAmountDivergence classifies a token amount that differs from the
// model's: most is the largest the call allows, shrunk whether the call's
// capacity is smaller than an earlier one on the key, own the invariant of
// the operation that returned it.
func tbAmountDivergence(got, most float64, shrunk, stale bool, own string) string {
	inside := got >= 0 && got <= most
	switch {
	case !inside && shrunk:
		return "T8"
	case !inside:
		return own
	case stale:
		return "T4"
	}
	return "T3"
}

// keyInputs returns the inputs of prior that act on key: its own and every
// reset_all and reclaim, in order.
func keyInputs[K comparable](prior []TBInput[K], key K) []TBInput[K] {
	var out []TBInput[K]
	for _, in := range prior {
		if in.Kind == TBResetAll || in.Kind == TBReclaim || in.Key == key {
			out = append(out, in)
		}
	}
	return out
}

// replayKey steps ins and then in through step from an absent bucket and
// returns in's output.
func replayKey[K comparable](ins []TBInput[K], in TBInput[K], step func(Bucket, TBInput[K]) (Bucket, TBOutput)) TBOutput {
	var b Bucket
	for _, p := range ins {
		b, _ = step(b, p)
	}
	_, out := step(b, in)
	return out
}

// stored is the bucket a read would leave if it stored what it saw.
func stored(b Bucket, lim Limits, nowMs int64) Bucket {
	last := nowMs
	if b.Present {
		last = max(b.LastMs, nowMs)
	}
	return Bucket{Present: true, Tokens: Refill(b, lim, nowMs), LastMs: last, Floored: b.Floored, FloorMs: b.FloorMs}
}

// stepNoFloor is StepBucket without T12's floor: a take of an absent bucket
// stamps the caller's clock even when the floor is newer.
func stepNoFloor[K comparable](b Bucket, in TBInput[K]) (Bucket, TBOutput) {
	if !b.Present {
		b.Floored, b.FloorMs = false, 0
	}
	return StepBucket(b, in)
}

// stepNeverForgets is StepBucket with reclaims that forget nothing.
func stepNeverForgets[K comparable](b Bucket, in TBInput[K]) (Bucket, TBOutput) {
	if in.Kind == TBReclaim {
		return b, TBOutput{OK: true}
	}
	return StepBucket(b, in)
}

// stepStoresClock is StepBucket without T4: a commit stores the caller's
// clock even when it is older (the seed's rule).
func stepStoresClock[K comparable](b Bucket, in TBInput[K]) (Bucket, TBOutput) {
	next, out := StepBucket(b, in)
	if (in.Kind == TBTake || in.Kind == TBAdmit) && out.OK {
		next.LastMs = in.NowMs
	}
	return next, out
}

// stepRefusalWrites is StepBucket without the second half of T2: a refused
// take stores the refilled tokens.
func stepRefusalWrites[K comparable](b Bucket, in TBInput[K]) (Bucket, TBOutput) {
	next, out := StepBucket(b, in)
	if (in.Kind == TBTake || in.Kind == TBAdmit) && out.Invalid == "" && !out.OK {
		next = stored(b, in.Limits, in.NowMs)
	}
	return next, out
}

// stepPeekWrites is StepBucket without T6's "changes nothing": a peek stores
// the refilled tokens, creating the bucket when it is absent.
func stepPeekWrites[K comparable](b Bucket, in TBInput[K]) (Bucket, TBOutput) {
	next, out := StepBucket(b, in)
	if in.Kind == TBPeek && out.Invalid == "" {
		next = stored(b, in.Limits, in.NowMs)
	}
	return next, out
}

// tbFacts is what the inputs on one key say about it, for TBDivergence.
type tbFacts struct {
	bucket     Bucket  // the model's bucket after the inputs
	afterReset bool    // absent because a reset removed it, and no take committed since
	stale      bool    // since the last reset, a valid input carried a clock older than the stored timestamp (T4)
	readAbsent bool    // since the last reset, a valid peek or retry_after found the bucket absent
	capMax     float64 // the largest capacity of a valid input since the last reset
}

func tbKeyFacts[K comparable](ins []TBInput[K]) tbFacts {
	var f tbFacts
	for _, in := range ins {
		if in.Kind == TBReset || in.Kind == TBResetAll {
			next, _ := StepBucket(f.bucket, in)
			f = tbFacts{afterReset: f.afterReset || f.bucket.Present, bucket: next}
			continue
		}
		if in.Kind == TBReclaim {
			f.bucket, _ = StepBucket(f.bucket, in)
			continue
		}
		if CheckLimits(in.Limits, in.Cost, in.Kind != TBPeek) != nil {
			continue
		}
		f.stale = f.stale || (f.bucket.Present && in.NowMs < f.bucket.LastMs)
		f.readAbsent = f.readAbsent || (!f.bucket.Present && in.Kind != TBTake && in.Kind != TBAdmit)
		f.capMax = max(f.capMax, in.Limits.Capacity)
		next, out := StepBucket(f.bucket, in)
		if out.OK && (in.Kind == TBTake || in.Kind == TBAdmit) {
			f.afterReset = false
		}
		f.bucket = next
	}
	return f
}

// CrDivergence names the invariant of spec/credits.md that the answer got to
// in breaks, where the model answered want; prior are the inputs applied
// before in, in order (inputs with a defect are skipped, as the model never
// sees them). Epochs in got must be the model's numbering: the n-th epoch
// the table issued is n (spec/credits.md §5: used sequentially, the
// implementation's epochs are 1, 2, 3, …). It returns "" when the answers
// are Equal. The rules, in order:
//
//   - in has a defect: C12.
//   - the table is closed, in is close, or got says no_table: C11.
//   - reserve: a slot outside the class: C1; an epoch issued before (or 0)
//     or not the next one: C3; otherwise (another slot, exhausted while one
//     was free, a claim while none was): C2.
//   - enqueue, take, finish, release that changed a row the model refuses
//     to: the row holds another reservation (the token is stale): C3;
//     otherwise by operation: enqueue C5, take C7 when the row was already
//     taken and C6 otherwise, finish C8, release C9.
//   - the same operations refused where the model acts, or answering
//     another payload: enqueue C5, take C7 (a payload lost) or C6 (another
//     payload), finish C8, release C9.
//   - sweep: fewer rows freed than the model frees: C17 (a reserved row of
//     an exited holder left behind); otherwise C10. exit: C10.
//   - enqueued: the model's rows in another order: C13; other rows: C7.
//   - snapshot: C14. bounds: C1.
func CrDivergence[P comparable](prior []CrInput[P], in CrInput[P], want, got CrOutput[P]) string {
	if want.Equal(got) {
		return ""
	}
	if in.Check() != nil {
		return "C12"
	}
	var s Credits[P]
	for _, p := range prior {
		if p.Check() == nil {
			s, _ = s.Step(p)
		}
	}
	if s.Closed() || in.Kind == CrClose || got.Result == NoTable {
		return "C11"
	}
	switch in.Kind {
	case CrReserve:
		first, last := in.Class.SlotRange()
		switch {
		case got.Result == OK && (got.Token.Slot < first || got.Token.Slot > last):
			return "C1"
		case got.Result == OK && want.Result == OK && got.Token.Epoch != want.Token.Epoch:
			return "C3"
		case got.Result == OK && (got.Token.Epoch == 0 || got.Token.Epoch <= s.LastEpoch()):
			return "C3"
		}
		return "C2"
	case CrEnqueue, CrTake, CrFinish, CrRelease:
		return crPinnedDivergence(s, in, want, got)
	case CrSweep:
		if got.Count < want.Count {
			return "C17"
		}
		return "C10"
	case CrExit:
		return "C10"
	case CrEnqueued:
		if sameEntries(want.Entries, got.Entries) {
			return "C13"
		}
		return "C7"
	case CrSnapshot:
		return "C14"
	}
	return "C1" // bounds
}

// ownID is the invariant of each operation that acts on one reservation.
var ownID = map[CrKind]string{CrEnqueue: "C5", CrTake: "C6", CrFinish: "C8", CrRelease: "C9"}

// crPinnedDivergence is CrDivergence for enqueue, take, finish and release,
// on the state s before in.
func crPinnedDivergence[P comparable](s Credits[P], in CrInput[P], want, got CrOutput[P]) string {
	acted := func(o CrOutput[P]) bool {
		if in.Kind == CrEnqueue {
			return o.Result == OK
		}
		return o.OK
	}
	row := s.Row(in.Token.Slot)
	switch {
	case acted(got) && !acted(want) && row.State != Free && row.Epoch != in.Token.Epoch:
		return "C3" // a stale token changed a later reservation
	case in.Kind == CrTake && acted(got) && !acted(want) && row.State == Processing:
		return "C7" // taken twice
	case in.Kind == CrTake && !acted(got) && acted(want):
		return "C7" // a payload enqueued and not taken is gone
	}
	return ownID[in.Kind]
}

// sameEntries reports whether b lists the entries of a in some order.
func sameEntries[P comparable](a, b []Entry[P]) bool {
	if len(a) != len(b) {
		return false
	}
	rest := slices.Clone(b)
	for _, e := range a {
		i := slices.Index(rest, e)
		if i < 0 {
			return false
		}
		rest = slices.Delete(rest, i, i+1)
	}
	return true
}
