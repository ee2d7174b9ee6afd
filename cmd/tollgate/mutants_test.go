package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutant"
	"github.com/tollgate/tollgate/internal/mutants/build"
)

// TestMutantsList: --list writes the mutant table of the selected mutants
// with a column per selected layer, from the patches' headers: a layer the
// header does not name shows "—" or its kill in parentheses.
func TestMutantsList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := mutants([]string{"--list", "-layer", "rapid,fuzz", "-mutant", "cr-no-epoch-pin,cr-two-write-enqueue,tb-sweep-skips-frozen"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "| mutant | the bug | rapid | fuzz | spin |\n|--------|---------|-------|------|------|\n"
	for _, f := range []fault.Fault{fault.Named("cr-no-epoch-pin"), fault.Named("cr-two-write-enqueue"), fault.Named("tb-sweep-skips-frozen")} {
		want += fmt.Sprintf("| [`%s`](internal/mutants/patches/%s.patch) | %s | %s | %s | %s |\n", f, f, f.Bug(),
			cell(f, "rapid"), cell(f, "fuzz"), orElse(f.Spin(), "not modelled"))
	}
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if !strings.Contains(want, "| C3 1 ms | C3 <1 ms | C3 |") || !strings.Contains(want, "| — | — | C4 |") {
		t.Errorf("the headers of cr-no-epoch-pin and cr-two-write-enqueue no longer say what this test reads:\n%s", want)
	}
}

// cell is what the table shows for layer's column of f.
func cell(f fault.Fault, layer string) string {
	switch m := f.Measured(layer); {
	case f.CaughtBy(layer):
		return orElse(m, "expected, not measured")
	case m != "":
		return "(" + m + ")"
	}
	return "—"
}

func orElse(s, other string) string {
	if s == "" {
		return other
	}
	return s
}

// TestMutantsReadmeTables: docs/checks.md's mutant tables are what --list
// writes from the patches' headers.
func TestMutantsReadmeTables(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(mutant.TablesFile)))
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := mutant.ReplaceTables(doc, "..")
	if err != nil {
		t.Fatalf("%s: %v", mutant.TablesFile, err)
	}
	if !bytes.Equal(fixed, doc) {
		d, g := strings.Split(string(doc), "\n"), strings.Split(string(fixed), "\n")
		for i := range min(len(d), len(g)) {
			if d[i] != g[i] {
				t.Fatalf("docs/checks.md's mutant tables differ from the patches' headers at line %d:\n  README:  %s\n  headers: %s\nrun: %s", i+1, d[i], g[i], mutant.RewriteCommand)
			}
		}
		t.Fatalf("docs/checks.md's mutant tables differ from the patches' headers in length; run: %s", mutant.RewriteCommand)
	}
}

// TestMutantsLayersAreTheMatrix: the layers the command links are the
// layers of the matrix (fault.Layers), so every Caught-by name is a layer
// that runs and every layer that runs reads its own column.
func TestMutantsLayersAreTheMatrix(t *testing.T) {
	var got []string
	for _, l := range mutant.Layers() {
		if !strings.HasPrefix(l.Name, "fake-") { // this file's test layers
			got = append(got, l.Name)
		}
	}
	want := fault.Layers()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registered layers %q, the matrix's %q", got, want)
	}
	for _, l := range mutant.Layers() {
		if strings.HasPrefix(l.Name, "fake-") {
			continue
		}
		for _, f := range fault.All() {
			if l.Sees(f) != f.CaughtBy(l.Name) {
				t.Errorf("layer %s: Sees(%s) is %v, its patch's Caught-by line says %v", l.Name, f, l.Sees(f), f.CaughtBy(l.Name))
			}
		}
	}
}

// TestMutantsTable runs the table for one mutant each layer must kill and
// one only concurrency shows, and checks the verdict and exit code.
func TestMutantsTable(t *testing.T) {
	build.Need(t)
	t.Setenv("TMPDIR", t.TempDir()) // the fuzz layer writes the input that killed a mutant under $TMPDIR
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

	// With -expected, the pairs expected to survive are not hunted.
	out.Reset()
	errb.Reset()
	if code := mutants([]string{"-mutant", "tb-no-clamp,cr-reserve-no-cas", "-layer", "rapid,fuzz", "-budget", "200ms", "-seed", "3", "-expected"}, &out, &errb); code != 0 {
		t.Fatalf("-expected: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "tb-no-clamp") || strings.Contains(out.String(), "cr-reserve-no-cas") {
		t.Errorf("-expected: want the rows of tb-no-clamp only:\n%s", out.String())
	}
}

func TestMutantsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-mutant", "no-such"}, {"-layer", "no-such"}, {"-budget", "0s"}, {"extra"}, {"-readme", "README.md"}, {"--list", "-readme", "README.md", "-layer", "rapid"}} {
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
				if g != f && (g != fault.None || f != fault.Named("tb-plain-store")) {
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
