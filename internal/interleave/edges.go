package interleave

import (
	"fmt"

	"github.com/tollgate/tollgate/model"
)

// Scenarios at the tables' bounds (small-scope exploration). A bound of
// impl/ that no explored run could reach at its real value is lowered for
// the run: the explored copies read every package-level constant named
// max… through hooked.Bound (internal/mutants/internal/generate/bounds.go),
// and a scenario's bounds (Scenario.AtBound) set what it answers. So the
// code at the bound's edge runs under the schedule, with every check of
// the run, in the few operations a scenario has.
//
// The credit table has one: maxGen, the generations a slot hands out
// (2^58 − 1). At it, Reserve panics, changing nothing (C3): the run ends
// there and is judged by crProgram.documentedPanic (the panic names the
// lowered cap, its thread was reserving, and some reserve was answered
// that slot's last generation); a reserve answered a generation beyond the
// cap fails the run (C3). EdgeScenarios derives the runs from the credit
// scenarios of the catalogue, with no scenario of its own: every one whose
// threads, run one after the other, reserve some slot more than once is
// explored again with the cap lowered to the generation that slot reaches
// one reservation before its last, so the last reservation meets the cap
// in that order, and the other orders explore who meets it first. (The
// generated set has 126 such scenarios more, 88,520 schedules at the
// default bound, measured: more than the whole catalogue; they are not in
// the default run.)

// genCapName is the name of the credit table's generation cap.
const genCapName = "maxGen"

// EdgeScenarios returns the scenarios explored at the tables' bounds.
func EdgeScenarios() []Scenario {
	var out []Scenario
	for _, s := range Catalogue() {
		if s.cr == nil || s.fixed != "" {
			continue
		}
		g := sequentialGenerations(s.cr)
		if g < 2 {
			continue
		}
		e := s.AtBound(genCapName, uint64(g-1))
		e.Name = s.Name + "-at-gen-cap"
		e.Race = fmt.Sprintf("C3 at the generation cap, lowered to %d: %s", g-1, s.Race)
		out = append(out, e)
	}
	return out
}

// sequentialGenerations is the most reservations any one slot gets when
// the setup and then each thread run alone, in order, on the model
// (model.Credits.Step, which the real table follows one call at a time): the
// generation that slot reaches. A step whose token was forged is left
// out (it changes nothing a reserve sees); 0 if the script cannot run so.
// It steps the model, not the table: the generated-mutant campaign mutates
// the table in the binary that runs this, and a mutant's reserve that never
// returned hung the whole selection, before any scenario could fail it.
func sequentialGenerations(cr *crScript) (most int) {
	defer func() {
		if recover() != nil {
			most = 0
		}
	}()
	var st model.Credits[string]
	per := map[int]int{}
	apply := func(in model.CrInput[string]) model.CrOutput[string] {
		if _, _, forged := forgedOf(in.Token.Epoch); forged {
			return model.CrOutput[string]{}
		}
		var out model.CrOutput[string]
		st, out = st.Step(in)
		if in.Kind == model.CrReserve && out.Result == model.OK {
			per[out.Token.Slot]++
			most = max(most, per[out.Token.Slot])
		}
		return out
	}
	var setup []model.CrOutput[string]
	for _, st := range cr.setup {
		in, ok := st(CrEnv{Setup: setup, Mine: setup})
		var out model.CrOutput[string]
		if ok {
			out = apply(in)
		}
		setup = append(setup, out)
	}
	for _, th := range cr.threads {
		var mine []model.CrOutput[string]
		for _, st := range th {
			in, ok := st(CrEnv{Setup: setup, Mine: mine})
			var out model.CrOutput[string]
			if ok {
				out = apply(in)
			}
			mine = append(mine, out)
		}
	}
	return most
}
