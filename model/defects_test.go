package model

import (
	"fmt"
	"strings"
	"testing"
)

// TestDirectDefectsPanic: C12 for the model's own functions, called
// directly as checkers do: each panics with its defect's message (not an
// index error) on the argument it checks, even where an earlier answer
// (closed, exhausted) would need no argument at all.
func TestDirectDefectsPanic(t *testing.T) {
	var s Credits[int]
	closed := s.Close()
	full := s
	for n := GeneralSlots + 1; n <= Slots; n++ {
		full, _, _ = full.Reserve(9, Internal)
	}
	for name, f := range map[string]func(){
		"ClassOf(0)":                      func() { ClassOf(0) },
		"ClassOf(33)":                     func() { ClassOf(Slots + 1) },
		"Row(0)":                          func() { s.Row(0) },
		"Row(33)":                         func() { s.Row(Slots + 1) },
		"Reserve holder 0, closed":        func() { closed.Reserve(0, General) },
		"Reserve holder 0, exhausted":     func() { full.Reserve(0, Internal) },
		"ReserveSlot holder 0":            func() { s.ReserveSlot(0, Token{Slot: 1, Epoch: 1}) },
		"ReserveSlot epoch 0":             func() { s.ReserveSlot(1, Token{Slot: 1}) },
		"ReserveSlot slot 0":              func() { s.ReserveSlot(1, Token{Epoch: 1}) },
		"ReserveSlot epoch 0 (closed)":    func() { closed.ReserveSlot(1, Token{Slot: 1}) },
		"ReserveSlot holder 0 (closed)":   func() { closed.ReserveSlot(0, Token{Slot: 1, Epoch: 1}) },
		"ReserveUnseen holder 0":          func() { s.ReserveUnseen(0, 1) },
		"ReserveUnseen holder 0 (closed)": func() { closed.ReserveUnseen(0, 1) },
		"ReserveUnseen slot 0":            func() { s.ReserveUnseen(1, 0) },
		"ReserveUnseen slot 33 (closed)":  func() { closed.ReserveUnseen(1, Slots+1) },
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, "defect") {
					t.Errorf("%s: recovered %v, want a defect panic", name, r)
				}
			}()
			f()
		}()
	}
}

// TestExhaustedSeesEverySlot: a class is exhausted only when every one of
// its slots, the first and the last included, is in use.
func TestExhaustedSeesEverySlot(t *testing.T) {
	var s Credits[int]
	if s.Exhausted(General) || s.Exhausted(Internal) {
		t.Fatal("an empty table is exhausted")
	}
	var toks []Token
	for n := GeneralSlots + 1; n <= Slots; n++ {
		var tok Token
		s, tok, _ = s.Reserve(9, Internal)
		toks = append(toks, tok)
	}
	if !s.Exhausted(Internal) || s.Exhausted(General) {
		t.Fatal("a full internal class is not exhausted, or the general one is")
	}
	for _, i := range []int{0, len(toks) - 1} {
		u, ok := s.Release(9, toks[i])
		if !ok {
			t.Fatalf("release of %v refused", toks[i])
		}
		if u.Exhausted(Internal) {
			t.Errorf("slot %d free, yet the internal class is exhausted", toks[i].Slot)
		}
	}
}

// TestCreditsEqualEveryField: two states that differ in one part only
// (a row, the last epoch, closed, the dead holders) are not Equal.
func TestCreditsEqualEveryField(t *testing.T) {
	var base Credits[int]
	row, _, _ := base.Reserve(1, General)
	row.lastEpoch = base.lastEpoch // the row differs, the epoch does not
	epoch := base
	epoch.lastEpoch = 5
	closed := base.Close()
	dead := base.Exit(3)
	for name, u := range map[string]Credits[int]{"row": row, "last epoch": epoch, "closed": closed, "dead": dead} {
		if base.Equal(u) || u.Equal(base) {
			t.Errorf("states differing in %s only are Equal", name)
		}
	}
	if !base.Equal(base) {
		t.Error("a state is not Equal to itself")
	}
}

