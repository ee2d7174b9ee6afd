package linearizability

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/model"
)

// Operations of the hand-built C17 histories: reserves of the general class
// (slot, epoch as answered), exits, sweeps with their count, and the rest.
func c17Reserve(client int, h model.HolderID, slot int, epoch uint64, call, ret int64) CrOp {
	in, out := reserve(h, slot, epoch)
	return cr(client, in, out, call, ret)
}

func c17Exit(client int, h model.HolderID, call, ret int64) CrOp {
	return cr(client, model.CrInput[Payload]{Kind: model.CrExit, Holder: h}, model.CrOutput[Payload]{OK: true}, call, ret)
}

func c17Sweep(client, freed int, call, ret int64) CrOp {
	return cr(client, model.CrInput[Payload]{Kind: model.CrSweep}, model.CrOutput[Payload]{OK: true, Count: freed}, call, ret)
}

func c17Tok(kind model.CrKind, client int, h model.HolderID, slot int, epoch uint64, out model.CrOutput[Payload], call, ret int64) CrOp {
	return cr(client, model.CrInput[Payload]{Kind: kind, Holder: h, Token: model.Token{Slot: slot, Epoch: epoch}, Payload: "p"}, out, call, ret)
}

// TestSweepCompleteness pins C17 on histories small enough to judge by
// hand: a sweep called after a reservation's reserve and its holder's exit
// returned must not return with the row still reserved, unless another
// sweep freed it, the holder moved it on, or the table closed first; and
// it is not held to rows it may have read before the reserve or the exit
// took effect, nor to a reservation whose reserve overlapped another claim
// of its slot (the window impl/credits leaves, spec/credits.md C17).
func TestSweepCompleteness(t *testing.T) {
	cases := []struct {
		name string
		ops  []CrOp
		want Result
	}{
		{"C17 a sweep after the exit returned leaves the row and answers 0",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 4), c17Sweep(1, 0, 5, 6)}, Illegal},
		{"C17 the sweep frees it", []CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 4), c17Sweep(1, 1, 5, 6)}, Ok},
		{"C17 a sweep after the exit frees one of two rows",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Reserve(0, 1, 2, 2, 3, 4), c17Exit(0, 1, 5, 6), c17Sweep(1, 1, 7, 8)}, Illegal},
		{"C17 a later sweep of nothing left the row an earlier one freed",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 4), c17Sweep(1, 1, 5, 6), c17Sweep(1, 0, 7, 8)}, Ok},
		{"sweep overlapping the exit may have seen the holder alive",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 6), c17Sweep(1, 0, 4, 5)}, Ok},
		{"sweep overlapping the reserve may have read the row before it",
			[]CrOp{c17Exit(0, 1, 1, 2), c17Reserve(0, 1, 1, 1, 3, 6), c17Sweep(1, 0, 4, 5)}, Ok},
		{"C17 a holder that exited before it reserved is owed a sweep too",
			[]CrOp{c17Exit(0, 1, 1, 2), c17Reserve(0, 1, 1, 1, 3, 4), c17Sweep(1, 0, 5, 6)}, Illegal},
		{"C17 two sweeps split the rows",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Reserve(0, 1, 2, 2, 3, 4), c17Exit(0, 1, 5, 6),
				c17Sweep(1, 1, 7, 10), c17Sweep(2, 1, 8, 11)}, Ok},
		{"C17 one of two concurrent sweeps frees both",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Reserve(0, 1, 2, 2, 3, 4), c17Exit(0, 1, 5, 6),
				c17Sweep(1, 0, 7, 10), c17Sweep(2, 2, 8, 11)}, Ok},
		{"C17 two concurrent sweeps leave one row",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Reserve(0, 1, 2, 2, 3, 4), c17Exit(0, 1, 5, 6),
				c17Sweep(1, 1, 7, 10), c17Sweep(2, 0, 8, 11)}, Illegal},
		{"C17 an enqueue during the sweep moved the row on",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(3, 1, 3, 4),
				c17Tok(model.CrEnqueue, 0, 1, 1, 1, model.CrOutput[Payload]{Result: model.OK}, 5, 8), c17Sweep(1, 0, 6, 7)}, Ok},
		{"C17 a release before the sweep freed the row",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(3, 1, 3, 4),
				c17Tok(model.CrRelease, 0, 1, 1, 1, model.CrOutput[Payload]{OK: true}, 5, 6), c17Sweep(1, 0, 7, 8)}, Ok},
		{"C17 a refused release changes nothing",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(3, 1, 3, 4),
				c17Tok(model.CrRelease, 0, 2, 1, 1, model.CrOutput[Payload]{}, 5, 6), c17Sweep(1, 0, 7, 8)}, Illegal},
		{"C17 the table closed during the sweep",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 4),
				cr(2, model.CrInput[Payload]{Kind: model.CrClose}, model.CrOutput[Payload]{OK: true}, 5, 7), c17Sweep(1, 0, 6, 8)}, Ok},
		{"C17 the table closed after the sweep returned",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 4), c17Sweep(1, 0, 5, 6),
				cr(2, model.CrInput[Payload]{Kind: model.CrClose}, model.CrOutput[Payload]{OK: true}, 7, 8)}, Illegal},
		{"an exit of unknown outcome obliges no sweep",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), {Client: 0, Input: model.CrInput[Payload]{Kind: model.CrExit, Holder: 1}, Unknown: true, Call: 3},
				c17Sweep(1, 0, 5, 6)}, Ok},
		{"a sweep of unknown outcome owes nothing",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Exit(0, 1, 3, 4), {Client: 1, Input: model.CrInput[Payload]{Kind: model.CrSweep}, Unknown: true, Call: 5},
				c17Sweep(2, 0, 7, 8)}, Ok},
		// impl/credits' window: h1's reserve of slot 1 has won the slot but
		// not yet stored its holder word when h1's exit and a sweep free the
		// row; h2 claims the slot and stores its holder, and h1's reserve,
		// resuming, stores its own over it. h2's row can never be swept.
		{"C17 a reserve overlapping another claim of its slot is not owed",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 10), c17Exit(1, 1, 2, 3), c17Sweep(2, 1, 4, 5), c17Reserve(3, 2, 1, 2, 6, 7),
				c17Exit(3, 2, 11, 12), c17Sweep(2, 0, 13, 14)}, Ok},
		{"C17 the same claims one after the other",
			[]CrOp{c17Reserve(0, 1, 1, 1, 1, 4), c17Exit(1, 1, 2, 3), c17Sweep(2, 1, 5, 6), c17Reserve(3, 2, 1, 2, 7, 8),
				c17Exit(3, 2, 11, 12), c17Sweep(2, 0, 13, 14)}, Illegal},
		{"C17 an unknown reserve of the slot's class is in flight",
			[]CrOp{{Client: 0, Input: model.CrInput[Payload]{Kind: model.CrReserve, Holder: 1, Class: model.General}, Unknown: true, Call: 1},
				c17Reserve(3, 2, 1, 2, 6, 7), c17Exit(3, 2, 11, 12), c17Sweep(2, 0, 13, 14)}, Ok},
		{"C17 an unknown reserve of the other class is not",
			[]CrOp{{Client: 0, Input: model.CrInput[Payload]{Kind: model.CrReserve, Holder: 1, Class: model.Internal}, Unknown: true, Call: 1},
				c17Reserve(3, 2, 1, 2, 6, 7), c17Exit(3, 2, 11, 12), c17Sweep(2, 0, 13, 14)}, Illegal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := CheckCredits(CrHistory{Ops: c.ops}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Result != c.want {
				t.Fatalf("result %s (%s), want %s", rep.Result, rep.Detail, c.want)
			}
			if c.want == Illegal && rep.Invariant != "C17" {
				t.Fatalf("invariant %q (%s), want C17", rep.Invariant, rep.Detail)
			}
		})
	}
}

