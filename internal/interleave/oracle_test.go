package interleave

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// TestFinalStateChecked: a linearizable history whose table shows
// afterwards what no linearization ends in is an invariant failure.
func TestFinalStateChecked(t *testing.T) {
	s, _ := Lookup("cr-last-slot")
	p := newCrProgram(s, fault.None)
	h := linearizability.CrHistory{Ops: []linearizability.CrOp{{
		Client: 0, Call: 0, Return: 1,
		Input:  model.CrInput[string]{Kind: model.CrReserve, Holder: 1, Class: model.Internal},
		Output: model.CrOutput[string]{Result: model.OK, Token: model.Token{Slot: 27, Epoch: 1}},
	}}}
	good := model.CrOutput[string]{OK: true, Snap: model.Snapshot{General: model.Counts{Free: 26}, Internal: model.Counts{Free: 5, Reserved: 1}}}
	empty := model.CrOutput[string]{OK: true}
	if f := p.finalCheck(h, nil, []model.CrOutput[string]{good, empty}); f != nil {
		t.Fatalf("the true final state failed: %s", f.Detail)
	}
	bad := good
	bad.Snap.Internal = model.Counts{Free: 6}
	f := p.finalCheck(h, nil, []model.CrOutput[string]{bad, empty})
	if f == nil || f.Kind != KindInvariant || !strings.Contains(f.Detail, "no linearization ends in the state the table shows afterwards") {
		t.Fatalf("a lost reservation passed: %+v", f)
	}
}

// TestConservationChecked: T1 on a frozen clock.
func TestConservationChecked(t *testing.T) {
	s, _ := Lookup("tb-trie-push-down")
	p, err := newTBProgram(s, fault.None)
	if err != nil {
		t.Fatal(err)
	}
	if !p.frozen {
		t.Fatal("tb-trie-push-down is on a frozen clock with no resets")
	}
	take := func(key string) linearizability.TBOp {
		return linearizability.TBOp{Input: tbTake(key, 1, 0), Output: model.TBOutput{OK: true, Remaining: 1}}
	}
	peek := func(key string, tokens float64) linearizability.TBOp {
		return linearizability.TBOp{Input: tbPeek(key, 0), Output: model.TBOutput{OK: true, Tokens: tokens}}
	}
	r := &tbRun{ops: []linearizability.TBOp{take("k1"), take("k1"), take("k2")},
		final: []linearizability.TBOp{peek("k1", 0), peek("k2", 1), peek("k3", 2)}}
	if f := p.conservation(r); f != nil {
		t.Fatalf("conserved run failed: %s", f.Detail)
	}
	r.final[0] = peek("k1", 1)
	if f := p.conservation(r); f == nil || f.Invariant != "T1" {
		t.Fatalf("admitted 2 of capacity 2 with 1 left passed: %+v", f)
	}
	stale, _ := Lookup("tb-stale-clocks")
	if q, _ := newTBProgram(stale, fault.None); q.frozen {
		t.Error("tb-stale-clocks has three clocks: not frozen")
	}
}
