package model

import (
	"math/rand/v2"
	"testing"
)

// TestUnswept: C17's question about one reservation. A row is unswept while
// it is reserved under that epoch by a holder that has exited, on a live
// table; the sweep frees it, and nothing else about the row counts.
func TestUnswept(t *testing.T) {
	var s Credits[string]
	s, a, _ := s.Reserve(1, General)  // slot 1, h1
	s, b, _ := s.Reserve(2, General)  // slot 2, h2, stays alive
	s, c, _ := s.Reserve(1, Internal) // slot 27, h1
	s, d, _ := s.Reserve(1, General)  // slot 3, h1, enqueued below
	s, _ = s.Enqueue(1, d, "p", 0)
	if s.Unswept(a) || s.Unswept(c) {
		t.Fatal("a live holder's reservation is unswept")
	}
	s = s.Exit(1)
	for _, tok := range []Token{a, c} {
		if !s.Unswept(tok) {
			t.Fatalf("%v: reserved by an exited holder, but not unswept", tok)
		}
	}
	if s.Unswept(b) || s.Unswept(d) {
		t.Fatal("a live holder's row or an enqueued row is unswept")
	}
	if s.Unswept(Token{Slot: a.Slot, Epoch: a.Epoch + 10}) {
		t.Fatal("another epoch of the slot is unswept: the token names one reservation")
	}
	if one, _ := s.SweepSlot(c.Slot); !one.Unswept(a) || one.Unswept(c) {
		t.Fatal("a per-row sweep step frees its row and only its row")
	}
	swept, n := s.Sweep()
	if n != 2 || swept.Unswept(a) || swept.Unswept(c) {
		t.Fatalf("Sweep freed %d rows and left %v, %v: it must leave none unswept", n, swept.Row(a.Slot), swept.Row(c.Slot))
	}
	if s.Close().Unswept(a) {
		t.Fatal("a closed table has no rows to sweep (C11)")
	}
	// A recycled slot: the reservation is gone, whoever holds the slot now.
	again, _ := swept.Exit(2).ReserveSlot(2, Token{Slot: a.Slot, Epoch: 9})
	if again.Unswept(a) || !again.Unswept(Token{Slot: a.Slot, Epoch: 9}) {
		t.Fatal("the slot's next reservation is not the one swept")
	}
}

// TestSweepIsComplete: over random sequences of every operation, a sweep
// leaves no reservation of an exited holder (C17) and frees nothing else
// (C10), and the per-row steps a concurrent sweep is made of, applied to
// every slot, are the same sweep.
func TestSweepIsComplete(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	for seq := range 200 {
		var s Credits[string]
		var toks []Token
		for range 60 {
			h := HolderID(1 + rng.IntN(4))
			var in CrInput[string]
			switch k := rng.IntN(10); {
			case k < 4:
				in = CrInput[string]{Kind: CrReserve, Holder: h, Class: Class(1 + rng.IntN(2))}
			case k < 6 && len(toks) > 0:
				in = CrInput[string]{Kind: []CrKind{CrEnqueue, CrRelease, CrTake, CrFinish}[rng.IntN(4)],
					Holder: h, Token: toks[rng.IntN(len(toks))], Payload: "p"}
			case k < 8:
				in = CrInput[string]{Kind: CrExit, Holder: h}
			default:
				in = CrInput[string]{Kind: CrSweep}
			}
			if rng.IntN(300) == 0 {
				in = CrInput[string]{Kind: CrClose}
			}
			if in.Kind == CrSweep {
				checkSweep(t, seq, s)
			}
			var out CrOutput[string]
			s, out = s.Step(in)
			if in.Kind == CrReserve && out.Result == OK {
				toks = append(toks, out.Token)
			}
		}
		checkSweep(t, seq, s)
	}
}

// checkSweep checks one sweep from state s (TestSweepIsComplete).
func checkSweep(t *testing.T, seq int, s Credits[string]) {
	t.Helper()
	swept, n := s.Sweep()
	perRow := s
	freed := 0
	for slot := 1; slot <= Slots; slot++ {
		r := s.Row(slot)
		owed := !s.Closed() && r.State == Reserved && !s.Alive(r.Holder)
		if r.State != Free {
			tok := Token{Slot: slot, Epoch: r.Epoch}
			if s.Unswept(tok) != owed {
				t.Fatalf("seq %d: slot %d %+v alive %v: Unswept %v, want %v", seq, slot, r, s.Alive(r.Holder), s.Unswept(tok), owed)
			}
			if swept.Unswept(tok) {
				t.Fatalf("seq %d: Sweep left slot %d %+v of an exited holder reserved (C17)", seq, slot, r)
			}
			if !owed && swept.Row(slot) != r {
				t.Fatalf("seq %d: Sweep changed slot %d %+v, which it does not owe (C10)", seq, slot, r)
			}
		}
		var ok bool
		if perRow, ok = perRow.SweepSlot(slot); ok {
			freed++
		}
	}
	if !perRow.Equal(swept) || freed != n {
		t.Fatalf("seq %d: the per-row steps freed %d rows, Sweep %d, or left another state", seq, freed, n)
	}
}

// TestListedBy: an entry is the row of the enqueue of its token with its
// payload and mark, and of no other (C13).
func TestListedBy(t *testing.T) {
	in := CrInput[string]{Kind: CrEnqueue, Holder: 1, Token: Token{Slot: 27, Epoch: 7}, Payload: "p", NowMs: 5}
	e := Entry[string]{Slot: 27, Epoch: 7, MarkedMs: 5, Payload: "p"}
	if !ListedBy(e, in) {
		t.Fatalf("%+v is the row of %+v", e, in)
	}
	for _, bad := range []Entry[string]{
		{Slot: 27, Epoch: 39, MarkedMs: 5, Payload: "p"}, // another reservation's token
		{Slot: 28, Epoch: 7, MarkedMs: 5, Payload: "p"},
		{Slot: 27, Epoch: 7, MarkedMs: 6, Payload: "p"},
		{Slot: 27, Epoch: 7, MarkedMs: 5, Payload: "q"},
	} {
		if ListedBy(bad, in) {
			t.Errorf("%+v is not the row of %+v", bad, in)
		}
	}
	if ListedBy(e, CrInput[string]{Kind: CrRelease, Token: in.Token}) {
		t.Error("a release makes no row")
	}
}

// TestUnsweptRejectsDefects: Unswept of a token no reservation carries is a
// defect, and panics.
func TestUnsweptRejectsDefects(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Unswept of a token with epoch 0 did not panic")
		}
	}()
	var s Credits[string]
	s.Unswept(Token{Slot: 1}) // epoch 0: no reservation carries it
}
