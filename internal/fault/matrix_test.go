package fault

import (
	"strings"
	"testing"
)

// TestMatrix: every in-memory fault is a mutant some layer must kill and
// says what its bug is; every fault of a server-backed table (Redis or
// etcd) says what kills it and names no in-process layer; None is caught
// by nothing.
func TestMatrix(t *testing.T) {
	for _, f := range All() {
		n := 0
		for _, l := range Layers() {
			if f.CaughtBy(l) {
				n++
			}
		}
		if n == 0 || f.Bug() == "" || f.KilledBy() != "" {
			t.Errorf("%v: caught by %d layers, bug %q, killed-by %q", f, n, f.Bug(), f.KilledBy())
		}
	}
	for _, f := range AllServer() {
		for _, l := range Layers() {
			if f.CaughtBy(l) || f.Measured(l) != "" {
				t.Errorf("%v: a server fault caught by or measured on %s", f, l)
			}
		}
		if f.KilledBy() == "" || f.Bug() == "" {
			t.Errorf("%v: bug %q, killed-by %q", f, f.Bug(), f.KilledBy())
		}
	}
	for _, l := range Layers() {
		if None.CaughtBy(l) || numFaults.CaughtBy(l) {
			t.Errorf("None or an unknown value caught by %s", l)
		}
	}
	if None.Bug() != "" || None.Spin() != "" || None.Measured("rapid") != "" {
		t.Error("None has a row")
	}
}

// TestCaughtByUnknownLayer: asking for a layer the matrix does not have is
// a defect, not a false.
func TestCaughtByUnknownLayer(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `"unit"`) {
			t.Errorf("recovered %v", r)
		}
	}()
	Named("cr-no-epoch-pin").CaughtBy("unit")
}

// TestTableCells: a layer's cell is its figure, in parentheses when the
// layer need not kill the mutant, "—" when it need not and none is
// recorded; a mutant spin does not model says so.
func TestTableCells(t *testing.T) {
	var b strings.Builder
	if err := Table(&b, []Fault{Named("tb-sweep-skips-frozen")}, []string{"explore", "porcupine", "rapid"}); err != nil {
		t.Fatal(err)
	}
	want := "| mutant | the bug | rapid | porcupine | explore | spin |\n|--------|---------|-------|-----------|---------|------|\n" +
		"| [`tb-sweep-skips-frozen`](internal/mutants/patches/tb-sweep-skips-frozen.patch) | " + Named("tb-sweep-skips-frozen").Bug() +
		" | — | (" + Named("tb-sweep-skips-frozen").Measured("porcupine") + ") | " + Named("tb-sweep-skips-frozen").Measured("explore") + " | not modelled |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
