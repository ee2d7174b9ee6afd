package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/internal/fault"
)

func TestMutantsList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := mutants([]string{"--list", "-layer", "rapid,fuzz"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(fault.All()) {
		t.Fatalf("%d lines for %d mutants:\n%s", len(lines), len(fault.All()), out.String())
	}
	want := map[string]string{
		"cr-no-epoch-pin":      "cr-no-epoch-pin rapid fuzz",
		"cr-two-write-enqueue": "cr-two-write-enqueue",
		"tb-fail-closed":       "tb-fail-closed",
		"tb-seed-ceil":         "tb-seed-ceil rapid fuzz",
	}
	for _, l := range lines {
		name := strings.Fields(l)[0]
		if _, err := fault.Parse(name); err != nil {
			t.Errorf("line %q: %v", l, err)
		}
		if w, ok := want[name]; ok && l != w {
			t.Errorf("got %q, want %q", l, w)
		}
	}
}

// TestMutantsTable runs the table for one mutant each layer must kill and
// one only concurrency shows, and checks the verdict and exit code.
func TestMutantsTable(t *testing.T) {
	var out, errb bytes.Buffer
	code := mutants([]string{"-mutant", "tb-no-clamp,cr-reserve-no-cas", "-layer", "rapid,fuzz", "-budget", "200ms", "-seed", "3"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	rows := map[string]string{} // "mutant layer" → "expected result"
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 4 {
			rows[f[0]+" "+f[1]] = f[2] + " " + f[3]
		}
	}
	for row, want := range map[string]string{
		"tb-no-clamp rapid": "kill killed", "tb-no-clamp fuzz": "kill killed",
		"cr-reserve-no-cas rapid": "survive survived", "cr-reserve-no-cas fuzz": "survive survived",
	} {
		if rows[row] != want {
			t.Errorf("%s: got %q, want %q\n%s", row, rows[row], want, out.String())
		}
	}
	if !strings.Contains(out.String(), "every mutant was killed") {
		t.Errorf("no verdict line:\n%s", out.String())
	}
}

func TestMutantsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-mutant", "no-such"}, {"-layer", "no-such"}, {"-budget", "0s"}, {"extra"}} {
		var out, errb bytes.Buffer
		if code := mutants(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), "tollgate mutants") && !strings.Contains(errb.String(), "flag") {
			t.Errorf("%q: error does not name the command: %s", args, errb.String())
		}
	}
}
