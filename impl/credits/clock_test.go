package credits_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/tollgate/tollgate/impl/credits"
)

// TestEnqueueReadsWithClock: Enqueue marks the row with the clock given by
// WithClock, read at the call.
func TestEnqueueReadsWithClock(t *testing.T) {
	now := int64(4242)
	tab := credits.New[string](credits.WithClock(func() int64 { return now }))
	h := credits.NewHolder()
	tok, res := tab.Reserve(h, credits.General)
	if res != credits.OK {
		t.Fatalf("reserve: %v", res)
	}
	now = 5000
	if res := tab.Enqueue(h, tok, "p"); res != credits.OK {
		t.Fatalf("enqueue: %v", res)
	}
	es := tab.Enqueued()
	if len(es) != 1 || es[0].MarkedMs != 5000 || es[0].Payload != "p" {
		t.Fatalf("enqueued = %+v, want one row marked at 5000 holding p", es)
	}
}

// TestDoubleEnqueueKeepsPayload: a second enqueue of one reservation is
// Lost and leaves the payload of the first in the row (C4, C5): the box
// it built is never installed over the published one.
func TestDoubleEnqueueKeepsPayload(t *testing.T) {
	tab := credits.New[string]()
	h := credits.NewHolder()
	tok, _ := tab.Reserve(h, credits.General)
	if res := tab.EnqueueAt(1, h, tok, "first"); res != credits.OK {
		t.Fatalf("first enqueue: %v", res)
	}
	if res := tab.EnqueueAt(2, h, tok, "second"); res != credits.Lost {
		t.Fatalf("second enqueue: %v, want Lost", res)
	}
	if es := tab.Enqueued(); len(es) != 1 || es[0].Payload != "first" || es[0].MarkedMs != 1 {
		t.Fatalf("enqueued = %+v, want the first enqueue's row", es)
	}
	if p, ok := tab.Take(tok); !ok || p != "first" {
		t.Fatalf("take = %q, %v; want the first payload", p, ok)
	}
}

// TestFinishDropsPayload: once the owner finishes a row the table no
// longer holds its payload, so a large payload can be collected before
// the slot is used again.
func TestFinishDropsPayload(t *testing.T) {
	tab := credits.New[*[1 << 16]byte]()
	h := credits.NewHolder()
	tok, _ := tab.Reserve(h, credits.General)
	p := new([1 << 16]byte)
	wp := weak.Make(p)
	if res := tab.EnqueueAt(1, h, tok, p); res != credits.OK {
		t.Fatalf("enqueue: %v", res)
	}
	if got, ok := tab.Take(tok); !ok || got != p {
		t.Fatal("take did not return the payload")
	}
	if !tab.Finish(tok) {
		t.Fatal("finish freed nothing")
	}
	p = nil
	runtime.GC()
	if wp.Value() != nil {
		t.Fatal("the finished row's payload is still reachable from the table")
	}
	runtime.KeepAlive(tab)
}
