package credits

import (
	"strings"
	"testing"
)

// TestGenerationCap: a slot that has handed out its last generation refuses
// to reserve, loudly and without changing anything, rather than wrap and
// repeat an epoch (C3).
func TestGenerationCap(t *testing.T) {
	tab := New[string]()
	h := NewHolder()
	tab.slots[0].word.Store(pack(maxGen-1, stFree), 0)
	tok, r := tab.Reserve(h, General)
	if r != OK || tok.Slot != 1 || tok.Epoch != epochOf(1, maxGen) || tok.Epoch >= 1<<63 {
		t.Fatalf("reserve at the last generation = %v %v, want slot 1 epoch %d", tok, r, epochOf(1, maxGen))
	}
	if !tab.Release(h, tok) {
		t.Fatal("release at the last generation failed")
	}
	before, _ := tab.slots[0].word.Load()
	func() {
		defer func() {
			msg, _ := recover().(string)
			if !strings.Contains(msg, "generations") || !strings.Contains(msg, "C3") {
				t.Fatalf("reserve past the last generation: recovered %q, want a C3 panic", msg)
			}
		}()
		tab.Reserve(h, General)
	}()
	if after, _ := tab.slots[0].word.Load(); after != before {
		t.Fatalf("the refused reserve changed slot 1: %#x → %#x", before, after)
	}
}

// TestEpochNamesItsSlot: a token whose epoch was issued for another slot
// (even one at the same generation), or names a generation no slot hands
// out, pins nothing.
func TestEpochNamesItsSlot(t *testing.T) {
	tab := New[string]()
	h := NewHolder()
	tok, _ := tab.Reserve(h, General)
	other, _ := tab.Reserve(h, General) // slot 2, the same generation as tok
	if other.Epoch>>slotBits != tok.Epoch>>slotBits {
		t.Fatalf("slots 1 and 2 at generations %d and %d, want equal", tok.Epoch>>slotBits, other.Epoch>>slotBits)
	}
	for _, bad := range []Token{
		{Slot: 2, Epoch: tok.Epoch},               // slot 1's epoch on slot 2
		{Slot: 1, Epoch: tok.Epoch | 1<<63},       // beyond the generation cap
		{Slot: 1, Epoch: tok.Epoch + 1<<slotBits}, // a generation not yet handed out
		{Slot: 1, Epoch: tok.Epoch & slotMask},    // generation 0 is never handed out
	} {
		if bad.Epoch == 0 {
			continue
		}
		if r := tab.EnqueueAt(0, h, bad, "x"); r != Lost {
			t.Fatalf("enqueue with %v = %v, want lost", bad, r)
		}
		if tab.Release(h, bad) {
			t.Fatalf("release with %v succeeded", bad)
		}
	}
	if !tab.Release(h, tok) || !tab.Release(h, other) {
		t.Fatal("the real tokens no longer release")
	}
}
