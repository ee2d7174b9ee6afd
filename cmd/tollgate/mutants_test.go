package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
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

// Two layers that fail on the real implementation, for
// TestMutantsRealFailureIsAnError. fake-rerun can rerun its case: the case
// it found against tb-plain-store fails on fault.None too, the one against
// tb-no-clamp does not. fake-hunt cannot rerun a case and fails whatever it
// hunts, fault.None included; fakeHuntsOnNone counts its hunts of that.
var fakeHuntsOnNone int

func init() {
	mutant.Register(mutant.Layer{
		Name: "fake-rerun",
		Sees: func(f fault.Fault) bool { return !f.Credits() },
		Hunt: func(f fault.Fault, _ time.Duration, seed uint64) mutant.Outcome {
			input := "input-" + f.String()
			var run func(g fault.Fault) mutant.Outcome
			run = func(g fault.Fault) mutant.Outcome {
				if g != f && (g != fault.None || f != fault.TBPlainStore) {
					return mutant.Outcome{Seed: seed}
				}
				return mutant.Outcome{Killed: true, Property: "T5", Seed: seed, Replay: "replay " + input + " against " + g.String(),
					Detail: "T5 violated on " + input, Rerun: run}
			}
			return run(f)
		},
	})
	mutant.Register(mutant.Layer{
		Name: "fake-hunt",
		Sees: func(f fault.Fault) bool { return !f.Credits() },
		Hunt: func(f fault.Fault, _ time.Duration, seed uint64) mutant.Outcome {
			if f == fault.None {
				fakeHuntsOnNone++
			}
			return mutant.Outcome{Killed: true, Property: "T1", Seed: seed, Replay: "hunt " + f.String(), Detail: "T1 violated hunting " + f.String()}
		},
	})
}

// TestMutantsRealFailureIsAnError: a layer's kill counts only if the same
// layer passes on the real implementation with the same case (its Rerun)
// or, for a layer that cannot rerun one, the same seed and budget. A layer
// that fails there is an error naming the layer, the seed, the case and the
// failure, the run exits 1, and the row is not a kill.
func TestMutantsRealFailureIsAnError(t *testing.T) {
	rows := func(out string) map[string]string { // "mutant layer" → "result"
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 4 {
				m[f[0]+" "+f[1]] = f[3]
			}
		}
		return m
	}
	var out, errb bytes.Buffer
	code := mutants([]string{"-mutant", "tb-no-clamp,tb-plain-store", "-layer", "fake-rerun", "-budget", "1ms", "-seed", "7"}, &out, &errb)
	if code != 1 {
		t.Errorf("fake-rerun: exit %d, want 1", code)
	}
	r := rows(out.String())
	if r["tb-no-clamp fake-rerun"] != "killed" || r["tb-plain-store fake-rerun"] == "killed" {
		t.Errorf("fake-rerun: results %q and %q, want killed and not killed\n%s", r["tb-no-clamp fake-rerun"], r["tb-plain-store fake-rerun"], out.String())
	}
	for _, want := range []string{"ERROR", "fake-rerun", "the real implementation", "seed 7", "replay input-tb-plain-store against none", "T5 violated on input-tb-plain-store"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("fake-rerun: the error does not say %q:\nstderr:\n%s\nstdout:\n%s", want, errb.String(), out.String())
		}
	}
	if strings.Contains(errb.String(), "input-tb-no-clamp") || strings.Contains(out.String(), "every mutant was killed") {
		t.Errorf("fake-rerun: a kill the real implementation passes is reported as an error, or the verdict is a pass:\nstderr:\n%s\nstdout:\n%s", errb.String(), out.String())
	}

	out.Reset()
	errb.Reset()
	fakeHuntsOnNone = 0
	code = mutants([]string{"-mutant", "tb-no-clamp,tb-plain-store", "-layer", "fake-hunt", "-budget", "1ms", "-seed", "7"}, &out, &errb)
	if code != 1 || fakeHuntsOnNone != 1 {
		t.Errorf("fake-hunt: exit %d after %d hunts on the real implementation, want 1 and 1", code, fakeHuntsOnNone)
	}
	r = rows(out.String())
	if r["tb-no-clamp fake-hunt"] == "killed" || r["tb-plain-store fake-hunt"] == "killed" {
		t.Errorf("fake-hunt: a kill is counted though the layer fails on the real implementation:\n%s", out.String())
	}
	for _, want := range []string{"ERROR", "fake-hunt", "the real implementation", "seed 7", "hunt none", "T1 violated hunting none"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("fake-hunt: the error does not say %q:\nstderr:\n%s\nstdout:\n%s", want, errb.String(), out.String())
		}
	}
}
