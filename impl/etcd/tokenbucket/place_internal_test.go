package tokenbucket

import (
	"fmt"
	"testing"
)

// TestPlacesAlikeInEveryTable: two Tables of one process give every key
// the same place in known, so which keys share a place, and so whether a
// take reads first, is the same in every table: the explorer's replays,
// each on a fresh table, then take the steps of the run they replay.
func TestPlacesAlikeInEveryTable(t *testing.T) {
	a, b := &Table{}, &Table{}
	shared := 0
	for i := range 4096 {
		k := fmt.Sprintf("key-%d", i)
		if a.place(k) != b.place(k) {
			t.Fatalf("key %q: place %d in one table, %d in another", k, a.place(k), b.place(k))
		}
		if a.place(k) == a.place("key-0") {
			shared++
		}
	}
	if shared < 2 {
		t.Fatalf("no key of 4096 shares key-0's place among %d: the places are not a hash", knownSlots)
	}
}
