package interleave

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/shard"
)

// Select resolves a scenario selection, the value of tollgate explore's
// -scenario flag, to the scenarios to run, in order and each once.
//
// spec is a comma-separated list of words. A word is a set: all (the
// catalogue, then the generated set of Systematic, then the runs at the
// tables' bounds of EdgeScenarios, the Owner's, then the directed runs of
// DirectedScenarios, each replayed on its one schedule, and the runs kept
// for coverage of PairRuns, replayed alike), catalogue, generated, edges,
// owner, directed, pairs, or capped (the scenarios of the others that set a
// cap on their preemptions, Within); a glob pattern (path.Match) over the names of the catalogue
// and the generated set; or one name that Lookup knows (the catalogue, a
// directed run's scenario, a generated or held-back scenario,
// gen-credits-N, gen-tokenbucket-N).
//
// When mutant is not fault.None, sets and patterns skip the scenarios of
// the other primitive, and a name of such a scenario is an error; a mutant
// of a Redis adapter is an error, as the explorer drives in-memory tables
// only. Of the scenarios selected, only those whose names sh has are kept
// (the zero Shard keeps every one). Errors read as the command prints them.
func Select(spec string, mutant fault.Fault, sh shard.Shard) ([]Scenario, error) {
	var out []Scenario
	seen := map[string]bool{}
	for _, word := range strings.Split(spec, ",") {
		ss, set, err := selectWord(strings.TrimSpace(word))
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			key := s.Name + "@" + s.fixed // a directed run may replay a catalogue scenario
			if mutant != fault.None && s.own != nil {
				// The Owner drives the real explored table: a mutant of
				// the catalogue has no Owner of its own.
				if set {
					continue
				}
				return nil, fmt.Errorf("explore: scenario %s explores the Owner over the real table; -mutant %s has no Owner", s.Name, mutant)
			}
			if mutant != fault.None && (s.Primitive == Credits) != mutant.Credits() {
				if set {
					continue
				}
				return nil, fmt.Errorf("explore: scenario %s is a %s scenario; -mutant %s is not a %s mutant", s.Name, s.Primitive, mutant, s.Primitive)
			}
			if !seen[key] {
				seen[key] = true
				if sh.Has(s.Name) {
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

// selectWord resolves one word of a selection; set reports a set or a
// pattern, whose scenarios of the other primitive a mutant skips.
func selectWord(word string) (ss []Scenario, set bool, err error) {
	switch word {
	case "all":
		return slices.Concat(Catalogue(), Systematic(), EdgeScenarios(), OwnerScenarios(), DirectedScenarios(), PairRuns()), true, nil
	case "owner":
		return OwnerScenarios(), true, nil
	case "catalogue":
		return Catalogue(), true, nil
	case "generated":
		return Systematic(), true, nil
	case "directed":
		return DirectedScenarios(), true, nil
	case "pairs":
		return PairRuns(), true, nil
	case "capped":
		for _, s := range slices.Concat(Catalogue(), Systematic(), EdgeScenarios(), OwnerScenarios()) {
			if s.most > 0 {
				ss = append(ss, s)
			}
		}
		return ss, true, nil
	case "edges":
		return EdgeScenarios(), true, nil
	}
	if strings.ContainsAny(word, "*?[") {
		if _, err := path.Match(word, ""); err != nil {
			return nil, false, fmt.Errorf("explore: -scenario %q: %v", word, err)
		}
		for _, s := range slices.Concat(Catalogue(), Systematic(), EdgeScenarios(), OwnerScenarios()) {
			if ok, _ := path.Match(word, s.Name); ok {
				ss = append(ss, s)
			}
		}
		if len(ss) == 0 {
			return nil, true, fmt.Errorf("explore: no scenario matches %q (tollgate explore -h lists them)", word)
		}
		return ss, true, nil
	}
	if s, ok := Lookup(word); ok {
		return []Scenario{s}, false, nil
	}
	return nil, false, fmt.Errorf("explore: no scenario %q (tollgate explore -h lists them)", word)
}

// ParseBudget parses a budget as tollgate explore's -budget flag takes it:
// comma-separated parts, each a positive number of schedules (5000) or a
// positive duration (10s), so "5000,10s" bounds both. The empty string is
// no budget.
func ParseBudget(s string) (Budget, error) {
	var b Budget
	if s == "" {
		return b, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if n, err := strconv.Atoi(part); err == nil && n > 0 {
			b.Schedules = n
		} else if d, err := time.ParseDuration(part); err == nil && d > 0 {
			b.Time = d
		} else {
			return b, fmt.Errorf("explore: -budget %q: %q is neither a positive number of schedules nor a duration", s, part)
		}
	}
	return b, nil
}

// Check reports whether o is a configuration as a user gives it: a named
// strategy (DFS, PCT or Random), Bound ≥ 0 and Depth ≥ 1 (a Fault of a
// server-backed table is explored only on its server: Remote). Explore itself
// also takes an empty strategy as DFS and a zero Depth as the default.
func (o Options) Check() error {
	switch o.Strategy {
	case DFS, PCT, Random:
	default:
		return fmt.Errorf("explore: -strategy %q must be dfs, pct or random", o.Strategy)
	}
	if o.Bound < 0 || o.Depth < 1 {
		return fmt.Errorf("explore: -bound must be >= 0 and -depth >= 1")
	}
	return nil
}

// Run explores the scenarios in order with opt, calling done (when not
// nil) with each one's result as it comes, and returns the results and
// whether any scenario failed: a violation found (Result.Failure) or an
// exploration that could not run (Result.Err). With failfast it stops
// after the first scenario that fails. progress, when not nil, gives each
// scenario's Options.Progress.
func Run(ss []Scenario, opt Options, failfast bool, progress func(Scenario) func(Result), done func(Result)) (rs []Result, failed bool) {
	for _, s := range ss {
		o := opt
		if progress != nil {
			o.Progress = progress(s)
		}
		r := Explore(s, o)
		rs = append(rs, r)
		if done != nil {
			done(r)
		}
		failed = failed || r.Err != nil || r.Failure != nil
		if failed && failfast {
			break
		}
	}
	return rs, failed
}
