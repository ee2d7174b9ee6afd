package model

import (
	"slices"
	"testing"
)

func tTake(key string, lim Limits, cost float64, now int64) TBInput[string] {
	return TBInput[string]{Kind: TBTake, Key: key, Limits: lim, Cost: cost, NowMs: now}
}

func tPeek(key string, lim Limits, now int64) TBInput[string] {
	return TBInput[string]{Kind: TBPeek, Key: key, Limits: lim, NowMs: now}
}

func tReclaim(lim Limits, now int64) TBInput[string] {
	return TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: now}
}

// tbWant is the model's answer to in after prior.
func tbWant(prior []TBInput[string], in TBInput[string]) TBOutput {
	var t TBTable[string]
	for _, p := range prior {
		t, _ = t.Step(p)
	}
	_, out := t.Step(in)
	return out
}

// refusalRounding finds, by a small deterministic search, an emptied
// bucket where a refused take at t1 that stored its refilled tokens would
// change the bits a take at t2 sees: the case only the T2 explanation
// (a refusal writes) reproduces.
func refusalRounding(t *testing.T) (prior []TBInput[string], in TBInput[string]) {
	for _, rate := range []float64{0.1, 0.3, 0.7, 1.0 / 3} {
		lim := Limits{Capacity: 1, RefillPerSecond: rate}
		b, _, _ := Take(Bucket{}, lim, 1, 0)
		for t1 := int64(1); t1 < 300; t1++ {
			for t2 := t1 + 1; t2 < t1+300; t2++ {
				once := Refill(b, lim, t2)
				twice := Refill(Bucket{Present: true, Tokens: Refill(b, lim, t1), LastMs: t1}, lim, t2)
				if once < 1 && twice < 1 && once != twice {
					return []TBInput[string]{tTake("k", lim, 1, 0), tTake("k", lim, 1, t1)}, tPeek("k", lim, t2)
				}
			}
		}
	}
	t.Fatal("no refusal changes the bits of a later refill")
	return nil, in
}

