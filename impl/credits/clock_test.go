package credits_test

import (
	"testing"

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
