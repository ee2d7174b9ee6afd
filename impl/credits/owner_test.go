package credits_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
)

type env = credits.Request[int, int]

// startOwner runs an owner over a new table until the test ends.
func startOwner(t *testing.T, handle credits.Handler[int, int]) (*credits.Owner[int, int], *credits.Table[*env], context.CancelFunc) {
	t.Helper()
	tab := credits.New[*env]()
	o := credits.NewOwner(tab, time.Millisecond, handle)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for !o.Running() {
		time.Sleep(time.Millisecond)
	}
	return o, tab, cancel
}

func double(_ context.Context, x int) (int, error) { return 2 * x, nil }

// TestOwnerServes: C15. Many callers, one owner; every caller gets its own
// reply and every slot is free afterwards.
func TestOwnerServes(t *testing.T) {
	o, tab, _ := startOwner(t, double)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			h := credits.NewHolder()
			for {
				got, err := o.Call(context.Background(), h, credits.General, i)
				if errors.Is(err, credits.ErrExhausted) {
					runtime.Gosched()
					continue
				}
				if err != nil || got != 2*i {
					t.Errorf("Call(%d) = %d, %v", i, got, err)
				}
				return
			}
		})
	}
	wg.Wait()
	waitFree(t, tab)
}

func waitFree(t *testing.T, tab *credits.Table[*env]) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := tab.Snapshot()
		if s.General.Free == 26 && s.Internal.Free == 6 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slots still held: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOwnerCallerTimeoutKeepsSlot: C15. A caller that times out returns at
