package credits_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
)

// panicMessage runs f and returns what it panicked with ("" for no panic).
func panicMessage(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	f()
	return ""
}

// TestMisusePanicsAtConstruction: a nil clock, table or handler is refused
// where it is passed, with a message naming it, not by a nil dereference
// later in Enqueue or on the owner's goroutine (C12's rule for defects).
func TestMisusePanicsAtConstruction(t *testing.T) {
	handle := func(context.Context, int) (int, error) { return 0, nil }
	for _, c := range []struct {
		name, want string
		f          func()
	}{
		{"WithClock(nil)", "WithClock(nil)", func() { credits.New[int](credits.WithClock(nil)) }},
		{"NewOwner nil table", "needs a table", func() { credits.NewOwner(nil, time.Millisecond, handle) }},
		{"NewOwner nil handler", "needs a handler", func() { credits.NewOwner[int, int](credits.New[*env](), time.Millisecond, nil) }},
		{"NewOwner poll 0", "poll interval", func() { credits.NewOwner(credits.New[*env](), 0, handle) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if msg := panicMessage(c.f); !strings.Contains(msg, c.want) || !strings.Contains(msg, "defect") {
				t.Errorf("panic %q, want one naming %q as a defect", msg, c.want)
			}
		})
	}
}

// TestZeroTable: the zero Table is a live table on the monotonic clock:
// every transition works through it, Enqueue included (it reads the clock).
func TestZeroTable(t *testing.T) {
	var tab credits.Table[string]
	h := credits.NewHolder()
	defer h.Exit()
	tok, res := tab.Reserve(h, credits.General)
	if res != credits.OK || tok.Slot != 1 {
		t.Fatalf("Reserve on the zero Table: %v %v", tok, res)
	}
	if res := tab.Enqueue(h, tok, "p"); res != credits.OK {
		t.Fatalf("Enqueue on the zero Table: %v", res)
	}
	if got := tab.Enqueued(); len(got) != 1 || got[0].Payload != "p" || got[0].MarkedMs < 0 {
		t.Fatalf("Enqueued: %+v", got)
	}
	if p, ok := tab.Take(tok); !ok || p != "p" || !tab.Finish(tok) {
		t.Fatal("take and finish on the zero Table")
	}
	if s := tab.Snapshot(); s.General.Free != credits.GeneralSlots || s.Internal.Free != credits.Slots-credits.GeneralSlots {
		t.Fatalf("Snapshot: %+v", s)
	}
}
