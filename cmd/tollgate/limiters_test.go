package main

import (
	"strings"
	"testing"

	"github.com/tollgate/tollgate/limiters"
)

func TestLimitersBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-libs", "example.com/nope"},
		{"-versions", "golang.org/x/time"},
		{"-expect", "golang.org/x/time:steady=holds"},
	} {
		if rc := runLimiters(args); rc != 2 {
			t.Errorf("limiters %v: exit %d, want 2", args, rc)
		}
	}
}

func TestLimitersExpect(t *testing.T) {
	want, err := parseExpect("m@newest:w:L1=holds,m@v0.1.0:w:L1=VIOLATED")
	if err != nil {
		t.Fatal(err)
	}
	rs := []limiters.Result{
		{Library: "m", Version: "v0.1.0", Workload: "w", Prop: "L1", Verdict: limiters.Violated},
		{Library: "m", Version: "v0.10.0", Workload: "w", Prop: "L1", Verdict: limiters.Holds},
	}
	if bad := checkExpect(want, rs); len(bad) != 0 {
		t.Fatalf("checkExpect: %v", bad)
	}
	rs[1].Verdict = limiters.Violated
	if bad := checkExpect(want, rs); len(bad) != 1 || !strings.Contains(bad[0], "m@newest:w:L1") {
		t.Fatalf("checkExpect with the newest broken: %v, want one mismatch naming it", bad)
	}
}