// TestSweepViolationNamed: a C17 report names the sweep, the reservation
// left, its reserve and its holder's exit; a history that breaks C16 as well
// stays C16.
func TestSweepViolationNamed(t *testing.T) {
	ops := []CrOp{c17Reserve(0, 1, 1, 1, 1, 2), c17Reserve(0, 2, 2, 2, 3, 4), c17Exit(0, 2, 5, 6),
		c17Sweep(1, 0, 7, 8), c17Exit(0, 1, 9, 10), c17Sweep(1, 1, 11, 12), c17Sweep(1, 0, 13, 14)}
	rep, err := CheckCredits(CrHistory{Ops: ops}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Illegal || rep.Invariant != "C17" ||
		!strings.Contains(rep.Detail, "sweep of op #3 left reserved slot 2 epoch 2 of h2") ||
		!strings.Contains(rep.Detail, "reserve (op #1) and h2's exit (op #2)") {
		t.Fatalf("%s %s: %s", rep.Result, rep.Invariant, rep.Detail)
	}
	// The same with a take of a row never enqueued: no linearization at all
	// (C16), whatever the sweeps left.
	take := c17Tok(model.CrTake, 2, 0, 5, 9, model.CrOutput[Payload]{OK: true, Payload: "x"}, 15, 16)
	take.Input.Payload = ""
	rep, err = CheckCredits(CrHistory{Ops: append(ops, take)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Illegal || rep.Invariant != "C16" {
		t.Fatalf("a take of a row never enqueued: %s %s: %s", rep.Result, rep.Invariant, rep.Detail)
	}
}

// TestOwedBySweeps: what each sweep owes, by the rules of C17.
func TestOwedBySweeps(t *testing.T) {
	t1, t2 := model.Token{Slot: 1, Epoch: 1}, model.Token{Slot: 2, Epoch: 2}
	h := CrHistory{Ops: []CrOp{
		c17Reserve(0, 1, 1, 1, 1, 2), // 0
		c17Reserve(0, 1, 2, 2, 3, 4), // 1
		c17Sweep(1, 0, 3, 5),         // 2: before the exit
		c17Exit(0, 1, 5, 6),          // 3
		c17Sweep(1, 0, 6, 7),         // 4: overlaps the exit's return
		c17Sweep(1, 2, 7, 8),         // 5: owes both
		c17Tok(model.CrRelease, 0, 1, 1, 1, model.CrOutput[Payload]{OK: true}, 9, 10), // 6
		c17Sweep(1, 0, 11, 12), // 7: owes slot 2 only
	}}
	owed := h.OwedBySweeps()
	want := map[int][]model.Token{5: {t1, t2}, 7: {t2}}
	if len(owed) != len(want) {
		t.Fatalf("owed %v, want %v", owed, want)
	}
	for i, w := range want {
		if got := owed[i]; len(got) != len(w) || got[0] != w[0] || got[len(got)-1] != w[len(w)-1] {
			t.Fatalf("sweep #%d owes %v, want %v", i, got, w)
		}
	}
}
