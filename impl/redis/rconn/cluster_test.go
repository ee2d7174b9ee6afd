package rconn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/impl/redis/credits"
	"github.com/tollgate/tollgate/impl/redis/rconn"
	"github.com/tollgate/tollgate/impl/redis/tokenbucket"
	"github.com/tollgate/tollgate/redisserver"
)

// TestTablesFollowAReshard: both tables on a three-primary Redis Cluster,
// their slots moved to another primary (MIGRATE, a pause before each
// batch) while clients keep calling. Every call must succeed: a MOVED, ASK
// or TRYAGAIN answer ran nothing and is followed (rconn.Call), and nothing
// runs twice: every token a take acknowledged is gone from its bucket, and
// no other, and every reserve → enqueue → take → finish cycle completes,
// leaving every slot free. Redirects must have been met, or the test moved
// nothing under the calls.
func TestTablesFollowAReshard(t *testing.T) {
	c := redisserver.StartClusterT(t, 3, time.Second)
	ctx := context.Background()
	opts := &goredis.ClusterOptions{Addrs: c.Addrs()}
	tb, err := tokenbucket.NewCluster(ctx, opts, "reshard-tb")
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	cr, err := credits.NewCluster(ctx, opts, "reshard-cr")
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	lim := tokenbucket.Limits{Capacity: 1e6, RefillPerSecond: 1}
	const now = 1000
	m0, a0, y0 := rconn.Redirects()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := map[string]int{}
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for w := 0; w < 4; w++ {
		wg.Add(2)
		key := fmt.Sprintf("k%d", w)
		go func() { // takes
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, ok, err := tb.TakeAt(ctx, now, key, lim, 1)
				if err != nil || !ok {
					fail("take on %s: %v, %v", key, ok, err)
					return
				}
				mu.Lock()
				taken[key]++
				mu.Unlock()
			}
		}()
		go func() { // credit cycles
			defer wg.Done()
			h := credits.NewHolder()
			for {
				select {
				case <-stop:
					return
				default:
				}
				tok, r, err := cr.Reserve(ctx, h, credits.General)
				if err != nil || r != credits.OK {
					fail("reserve: %v, %v", r, err)
					return
				}
				if r, err := cr.EnqueueAt(ctx, now, h, tok, "p"); err != nil || r != credits.OK {
					fail("enqueue: %v, %v", r, err)
					return
				}
				if p, ok, err := cr.Take(ctx, tok); err != nil || !ok || p != "p" {
					fail("take: %q, %v, %v", p, ok, err)
					return
				}
				if ok, err := cr.Finish(ctx, tok); err != nil || !ok {
					fail("finish: %v, %v", ok, err)
					return
				}
			}
		}()
	}
	// Move each table's slot to the next primary, then back.
	for _, key := range []string{tokenbucket.Keys("reshard-tb")[0], credits.Keys("reshard-cr")[0]} {
		slot, err := c.Primaries[0].KeySlot(key)
		if err != nil {
			t.Fatal(err)
		}
		owner, _, err := c.Primaries[0].SlotOwner(slot)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range c.Primaries {
			if p.Addr == owner {
				next := c.Primaries[(i+1)%len(c.Primaries)]
				time.Sleep(50 * time.Millisecond)
				if err := c.MoveSlot(slot, next, 1, 30*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
				if err := c.MoveSlot(slot, p, 1, 30*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	for key, n := range taken {
		got, err := tb.PeekAt(ctx, now, key, lim)
		if err != nil {
			t.Fatal(err)
		}
		if want := lim.Capacity - float64(n); got != want {
			t.Errorf("%s holds %v tokens after %d acknowledged takes, want %v: a take was lost or ran twice", key, got, n, want)
		}
	}
	snap, err := cr.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.General.Free != 26 {
		t.Errorf("after every cycle finished the credit table shows %+v, want every general slot free", snap)
	}
	m, a, y := rconn.Redirects()
	t.Logf("takes %v; redirects followed: MOVED %d, ASK %d, TRYAGAIN %d", taken, m-m0, a-a0, y-y0)
	if m-m0 == 0 || a-a0+y-y0 == 0 {
		t.Errorf("the reshard met the calls with MOVED %d, ASK %d, TRYAGAIN %d: want MOVED and ASK or TRYAGAIN", m-m0, a-a0, y-y0)
	}
}