// once, but its slot stays held until the owner has finished the row.
func TestOwnerCallerTimeoutKeepsSlot(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Bool
	o, tab, _ := startOwner(t, func(_ context.Context, x int) (int, error) {
		started.Store(true)
		<-release
		return x, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	h := credits.NewHolder()
	if _, err := o.Call(ctx, h, credits.General, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call = %v, want deadline exceeded", err)
	}
	h.Exit()
	for !started.Load() {
		time.Sleep(time.Millisecond)
	}
	tab.Sweep()
	if s := tab.Snapshot(); s.General.Processing != 1 {
		t.Fatalf("after the caller left, snapshot %+v: the slot must stay held by the owner", s)
	}
	close(release)
	waitFree(t, tab)
}

// TestOwnerRefusesExpired: C15. A request whose deadline passed before the
// owner took it is refused without calling the handler, and its slot is
// freed.
func TestOwnerRefusesExpired(t *testing.T) {
	block := make(chan struct{})
	var calls atomic.Int64
	o, tab, _ := startOwner(t, func(_ context.Context, x int) (int, error) {
		calls.Add(1)
		if x == 0 {
			<-block // keep the owner busy while the next request expires
		}
		return x, nil
	})
	go o.Call(context.Background(), credits.NewHolder(), credits.General, 0)
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := o.Call(ctx, credits.NewHolder(), credits.General, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call = %v", err)
	}
	time.Sleep(5 * time.Millisecond) // the request's deadline is now well past
	close(block)
	waitFree(t, tab)
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler called %d times; the expired request must be refused, not handled", n)
	}
}

// TestCallWithoutOwner: C15. No owner running: the caller releases its
// reservation and says so. A done context reserves nothing.
func TestCallWithoutOwner(t *testing.T) {
	tab := credits.New[*env]()
	o := credits.NewOwner(tab, time.Millisecond, double)
	if _, err := o.Call(context.Background(), credits.NewHolder(), credits.General, 1); !errors.Is(err, credits.ErrNoOwner) {
		t.Fatalf("Call = %v, want ErrNoOwner", err)
	}
	if s := tab.Snapshot(); s.General.Free != 26 {
		t.Fatalf("reservation not released: %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Call(ctx, credits.NewHolder(), credits.General, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call on a done context = %v", err)
	}
	h := credits.NewHolder()
	for range 6 {
		tab.Reserve(h, credits.Internal)
	}
	if _, err := o.Call(context.Background(), credits.NewHolder(), credits.Internal, 1); !errors.Is(err, credits.ErrExhausted) {
		t.Fatalf("Call on a full class = %v", err)
	}
}

// TestOwnerShutdown: C15. Stopping the owner closes the table, wakes every
// waiting caller with ErrOwnerGone, and leaves no goroutine behind.
func TestOwnerShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	tab := credits.New[*env]()
	hold := make(chan struct{})
	o := credits.NewOwner(tab, time.Millisecond, func(_ context.Context, x int) (int, error) {
		<-hold
		return x, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- o.Run(ctx) }()
	for !o.Running() {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() { _, errs[i] = o.Call(context.Background(), credits.NewHolder(), credits.General, i) })
	}
	time.Sleep(10 * time.Millisecond)
	cancel()
	close(hold) // the owner finishes the request it is handling, then stops
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, credits.ErrOwnerGone) && !errors.Is(err, credits.ErrNoTable) {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if !tab.Closed() {
		t.Fatal("owner stopped but the table is live")
	}
	if _, err := o.Call(context.Background(), credits.NewHolder(), credits.General, 1); !errors.Is(err, credits.ErrNoTable) {
		t.Fatalf("Call after shutdown = %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOwnerRunTwicePanics: a second Run is a defect. It panics, whether the
// first is still serving or has returned, and leaves the first serving.
func TestOwnerRunTwicePanics(t *testing.T) {
	o, _, cancel := startOwner(t, double)
	second := func() (msg any) {
		defer func() { msg = recover() }()
		o.Run(context.Background())
		return nil
	}
	if msg := second(); msg != "credits: Owner.Run called twice (defect)" {
		t.Fatalf("a second Run while the first serves: recovered %v, want the defect panic", msg)
	}
	if !o.Running() {
		t.Fatal("the first Run stopped serving after the second panicked")
	}
	// Bounded waits only: a broken owner must fail this test, not hang the
	// package's tests (a mutation campaign would call that a time-out).
	ctx, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	if got, err := o.Call(ctx, credits.NewHolder(), credits.General, 21); err != nil || got != 42 {
		t.Fatalf("Call after the second Run's panic = (%v, %v), want (42, nil)", got, err)
	}
	cancel()
	select {
	case <-o.Done():
	case <-time.After(time.Second):
		t.Fatal("Done was not closed 1 s after the first Run's context was cancelled")
	}
	if msg := second(); msg != "credits: Owner.Run called twice (defect)" {
		t.Fatalf("a second Run after the first returned: recovered %v, want the defect panic", msg)
	}
}

// TestOwnerStart: Start returns once the owner serves, so the first Call
// after it is served with no wait for Running; stop ends Run, closes the
// table and returns Run's error; a second start of either kind panics in
// the caller.
func TestOwnerStart(t *testing.T) {
	tab := credits.New[*env]()
	o := credits.NewOwner(tab, time.Millisecond, double)
	stop := o.Start(context.Background())
	if !o.Running() {
		t.Fatal("Running is false when Start has returned")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if got, err := o.Call(ctx, credits.NewHolder(), credits.General, 21); err != nil || got != 42 {
		t.Fatalf("the first Call after Start = (%v, %v), want (42, nil)", got, err)
	}
	for _, again := range []func(){func() { o.Start(context.Background()) }, func() { o.Run(context.Background()) }} {
		if msg := panicMessage(again); !strings.Contains(msg, "defect") {
			t.Errorf("a second start: panic %q, want the defect panic", msg)
		}
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stop = %v, want context.Canceled", err)
	}
	if o.Running() || !tab.Closed() {
		t.Fatal("after stop the owner still runs or the table is live")
	}
	if s := tab.Snapshot(); !s.Closed || s.General.Free != 0 {
		t.Fatalf("the snapshot after stop: %+v, want zero counts that say Closed", s)
	}
	select {
	case <-o.Done():
	default:
		t.Fatal("Done is open after stop returned")
	}
}

// TestOwnerHandlerPanics: a handler that panics fails its own request only:
// its caller gets a *HandlerPanic (wrapping ErrHandlerPanicked, with the
// panic's value and the handler's stack), its slot is freed, and the owner,
// still running under Start, serves the requests after it.
func TestOwnerHandlerPanics(t *testing.T) {
	var panicked atomic.Bool
	handle := func(ctx context.Context, x int) (int, error) {
		if x == 13 && panicked.CompareAndSwap(false, true) {
			panic("unlucky")
		}
		return double(ctx, x)
	}
	tab := credits.New[*env]()
	o := credits.NewOwner(tab, time.Millisecond, handle)
	stop := o.Start(context.Background())
	defer stop()
	h := credits.NewHolder()
	_, err := o.Call(context.Background(), h, credits.General, 13)
	var hp *credits.HandlerPanic
	if !errors.Is(err, credits.ErrHandlerPanicked) || !errors.As(err, &hp) || hp.Value != "unlucky" ||
		!strings.Contains(string(hp.Stack), "TestOwnerHandlerPanics") || !strings.Contains(err.Error(), "handler panicked: unlucky") {
		t.Fatalf("the panicking request: %v, want a *HandlerPanic for %q", err, "unlucky")
	}
	waitFree(t, tab)
	for i := range 40 { // more than the 26 general slots: each freed and reused
		if got, err := o.Call(context.Background(), h, credits.General, i); err != nil || got != 2*i {
			t.Fatalf("Call(%d) after the panic = %d, %v", i, got, err)
		}
	}
	if !o.Running() {
		t.Fatal("the owner stopped")
	}
	waitFree(t, tab)
}

// TestOwnerRunningAsRunEnds: Running is read by goroutines that race the
// owner's end; each reads true until it reads false, and once Run has
// returned Running is false and Done is closed. Under -race it also shows
// that running's last store is an atomic one: a plain store there is a data
// race with these loads, which nothing else reads while Run returns.
func TestOwnerRunningAsRunEnds(t *testing.T) {
	tab := credits.New[*env]()
	o := credits.NewOwner(tab, time.Millisecond, double)
	stop := o.Start(context.Background())
	var wg sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o.Running() {
				reads.Add(1)
			}
		}()
	}
	for reads.Load() < 100 {
		runtime.Gosched()
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stop = %v, want context.Canceled", err)
	}
	if o.Running() {
		t.Fatal("Running is true after Run returned")
	}
	wg.Wait()
	select {
	case <-o.Done():
	default:
		t.Fatal("Done is open after Run returned")
	}
}
