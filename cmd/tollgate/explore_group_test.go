package main

import (
	"testing"

	"github.com/tollgate/tollgate/internal/interleave"
)

// TestGroupGeneratedExhaustive: a prefix's line says whether its
// scenarios were explored exhaustively, a prefix of one scenario too.
func TestGroupGeneratedExhaustive(t *testing.T) {
	row := func(name string, exhaustive bool) resultRow {
		return resultRow{Result: interleave.Result{Scenario: name, Strategy: interleave.DFS, Bound: 2, Exhaustive: exhaustive, Threads: 2, Ops: 3}, n: 1}
	}
	gen := map[string]bool{"sys-cr-a-x-y": true, "sys-cr-b-x-y": true, "sys-cr-b-x-z": true, "sys-cr-c-x-y": true}
	got := groupGenerated([]resultRow{row("sys-cr-a-x-y", true), row("sys-cr-b-x-y", true), row("sys-cr-b-x-z", false), row("sys-cr-c-x-y", false)}, gen)
	want := []string{"yes (bound 2)", "1 of 2 (bound 2)", "no"}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.exhaustive() != want[i] {
			t.Errorf("%s: exhaustive %q, want %q", r.Scenario, r.exhaustive(), want[i])
		}
	}
}
