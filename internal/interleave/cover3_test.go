package interleave

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

var cover3Mode = flag.String("explore.cover3", "", "TestCover3Selection: check (recompute the selection of three-thread scenarios and compare it with cover3.txt) or write (rewrite cover3.txt); several minutes")

// TestCover3Names: the committed selection parses, its scenarios are
// three-thread credit scenarios in Systematic, found by name, and none is
// a pair's or a triple's.
func TestCover3Names(t *testing.T) {
	gs, err := parseCover3(cover3File)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) > Cover3Max {
		t.Errorf("cover3.txt keeps %d scenarios, more than Cover3Max %d", len(gs), Cover3Max)
	}
	sys := map[string]bool{}
	for _, s := range Systematic() {
		sys[s.Name] = true
	}
	for _, g := range gs {
		if g.Threads() != 3 || !sys[g.Name] {
			t.Errorf("%s: %d threads, in Systematic: %v", g.Name, g.Threads(), sys[g.Name])
		}
		if s, ok := Lookup(g.Name); !ok || s.Name != g.Name {
			t.Errorf("Lookup(%s) does not find it", g.Name)
		}
	}
	if _, err := parseCover3("sys-cr-held-take-nosuch-take\n"); err == nil || !strings.Contains(err.Error(), `no operation "nosuch"`) {
		t.Errorf("an unknown operation: %v", err)
	}
	if _, err := parseCover3("sys-cr-nowhere-take-take-take\n"); err == nil || !strings.Contains(err.Error(), `no prefix "nowhere"`) {
		t.Errorf("an unknown prefix: %v", err)
	}
}

// TestSelectCover3Greedy: the cover keeps the biggest gain first, ties to
// the earlier candidate, nothing that adds no pair, at most max.
func TestSelectCover3Greedy(t *testing.T) {
	set := func(ks ...string) map[string]bool {
		m := map[string]bool{}
		for _, k := range ks {
			m[k] = true
		}
		return m
	}
	got := SelectCover3(set("a"), []string{"x", "y", "z", "w"},
		[]map[string]bool{set("a", "b"), set("b", "c", "d"), set("c", "d", "e"), set("a")}, 10)
	want := []Cover3Choice{{"y", 3}, {"z", 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("SelectCover3 = %v, want %v", got, want)
	}
	if got := SelectCover3(nil, []string{"x", "y"}, []map[string]bool{set("a"), set("b")}, 1); fmt.Sprint(got) != fmt.Sprint([]Cover3Choice{{"x", 1}}) {
		t.Fatalf("with max 1: %v", got)
	}
}

// TestCover3Selection (with -explore.cover3=check or write) computes the
// selection: the pairs the default run covers without the selection's
// scenarios (at DefaultBound), then each candidate's at Cover3Bound, and
// the greedy cover.
func TestCover3Selection(t *testing.T) {
	if *cover3Mode == "" {
		t.Skip("with -explore.cover3=check or write")
	}
	kept := map[string]bool{}
	for _, g := range cover3() {
		kept[g.Name] = true
	}
	base := NewSitePairs()
	all, opt := DefaultRun(fault.None)
	n := 0
	for _, s := range all {
		if kept[s.Name] {
			continue
		}
		o := opt
		o.SitePairs = base
		if r := Explore(s, o); r.Err != nil || r.Failure != nil {
			t.Fatalf("%s: %s", s.Name, r.Summary())
		}
		n++
	}
	covered := PairKeys(base)
	t.Logf("the default run without the selection: %d scenarios, %d ordered site pairs", n, len(covered))
	var names []string
	var pairs []map[string]bool
	for _, s := range Cover3Candidates() {
		sp := NewSitePairs()
		r := Explore(s, Options{Strategy: DFS, Bound: Cover3Bound, SitePairs: sp})
		if r.Err != nil || r.Failure != nil {
			t.Fatalf("candidate %s on the real code: %s", s.Name, r.Summary())
		}
		names = append(names, s.Name)
		pairs = append(pairs, PairKeys(sp))
	}
	choice := SelectCover3(covered, names, pairs, Cover3Max)
	var b strings.Builder
	b.WriteString("# The three-thread scenarios kept by the interleaving-coverage selection (cover3.go):\n")
	b.WriteString("# go test ./internal/interleave -run TestCover3Selection -explore.cover3=write\n")
	fmt.Fprintf(&b, "# %d candidates (seed %d) at bound %d over the %d site pairs the rest of the default run covers;\n", len(names), Cover3Seed, Cover3Bound, len(covered))
	b.WriteString("# each line a kept scenario, the pairs it added in the comment before it.\n")
	total := 0
	for _, c := range choice {
		fmt.Fprintf(&b, "# +%d\n%s\n", c.Gain, c.Name)
		total += c.Gain
	}
	t.Logf("kept %d of %d candidates, %d pairs added", len(choice), len(names), total)
	switch *cover3Mode {
	case "write":
		if err := os.WriteFile("cover3.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	case "check":
		if b.String() != cover3File {
			t.Fatalf("cover3.txt differs from the selection:\n%s\nwrite it again: go test ./internal/interleave -run TestCover3Selection -explore.cover3=write", b.String())
		}
	default:
		t.Fatalf("-explore.cover3=%q: check or write", *cover3Mode)
	}
}
