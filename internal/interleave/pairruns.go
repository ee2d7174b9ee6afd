package interleave

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Runs kept for interleaving coverage. The default run explores some
// generated scenarios within one preemption (Within), and some pairs of
// access sites only a deeper search of them covers (spec/explore.md,
// "What the cap of one preemption hides"). Such a search, run by
// scripts/explore-pair-runs.sh (`tollgate explore -uncapped
// -site-pair-runs`), notes the first run that covered each pair; the
// sitepairs table tool keeps those that cover pairs the default run leaves
// open (pairruns.txt), and the default run replays each, as it does the
// directed runs: one schedule, a few milliseconds. They are chosen by
// coverage, for no mutant.

// pairRunsFile is the kept runs (pairruns.txt): comment lines, and a line
// "SCENARIO<TAB>SCHEDULE" per run.
//
//go:embed pairruns.txt
var pairRunsFile string

// PairRuns is the kept runs as scenarios that Explore replays on their one
// schedule: each named after its scenario, "+pairs" and its number (1, 2,
// ... in the file's order), so `tollgate explore -scenario NAME` replays
// it. A line that names no scenario, or a schedule that does not parse,
// panics: the file is generated. The file is parsed once (finding each
// scenario builds the generated set, about 12 ms in all); a scenario is a
// value whose scripts are copied on write, so the runs are shared.
func PairRuns() []Scenario {
	out, err := pairRuns()
	if err != nil {
		panic(err)
	}
	return slices.Clone(out)
}

var pairRuns = sync.OnceValues(func() ([]Scenario, error) { return parsePairRuns(pairRunsFile) })

func parsePairRuns(text string) ([]Scenario, error) {
	var out []Scenario
	for n, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, sched, ok := strings.Cut(line, "\t")
		if !ok {
			return nil, fmt.Errorf("interleave: pairruns.txt line %d: want SCENARIO<TAB>SCHEDULE", n+1)
		}
		s, found := searched(name)
		if !found {
			return nil, fmt.Errorf("interleave: pairruns.txt line %d: no scenario %q", n+1, name)
		}
		if _, err := ParseSchedule(sched); err != nil {
			return nil, fmt.Errorf("interleave: pairruns.txt line %d: %w", n+1, err)
		}
		s.Name = fmt.Sprintf("%s+pairs%d", name, len(out)+1)
		s.fixed, s.most = sched, 0
		out = append(out, s)
	}
	return out, nil
}
