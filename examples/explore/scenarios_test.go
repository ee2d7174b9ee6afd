package counter

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
)

// hitsSpec counts hits per key: the model is a map from key to count. Its
// Threads are left to the scenarios.
func hitsSpec() explore.Spec[*Hits, string, int, map[string]int] {
	return explore.Spec[*Hits, string, int, map[string]int]{
		New:  func() *Hits { return new(Hits) },
		Call: func(h *Hits, k string) int { return h.Hit(k) },
		Init: map[string]int{},
		Step: func(m map[string]int, _ time.Time, k string) (map[string]int, int) {
			next := make(map[string]int, len(m)+1)
			for key, n := range m {
				next[key] = n
			}
			next[k]++
			return next, next[k]
		},
	}
}

// hitsScenarios draws 3 threads of 2 hits each on the keys a, b and c; a
// key shrinks to a.
func hitsScenarios() explore.Scenarios[string] {
	return explore.Scenarios[string]{
		Threads: 3, Ops: 2, Seed: 1, Count: 20,
		Op: func(r *rand.Rand) string { return []string{"a", "b", "c"}[r.IntN(3)] },
		Simpler: func(k string) []string {
			if k != "a" {
				return []string{"a"}
			}
			return nil
		},
	}
}

// TestHitsScenarios: scenarios drawn at random find the sync.Map lost
// update nobody wrote a scenario for, and shrink it to its core: two hits
// on one key from two threads. A replay (tollgate explore -pkg . -run
// '^TestHitsScenarios$' -replay REF@SCHEDULE, as the report prints it)
// runs that schedule on the shrunk scenario.
func TestHitsScenarios(t *testing.T) {
	mustBeRewritten(t)
	if explore.Replaying() {
		explore.CheckScenarios(t, hitsSpec(), hitsScenarios(), explore.Options{Bound: 1})
		return
	}
	g := explore.Generate(hitsSpec(), hitsScenarios(), explore.Options{Bound: 1}, "tollgate explore -pkg . -run '^TestHitsScenarios$' -replay %s")
	if g.Failure == nil {
		t.Fatalf("%d scenarios drawn, no failure: %s", g.Explored, g.Summary())
	}
	if want := [][]string{{"a"}, {"a"}}; !reflect.DeepEqual(g.Shrunk, want) {
		t.Errorf("shrunk to %v, want %v (drawn %v)", g.Shrunk, want, g.Drawn)
	}
	t.Logf("found and shrunk, as it should be:\n%s", g.Failure.Report)
}
