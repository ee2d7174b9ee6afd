//go:build (amd64 || arm64) && !purego

package credits_test

import (
	"testing"

	"github.com/tollgate/tollgate/impl/credits"
)

// TestReserveReleaseAllocatesNothing: reserve, release, sweep and snapshot
// allocate nothing, and an enqueue allocates only its payload box (issue
// 12: slot words change in place). Only where seam.Pair is the assembly:
// the boxed Pair of -tags purego and other GOARCHes allocates on every
// write.
func TestReserveReleaseAllocatesNothing(t *testing.T) {
	tab := credits.New[int]()
	h := credits.NewHolder()
	for name, f := range map[string]func(){
		"reserve+release": func() {
			tok, _ := tab.Reserve(h, credits.General)
			tab.Release(h, tok)
		},
		"sweep":    func() { tab.Sweep() },
		"snapshot": func() { tab.Snapshot() },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
	cycle := func() {
		tok, _ := tab.Reserve(h, credits.Internal)
		tab.EnqueueAt(0, h, tok, 1)
		tab.Take(tok)
		tab.Finish(tok)
	}
	if n := testing.AllocsPerRun(1000, cycle); n != 1 {
		t.Errorf("reserve, enqueue, take, finish: %v allocations, want 1 (the box)", n)
	}
}
