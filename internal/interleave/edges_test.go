package interleave

import "testing"

// The runs at the generation cap reach it: in every one, some schedule ends
// at the reserve's documented panic (so the cap's branch runs under the
// schedule), and the real code passes. The concurrency campaign's mutant
// that drops the cap (cc-drop-epoch `gen > maxGen` → `false`) dies in
// them: cr-last-slot-at-gen-cap fails C3, "a reserve answered slot 32's
// generation 2"; one that panics a generation early (`>=`) fails the
// setup.
func TestEdgeScenariosMeetTheCap(t *testing.T) {
	ss := EdgeScenarios()
	if len(ss) == 0 {
		t.Fatal("no scenario of the catalogue recycles a slot: nothing explores the generation cap")
	}
	for _, s := range ss {
		res := Explore(s, Options{Strategy: DFS, Bound: DefaultBound})
		if res.Err != nil || res.Failure != nil {
			t.Fatalf("%s: %s", s.Name, res.Summary())
		}
		if res.Ended == 0 {
			t.Errorf("%s: no run of %d met the lowered generation cap", s.Name, res.Schedules)
		}
	}
}
