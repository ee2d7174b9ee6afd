package bench

import (
	"testing"

	"github.com/tollgate/tollgate/internal/testlong"
)

// TestMemoryPerKeyTollgate: a tollgate table holding 1,000,000 idle keys
// takes at most 80 B of live heap per key (issue 28; spec/tokenbucket.md
// §6 counts 48 B a cell and about 23 B of inner nodes a key), and a
// reclaim that forgets them all leaves under 1 KB, round after round.
// Heap figures after a full collection do not depend on the machine's
// load; the test runs no other goroutine meanwhile (it is not parallel).
func TestMemoryPerKeyTollgate(t *testing.T) {
	testlong.Skip(t)
	if testing.Short() || raceEnabled {
		t.Skip("builds tables of 1,000,000 keys (165 s under the race detector)")
	}
	var tollgate TBDesign
	for _, d := range MemoryDesigns() {
		if d.Name == Tollgate {
			tollgate = d
		}
	}
	if got := MemoryPerKey(tollgate, 1_000_000); got > 80 {
		t.Errorf("%.1f B per idle key at 1,000,000 keys, want at most 80", got)
	} else {
		t.Logf("%.1f B per idle key at 1,000,000 keys", got)
	}
	for _, r := range ReclaimedMemory(1_000_000, 2) {
		if r.Reclaimed != r.Keys || r.Left > 1024 {
			t.Errorf("round %d: the reclaim forgot %d of %d keys and left %d B, want every key and under 1 KB", r.Round, r.Reclaimed, r.Keys, r.Left)
		}
		t.Logf("round %d: %.1f B per key held, %d B left after the reclaim", r.Round, float64(r.Held)/float64(r.Keys), r.Left)
	}
}
