package interleave

import (
	"fmt"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
)

func init() {
	mutant.Register(mutant.Layer{Name: "explore", Hunt: Hunt})
}

// Sees reports whether the explorer is expected to kill f (the registered
// layer's rule): whether f's patch names explore on its Caught-by line
// (fault.Fault.CaughtBy), as every fault
// that shows in a schedule of a catalogue or generated scenario does. Not
// named: the sequential faults no scenario reaches (cr-class-off-by-one
// needs 27 general reservations, tb-seed-ceil a wait the refill formula
// corrects; the sequential layers own them). cr-gen-wrap shows since the
// generated scenarios cycle one holder through its own slot, and
// tb-trie-plain-append since they give keys one full hash (SameHash).
func Sees(f fault.Fault) bool { return mutant.Expected("explore", f) }

// Hunt runs the default explore run (DefaultRun) against f's table: every
// scenario of f's primitive that `tollgate explore -mutant f` runs, in the
// same order, each exhaustively within DefaultBound preemptions, until one
// fails. It runs to the end whatever budget says: a hunt cut short would be
// a narrower run than the default one, and a mutant it missed would be
// called a survivor that the default run kills (budget is kept for the
// layer's signature; MinHuntBudget is no longer a floor but the least a
// survivor costs, measured). Deterministic: seed is not used, and the same
// fault dies at the same schedule every time. The outcome's detail counts
// the schedules run until the kill, over every scenario explored before it.
func Hunt(f fault.Fault, _ time.Duration, _ uint64) mutant.Outcome {
	start := time.Now()
	out := mutant.Outcome{}
	schedules := 0
	ss, opt := HuntPlan(f)
	opt.Dir = mutant.Dir("tollgate-explore")
	for _, s := range ss {
		r := Explore(s, opt)
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
			out.Rerun = rerun(s, opt.Bound, 10*MinHuntBudget)
			break
		}
	}
	out.Elapsed = time.Since(start)
	return out
}

// MinHuntBudget is about what the default run of one table takes on 2
// loaded cores: what a mutant the explorer does not kill costs this layer.
const MinHuntBudget = 30 * time.Second

// HuntPlan is what Hunt explores for f: the default run (DefaultRun), no
// other.
func HuntPlan(f fault.Fault) ([]Scenario, Options) { return DefaultRun(f) }

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
