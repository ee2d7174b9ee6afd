package interleave

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/linearizability"
	"github.com/tollgate/tollgate/model"
)

// TestVerdictSeesUnsweptRow: the end-of-run check of a credit-table run
// fails a run in which a sweep called after a holder's reserve and exit had
// returned left its row reserved (C17), though every answer of the run is
// one the model allows and the final table agrees with some linearization:
// the row stays reserved for good. The same run with the sweep overlapping
// the exit passes (the sweep may have read the holder alive).
func TestVerdictSeesUnsweptRow(t *testing.T) {
	const h1 model.HolderID = 1
	sc := CreditsScenario("c17-verdict", "", nil,
		[]CrStep{Reserve(h1, model.General), Exit(h1)}, []CrStep{Sweep()})
	reserve := linearizability.CrOp{Client: 0, Input: model.CrInput[string]{Kind: model.CrReserve, Holder: h1, Class: model.General},
		Output: model.CrOutput[string]{Token: model.Token{Slot: 1, Epoch: 1}}, Call: 1, Return: 2}
	exit := linearizability.CrOp{Client: 0, Input: model.CrInput[string]{Kind: model.CrExit, Holder: h1},
		Output: model.CrOutput[string]{OK: true}, Call: 3, Return: 4}
	sweep := linearizability.CrOp{Client: 1, Input: model.CrInput[string]{Kind: model.CrSweep},
		Output: model.CrOutput[string]{OK: true}, Call: 5, Return: 6}
	snap := model.Snapshot{General: model.Counts{Free: model.GeneralSlots - 1, Reserved: 1}, Internal: model.Counts{Free: model.InternalSlots}}
	final := []model.CrOutput[string]{{Snap: snap, OK: true}, {OK: true}}

	p := newCrProgram(sc, fault.None)
	f := p.verdict(&crRun{ops: []linearizability.CrOp{reserve, exit, sweep}}, final)
	if f == nil || f.Invariant != "C17" || !strings.Contains(f.Detail, "left reserved slot 1 epoch 1 of h1") {
		t.Fatalf("a sweep after the exit left the row reserved: verdict %+v, want a C17 failure", f)
	}
	exit.Return = 7 // the exit returns after the sweep is called
	p = newCrProgram(sc, fault.None)
	if f := p.verdict(&crRun{ops: []linearizability.CrOp{reserve, exit, sweep}}, final); f != nil {
		t.Fatalf("a sweep overlapping the exit may leave the row: %s", f.Report())
	}
}

// sweepScenarios are two races of reserves and a sweep (C17). In the
// first, two reservers race for the last internal slot, and the winner
// exits and sweeps. In the second, h1, which has exited, reserves the slot
// it released last, and its reserve can be preempted between its
// compare-and-swap and its holder word's store while a sweep frees the row
// and h2 claims the slot; h2 then exits and sweeps.
func sweepScenarios() (race, late Scenario) {
	const h1, h2, h9 model.HolderID = 1, 2, 9
	inl := model.Internal
	fill := []CrStep{Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl), Reserve(h9, inl)}
	race = CreditsScenario("c17-reserve-race",
		"C17: two reservers race for the last free internal slot; the winner exits and sweeps, and the sweep must free its row",
		fill,
		[]CrStep{Reserve(h1, inl), Exit(h1), Sweep()},
		[]CrStep{Reserve(h2, inl)})
	late = CreditsScenario("c17-late-holder",
		"C17: an exited holder's reserve of the slot it released last races a sweep, another holder's reserve of that slot, its exit and its sweep",
		append(append([]CrStep(nil), fill...), Reserve(h1, inl), Release(h1, SetupTok(5)), Exit(h1)),
		[]CrStep{Reserve(h1, inl)},
		[]CrStep{Sweep(), Reserve(h2, inl), Exit(h2), Sweep()})
	return race, late
}

// TestSweepRacesRealCode: the real table passes both races at bound 2: no
// run's sweep leaves a row it owes (C17). In the second, some runs do leave
// h2's row reserved for good (h1's reserve, resuming, stores its holder
// word over h2's), and the check must not report it: h2's reserve
// overlapped another claim of its slot, which C17 exempts because
// impl/credits does not guarantee more (spec/credits.md C17).
func TestSweepRacesRealCode(t *testing.T) {
	race, late := sweepScenarios()
	for _, s := range []Scenario{race, late} {
		r := Explore(s, Options{Bound: 2})
		if r.Failure != nil {
			t.Fatalf("%s on the real code:\n%s", s.Name, r.Failure.Report())
		}
		t.Logf("%s: %d schedules", s.Name, r.Schedules)
	}
}

// TestSweepRaceKillsReserveStrands: the explorer kills cr-reserve-strands,
// whose losing reserver stores its holder word over the winner's, in the
// first race: the winner's sweep answers 0 with the row still reserved
// (C17).
func TestSweepRaceKillsReserveStrands(t *testing.T) {
	build.Need(t)
	race, _ := sweepScenarios()
	r := Explore(race, Options{Bound: 2, Fault: fault.Named("cr-reserve-strands")})
	if r.Failure == nil || r.Failure.Invariant != "C17" {
		t.Fatalf("cr-reserve-strands survived %s (%d schedules): %+v", race.Name, r.Schedules, r.Failure)
	}
	t.Logf("killed: %s (%d preemptions, schedule %s)", r.Failure.Detail, r.Failure.Preemptions, r.Failure.Schedule)
}
