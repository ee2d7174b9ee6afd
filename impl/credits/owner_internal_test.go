package credits

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"
)

// enqueueRequest reserves a row and enqueues a request for it directly,
// as Call does, and returns the request (whose reply the test reads).
func enqueueRequest[Req, Resp any](t *testing.T, tab *Table[*Request[Req, Resp]], h *Holder, body Req, deadline int64) *Request[Req, Resp] {
	t.Helper()
	tok, res := tab.Reserve(h, General)
	if res != OK {
		t.Fatalf("reserve: %v", res)
	}
	req := &Request[Req, Resp]{Body: body, reply: make(chan reply[Resp], 1)}
	if deadline >= 0 {
		req.HasDeadline, req.DeadlineMs = true, deadline
	}
	if res := tab.Enqueue(h, tok, req); res != OK {
		t.Fatalf("enqueue: %v", res)
	}
	return req
}

// replied is the reply drain sent req (drain replies before it returns, into
// a channel of one): it fails the test, never blocks, when there is none.
func replied[Req, Resp any](t *testing.T, req *Request[Req, Resp]) reply[Resp] {
	t.Helper()
	select {
	case r := <-req.reply:
		return r
	default:
		t.Fatal("drain returned without replying to the request")
		return reply[Resp]{}
	}
}

// TestDrainDeadline: the owner refuses a request whose deadline is before
// the table's clock with ErrDeadline, without calling the handler, and
// serves one whose deadline is the clock's reading itself.
func TestDrainDeadline(t *testing.T) {
	tab := New[*Request[int, int]](WithClock(func() int64 { return 100 }))
	calls := 0
	o := NewOwner(tab, time.Hour, func(_ context.Context, n int) (int, error) { calls++; return n * 2, nil })
	h := NewHolder()
	late := enqueueRequest(t, tab, h, 1, 99)
	onTime := enqueueRequest(t, tab, h, 2, 100)
	o.drain(context.Background())
	if r := replied(t, late); !errors.Is(r.err, ErrDeadline) {
		t.Errorf("deadline 99 at clock 100: reply %+v, want ErrDeadline", r)
	}
	if r := replied(t, onTime); r.err != nil || r.resp != 4 {
		t.Errorf("deadline 100 at clock 100: reply %+v, want 4", r)
	}
	if calls != 1 {
		t.Errorf("the handler ran %d times, want once", calls)
	}
}

// TestDrainSkipsRowsItCannotTake: a listed row the owner can no longer
// take (here the handler of the one before closed the table) is skipped,
// neither served nor finished.
func TestDrainSkipsRowsItCannotTake(t *testing.T) {
	tab := New[*Request[int, int]]()
	o := NewOwner(tab, time.Hour, func(_ context.Context, n int) (int, error) { tab.Close(); return n, nil })
	h := NewHolder()
	first := enqueueRequest(t, tab, h, 1, -1)
	second := enqueueRequest(t, tab, h, 2, -1)
	o.drain(context.Background())
	if r := replied(t, first); r.err != nil || r.resp != 1 {
		t.Errorf("first reply %+v", r)
	}
	select {
	case r := <-second.reply:
		t.Errorf("the row listed after the table closed was served: %+v", r)
	default:
	}
}

// TestDrainKeepsNoRequest: between polls the owner holds no request it
// served (the poll's list is cleared), so a large body can be collected.
func TestDrainKeepsNoRequest(t *testing.T) {
	tab := New[*Request[*[1 << 16]byte, int]]()
	o := NewOwner(tab, time.Hour, func(context.Context, *[1 << 16]byte) (int, error) { return 0, nil })
	body := new([1 << 16]byte)
	wb := weak.Make(body)
	req := enqueueRequest(t, tab, NewHolder(), body, -1)
	o.drain(context.Background())
	replied(t, req)
	body, req = nil, nil
	runtime.GC()
	if wb.Value() != nil {
		t.Fatal("a served request's body is still reachable from the owner or the table")
	}
	runtime.KeepAlive(o)
}

// TestOwnerDefects: a poll interval that is not positive, and a second
// Run, are defects that panic at once.
func TestOwnerDefects(t *testing.T) {
	handle := func(context.Context, int) (int, error) { return 0, nil }
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "defect") {
				t.Errorf("%s: recovered %v, want a defect panic", name, r)
			}
		}()
		f()
	}
	mustPanic("poll 0", func() { NewOwner(New[*Request[int, int]](), 0, handle) })
	mustPanic("poll -1ns", func() { NewOwner(New[*Request[int, int]](), -1, handle) })
	NewOwner(New[*Request[int, int]](), 1, handle) // the least interval is fine

	o := NewOwner(New[*Request[int, int]](), time.Hour, handle)
	ctx, cancel := context.WithCancel(context.Background())
	go o.Run(ctx)
	for !o.Running() {
		runtime.Gosched()
	}
	done, stop := context.WithCancel(context.Background())
	stop() // a second Run that did run would return at once
	mustPanic("second Run", func() { o.Run(done) })
	cancel()
	select {
	case <-o.Done():
	case <-time.After(time.Second):
		t.Fatal("Done was not closed 1 s after Run's context was cancelled")
	}
	if o.Running() {
		t.Error("Running after Run returned")
	}
}
