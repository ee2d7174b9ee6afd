package interleave

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

// TestPairRunReplaysItsPair: the run a collector keeps for a pair
// (KeepRuns), replayed alone, covers that pair. It explores a generated
// token-bucket race at bound 2 (its first 150 runs), then replays the kept
// run of each of its pairs with a fresh collector, through the default run's path for a
// kept run (a fixed scenario, as PairRuns makes them). A run recorded
// against the wrong schedule (the one before or after) misses its pair.
func TestPairRunReplaysItsPair(t *testing.T) {
	s, ok := Lookup("sys-tb-hole-reclaim-take.k+reset.k")
	if !ok {
		t.Fatal("no scenario")
	}
	sp := NewSitePairs()
	sp.KeepRuns()
	if r := Explore(s, Options{SitePairs: sp, Budget: Budget{Schedules: 150}}); r.Err != nil || r.Failure != nil {
		t.Fatalf("%s", r.Summary())
	}
	pairs := sp.Pairs()
	var buf bytes.Buffer
	if err := WriteSitePairRuns(&buf, pairs, "/"); err != nil {
		t.Fatal(err)
	}
	runs, err := ReadSitePairRuns(&buf)
	if err != nil || len(runs) != len(pairs) {
		t.Fatalf("read back %d runs of %d pairs: %v", len(runs), len(pairs), err)
	}
	checked := 0
	for _, p := range pairs {
		if p.Scenario != s.Name || p.Schedule == "" {
			t.Fatalf("pair %v: kept run %q %q", p, p.Scenario, p.Schedule)
		}
		fixed := s
		fixed.fixed, fixed.most = p.Schedule, 0
		again := NewSitePairs()
		if r := Explore(fixed, Options{SitePairs: again}); r.Err != nil || r.Failure != nil {
			t.Fatalf("replaying %s: %s", p.Schedule, r.Summary())
		}
		found := false
		for _, q := range again.Pairs() {
			found = found || q.First == p.First && q.Then == p.Then
		}
		if !found {
			t.Errorf("the kept run %s of %s:%d → %s:%d, replayed, does not cover it", p.Schedule, p.First.Func, p.First.Line, p.Then.Func, p.Then.Line)
		}
		checked++
	}
	t.Logf("%d pairs, %d kept runs replayed", len(pairs), checked)
}

// TestPairRunsFit: every kept run (pairruns.txt) passes on the real code,
// which follows its schedule up to its last segment, and is found by name.
func TestPairRunsFit(t *testing.T) {
	for _, s := range PairRuns() {
		fitsSchedule(t, s, s.fixed)
		if got, ok := Lookup(s.Name); !ok || got.fixed != s.fixed {
			t.Errorf("Lookup(%q) does not find the kept run", s.Name)
		}
	}
}

// TestParsePairRuns: a kept run names a scenario the default run searches
// and a schedule; anything else is refused, with its line.
func TestParsePairRuns(t *testing.T) {
	good := "# comment\nsys-tb-hole-reclaim-take.k+reset.k\t1x17.0x350.1x42\n"
	ss, err := parsePairRuns(good)
	if err != nil || len(ss) != 1 || ss[0].Name != "sys-tb-hole-reclaim-take.k+reset.k+pairs1" || ss[0].fixed != "1x17.0x350.1x42" {
		t.Fatalf("%v, %v", ss, err)
	}
	for text, want := range map[string]string{
		"sys-tb-hole-reclaim-take.k+reset.k 1x3\n":   "line 1: want SCENARIO<TAB>SCHEDULE",
		"#\nno-such-scenario\t1x3\n":                 `line 2: no scenario "no-such-scenario"`,
		"sys-tb-hole-reclaim-take.k+reset.k\tzz\n":   "line 1:",
		"tb-sweep-through-frozen-inner\t0x212.1x7\n": `no scenario "tb-sweep-through-frozen-inner"`,
	} {
		if _, err := parsePairRuns(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", text, err, want)
		}
	}
}

// fitsSchedule checks that the real code passes the run of s on schedule
// and follows it up to its last segment (a change to the code that moves
// a step makes the schedule drive some other interleaving).
func fitsSchedule(t *testing.T, s Scenario, schedule string) {
	t.Helper()
	want, err := ParseSchedule(schedule)
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	rep, err := Replay(s, fault.None, schedule)
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	if f := rep.Failure; f != nil {
		t.Errorf("%s -replay %s fails on the real code:\n%s", s.Name, schedule, f.Report())
		return
	}
	got, _ := ParseSchedule(rep.Schedule)
	last := len(want) - 1
	for last > 0 && want[last-1] == want[len(want)-1] {
		last--
	}
	for i := 0; i < last; i++ {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("%s: the real code left schedule %s at step %d: it ran %s\n%s", s.Name, schedule, i+1, rep.Schedule, rep.Trace)
			return
		}
	}
}
