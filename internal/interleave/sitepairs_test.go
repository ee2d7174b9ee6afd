package interleave

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSitePairs: the interleaving coverage of a compare-and-swap counter
// of two threads. Without preemptions a thread runs whole, so the second
// thread's load and CAS follow the first's CAS, and nothing else; with
// two preemptions a load is also overwritten by the other thread's CAS.
// Two loads in a row are no pair (neither writes).
func TestSitePairs(t *testing.T) {
	src, err := os.ReadFile("toys_test.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	name := func(s Site) string {
		if !strings.HasSuffix(s.File, "toys_test.go") {
			return s.File
		}
		switch l := lines[s.Line-1]; {
		case strings.Contains(l, "x.Load()"):
			return "load"
		case strings.Contains(l, "x.CompareAndSwap("):
			return "cas"
		default:
			return strings.TrimSpace(l)
		}
	}
	for _, tc := range []struct {
		bound int
		want  []string
	}{
		{-1, []string{"cas→cas", "cas→load"}},
		{2, []string{"cas→cas", "cas→load", "load→cas"}},
	} {
		sp := NewSitePairs()
		res := exploreProgram(counterToy(2, 1, true), "cas-counter", Options{Bound: tc.bound, SitePairs: sp})
		if res.Failure != nil || res.Err != nil {
			t.Fatalf("bound %d: %v %v", tc.bound, res.Failure, res.Err)
		}
		var got []string
		for _, p := range sp.Pairs() {
			if p.Runs <= 0 {
				t.Errorf("bound %d: pair %v counted in %d runs", tc.bound, p, p.Runs)
			}
			got = append(got, name(p.First)+"→"+name(p.Then))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("bound %d: covered pairs %v, want %v", tc.bound, got, tc.want)
		}
	}
}
