package credits

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	"github.com/tollgate/tollgate/impl/redis/rconn"
)

// TestConcurrentStorm: live holders reserve, enqueue and release on one
// table while an owner drains it, holders without a lease reserve and
// abandon, a sweeper frees those, and a reader takes snapshots. No slot is
// handed to two live reservations at once (C1, C2), no epoch repeats (C3),
// every payload is taken once, under its own token (C6, C7), no live
// reservation is swept (C10), every snapshot sums to the bounds (C14), and
// at the end every slot is free.
func TestConcurrentStorm(t *testing.T) {
	srv := redisserver.StartT(t)
	c := rconn.NewClient(&goredis.Options{Addr: srv.Addr, PoolSize: 32})
	defer c.Close()
	tab := open(t, c)

	const live, doomed, rounds = 8, 2, 120
	var (
		mu       sync.Mutex
		held     = map[int]Token{}    // slot → the live reservation holding it
		epochs   = map[uint64]bool{}  // every epoch issued
		inflight = map[Token]string{} // enqueued and not yet finished
		failures []string
	)
	fail := func(f string, a ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	issue := func(tok Token, isLive bool) {
		mu.Lock()
		defer mu.Unlock()
		if epochs[tok.Epoch] {
			failures = append(failures, fmt.Sprintf("epoch %d issued twice (C3)", tok.Epoch))
		}
		epochs[tok.Epoch] = true
		if !isLive {
			return
		}
		if other, ok := held[tok.Slot]; ok {
			failures = append(failures, fmt.Sprintf("slot %d handed out to %v while %v holds it", tok.Slot, tok, other))
		}
		held[tok.Slot] = tok
	}
	unhold := func(tok Token) {
		mu.Lock()
		delete(held, tok.Slot)
		mu.Unlock()
	}

	var workers, background sync.WaitGroup
	stop := make(chan struct{})
	var enqueued, taken, exhausted atomic.Int64
	for w := 0; w < live; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			h := NewHolder()
			if _, err := tab.RenewAt(ctx, 1<<40, h, MaxLeaseMs); err != nil { // live for the sweeps at 1<<40
				fail("renew: %v", err)
				return
			}
			for i := 0; i < rounds; i++ {
				tok, r, err := tab.Reserve(ctx, h, Class(1+(w+i)%3/2))
				if err != nil {
					fail("reserve: %v", err)
					return
				}
				if r != OK {
					exhausted.Add(1) // the other holders have every slot of the class
					continue
				}
				issue(tok, true)
				if i%3 == 0 {
					unhold(tok)
					if ok, err := tab.Release(ctx, h, tok); !ok || err != nil {
						fail("release of a live reservation %v: %v %v (swept? C10)", tok, ok, err)
					}
					continue
				}
				p := fmt.Sprintf("w%d/%d/%v", w, i, tok)
				mu.Lock()
				inflight[tok] = p
				mu.Unlock()
				if r, err := tab.EnqueueAt(ctx, int64(i), h, tok, p); r != OK || err != nil {
					fail("enqueue of a live reservation %v: %v %v", tok, r, err)
				}
				enqueued.Add(1)
			}
		}()
	}
	for w := 0; w < doomed; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; i < rounds/4; i++ {
				tok, r, err := tab.Reserve(ctx, NewHolder(), Internal)
				if err != nil {
					fail("reserve: %v", err)
					return
				}
				if r == OK {
					issue(tok, false)
				}
			}
		}()
	}
	background.Add(3)
	go func() { // the sweeper
		defer background.Done()
		for {
			if _, err := tab.SweepAt(ctx, 1<<40); err != nil {
				fail("sweep: %v", err)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	go func() { // the owner
		defer background.Done()
		for {
			es, err := tab.Enqueued(ctx)
			if err != nil {
				fail("enqueued: %v", err)
				return
			}
			for _, e := range es {
				p, ok, err := tab.Take(ctx, e.Token)
				if err != nil || !ok {
					fail("take of a listed row %v: %v %v", e.Token, ok, err)
					continue
				}
				mu.Lock()
				want, found := inflight[e.Token]
				delete(inflight, e.Token)
				delete(held, e.Token.Slot)
				mu.Unlock()
				if !found || p != want || e.Payload != want {
					fail("take of %v returned %q (listed %q), enqueued %q (C6, C7)", e.Token, p, e.Payload, want)
				}
				taken.Add(1)
				if ok, err := tab.Finish(ctx, e.Token); !ok || err != nil {
					fail("finish %v: %v %v", e.Token, ok, err)
				}
			}
			select {
			case <-stop:
				if len(es) == 0 {
					return
				}
			default:
			}
		}
	}()
	go func() { // the reader
		defer background.Done()
		for {
			s, err := tab.Snapshot(ctx)
			if err != nil {
				fail("snapshot: %v", err)
				return
			}
			if s.General.Free+s.General.Reserved+s.General.Enqueued+s.General.Processing != GeneralSlots ||
				s.Internal.Free+s.Internal.Reserved+s.Internal.Enqueued+s.Internal.Processing != InternalSlots {
				fail("snapshot %+v does not sum to the bounds (C14)", s)
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	workers.Wait()
	close(stop)
	background.Wait()
	if _, err := tab.SweepAt(ctx, 1<<40); err != nil {
		t.Fatal(err)
	}
	for _, f := range failures {
		t.Error(f)
	}
	if s := snap(t, tab); s.General.Free != GeneralSlots || s.Internal.Free != InternalSlots {
		t.Fatalf("at the end: %+v, want every slot free", s)
	}
	if enqueued.Load() != taken.Load() || enqueued.Load() == 0 {
		t.Fatalf("%d enqueued, %d taken", enqueued.Load(), taken.Load())
	}
	t.Logf("%d epochs, %d payloads, %d reserves exhausted", len(epochs), taken.Load(), exhausted.Load())
}
