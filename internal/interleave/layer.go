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
// scenario of f's primitive that `tollgate explore -mutant f` runs,
// exhaustively within DefaultBound preemptions, a bound at a time
// (ByBound), until one fails. The schedules are the default run's, and so
// are the mutants that die; a kill that needs one preemption in a late
// scenario no longer waits for every scenario ahead of it to be explored
// within two (the token bucket's scenarios take tens of seconds that
// way). It runs to the end whatever budget says: a hunt cut short would
// be a narrower run than the default one, and a mutant it missed would be
// called a survivor that the default run kills (budget is kept for the
// layer's signature; MinHuntBudget is no longer a floor but the least a
// survivor costs, measured). Deterministic: seed is not used, and the
// same fault dies at the same schedule every time. The outcome's detail
// counts the schedules run until the kill, over every scenario and pass
// explored before it.
func Hunt(f fault.Fault, _ time.Duration, _ uint64) mutant.Outcome {
	start := time.Now()
	out := mutant.Outcome{}
	schedules := 0
	ss, opt := HuntPlan(f)
	opt.Dir = mutant.Dir("tollgate-explore")
	ByBound(ss, opt, func(s Scenario, pass Options, r Result) bool {
		schedules += r.Schedules
		if r.Err != nil {
			out.Detail = r.Err.Error()
			return false
		}
		if r.Failure != nil {
			fl := r.Failure
			out.Killed, out.Property = true, fl.Invariant
			if out.Property == "" {
				out.Property = string(fl.Kind)
			}
			out.Replay = fmt.Sprintf("go run ./cmd/tollgate explore -scenario %s -mutant %s -replay %s", s.Name, f, fl.Schedule)
			out.Detail = fmt.Sprintf("%s after %d schedules in all (%s, %d preemptions): %s", s.Name, schedules, fl.Schedule, fl.Preemptions, fl.Detail)
			out.Rerun = rerun(s, pass.Bound, 10*MinHuntBudget)
			return false
		}
		return true
	})
	out.Elapsed = time.Since(start)
	return out
}

// ByBound explores every scenario of ss with opt's DFS a preemption bound
// at a time: every scenario within 0 preemptions, then every one within 1
// without its pass at 0 again (FromBound), and so on up to opt's bound,
// in the order of ss within each pass. It calls each with every result,
// and the options of its pass, and stops when each returns false. The
// schedules explored are those of exploring each scenario within opt's
// bound, and cost the same; a failure with fewer preemptions in a late
// scenario is found before the scenarios ahead of it are explored within
// more.
func ByBound(ss []Scenario, opt Options, each func(Scenario, Options, Result) bool) {
	top := opt.bound()
	for b := 0; b <= top; b++ {
		pass := opt
		pass.Bound, pass.FromBound = b, b
		if b == 0 {
			pass.Bound = -1 // Options: a negative bound is bound 0
		}
		for _, s := range ss {
			if !each(s, pass, passExplore(s, pass)) {
				return
			}
		}
	}
}

// passExplore is Explore; a test records ByBound's calls through it.
var passExplore = Explore

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