// TestDirectDefectsPanicClosed: on a closed table the token and holder
// checks still come first (C12).
func TestDirectDefectsPanicClosed(t *testing.T) {
	closed := Credits[int]{}.Close()
	for name, f := range map[string]func(){
		"Enqueue epoch 0":   func() { closed.Enqueue(1, Token{Slot: 1}, 0, 0) },
		"Take epoch 0":      func() { closed.Take(Token{Slot: 1}) },
		"Finish epoch 0":    func() { closed.Finish(Token{Slot: 1}) },
		"Release holder 0":  func() { closed.Release(0, Token{Slot: 1, Epoch: 1}) },
		"Release epoch 0":   func() { closed.Release(1, Token{Slot: 1}) },
		"SweepSlot slot 0":  func() { closed.SweepSlot(0) },
		"SweepSlot slot 33": func() { closed.SweepSlot(Slots + 1) },
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, "defect") {
					t.Errorf("%s: recovered %v, want a defect panic", name, r)
				}
			}()
			f()
		}()
	}
}

// TestEnqueuedOrder: C13, oldest mark first and ties by slot, over every
// general slot enqueued at one of two marks.
func TestEnqueuedOrder(t *testing.T) {
	var s Credits[int]
	for n := 1; n <= GeneralSlots; n++ {
		var tok Token
		s, tok, _ = s.Reserve(1, General)
		s, _ = s.Enqueue(1, tok, n, int64(10-n%2*5)) // odd slots at 5 ms, even at 10
	}
	es := s.Enqueued()
	for i := 1; i < len(es); i++ {
		a, b := es[i-1], es[i]
		if a.MarkedMs > b.MarkedMs || a.MarkedMs == b.MarkedMs && a.Slot >= b.Slot {
			t.Fatalf("entries %d and %d out of order: %+v then %+v", i-1, i, a, b)
		}
	}
	if len(es) != GeneralSlots {
		t.Fatalf("%d entries, want %d", len(es), GeneralSlots)
	}
}

// TestKindStringsOutOfRange: a kind past the names prints as a number.
func TestKindStringsOutOfRange(t *testing.T) {
	for _, k := range []CrKind{CrKind(len(crKindNames)), 99, 255} {
		if got, want := k.String(), fmt.Sprintf("CrKind(%d)", uint8(k)); got != want {
			t.Errorf("%d: %q, want %q", uint8(k), got, want)
		}
	}
}

// TestAmountDivergenceBounds: an amount at either end of [0, most] is
// inside the bound, so a wrong one there is a rounding departure (T3, or
// T4 under stale clocks), not the operation's own invariant.
func TestAmountDivergenceBounds(t *testing.T) {
	for _, c := range []struct {
		got, most     float64
		shrunk, stale bool
		want          string
	}{
		{0, 5, false, false, "T3"},
		{5, 5, false, false, "T3"},
		{5, 5, false, true, "T4"},
		{-1, 5, false, false, "T1"},
		{5.5, 5, false, false, "T1"},
		{5.5, 5, true, false, "T8"},
	} {
		if got := tbAmountDivergence(c.got, c.most, c.shrunk, c.stale, "T1"); got != c.want {
			t.Errorf("tbAmountDivergence(%v, %v, shrunk %v, stale %v) = %s, want %s", c.got, c.most, c.shrunk, c.stale, got, c.want)
		}
	}
}

// TestTBKindStringOutOfRange: a kind past the names prints as a number.
func TestTBKindStringOutOfRange(t *testing.T) {
	for _, k := range []TBKind{TBKind(len(tbKindNames)), 99, 255} {
		if got, want := k.String(), fmt.Sprintf("TBKind(%d)", uint8(k)); got != want {
			t.Errorf("%d: %q, want %q", uint8(k), got, want)
		}
	}
}

