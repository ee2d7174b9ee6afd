package main

import "testing"

// TestNeedsMutants: a command line asks for the mutants when it names one
// with -mutant (before a "--"), or runs the mutant matrix; listing the
// tables, judging a patch and the automatic campaign build none.
func TestNeedsMutants(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"check", "--mutant", "tb-plain-store"}, true},
		{[]string{"check", "-mutant=cr-sweep-all", "-duration", "1s"}, true},
		{[]string{"explore", "-scenario", "x", "-mutant", "cr-one-scan"}, true},
		{[]string{"driver", "--backend", "redis", "--mutant", "rtb-tostring"}, true},
		{[]string{"check", "--mutant", "none"}, false},
		{[]string{"check", "-duration", "1s"}, false},
		{[]string{"check", "--replay", "x.json"}, false},
		{[]string{"conform", "--seed", "1", "--", "tollgate", "driver", "--mutant", "tb-no-clamp"}, false},
		{[]string{"mutants"}, true},
		{[]string{"mutants", "-budget", "2s", "-mutant", "tb-no-clamp"}, true},
		{[]string{"mutants", "--list", "-readme", "docs/checks.md"}, false},
		{[]string{"mutants", "-h"}, false},
		{[]string{"mutants", "--patch", "x.patch"}, false},
		{[]string{"mutants", "--auto", "-changed"}, false},
		{[]string{"explore"}, false},
	} {
		if got := needsMutants(c.args); got != c.want {
			t.Errorf("needsMutants(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