// TestTBDivergenceRules: every rule of TBDivergence fires, on a history
// small enough to judge by hand; got is the model's answer with the change
// the case names.
func TestTBDivergenceRules(t *testing.T) {
	lim10 := Limits{Capacity: 10, RefillPerSecond: 10}
	lim5 := Limits{Capacity: 5, RefillPerSecond: 10}
	lim3 := Limits{Capacity: 10, RefillPerSecond: 3}
	refusalPrior, refusalIn := refusalRounding(t)
	cases := []struct {
		name  string
		prior []TBInput[string]
		in    TBInput[string]
		got   func(want TBOutput) TBOutput
		id    string
	}{
		{"reset refused", nil, TBInput[string]{Kind: TBReset, Key: "k"},
			func(TBOutput) TBOutput { return TBOutput{} }, "T10"},
		{"reset_all refused", nil, TBInput[string]{Kind: TBResetAll},
			func(TBOutput) TBOutput { return TBOutput{} }, "T10"},
		{"invalid cost accepted", nil, tTake("k", lim10, 11, 0),
			func(TBOutput) TBOutput { return TBOutput{OK: true, Remaining: 0} }, "T9"},
		{"valid refused as invalid", nil, tTake("k", lim10, 1, 0),
			func(TBOutput) TBOutput { return TBOutput{Invalid: FieldCost} }, "T9"},
		{"stale commit stored its clock", []TBInput[string]{tTake("k", lim10, 5, 1000), tTake("k", lim10, 1, 0)}, tTake("k", lim10, 1, 1000),
			func(w TBOutput) TBOutput { w.Remaining = 9; return w }, "T4"},
		{"refusal stored its refill", refusalPrior, refusalIn,
			func(TBOutput) TBOutput { return replayKey(refusalPrior, refusalIn, stepRefusalWrites[string]) }, "T2"},
		{"peek stored its refill", []TBInput[string]{tTake("k", lim10, 10, 0), tPeek("k", lim10, 1000)}, tTake("k", lim10, 1, 500),
			func(w TBOutput) TBOutput { w.Remaining = 9; return w }, "T6"},
		{"not reset", []TBInput[string]{tTake("k", lim10, 10, 0), {Kind: TBReset, Key: "k"}}, tTake("k", lim10, 1, 0),
			func(TBOutput) TBOutput { return TBOutput{} }, "T10"},
		{"not reset by reset_all", []TBInput[string]{tTake("k", lim10, 10, 0), {Kind: TBResetAll}, tPeek("k", lim10, 0)}, tTake("k", lim10, 1, 0),
			func(TBOutput) TBOutput { return TBOutput{} }, "T10"},
		{"peek created the bucket", []TBInput[string]{tPeek("k", lim10, 0)}, tTake("k", lim10, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 8; return w }, "T6"},
		{"over-admission", []TBInput[string]{tTake("k", lim10, 10, 0)}, tTake("k", lim10, 1, 0),
			func(TBOutput) TBOutput { return TBOutput{OK: true, Remaining: 0} }, "T5"},
		{"admitted after a stale clock", []TBInput[string]{tTake("k", lim10, 10, 1000), tTake("k", lim10, 1, 0)}, tTake("k", lim10, 1, 1000),
			func(TBOutput) TBOutput { return TBOutput{OK: true, Remaining: 0} }, "T4"},
		{"false refusal", nil, tTake("k", lim10, 1, 0),
			func(TBOutput) TBOutput { return TBOutput{} }, "T2"},
		{"remaining after a stale clock", []TBInput[string]{tTake("k", lim10, 5, 1000), tTake("k", lim10, 1, 0)}, tTake("k", lim10, 1, 1000),
			func(w TBOutput) TBOutput { w.Remaining = 2.5; return w }, "T4"},
		{"remaining above capacity - cost", nil, tTake("k", lim10, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 9.5; return w }, "T1"},
		{"remaining above capacity - cost after a stale clock", []TBInput[string]{tTake("k", lim10, 5, 1000), tTake("k", lim10, 1, 0)}, tTake("k", lim10, 1, 1000),
			func(w TBOutput) TBOutput { w.Remaining = 9.5; return w }, "T1"},
		{"remaining not clamped to a smaller capacity", []TBInput[string]{tTake("k", lim10, 1, 0)}, tTake("k", lim5, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 8; return w }, "T8"},
		{"remaining rounded otherwise", []TBInput[string]{tTake("k", lim3, 10, 0)}, tTake("k", lim3, 0.5, 333),
			func(w TBOutput) TBOutput { w.Remaining = 0.5; return w }, "T3"},
		{"peek above capacity", []TBInput[string]{tTake("k", lim10, 1, 0)}, tPeek("k", lim10, 10_000),
			func(w TBOutput) TBOutput { w.Tokens = 109; return w }, "T6"},
		{"peek not clamped to a smaller capacity", []TBInput[string]{tTake("k", lim10, 1, 0)}, tPeek("k", lim5, 0),
			func(w TBOutput) TBOutput { w.Tokens = 9; return w }, "T8"},
		{"peek rounded otherwise", []TBInput[string]{tTake("k", lim3, 10, 0)}, tPeek("k", lim3, 333),
			func(w TBOutput) TBOutput { w.Tokens = 1; return w }, "T3"},
		{"retry_after one too many", []TBInput[string]{tTake("k", lim10, 10, 0)}, TBInput[string]{Kind: TBRetryAfter, Key: "k", Limits: lim10, Cost: 1, NowMs: 0},
			func(w TBOutput) TBOutput { w.RetryAfterMs++; return w }, "T7"},
		{"other keys do not count", []TBInput[string]{tTake("j", lim10, 10, 1000), tTake("j", lim10, 1, 0)}, tTake("k", lim10, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 8; return w }, "T3"},
		// Each case below pins one rule's answer where a neighbouring rule
		// would answer otherwise; got is written out, not replayed through
		// the explanation it should match.
		{"stale peek that stored its clock", []TBInput[string]{tTake("k", lim10, 10, 1000), tPeek("k", lim10, 500)}, tTake("k", lim10, 1, 1100),
			func(w TBOutput) TBOutput { w.Remaining = 5; return w }, "T4"},
		{"take behind the floor stamped its clock", []TBInput[string]{tTake("k", lim10, 1, 0), tReclaim(lim10, 1000), tTake("k", lim10, 5, 0), tTake("k", lim10, 1, 200), tTake("k", lim10, 1, 100)}, tTake("k", lim10, 1, 300),
			func(w TBOutput) TBOutput { w.Remaining = 5; return w }, "T12"},
		{"commit behind the floor stored its clock", []TBInput[string]{tReclaim(lim10, 1000), tTake("k", lim10, 5, 0), tPeek("k", lim10, 1000)}, tTake("k", lim10, 1, 1000),
			func(w TBOutput) TBOutput { w.Remaining = 9; return w }, "T4"},
		{"an invalid take clamped the bucket", []TBInput[string]{tTake("k", lim10, 1, 0), tTake("k", lim5, 6, 0)}, tTake("k", lim10, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 4; return w }, "T3"},
		{"an invalid input's capacity does not count", []TBInput[string]{tTake("k", lim5, 1, 0), tTake("k", lim10, 11, 0)}, tTake("k", lim5, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 4.5; return w }, "T1"},
		{"a reset's fields are not a read", []TBInput[string]{{Kind: TBReset, Key: "k", Limits: lim10, Cost: 1}}, tTake("k", lim10, 1, 0),
			func(TBOutput) TBOutput { return TBOutput{} }, "T2"},
		{"a reclaim's fields are not a read", []TBInput[string]{tTake("k", lim10, 1, 0), {Kind: TBReclaim, Limits: lim10, Cost: 1, NowMs: 1000}}, tTake("k", lim10, 1, 1000),
			func(TBOutput) TBOutput { return TBOutput{} }, "T2"},
		{"a forgotten bucket read by a peek", []TBInput[string]{tTake("k", lim10, 1, 0), tReclaim(lim10, 1000), tPeek("k", lim10, 1000)}, tTake("k", lim10, 1, 1000),
			func(TBOutput) TBOutput { return TBOutput{} }, "T6"},
		{"a forgotten bucket never read", []TBInput[string]{tTake("k", lim10, 1, 0), tPeek("k", lim10, 0), tReclaim(lim10, 1000)}, tTake("k", lim10, 1, 1000),
			func(TBOutput) TBOutput { return TBOutput{} }, "T2"},
		{"clocks that never went back", []TBInput[string]{tTake("k", lim10, 1, 0), tTake("k", lim10, 1, 0)}, tTake("k", lim10, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 7.5; return w }, "T3"},
		{"a take committed since the reset", []TBInput[string]{tTake("k", lim10, 1, 0), {Kind: TBReset, Key: "k"}, tTake("k", lim10, 1, 0)}, tTake("k", lim10, 1, 0),
			func(w TBOutput) TBOutput { w.Remaining = 8.5; return w }, "T3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := tbWant(c.prior, c.in)
			got := c.got(want)
			if id := TBDivergence(c.prior, c.in, want, got); id != c.id {
				t.Fatalf("%v after %v: model %v, got %v: classified %q, want %q", c.in, c.prior, want.Answer(c.in.Kind), got.Answer(c.in.Kind), id, c.id)
			}
			if id := TBDivergence(c.prior, c.in, want, want); id != "" {
				t.Fatalf("equal answers classified %q", id)
			}
		})
	}
}