// TestTBTableEqualPaths: tables that hold the same buckets and floor are
// Equal however they got there (a bucket stored before a reclaim raised
// the floor, or after), and a table is Equal to itself.
func TestTBTableEqualPaths(t *testing.T) {
	lim := Limits{Capacity: 2, RefillPerSecond: 0.001}
	take := TBInput[string]{Kind: TBTake, Key: "k", Limits: lim, Cost: 1, NowMs: 10}
	reclaim := func(now int64) TBInput[string] { return TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: now} }
	var a, b TBTable[string]
	a, _ = a.Step(reclaim(5))
	a, _ = a.Step(take)
	a, _ = a.Step(reclaim(7)) // k's timestamp 10 is after 7: kept
	b, _ = b.Step(reclaim(7))
	b, _ = b.Step(take)
	if !a.Equal(a) || !a.Equal(b) || !b.Equal(a) {
		t.Fatalf("equal tables compare unequal:\n%+v\n%+v", a, b)
	}
	c, _ := b.Step(take)
	if a.Equal(c) {
		t.Fatal("tables with different tokens for k compare equal")
	}
}

// TestStepBucketCountsReclaim: a reclaim's part for one key counts 1
// exactly when it forgets that key's bucket.
func TestStepBucketCountsReclaim(t *testing.T) {
	lim := Limits{Capacity: 2, RefillPerSecond: 1}
	b, _ := StepBucket(Bucket{}, TBInput[string]{Kind: TBTake, Key: "k", Limits: lim, Cost: 1, NowMs: 0})
	if _, out := StepBucket(b, TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: 500}); out.Reclaimed != 0 {
		t.Errorf("a reclaim of a bucket not yet full counted %d", out.Reclaimed)
	}
	if _, out := StepBucket(b, TBInput[string]{Kind: TBReclaim, Limits: lim, NowMs: 5000}); out.Reclaimed != 1 {
		t.Errorf("a reclaim of a full bucket counted %d, want 1", out.Reclaimed)
	}
}

// TestSweepSlotOnlyReserved: a sweep frees only a reserved row of a dead
// holder, never its enqueued row (C10).
func TestSweepSlotOnlyReserved(t *testing.T) {
	var s Credits[int]
	s, tok, _ := s.Reserve(1, General)
	s, _ = s.Enqueue(1, tok, 7, 0)
	s = s.Exit(1)
	if _, ok := s.SweepSlot(tok.Slot); ok {
		t.Fatal("a sweep freed the enqueued row of an exited holder")
	}
	s, tok2, _ := s.Reserve(2, General)
	s = s.Exit(2)
	if _, ok := s.SweepSlot(tok2.Slot); !ok {
		t.Fatal("a sweep kept the reserved row of an exited holder")
	}
}

// TestAnswerRenderings: the rendering of answers for a failure report:
// every field an answer carries is shown, and a refusal says which.
func TestAnswerRenderings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{TBOutput{}.Answer(0), "rate_limited"},
		{TBOutput{}.Answer(TBPeek), "not ok"},
		{TBOutput{OK: true}.Answer(TBPeek), "ok tokens=0"},
		{TBOutput{OK: true}.Answer(TBReclaim), "ok reclaimed=0"},
		{TBOutput{OK: true, Reclaimed: 3}.Answer(TBReclaim), "ok reclaimed=3"},
		{TBOutput{Reclaimed: 2}.Answer(TBTake), "rate_limited reclaimed=2"},
		{TBOutput{Tokens: 1}.Answer(TBTake), "rate_limited tokens=1"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
	o := CrOutput[int]{Result: Lost, Token: Token{Slot: 3, Epoch: 4}, Payload: 9, Count: 2,
		Entries: []Entry[int]{{Slot: 1, Epoch: 1, Payload: 5}}, Snap: Snapshot{General: Counts{Free: 1}}, Bounds: Bounds{Total: 32}}
	got := o.Answer(CrKind(0))
	for _, part := range []string{"result=lost", "ok=false", "token=slot 3 epoch 4", "payload=", "count=2", "entries=[slot 1 epoch 1", "snapshot={", "bounds={"} {
		if !strings.Contains(got, part) {
			t.Errorf("the answer of an unknown kind %q lacks %q", got, part)
		}
	}
}
