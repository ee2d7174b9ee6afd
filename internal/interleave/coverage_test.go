package interleave

import (
	"os"
	"strings"
	"testing"
)

// coverageFile is the committed coverage table.
const coverageFile = "../../spec/explore-coverage.md"

// TestCoverageTable: every generated scenario passes on the real code
// within CoverageBound preemptions, and the coverage table their runs give
// is the committed one (spec/explore-coverage.md): a change to the
// generated set, the tables or the explorer that moves a cell fails here
// until the table is written again with `go run ./cmd/tollgate explore
// -coverage > spec/explore-coverage.md`. The whole table takes about 5 s:
// it is computed and compared with -long, and in CI's explore step
// (tollgate explore -coverage, diffed with the committed file); by
// default every tenth scenario runs and the table is not compared; under
// the race detector, which slows the explorer about tenfold, it is
// skipped (skipSweepUnderRace).
func TestCoverageTable(t *testing.T) {
	skipSweepUnderRace(t, "every generated scenario at bound 2, and computes this table (tollgate explore -coverage, diffed with the committed file),")
	if !*long {
		for i, s := range Systematic() {
			if i%10 != 0 {
				continue
			}
			if r := Explore(s, Options{Bound: CoverageBound}); r.Err != nil || r.Failure != nil {
				t.Errorf("%s: %s", s.Name, r.Summary())
			}
		}
		return
	}
	cov, err := ComputeCoverage(CoverageBound)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cov.Failures {
		t.Errorf("on the real code: %s", f)
	}
	got := cov.Markdown()
	want, err := os.ReadFile(coverageFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from what the code computes at line %d:\n  committed: %s\n  computed:  %s\nwrite it again: go run ./cmd/tollgate explore -coverage > spec/explore-coverage.md", coverageFile, i+1, w, g)
			}
		}
	}
	for _, p := range []Primitive{Credits, TokenBucket} {
		c, n := cov.Cells(p)
		t.Logf("%s: %d of %d possible cells covered", p, c, n)
	}
	t.Logf("%d scenarios, %d schedules", cov.Scenarios, cov.Schedules)
}

// TestCoverageSeesTheReturningHolder: the coverage of the scenario made for
// the blind spot of the random generator shows it: from a slot its
// reserver held last, two reserves race on the slot word's low half alone
// (the 64-bit compare-and-swap of a returning holder), and from a node
// about to compact, a take and a reclaim meet on a frozen word.
func TestCoverageSeesTheReturningHolder(t *testing.T) {
	cov := &Coverage{covered: map[covKey]bool{}, touched: map[opSig]bool{}}
	for _, name := range []string{"sys-cr-own-reserve-reserve", "sys-tb-compact-take-reclaim"} {
		var g generated
		for _, x := range systematic() {
			if x.Name == name {
				g = x
			}
		}
		if g.Name == "" {
			t.Fatalf("no scenario %s", name)
		}
		if err := cov.explore(g, CoverageBound); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []covKey{{Credits, "reserve", "reserve", "own", "slot.lo"}, {TokenBucket, "take", "reclaim", "compact", "frozen"}} {
		if !cov.covered[k] {
			t.Errorf("%v not covered", k)
		}
	}
	if len(cov.Failures) > 0 {
		t.Error(cov.Failures)
	}
}

// TestConflictKind: how two accesses of one word are named.
func TestConflictKind(t *testing.T) {
	lo := func(w bool) sig { return sig{kind: "slot", half: 'l', write: w} }
	hi := sig{kind: "slot", half: 'h'}
	pair := func(w bool) sig { return sig{kind: "slot", half: 'p', write: w} }
	for _, tc := range []struct {
		a, b sig
		want string
	}{
		{lo(true), lo(false), "slot.lo"},
		{lo(false), lo(false), ""}, // two reads
		{pair(true), lo(false), "slot.pair"},
		{pair(true), hi, "slot.hi"},
		{lo(true), hi, ""}, // disjoint halves
		{pair(false), lo(true), "slot.pair"},
		{sig{kind: "child", write: true}, sig{kind: "child", mark: "frozen"}, "frozen"},
		{sig{kind: "bucket", mark: "dead", write: true}, sig{kind: "bucket"}, "dead"},
		{sig{kind: "next", mark: "sealed", write: true}, sig{kind: "next"}, "sealed"},
		{sig{kind: "box", write: true}, sig{kind: "holder"}, ""},
		{sig{kind: "live", write: true}, sig{kind: "live"}, "live"},
	} {
		got, ok := conflictKind(tc.a, tc.b)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("conflictKind(%+v, %+v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
