package interleave

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/layout"
	"github.com/tollgate/tollgate/internal/sut"
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

// closedLies is the explored credit table with a Closed that answers
// closed (or not) whatever the table is.
type closedLies struct {
	sut.CrTable[string]
	layout.Table
	answer bool
}

func (t closedLies) Closed() bool { return t.answer }

// TestClosedChecked: the table's Closed is asked with every snapshot the
// explorer takes and held to the model's closed state there (C11). A
// Closed that never answers true fails a scenario that closes the table;
// one that always does fails one that never closes it; the real one
// passes both.
func TestClosedChecked(t *testing.T) {
	real := newCrTable
	t.Cleanup(func() { newCrTable = real })
	for _, c := range []struct {
		scenario string
		answer   bool
	}{{"cr-poll-vs-close", false}, {"cr-last-slot", true}} {
		s, _ := Lookup(c.scenario)
		newCrTable = real
		if r := Explore(s, Options{Bound: 0}); r.Failure != nil || r.Err != nil {
			t.Fatalf("%s on the real table: %s", c.scenario, r.Summary())
		}
		newCrTable = func(f fault.Fault) sut.CrTable[string] {
			tab := real(f)
			return closedLies{tab, tab.(layout.Table), c.answer}
		}
		r := Explore(s, Options{Bound: 0})
		if r.Failure == nil || r.Failure.Invariant != "C11" || !strings.Contains(r.Failure.Detail, "Closed() answered") {
			t.Errorf("%s with a Closed that always answers %v: %s", c.scenario, c.answer, r.Summary())
		}
	}
}

// admitRereads is the explored token-bucket table with an AdmitAt that,
// once admitted, answers the bucket's tokens as a peek reads them after
// the take, not what the take left: the same answer when one call runs at
// a time, another when an operation comes between the take and the peek.
type admitRereads struct {
	sut.TBTable[string]
	layout.Table
}

func (t admitRereads) AdmitAt(nowMs int64, key string, lim tokenbucket.Limits, cost float64) (tokenbucket.Decision, error) {
	d, err := t.TBTable.AdmitAt(nowMs, key, lim, cost)
	if err == nil && d.OK {
		d.Remaining, err = t.PeekAt(nowMs, key, lim)
	}
	return d, err
}

// TestAdmitRemainingChecked: an admitted admit's remaining is checked
// against the model's bucket at its linearization, and the generated set
// (sys-tb-new-reset-admit: a reset between the take and the re-read)
// drives the race that shows a wrong one.
func TestAdmitRemainingChecked(t *testing.T) {
	real := newTBTable
	t.Cleanup(func() { newTBTable = real })
	s, ok := Lookup("sys-tb-new-reset-admit")
	if !ok {
		t.Fatal("sys-tb-new-reset-admit is not made")
	}
	if r := Explore(s, Options{Bound: 1}); r.Failure != nil || r.Err != nil {
		t.Fatalf("on the real table: %s", r.Summary())
	}
	newTBTable = func(f fault.Fault) sut.TBTable[string] {
		tab := real(f)
		return admitRereads{tab, tab.(layout.Table)}
	}
	if r := Explore(s, Options{Bound: 1}); r.Failure == nil || r.Failure.Kind != KindLinearizability {
		t.Errorf("an admit answering a re-read's tokens: %s", r.Summary())
	}
}