func crIn(k CrKind, h HolderID, tok Token) CrInput[string] {
	return CrInput[string]{Kind: k, Holder: h, Token: tok}
}

func crReserve(h HolderID, c Class) CrInput[string] {
	return CrInput[string]{Kind: CrReserve, Holder: h, Class: c}
}

func crEnqueue(h HolderID, tok Token, p string, now int64) CrInput[string] {
	return CrInput[string]{Kind: CrEnqueue, Holder: h, Token: tok, Payload: p, NowMs: now}
}

// crWant is the model's answer to in after prior.
func crWant(prior []CrInput[string], in CrInput[string]) CrOutput[string] {
	var s Credits[string]
	for _, p := range prior {
		s, _ = s.Step(p)
	}
	_, out := s.Step(in)
	return out
}

// TestCrDivergenceRules: every rule of CrDivergence fires.
func TestCrDivergenceRules(t *testing.T) {
	t1, t2 := Token{Slot: 1, Epoch: 1}, Token{Slot: 2, Epoch: 2}
	recycled := Token{Slot: 1, Epoch: 2}
	fill := slices.Repeat([]CrInput[string]{crReserve(1, General)}, GeneralSlots)
	enq := []CrInput[string]{crReserve(1, General), crEnqueue(1, t1, "p", 0)}
	cases := []struct {
		name  string
		prior []CrInput[string]
		in    CrInput[string]
		got   func(want CrOutput[string]) CrOutput[string]
		id    string
	}{
		{"closed table answered", []CrInput[string]{{Kind: CrClose}}, crReserve(1, General),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{Token: t1} }, "C11"},
		{"live table said no_table", nil, crReserve(1, General),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{Result: NoTable} }, "C11"},
		{"close refused", nil, CrInput[string]{Kind: CrClose},
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C11"},
		{"general reached an internal slot", fill, crReserve(1, General),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{Token: Token{Slot: 27, Epoch: 27}} }, "C1"},
		{"epoch issued again", []CrInput[string]{crReserve(1, General), crIn(CrRelease, 1, t1)}, crReserve(1, General),
			func(w CrOutput[string]) CrOutput[string] { w.Token.Epoch = 1; return w }, "C3"},
		{"not the lowest free slot", nil, crReserve(1, General),
			func(w CrOutput[string]) CrOutput[string] { w.Token.Slot = 2; return w }, "C2"},
		{"exhausted while a slot is free", nil, crReserve(1, Internal),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{Result: Exhausted} }, "C2"},
		{"stale enqueue landed on a recycled slot", []CrInput[string]{crReserve(1, General), crIn(CrRelease, 1, t1), crReserve(1, General)}, crEnqueue(1, t1, "p", 0),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C3"},
		{"foreign holder enqueued", []CrInput[string]{crReserve(1, General)}, crEnqueue(2, t1, "p", 0),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C5"},
		{"enqueue refused", []CrInput[string]{crReserve(1, General)}, crEnqueue(1, t1, "p", 0),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{Result: Lost} }, "C5"},
		{"another payload", enq, crIn(CrTake, 0, t1),
			func(w CrOutput[string]) CrOutput[string] { w.Payload = "q"; return w }, "C6"},
		{"take of a reserved row", []CrInput[string]{crReserve(1, General)}, crIn(CrTake, 0, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{OK: true, Payload: "x"} }, "C6"},
		{"taken twice", append(slices.Clone(enq), crIn(CrTake, 0, t1)), crIn(CrTake, 0, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{OK: true, Payload: "p"} }, "C7"},
		{"payload lost", enq, crIn(CrTake, 0, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C7"},
		{"finished twice", append(slices.Clone(enq), crIn(CrTake, 0, t1), crIn(CrFinish, 0, t1)), crIn(CrFinish, 0, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{OK: true} }, "C8"},
		{"stale finish freed a later reservation", []CrInput[string]{crReserve(1, General), crIn(CrRelease, 1, t1), crReserve(2, General)}, crIn(CrFinish, 0, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{OK: true} }, "C3"},
		{"released by another holder", []CrInput[string]{crReserve(1, General)}, crIn(CrRelease, 2, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{OK: true} }, "C9"},
		{"release refused", []CrInput[string]{crReserve(1, General), crReserve(1, General)}, crIn(CrRelease, 1, t2),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C9"},
		{"sweep freed a live holder's row", []CrInput[string]{crReserve(1, General)}, CrInput[string]{Kind: CrSweep},
			func(w CrOutput[string]) CrOutput[string] { w.Count = 1; return w }, "C10"},
		{"sweep left an exited holder's row", []CrInput[string]{crReserve(1, General), crReserve(1, Internal), {Kind: CrExit, Holder: 1}},
			CrInput[string]{Kind: CrSweep},
			func(w CrOutput[string]) CrOutput[string] { w.Count = 1; return w }, "C17"},
		{"exit refused", nil, CrInput[string]{Kind: CrExit, Holder: 1},
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C10"},
		{"enqueued out of order", []CrInput[string]{crReserve(1, General), crReserve(1, General), crEnqueue(1, t1, "p", 5), crEnqueue(1, t2, "q", 3)},
			CrInput[string]{Kind: CrEnqueued},
			func(w CrOutput[string]) CrOutput[string] {
				w.Entries = slices.Clone(w.Entries)
				slices.Reverse(w.Entries)
				return w
			}, "C13"},
		{"enqueued lost a row", enq, CrInput[string]{Kind: CrEnqueued},
			func(w CrOutput[string]) CrOutput[string] { w.Entries = nil; return w }, "C7"},
		{"snapshot counts", []CrInput[string]{crReserve(1, Internal)}, CrInput[string]{Kind: CrSnapshot},
			func(w CrOutput[string]) CrOutput[string] { w.Snap.Internal.Reserved++; return w }, "C14"},
		{"bounds", nil, CrInput[string]{Kind: CrBounds},
			func(w CrOutput[string]) CrOutput[string] { w.Bounds.Total++; return w }, "C1"},
		{"the class's last slot is inside it", nil, crReserve(1, General),
			func(w CrOutput[string]) CrOutput[string] { _, w.Token.Slot = General.SlotRange(); return w }, "C2"},
		{"an epoch skipped", nil, crReserve(1, General),
			func(w CrOutput[string]) CrOutput[string] { w.Token.Epoch = 2; return w }, "C3"},
		{"exhausted table issued its last epoch again", fill, crReserve(1, General),
			func(CrOutput[string]) CrOutput[string] {
				return CrOutput[string]{Token: Token{Slot: 1, Epoch: GeneralSlots}}
			}, "C3"},
		{"stale enqueue answered exhausted", []CrInput[string]{crReserve(1, General), crIn(CrRelease, 1, t1), crReserve(1, General)}, crEnqueue(1, t1, "p", 0),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{Result: Exhausted} }, "C5"},
		{"released while processing", append(slices.Clone(enq), crIn(CrTake, 0, t1)), crIn(CrRelease, 1, t1),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{OK: true} }, "C9"},
		{"enqueued one row twice", []CrInput[string]{crReserve(1, General), crReserve(1, General), crEnqueue(1, t1, "p", 5), crEnqueue(1, t2, "q", 3)},
			CrInput[string]{Kind: CrEnqueued},
			func(w CrOutput[string]) CrOutput[string] {
				w.Entries = []Entry[string]{w.Entries[0], w.Entries[0]}
				return w
			}, "C7"},
		{"a recycled token is not stale", []CrInput[string]{crReserve(1, General), crIn(CrRelease, 1, t1), crReserve(1, General)}, crIn(CrRelease, 1, recycled),
			func(CrOutput[string]) CrOutput[string] { return CrOutput[string]{} }, "C9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := crWant(c.prior, c.in)
			got := c.got(want)
			if id := CrDivergence(c.prior, c.in, want, got); id != c.id {
				t.Fatalf("%v: model %v, got %v: classified %q, want %q", c.in, want.Answer(c.in.Kind), got.Answer(c.in.Kind), id, c.id)
			}
			if id := CrDivergence(c.prior, c.in, want, want); id != "" {
				t.Fatalf("equal answers classified %q", id)
			}
		})
	}
	// A defect is C12 whatever the answers (the model is never stepped).
	if id := CrDivergence(nil, crReserve(0, General), CrOutput[string]{}, CrOutput[string]{Result: Exhausted}); id != "C12" {
		t.Fatalf("holder 0 classified %q, want C12", id)
	}
	// Prior inputs with a defect are skipped, not stepped.
	if id := CrDivergence([]CrInput[string]{crIn(CrTake, 0, Token{Slot: 40, Epoch: 1})}, crReserve(1, General),
		CrOutput[string]{Token: t1}, CrOutput[string]{Result: Exhausted}); id != "C2" {
		t.Fatalf("a defect in prior: classified %q, want C2", id)
	}
}
