package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

func init() {
	mutant.Register(mutant.Layer{Name: "explore", Sees: Sees, Hunt: Hunt})
}

// Sees reports whether the explorer is expected to kill f: whether f's patch
// names explore on its Caught-by line (fault.Fault.CaughtBy), as every fault
// that shows in a schedule of a catalogue or generated scenario does. Not
// named: the sequential faults no scenario reaches (cr-class-off-by-one
// needs 27 general reservations, tb-seed-ceil a wait the refill formula
// corrects; the sequential layers own them). cr-gen-wrap shows since the
// generated scenarios cycle one holder through its own slot, and
// tb-trie-plain-append since they give keys one full hash (SameHash).
func Sees(f fault.Fault) bool { return f.CaughtBy("explore") }

// Hunt explores every catalogue scenario of f's primitive exhaustively
// within one preemption, in catalogue order, then again within the default
// bound (DFS), then replays the directed runs of that primitive
// (DirectedScenarios), and then explores every generated one (Systematic)
// within one preemption and the default bound, against f's table, until
// one fails or budget (at least MinHuntBudget) has passed.
// Deterministic: seed is not used, and the same fault dies at the same
// schedule every time (a budget that runs out first may cut it short). The
// outcome's detail counts the schedules run until the kill, over every
// scenario explored before it.
// MinHuntBudget is the least time Hunt explores for: enough for the
// catalogue within both bounds and the generated scenarios of one table
// within one preemption on 2 loaded cores. Since trie cells gained their
// first word (one more load per level of every walk), the token bucket's
// whole list took 34 s on 2 loaded cores (29 s before), and
// tb-peek-torn, the first mutant only a generated scenario kills, died
// after 9–18 s where 15 s was the floor.
const MinHuntBudget = 30 * time.Second

func Hunt(f fault.Fault, budget time.Duration, _ uint64) mutant.Outcome {
	prim := TokenBucket
	if f.Credits() {
		prim = Credits
	}
	start := time.Now()
	out := mutant.Outcome{}
	schedules := 0
	// Every scenario within one preemption first, then within the default
	// bound: a fault one preemption shows is found whichever scenario
	// shows it, before any long exhaustive search of another. Within a
	// bound the catalogue comes first: its scenarios are the races someone
	// aimed at, the generated ones the pairs nobody did.
	type pass struct {
		s     Scenario
		bound int
	}
	var passes []pass
	for i, set := range [][]Scenario{Catalogue(), Systematic()} {
		for _, b := range []int{1, DefaultBound} {
			for _, s := range set {
				if s.Primitive == prim {
					passes = append(passes, pass{s, b})
				}
			}
		}
		if i == 0 {
			// The directed runs, one schedule each, between the two sets:
			// milliseconds, so no budget is ever spent before them.
			for _, s := range DirectedScenarios() {
				if s.Primitive == prim {
					passes = append(passes, pass{s, 0})
				}
			}
		}
	}
	// The generated set of one table takes seconds even within one
	// preemption; a hunt is given at least MinHuntBudget so that it reaches
	// it (a kill comes as soon as it is found, so only survivors pay).
	budget = max(budget, MinHuntBudget)
	for _, p := range passes {
		s := p.s
		left := budget - time.Since(start)
		if left <= 0 {
			break
		}
		r := Explore(s, Options{Fault: f, Bound: p.bound, Budget: Budget{Time: left}, Dir: filepath.Join(os.TempDir(), "tollgate-explore")})
		schedules += r.Schedules
		if len(r.PerBound) > 0 {
			schedules += sum(r.PerBound) - r.Schedules
		}
		if r.Err != nil {
			out.Detail = r.Err.Error()
			break
		}
		if r.Failure != nil {
			fl := r.Failure
			out.Killed, out.Property = true, fl.Invariant
			if out.Property == "" {
				out.Property = string(fl.Kind)
			}
			out.Replay = fmt.Sprintf("go run ./cmd/tollgate explore -scenario %s -mutant %s -replay %s", s.Name, f, fl.Schedule)
			out.Detail = fmt.Sprintf("%s after %d schedules in all (%s, %d preemptions): %s", s.Name, schedules, fl.Schedule, fl.Preemptions, fl.Detail)
			out.Rerun = rerun(s, p.bound, budget)
			break
		}
	}
	out.Elapsed = time.Since(start)
	return out
}

// rerun is the kill's case run again on g's table: the scenario that
// failed, exhaustively within the bound it failed at. The mutants command
// runs it on the real table, which must pass it: a scenario the real code
// fails is the explorer's false alarm, never a kill.
func rerun(s Scenario, bound int, budget time.Duration) func(fault.Fault) mutant.Outcome {
	return func(g fault.Fault) mutant.Outcome {
		start := time.Now()
		r := Explore(s, Options{Fault: g, Bound: bound, Budget: Budget{Time: budget}})
		out := mutant.Outcome{Elapsed: time.Since(start)}
		switch {
		case r.Err != nil:
			out.Detail = r.Err.Error()
		case r.Failure != nil:
			out.Killed, out.Property = true, r.Failure.Invariant
			out.Detail = fmt.Sprintf("%s on %s (%s): %s", s.Name, g, r.Failure.Schedule, r.Failure.Detail)
		default:
			out.Detail = fmt.Sprintf("%s on %s: %d schedules within bound %d pass", s.Name, g, r.Schedules, bound)
		}
		return out
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
