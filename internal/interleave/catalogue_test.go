package interleave

import (
	"flag"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// catalogueBound, when set, is TestCatalogueRealCode's preemption bound:
// the mutation campaign (internal/mutants/auto) runs the catalogue at
// bound 1 to keep its oracle fast.
var catalogueBound = flag.Int("explore.bound", -1, "TestCatalogueRealCode's preemption bound (default: 2, or 1 under -race)")

// boundFor overrides the bound of single scenarios: name=bound,…
var boundFor = flag.String("explore.bound-for", "", "TestCatalogueRealCode's bound for single scenarios, name=bound,...")

// skipSweepUnderRace skips t, a sweep of the real code that CI's explore
// step (scripts/explore-code-coverage.sh: the default explore run, every
// scenario of the catalogue and of the generated set exhaustively at
// bound 2, without the race detector) runs whole — what covers says — when
// the race detector is on. The explorer runs a scenario's threads as
// coroutines (iter.Pull, controller.go), one at a time, so under -race a
// sweep checks only the controller's switches and its watchdog, which
// every other test of this package (toys, controller, channels, stuck
// threads, the owner's scenarios) checks under -race at a fraction of the
// cost: under it, the catalogue took minutes of CPU, and TestTrieFamilies
// did not end within go test's 10 minutes on a loaded machine.
func skipSweepUnderRace(t *testing.T, covers string) {
	t.Helper()
	if raceEnabled {
		t.Skipf("under -race: CI's explore step runs %s without it (scripts/explore-code-coverage.sh), and the other tests here check the explorer's switches under -race", covers)
	}
}

// TestCatalogueRealCode: every scenario, exhaustive at bound 1 (2 with
// -long) on the real code, finds nothing. Skipped under -race
// (skipSweepUnderRace) unless -explore.bound is set.
func TestCatalogueRealCode(t *testing.T) {
	if *catalogueBound < 0 {
		skipSweepUnderRace(t, "every scenario of the catalogue at bound 2")
	}
	// Bound 1 by default, so the test command stays under a minute; bound
	// 2 (about 5 s more) with -long. CI's explore step runs every scenario
	// at bound 2 (tollgate explore -bound 2); under the race detector the
	// catalogue at bound 2 took 3 minutes.
	bound := 1
	if *long && !raceEnabled {
		bound = 2
	}
	if *catalogueBound >= 0 {
		bound = *catalogueBound
	}
	override := map[string]int{}
	for _, kv := range strings.Split(*boundFor, ",") {
		if name, b, ok := strings.Cut(kv, "="); ok {
			n, err := strconv.Atoi(b)
			if err != nil {
				t.Fatalf("-explore.bound-for %q: %v", kv, err)
			}
			override[name] = n
		}
	}
	for _, s := range Catalogue() {
		bound := bound
		if b, ok := override[s.Name]; ok {
			bound = b
		}
		r := Explore(s, Options{Bound: bound})
		if r.Err != nil || r.Failure != nil || !r.Exhaustive {
			t.Errorf("%s: %s", s.Name, r.Summary())
			if r.Failure != nil {
				t.Log(r.Failure.Report())
			}
			continue
		}
		t.Logf("%-28s %d threads, %d ops: %s, %d distinct histories, %v", s.Name, s.Threads(), s.Ops(), r.Summary(), r.Histories, r.Elapsed.Round(1e5))
	}
}

// TestMutantsFound: the scenarios find the mutants of the races they aim
// at, within bound 2, with the fewest preemptions the bug needs.
func TestMutantsFound(t *testing.T) {
	build.Need(t)
	for _, tc := range []struct {
		scenario string
		mutant   fault.Fault
		kind     Kind
		bound    int
	}{
		{"cr-last-slot", fault.Named("cr-reserve-no-cas"), KindLinearizability, 1},
		{"cr-exhausted-behind-scan", fault.Named("cr-one-scan"), KindInvariant, 2},
		{"cr-enqueue-vs-sweep", fault.Named("cr-two-write-enqueue"), KindLinearizability, 1},
		{"cr-enqueue-vs-sweep", fault.Named("cr-sweep-all"), KindLinearizability, 0},
		{"cr-take-vs-finish", fault.Named("cr-finish-blind"), KindLinearizability, 0},
		{"cr-stale-token-vs-recycle", fault.Named("cr-no-epoch-pin"), KindLinearizability, 0},
		{"cr-stale-token-vs-recycle", fault.Named("cr-release-no-holder"), KindLinearizability, 0},
		{"cr-poll-vs-close", fault.Named("cr-finish-blind"), KindLinearizability, 0},
		{"tb-stale-clocks", fault.Named("tb-timestamp-regress"), KindLinearizability, 0},
		{"tb-stale-clocks", fault.Named("tb-plain-store"), KindLinearizability, 1},
		{"tb-stale-clocks", fault.Named("tb-fail-closed"), KindLinearizability, 1},
		{"tb-stale-clocks", fault.Named("tb-cas-one-half"), KindLinearizability, 1},
		{"cr-enqueue-vs-sweep", fault.Named("cr-box-before-pin"), KindLinearizability, 0},
		{"tb-reclaim-vs-stale-take", fault.Named("tb-floor-after-kill"), KindLinearizability, 1},
		{"tb-reclaim-vs-stale-take", fault.Named("tb-reclaim-no-floor"), KindLinearizability, 0},
		{"tb-reclaim-vs-stale-take", fault.Named("tb-unlink-live"), KindLinearizability, 1},
		{"tb-reclaim-compacts", fault.Named("tb-compact-no-freeze"), KindLinearizability, 1},
		{"tb-reclaims-race", fault.Named("tb-sweep-skips-frozen"), KindLinearizability, 1},
		{"cr-enqueue-twice", fault.Named("cr-twin-enqueue-lost"), KindLinearizability, 1},
		{"sys-tb-slow-take-admit", fault.Named("tb-admit-torn-wait"), KindLinearizability, 1},
		{"sys-tb-empty-wait-take", fault.Named("tb-wait-trusts-wake"), KindLinearizability, 1},
		{"sys-tb-empty-wait.cancel-take", fault.Named("tb-wait-cancel-after-take"), KindLinearizability, 1},
		{"sys-tb-hole-reclaim-take.k+reset.k", fault.Named("tb-find-wrapped-inner"), KindLinearizability, 2},
	} {
		s, ok := Lookup(tc.scenario)
		if !ok {
			t.Fatalf("no scenario %s", tc.scenario)
		}
		r := Explore(s, Options{Fault: tc.mutant, Dir: t.TempDir()})
		f := r.Failure
		if f == nil {
			t.Errorf("%s on %s: %s, want a %s violation", tc.scenario, tc.mutant, r.Summary(), tc.kind)
			continue
		}
		if f.Kind != tc.kind || f.Bound != tc.bound || f.Preemptions != tc.bound {
			t.Errorf("%s on %s: %s violation at bound %d with %d preemptions, want %s at bound %d",
				tc.scenario, tc.mutant, f.Kind, f.Bound, f.Preemptions, tc.kind, tc.bound)
		}
		if tc.mutant == fault.Named("cr-one-scan") && f.Invariant != "C2" {
			t.Errorf("cr-one-scan: invariant %q, want C2 (%s)", f.Invariant, f.Detail)
		}
		if f.HTMLPath == "" || f.Trace == "" || f.Schedule == "" {
			t.Errorf("%s on %s: the failure lacks its files, trace or schedule: %+v", tc.scenario, tc.mutant, f)
		}
		t.Logf("%-26s %-22s %s %s at bound %d: %s", tc.scenario, tc.mutant, f.Kind, f.Invariant, f.Bound, f.Schedule)
	}
}
