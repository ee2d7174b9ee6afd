package explore_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/explore"
)

// adderSpec: the counter of counterSpec with an operation per int: 0 reads
// it, n > 0 adds n (each add takes the lock, as Inc does, and releases it
// early when split).
func adderSpec(split bool) explore.Spec[*counter, int, int, int] {
	return explore.Spec[*counter, int, int, int]{
		New: func() *counter { return &counter{split: split} },
		Call: func(c *counter, op int) int {
			if op == 0 {
				return c.Get()
			}
			return c.Add(op)
		},
		Step: func(n int, _ time.Time, op int) (int, int) { return n + op, n + op },
		Describe: func(op int) string {
			if op == 0 {
				return "get"
			}
			return fmt.Sprintf("add(%d)", op)
		},
		Twins: true,
	}
}

// Add adds k as Inc adds one.
func (c *counter) Add(k int) int {
	c.mu.Lock()
	v := c.n
	if c.split {
		c.mu.Unlock()
		c.mu.Lock()
	}
	c.n = v + k
	c.mu.Unlock()
	return v + k
}

func adderScenarios() explore.Scenarios[int] {
	return explore.Scenarios[int]{
		Threads: 3, Ops: 2, Seed: 1, Count: 10,
		Op: func(r *rand.Rand) int { return r.IntN(4) },
		Simpler: func(op int) []int {
			if op > 1 {
				return []int{1}
			}
			return nil
		},
	}
}

// TestGeneratedScenarioShrinks: drawn scenarios of 3 threads × 2
// operations find the lock released early, and the failure shrinks to its
// core, two adds of one on two threads, which its reference and schedule
// replay.
func TestGeneratedScenarioShrinks(t *testing.T) {
	sc := adderScenarios()
	g := explore.Generate(adderSpec(true), sc, explore.Options{Bound: 1}, "replay %s")
	if g.Failure == nil || g.Err != nil {
		t.Fatalf("no failure in %d scenarios: %s", g.Explored, g.Summary())
	}
	if want := [][]int{{1}, {1}}; !reflect.DeepEqual(g.Shrunk, want) {
		t.Errorf("shrunk to %v, want %v (drawn: %v, ref %s)", g.Shrunk, want, g.Drawn, g.Ref)
	}
	if len(g.Drawn) != 3 || len(g.Drawn[0]) != 2 {
		t.Errorf("drawn %v: want 3 threads of 2 operations", g.Drawn)
	}
	for _, want := range []string{"as drawn:", "shrunk in", "T0: add(1)", "T1: add(1)", "replay " + g.Ref + "@" + g.Failure.Schedule} {
		if !strings.Contains(g.Failure.Report, want) {
			t.Errorf("the report does not show %q:\n%s", want, g.Failure.Report)
		}
	}
	s, err := sc.ScenarioRef(g.Ref)
	if err != nil || !reflect.DeepEqual(s, g.Shrunk) {
		t.Fatalf("ScenarioRef(%s) = %v, %v; want %v", g.Ref, s, err, g.Shrunk)
	}
	spec := adderSpec(true)
	spec.Threads = s
	if _, f, err := explore.Replay(spec, g.Failure.Schedule, ""); err != nil || f == nil {
		t.Errorf("replay of %s@%s: failure %v, err %v", g.Ref, g.Failure.Schedule, f, err)
	}
	// The same draw, scenario by scenario, whatever Count is.
	sc.Count = 1
	if d := sc.Draw(g.Index); !reflect.DeepEqual(d, g.Drawn) {
		t.Errorf("Draw(%d) = %v, want %v", g.Index, d, g.Drawn)
	}
}

func TestGeneratedScenariosPass(t *testing.T) {
	g := explore.Generate(adderSpec(false), adderScenarios(), explore.Options{Bound: 1}, "")
	if g.Failure != nil || g.Err != nil || g.Explored != 10 {
		t.Fatalf("the correct counter: %d scenarios, %s", g.Explored, g.Summary())
	}
}

func TestScenariosRefused(t *testing.T) {
	sc := adderScenarios()
	for _, ref := range []string{"x", "-1", "0:", "0:q1", "0:t9", "0:o0", "0:s0.0"} {
		if _, err := sc.ScenarioRef(ref); err == nil {
			t.Errorf("ScenarioRef(%q) gave no error", ref)
		}
	}
	bad := adderScenarios()
	bad.Op = nil
	if g := explore.Generate(adderSpec(false), bad, explore.Options{}, ""); g.Err == nil || !strings.Contains(g.Err.Error(), "Scenarios.Op") {
		t.Errorf("a nil Op: %v", g.Err)
	}
}
